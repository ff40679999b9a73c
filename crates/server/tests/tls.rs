//! TLS tests of the `quince` binary on ssl:// endpoints, with a CA and certificates made here
//! (rcgen) and rustls clients: the handshake, ALPN (a request over h2 and one over
//! http/1.1), `--ssl.protocol`, SNI, client certificates, `GET`/`POST /_admin/server/tls`
//! (a reload under load that drops no request, a broken keyfile that changes nothing), a
//! plain-HTTP client on the TLS port, TLS connections holding the connection governor's
//! places, and the startup errors.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use base64::Engine as _;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::{ClientConfig, RootCertStore, SupportedProtocolVersion};
use serde_json::Value;
use sha2::Sha256;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader as AsyncBufReader};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

/// How long the server may take to print its ready line or to exit, and any one request.
const WAIT: Duration = Duration::from_secs(30);

const PASSWORD: &str = "tls-pw";
const JWT_SECRET: &str = "tls-test-secret";

// ---------------------------------------------------------------------------------------
// Certificates

/// A certificate authority that signs certificates for the tests.
struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    fn pem(&self) -> String {
        self.cert.pem()
    }

    /// A leaf certificate for `names`, for a server or a client; returns (chain PEM + key PEM,
    /// the certificate's DER, the key).
    fn issue(&self, names: &[&str], client: bool) -> Issued {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = CertificateParams::new(names.clone()).unwrap();
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        Issued {
            keyfile: format!("{}{}", cert.pem(), key.serialize_pem()),
            der: cert.der().clone(),
            key_der: key.serialize_der(),
        }
    }
}

/// One certificate and its key.
struct Issued {
    /// The keyfile: certificate and private key, PEM.
    keyfile: String,
    der: CertificateDer<'static>,
    key_der: Vec<u8>,
}

// ---------------------------------------------------------------------------------------
// The server process

/// A running server process, killed on drop if still alive.
struct Server {
    child: Option<Child>,
    port: u16,
}

/// The arguments of a server on an ssl:// endpoint over `dir`.
fn ssl_args(dir: &Path, keyfile: &Path, extra: &[String]) -> Vec<String> {
    let mut args: Vec<String> = [
        "serve",
        "--server.endpoint",
        "ssl://127.0.0.1:0",
        "--database.directory",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(dir.join("data").display().to_string());
    args.push("--ssl.keyfile".into());
    args.push(keyfile.display().to_string());
    args.extend(extra.iter().cloned());
    args
}

impl Server {
    fn start(args: &[String]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quince"))
            .args(args)
            .env_remove("QUINCE_ROOT_PASSWORD")
            .env_remove("ARANGO_ROOT_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the quince binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, ready) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let line = ready.recv_timeout(WAIT).expect("the ready line");
        let port = line
            .strip_prefix("quince: listening on https://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
            .trim()
            .parse()
            .expect("a port number");
        Server {
            child: Some(child),
            port,
        }
    }

    /// Sends SIGTERM and returns the exit code.
    fn terminate(mut self) -> Option<i32> {
        let child = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        wait_exit(child)
    }
}

fn wait_exit(mut child: Child) -> Option<i32> {
    let (done, exited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait().map(|s| s.code()));
    });
    exited
        .recv_timeout(WAIT)
        .expect("the server exits")
        .expect("wait succeeds")
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs `quince serve` that must fail to start; returns its exit code and stderr.
fn start_fails(args: &[String]) -> (Option<i32>, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_quince"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the quince binary starts")
        .wait_with_output()
        .expect("it exits");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

// ---------------------------------------------------------------------------------------
// Clients

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client that trusts `ca`, speaks `versions`, offers `alpn`, and presents `identity`.
fn client_config(
    ca: &Ca,
    versions: &[&'static SupportedProtocolVersion],
    alpn: &[&[u8]],
    identity: Option<&Issued>,
) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert.der().clone()).unwrap();
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(issued) => builder
            .with_client_auth_cert(
                vec![issued.der.clone()],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(issued.key_der.clone())),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

const BOTH: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13, &rustls::version::TLS12];

/// A TLS connection to the server, asking for host name `name`.
async fn connect(
    port: u16,
    config: Arc<ClientConfig>,
    name: &str,
) -> std::io::Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
    let name = ServerName::try_from(name.to_string()).unwrap();
    tokio::time::timeout(WAIT, TlsConnector::from(config).connect(name, tcp))
        .await
        .map_err(|_| std::io::Error::other("handshake timed out"))?
}

