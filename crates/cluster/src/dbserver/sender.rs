//! [`Sender`]: ships one shard's replicated operations from its leader to one follower, in
//! order and in batches, and [`Join`], the acknowledgement of one write that waits for every
//! sender it was queued to.
//!
//! What it is: a queue and a thread per (shard, follower). The leader's write path queues each
//! write's operations under the shard's order lock ([`Sender::enqueue`]); the thread takes
//! whatever is queued (at most [`BATCH_OPS`] operations, more only to keep a stream
//! transaction's operations together), posts it to the follower's
//! `/_api/replication/apply` stamped with the leader's id and epoch, and on success
//! acknowledges every write of the batch. When the follower fails (an error reply, no reply
//! within the follower timeout, unreachable) or the Plan no longer lists it, the sender removes
//! it from the in-sync set in the store first ([`in_sync::shrink`]) and only then acknowledges
//! the waiting writes without it; from then on it is closed (writes do not wait for it) and the
//! follower must catch up again. When the removal cannot be committed, every waiting write
//! fails (1491 when this server no longer leads, 1478 when the store failed), as does every
//! write queued until a later removal succeeds.
//!
//! What it is not: the catch-up (`catch_up.rs`) or the decision to write (`leader.rs`).
//!
//! Invariants: operations reach the follower in queue order, and a batch is sent only after the
//! previous one was applied; a write is acknowledged only when every sender it was queued to
//! acknowledged it, and a sender acknowledges without its follower only after the follower left
//! the in-sync set in the store; `grow` and `shrink` of one follower are ordered by
//! [`Sender::membership`], so a follower that failed during its join is never added afterwards.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use quince_errors::{ArangoError, Result};
use quince_ops::{Completer, InternalRequest};

use super::wire::{apply_body_text, reply_error, ApplyBody};
use super::Ctx;
use crate::in_sync::{self, InSyncError, ShardId};
use crate::layout::ServerId;

/// The most operations one apply request carries (unless one stream transaction's operations
/// are more: they always travel together).
pub const BATCH_OPS: usize = 1000;

/// The acknowledgement of one write: fires its completer once every part reported.
pub struct Join {
    remaining: AtomicUsize,
    failure: Mutex<Option<ArangoError>>,
    completer: Mutex<Option<Completer>>,
}

impl Join {
    /// A join of `parts` reports that answers `completer`.
    pub fn new(parts: usize, completer: Completer) -> Arc<Join> {
        Arc::new(Join {
            remaining: AtomicUsize::new(parts),
            failure: Mutex::new(None),
            completer: Mutex::new(Some(completer)),
        })
    }

    /// One part's report; the last one answers the write (with the first error, if any).
    pub fn done(&self, result: Result<()>) {
        if let Err(error) = result {
            self.failure.lock().get_or_insert(error);
        }
        if self.remaining.fetch_sub(1, Ordering::AcqRel) == 1 {
            let failure = self.failure.lock().take();
            if let Some(completer) = self.completer.lock().take() {
                completer.complete(failure.map_or(Ok(()), Err));
            }
        }
    }
}

/// One queued operation.
pub struct Entry {
    /// Its wire form as JSON text (`wire::encode_op_text`; shared by the senders of one
    /// write).
    pub op: Arc<Vec<u8>>,
    /// The write asked for `waitForSync`.
    pub sync: bool,
    /// The write's acknowledgement, on its last operation (none in asynchronous mode).
    pub ack: Option<Arc<Join>>,
    /// The next entry belongs to the same batch (a stream transaction's operations travel in
    /// one apply request, so that the follower applies them together).
    pub joined: bool,
}

enum Status {
    /// Sending.
    Open,
    /// The follower left the in-sync set: writes do not wait for it.
    Closed,
    /// The follower failed and could not be removed: writes fail.
    Failing(ArangoError),
}

struct Queue {
    entries: VecDeque<Entry>,
    status: Status,
    stop: bool,
}

