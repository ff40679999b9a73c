//! The blocking client connection over TLS, against a small rustls server thread with a CA
//! and certificates made here by rcgen: keep-alive, lazy reconnection, large and fragmented
//! replies, timeouts, and the refusals (an untrusted CA, a certificate for another name).
//!
//! What it is not: a test of the bench's non-blocking TLS lanes (crates/bench/src/runner.rs)
//! or of the tools against a real `quince serve` (tests/python/test_tls_tools.py).
//!
//! Invariants: every server listens on 127.0.0.1 port 0, every CA and file is made here (unique
//! temporary directories, removed at the end), and every wait is bounded by a timeout.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use quince_client::{Connection, Endpoint, Target, Timeouts, TransportError};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};

/// A test CA, and a server certificate it signed for some names.
struct Pki {
    ca_pem: String,
    cert: CertificateDer<'static>,
    key: Vec<u8>,
}

fn pki(names: &[&str]) -> Pki {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    // Each CA its own name, so that another CA's certificate is an unknown issuer.
    static NEXT_CA: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT_CA.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, format!("Quince test CA {n}"));
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let cert = CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        cert: cert.der().clone(),
        key: key.serialize_der(),
    }
}

/// A unique temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "quince-client-tls-{tag}-{}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn server_config(pki: &Pki) -> Arc<ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.clone()));
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.cert.clone()], key)
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}

/// What the server thread saw on each connection: the ALPN protocol and the request lines.
type Seen = (Option<Vec<u8>>, Vec<String>);

/// A TLS server that takes `connections` connections one after the other; on each it answers
/// the given replies, one per request head it reads, then closes. Reports what it saw.
fn serve(
    pki: &Pki,
    connections: Vec<Vec<Vec<u8>>>,
) -> (SocketAddr, mpsc::Receiver<Result<Seen, String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let config = server_config(pki);
    let (report, seen) = mpsc::channel();
    thread::spawn(move || {
        for replies in connections {
            let (socket, _) = listener.accept().unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let session = ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut tls = StreamOwned::new(session, socket);
            let result = (|| -> Result<Seen, String> {
                let mut lines = Vec::new();
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                for reply in replies {
                    while !buffer.windows(4).any(|w| w == b"\r\n\r\n") {
                        let n = tls.read(&mut chunk).map_err(|e| e.to_string())?;
                        if n == 0 {
                            return Err("client closed".into());
                        }
                        buffer.extend_from_slice(&chunk[..n]);
                    }
                    let end = buffer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    let head = String::from_utf8(buffer.drain(..end).collect()).unwrap();
                    lines.push(head.lines().next().unwrap_or_default().to_string());
                    // Fragmented on purpose: the client must reassemble TLS records.
                    for part in reply.chunks(1000) {
                        tls.write_all(part).map_err(|e| e.to_string())?;
                        tls.flush().map_err(|e| e.to_string())?;
                    }
                }
                Ok((tls.conn.alpn_protocol().map(<[u8]>::to_vec), lines))
            })();
            tls.conn.send_close_notify();
            let _ = tls.flush();
            let _ = report.send(result);
        }
    });
    (addr, seen)
}

fn timeouts() -> Timeouts {
    Timeouts {
        connect: Duration::from_secs(5),
        request: Duration::from_secs(5),
    }
}

