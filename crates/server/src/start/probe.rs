//! Whether a process answers: etcd's `GET /health` and quince's `GET /_api/version`.
//!
//! What it is: [`etcd_healthy`] and [`quince_answers`], one short HTTP/1.1 exchange each over
//! quince_client's blocking connection, with short timeouts so a supervision loop that polls
//! them stays responsive.
//!
//! What it is not: a wait (the caller polls with its own deadline) or a health check of the
//! cluster as a whole.
//!
//! Invariants: every exchange is bounded by [`PROBE_TIMEOUTS`]; any failure (refused, timed
//! out, malformed, another status) reads as "not yet".

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use quince_client::{Connection, Timeouts};

/// The timeouts of one probe.
pub const PROBE_TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_millis(500),
    request: Duration::from_secs(2),
};

/// `host:port` resolved, or `None`.
fn resolve(host: &str, port: u16) -> Option<SocketAddr> {
    (host, port).to_socket_addrs().ok()?.next()
}

/// One GET; the status and body, or `None` when no response came.
fn get(host: &str, port: u16, path: &str, bearer: Option<&str>) -> Option<(u16, Vec<u8>)> {
    let addr = resolve(host, port)?;
    let mut request =
        format!("GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n");
    if let Some(token) = bearer {
        request.push_str(&format!("Authorization: bearer {token}\r\n"));
    }
    request.push_str("\r\n");
    let mut connection = Connection::new(addr, PROBE_TIMEOUTS);
    let response = connection.exchange(request.as_bytes()).ok()?;
    let body = response.body(connection.buffer()).to_vec();
    Some((response.status, body))
}

/// Whether the etcd member at `host:port` reports itself healthy (`{"health":"true"}`: it
/// is part of a cluster with a leader).
pub fn etcd_healthy(host: &str, port: u16) -> bool {
    let Some((200, body)) = get(host, port, "/health", None) else {
        return false;
    };
    serde_json::from_slice::<serde_json::Value>(&body)
        .map(|v| v["health"] == "true")
        .unwrap_or(false)
}

/// Whether the quince server at `host:port` answers `GET /_api/version` with 200 to a
/// superuser token.
pub fn quince_answers(host: &str, port: u16, token: &str) -> bool {
    matches!(
        get(host, port, "/_api/version", Some(token)),
        Some((200, _))
    )
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;

    /// Answers one request with `reply` and returns the request's bytes.
    fn serve_once(reply: &'static str) -> (u16, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handle = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let n = stream.read(&mut buf).unwrap();
                assert!(n > 0);
                request.extend_from_slice(&buf[..n]);
            }
            stream.write_all(reply.as_bytes()).unwrap();
            String::from_utf8(request).unwrap()
        });
        (port, handle)
    }

    #[test]
    fn etcd_health_needs_health_true() {
        let (port, handle) = serve_once(
            "HTTP/1.1 200 OK\r\nContent-Length: 33\r\n\r\n{\"health\":\"true\",\"reason\":\"\"}    ",
        );
        assert!(etcd_healthy("127.0.0.1", port));
        assert!(handle
            .join()
            .unwrap()
            .starts_with("GET /health HTTP/1.1\r\n"));
        let (port, handle) =
            serve_once("HTTP/1.1 503 x\r\nContent-Length: 19\r\n\r\n{\"health\":\"false\"}\n");
        assert!(!etcd_healthy("127.0.0.1", port));
        handle.join().unwrap();
    }

    #[test]
    fn quince_probe_sends_the_token_and_needs_200() {
        let (port, handle) = serve_once("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}");
        assert!(quince_answers("127.0.0.1", port, "tok"));
        let request = handle.join().unwrap();
        assert!(request.starts_with("GET /_api/version HTTP/1.1\r\n"));
        assert!(request.contains("Authorization: bearer tok\r\n"));
        let (port, handle) = serve_once("HTTP/1.1 401 No\r\nContent-Length: 0\r\n\r\n");
        assert!(!quince_answers("127.0.0.1", port, "tok"));
        handle.join().unwrap();
        // Nobody listening: not yet.
        let free = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert!(!quince_answers("127.0.0.1", free, "tok"));
    }
}
