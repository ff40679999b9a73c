//! A minimal blocking HTTP/1.1 client: one keep-alive connection per sending thread.
//!
//! What it is: [`Endpoint`] (parsed from arangoimport's `--server.endpoint`, e.g.
//! `tcp://127.0.0.1:8529` or `http://host:port`) and [`Connection`], which sends a request with
//! a `Content-Length` body and reads a reply that has one (the server always sends it).
//!
//! What it is not: a general HTTP client. No TLS, no redirects, no chunked replies, and no
//! retries: an import request is not idempotent, so a failed one is reported, never resent.
//!
//! Invariants: a reply is read completely before the next request goes out; a reply head is at
//! most [`HEAD_MAX`] bytes and a reply body at most [`BODY_MAX`] bytes.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// The largest reply head accepted.
const HEAD_MAX: usize = 64 << 10;

/// The largest reply body accepted (import replies with details can be long).
const BODY_MAX: usize = 256 << 20;

/// Where the server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port`, to connect to and to send as `Host`.
    pub authority: String,
}

impl Endpoint {
    /// Parses `tcp://HOST:PORT`, `http+tcp://…` or `http://…` (port 8529 when absent).
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let rest = ["tcp://", "http+tcp://", "http://"]
            .iter()
            .find_map(|scheme| text.strip_prefix(scheme))
            .ok_or_else(|| {
                format!("unsupported endpoint '{text}' (use tcp://HOST:PORT; ssl is not supported)")
            })?;
        let rest = rest.trim_end_matches('/');
        if rest.is_empty() || rest.contains('/') {
            return Err(format!("invalid endpoint '{text}'"));
        }
        let has_port = if rest.starts_with('[') {
            rest.contains("]:")
        } else {
            rest.contains(':')
        };
        Ok(Endpoint {
            authority: if has_port {
                rest.to_string()
            } else {
                format!("{rest}:8529")
            },
        })
    }
}

/// A reply.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

/// One keep-alive connection.
pub struct Connection {
    endpoint: Endpoint,
    /// `Authorization` header value, if any.
    authorization: Option<String>,
    /// The open connection, if any (opened on first use, dropped when the server closes it).
    stream: Option<BufReader<TcpStream>>,
}

impl Connection {
    /// A connection to `endpoint` that sends `authorization` with every request.
    pub fn new(endpoint: Endpoint, authorization: Option<String>) -> Connection {
        Connection {
            endpoint,
            authorization,
            stream: None,
        }
    }

    /// Sends one request and reads its reply.
    pub fn request(
        &mut self,
        method: &str,
        target: &str,
        content_type: &str,
        body: &[u8],
    ) -> io::Result<Reply> {
        if self.stream.is_none() {
            let stream = TcpStream::connect(&self.endpoint.authority)?;
            stream.set_nodelay(true)?;
            self.stream = Some(BufReader::with_capacity(64 << 10, stream));
        }
        let result = self.exchange(method, target, content_type, body);
        if result.as_ref().map_or(true, |(_, close)| *close) {
            self.stream = None;
        }
        result.map(|(reply, _)| reply)
    }

    fn exchange(
        &mut self,
        method: &str,
        target: &str,
        content_type: &str,
        body: &[u8],
    ) -> io::Result<(Reply, bool)> {
        let stream = self.stream.as_mut().expect("connected above");
        let mut head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\nConnection: keep-alive\r\n",
            self.endpoint.authority,
            body.len()
        );
        if let Some(auth) = &self.authorization {
            head.push_str("Authorization: ");
            head.push_str(auth);
            head.push_str("\r\n");
        }
        head.push_str("\r\n");
        let socket = stream.get_mut();
        socket.write_all(head.as_bytes())?;
        socket.write_all(body)?;
        socket.flush()?;
        read_reply(stream)
    }
}

/// Reads one reply; the flag is true when the server will close the connection.
fn read_reply(stream: &mut BufReader<TcpStream>) -> io::Result<(Reply, bool)> {
    let mut line = Vec::new();
    let mut head_bytes = 0usize;
    let mut status = None;
    let mut length: Option<usize> = None;
    let mut close = false;
    loop {
        line.clear();
        let n = stream.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection before replying",
            ));
        }
        head_bytes += n;
        if head_bytes > HEAD_MAX {
            return Err(invalid("reply head too long"));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if status.is_none() {
            let code = text
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse::<u16>().ok())
                .ok_or_else(|| invalid("malformed status line"))?;
            status = Some(code);
            continue;
        }
        if text.is_empty() {
            break;
        }
        if let Some((name, value)) = text.split_once(':') {
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse().map_err(|_| invalid("bad Content-Length"))?);
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                return Err(invalid("chunked replies are not supported"));
            }
        }
    }
    let body = match length {
        Some(n) if n > BODY_MAX => return Err(invalid("reply body too long")),
        Some(n) => {
            let mut body = vec![0; n];
            stream.read_exact(&mut body)?;
            body
        }
        None => {
            close = true;
            let mut body = Vec::new();
            stream.take(BODY_MAX as u64 + 1).read_to_end(&mut body)?;
            if body.len() > BODY_MAX {
                return Err(invalid("reply body too long"));
            }
            body
        }
    };
    Ok((
        Reply {
            status: status.expect("read above"),
            body,
        },
        close,
    ))
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_take_arangodb_forms() {
        let e = |t: &str| Endpoint::parse(t).map(|e| e.authority);
        assert_eq!(e("tcp://127.0.0.1:8530").unwrap(), "127.0.0.1:8530");
        assert_eq!(e("http://localhost").unwrap(), "localhost:8529");
        assert_eq!(e("http+tcp://[::1]:9/").unwrap(), "[::1]:9");
        assert!(e("ssl://x:1").is_err());
        assert!(e("tcp://x:1/path").is_err());
    }

    #[test]
    fn a_reply_is_read_by_its_length_and_the_connection_reused() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            for reply in ["first", "second!"] {
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                assert_eq!(body, b"payload");
                write!(
                    socket,
                    "HTTP/1.1 201 Created\r\nContent-Length: {}\r\n\r\n{reply}",
                    reply.len()
                )
                .unwrap();
            }
        });
        let endpoint = Endpoint::parse(&format!("tcp://{address}")).unwrap();
        let mut c = Connection::new(endpoint, Some("Basic eDp5".into()));
        let r1 = c.request("POST", "/x", "text/plain", b"payload").unwrap();
        assert_eq!((r1.status, r1.body.as_slice()), (201, &b"first"[..]));
        let r2 = c.request("POST", "/x", "text/plain", b"payload").unwrap();
        assert_eq!(r2.body, b"second!");
        server.join().unwrap();
    }
}