/// The end-entity certificate the server presented.
fn peer_certificate(stream: &TlsStream<TcpStream>) -> CertificateDer<'static> {
    stream
        .get_ref()
        .1
        .peer_certificates()
        .expect("a certificate")[0]
        .clone()
}

/// One HTTP/1.1 keep-alive connection over TLS.
struct Http1 {
    stream: AsyncBufReader<TlsStream<TcpStream>>,
}

impl Http1 {
    fn new(stream: TlsStream<TcpStream>) -> Http1 {
        Http1 {
            stream: AsyncBufReader::new(stream),
        }
    }

    /// Sends one request and reads its response: status and JSON body.
    async fn call(
        &mut self,
        method: &str,
        path: &str,
        authorization: Option<&str>,
    ) -> std::io::Result<(u16, Value)> {
        let auth = authorization
            .map(|a| format!("Authorization: {a}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\n{auth}Content-Length: 0\r\n\r\n"
        );
        tokio::time::timeout(WAIT, async {
            self.stream.get_mut().write_all(head.as_bytes()).await?;
            let mut status_line = String::new();
            if self.stream.read_line(&mut status_line).await? == 0 {
                return Err(std::io::Error::other("closed before a response"));
            }
            let status: u16 = status_line
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| std::io::Error::other(format!("bad status {status_line:?}")))?;
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                self.stream.read_line(&mut line).await?;
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("content-length") {
                        length = value.trim().parse().unwrap();
                    }
                }
            }
            let mut body = vec![0; length];
            self.stream.read_exact(&mut body).await?;
            let json = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&body).map_err(std::io::Error::other)?
            };
            Ok((status, json))
        })
        .await
        .map_err(|_| std::io::Error::other("request timed out"))?
    }
}

/// `GET path` on a new connection (HTTP/1.1); the response's status and JSON body.
async fn get_once(port: u16, config: Arc<ClientConfig>, path: &str) -> std::io::Result<Value> {
    let stream = connect(port, config, "localhost").await?;
    let (status, body) = Http1::new(stream).call("GET", path, None).await?;
    assert_eq!(status, 200, "{body}");
    Ok(body)
}

