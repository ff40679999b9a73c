//! [`CoordinatorTransaction`]: a stream transaction over a cluster, as a coordinator runs it
//! (`docs/cluster.md`, "Transactions"), and [`Registry`], the transactions a coordinator began.
//!
//! What it is: [`begin`] finds the leader of every shard of the declared collections in the
//! Plan view and begins one stream transaction on each leader (`POST
//! /_db/<db>/_api/transaction/begin`, the shards as its collections, in the same roles, with
//! the same `waitForSync`, `allowImplicit`, `lockTimeout` and `maxTransactionSize`), in server
//! order; when one fails, those begun are aborted and the begin answers the error. The
//! transaction's id is a cluster-wide id (`Sync/LatestID`, as generated keys), a decimal
//! number. Its database view hands out the coordinator's collections over a router bound to
//! the transaction (`transaction_routes.rs`), so every document operation, read or write,
//! reaches the leader it began on with that leader's transaction id. Commit commits each
//! leader's part (`PUT /_api/transaction/<id>`) in server order; abort aborts them all.
//!
//! What it is not: atomic across DB servers. Each leader's commit is atomic for its shards
//! (and replicated to their followers as one batch, `crate::dbserver`), but when a commit
//! fails after other leaders committed, their writes stay: the commit answers the error and the
//! transaction counts as aborted. ArangoDB documents the same for its clusters.
//!
//! Invariants: the registry is per coordinator (another coordinator answers 1655 for the id);
//! its client stream transactions share [`quince_ops::Slots`] ([`quince_ops::RUNNING_MAX`] in
//! all, a user's share, the read-only bound, the administrators' reserve), each holding its
//! slot until it is retired, while those a request opens for itself (AQL write queries) hold
//! none; it remembers [`FINISHED_KEPT`] finished ones; each transaction records who began it
//! (the api checks that against the caller); a transaction idle for longer than
//! [`IDLE_TIMEOUT`] is aborted at the next begin on this coordinator; a finished transaction
//! never changes status again; commit and abort are idempotent and the other way round is
//! 1653.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quince_client::request::Method;
use quince_errors::{
    ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND, CLUSTER_BACKEND_UNAVAILABLE,
    CLUSTER_TIMEOUT, INTERNAL, TRANSACTION_DISALLOWED_OPERATION, TRANSACTION_NESTED,
};
use quince_ops::{
    transaction_not_found, Beginner, CollectionOps, CreateCollection, DatabaseOps, Durability,
    Slots, TransactionOps, TransactionOptions, TransactionStatus,
};
use serde_json::{json, Value};

use super::catalog::CollectionEntry;
use super::collection::CoordinatorCollection;
use super::context::Context;
use super::shard_requests::{error_from_body, Router};
use super::transaction_routes::{Bound, TrxRoutes};
use crate::layout::ServerId;
use crate::peers::{PeerError, PeerReply, PeerRequest};

/// How many finished transactions a coordinator remembers for their status.
pub const FINISHED_KEPT: usize = 256;

/// A transaction idle this long is aborted (the DB servers' default idle timeout).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The transactions a coordinator began.
#[derive(Default)]
pub struct Registry {
    running: Mutex<BTreeMap<String, Arc<CoordinatorTransaction>>>,
    finished: Mutex<VecDeque<Arc<CoordinatorTransaction>>>,
    /// The slots of the client stream transactions among `running` (and of begins under way).
    slots: Mutex<Slots>,
}

impl Registry {
    fn get(&self, db: &str, id: &str) -> Result<Arc<CoordinatorTransaction>> {
        let id = id.trim();
        // The running ones' lock is let go before the finished ones' is taken (`retire` takes
        // them the other way round).
        let running = self.running.lock().get(id).cloned();
        let found = running.or_else(|| {
            self.finished
                .lock()
                .iter()
                .find(|t| t.routes.id == id)
                .cloned()
        });
        found
            .filter(|t| t.routes.db == db)
            .ok_or_else(|| transaction_not_found(id))
    }

    fn running_in(&self, db: &str) -> Vec<Arc<CoordinatorTransaction>> {
        self.running
            .lock()
            .values()
            .filter(|t| t.routes.db == db && t.status() == TransactionStatus::Running)
            .cloned()
            .collect()
    }

