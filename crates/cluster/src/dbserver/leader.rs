//! [`LeaderShard`]: a shard this server leads at one epoch: its order lock, its senders (one
//! per in-sync or joining follower), its copy of the in-sync set, and the replicated write path.
//!
//! What it is: [`LeaderShard::write`] (and [`LeaderShard::insert_texts`], the same for inserts
//! of object texts) and [`LeaderShard::truncate`]. A write is refused with
//! 1429 (synchronous mode) when fewer than `writeConcern` servers are in sync; otherwise, under
//! the order lock, it is applied to the local shard (with `returnNew` forced, so that each
//! written document is known whole) and its effects are queued, in order, to every sender:
//! each written document as a put, each removal by key. The client's `returnNew` is honoured
//! afterwards (the forced one stripped). In synchronous mode the write's [`Durability`]
//! resolves once it is durable locally when it had to be (`waitForSync`) and every sender
//! acknowledged it (the follower applied it, or was removed from the in-sync set first:
//! `sender.rs`); in asynchronous mode once it is applied locally (and durable when synced).
//!
//! What it is not: the check that this server leads the shard at the Plan's epoch (the
//! [`super::DbServer`] keeps one `LeaderShard` per shard it leads at the current epoch, and
//! answers 1496 for the others), or catching a follower up (`catch_up.rs`).
//!
//! Invariants: the order lock is held from the local apply to the last enqueue, so the
//! followers see the leader's order of changes; a write is never acknowledged before every
//! member of the in-sync set applied it or left the set in the store.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};
use quince_errors::{ArangoError, Result, REPLICATION_WRITE_CONCERN_NOT_FULFILLED};
use quince_model::object_text::ObjectText;
use quince_ops::{
    CollectionOps, Durability, ReplicatedOp, WriteKind, WriteOptions, WriteRequest, WriteResults,
};
use serde_json::Value;

use super::sender::{Entry, Join, Sender};
use super::wire::encode_op_text;
use super::Ctx;
use crate::in_sync::ShardId;
use crate::layout::{ReplicationMode, ServerId};

/// What the order lock guards: the senders, by follower.
pub struct Order {
    /// One sender per follower being sent to.
    pub senders: BTreeMap<ServerId, Arc<Sender>>,
}

/// A shard this server leads (see the module documentation).
pub struct LeaderShard {
    /// The shard.
    pub id: ShardId,
    /// The epoch it is led at.
    pub epoch: u64,
    ctx: Arc<Ctx>,
    order: Mutex<Order>,
    /// The in-sync set as last committed by this leader (itself first).
    pub in_sync: Arc<Mutex<Vec<ServerId>>>,
    /// Held by a join for its whole run: one follower joins at a time.
    pub joins: Mutex<()>,
    next_order: AtomicU64,
}

impl LeaderShard {
    /// A shard led at `epoch` whose in-sync set is `in_sync` (itself alone: `maintenance.rs`
    /// removes every other member before it makes one).
    pub fn new(ctx: Arc<Ctx>, id: ShardId, epoch: u64, in_sync: Vec<ServerId>) -> LeaderShard {
        LeaderShard {
            id,
            epoch,
            ctx,
            order: Mutex::new(Order {
                senders: BTreeMap::new(),
            }),
            in_sync: Arc::new(Mutex::new(in_sync)),
            joins: Mutex::new(()),
            next_order: AtomicU64::new(1),
        }
    }

