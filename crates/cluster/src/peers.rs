//! [`Peers`]: HTTP requests from one cluster member to another (coordinator to DB server,
//! shard leader to follower), over pooled keep-alive connections, as the cluster's superuser.
//!
//! What it is: one blocking request/reply call, [`Peers::send`], that takes a connection to
//! the endpoint from a pool (or opens one), sends the request with an `Authorization: bearer`
//! superuser token (HS256 over the cluster's JWT secret, `server_id` = the sender's id, as
//! ArangoDB's servers authenticate to each other), reads the whole reply, and puts the
//! connection back. Errors say whether the request can have reached the peer
//! ([`PeerError::NotSent`]: safe to retry elsewhere) or not known ([`PeerError::Unknown`]).
//!
//! What it is not: routing (which peer to ask is the caller's choice), retries, or TLS
//! between members (the cluster's members talk plain HTTP on a private network).
//!
//! Invariants: a connection goes back to the pool only after a whole reply that did not ask
//! to close; at most [`POOL_MAX`] idle connections are kept per endpoint; a connection idle
//! for [`IDLE_MAX`] or longer is closed instead of reused, so a request is never sent on a
//! connection the peer may already have closed for idleness (servers close idle connections
//! after 30 s at the soonest), where its outcome would be unknown.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quince_client::connection::{Connection, Timeouts, TransportError};
use quince_client::endpoint::Endpoint;
use quince_client::request::{Method, RequestHead};

/// Idle connections kept per endpoint.
pub const POOL_MAX: usize = 64;

/// How long a pooled connection may have been idle and still be reused.
pub const IDLE_MAX: Duration = Duration::from_secs(15);

/// One request to a peer.
#[derive(Clone, Copy, Debug)]
pub struct PeerRequest<'a> {
    /// The method.
    pub method: Method,
    /// The database the path is relative to.
    pub database: &'a str,
    /// The path below `/_db/<database>`, with its query string (`/_api/document/s12?x=1`).
    pub path: &'a str,
    /// The JSON body, if any.
    pub body: Option<&'a [u8]>,
    /// The stream transaction it runs in (sent as `x-arango-trx-id`), if any.
    pub trx: Option<&'a str>,
}

/// A peer's whole reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerReply {
    /// The status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
}

/// Why a request got no reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerError {
    /// The peer could not be reached (no connection): the request was not sent.
    NotSent(String),
    /// The connection failed after the request was (perhaps partly) sent, or the reply did
    /// not come in time: the peer may or may not have acted on it.
    Unknown(String),
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::NotSent(why) => write!(f, "not sent: {why}"),
            PeerError::Unknown(why) => write!(f, "no reply: {why}"),
        }
    }
}

/// Requests to other members (see the module documentation).
pub struct Peers {
    token: Option<String>,
    timeouts: Timeouts,
    /// Idle connections per endpoint, each with when it went idle.
    pools: Mutex<HashMap<String, Vec<(Connection, Instant)>>>,
    idle_max: Duration,
}

impl Peers {
    /// Requests signed with a superuser token over `jwt_secret` (none: no credentials, for a
    /// cluster without authentication) for server `server_id`, each read or write waiting at
    /// most `timeout`.
    pub fn new(jwt_secret: Option<&[u8]>, server_id: &str, timeout: Duration) -> Peers {
        let token = jwt_secret.map(|secret| superuser_token(secret, server_id));
        Peers {
            token,
            timeouts: Timeouts {
                connect: timeout.min(Duration::from_secs(3)),
                request: timeout,
            },
            pools: Mutex::new(HashMap::new()),
            idle_max: IDLE_MAX,
        }
    }

    /// Sends `request` to `endpoint` (`tcp://host:port`) and reads the reply.
    pub fn send(&self, endpoint: &str, request: &PeerRequest<'_>) -> Result<PeerReply, PeerError> {
        let pooled = self.pooled(endpoint);
        let reused = pooled.is_some();
        let mut connection = match pooled {
            Some(connection) => connection,
            None => self.open(endpoint)?,
        };
        if !reused {
            connection
                .connect()
                .map_err(|e| PeerError::NotSent(format!("{endpoint}: {e}")))?;
        }
        let mut head = RequestHead::new(request.database, &connection.addr().to_string(), true);
        if let Some(token) = &self.token {
            head = head.with_bearer(token);
        }
        let extra = request
            .trx
            .map(|id| format!("x-arango-trx-id: {id}\r\n"))
            .unwrap_or_default();
        let mut bytes = Vec::new();
        head.write_with_headers(
            &mut bytes,
            request.method,
            request.path,
            &extra,
            "application/json",
            request.body,
        );
        let reply = match connection.exchange(&bytes) {
            Ok(response) => PeerReply {
                status: response.status,
                body: response.body(connection.buffer()).to_vec(),
            },
            Err(TransportError::Connect(kind)) => {
                return Err(PeerError::NotSent(format!(
                    "{endpoint}: cannot connect: {kind}"
                )))
            }
            Err(error) => return Err(PeerError::Unknown(format!("{endpoint}: {error}"))),
        };
        let mut pools = self.pools.lock();
        let pool = pools.entry(endpoint.to_string()).or_default();
        if pool.len() < POOL_MAX {
            pool.push((connection, Instant::now()));
        }
        Ok(reply)
    }

