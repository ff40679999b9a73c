//! TLS for ssl:// endpoints: the rustls configuration built from arangod's `--ssl.*` options,
//! reloaded on demand, and the handshake of one connection.
//!
//! What it is: [`TlsFiles`] (which files and which protocol), [`TlsServer`] (the configuration
//! in use, swapped whole by [`TlsControl::reload`] so that open connections keep theirs and new
//! ones get the new one), the SNI resolver (a host name's own keyfile, else `--ssl.keyfile`),
//! the description `GET /_admin/server/tls` answers, and [`handshake`] (bounded by
//! [`HANDSHAKE_TIMEOUT`]). ALPN offers `h2` and `http/1.1`; hyper's automatic builder then
//! serves HTTP/2 to clients that start with its preface (those that chose h2) and HTTP/1.1
//! to the others.
//!
//! What it is not: the accept loop or the governor's accounting (`crate::listener` accepts,
//! counts and serves; the handshake runs inside the connection's own task), or client-side TLS.
//!
//! Invariants: only TLS 1.2 and 1.3 are ever offered (rustls speaks nothing older); a
//! configuration is used only once every file of it was read and checked (certificates parse,
//! the key matches the first certificate, the CA file holds at least one certificate), so a
//! broken file at a reload leaves the old configuration in place; files are read whole, each
//! at most [`PEM_FILE_SIZE_MAX`] bytes; private keys never leave this module, only their
//! SHA-256.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use quince_api::TlsControl;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// How long a client has to complete its TLS handshake before the connection is closed.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest keyfile or CA file read (a certificate chain and a key take a few KiB).
pub const PEM_FILE_SIZE_MAX: u64 = 1 << 20;

/// The most `--ssl.server-name-indication` entries.
pub const SERVER_NAMES_MAX: usize = 1024;

/// What ALPN offers, in the server's order of preference.
const ALPN_PROTOCOLS: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// `--ssl.protocol`, by arangod's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// 5: TLS 1.2 only.
    Tls12,
    /// 6: TLS 1.3 only.
    Tls13,
    /// 9: TLS 1.2 or 1.3, whichever is the highest both sides speak.
    Negotiated,
}

impl Protocol {
    /// The protocol of arangod's number (`config::parse_ssl_protocol` admits only these).
    pub fn from_number(number: u64) -> Option<Protocol> {
        match number {
            5 => Some(Protocol::Tls12),
            6 => Some(Protocol::Tls13),
            9 => Some(Protocol::Negotiated),
            _ => None,
        }
    }

    fn versions(self) -> &'static [&'static SupportedProtocolVersion] {
        static TLS12: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS12];
        static TLS13: [&SupportedProtocolVersion; 1] = [&rustls::version::TLS13];
        static BOTH: [&SupportedProtocolVersion; 2] =
            [&rustls::version::TLS13, &rustls::version::TLS12];
        match self {
            Protocol::Tls12 => &TLS12,
            Protocol::Tls13 => &TLS13,
            Protocol::Negotiated => &BOTH,
        }
    }
}

/// Which files make the configuration, and the protocol.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// `--ssl.keyfile`: the certificate chain and the private key, PEM.
    pub keyfile: PathBuf,
    /// `--ssl.cafile`: the CAs whose client certificates are accepted, PEM.
    pub cafile: Option<PathBuf>,
    /// `--ssl.server-name-indication`: host name (lower case) and its keyfile.
    pub server_names: Vec<(String, PathBuf)>,
    /// `--ssl.protocol`.
    pub protocol: Protocol,
}

/// One read of the files: the rustls configuration and what `GET /_admin/server/tls` says.
struct Loaded {
    config: Arc<ServerConfig>,
    described: Value,
}

/// The TLS configuration of the listener.
pub struct TlsServer {
    files: TlsFiles,
    current: RwLock<Arc<Loaded>>,
    /// One reload at a time.
    reloading: Mutex<()>,
}

impl TlsServer {
    /// Reads the files; an error names the file and what is wrong with it.
    pub fn open(files: TlsFiles) -> Result<Arc<TlsServer>, String> {
        if files.server_names.len() > SERVER_NAMES_MAX {
            return Err(format!(
                "at most {SERVER_NAMES_MAX} --ssl.server-name-indication entries"
            ));
        }
        let loaded = load(&files)?;
        Ok(Arc::new(TlsServer {
            files,
            current: RwLock::new(Arc::new(loaded)),
            reloading: Mutex::new(()),
        }))
    }

