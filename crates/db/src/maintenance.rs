//! [`Maintenance`]: the one background thread that keeps every collection's store in shape.
//!
//! What it is: a thread named `quince-maintenance` that, about every
//! [`MAINTENANCE_INTERVAL`], aborts the stream transactions idle past their timeout and calls
//! `Store::maintain` (background fsync of unsynced writes, compaction when due) on every
//! collection of every database; and, every `ttl_frequency` (`--ttl.frequency`), removes the
//! documents the collections' ttl indexes say expired (`index/ttl.rs`), through the write
//! path, in bounded batches.
//!
//! What it is not: a scheduler for client work; it never runs a request.
//!
//! Invariants: at most one maintenance thread per catalog; after [`Maintenance::stop`] returns
//! the thread has exited and touches no store any more.

use std::collections::{BTreeMap, HashSet};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::RwLock;
use quince_errors::{ArangoError, Result, INTERNAL};
use quince_storage::StorageError;

use crate::database::Database;

/// How often every store gets its upkeep.
pub(crate) const MAINTENANCE_INTERVAL: Duration = Duration::from_millis(100);

/// The running maintenance thread.
pub(crate) struct Maintenance {
    /// Dropping or sending on it wakes the thread and makes it exit.
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Maintenance {
    /// Starts the thread over the catalog's databases.
    pub(crate) fn start(
        databases: Arc<RwLock<BTreeMap<String, Arc<Database>>>>,
        ttl_frequency: Duration,
    ) -> Result<Maintenance> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("quince-maintenance".into())
            .spawn(move || run(&databases, &stopped, ttl_frequency))
            .map_err(|e| {
                ArangoError::with_message(INTERNAL, format!("cannot start maintenance: {e}"))
            })?;
        Ok(Maintenance { stop, thread })
    }

    /// Stops the thread and waits for it.
    pub(crate) fn stop(self) {
        // The thread may already have exited; then there is nobody to tell.
        let _ = self.stop.send(());
        if self.thread.join().is_err() {
            tracing::error!(event = "maintenance.panicked");
        }
    }
}

fn run(
    databases: &RwLock<BTreeMap<String, Arc<Database>>>,
    stopped: &mpsc::Receiver<()>,
    ttl_frequency: Duration,
) {
    // Collections whose failure was logged already: a poisoned store fails every round, and
    // one line per collection says enough.
    let mut reported: HashSet<u64> = HashSet::new();
    let mut ttl_last = Instant::now();
    loop {
        match stopped.recv_timeout(MAINTENANCE_INTERVAL) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let databases: Vec<Arc<Database>> = databases.read().values().cloned().collect();
        for database in &databases {
            database.transactions().expire_idle();
        }
        let collections: Vec<_> = databases
            .iter()
            .flat_map(|database| database.collections())
            .collect();
        if ttl_last.elapsed() >= ttl_frequency {
            ttl_last = Instant::now();
            expire(&collections);
        }
        for collection in collections {
            match collection.store.maintain() {
                Ok(()) => {
                    reported.remove(&collection.id());
                }
                // A store closed by a concurrent drop or shutdown has nothing left to maintain.
                Err(StorageError::ShuttingDown | StorageError::Deleted) => {}
                Err(e) => {
                    if reported.insert(collection.id()) {
                        tracing::warn!(
                            event = "maintenance.failed",
                            collection = %collection.name(),
                            error = %e
                        );
                    }
                }
            }
        }
    }
}

/// One ttl pass over `collections` (errors are logged: the next pass tries again).
fn expire(collections: &[Arc<crate::Collection>]) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    for collection in collections {
        match collection.expire_ttl(now) {
            Ok(0) => {}
            Ok(removed) => {
                tracing::debug!(event = "ttl.removed", collection = %collection.name(), removed);
            }
            Err(e) => {
                tracing::warn!(event = "ttl.failed", collection = %collection.name(), error = %e);
            }
        }
    }
}
