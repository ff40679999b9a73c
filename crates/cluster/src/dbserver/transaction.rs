//! [`ShardTransaction`]: a stream transaction on a DB server that writes shards this server
//! leads, replicated at its commit (`docs/cluster.md`, "Transactions").
//!
//! What it is: a wrapper over the local engine's transaction. At its begin, this server must
//! lead every shard it declares for writing at the Plan's epoch (1496 otherwise) and, in
//! synchronous mode, hold `writeConcern` in-sync copies of each (1429). Its writes are decided
//! by the local transaction as any transaction's are, and recorded as the operations a
//! follower applies ([`ReplicatedOp`]: each written document whole, with `_key` and `_rev`;
//! each removal's key; a truncate as the removal of every key it removed). At commit, holding
//! the order lock of every shard it wrote (in name order) and after checking once more that
//! this server leads each at the epoch it began under (and the write concern), it commits
//! locally and queues each shard's operations, one per key (the key's last change, in the
//! order of first change, as the local commit applied them), to the shard's senders as one
//! batch, which a follower applies atomically. The commit answers once replication is
//! acknowledged as for a plain write (`leader.rs`, `sender.rs`): an error then means the leader
//! has the transaction but it was not acknowledged. An abort ships nothing.
//!
//! What it is not: a transaction across DB servers (the coordinator's transaction begins one
//! of these on each leader and commits them one after the other), or the local transaction
//! (isolation, locks and conflicts are `quince-db`'s).
//!
//! Invariants: one operation at a time (the recorder's lock, held from the local write to its
//! recording), so the recorded order is the transaction's; a truncate holds the shard's order
//! lock from its scan of the keys to the local removals, so no plain write slips between them;
//! the commit holds the order locks from the leadership check to the last enqueue, so the
//! followers see the leader's order of changes; a write is never recorded unless the local
//! transaction accepted it.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use quince_errors::Result;
use quince_ops::{
    Beginner, CollectionOps, CreateCollection, DatabaseOps, Durability, ReplicatedOp,
    TransactionOps, TransactionOptions, TransactionStatus, WriteKind, WriteRequest, WriteResults,
};
use serde_json::Value;

use super::forward::forward_to_local;
use super::leader::{refuse_all, replicated_ops, LeaderShard};
use super::plan::is_shard_name;
use super::shard_engine::not_leader;
use super::DbServer;
use crate::layout::ReplicationMode;

/// A stream transaction that writes led shards (see the module documentation).
pub struct ShardTransaction {
    inner: Arc<dyn TransactionOps>,
    me: Weak<ShardTransaction>,
    server: Weak<DbServer>,
    /// The database.
    pub database: String,
    wait_for_sync: bool,
    /// The leaderships it began under, by shard declared for writing.
    leaders: BTreeMap<String, Arc<LeaderShard>>,
    recorder: Mutex<Recorder>,
}

/// What a transaction wrote, per shard, in order.
#[derive(Default)]
struct Recorder {
    ops: BTreeMap<String, Vec<ReplicatedOp>>,
    /// A written shard's collection asks for `waitForSync`.
    sync: BTreeMap<String, bool>,
}

impl ShardTransaction {
    /// Begins a transaction of `local` (the local database) for `server`: checks the
    /// leadership and write concern of every shard declared for writing, then begins the local
    /// transaction.
    pub fn begin(
        server: &Arc<DbServer>,
        local: &Arc<dyn DatabaseOps>,
        options: TransactionOptions,
    ) -> Result<Arc<ShardTransaction>> {
        let database = local.name().to_owned();
        let mut leaders = BTreeMap::new();
        for shard in options.write.iter().chain(&options.exclusive) {
            if !is_shard_name(shard) {
                continue;
            }
            let (leader, mode, write_concern) = server
                .leading(&database, shard)
                .ok_or_else(|| not_leader(shard))?;
            leader.check_write_concern(mode, write_concern)?;
            leaders.insert(shard.clone(), leader);
        }
        let wait_for_sync = options.wait_for_sync;
        let inner = local.begin_transaction(options)?;
        Ok(Arc::new_cyclic(|me| ShardTransaction {
            inner,
            me: me.clone(),
            server: Arc::downgrade(server),
            database,
            wait_for_sync,
            leaders,
            recorder: Mutex::new(Recorder::default()),
        }))
    }