fn reply(status: &str, body: &[u8], close: bool) -> Vec<u8> {
    let mut bytes = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\n{}\r\n",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
    .into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

const REQUEST: &[u8] = b"GET /_api/version HTTP/1.1\r\nHost: x\r\n\r\n";

#[test]
fn keeps_one_tls_connection_for_many_exchanges_with_alpn_http_1_1() {
    let pki = pki(&["localhost", "127.0.0.1"]);
    let dir = TempDir::new("keep");
    let cafile = dir.write("ca.pem", &pki.ca_pem);
    let big: Vec<u8> = (0..300_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let (addr, seen) = serve(
        &pki,
        vec![vec![
            reply("200 OK", b"one", false),
            reply("201 Created", &big, false),
        ]],
    );
    let endpoint = Endpoint::parse(&format!("ssl://127.0.0.1:{}", addr.port())).unwrap();
    let mut connection = Connection::open(&endpoint, Some(&cafile), timeouts()).unwrap();
    assert!(connection.is_tls());
    let first = connection.exchange(REQUEST).unwrap();
    assert_eq!(
        (first.status, first.body(connection.buffer())),
        (200, &b"one"[..])
    );
    let second = connection.exchange(REQUEST).unwrap();
    assert_eq!(second.status, 201);
    assert_eq!(second.body(connection.buffer()), &big[..]);
    assert_eq!(connection.connects, 1);
    let (alpn, lines) = seen.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    assert_eq!(alpn.as_deref(), Some(&b"http/1.1"[..]));
    assert_eq!(lines, vec!["GET /_api/version HTTP/1.1"; 2]);
}

#[test]
fn reconnects_lazily_with_a_new_handshake_after_a_close() {
    let pki = pki(&["localhost"]);
    let dir = TempDir::new("reconnect");
    let cafile = dir.write("ca.pem", &pki.ca_pem);
    let (addr, seen) = serve(
        &pki,
        vec![
            vec![reply("200 OK", b"first", true)],
            vec![reply("200 OK", b"second", true)],
        ],
    );
    // A DNS name this time: the certificate names localhost, not the address.
    let endpoint = Endpoint::parse(&format!("ssl://localhost:{}", addr.port())).unwrap();
    let config = quince_client::tls::client_config(Some(&cafile)).unwrap();
    let mut target = Target::resolve_with(&endpoint, Some(&config)).unwrap();
    // localhost may resolve to ::1 first; the test server listens on 127.0.0.1.
    target.addr = addr;
    let mut connection = Connection::to(target, timeouts());
    for expected in [&b"first"[..], b"second"] {
        let reply = connection.exchange(REQUEST).unwrap();
        assert_eq!(reply.body(connection.buffer()), expected);
    }
    assert_eq!(connection.connects, 2);
    for _ in 0..2 {
        seen.recv_timeout(Duration::from_secs(10)).unwrap().unwrap();
    }
}

#[test]
fn an_untrusted_certificate_authority_is_a_tls_error_of_the_connect() {
    let pki = pki(&["127.0.0.1"]);
    let other = self::pki(&["127.0.0.1"]);
    let dir = TempDir::new("untrusted");
    let cafile = dir.write("other-ca.pem", &other.ca_pem);
    let (addr, _seen) = serve(&pki, vec![vec![reply("200 OK", b"", false)]]);
    let endpoint = Endpoint::parse(&format!("ssl://127.0.0.1:{}", addr.port())).unwrap();
    let mut connection = Connection::open(&endpoint, Some(&cafile), timeouts()).unwrap();
    match connection.exchange(REQUEST).unwrap_err() {
        TransportError::Tls(message) => assert!(message.contains("UnknownIssuer"), "{message}"),
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

#[test]
fn a_certificate_for_another_name_is_refused() {
    let pki = pki(&["db.example"]);
    let dir = TempDir::new("name");
    let cafile = dir.write("ca.pem", &pki.ca_pem);
    let (addr, _seen) = serve(&pki, vec![vec![reply("200 OK", b"", false)]]);
    let endpoint = Endpoint::parse(&format!("ssl://127.0.0.1:{}", addr.port())).unwrap();
    let mut connection = Connection::open(&endpoint, Some(&cafile), timeouts()).unwrap();
    match connection.exchange(REQUEST).unwrap_err() {
        TransportError::Tls(message) => {
            assert!(message.contains("not valid for name"), "{message}")
        }
        other => panic!("expected a TLS error, got {other:?}"),
    }
}

#[test]
fn a_tls_server_that_does_not_answer_times_out() {
    let pki = pki(&["127.0.0.1"]);
    let dir = TempDir::new("timeout");
    let cafile = dir.write("ca.pem", &pki.ca_pem);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let config = server_config(&pki);
    let (done, wait) = mpsc::channel::<()>();
    let server = thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        let mut session = ServerConnection::new(config).unwrap();
        let mut socket = socket;
        // Complete the handshake, then read the request and never answer.
        while session.is_handshaking() {
            if session.complete_io(&mut socket).is_err() {
                break;
            }
        }
        let _ = wait.recv_timeout(Duration::from_secs(20));
    });
    let endpoint = Endpoint::parse(&format!("ssl://127.0.0.1:{}", addr.port())).unwrap();
    let short = Timeouts {
        connect: Duration::from_secs(5),
        request: Duration::from_millis(300),
    };
    let mut connection = Connection::open(&endpoint, Some(&cafile), short).unwrap();
    let started = Instant::now();
    assert_eq!(
        connection.exchange(REQUEST).unwrap_err(),
        TransportError::Timeout
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    done.send(()).unwrap();
    server.join().unwrap();
}

#[test]
fn the_plain_constructor_still_speaks_plain_tcp() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        let mut seen = Vec::new();
        let mut chunk = [0u8; 1024];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut chunk).unwrap();
            seen.extend_from_slice(&chunk[..n]);
        }
        socket.write_all(&reply("200 OK", b"plain", false)).unwrap();
        seen
    });
    let mut connection = Connection::new(addr, timeouts());
    assert!(!connection.is_tls());
    let reply = connection.exchange(REQUEST).unwrap();
    assert_eq!(reply.body(connection.buffer()), b"plain");
    // The bytes on the wire are the request itself, not a TLS ClientHello.
    assert!(server.join().unwrap().starts_with(b"GET /_api/version"));
}
