//! The DB server role: a server that holds shards (local collections named `s<id>`) and
//! replicates them, leader to followers, as `docs/cluster.md` ("Writes and replication",
//! "Catching up") describes.
//!
//! What it is: [`start`] makes a [`DbServer`] over the local engine: a maintenance thread makes
//! the local databases, shards and indexes match `Plan/` for this server and takes up or gives
//! up shard leaderships (`maintenance.rs`); [`DbServer::engine`] is the engine the api serves
//! (the local one, shard writes replicated: `shard_engine.rs`, `leader.rs`, `sender.rs`); and
//! [`DbServer`] answers the internal requests of its peers (`/_api/replication/...`:
//! `follower.rs`, `catch_up.rs`) as [`ClusterOps::internal`]. Its parts:
//!
//! | module | what |
//! |---|---|
//! | `plan.rs` | the copy of `Plan/` |
//! | `maintenance.rs` | local state follows the Plan; leaderships; follower catch-up loops |
//! | `shard_engine.rs` | the engine the api serves |
//! | `leader.rs` | a led shard: order lock, senders, the replicated write |
//! | `sender.rs` | one follower's queue and thread; write acknowledgements |
//! | `transaction.rs` | stream transactions that write led shards, replicated at commit |
//! | `follower.rs` | `apply`, `keys`, `documents`: a follower's endpoints |
//! | `catch_up.rs` | `join`: bringing a follower in sync |
//! | `transport.rs` | HTTP or in-process calls between DB servers |
//! | `wire.rs` | the JSON bodies |
//!
//! What it is not: the coordinator (which routes client requests to shard leaders), or
//! supervision (which fails leaders over).
//!
//! Invariants: only `in_sync.rs` changes a shard's `Current` key; a write to a shard is
//! acknowledged only as `leader.rs` says; a follower applies only what the Plan's leader at the
//! Plan's epoch sends it.

mod catch_up;
mod follower;
mod forward;
mod leader;
mod maintenance;
mod plan;
mod sender;
mod shard_engine;
mod transaction;
pub mod transport;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex, RwLock};
use quince_errors::{ArangoError, Result, CLUSTER_BACKEND_UNAVAILABLE, HTTP_NOT_FOUND};
use quince_meta::MetaStore;
use quince_ops::{
    ClusterOps, Engine, InternalReply, InternalRequest, ServerRole, TransactionOps,
    TransactionStatus,
};

use crate::layout::{Layout, ReplicationMode, ServerId};
use crate::node::{ClusterConfig, Node};
pub use plan::{is_shard_name, PlanView, PlannedShard};
pub use transport::{HttpTransport, LocalTransport, Transport};

use leader::LeaderShard;
use transaction::ShardTransaction;

/// What every part of the role shares: who this server is, the store, the transport.
pub struct Ctx {
    /// This server's id.
    pub me: ServerId,
    /// The metadata store.
    pub store: Arc<dyn MetaStore>,
    /// The agency layout.
    pub layout: Layout,
    /// The configuration.
    pub config: ClusterConfig,
    /// Requests to other DB servers.
    pub transport: Arc<dyn Transport>,
}

impl Ctx {
    /// Sends an internal request to `server`: the body of a 2xx reply, or the error (a reply's
    /// own, or 1478 when no reply came).
    pub fn call(&self, server: &str, request: InternalRequest, long: bool) -> Result<Vec<u8>> {
        match self.transport.call(server, request, long) {
            Ok(reply) => {
                sender::reply_result(reply.status, &reply.body)?;
                Ok(reply.body)
            }
            Err(error) => Err(ArangoError::with_message(
                CLUSTER_BACKEND_UNAVAILABLE,
                format!("server {server} did not answer: {error}"),
            )),
        }
    }
}