    /// Moves the finished ones to the remembered ones, aborting those idle too long.
    fn sweep(&self) {
        let now = Instant::now();
        let candidates: Vec<Arc<CoordinatorTransaction>> =
            self.running.lock().values().cloned().collect();
        for transaction in candidates {
            let idle = now.duration_since(*transaction.routes.last_used.lock()) > IDLE_TIMEOUT;
            if transaction.status() == TransactionStatus::Running && idle {
                if let Some(_one) = transaction.finishing.try_lock() {
                    transaction.abort_all();
                }
            }
            if transaction.status() != TransactionStatus::Running {
                self.retire(&transaction.routes.id);
            }
        }
    }

    fn retire(&self, id: &str) {
        // Locked first, so a lookup never finds the transaction in neither list.
        let mut finished = self.finished.lock();
        let Some(transaction) = self.running.lock().remove(id) else {
            return;
        };
        self.slots
            .lock()
            .give_back(&transaction.begun_by, transaction.read_only);
        if finished.len() == FINISHED_KEPT {
            finished.pop_front();
        }
        finished.push_back(transaction);
    }
}

/// One stream transaction over the cluster (see the module documentation).
pub struct CoordinatorTransaction {
    /// The transaction's own context: its router is bound to the transaction.
    ctx: Arc<Context>,
    /// Who began it.
    begun_by: Beginner,
    /// It declared no collection for writing (its slot is a read-only one).
    read_only: bool,
    routes: Arc<TrxRoutes>,
    status: AtomicU8,
    /// Held by a commit or an abort.
    finishing: Mutex<()>,
}

const RUNNING: u8 = 0;
const COMMITTED: u8 = 1;
const ABORTED: u8 = 2;

/// Begins a transaction of `db` (see the module documentation).
pub fn begin(
    ctx: &Arc<Context>,
    db: &str,
    options: TransactionOptions,
) -> Result<Arc<CoordinatorTransaction>> {
    ctx.transactions.sweep();
    let (begun_by, read_only) = (options.begun_by.clone(), options.read_only());
    ctx.transactions.slots.lock().take(&begun_by, read_only)?;
    let begun = begin_parts(ctx, db, options);
    match &begun {
        Ok(transaction) => {
            ctx.transactions
                .running
                .lock()
                .insert(transaction.routes.id.clone(), Arc::clone(transaction));
        }
        Err(_) => ctx
            .transactions
            .slots
            .lock()
            .give_back(&begun_by, read_only),
    }
    begun
}

/// Begins the parts of a transaction whose slot is taken (see the module documentation).
fn begin_parts(
    ctx: &Arc<Context>,
    db: &str,
    options: TransactionOptions,
) -> Result<Arc<CoordinatorTransaction>> {
    let catalog = ctx.cache.catalog();
    let mut shards: HashMap<String, Bound> = HashMap::new();
    // Per leader: the shards it reads, writes and writes exclusively.
    let mut per_leader: BTreeMap<ServerId, [Vec<String>; 3]> = BTreeMap::new();
    let roles = [&options.read, &options.write, &options.exclusive];
    for (role, names) in roles.iter().enumerate() {
        for name in names.iter() {
            let entry = catalog.collection(db, name).ok_or_else(|| {
                ArangoError::with_message(
                    ARANGO_DATA_SOURCE_NOT_FOUND,
                    format!("collection or view not found: {name}"),
                )
            })?;
            for shard in &entry.plan.shards {
                let plan = catalog.shard_plans.get(shard).ok_or_else(|| {
                    ArangoError::with_message(
                        CLUSTER_BACKEND_UNAVAILABLE,
                        format!("shard {shard} has no leader in the Plan"),
                    )
                })?;
                per_leader.entry(plan.leader.clone()).or_default()[role].push(shard.clone());
                shards.insert(
                    shard.clone(),
                    Bound {
                        leader: plan.leader.clone(),
                        epoch: plan.epoch,
                    },
                );
            }
        }
    }
    let id = ctx.keys.next()?.to_string();
    let mut parts: BTreeMap<ServerId, String> = BTreeMap::new();
    for (leader, [read, write, exclusive]) in &per_leader {
        let body = json!({
            "collections": {"read": read, "write": write, "exclusive": exclusive},
            "waitForSync": options.wait_for_sync,
            "allowImplicit": options.allow_implicit,
            "lockTimeout": options.lock_timeout,
            "maxTransactionSize": options.max_transaction_size,
        });
        let begun = send(
            &ctx.router,
            leader,
            Method::Post,
            db,
            "/_api/transaction/begin",
            Some(body),
        )
        .and_then(|reply| part_id(&reply));
        match begun {
            Ok(part) => {
                parts.insert(leader.clone(), part);
            }
            Err(error) => {
                ctx.router.abort_parts(db, &parts, None);
                return Err(error);
            }
        }
    }
    let routes = Arc::new(TrxRoutes::new(
        db.to_owned(),
        id.clone(),
        shards,
        parts,
        options.allow_implicit,
    ));
    let bound = Arc::new(Context {
        node: Arc::clone(&ctx.node),
        cache: Arc::clone(&ctx.cache),
        router: Router {
            cache: Arc::clone(&ctx.cache),
            transport: Arc::clone(&ctx.router.transport),
            retry_for: ctx.router.retry_for,
            trx: Some(Arc::clone(&routes)),
        },
        keys: Arc::clone(&ctx.keys),
        transactions: Arc::clone(&ctx.transactions),
        timeouts: ctx.timeouts,
    });
    Ok(Arc::new(CoordinatorTransaction {
        ctx: bound,
        routes,
        read_only: options.read_only(),
        begun_by: options.begun_by,
        status: AtomicU8::new(RUNNING),
        finishing: Mutex::new(()),
    }))
}

