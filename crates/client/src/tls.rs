//! The TLS client settings of Quince's tools: which certificate authorities to trust, and
//! the name a server's certificate must carry.
//!
//! What it is: [`client_config`] builds one rustls client configuration (ring provider,
//! TLS 1.2 and 1.3, ALPN `http/1.1`) that trusts either the CA certificates of a PEM file
//! (`--ssl.cafile FILE`, the same option in every tool) or, without one, the system's trusted
//! roots (through `rustls-native-certs`). [`TlsClient`] pairs such a configuration with the
//! server name of one endpoint (its host: a DNS name, or an IP address that the certificate
//! must carry as an IP SAN). [`Target`] is what a connection needs to reach one endpoint: its
//! resolved address and, for `ssl://`, its [`TlsClient`].
//!
//! What it is not: a way to skip verification. There is no "insecure" switch: a server whose
//! certificate does not chain to a trusted root or does not name the host is refused. Nor does
//! it present client certificates.
//!
//! Invariants: a configuration always trusts at least one root certificate (an empty PEM file,
//! or a system without roots, is an error that names `--ssl.cafile`); the configuration is
//! built once per tool run and shared (`Arc`) by all its connections.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore};

use crate::endpoint::Endpoint;

/// The largest CA file read (a bundle of a few hundred certificates is well below it).
const CAFILE_MAX: u64 = 16 * 1024 * 1024;

/// A client configuration trusting the CA certificates in the PEM file `cafile`, or the
/// system's roots when there is none. The message says what is wrong.
pub fn client_config(cafile: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let roots = match cafile {
        Some(path) => roots_from_file(path)?,
        None => system_roots()?,
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn roots_from_file(path: &Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("--ssl.cafile {shown}: {e}"))?
        .len();
    if size > CAFILE_MAX {
        return Err(format!(
            "--ssl.cafile {shown}: larger than {CAFILE_MAX} bytes"
        ));
    }
    let pem = std::fs::read(path).map_err(|e| format!("--ssl.cafile {shown}: {e}"))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| format!("--ssl.cafile {shown}: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("--ssl.cafile {shown}: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!(
            "--ssl.cafile {shown}: no CERTIFICATE block in the file"
        ));
    }
    Ok(roots)
}

fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = found
            .errors
            .first()
            .map_or_else(String::new, |e| format!(" ({e})"));
        return Err(format!(
            "no trusted root certificates found on this system{why}: pass --ssl.cafile FILE"
        ));
    }
    Ok(roots)
}

/// The name the server's certificate must carry: the endpoint's host, a DNS name or an IP
/// address (without the brackets of an IPv6 one).
pub fn server_name(endpoint: &Endpoint) -> Result<ServerName<'static>, String> {
    let host_port = endpoint.host_port.as_str();
    let host = match host_port.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => host_port
            .rsplit_once(':')
            .map_or(host_port, |(host, _)| host),
    };
    ServerName::try_from(host.to_string()).map_err(|e| format!("endpoint '{}': {e}", endpoint.text))
}

/// TLS towards one server: the shared configuration and the server's name.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
}

impl std::fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsClient")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

impl TlsClient {
    /// TLS with `config` to a server that must present a certificate for `server_name`.
    pub fn new(config: Arc<ClientConfig>, server_name: ServerName<'static>) -> TlsClient {
        TlsClient {
            config,
            server_name,
        }
    }

    /// A new client session (the handshake starts with the first bytes written).
    pub fn session(&self) -> Result<ClientConnection, rustls::Error> {
        let mut session =
            ClientConnection::new(Arc::clone(&self.config), self.server_name.clone())?;
        // A request is queued whole (its size is the caller's bound); the socket takes it as
        // fast as it can.
        session.set_buffer_limit(None);
        Ok(session)
    }

    /// The name the server's certificate must carry.
    pub fn server_name(&self) -> &ServerName<'static> {
        &self.server_name
    }
}

/// What a connection needs to reach one endpoint: its address, and TLS for `ssl://`.
#[derive(Debug, Clone)]
pub struct Target {
    /// The resolved address.
    pub addr: SocketAddr,
    /// TLS settings; `None` for plain TCP.
    pub tls: Option<TlsClient>,
}

impl Target {
    /// Plain TCP to `addr`.
    pub fn plain(addr: SocketAddr) -> Target {
        Target { addr, tls: None }
    }

    /// Resolves `endpoint`; for `ssl://` it trusts the CA file `cafile`, or the system's roots
    /// without one. For a tool that opens one connection per endpoint.
    pub fn resolve(endpoint: &Endpoint, cafile: Option<&Path>) -> Result<Target, String> {
        let config = if endpoint.tls {
            Some(client_config(cafile)?)
        } else {
            None
        };
        Target::resolve_with(endpoint, config.as_ref())
    }

    /// Resolves `endpoint` with an already built configuration (`None` is only valid for a
    /// plain endpoint): for a tool with many connections, which builds it once.
    pub fn resolve_with(
        endpoint: &Endpoint,
        config: Option<&Arc<ClientConfig>>,
    ) -> Result<Target, String> {
        let addr = endpoint.resolve()?;
        let tls = match (endpoint.tls, config) {
            (false, _) => None,
            (true, Some(config)) => {
                Some(TlsClient::new(Arc::clone(config), server_name(endpoint)?))
            }
            (true, None) => {
                return Err(format!(
                    "endpoint '{}': TLS needs a client configuration",
                    endpoint.text
                ))
            }
        };
        Ok(Target { addr, tls })
    }
}

/// A client configuration for any endpoint in `endpoints` that asks for TLS, or `None` when
/// none does (so a missing CA file matters only to a run that needs it).
pub fn config_for(
    endpoints: &[Endpoint],
    cafile: Option<&Path>,
) -> Result<Option<Arc<ClientConfig>>, String> {
    if endpoints.iter().any(|e| e.tls) {
        client_config(cafile).map(Some)
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_name_is_the_host_of_the_endpoint() {
        let name = |text: &str| server_name(&Endpoint::parse(text).unwrap()).unwrap();
        assert_eq!(name("ssl://db.example:8529").to_str(), "db.example");
        assert!(matches!(
            name("ssl://127.0.0.1:1"),
            ServerName::IpAddress(_)
        ));
        assert!(matches!(name("https://[::1]:1"), ServerName::IpAddress(_)));
        assert_eq!(name("ssl://localhost").to_str(), "localhost");
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("quince-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let error = client_config(Some(&empty)).unwrap_err();
        assert!(
            error.contains("--ssl.cafile") && error.contains("no CERTIFICATE"),
            "{error}"
        );
        let missing = client_config(Some(&dir.join("missing.pem"))).unwrap_err();
        assert!(missing.contains("--ssl.cafile"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_ca_file_is_trusted_and_alpn_is_http_1_1() {
        let ca = rcgen::generate_simple_self_signed(vec!["ca.test".to_string()]).unwrap();
        let dir = std::env::temp_dir().join(format!("quince-tls-ca-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ca.pem");
        std::fs::write(&file, ca.cert.pem()).unwrap();
        let config = client_config(Some(&file)).unwrap();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn plain_endpoints_need_no_configuration() {
        let plain = Endpoint::parse("tcp://127.0.0.1:9").unwrap();
        assert!(config_for(std::slice::from_ref(&plain), None)
            .unwrap()
            .is_none());
        assert!(Target::resolve(&plain, None).unwrap().tls.is_none());
        let tls = Endpoint::parse("ssl://127.0.0.1:9").unwrap();
        assert!(Target::resolve_with(&tls, None).is_err());
    }
}
