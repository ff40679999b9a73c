//! [`Shared`]: what every database and collection of one catalog shares.
//!
//! What it is: the file system, the data directory, the server defaults, the one hybrid
//! logical clock every `_rev` comes from, the server-wide id counter, the closed flag and the
//! event counters of metrics.
//!
//! What it is not: the registry of databases (that is the catalog) or any document state.
//!
//! Invariants: ids are handed out strictly increasing and the highest one is durable in
//! `<data>/catalog.json` before it is used, so an id is never given twice, not even after a
//! crash or to a collection created after another was dropped.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use quince_errors::{ArangoError, Result, SHUTTING_DOWN};
use quince_model::rev::Hlc;
use quince_storage::io::FileIo;
use quince_storage::{CompactionPolicy, StoreOptions};

use crate::catalog::DbConfig;
use crate::counters::Counters;
use crate::hooks::HookFactory;
use crate::params::{catalog_file, write_atomic, CatalogParams};

/// A datafile is compacted when half of it is dead...
const COMPACTION_DEAD_SHARE_MIN: f64 = 0.5;
/// ...or when this many of its bytes are dead.
const COMPACTION_DEAD_BYTES_MIN: u64 = 16 * 1024 * 1024;
/// The shortest time between two background compactions of one collection.
const COMPACTION_INTERVAL: Duration = Duration::from_secs(5);

pub(crate) struct Shared {
    /// Every metadata and data file goes through this (the OS, or a simulation in tests).
    pub io: Arc<dyn FileIo>,
    /// The data directory.
    pub data_dir: PathBuf,
    /// `journalSize` of collections created without one.
    pub default_journal_size: u64,
    /// `waitForSync` of collections created without one.
    pub default_wait_for_sync: bool,
    /// How long unsynced writes may wait for the background fsync.
    pub sync_interval: Duration,
    /// Stores with damaged files are salvaged instead of refused.
    pub salvage: bool,
    /// The clock of every `_rev`.
    pub hlc: Hlc,
    /// Makes each collection's hooks of derived state.
    pub hooks: Option<Arc<dyn HookFactory>>,
    /// How long a stream transaction may idle before it is aborted.
    pub transaction_idle_timeout: Duration,
    /// The highest id handed out (durable in `catalog.json`).
    id_last: Mutex<u64>,
    /// Set by shutdown; catalog changes are refused afterwards.
    closed: AtomicBool,
    /// Document writes, truncates and transactions, for metrics.
    pub counters: Counters,
}

impl Shared {
    /// The shared context of a catalog opened with `config`, whose files go through `io`.
    pub(crate) fn new(config: &DbConfig, io: Arc<dyn FileIo>) -> Shared {
        Shared {
            io,
            data_dir: config.data_dir.clone(),
            default_journal_size: config.default_journal_size,
            default_wait_for_sync: config.default_wait_for_sync,
            sync_interval: config.sync_interval,
            salvage: config.ignore_datafile_errors,
            hlc: Hlc::new(),
            hooks: config.hooks.clone(),
            transaction_idle_timeout: config.transaction_idle_timeout,
            id_last: Mutex::new(0),
            closed: AtomicBool::new(false),
            counters: Counters::default(),
        }
    }

    /// Makes later ids exceed `id` (an id found on disk).
    pub(crate) fn observe_id(&self, id: u64) {
        let mut last = self.id_last.lock();
        *last = (*last).max(id);
    }

    /// The highest id handed out or found on disk.
    pub(crate) fn id_last(&self) -> u64 {
        *self.id_last.lock()
    }

    /// A fresh id, durable before it is returned.
    pub(crate) fn allocate_id(&self) -> Result<u64> {
        let mut last = self.id_last.lock();
        // A closed state (replaced by a restore) hands out nothing: its ids would repeat the
        // new state's, and its directory is the new state's.
        self.check_open()?;
        let next = *last + 1;
        let params = CatalogParams { id_last: next };
        write_atomic(&*self.io, &catalog_file(&self.data_dir), &params)?;
        *last = next;
        Ok(next)
    }

    /// How a collection's store is opened.
    pub(crate) fn store_options(&self, journal_size: u64) -> StoreOptions {
        StoreOptions {
            journal_size,
            sync_interval: self.sync_interval,
            compaction: CompactionPolicy {
                dead_share_min: COMPACTION_DEAD_SHARE_MIN,
                dead_bytes_min: COMPACTION_DEAD_BYTES_MIN,
                interval: COMPACTION_INTERVAL,
            },
            salvage: self.salvage,
        }
    }

    /// Marks the catalog closed; true the first time.
    pub(crate) fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// 503/30 once the catalog is shutting down.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            Err(ArangoError::new(SHUTTING_DOWN))
        } else {
            Ok(())
        }
    }
}