/// The transaction `id` this coordinator began in `db` (1655 otherwise).
pub fn find(ctx: &Context, db: &str, id: &str) -> Result<Arc<CoordinatorTransaction>> {
    ctx.transactions.get(db, id)
}

/// The running transactions of `db` this coordinator began.
pub fn running(ctx: &Context, db: &str) -> Vec<Arc<CoordinatorTransaction>> {
    ctx.transactions.running_in(db)
}

/// One request to `leader` outside any shard routing (begin, commit, abort of a part): its
/// 2xx reply, or the error (its own, 1478 when it cannot be reached, 1457 when the outcome
/// is unknown).
fn send(
    router: &Router,
    leader: &ServerId,
    method: Method,
    db: &str,
    path: &str,
    body: Option<Value>,
) -> Result<PeerReply> {
    let catalog = router.cache.catalog();
    let endpoint = catalog.endpoints.get(leader).ok_or_else(|| {
        ArangoError::with_message(
            CLUSTER_BACKEND_UNAVAILABLE,
            format!("no endpoint registered for {leader}"),
        )
    })?;
    let body = body.map(|b| serde_json::to_vec(&b).expect("JSON values serialize"));
    let outcome = router.transport.send(
        leader,
        endpoint,
        &PeerRequest {
            method,
            database: db,
            path,
            body: body.as_deref(),
            trx: None,
        },
    );
    match outcome {
        Ok(reply) if reply.status < 300 => Ok(reply),
        Ok(reply) => Err(error_from_body(reply.status, &reply.body)),
        Err(PeerError::NotSent(why)) => Err(ArangoError::with_message(
            CLUSTER_BACKEND_UNAVAILABLE,
            format!("DB server {leader} cannot be reached: {why}"),
        )),
        Err(PeerError::Unknown(why)) => Err(ArangoError::with_message(
            CLUSTER_TIMEOUT,
            format!("the outcome of the request to DB server {leader} is unknown: {why}"),
        )),
    }
}

/// The id in a begin's reply (`{"result": {"id": "…"}}`).
fn part_id(reply: &PeerReply) -> Result<String> {
    serde_json::from_slice::<Value>(&reply.body)
        .ok()
        .and_then(|v| v["result"]["id"].as_str().map(str::to_owned))
        .ok_or_else(|| {
            ArangoError::with_message(INTERNAL, "a DB server's begin answered no transaction id")
        })
}

impl CoordinatorTransaction {
    /// Aborts every part and marks the transaction aborted (the caller holds `finishing`).
    fn abort_all(&self) {
        self.ctx
            .router
            .abort_parts(&self.routes.db, &self.routes.parts, None);
        self.status.store(ABORTED, Ordering::Release);
    }

    fn finished(&self) {
        self.ctx.transactions.retire(&self.routes.id);
    }
}

impl TransactionOps for CoordinatorTransaction {
    fn id(&self) -> String {
        self.routes.id.clone()
    }

    fn status(&self) -> TransactionStatus {
        match self.status.load(Ordering::Acquire) {
            COMMITTED => TransactionStatus::Committed,
            ABORTED => TransactionStatus::Aborted,
            _ if self.routes.broken().is_some() => TransactionStatus::Aborted,
            _ => TransactionStatus::Running,
        }
    }

    fn begun_by(&self) -> &Beginner {
        &self.begun_by
    }

