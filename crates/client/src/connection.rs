//! One blocking HTTP/1.1 client connection over `std::net::TcpStream`.
//!
//! What it is: the transport of `quince import`'s requests and of `quince bench`'s setup
//! requests (the measured run uses the bench's non-blocking lanes instead). A connection sends
//! one request (bytes built by [`crate::request`]) and reads exactly one response, keeping the
//! socket open for the next request unless keep-alive is off or the server closes. It
//! reconnects lazily: after any transport failure the socket is dropped and the next exchange
//! opens a new one. It never resends a request itself: an import is not idempotent, so the
//! caller decides what a failure means.
//!
//! What it is not: pipelined, asynchronous or TLS-capable. It waits for each reply.
//!
//! Invariants: the receive buffer never holds more than one response, which
//! [`crate::response`] bounds; every socket has read and write timeouts.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use crate::request::{Method, RequestHead};
use crate::response::{self, Response};

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

/// A client connection to one endpoint.
pub struct Connection {
    addr: SocketAddr,
    timeouts: Timeouts,
    /// The open socket, if any (opened on first use, dropped after a failure or a close).
    stream: Option<TcpStream>,
    /// The bytes of the response being read, then of the last one read.
    received: Vec<u8>,
    /// Where one read lands before it is appended to `received`.
    scratch: Box<[u8]>,
    /// The request [`Connection::send`] builds, kept to reuse its allocation.
    request: Vec<u8>,
    /// How many TCP connections this object has opened (the first one included).
    pub connects: u64,
}

/// How many bytes one read asks for.
const READ_CHUNK: usize = 64 * 1024;

impl Connection {
    /// A connection to `addr`, opened on the first exchange.
    pub fn new(addr: SocketAddr, timeouts: Timeouts) -> Connection {
        Connection {
            addr,
            timeouts,
            stream: None,
            received: Vec::with_capacity(READ_CHUNK),
            scratch: vec![0u8; READ_CHUNK].into_boxed_slice(),
            request: Vec::new(),
            connects: 0,
        }
    }

    /// The endpoint's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Opens the TCP connection now if it is not open.
    pub fn connect(&mut self) -> Result<(), TransportError> {
        if self.stream.is_some() {
            return Ok(());
        }
        let stream = TcpStream::connect_timeout(&self.addr, self.timeouts.connect)
            .map_err(|e| TransportError::Connect(e.kind()))?;
        // Latency, not throughput per packet, is what a request/reply benchmark measures.
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(self.timeouts.request))
            .and_then(|()| stream.set_write_timeout(Some(self.timeouts.request)))
            .map_err(|e| TransportError::Connect(e.kind()))?;
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
        if let Some(stream) = self.stream.take() {
            let _ = stream.shutdown(Shutdown::Both);
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
            .map_err(|e| io_error(e, TransportError::Send))?;
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
                Err(e) => return Err(io_error(e, TransportError::Receive)),
            };
            if n == 0 {
                eof = true;
            } else {
                self.received.extend_from_slice(&self.scratch[..n]);
            }
        }
    }
}

fn io_error(error: std::io::Error, wrap: fn(ErrorKind) -> TransportError) -> TransportError {
    match error.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => TransportError::Timeout,
        kind => wrap(kind),
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
