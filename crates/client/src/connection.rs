//! One blocking HTTP/1.1 client connection over `std::net::TcpStream`, plain or TLS.
//!
//! What it is: the transport of `quince import`'s requests and of `quince bench`'s setup
//! requests (the measured run uses the bench's non-blocking lanes instead). A connection sends
//! one request (bytes built by [`crate::request`]) and reads exactly one response, keeping the
//! socket open for the next request unless keep-alive is off or the server closes. It
//! reconnects lazily: after any transport failure the socket is dropped and the next exchange
//! opens a new one (and, over TLS, does a new handshake). It never resends a request itself:
//! an import is not idempotent, so the caller decides what a failure means.
//!
//! Opening one, for a tool:
//! - [`Connection::open`]`(&endpoint, cafile, timeouts)` in one line: it resolves a parsed
//!   [`crate::Endpoint`] and, for `ssl://`, trusts the PEM file `cafile` (the tool's
//!   `--ssl.cafile`) or the system's roots;
//! - [`Connection::to`]`(target, timeouts)` with a [`crate::tls::Target`] the tool resolved
//!   itself (to build the TLS configuration once for many connections);
//! - [`Connection::new`]`(address, timeouts)`: plain TCP, as before TLS existed.
//!
//! What it is not: pipelined or asynchronous. It waits for each reply.
//!
//! Invariants: the receive buffer never holds more than one response, which
//! [`crate::response`] bounds; every socket has read and write timeouts, which bound the TLS
//! handshake too (done when connecting, so a certificate problem is a [`TransportError::Tls`]
//! of the connect, never a half-sent request).

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

use crate::endpoint::Endpoint;
use crate::request::{Method, RequestHead};
use crate::response::{self, Response};
use crate::tls::Target;

/// Why an exchange produced no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The TCP connection could not be opened.
    Connect(ErrorKind),
    /// Sending the request failed.
    Send(ErrorKind),
    /// Receiving failed, or the server closed the connection before a whole response.
    Receive(ErrorKind),
    /// The peer closed the connection before a whole response.
    Closed,
    /// A read or write timed out.
    Timeout,
    /// The response could not be parsed.
    Malformed(&'static str),
    /// The TLS handshake or a TLS record failed (an untrusted certificate, a wrong name, a
    /// protocol error): what rustls says.
    Tls(String),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TransportError::Connect(kind) => write!(f, "cannot connect: {kind}"),
            TransportError::Send(kind) => write!(f, "send failed: {kind}"),
            TransportError::Receive(kind) => write!(f, "receive failed: {kind}"),
            TransportError::Closed => write!(f, "connection closed before a whole response"),
            TransportError::Timeout => write!(f, "timed out"),
            TransportError::Malformed(what) => write!(f, "malformed response: {what}"),
            TransportError::Tls(what) => write!(f, "TLS: {what}"),
        }
    }
}

/// Connect and request timeouts.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// How long opening a TCP connection may take.
    pub connect: Duration,
    /// How long one read or write may block.
    pub request: Duration,
}

/// An open socket, plain or with its TLS session.
enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(tcp) => tcp,
            Stream::Tls(tls) => &tls.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.read(buf),
            Stream::Tls(tls) => match tls.read(buf) {
                // A server that closes without close_notify ends the stream all the same (a
                // truncated body is still caught by the response's framing).
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => Ok(0),
                other => other,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Plain(tcp) => tcp.write(buf),
            Stream::Tls(tls) => tls.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Stream::Plain(tcp) => tcp.flush(),
            Stream::Tls(tls) => tls.flush(),
        }
    }
}

/// A client connection to one endpoint.
pub struct Connection {
    target: Target,
    timeouts: Timeouts,
    /// The open socket, if any (opened on first use, dropped after a failure or a close).
    stream: Option<Stream>,
    /// The bytes of the response being read, then of the last one read.
    received: Vec<u8>,
    /// Where one read lands before it is appended to `received`.
    scratch: Box<[u8]>,
    /// The request [`Connection::send`] builds, kept to reuse its allocation.
    request: Vec<u8>,
    /// How many TCP connections (with their TLS handshakes) this object has opened (the first
    /// one included).
    pub connects: u64,
}

/// How many bytes one read asks for.
const READ_CHUNK: usize = 64 * 1024;

impl Connection {
    /// A plain TCP connection to `addr`, opened on the first exchange.
    pub fn new(addr: SocketAddr, timeouts: Timeouts) -> Connection {
        Connection::to(Target::plain(addr), timeouts)
    }

    /// A connection to `target` (TLS when it has TLS settings), opened on the first exchange.
    pub fn to(target: Target, timeouts: Timeouts) -> Connection {
        Connection {
            target,
            timeouts,
            stream: None,
            received: Vec::with_capacity(READ_CHUNK),
            scratch: vec![0u8; READ_CHUNK].into_boxed_slice(),
            request: Vec::new(),
            connects: 0,
        }
    }

