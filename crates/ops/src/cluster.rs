//! [`ClusterOps`]: what the api asks of a server that is part of a cluster, beyond its engine.
//!
//! What it is: the server's cluster role and id (`/_admin/server/role`, `/_admin/server/id`),
//! and the cluster-internal requests a DB server answers for its peers
//! ([`ClusterOps::internal`]: replication between a shard's leader and its followers), as
//! plain requests and replies. The cluster crate implements it; the binary installs it into the
//! api (`Api::install_cluster`). A single server has none.
//!
//! What it is not: the documents or collections (those stay behind [`crate::Engine`], which a
//! coordinator implements over the cluster and a DB server over its local shards), or HTTP
//! parsing (the api hands over the parts of the request it read).
//!
//! Invariants: only a superuser reaches [`ClusterOps::internal`] (the api checks); a request
//! is forwarded at most once (the coordinator that receives a forwarded request answers it
//! itself); calls may block (the api runs them on its blocking pool).

use quince_errors::{ArangoError, Result, CLUSTER_ONLY_ON_COORDINATOR};
use serde_json::Value;

/// A server's role in a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerRole {
    /// Serves clients and routes to shards.
    Coordinator,
    /// Holds shards.
    DbServer,
}

impl ServerRole {
    /// The name `/_admin/server/role` answers: `COORDINATOR` or `PRIMARY`.
    pub fn name(self) -> &'static str {
        match self {
            ServerRole::Coordinator => "COORDINATOR",
            ServerRole::DbServer => "PRIMARY",
        }
    }
}

/// A cluster-internal request, as the api read it.
#[derive(Clone, Debug)]
pub struct InternalRequest {
    /// `GET`, `POST`, `PUT`, `DELETE`.
    pub method: String,
    /// The database (`/_db/<name>/`; `_system` when absent).
    pub database: String,
    /// The path's segments after the route's prefix (`/_api/replication/` and the database
    /// prefix removed), percent-decoded.
    pub path: Vec<String>,
    /// The query parameters, decoded, in order.
    pub query: Vec<(String, String)>,
    /// The body (empty when none).
    pub body: Vec<u8>,
}

impl InternalRequest {
    /// The first value of a query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The answer to an [`InternalRequest`]: a JSON body with a status.
#[derive(Clone, Debug)]
pub struct InternalReply {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body.
    pub body: Vec<u8>,
}

/// The header that marks a request one coordinator passed to another
/// ([`ClusterOps::forward`]); such a request is answered where it arrives.
pub const FORWARDED: &str = "x-quince-forwarded";

/// The header naming the user a forwarded request acts for, honoured only from a caller that
/// holds the cluster's superuser token.
pub const FORWARDED_FOR: &str = "x-quince-forwarded-for";

/// A client's request for a cursor or a stream transaction that this coordinator does not
/// hold, as it passes it on to the other coordinators ([`ClusterOps::forward`]).
#[derive(Clone, Debug)]
pub struct ForwardedRequest {
    /// `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
    pub method: String,
    /// The database (`/_db/<name>/`).
    pub database: String,
    /// The path below `/_db/<database>`, with its query string, as the client sent it.
    pub path: String,
    /// The user the request acts for (`None`: the superuser).
    pub user: Option<String>,
    /// The client's `x-arango-trx-id`, if any.
    pub trx: Option<String>,
    /// The client's `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// The reply of the coordinator that held the cursor or transaction.
#[derive(Clone, Debug)]
pub struct ForwardedReply {
    /// The HTTP status.
    pub status: u16,
    /// Its `Content-Type`, if any.
    pub content_type: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// A server's part in a cluster (see the module documentation).
pub trait ClusterOps: Send + Sync {
    /// Coordinator or DB server.
    fn role(&self) -> ServerRole;

    /// This server's id (`CRDN-...`, `PRMR-...`).
    fn server_id(&self) -> String;

    /// Answers a cluster-internal request (`/_api/replication/...` on a DB server); an error
    /// for a path it does not serve (404) or a role that serves none.
    fn internal(&self, request: InternalRequest) -> Result<InternalReply>;

    /// True when [`ClusterOps::internal`] answers `request` quickly, without waiting on the
    /// network or for the disk (on a DB server: a small apply batch, not synced, at an epoch
    /// this server knows), so that the api may run it on the connection's task rather than
    /// on its blocking pool. Advisory: `internal` checks everything itself. False by default.
    fn internal_is_quick(&self, request: &InternalRequest) -> bool {
        let _ = request;
        false
    }

    /// `GET /_admin/cluster/health`: `{"ClusterId", "Health": {id: {...}}}` (no `error` or
    /// `code`: the api adds them).
    fn health(&self) -> Result<Value> {
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// `GET /_api/cluster/endpoints`: every coordinator's endpoint (`tcp://host:port`).
    fn coordinator_endpoints(&self) -> Result<Vec<String>> {
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// Says that this server changed a user account or permission (in `_system/_users`), so
    /// that the other coordinators reload theirs.
    fn users_changed(&self) {}

    /// Calls `reload` whenever another server changed user accounts (until the server stops).
    fn watch_users(&self, reload: Box<dyn Fn() + Send + Sync>) {
        let _ = reload;
    }

    /// `PUT /_admin/cluster/maintenance`: pauses supervision for `seconds` (`Some`), or
    /// resumes it (`None`). Answers the warning text ArangoDB sends with "on".
    fn set_maintenance(&self, seconds: Option<u64>) -> Result<Option<String>> {
        let _ = seconds;
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// `GET /_admin/cluster/maintenance/<server>`: the DB server's maintenance entry
    /// (`{"Mode": "maintenance", "Until": ...}`) while it is in maintenance.
    fn server_maintenance(&self, server: &str) -> Result<Option<Value>> {
        let _ = server;
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// `PUT /_admin/cluster/maintenance/<server>`: puts the DB server in maintenance for
    /// `seconds` (`Some`: the supervision neither fails over its shards nor replaces it), or
    /// ends it (`None`).
    fn set_server_maintenance(&self, server: &str, seconds: Option<u64>) -> Result<()> {
        let _ = (server, seconds);
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// `GET /_admin/cluster/numberOfServers`.
    fn number_of_servers(&self) -> Result<Value> {
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// `PUT /_admin/cluster/numberOfServers`: records the numbers a deployment wants.
    fn set_number_of_servers(&self, body: &Value) -> Result<()> {
        let _ = body;
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// A `GET` of `path` (`/_api/version`) on the cluster's server `server` (its id or short
    /// name), as the cluster's superuser: its reply (`/_admin/cluster/nodeVersion` and
    /// friends).
    fn server_get(&self, server: &str, path: &str) -> Result<InternalReply> {
        let _ = (server, path);
        Err(ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
    }

    /// Passes a request for a cursor or stream transaction this coordinator does not hold to
    /// the other coordinators in turn, acting for `request.user`: the reply of the one that
    /// holds it, or `None` when none does (or this server is no coordinator, the default).
    fn forward(&self, request: &ForwardedRequest) -> Result<Option<ForwardedReply>> {
        let _ = request;
        Ok(None)
    }
}
