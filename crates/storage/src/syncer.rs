//! The syncer threads: a small fixed pool, shared by every store of the process, that runs
//! group-commit rounds (`sync.rs`).
//!
//! What it is: a FIFO of stores that have waiters and [`SYNCERS`] threads named `quince-sync-N`,
//! started on first use, that take a store from the queue and run one round for it (one fsync,
//! then the callbacks). Why a shared pool rather than a thread per store, or the waiting
//! writers themselves: a writer that waits parks a thread per request (64 writers wake 64
//! threads per fsync); a thread per store costs a thread per collection, most of them idle,
//! and needs a lifecycle tied to each store. A pool of a few threads wakes one thread per
//! fsync, serves any number of stores, and still lets fsyncs of different stores (different
//! files, maybe different disks) overlap.
//!
//! What it is not: a scheduler of anything else. Rounds never take a store's writer lock.
//!
//! Invariants: a store is queued at most once at a time (its `queued` flag), so the queue is
//! bounded by the number of stores; a round that finds new waiters re-queues its store at the
//! back, so one busy store cannot starve the others; threads never exit, and hold no store
//! while idle. If no thread could be started (the OS refused), rounds run on the calling thread,
//! which then blocks for the fsync: slower, still correct.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use crate::sync::GroupCommit;

/// How many syncer threads serve the process.
pub(crate) const SYNCERS: usize = 4;

/// The stores waiting for a round.
struct Queue {
    stores: Mutex<VecDeque<Arc<GroupCommit>>>,
    ready: Condvar,
}

static QUEUE: Queue = Queue {
    stores: Mutex::new(VecDeque::new()),
    ready: Condvar::new(),
};

/// How many syncer threads started (0: rounds run inline); set on first use.
static THREADS: OnceLock<usize> = OnceLock::new();

fn threads() -> usize {
    *THREADS.get_or_init(|| {
        let mut started = 0;
        for n in 0..SYNCERS {
            let spawned = std::thread::Builder::new()
                .name(format!("quince-sync-{n}"))
                .spawn(work);
            match spawned {
                Ok(_) => started += 1,
                Err(error) => tracing::error!(event = "syncer.spawn_failed", error = %error),
            }
        }
        started
    })
}

/// Queues a round for `store` (whose `queued` flag the caller just set).
pub(crate) fn schedule(store: Arc<GroupCommit>) {
    if threads() == 0 {
        return store.round();
    }
    QUEUE.stores.lock().push_back(store);
    QUEUE.ready.notify_one();
}

/// A syncer thread's life: take a store, run its round, repeat.
fn work() {
    loop {
        let store = {
            let mut stores = QUEUE.stores.lock();
            loop {
                if let Some(store) = stores.pop_front() {
                    break store;
                }
                QUEUE.ready.wait(&mut stores);
            }
        };
        // A panicking callback must not take a syncer with it: the round already handed its
        // store back, and the callbacks it did not reach are dropped, which their waiters see
        // as an error (`WriteTicket::wait`) or a closed channel.
        let round = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.round()));
        if round.is_err() {
            tracing::error!(event = "syncer.callback_panicked");
        }
    }
}