/// The DB server role of this process (see the module documentation).
pub struct DbServer {
    node: Arc<Node>,
    local: Arc<dyn Engine>,
    ctx: Arc<Ctx>,
    engine: Mutex<Option<Arc<dyn Engine>>>,
    view: RwLock<Arc<PlanView>>,
    leaders: RwLock<HashMap<String, Arc<LeaderShard>>>,
    /// The running stream transactions that write shards, by id.
    transactions: Mutex<HashMap<String, Arc<ShardTransaction>>>,
    catch_ups: Mutex<HashMap<String, JoinHandle<()>>>,
    /// The Plan properties last applied to each local shard.
    applied_properties: Mutex<HashMap<String, serde_json::Value>>,
    stopped: Mutex<bool>,
    wake: Condvar,
    maintenance: Mutex<Option<JoinHandle<()>>>,
    /// How many shard order locks are held across requests to other servers now (a join's
    /// last copy pass): see [`DbServer::holds_order_on_network`].
    order_holds_on_network: AtomicUsize,
}

/// One order lock held across requests to other servers, counted while it lives
/// ([`DbServer::hold_order_on_network`]).
pub struct OrderHoldOnNetwork<'a>(&'a DbServer);

impl Drop for OrderHoldOnNetwork<'_> {
    fn drop(&mut self) {
        self.0.order_holds_on_network.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Starts the DB server role of `node` over `local`: replication between DB servers over HTTP,
/// signed with `jwt_secret` (none: a cluster without authentication).
pub fn start(
    node: Arc<Node>,
    local: Arc<dyn Engine>,
    jwt_secret: Option<Vec<u8>>,
) -> Result<Arc<DbServer>, ArangoError> {
    let transport = Arc::new(HttpTransport::new(
        Arc::clone(&node.store),
        node.layout().clone(),
        jwt_secret.as_deref(),
        &node.id,
        node.config.follower_timeout,
    ));
    start_with_transport(node, local, transport)
}

/// [`start`] with another transport between DB servers (tests run several in one process with
/// a [`LocalTransport`]).
pub fn start_with_transport(
    node: Arc<Node>,
    local: Arc<dyn Engine>,
    transport: Arc<dyn Transport>,
) -> Result<Arc<DbServer>, ArangoError> {
    let ctx = Arc::new(Ctx {
        me: node.id.clone(),
        store: Arc::clone(&node.store),
        layout: node.layout().clone(),
        config: node.config.clone(),
        transport,
    });
    let server = Arc::new(DbServer {
        node,
        local,
        ctx,
        engine: Mutex::new(None),
        view: RwLock::new(Arc::new(PlanView::default())),
        leaders: RwLock::new(HashMap::new()),
        transactions: Mutex::new(HashMap::new()),
        catch_ups: Mutex::new(HashMap::new()),
        applied_properties: Mutex::new(HashMap::new()),
        stopped: Mutex::new(false),
        wake: Condvar::new(),
        maintenance: Mutex::new(None),
        order_holds_on_network: AtomicUsize::new(0),
    });
    let engine: Arc<dyn Engine> = Arc::new(shard_engine::ShardEngine::new(
        Arc::clone(&server.local),
        Arc::downgrade(&server),
    ));
    *server.engine.lock() = Some(engine);
    maintenance::start(&server)?;
    Ok(server)
}

impl DbServer {
    /// The engine the api serves on this server: the local engine, shard writes replicated.
    pub fn engine(self: &Arc<Self>) -> Arc<dyn Engine> {
        self.engine
            .lock()
            .clone()
            .expect("the engine is set at start")
    }

    /// The local engine, unwrapped.
    pub fn local(&self) -> &Arc<dyn Engine> {
        &self.local
    }

    /// The cluster member.
    pub fn node(&self) -> &Arc<Node> {
        &self.node
    }

    /// Counts, until the answer is dropped, a shard order lock held (or about to be) across
    /// requests to other servers.
    pub fn hold_order_on_network(&self) -> OrderHoldOnNetwork<'_> {
        self.order_holds_on_network.fetch_add(1, Ordering::AcqRel);
        OrderHoldOnNetwork(self)
    }

    /// True while some shard's order lock is held across requests to other servers (a
    /// follower's last catch-up pass): a write of that shard then waits for the network, so
    /// the served databases say their calls may block on it (`blocks_on_network`), and the api
    /// runs their document requests on its blocking pool rather than on runtime workers.
    pub fn holds_order_on_network(&self) -> bool {
        self.order_holds_on_network.load(Ordering::Acquire) > 0
    }

    /// The Plan as this server last read it.
    pub fn plan(&self) -> Arc<PlanView> {
        Arc::clone(&self.view.read())
    }

    /// Stops maintenance and every sender (writes still waiting fail with 1491); catch-ups end
    /// at their next step. Idempotent. Does not leave the cluster (the binary calls [`Node::leave`]).
    pub fn stop(&self) {
        {
            let mut stopped = self.stopped.lock();
            if *stopped {
                return;
            }
            *stopped = true;
        }
        self.wake.notify_all();
        if let Some(thread) = self.maintenance.lock().take() {
            let _ = thread.join();
        }
        // Catch-up threads are not waited for (a join may take minutes): each ends at its
        // next step, seeing the stop.
        self.catch_ups.lock().clear();
        let leaders: Vec<Arc<LeaderShard>> = self.leaders.write().drain().map(|(_, l)| l).collect();
        for leader in leaders {
            leader.stop();
        }
    }

    /// True once [`DbServer::stop`] was called.
    fn is_stopped(&self) -> bool {
        *self.stopped.lock()
    }

    /// Waits up to `timeout` for a stop; true when stopped.
    fn wait_stop(&self, timeout: std::time::Duration) -> bool {
        let mut stopped = self.stopped.lock();
        if !*stopped {
            self.wake.wait_for(&mut stopped, timeout);
        }
        *stopped
    }

    /// The shard `shard` of `database` when this server leads it at the Plan's epoch, with
    /// its collection's replication mode and write concern.
    fn leading(
        &self,
        database: &str,
        shard: &str,
    ) -> Option<(Arc<LeaderShard>, ReplicationMode, u32)> {
        let view = self.plan();
        let planned = view.shard(shard)?;
        if planned.id.db != database || planned.plan.leader != self.ctx.me {
            return None;
        }
        let leader = self.leaders.read().get(shard).cloned()?;
        if leader.epoch != planned.plan.epoch {
            return None;
        }
        let collection = view.collection_of(&planned.id)?;
        Some((
            leader,
            collection.replication_mode,
            collection.write_concern,
        ))
    }

    /// Remembers a transaction that writes shards (forgetting those that ended: the local
    /// engine keeps their status).
    fn register_transaction(&self, transaction: &Arc<ShardTransaction>) {
        let mut transactions = self.transactions.lock();
        transactions.retain(|_, t| t.status() == TransactionStatus::Running);
        transactions.insert(transaction.id(), Arc::clone(transaction));
    }

    /// The running transaction `id` of `database` that writes shards, if it is one.
    fn replicated_transaction(&self, database: &str, id: &str) -> Option<Arc<dyn TransactionOps>> {
        let transactions = self.transactions.lock();
        let transaction = transactions.get(id.trim())?;
        (transaction.database == database)
            .then(|| Arc::clone(transaction) as Arc<dyn TransactionOps>)
    }

    /// Replaces the Plan view.
    fn set_plan(&self, view: PlanView) {
        *self.view.write() = Arc::new(view);
    }
}

