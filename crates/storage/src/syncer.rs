//! The syncer threads: a small fixed pool, shared by every store of the process, that runs
//! group-commit rounds (`sync.rs`).
//!
//! What it is: a FIFO of stores that have waiters and [`SYNCERS`] threads named `quince-sync-N`,
//! started on first use, that take a store from the queue and run its rounds (one fsync, then
//! the callbacks; again at once on the same thread while writers joined during the fsync and no
//! other store waits). Why a shared pool rather than a thread per store, or the waiting
//! writers themselves: a writer that waits parks a thread per request (64 writers wake 64
//! threads per fsync); a thread per store costs a thread per collection, most of them idle,
//! and needs a lifecycle tied to each store. A pool of a few threads wakes one thread per
//! fsync, serves any number of stores, and still lets fsyncs of different stores (different
//! files, maybe different disks) overlap.
//!
//! What it is not: a scheduler of anything else. Rounds never take a store's writer lock.
//!
//! Invariants: a store is queued at most once at a time (its `queued` flag), so the queue is
//! bounded by the number of stores; a round that finds new waiters runs the store's next round
//! on the same thread only while the queue is empty, else re-queues the store at the back, so
//! one busy store cannot starve the others; threads never exit, and hold no store
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
        // No syncer thread: the caller runs the rounds, as many as its store needs.
        let mut again = true;
        while again {
            store.round(&mut again);
        }
        return;
    }
    QUEUE.stores.lock().push_back(store);
    QUEUE.ready.notify_one();
}

/// A syncer thread's life: take a store, run its rounds, repeat.
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
        serve(store);
    }
}

/// Runs rounds for `store` while writers keep joining during its fsyncs, on this thread: the
/// next fsync starts right after this round's callbacks, without waking another thread (on a
/// busy machine the woken thread may wait milliseconds for a CPU, with no fsync in flight).
/// When other stores wait, the store goes to the back of the queue instead, so that one busy
/// store cannot starve the others.
fn serve(store: Arc<GroupCommit>) {
    loop {
        let mut again = false;
        // A panicking callback must not take a syncer with it: the callbacks it did not reach
        // are dropped, which their waiters see as an error (`WriteTicket::wait`) or a closed
        // channel; `again` was set before the first callback ran, so the store's next round is
        // not lost.
        let round =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| store.round(&mut again)));
        if round.is_err() {
            tracing::error!(event = "syncer.callback_panicked");
        }
        if !again {
            return;
        }
        let mut stores = QUEUE.stores.lock();
        if !stores.is_empty() {
            stores.push_back(store);
            drop(stores);
            QUEUE.ready.notify_one();
            return;
        }
    }
}