/// A superuser token (HS256 over [`JWT_SECRET`]).
fn superuser_jwt() -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let exp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let header = b64(br#"{"alg":"HS256","typ":"JWT"}"#);
    let claims =
        b64(format!(r#"{{"iss":"arangodb","server_id":"tls-test","exp":{exp}}}"#).as_bytes());
    let input = format!("{header}.{claims}");
    let mut mac = Hmac::<Sha256>::new_from_slice(JWT_SECRET.as_bytes()).unwrap();
    mac.update(input.as_bytes());
    format!("bearer {input}.{}", b64(&mac.finalize().into_bytes()))
}

fn basic_root() -> String {
    let credentials = base64::engine::general_purpose::STANDARD.encode(format!("root:{PASSWORD}"));
    format!("Basic {credentials}")
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn no_auth() -> Vec<String> {
    vec!["--server.authentication".into(), "false".into()]
}

// ---------------------------------------------------------------------------------------
// Tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alpn_serves_h2_and_http1_over_one_handshake_each() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("alpn CA");
    let keyfile = write(
        dir.path(),
        "server.pem",
        &ca.issue(&["localhost"], false).keyfile,
    );
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &no_auth()));

    // http/1.1 by ALPN.
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[b"http/1.1"], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (status, body) = Http1::new(stream)
        .call("GET", "/_api/version", None)
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert_eq!(body["server"], "arango");

    // h2 by ALPN: hyper's HTTP/2 client gets an HTTP/2 reply.
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[b"h2", b"http/1.1"], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .expect("an HTTP/2 connection");
    tokio::spawn(connection);
    for _ in 0..3 {
        let request = http::Request::get("https://localhost/_api/version")
            .body(Empty::<Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.expect("a reply over h2");
        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(response.status(), 200);
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["server"], "arango");
    }

    // A client that offers no ALPN at all gets HTTP/1.1.
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), None);
    let (status, _) = Http1::new(stream)
        .call("GET", "/_api/version", None)
        .await
        .unwrap();
    assert_eq!(status, 200);

    // A client that trusts another CA refuses the server.
    let stranger = Ca::new("stranger CA");
    assert!(connect(
        server.port,
        client_config(&stranger, BOTH, &[], None),
        "localhost"
    )
    .await
    .is_err());

    // Plain HTTP on the TLS port gets no HTTP reply, and the server keeps serving.
    {
        let mut plain = TcpStream::connect(("127.0.0.1", server.port))
            .await
            .unwrap();
        plain
            .write_all(b"GET /_api/version HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(WAIT, plain.read_to_end(&mut answer))
            .await
            .expect("the server closes the connection");
        assert!(!answer.starts_with(b"HTTP/"), "{answer:?}");
    }
    get_once(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "/_api/version",
    )
    .await
    .unwrap();
    assert_eq!(server.terminate(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ssl_protocol_limits_the_versions_offered() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("protocol CA");
    let keyfile = write(
        dir.path(),
        "server.pem",
        &ca.issue(&["localhost"], false).keyfile,
    );
    let tls12: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];
    let tls13: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];

    let mut args = no_auth();
    args.extend(["--ssl.protocol".into(), "6".into()]);
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));
    assert!(
        connect(
            server.port,
            client_config(&ca, tls12, &[], None),
            "localhost"
        )
        .await
        .is_err(),
        "a TLS 1.2 client was accepted by --ssl.protocol 6"
    );
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    drop(stream);
    drop(server);

    let mut args = no_auth();
    args.extend(["--ssl.protocol".into(), "5".into()]);
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));
    assert!(connect(
        server.port,
        client_config(&ca, tls13, &[], None),
        "localhost"
    )
    .await
    .is_err());
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );
    let (status, _) = Http1::new(stream)
        .call("GET", "/_api/version", None)
        .await
        .unwrap();
    assert_eq!(status, 200);
    drop(server);

    // The default (9) negotiates the highest: TLS 1.3, and still takes TLS 1.2 clients.
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &no_auth()));
    let stream = connect(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_3)
    );
    let stream = connect(
        server.port,
        client_config(&ca, tls12, &[], None),
        "localhost",
    )
    .await
    .unwrap();
    assert_eq!(
        stream.get_ref().1.protocol_version(),
        Some(rustls::ProtocolVersion::TLSv1_2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sni_picks_the_host_names_keyfile_and_falls_back_to_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("sni CA");
    let default = ca.issue(&["localhost"], false);
    let other = ca.issue(&["other.quince.test"], false);
    let keyfile = write(dir.path(), "server.pem", &default.keyfile);
    let other_file = write(dir.path(), "other.pem", &other.keyfile);
    let mut args = no_auth();
    args.push(format!(
        "--ssl.server-name-indication=Other.Quince.Test={}",
        other_file.display()
    ));
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));
    let config = client_config(&ca, BOTH, &[], None);

    let stream = connect(server.port, config.clone(), "other.quince.test")
        .await
        .unwrap();
    assert_eq!(peer_certificate(&stream), other.der);
    let (status, _) = Http1::new(stream)
        .call("GET", "/_api/version", None)
        .await
        .unwrap();
    assert_eq!(status, 200);
    let stream = connect(server.port, config.clone(), "localhost")
        .await
        .unwrap();
    assert_eq!(peer_certificate(&stream), default.der);

    let tls = get_once(server.port, config, "/_admin/server/tls")
        .await
        .unwrap();
    let result = &tls["result"];
    assert_eq!(
        result["SNI"]["other.quince.test"]["certificates"][0],
        other
            .keyfile
            .split_inclusive("-----END CERTIFICATE-----")
            .next()
            .unwrap()
    );
    assert!(result["keyfile"]["privateKeySha256"].is_string());
    assert_eq!(result["clientCA"], serde_json::json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_certificates_must_come_from_the_ca_file_when_presented() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("server CA");
    let client_ca = Ca::new("client CA");
    let stranger = Ca::new("stranger CA");
    let keyfile = write(
        dir.path(),
        "server.pem",
        &ca.issue(&["localhost"], false).keyfile,
    );
    let cafile = write(dir.path(), "clients.pem", &client_ca.pem());
    let mut args = no_auth();
    args.extend(["--ssl.cafile".into(), cafile.display().to_string()]);
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));

    let valid = client_ca.issue(&["client.quince.test"], true);
    let forged = stranger.issue(&["client.quince.test"], true);
    for versions in [BOTH, &[&rustls::version::TLS12][..]] {
        // A certificate from the CA file: served.
        let config = client_config(&ca, versions, &[], Some(&valid));
        get_once(server.port, config, "/_api/version")
            .await
            .unwrap();
        // No certificate: served too.
        get_once(
            server.port,
            client_config(&ca, versions, &[], None),
            "/_api/version",
        )
        .await
        .unwrap();
        // A certificate from another CA: refused (at the handshake, or for TLS 1.3 at the
        // first read, once the server has checked it).
        let config = client_config(&ca, versions, &[], Some(&forged));
        assert!(
            get_once(server.port, config, "/_api/version")
                .await
                .is_err(),
            "a client certificate from another CA was accepted"
        );
    }
    let tls = get_once(
        server.port,
        client_config(&ca, BOTH, &[], None),
        "/_admin/server/tls",
    )
    .await
    .unwrap();
    assert_eq!(
        tls["result"]["clientCA"]["certificates"][0],
        client_ca.pem().trim_end()
    );
    assert!(tls["result"]["clientCA"].get("privateKeySha256").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_swaps_certificates_without_dropping_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("reload CA");
    let first = ca.issue(&["localhost"], false);
    let second = ca.issue(&["localhost"], false);
    let keyfile = write(dir.path(), "server.pem", &first.keyfile);
    let jwt_file = write(dir.path(), "jwt", JWT_SECRET);
    let args = vec![
        "--database.password".to_string(),
        PASSWORD.into(),
        "--server.jwt-secret-keyfile".into(),
        jwt_file.display().to_string(),
    ];
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));
    let port = server.port;
    let config = client_config(&ca, BOTH, &[], None);
    let jwt = superuser_jwt();

    // Load: one keep-alive connection sending requests in a loop for the whole test.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let load = {
        let (stop, answered, config) = (stop.clone(), answered.clone(), config.clone());
        let basic = basic_root();
        tokio::spawn(async move {
            let stream = connect(port, config, "localhost").await.unwrap();
            assert_eq!(peer_certificate(&stream), first.der);
            let mut connection = Http1::new(stream);
            while !stop.load(Ordering::Acquire) {
                let (status, body) = connection
                    .call("GET", "/_api/version", Some(&basic))
                    .await
                    .expect("the old connection keeps working through the reload");
                assert_eq!(status, 200, "{body}");
                answered.fetch_add(1, Ordering::AcqRel);
            }
        })
    };
    let wait_for_more = |at_least: usize| {
        let answered = answered.clone();
        async move {
            let deadline = Instant::now() + WAIT;
            while answered.load(Ordering::Acquire) < at_least {
                assert!(Instant::now() < deadline, "the load stalled");
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    };
    wait_for_more(20).await;

    let mut admin = Http1::new(connect(port, config.clone(), "localhost").await.unwrap());
    let (status, before) = admin
        .call("GET", "/_admin/server/tls", Some(&basic_root()))
        .await
        .unwrap();
    assert_eq!(status, 200, "{before}");
    // Only a superuser reloads: root's password is not enough, as in arangod.
    let (status, refused) = admin
        .call("POST", "/_admin/server/tls", Some(&basic_root()))
        .await
        .unwrap();
    assert_eq!(
        (status, refused["errorNum"].as_u64()),
        (403, Some(11)),
        "{refused}"
    );

    std::fs::write(&keyfile, &second.keyfile).unwrap();
    let (status, reloaded) = admin
        .call("POST", "/_admin/server/tls", Some(&jwt))
        .await
        .unwrap();
    assert_eq!(status, 200, "{reloaded}");
    assert_ne!(
        reloaded["result"]["keyfile"]["sha256"],
        before["result"]["keyfile"]["sha256"]
    );
    let reloaded_at = answered.load(Ordering::Acquire);
    let fresh = connect(port, config.clone(), "localhost").await.unwrap();
    assert_eq!(peer_certificate(&fresh), second.der);
    wait_for_more(reloaded_at + 20).await;

    // A broken keyfile: the reload fails, nothing changes.
    std::fs::write(&keyfile, "-----BEGIN CERTIFICATE-----\nnot base64\n").unwrap();
    let (status, failed) = admin
        .call("POST", "/_admin/server/tls", Some(&jwt))
        .await
        .unwrap();
    assert_eq!(
        (status, failed["errorNum"].as_u64()),
        (400, Some(34)),
        "{failed}"
    );
    assert_eq!(failed["error"], true);
    let still = connect(port, config.clone(), "localhost").await.unwrap();
    assert_eq!(peer_certificate(&still), second.der);
    let (_, described) = admin
        .call("GET", "/_admin/server/tls", Some(&jwt))
        .await
        .unwrap();
    assert_eq!(
        described["result"]["keyfile"]["sha256"],
        reloaded["result"]["keyfile"]["sha256"]
    );
    let failed_at = answered.load(Ordering::Acquire);
    wait_for_more(failed_at + 20).await;

    stop.store(true, Ordering::Release);
    load.await.expect("the load never failed");
    assert_eq!(server.terminate(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_connections_hold_the_governors_places() {
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("governor CA");
    let keyfile = write(
        dir.path(),
        "server.pem",
        &ca.issue(&["localhost"], false).keyfile,
    );
    let mut args = no_auth();
    args.extend(["--server.max-connections".into(), "1".into()]);
    let server = Server::start(&ssl_args(dir.path(), &keyfile, &args));
    let config = client_config(&ca, BOTH, &[], None);

    // The one place is taken by an idle TLS connection that never sent a request...
    let mut idle = connect(server.port, config.clone(), "localhost")
        .await
        .unwrap();
    // ...so a newcomer gets it only by the governor closing the idle one.
    let body = get_once(server.port, config, "/_api/version")
        .await
        .unwrap();
    assert_eq!(body["server"], "arango");
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(WAIT, idle.read(&mut byte))
        .await
        .expect("the idle connection is closed");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
}

#[test]
fn startup_refuses_missing_keyfiles_and_old_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let base = |extra: &[&str]| {
        let mut args: Vec<String> = [
            "serve",
            "--server.endpoint",
            "ssl://127.0.0.1:0",
            "--database.directory",
            &data,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let (code, stderr) = start_fails(&base(&[]));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--ssl.keyfile"), "{stderr}");

    let missing = dir.path().join("missing.pem").display().to_string();
    let (code, stderr) = start_fails(&base(&["--ssl.keyfile", &missing]));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("missing.pem"), "{stderr}");

    let ca = Ca::new("startup CA");
    let only_cert = write(dir.path(), "cert-only.pem", &ca.pem());
    let (code, stderr) = start_fails(&base(&["--ssl.keyfile", &only_cert.display().to_string()]));
    assert_eq!(code, Some(1));
    assert!(stderr.contains("private key"), "{stderr}");

    for old in ["1", "3", "4"] {
        let (code, stderr) = start_fails(&base(&["--ssl.protocol", old]));
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("TLS 1.2"), "{stderr}");
    }
}