    fn database(&self) -> Arc<dyn DatabaseOps> {
        Arc::new(TrxDatabase {
            ctx: Arc::clone(&self.ctx),
            name: self.routes.db.clone(),
        })
    }

    fn commit(&self) -> Result<Option<Durability>> {
        let _one = self.finishing.lock();
        match self.status() {
            TransactionStatus::Committed => return Ok(None),
            TransactionStatus::Aborted => {
                let cause = self
                    .routes
                    .broken()
                    .map(|e| format!(": {}", e.message))
                    .unwrap_or_default();
                if self.status.load(Ordering::Acquire) == RUNNING {
                    // Broken: its parts were aborted already.
                    self.status.store(ABORTED, Ordering::Release);
                    self.finished();
                }
                return Err(ArangoError::with_message(
                    TRANSACTION_DISALLOWED_OPERATION,
                    format!("transaction {} was already aborted{cause}", self.routes.id),
                ));
            }
            TransactionStatus::Running => {}
        }
        let mut committed: Vec<&ServerId> = Vec::new();
        for (leader, part) in &self.routes.parts {
            let path = format!("/_api/transaction/{part}");
            let result = send(
                &self.ctx.router,
                leader,
                Method::Put,
                &self.routes.db,
                &path,
                None,
            );
            if let Err(mut error) = result {
                let done = committed.clone();
                self.ctx.router.abort_parts(
                    &self.routes.db,
                    &self.routes.parts,
                    Some(&|l: &ServerId| done.contains(&l)),
                );
                self.status.store(ABORTED, Ordering::Release);
                self.finished();
                if !committed.is_empty() {
                    error.message = format!(
                        "{} (the transaction was committed on {} of {} DB servers before)",
                        error.message,
                        committed.len(),
                        self.routes.parts.len()
                    )
                    .into();
                }
                return Err(error);
            }
            committed.push(leader);
        }
        self.status.store(COMMITTED, Ordering::Release);
        self.finished();
        Ok(None)
    }

    fn abort(&self) -> Result<()> {
        let _one = self.finishing.lock();
        match self.status.load(Ordering::Acquire) {
            ABORTED => Ok(()),
            COMMITTED => Err(ArangoError::with_message(
                TRANSACTION_DISALLOWED_OPERATION,
                format!("transaction {} was already committed", self.routes.id),
            )),
            _ => {
                if self.routes.broken().is_none() {
                    self.abort_all();
                }
                self.status.store(ABORTED, Ordering::Release);
                self.finished();
                Ok(())
            }
        }
    }
}

/// The database as seen from inside a coordinator's transaction: the coordinator's
/// collections over the transaction's router; no catalog changes (1653).
struct TrxDatabase {
    ctx: Arc<Context>,
    name: String,
}

impl TrxDatabase {
    fn handle(&self, entry: Arc<CollectionEntry>) -> Arc<dyn CollectionOps> {
        Arc::new(CoordinatorCollection::new(Arc::clone(&self.ctx), entry))
    }
}

fn disallowed(what: &str) -> ArangoError {
    ArangoError::with_message(
        TRANSACTION_DISALLOWED_OPERATION,
        format!("{what} is not allowed inside a transaction"),
    )
}

impl DatabaseOps for TrxDatabase {
    fn name(&self) -> &str {
        &self.name
    }

    fn id(&self) -> u64 {
        self.ctx
            .cache
            .catalog()
            .databases
            .get(&self.name)
            .map_or(0, |d| d.id)
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        self.ctx
            .cache
            .catalog()
            .collections_of(&self.name)
            .into_iter()
            .map(|entry| self.handle(entry))
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        self.ctx
            .cache
            .catalog()
            .collection(&self.name, name_or_id)
            .map(|entry| self.handle(entry))
            .ok_or_else(|| ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))
    }

    fn create_collection(&self, _request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Err(disallowed("creating a collection"))
    }

    fn drop_collection(&self, _name: &str, _is_system: bool) -> Result<u64> {
        Err(disallowed("dropping a collection"))
    }

    fn rename_collection(&self, _name: &str, _new: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(disallowed("renaming a collection"))
    }

    fn begin_transaction(&self, _options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Err(ArangoError::new(TRANSACTION_NESTED))
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        find(&self.ctx, &self.name, id).map(|t| t as Arc<dyn TransactionOps>)
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        running(&self.ctx, &self.name)
            .into_iter()
            .map(|t| t as Arc<dyn TransactionOps>)
            .collect()
    }

    fn blocks_on_network(&self) -> bool {
        true
    }
}