    /// A connection to a parsed endpoint, resolved now; over `ssl://` it trusts the CA
    /// certificates of the PEM file `cafile`, or the system's roots without one. The message
    /// says what is wrong (a name that does not resolve, an unreadable CA file).
    pub fn open(
        endpoint: &Endpoint,
        cafile: Option<&Path>,
        timeouts: Timeouts,
    ) -> Result<Connection, String> {
        Ok(Connection::to(Target::resolve(endpoint, cafile)?, timeouts))
    }

    /// The endpoint's address.
    pub fn addr(&self) -> SocketAddr {
        self.target.addr
    }

    /// Whether the connection speaks TLS.
    pub fn is_tls(&self) -> bool {
        self.target.tls.is_some()
    }

    /// Opens the TCP connection (and does the TLS handshake) now if it is not open.
    pub fn connect(&mut self) -> Result<(), TransportError> {
        if self.stream.is_some() {
            return Ok(());
        }
        let stream = TcpStream::connect_timeout(&self.target.addr, self.timeouts.connect)
            .map_err(|e| TransportError::Connect(e.kind()))?;
        // Latency, not throughput per packet, is what a request/reply benchmark measures.
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(self.timeouts.request))
            .and_then(|()| stream.set_write_timeout(Some(self.timeouts.request)))
            .map_err(|e| TransportError::Connect(e.kind()))?;
        let stream = match &self.target.tls {
            None => Stream::Plain(stream),
            Some(tls) => {
                let mut session = tls
                    .session()
                    .map_err(|e| TransportError::Tls(e.to_string()))?;
                let mut stream = stream;
                while session.is_handshaking() {
                    session
                        .complete_io(&mut stream)
                        .map_err(|e| tls_error(e, TransportError::Connect))?;
                }
                Stream::Tls(Box::new(StreamOwned::new(session, stream)))
            }
        };
        self.stream = Some(stream);
        self.received.clear();
        self.connects += 1;
        Ok(())
    }

    /// Sends `request` and reads one response. The response's body ranges refer to
    /// [`Connection::buffer`], valid until the next exchange.
    pub fn exchange(&mut self, request: &[u8]) -> Result<Response, TransportError> {
        let result = self.exchange_once(request);
        match &result {
            Ok(reply) if !reply.close => {}
            _ => self.disconnect(),
        }
        result
    }

    /// Builds the request (`head` with `method`, `path` relative to the head's database, and
    /// `body` of `content_type`), sends it and reads one response, as
    /// [`Connection::exchange`].
    pub fn send(
        &mut self,
        head: &RequestHead,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<&[u8]>,
    ) -> Result<Response, TransportError> {
        let mut request = std::mem::take(&mut self.request);
        request.clear();
        head.write(&mut request, method, path, content_type, body);
        let result = self.exchange(&request);
        self.request = request;
        result
    }

    /// The receive buffer the last response was parsed from.
    pub fn buffer(&self) -> &[u8] {
        &self.received
    }

    /// Drops the socket (the next exchange reconnects).
    pub fn disconnect(&mut self) {
        if let Some(mut stream) = self.stream.take() {
            if let Stream::Tls(tls) = &mut stream {
                // Best effort: the socket is dropped whatever the peer makes of it.
                tls.conn.send_close_notify();
                let _ = tls.conn.write_tls(&mut tls.sock);
            }
            let _ = stream.tcp().shutdown(Shutdown::Both);
        }
    }

    fn exchange_once(&mut self, request: &[u8]) -> Result<Response, TransportError> {
        self.connect()?;
        let stream = self.stream.as_mut().expect("connected above");
        // Bytes of the previous response were consumed; nothing else is expected before the
        // next reply since requests are not pipelined.
        self.received.clear();
        stream
            .write_all(request)
            .and_then(|()| stream.flush())
            .map_err(|e| tls_error(e, TransportError::Send))?;
        let mut eof = false;
        loop {
            if !self.received.is_empty() || eof {
                match response::parse(&self.received, eof) {
                    Ok(Some(reply)) => return Ok(reply),
                    Ok(None) if eof => return Err(TransportError::Closed),
                    Ok(None) => {}
                    Err(bad) => return Err(TransportError::Malformed(bad.0)),
                }
            }
            let n = match stream.read(&mut self.scratch) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(tls_error(e, TransportError::Receive)),
            };
            if n == 0 {
                eof = true;
            } else {
                self.received.extend_from_slice(&self.scratch[..n]);
            }
        }
    }
}

fn tls_error(error: std::io::Error, wrap: fn(ErrorKind) -> TransportError) -> TransportError {
    TransportError::from_io(error, wrap)
}