/// The sender of one shard to one follower (see the module documentation).
pub struct Sender {
    /// The follower.
    pub follower: ServerId,
    shard: ShardId,
    epoch: u64,
    ctx: Arc<Ctx>,
    in_sync: Arc<Mutex<Vec<ServerId>>>,
    queue: Mutex<Queue>,
    wake: Condvar,
    /// Held around `grow` and `shrink` of this follower.
    pub membership: Mutex<()>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Sender {
    /// Starts the sender of `shard` (led at `epoch`) to `follower`. `in_sync` is the leader's
    /// copy of the in-sync set, updated with every change this sender commits.
    pub fn start(
        ctx: Arc<Ctx>,
        shard: ShardId,
        epoch: u64,
        follower: &str,
        in_sync: Arc<Mutex<Vec<ServerId>>>,
    ) -> Arc<Sender> {
        let sender = Arc::new(Sender {
            follower: follower.to_owned(),
            shard,
            epoch,
            ctx,
            in_sync,
            queue: Mutex::new(Queue {
                entries: VecDeque::new(),
                status: Status::Open,
                stop: false,
            }),
            wake: Condvar::new(),
            membership: Mutex::new(()),
            thread: Mutex::new(None),
        });
        let running = Arc::clone(&sender);
        let thread = std::thread::Builder::new()
            .name(format!("shard-sender-{}", sender.shard.shard))
            .spawn(move || running.run())
            .expect("spawning a shard sender");
        *sender.thread.lock() = Some(thread);
        sender
    }

    /// Queues a write's operations (its acknowledgement rides on the last one). A closed
    /// sender acknowledges at once; a failing one fails the write at once.
    pub fn enqueue(&self, entries: impl IntoIterator<Item = Entry>) {
        let mut queue = self.queue.lock();
        match &queue.status {
            Status::Open if !queue.stop => {
                queue.entries.extend(entries);
                drop(queue);
                self.wake.notify_all();
            }
            Status::Open => fail_all(entries, &resigned()),
            Status::Closed => ack_all(entries),
            Status::Failing(error) => {
                let error = error.clone();
                drop(queue);
                fail_all(entries, &error);
            }
        }
    }

    /// True once the follower left the in-sync set through this sender.
    pub fn is_closed(&self) -> bool {
        matches!(self.queue.lock().status, Status::Closed)
    }

    /// True while the sender sends.
    pub fn is_open(&self) -> bool {
        let queue = self.queue.lock();
        matches!(queue.status, Status::Open) && !queue.stop
    }

    /// Removes the follower from the in-sync set and closes the sender (the Plan dropped the
    /// follower, or a join replaces the sender). Waiting writes are acknowledged once the
    /// removal is committed, failed otherwise.
    pub fn retire(&self) {
        let waiting: Vec<Entry> = self.queue.lock().entries.drain(..).collect();
        self.leave(waiting);
    }

    /// Stops the thread: every waiting and later write fails with 1491 (the leader resigned).
    pub fn stop(&self) {
        let waiting: Vec<Entry> = {
            let mut queue = self.queue.lock();
            queue.stop = true;
            if matches!(queue.status, Status::Open) {
                queue.status = Status::Failing(resigned());
            }
            queue.entries.drain(..).collect()
        };
        self.wake.notify_all();
        fail_all(waiting, &resigned());
        let thread = self.thread.lock().take();
        if let Some(thread) = thread {
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }

    fn run(self: Arc<Self>) {
        loop {
            let batch: Vec<Entry> = {
                let mut queue = self.queue.lock();
                while queue.entries.is_empty() && !queue.stop {
                    self.wake.wait(&mut queue);
                }
                if queue.stop || !matches!(queue.status, Status::Open) {
                    return;
                }
                let mut n = queue.entries.len().min(BATCH_OPS);
                // Never split a transaction: take the rest of one whose start is taken.
                while n < queue.entries.len() && queue.entries[n - 1].joined {
                    n += 1;
                }
                queue.entries.drain(..n).collect()
            };
            match self.send(&batch) {
                Ok(()) => ack_all(batch),
                Err(error) => {
                    tracing::warn!(
                        event = "cluster.follower_failed",
                        shard = %self.shard.shard,
                        follower = %self.follower,
                        "{error}"
                    );
                    self.leave(batch);
                    return;
                }
            }
        }
    }

    /// Posts one batch (an [`super::wire::ApplyBody`], its text spliced from the operations'
    /// texts, with the facts the follower's api needs to run a small batch on its connection's
    /// task in the query: [`apply_facts`]); an error reply or no reply is the follower's
    /// failure.
    fn send(&self, batch: &[Entry]) -> Result<()> {
        let wait_for_sync = batch.iter().any(|e| e.sync);
        let body = apply_body_text(
            &self.shard.shard,
            self.shard.cid,
            self.epoch,
            &self.ctx.me,
            wait_for_sync,
            batch.iter().map(|e| e.op.as_slice()),
        );
        let mut request = apply_text_request(&self.shard.db, body);
        request.query = apply_facts(&self.shard.shard, self.epoch, batch.len(), wait_for_sync);
        self.ctx.call(&self.follower, request, false).map(|_| ())
    }

    /// Takes the follower out of the in-sync set, then answers `waiting` (and what is queued
    /// meanwhile): acknowledged once the removal is committed, failed while it cannot be. A
    /// store error is retried with backoff until the removal is made or the sender stops.
    fn leave(&self, waiting: Vec<Entry>) {
        let mut waiting = waiting;
        let mut backoff = Duration::from_millis(50);
        loop {
            let outcome = {
                let _membership = self.membership.lock();
                in_sync::shrink(
                    &*self.ctx.store,
                    &self.ctx.layout,
                    &self.shard,
                    &self.ctx.me,
                    self.epoch,
                    &self.follower,
                )
            };
            let error = match outcome {
                Ok(current) => {
                    *self.in_sync.lock() = current.in_sync;
                    let queued: Vec<Entry> = {
                        let mut queue = self.queue.lock();
                        queue.status = Status::Closed;
                        queue.entries.drain(..).collect()
                    };
                    ack_all(waiting);
                    ack_all(queued);
                    return;
                }
                Err(InSyncError::Resigned) => resigned(),
                Err(InSyncError::Store(error)) => ArangoError::with_message(
                    quince_errors::CLUSTER_BACKEND_UNAVAILABLE,
                    format!("cannot remove a failed follower from the in-sync set: {error}"),
                ),
            };
            let queued: Vec<Entry> = {
                let mut queue = self.queue.lock();
                queue.status = Status::Failing(error.clone());
                queue.entries.drain(..).collect()
            };
            fail_all(std::mem::take(&mut waiting), &error);
            fail_all(queued, &error);
            if error.is(quince_errors::CLUSTER_SHARD_LEADER_RESIGNED) {
                return;
            }
            let mut queue = self.queue.lock();
            if queue.stop {
                return;
            }
            self.wake.wait_for(&mut queue, backoff);
            if queue.stop {
                return;
            }
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        self.queue.lock().stop = true;
        self.wake.notify_all();
    }
}

/// 1491: this server no longer leads the shard at the epoch the write was made in.
pub fn resigned() -> ArangoError {
    ArangoError::new(quince_errors::CLUSTER_SHARD_LEADER_RESIGNED)
}

fn ack_all(entries: impl IntoIterator<Item = Entry>) {
    for entry in entries {
        if let Some(ack) = entry.ack {
            ack.done(Ok(()));
        }
    }
}

fn fail_all(entries: impl IntoIterator<Item = Entry>, error: &ArangoError) {
    for entry in entries {
        if let Some(ack) = entry.ack {
            ack.done(Err(error.clone()));
        }
    }
}

/// The request of an apply to `follower`, its reply turned into a result.
pub fn apply_request(database: &str, body: &ApplyBody) -> InternalRequest {
    apply_text_request(
        database,
        serde_json::to_vec(body).expect("JSON values serialize"),
    )
}

/// The query of an apply request built by a sender: `shard`, `epoch`, `ops` (how many) and
/// `waitForSync`, as in its body (`follower::apply_is_quick` reads them).
pub fn apply_facts(
    shard: &str,
    epoch: u64,
    ops: usize,
    wait_for_sync: bool,
) -> Vec<(String, String)> {
    vec![
        ("shard".into(), shard.to_owned()),
        ("epoch".into(), epoch.to_string()),
        ("ops".into(), ops.to_string()),
        ("waitForSync".into(), wait_for_sync.to_string()),
    ]
}

/// [`apply_request`] of a body already written as text.
pub fn apply_text_request(database: &str, body: Vec<u8>) -> InternalRequest {
    InternalRequest {
        method: "POST".into(),
        database: database.to_owned(),
        path: vec!["apply".into()],
        query: Vec::new(),
        body,
    }
}

/// The result of a reply: `Ok` for 2xx, the carried error otherwise.
pub fn reply_result(status: u16, body: &[u8]) -> Result<()> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(reply_error(status, body))
    }
}