    /// The acceptor for a new connection, with the configuration in use now.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(Arc::clone(&self.current.read().config))
    }
}

impl TlsControl for TlsServer {
    fn describe(&self) -> Value {
        self.current.read().described.clone()
    }

    fn reload(&self) -> Result<Value, String> {
        let _one = self.reloading.lock();
        let loaded = Arc::new(load(&self.files)?);
        let described = loaded.described.clone();
        *self.current.write() = loaded;
        tracing::info!(event = "tls.reloaded", keyfile = %self.files.keyfile.display());
        Ok(described)
    }
}

/// Completes the TLS handshake of a new connection within [`HANDSHAKE_TIMEOUT`]; `None` when
/// it fails or takes too long (logged at debug: a port scanner or a plain-HTTP client is not
/// news).
pub async fn handshake(acceptor: TlsAcceptor, stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    let client = stream.peer_addr().ok();
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(tls),
        Ok(Err(error)) => {
            tracing::debug!(event = "tls.handshake_failed", ?client, %error);
            None
        }
        Err(_) => {
            tracing::debug!(event = "tls.handshake_timeout", ?client);
            None
        }
    }
}

/// Reads every file and builds the configuration.
fn load(files: &TlsFiles) -> Result<Loaded, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let default = Keyfile::read(&files.keyfile, &provider)?;
    let mut by_name = HashMap::new();
    let mut sni = Map::new();
    for (name, path) in &files.server_names {
        let keyfile = Keyfile::read(path, &provider)?;
        sni.insert(name.clone(), keyfile.describe());
        by_name.insert(name.clone(), Arc::clone(&keyfile.key));
    }
    let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(files.protocol.versions())
        .map_err(|e| format!("cannot use the TLS protocol: {e}"))?;
    let (builder, client_ca) = match &files.cafile {
        Some(path) => {
            let (roots, described) = read_cafile(path)?;
            let verifier =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                    .allow_unauthenticated()
                    .build()
                    .map_err(|e| format!("CA file {}: {e}", path.display()))?;
            (builder.with_client_cert_verifier(verifier), described)
        }
        None => (builder.with_no_client_auth(), json!({})),
    };
    let mut config = builder.with_cert_resolver(Arc::new(ByServerName {
        default: Arc::clone(&default.key),
        by_name,
    }));
    config.alpn_protocols = ALPN_PROTOCOLS.iter().map(|p| p.to_vec()).collect();
    let mut described = json!({"keyfile": default.describe(), "clientCA": client_ca});
    if !sni.is_empty() {
        described["SNI"] = Value::Object(sni);
    }
    Ok(Loaded {
        config: Arc::new(config),
        described,
    })
}

/// A keyfile read and checked.
struct Keyfile {
    key: Arc<CertifiedKey>,
    text: String,
    blocks: Vec<PemBlock>,
}

impl Keyfile {
    fn read(path: &Path, provider: &CryptoProvider) -> Result<Keyfile, String> {
        let text = read_pem_file(path, "keyfile")?;
        let what = |e: &dyn std::fmt::Display| format!("keyfile {}: {e}", path.display());
        let certs = CertificateDer::pem_slice_iter(text.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| what(&pem_error(&e)))?;
        if certs.is_empty() {
            return Err(what(&"holds no certificate"));
        }
        let key = PrivateKeyDer::from_pem_slice(text.as_bytes())
            .map_err(|e| what(&format!("holds no usable private key ({})", pem_error(&e))))?;
        let key = CertifiedKey::from_der(certs, key, provider).map_err(|e| what(&e))?;
        Ok(Keyfile {
            key: Arc::new(key),
            blocks: pem_blocks(&text),
            text,
        })
    }

    fn describe(&self) -> Value {
        describe_pem(&self.text, &self.blocks)
    }
}

/// Reads a CA file: its certificates as trust anchors, and its description.
fn read_cafile(path: &Path) -> Result<(RootCertStore, Value), String> {
    let text = read_pem_file(path, "CA file")?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(text.as_bytes()) {
        let cert = cert.map_err(|e| format!("CA file {}: {}", path.display(), pem_error(&e)))?;
        roots
            .add(cert)
            .map_err(|e| format!("CA file {}: {e}", path.display()))?;
    }
    if roots.is_empty() {
        return Err(format!("CA file {}: holds no certificate", path.display()));
    }
    let described = describe_pem(&text, &pem_blocks(&text));
    Ok((roots, described))
}