    /// The most recently used idle connection to `endpoint` that is fresh enough; staler ones
    /// are closed.
    fn pooled(&self, endpoint: &str) -> Option<Connection> {
        let mut pools = self.pools.lock();
        let pool = pools.get_mut(endpoint)?;
        while let Some((connection, idle_since)) = pool.pop() {
            if idle_since.elapsed() < self.idle_max {
                return Some(connection);
            }
        }
        None
    }

    fn open(&self, endpoint: &str) -> Result<Connection, PeerError> {
        let parsed = Endpoint::parse(endpoint).map_err(PeerError::NotSent)?;
        Connection::open(&parsed, None, self.timeouts).map_err(PeerError::NotSent)
    }
}

/// A superuser token: HS256 over `{"iss":"arangodb","server_id":...,"iat":...}`.
/// A superuser token over `secret` for server `server_id` (HS256, `iss` `arangodb`).
pub(crate) fn superuser_token(secret: &[u8], server_id: &str) -> String {
    let now = crate::node::unix_millis() / 1000;
    let claims = serde_json::json!({"iss": "arangodb", "server_id": server_id, "iat": now});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("HS256 signing cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn a_reply_comes_back_with_the_token_and_the_connection_is_reused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            for _ in 0..2 {
                let mut buffer = [0u8; 4096];
                let n = socket.read(&mut buffer).unwrap();
                seen.push(String::from_utf8_lossy(&buffer[..n]).to_string());
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                    .unwrap();
            }
            seen
        });
        let peers = Peers::new(Some(b"secret"), "PRMR-a", Duration::from_secs(5));
        let endpoint = format!("tcp://{addr}");
        let request = PeerRequest {
            method: Method::Get,
            database: "db",
            path: "/_api/version",
            body: None,
            trx: Some("17"),
        };
        for _ in 0..2 {
            let reply = peers.send(&endpoint, &request).unwrap();
            assert_eq!(
                reply,
                PeerReply {
                    status: 200,
                    body: b"{}".to_vec()
                }
            );
        }
        let seen = server.join().unwrap();
        assert!(seen[0].starts_with("GET /_db/db/_api/version HTTP/1.1\r\n"));
        assert!(seen[1].contains("Authorization: bearer ey"), "{}", seen[1]);
        assert!(seen[1].contains("x-arango-trx-id: 17\r\n"), "{}", seen[1]);
    }

    #[test]
    fn a_connection_idle_too_long_is_not_reused() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // The server answers one request per connection and then closes it without saying so,
        // as a server does with a connection it finds idle too long.
        let server = std::thread::spawn(move || {
            for _ in 0..2 {
                let (mut socket, _) = listener.accept().unwrap();
                let mut buffer = [0u8; 4096];
                let _ = socket.read(&mut buffer).unwrap();
                socket
                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                    .unwrap();
            }
        });
        let mut peers = Peers::new(None, "CRDN-a", Duration::from_secs(5));
        peers.idle_max = Duration::ZERO;
        let endpoint = format!("tcp://{addr}");
        let request = PeerRequest {
            method: Method::Get,
            database: "_system",
            path: "/_api/version",
            body: None,
            trx: None,
        };
        for _ in 0..2 {
            let reply = peers.send(&endpoint, &request).unwrap();
            assert_eq!(reply.status, 200);
        }
        server.join().unwrap();
    }

    #[test]
    fn an_unreachable_peer_is_not_sent() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let peers = Peers::new(None, "CRDN-a", Duration::from_secs(1));
        let request = PeerRequest {
            method: Method::Get,
            database: "_system",
            path: "/_api/version",
            body: None,
            trx: None,
        };
        let error = peers.send(&format!("tcp://{addr}"), &request).unwrap_err();
        assert!(matches!(error, PeerError::NotSent(_)), "{error}");
    }
}
