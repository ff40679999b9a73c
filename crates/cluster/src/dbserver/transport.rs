//! [`Transport`]: how one DB server sends a cluster-internal request
//! (`/_api/replication/...`) to another: over HTTP ([`HttpTransport`], [`crate::peers::Peers`])
//! in a real cluster, or by calling the target's [`ClusterOps::internal`] in the same process
//! ([`LocalTransport`], for tests that run several DB servers over one store).
//!
//! What it is: one blocking call, [`Transport::call`], that answers the peer's reply (error
//! replies included, as they came) or why no reply came ([`PeerError`]). Ordinary calls wait at
//! most the follower timeout; a `long` call (a join, and the key lists and copies a leader
//! makes while it catches a follower up) waits [`LONG_CALL_TIMEOUT`].
//!
//! What it is not: retries, or the choice of the peer.
//!
//! Invariants: [`HttpTransport`] finds a server's endpoint in
//! `Current/ServersRegistered/<id>` (cached once found; a failed call forgets it, so a server
//! that moved is found again); [`LocalTransport`] never holds a server alive (weak handles),
//! and a server it was told to cut off answers nothing ([`PeerError::NotSent`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use quince_client::request::Method;
use quince_meta::MetaStore;
use quince_ops::{ClusterOps, InternalReply, InternalRequest};

use super::wire::error_reply;
use super::DbServer;
use crate::layout::{decode, Layout, ServerRecord};
use crate::peers::{PeerError, PeerRequest, Peers};

/// The longest a join (a follower's whole catch-up) may take.
pub const LONG_CALL_TIMEOUT: Duration = Duration::from_secs(600);

/// Sends internal requests to other DB servers (see the module documentation).
pub trait Transport: Send + Sync {
    /// Sends `request` to server `server` and answers its reply.
    fn call(
        &self,
        server: &str,
        request: InternalRequest,
        long: bool,
    ) -> Result<InternalReply, PeerError>;
}

/// Internal requests over HTTP, as the cluster's superuser.
pub struct HttpTransport {
    store: Arc<dyn MetaStore>,
    layout: Layout,
    peers: Peers,
    long_peers: Peers,
    endpoints: Mutex<HashMap<String, String>>,
}

impl HttpTransport {
    /// A transport signing with `jwt_secret` as server `me`, waiting `timeout` per call.
    pub fn new(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        jwt_secret: Option<&[u8]>,
        me: &str,
        timeout: Duration,
    ) -> HttpTransport {
        HttpTransport {
            store,
            layout,
            peers: Peers::new(jwt_secret, me, timeout),
            long_peers: Peers::new(jwt_secret, me, LONG_CALL_TIMEOUT),
            endpoints: Mutex::new(HashMap::new()),
        }
    }

    fn endpoint(&self, server: &str) -> Result<String, PeerError> {
        if let Some(known) = self.endpoints.lock().get(server) {
            return Ok(known.clone());
        }
        let entry = self
            .store
            .get(&self.layout.server_registered(server))
            .map_err(|e| PeerError::NotSent(e.to_string()))?
            .ok_or_else(|| PeerError::NotSent(format!("server {server} is not registered")))?;
        let record: ServerRecord = decode(&entry.value)
            .ok_or_else(|| PeerError::NotSent(format!("server {server}'s record is unreadable")))?;
        self.endpoints
            .lock()
            .insert(server.to_owned(), record.endpoint.clone());
        Ok(record.endpoint)
    }
}

impl Transport for HttpTransport {
    fn call(
        &self,
        server: &str,
        request: InternalRequest,
        long: bool,
    ) -> Result<InternalReply, PeerError> {
        let endpoint = self.endpoint(server)?;
        let method = match request.method.as_str() {
            "GET" => Method::Get,
            "PUT" => Method::Put,
            "DELETE" => Method::Delete,
            _ => Method::Post,
        };
        let mut path = format!("/_api/replication/{}", request.path.join("/"));
        for (i, (name, value)) in request.query.iter().enumerate() {
            path.push(if i == 0 { '?' } else { '&' });
            path.push_str(&query_escape(name));
            path.push('=');
            path.push_str(&query_escape(value));
        }
        let peer_request = PeerRequest {
            method,
            database: &request.database,
            path: &path,
            body: (!request.body.is_empty()).then_some(request.body.as_slice()),
            trx: None,
        };
        let peers = if long { &self.long_peers } else { &self.peers };
        match peers.send(&endpoint, &peer_request) {
            Ok(reply) => Ok(InternalReply {
                status: reply.status,
                body: reply.body,
            }),
            Err(error) => {
                self.endpoints.lock().remove(server);
                Err(error)
            }
        }
    }
}