impl TransportError {
    /// An I/O error as a transport error: a timeout, a TLS failure (rustls reports those as
    /// `InvalidData` wrapping its own error), or `wrap` of the error's kind.
    pub fn from_io(error: std::io::Error, wrap: fn(ErrorKind) -> TransportError) -> TransportError {
        match error.kind() {
            ErrorKind::WouldBlock | ErrorKind::TimedOut => TransportError::Timeout,
            ErrorKind::InvalidData
                if error
                    .get_ref()
                    .is_some_and(|inner| inner.is::<rustls::Error>()) =>
            {
                TransportError::Tls(error.to_string())
            }
            kind => wrap(kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::thread;

    fn timeouts() -> Timeouts {
        Timeouts {
            connect: Duration::from_secs(5),
            request: Duration::from_secs(5),
        }
    }

    /// A one-connection server that answers each request with the given byte fragments,
    /// written separately, then closes after the last reply.
    fn serve(replies: Vec<Vec<&'static [u8]>>) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            socket.set_nodelay(true).unwrap();
            let mut buf = [0u8; 4096];
            for fragments in replies {
                let mut seen = Vec::new();
                while response::find(&seen, b"\r\n\r\n").is_none() {
                    let n = socket.read(&mut buf).unwrap();
                    seen.extend_from_slice(&buf[..n]);
                }
                for fragment in fragments {
                    socket.write_all(fragment).unwrap();
                    socket.flush().unwrap();
                }
            }
        });
        addr
    }

    #[test]
    fn keeps_the_connection_across_exchanges_and_reassembles_fragments() {
        let addr = serve(vec![
            vec![b"HTTP/1.1 200 OK\r\nContent-Le", b"ngth: 2\r\n\r\nh", b"i"],
            vec![b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n"],
        ]);
        let mut connection = Connection::new(addr, timeouts());
        let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        let first = connection.exchange(request).unwrap();
        assert_eq!(
            (first.status, first.body(connection.buffer())),
            (200, &b"hi"[..])
        );
        let second = connection.exchange(request).unwrap();
        assert_eq!(
            (second.status, second.body(connection.buffer())),
            (201, &b"x"[..])
        );
        assert_eq!(connection.connects, 1);
    }

    #[test]
    fn send_writes_the_head_and_body_and_reuses_the_socket() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut requests = Vec::new();
            let mut buf = [0u8; 4096];
            for reply in ["first", "second!"] {
                // Read one request: its head, then as many body bytes as it announces.
                let request = loop {
                    if let Some(end) = response::find(&seen, b"\r\n\r\n") {
                        let head = String::from_utf8(seen[..end].to_vec()).unwrap();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .map_or(0, |v| v.parse().unwrap());
                        if seen.len() >= end + 4 + length {
                            break seen.drain(..end + 4 + length).collect::<Vec<u8>>();
                        }
                    }
                    let n = socket.read(&mut buf).unwrap();
                    seen.extend_from_slice(&buf[..n]);
                };
                requests.push(String::from_utf8(request).unwrap());
                write!(
                    socket,
                    "HTTP/1.1 201 Created\r\nContent-Length: {}\r\n\r\n{reply}",
                    reply.len()
                )
                .unwrap();
            }
            requests
        });
        let head = RequestHead::new("db", "h:1", true).with_basic_auth("x", "y");
        let mut connection = Connection::new(addr, timeouts());
        for expected in [&b"first"[..], b"second!"] {
            let reply = connection
                .send(&head, Method::Post, "/x", "text/plain", Some(b"payload"))
                .unwrap();
            assert_eq!(
                (reply.status, reply.body(connection.buffer())),
                (201, expected)
            );
        }
        assert_eq!(connection.connects, 1);
        let requests = server.join().unwrap();
        for request in requests {
            assert!(
                request.starts_with("POST /_db/db/x HTTP/1.1\r\n"),
                "{request}"
            );
            assert!(
                request.contains("Authorization: Basic eDp5\r\n"),
                "{request}"
            );
            assert!(request.ends_with("\r\n\r\npayload"), "{request}");
        }
    }

    #[test]
    fn a_close_before_the_reply_is_a_transport_error() {
        let addr = serve(vec![vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        ]]);
        let mut connection = Connection::new(addr, timeouts());
        let error = connection.exchange(b"GET / HTTP/1.1\r\n\r\n").unwrap_err();
        assert_eq!(error, TransportError::Closed);
    }

    #[test]
    fn refused_connections_are_connect_errors() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let mut connection = Connection::new(addr, timeouts());
        let error = connection.exchange(b"GET / HTTP/1.1\r\n\r\n").unwrap_err();
        assert!(matches!(error, TransportError::Connect(_)), "{error:?}");
    }
}