    /// Takes the order lock.
    pub fn order(&self) -> MutexGuard<'_, Order> {
        self.order.lock()
    }

    /// The shard's context.
    pub fn ctx(&self) -> &Arc<Ctx> {
        &self.ctx
    }

    /// 1429 (with the configured status) when fewer than `write_concern` servers are in sync
    /// in synchronous mode.
    pub fn check_write_concern(&self, mode: ReplicationMode, write_concern: u32) -> Result<()> {
        if mode == ReplicationMode::Asynchronous {
            return Ok(());
        }
        let in_sync = self.in_sync.lock().len();
        if in_sync < write_concern as usize {
            return Err(ArangoError::with_message(
                REPLICATION_WRITE_CONCERN_NOT_FULFILLED,
                format!(
                    "write concern not fulfilled: {in_sync} of {write_concern} copies of shard {} are in sync",
                    self.id.shard
                ),
            )
            .with_status(self.ctx.config.failed_write_concern_status));
        }
        Ok(())
    }

    /// The replicated write of `request` to `local` (see the module documentation).
    pub fn write(
        &self,
        local: &dyn CollectionOps,
        mut request: WriteRequest,
        mode: ReplicationMode,
        write_concern: u32,
    ) -> WriteResults {
        let kind = request.kind;
        let items = request.items.len();
        let options = std::mem::take(&mut request.options);
        let run = LocalWrite {
            kind,
            items,
            mode,
            write_concern,
        };
        self.write_with(local, run, options, |options| {
            request.options = options;
            local.write(request)
        })
    }

    /// The replicated insert of `documents` (bodies checked as object text) to `local`: the
    /// same as [`LeaderShard::write`] of an insert of the documents' objects, the local
    /// collection storing the texts (`CollectionOps::insert_texts`).
    pub fn insert_texts(
        &self,
        local: &dyn CollectionOps,
        documents: Vec<ObjectText>,
        options: WriteOptions,
        mode: ReplicationMode,
        write_concern: u32,
    ) -> WriteResults {
        let run = LocalWrite {
            kind: WriteKind::Insert,
            items: documents.len(),
            mode,
            write_concern,
        };
        self.write_with(local, run, options, |options| {
            local.insert_texts(documents, options)
        })
    }

    /// The replicated write `apply` makes to `local` with (its) `options`: the write concern
    /// checked, `returnNew` forced where replication needs the new documents, the local write
    /// and the enqueueing under the order lock, the client's `returnNew` honoured.
    fn write_with(
        &self,
        local: &dyn CollectionOps,
        run: LocalWrite,
        mut options: WriteOptions,
        apply: impl FnOnce(WriteOptions) -> WriteResults,
    ) -> WriteResults {
        let sync = options.wait_for_sync || local.wait_for_sync();
        if let Err(error) = self.check_write_concern(run.mode, run.write_concern) {
            return refused(run.items, error, sync);
        }
        let asked_new = options.return_new;
        if run.kind != WriteKind::Remove {
            options.return_new = true;
        }
        let order = self.order.lock();
        let mut results = apply(options);
        let ops = replicated_ops(&mut results, run.kind, asked_new);
        let durability = results.durability.take();
        results.durability = self.replicate(&order, ops, sync, run.mode, durability, false);
        drop(order);
        results
    }

    /// Truncates the local shard and every follower's copy; returns once acknowledged.
    pub fn truncate(
        &self,
        local: &dyn CollectionOps,
        wait_for_sync: bool,
        mode: ReplicationMode,
        write_concern: u32,
    ) -> Result<()> {
        self.check_write_concern(mode, write_concern)?;
        let sync = wait_for_sync || local.wait_for_sync();
        let durability = {
            let order = self.order.lock();
            local.truncate(wait_for_sync)?;
            self.replicate(
                &order,
                vec![ReplicatedOp::Truncate],
                sync,
                mode,
                None,
                false,
            )
        };
        match durability {
            Some(durability) => durability.wait(),
            None => Ok(()),
        }
    }

    /// Queues the operations of a stream transaction this server committed locally (the
    /// order lock `order` held since before the local commit) to every sender, as one batch
    /// for each follower (`sender.rs` never splits them), and answers the durability that
    /// resolves once they may be acknowledged (as [`LeaderShard::write`]'s).
    pub fn replicate_transaction(
        &self,
        order: &Order,
        ops: Vec<ReplicatedOp>,
        sync: bool,
        mode: ReplicationMode,
    ) -> Option<Durability> {
        self.replicate(order, ops, sync, mode, None, true)
    }

    /// Queues `ops` to every sender (the order lock held) and answers the durability that
    /// resolves once the write may be acknowledged: `local` (the local durability, if any)
    /// joined, in synchronous mode, with every sender's acknowledgement. `together`: the ops
    /// travel in one apply request.
    fn replicate(
        &self,
        order: &Order,
        ops: Vec<ReplicatedOp>,
        sync: bool,
        mode: ReplicationMode,
        local: Option<Durability>,
        together: bool,
    ) -> Option<Durability> {
        let senders: Vec<&Arc<Sender>> = order.senders.values().collect();
        if ops.is_empty() || senders.is_empty() {
            return local;
        }
        let wire: Vec<Arc<Vec<u8>>> = ops.iter().map(|op| Arc::new(encode_op_text(op))).collect();
        let waiting = mode == ReplicationMode::Synchronous;
        let join = waiting.then(|| {
            let parts = senders.len() + usize::from(local.is_some());
            let (durability, completer) =
                Durability::pending(self.next_order.fetch_add(1, Ordering::AcqRel));
            (durability, Join::new(parts, completer))
        });
        for sender in &senders {
            let last = wire.len() - 1;
            sender.enqueue(wire.iter().enumerate().map(|(i, op)| Entry {
                op: Arc::clone(op),
                sync,
                ack: if i == last {
                    join.as_ref().map(|(_, join)| Arc::clone(join))
                } else {
                    None
                },
                joined: together && i != last,
            }));
        }
        match join {
            Some((durability, join)) => {
                if let Some(local) = local {
                    local.on_done(move |result| join.done(result));
                }
                Some(durability)
            }
            None => local,
        }
    }

    /// Stops every sender: writes still waiting fail with 1491.
    pub fn stop(&self) {
        let senders: Vec<Arc<Sender>> = {
            let mut order = self.order.lock();
            std::mem::take(&mut order.senders).into_values().collect()
        };
        for sender in senders {
            sender.stop();
        }
    }
}

/// What a write to the local shard is, for [`LeaderShard::write_with`].
struct LocalWrite {
    kind: WriteKind,
    items: usize,
    mode: ReplicationMode,
    write_concern: u32,
}

/// Every item refused with `error`.
fn refused(items: usize, error: ArangoError, synced: bool) -> WriteResults {
    WriteResults {
        items: (0..items).map(|_| Err(error.clone())).collect(),
        durability: None,
        synced,
    }
}

/// [`refused`] for the wrapper's checks made before a [`LeaderShard`] is found.
pub fn refuse_all(items: usize, error: ArangoError, synced: bool) -> WriteResults {
    refused(items, error, synced)
}

/// What followers apply for the outcomes of a `kind` write whose request asked for the new
/// documents (`return_new`) because replication needs them: a remove per removed key, a put per
/// new document (without `_id`). The new documents stay in `results` only where the caller had
/// asked for them (`asked_new`).
pub(super) fn replicated_ops(
    results: &mut WriteResults,
    kind: WriteKind,
    asked_new: bool,
) -> Vec<ReplicatedOp> {
    let mut ops = Vec::new();
    for outcome in results.items.iter_mut().flatten() {
        if kind == WriteKind::Remove {
            ops.push(ReplicatedOp::Remove(outcome.key.clone()));
            continue;
        }
        let new = if asked_new {
            outcome.new.clone()
        } else {
            outcome.new.take()
        };
        if let Some(Value::Object(mut document)) = new {
            document.remove("_id");
            ops.push(ReplicatedOp::Put(document));
        }
    }
    ops
}