/// A PEM error in words (rustls prints the markers it missed as byte lists).
fn pem_error(error: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error;
    match error {
        Error::MissingSectionEnd { end_marker } => format!(
            "a section lacks its end line {}",
            String::from_utf8_lossy(end_marker)
        ),
        Error::IllegalSectionStart { line } => {
            format!("malformed section start {}", String::from_utf8_lossy(line))
        }
        Error::NoItemsFound => "none found".to_string(),
        other => other.to_string(),
    }
}

/// A PEM file's text, at most [`PEM_FILE_SIZE_MAX`] bytes.
fn read_pem_file(path: &Path, what: &str) -> Result<String, String> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(PEM_FILE_SIZE_MAX + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))?;
    if bytes.len() as u64 > PEM_FILE_SIZE_MAX {
        return Err(format!(
            "{what} {} is larger than {PEM_FILE_SIZE_MAX} bytes",
            path.display()
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("{what} {} is not PEM text", path.display()))
}

/// One `-----BEGIN LABEL----- … -----END LABEL-----` block of a PEM file.
struct PemBlock {
    label: String,
    text: String,
}

/// The blocks of a PEM text, in order (text between them is skipped).
fn pem_blocks(text: &str) -> Vec<PemBlock> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + "-----BEGIN ".len()..];
        let Some(label_end) = after.find("-----") else {
            break;
        };
        let label = after[..label_end].trim().to_string();
        let footer = format!("-----END {label}-----");
        let Some(end) = rest[start..].find(&footer) else {
            break;
        };
        let end = start + end + footer.len();
        blocks.push(PemBlock {
            label,
            text: rest[start..end].to_string(),
        });
        rest = &rest[end..];
    }
    blocks
}

/// ArangoDB's description of a PEM file: the SHA-256 of the whole file, its certificates as
/// PEM text, and the SHA-256 of its (first) private key block when it has one. The upper-case
/// spellings arangod also sends (deprecated there since 3.7) are sent too.
fn describe_pem(text: &str, blocks: &[PemBlock]) -> Value {
    let sha256 = hex_sha256(text.as_bytes());
    let certificates: Vec<&str> = blocks
        .iter()
        .filter(|b| b.label == "CERTIFICATE")
        .map(|b| b.text.as_str())
        .collect();
    let mut described = json!({"sha256": sha256, "SHA256": sha256, "certificates": certificates});
    if let Some(key) = blocks.iter().find(|b| b.label.contains("PRIVATE KEY")) {
        let key_sha256 = hex_sha256(key.text.as_bytes());
        described["privateKeySha256"] = json!(key_sha256);
        described["privateKeySHA256"] = json!(key_sha256);
    }
    described
}

fn hex_sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Chooses the certificate by the host name the client asked for (SNI), else the default.
#[derive(Debug)]
struct ByServerName {
    default: Arc<CertifiedKey>,
    by_name: HashMap<String, Arc<CertifiedKey>>,
}

impl ResolvesServerCert for ByServerName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let chosen = hello
            .server_name()
            .and_then(|name| self.by_name.get(&name.to_ascii_lowercase()))
            .unwrap_or(&self.default);
        Some(Arc::clone(chosen))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_blocks_are_split_with_their_labels() {
        let text = "junk\n-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----\n\
                    -----BEGIN PRIVATE KEY-----\nBBB\n-----END PRIVATE KEY-----\n";
        let blocks = pem_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].label, "CERTIFICATE");
        assert_eq!(
            blocks[0].text,
            "-----BEGIN CERTIFICATE-----\nAAA\n-----END CERTIFICATE-----"
        );
        let described = describe_pem(text, &blocks);
        assert_eq!(described["certificates"].as_array().unwrap().len(), 1);
        assert_eq!(
            described["privateKeySha256"],
            json!(hex_sha256(
                b"-----BEGIN PRIVATE KEY-----\nBBB\n-----END PRIVATE KEY-----"
            ))
        );
        assert_eq!(described["sha256"], json!(hex_sha256(text.as_bytes())));
    }

    #[test]
    fn sha256_is_lower_case_hex() {
        assert_eq!(
            hex_sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn only_arangods_tls_numbers_make_protocols() {
        assert_eq!(Protocol::from_number(5), Some(Protocol::Tls12));
        assert_eq!(Protocol::from_number(6), Some(Protocol::Tls13));
        assert_eq!(Protocol::from_number(9), Some(Protocol::Negotiated));
        for n in [0, 1, 2, 3, 4, 7, 8, 10] {
            assert_eq!(Protocol::from_number(n), None);
        }
    }
}