/// Percent-encodes everything but unreserved characters.
fn query_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Internal requests to DB servers of the same process (tests).
#[derive(Default)]
pub struct LocalTransport {
    servers: RwLock<HashMap<String, Weak<DbServer>>>,
    cut: Mutex<HashSet<String>>,
}

impl LocalTransport {
    /// An empty transport: register each server once started.
    pub fn new() -> Arc<LocalTransport> {
        Arc::new(LocalTransport::default())
    }

    /// Makes `server` reachable under its id.
    pub fn register(&self, server: &Arc<DbServer>) {
        self.servers
            .write()
            .insert(server.server_id(), Arc::downgrade(server));
    }

    /// Cuts `server` off (true) or reconnects it (false): a cut server gets no requests.
    pub fn set_cut(&self, server: &str, cut: bool) {
        let mut set = self.cut.lock();
        if cut {
            set.insert(server.to_owned());
        } else {
            set.remove(server);
        }
    }
}

impl Transport for LocalTransport {
    fn call(
        &self,
        server: &str,
        request: InternalRequest,
        _long: bool,
    ) -> Result<InternalReply, PeerError> {
        if self.cut.lock().contains(server) {
            return Err(PeerError::NotSent(format!("{server} is cut off")));
        }
        let target = self
            .servers
            .read()
            .get(server)
            .and_then(Weak::upgrade)
            .ok_or_else(|| PeerError::NotSent(format!("{server} is not running")))?;
        Ok(match target.internal(request) {
            Ok(reply) => reply,
            Err(error) => error_reply(&error),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{encode, Role};
    use quince_meta::MemoryStore;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn http_calls_find_the_endpoint_and_sign_the_request() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut buffer = [0u8; 4096];
            let n = socket.read(&mut buffer).unwrap();
            socket
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 17\r\n\r\n{\"errorNum\":1491}")
                .unwrap();
            String::from_utf8_lossy(&buffer[..n]).to_string()
        });
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let layout = Layout::default();
        let record = ServerRecord {
            id: "PRMR-b".into(),
            role: Role::Dbserver,
            endpoint: format!("tcp://{addr}"),
            short_name: "DBServer0002".into(),
            version: "3.12.4".into(),
            engine: "quince".into(),
        };
        store
            .put(&layout.server_registered("PRMR-b"), &encode(&record))
            .unwrap();
        let transport = HttpTransport::new(
            store,
            layout,
            Some(b"secret"),
            "PRMR-a",
            Duration::from_secs(5),
        );
        let request = InternalRequest {
            method: "GET".into(),
            database: "shop".into(),
            path: vec!["keys".into()],
            query: vec![
                ("shard".into(), "s 1".into()),
                ("bucket".into(), "0".into()),
            ],
            body: Vec::new(),
        };
        let reply = transport.call("PRMR-b", request.clone(), false).unwrap();
        assert_eq!(reply.status, 503);
        assert_eq!(
            super::super::wire::reply_error(reply.status, &reply.body).num(),
            1491
        );
        let seen = server.join().unwrap();
        assert!(
            seen.starts_with(
                "GET /_db/shop/_api/replication/keys?shard=s%201&bucket=0 HTTP/1.1\r\n"
            ),
            "{seen}"
        );
        assert!(seen.contains("Authorization: bearer ey"), "{seen}");
        let unknown = transport.call("PRMR-z", request, false).unwrap_err();
        assert!(matches!(unknown, PeerError::NotSent(_)), "{unknown}");
    }
}
