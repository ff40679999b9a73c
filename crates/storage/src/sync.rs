//! Group commit: many writers waiting for durability share one fsync.
//!
//! What it is: a coordinator over `seq` numbers. A writer that needs its record durable waits
//! until the synced `seq` reaches its own. The first waiter to find no fsync in flight becomes
//! the leader: it notes the highest `seq` written so far, fsyncs the active journal, publishes
//! that `seq` as synced and wakes everyone. Waiters whose record it covered return; the others
//! (who wrote after the leader looked) elect the next leader. One fsync per round, however many
//! writers joined it.
//!
//! What it is not: a timer. The background fsync after `sync_interval` is `Store::maintain`,
//! which uses the same path.
//!
//! Invariants: `synced` only grows and never passes a `seq` whose record was not covered by a
//! successful fsync (of the active journal, or of a journal when it was sealed); after a
//! failed fsync nothing more is acknowledged (the store is poisoned) and there is no retry.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::StorageError;
use crate::store::Store;

struct SyncState {
    /// Every record with `seq <= synced` is durable.
    synced: u64,
    /// An fsync is in flight.
    leader: bool,
    /// When the last fsync finished.
    last_sync: Instant,
}

/// The group-commit coordinator of one store.
pub struct GroupCommit {
    state: Mutex<SyncState>,
    done: Condvar,
}

impl GroupCommit {
    /// A coordinator for a store whose records up to `synced` are durable.
    pub fn new(synced: u64) -> GroupCommit {
        GroupCommit {
            state: Mutex::new(SyncState {
                synced,
                leader: false,
                last_sync: Instant::now(),
            }),
            done: Condvar::new(),
        }
    }

    /// Records that everything up to `seq` is durable (a journal was sealed with an fsync).
    pub fn covered(&self, seq: u64) {
        let mut state = self.state.lock();
        state.synced = state.synced.max(seq);
        state.last_sync = Instant::now();
        self.done.notify_all();
    }
}

impl Store {
    /// Returns once the record with `seq` is durable: leads an fsync or joins one in flight.
    pub(crate) fn wait_durable(&self, seq: u64) -> Result<(), StorageError> {
        let gc = &self.group_commit;
        let mut state = gc.state.lock();
        loop {
            if state.synced >= seq {
                return Ok(());
            }
            self.poison.check()?;
            if state.leader {
                gc.done.wait(&mut state);
                continue;
            }
            state.leader = true;
            drop(state);
            // The target first, then the journal: every record up to the target is either in
            // this journal or in one sealed (and fsynced) before it stopped being active.
            let target = self.seq_written.load(Ordering::Acquire);
            let journal = self.active.read().clone();
            let result = journal.handle.sync_data();
            self.counters.syncs.fetch_add(1, Ordering::Relaxed);
            state = gc.state.lock();
            state.leader = false;
            gc.done.notify_all();
            if let Err(e) = result {
                let path = journal.file_name().path_in(&self.dir);
                drop(state);
                return Err(self.poison.poison(StorageError::io(&path, e)));
            }
            // A failure elsewhere (a seal) may have poisoned the store while we synced; after
            // that, an fsync's success says nothing about earlier writes.
            self.poison.check()?;
            state.synced = state.synced.max(target);
            state.last_sync = Instant::now();
        }
    }

    /// True when writes are waiting for an fsync and the last one is `interval` old.
    pub(crate) fn sync_due(&self, interval: Duration) -> bool {
        let state = self.group_commit.state.lock();
        self.seq_written.load(Ordering::Acquire) > state.synced
            && !state.leader
            && state.last_sync.elapsed() >= interval
    }
}
