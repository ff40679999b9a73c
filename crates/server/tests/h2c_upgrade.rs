//! HTTP/2 by `Upgrade: h2c` against the `quince` binary, over a raw socket: the upgrade request
//! is answered 101 and then as HTTP/2 stream 1, a second request on the same connection
//! (stream 3) is answered too; requests that may not upgrade (a body, no `HTTP2-Settings`) are
//! answered over HTTP/1.1 as if the header were not there.
//!
//! What it is not: a test of the frame insertion alone (crates/server/src/h2c.rs has those) or
//! of curl's behaviour (tests/python/test_http2_upgrade.py).
//!
//! Invariants: each server runs on port 0 over its own temporary directory and is killed on
//! drop; every socket read has a timeout.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
const PASSWORD: &str = "h2c-pw";
/// `root:h2c-pw` in base64.
const BASIC: &str = "Basic cm9vdDpoMmMtcHc=";

struct Server {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_quince"))
            .args([
                "serve",
                "--server.endpoint",
                "tcp://127.0.0.1:0",
                "--database.directory",
            ])
            .arg(dir.path())
            .args(["--database.password", PASSWORD])
            .env_remove("QUINCE_ROOT_PASSWORD")
            .env_remove("ARANGO_ROOT_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the quince binary starts");
        let stdout = child.stdout.take().unwrap();
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
            .strip_prefix("quince: listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
            .trim()
            .parse()
            .unwrap();
        Server {
            child,
            port,
            _dir: dir,
        }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads an HTTP/1.1 head (up to the blank line) byte by byte, so nothing after it is taken.
fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    String::from_utf8(head).unwrap()
}

struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

fn read_frame(stream: &mut TcpStream) -> Frame {
    let mut header = [0u8; 9];
    stream.read_exact(&mut header).unwrap();
    let length =
        usize::from(header[0]) << 16 | usize::from(header[1]) << 8 | usize::from(header[2]);
    let mut payload = vec![0u8; length];
    stream.read_exact(&mut payload).unwrap();
    Frame {
        kind: header[3],
        flags: header[4],
        stream: u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff,
        payload,
    }
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    out.extend_from_slice(&[kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// An HPACK literal without indexing, new name (names and values under 127 bytes).
fn literal(block: &mut Vec<u8>, name: &str, value: &str) {
    block.push(0);
    block.push(name.len() as u8);
    block.extend_from_slice(name.as_bytes());
    block.push(value.len() as u8);
    block.extend_from_slice(value.as_bytes());
}

/// Reads frames until `stream_id`'s response has ended; returns its header block and body.
/// Answers the server's SETTINGS and PINGs on the way.
fn response_on(stream: &mut TcpStream, stream_id: u32) -> (Vec<u8>, Vec<u8>) {
    let (mut headers, mut body) = (Vec::new(), Vec::new());
    loop {
        let f = read_frame(stream);
        match f.kind {
            0x4 if f.flags & 0x1 == 0 => stream.write_all(&frame(0x4, 0x1, 0, &[])).unwrap(),
            0x6 if f.flags & 0x1 == 0 => stream.write_all(&frame(0x6, 0x1, 0, &f.payload)).unwrap(),
            0x7 => panic!("GOAWAY: {:?}", f.payload),
            0x3 => panic!("RST_STREAM on stream {}", f.stream),
            0x1 if f.stream == stream_id => headers.extend_from_slice(&f.payload),
            0x0 if f.stream == stream_id => body.extend_from_slice(&f.payload),
            _ => {}
        }
        if f.stream == stream_id && matches!(f.kind, 0x0 | 0x1) && f.flags & 0x1 != 0 {
            return (headers, body);
        }
    }
}

#[test]
fn upgrade_answers_stream_one_then_serves_stream_three_on_the_same_connection() {
    let server = Server::start();
    let mut socket = server.connect();
    write!(
        socket,
        "GET /_api/version HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: {BASIC}\r\n\
         Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n",
        server.port
    )
    .unwrap();
    let head = read_head(&mut socket);
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("upgrade: h2c\r\n"),
        "{head}"
    );
    // The client's connection preface: the magic, then SETTINGS.
    socket
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .unwrap();
    socket.write_all(&frame(0x4, 0, 0, &[])).unwrap();
    let (headers, body) = response_on(&mut socket, 1);
    // `:status: 200` is entry 8 of HPACK's static table.
    assert_eq!(headers.first(), Some(&0x88), "{headers:?}");
    let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["server"], "arango");

    let mut block = Vec::new();
    literal(&mut block, ":method", "GET");
    literal(&mut block, ":scheme", "http");
    literal(&mut block, ":path", "/_api/version?details=true");
    literal(&mut block, ":authority", "127.0.0.1");
    literal(&mut block, "authorization", BASIC);
    socket.write_all(&frame(0x1, 0x1 | 0x4, 3, &block)).unwrap();
    let (headers, body) = response_on(&mut socket, 3);
    assert_eq!(headers.first(), Some(&0x88), "{headers:?}");
    let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["details"]["mode"], "server");
}

#[test]
fn the_upgrade_of_stream_one_keeps_the_request_credentials_and_path() {
    let server = Server::start();
    let mut socket = server.connect();
    // No credentials: the request, answered as stream 1, is refused like any other.
    write!(
        socket,
        "GET /_api/collection HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\n\
         Upgrade: h2c\r\nHTTP2-Settings: \r\n\r\n"
    )
    .unwrap();
    assert!(read_head(&mut socket).starts_with("HTTP/1.1 101 "));
    socket
        .write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .unwrap();
    socket
        .write_all(&frame(0x4, 0, 0, &[0, 3, 0, 0, 0, 100]))
        .unwrap();
    let (_, body) = response_on(&mut socket, 1);
    let reply: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(reply["code"], 401, "{reply}");
}

/// Reads one HTTP/1.1 response with a Content-Length body.
fn read_http1(socket: &mut TcpStream) -> (String, Vec<u8>) {
    let head = read_head(socket);
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")
                .map(str::to_string)
        })
        .map_or(0, |v| v.trim().parse().unwrap());
    let mut body = vec![0u8; length];
    socket.read_exact(&mut body).unwrap();
    (head, body)
}

#[test]
fn requests_that_may_not_upgrade_are_answered_over_http_1_1() {
    let server = Server::start();
    let mut socket = server.connect();
    // A body: the upgrade is ignored (RFC 7540 3.2 allows it).
    let body = r#"{"name":"h2c_body"}"#;
    write!(
        socket,
        "POST /_api/collection HTTP/1.1\r\nHost: x\r\nAuthorization: {BASIC}\r\n\
         Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: \r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let (head, reply) = read_http1(&mut socket);
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert!(String::from_utf8(reply).unwrap().contains("h2c_body"));
    // No HTTP2-Settings header: not an h2c upgrade either; the connection stays HTTP/1.1.
    write!(
        socket,
        "GET /_api/version HTTP/1.1\r\nHost: x\r\nAuthorization: {BASIC}\r\n\
         Connection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
    )
    .unwrap();
    let (head, reply) = read_http1(&mut socket);
    assert!(head.starts_with("HTTP/1.1 200 "), "{head}");
    assert!(String::from_utf8(reply).unwrap().contains("arango"));
}