impl ClusterOps for DbServer {
    fn role(&self) -> ServerRole {
        ServerRole::DbServer
    }

    fn server_id(&self) -> String {
        self.node.id.clone()
    }

    fn internal_is_quick(&self, request: &InternalRequest) -> bool {
        request.method == "POST"
            && request.path.len() == 1
            && request.path[0] == "apply"
            && follower::apply_is_quick(self, request)
    }

    fn internal(&self, request: InternalRequest) -> Result<InternalReply> {
        let path: Vec<&str> = request.path.iter().map(String::as_str).collect();
        let result = match (request.method.as_str(), path.as_slice()) {
            ("POST", ["apply"]) => follower::serve_apply(self, &request),
            ("GET", ["keys"]) => follower::serve_keys(self, &request),
            ("PUT", ["documents"]) => follower::serve_documents(self, &request),
            ("POST", ["join"]) => catch_up::serve_join(self, &request),
            _ => Err(ArangoError::with_message(
                HTTP_NOT_FOUND,
                format!(
                    "unknown path '/_api/replication/{}'",
                    request.path.join("/")
                ),
            )),
        };
        Ok(match result {
            Ok(body) => wire::ok_reply(&body),
            Err(error) => wire::error_reply(&error),
        })
    }
}

impl Drop for DbServer {
    fn drop(&mut self) {
        *self.stopped.lock() = true;
        self.wake.notify_all();
    }
}