    /// The leadership `shard` was begun under, when this server still leads it at that
    /// epoch (with the collection's replication mode and write concern); 1496 otherwise.
    fn still_leading(
        &self,
        shard: &str,
        begun: &Arc<LeaderShard>,
    ) -> Result<(ReplicationMode, u32)> {
        let server = self.server.upgrade().ok_or_else(|| not_leader(shard))?;
        match server.leading(&self.database, shard) {
            Some((leader, mode, write_concern)) if Arc::ptr_eq(&leader, begun) => {
                Ok((mode, write_concern))
            }
            _ => Err(not_leader(shard)),
        }
    }

    fn me(&self) -> Arc<ShardTransaction> {
        self.me
            .upgrade()
            .expect("a transaction in use is referenced")
    }

    /// The local commit and the shipping of its operations (the recorder held).
    fn commit_replicated(&self, recorder: &mut Recorder) -> Result<()> {
        let written: Vec<(String, Vec<ReplicatedOp>)> = std::mem::take(&mut recorder.ops)
            .into_iter()
            .map(|(shard, ops)| (shard, one_per_key(ops)))
            .filter(|(_, ops)| !ops.is_empty())
            .collect();
        let mut held = Vec::with_capacity(written.len());
        for (shard, _) in &written {
            let leader = &self.leaders[shard];
            held.push((leader, leader.order()));
        }
        let checked: Result<Vec<ReplicationMode>> = written
            .iter()
            .zip(&held)
            .map(|((shard, _), (leader, _))| {
                let (mode, write_concern) = self.still_leading(shard, leader)?;
                leader.check_write_concern(mode, write_concern)?;
                Ok(mode)
            })
            .collect();
        let modes = match checked {
            Ok(modes) => modes,
            Err(error) => {
                drop(held);
                let _ = self.inner.abort();
                return Err(error);
            }
        };
        let local = self.inner.commit()?;
        let mut waits: Vec<Durability> = local.into_iter().collect();
        for (((shard, ops), (leader, order)), mode) in written.into_iter().zip(&held).zip(modes) {
            let sync = self.wait_for_sync || recorder.sync.get(&shard).copied().unwrap_or(false);
            waits.extend(leader.replicate_transaction(order, ops, sync, mode));
        }
        drop(held);
        let mut first_error = None;
        for wait in waits {
            if let Err(error) = wait.wait() {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// The last operation of each key, in the order of each key's first operation (the local
/// transaction keeps one change per key and commits them in that order).
fn one_per_key(ops: Vec<ReplicatedOp>) -> Vec<ReplicatedOp> {
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut out: Vec<ReplicatedOp> = Vec::with_capacity(ops.len());
    for op in ops {
        let key = match &op {
            ReplicatedOp::Put(document) => document
                .get("_key")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            ReplicatedOp::Remove(key) => key.clone(),
            // Never recorded (a truncate is recorded as removals); kept in place if it were.
            ReplicatedOp::Truncate => {
                out.push(op);
                continue;
            }
        };
        match at.get(&key) {
            Some(&index) => out[index] = op,
            None => {
                at.insert(key, out.len());
                out.push(op);
            }
        }
    }
    out
}

impl TransactionOps for ShardTransaction {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn status(&self) -> TransactionStatus {
        self.inner.status()
    }

    fn begun_by(&self) -> &Beginner {
        self.inner.begun_by()
    }

    fn database(&self) -> Arc<dyn DatabaseOps> {
        Arc::new(TrxShardDatabase {
            local: self.inner.database(),
            transaction: self.me(),
        })
    }

    fn commit(&self) -> Result<Option<Durability>> {
        let mut recorder = self.recorder.lock();
        if self.inner.status() != TransactionStatus::Running {
            // Committed: answered again; aborted: 1653.
            return self.inner.commit();
        }
        self.commit_replicated(&mut recorder).map(|()| None)
    }

    fn abort(&self) -> Result<()> {
        let mut recorder = self.recorder.lock();
        let result = self.inner.abort();
        if result.is_ok() {
            *recorder = Recorder::default();
        }
        result
    }
}

/// The database as seen from inside a [`ShardTransaction`]: the local transaction's view,
/// its shard collections recording their writes.
struct TrxShardDatabase {
    local: Arc<dyn DatabaseOps>,
    transaction: Arc<ShardTransaction>,
}

impl TrxShardDatabase {
    fn wrap(&self, collection: Arc<dyn CollectionOps>) -> Arc<dyn CollectionOps> {
        if is_shard_name(&collection.name()) {
            Arc::new(TrxShardCollection {
                local: collection,
                transaction: Arc::clone(&self.transaction),
            })
        } else {
            collection
        }
    }
}

impl DatabaseOps for TrxShardDatabase {
    fn name(&self) -> &str {
        self.local.name()
    }

    fn id(&self) -> u64 {
        self.local.id()
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        self.local
            .collections()
            .into_iter()
            .map(|c| self.wrap(c))
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        self.local.collection(name_or_id).map(|c| self.wrap(c))
    }

    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        self.local.create_collection(request)
    }

    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        self.local.drop_collection(name, is_system)
    }

    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        self.local.rename_collection(name, new_name)
    }

    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        self.local.begin_transaction(options)
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        self.local.transaction(id)
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        self.local.running_transactions()
    }
}

/// A shard collection inside a [`ShardTransaction`].
struct TrxShardCollection {
    local: Arc<dyn CollectionOps>,
    transaction: Arc<ShardTransaction>,
}

impl TrxShardCollection {
    /// The leadership the transaction began under for this shard (none: not declared for
    /// writing, and the local transaction refuses the write with 1652), checked to hold still.
    fn begun(&self, shard: &str) -> Result<Option<&Arc<LeaderShard>>> {
        match self.transaction.leaders.get(shard) {
            Some(leader) => {
                self.transaction.still_leading(shard, leader)?;
                Ok(Some(leader))
            }
            None => Ok(None),
        }
    }
}

impl CollectionOps for TrxShardCollection {
    forward_to_local!();

    fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        let name = self.local.name();
        let mut recorder = self.transaction.recorder.lock();
        let Some(leader) = self.begun(&name)? else {
            return self.local.truncate(wait_for_sync);
        };
        let _order = leader.order();
        let mut keys = Vec::new();
        self.local.scan(&mut |document| {
            if let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(&document.json) {
                if let Some(Value::String(key)) = object.get("_key") {
                    keys.push(key.clone());
                }
            }
            true
        })?;
        if let Err(error) = self.local.truncate(wait_for_sync) {
            // Some keys may be removed in the transaction and others not: what it holds is
            // no longer what was recorded, so it ends here.
            let _ = self.transaction.inner.abort();
            return Err(error);
        }
        recorder
            .ops
            .entry(name.clone())
            .or_default()
            .extend(keys.into_iter().map(ReplicatedOp::Remove));
        recorder.sync.insert(name, self.local.wait_for_sync());
        Ok(())
    }

    fn write(&self, mut request: WriteRequest) -> WriteResults {
        let name = self.local.name();
        let sync = request.options.wait_for_sync || self.local.wait_for_sync();
        let mut recorder = self.transaction.recorder.lock();
        let recording = match self.begun(&name) {
            Ok(leader) => leader.is_some(),
            Err(error) => return refuse_all(request.items.len(), error, sync),
        };
        let kind = request.kind;
        let asked_new = request.options.return_new;
        if recording && kind != WriteKind::Remove {
            request.options.return_new = true;
        }
        let mut results = self.local.write(request);
        if !recording {
            return results;
        }
        let ops = replicated_ops(&mut results, kind, asked_new);
        if !ops.is_empty() {
            recorder.ops.entry(name.clone()).or_default().extend(ops);
            recorder.sync.insert(name, self.local.wait_for_sync());
        }
        results
    }
    /// An insert of the documents' objects through [`TrxShardCollection::write`], so that the
    /// transaction records it.
    fn insert_texts(
        &self,
        documents: Vec<quince_model::object_text::ObjectText>,
        options: quince_ops::WriteOptions,
    ) -> WriteResults {
        let items = documents
            .iter()
            .map(|document| Value::Object(document.to_object()))
            .collect();
        self.write(WriteRequest::new(WriteKind::Insert, items, options))
    }
}
