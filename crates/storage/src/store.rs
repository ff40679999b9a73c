//! [`Store`]: one collection's journal, datafiles, primary index and maintenance.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::error::StorageError;
use crate::io::FileIo;

/// When compaction rewrites a sealed datafile.
#[derive(Clone, Debug)]
pub struct CompactionPolicy {
    /// A datafile qualifies when its dead bytes reach this share of its size (0.0..=1.0).
    pub dead_share_min: f64,
    /// ...or when its dead bytes reach this many bytes.
    pub dead_bytes_min: u64,
    /// Minimum time between two compactions of the same store, in `maintain`.
    pub interval: Duration,
}

/// How a store is opened.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    /// Maximal journal size in bytes: a journal that would grow past it is sealed.
    /// A record larger than this gets a journal of its own, sized to fit.
    pub journal_size: u64,
    /// How long unsynced writes may wait for the background fsync in `maintain`.
    pub sync_interval: Duration,
    /// When compaction runs.
    pub compaction: CompactionPolicy,
}

/// A stored record as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The revision the record was written with.
    pub rev: u64,
    /// The value bytes.
    pub value: Vec<u8>,
}

/// The current version of a key, handed to a [`Store::mutate`] closure.
pub struct Existing<'a> {
    store: &'a Store,
    /// The revision of the current version.
    pub rev: u64,
}

impl Existing<'_> {
    /// Reads the current value (one positioned read).
    pub fn value(&self) -> Result<Vec<u8>, StorageError> {
        let _ = self.store;
        todo!("storage: Existing::value")
    }
}

/// What a [`Store::mutate`] closure decided.
#[derive(Debug)]
pub enum Mutation {
    /// Write a new version with this revision (strictly greater than any earlier revision).
    Put {
        /// The new revision.
        rev: u64,
        /// The new value.
        value: Vec<u8>,
    },
    /// Remove the key, writing a tombstone with this revision.
    Remove {
        /// The tombstone's revision.
        rev: u64,
    },
    /// Write nothing.
    Keep,
}

/// What the engine really holds, in MMFiles's `figures` shape.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Live records (current versions) and their bytes.
    pub alive_count: u64,
    /// Bytes of live records.
    pub alive_size: u64,
    /// Superseded or removed versions and their bytes.
    pub dead_count: u64,
    /// Bytes of dead records.
    pub dead_size: u64,
    /// Tombstones (deletion markers) still on disk.
    pub dead_deletion: u64,
    /// Sealed datafiles.
    pub datafiles_count: u64,
    /// Total bytes of sealed datafiles.
    pub datafiles_file_size: u64,
    /// Active journals (0 or 1).
    pub journals_count: u64,
    /// Bytes of the active journal.
    pub journals_file_size: u64,
    /// Compaction files in progress.
    pub compactors_count: u64,
    /// Bytes of compaction files in progress.
    pub compactors_file_size: u64,
    /// Bytes of the in-memory primary index (estimate).
    pub index_size: u64,
    /// Bytes of all live values (documents) on disk.
    pub documents_size: u64,
    /// The highest revision on disk (0 when empty).
    pub last_tick: u64,
    /// The maximal journal size in force.
    pub journal_size: u64,
}

/// Counters for metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Bytes appended to journals since open.
    pub bytes_written: u64,
    /// fsyncs performed since open.
    pub syncs: u64,
    /// Journals sealed since open.
    pub seals: u64,
    /// Compactions completed since open.
    pub compactions: u64,
}

/// What one compaction did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// Datafiles rewritten.
    pub files_compacted: u64,
    /// Bytes reclaimed.
    pub bytes_reclaimed: u64,
}

/// One collection's data: journal, datafiles, primary index.
///
/// `Store` is `Send + Sync`; share it with an `Arc`. Reads never wait for writers' fsyncs.
pub struct Store {
    _private: (),
}

impl Store {
    /// Creates an empty store in `dir` (created if missing; must not already hold a store).
    pub fn create(
        io: Arc<dyn FileIo>,
        dir: &Path,
        options: StoreOptions,
    ) -> Result<Store, StorageError> {
        let _ = (io, dir, options);
        todo!("storage: Store::create")
    }

    /// Opens the store in `dir`, recovering it: scans the journal, verifies checksums, cuts a
    /// torn tail, loads hint files or rescans datafiles without one.
    pub fn open(
        io: Arc<dyn FileIo>,
        dir: &Path,
        options: StoreOptions,
    ) -> Result<Store, StorageError> {
        let _ = (io, dir, options);
        todo!("storage: Store::open")
    }

    /// The current version of `key`, read from disk.
    pub fn get(&self, key: &[u8]) -> Result<Option<Record>, StorageError> {
        let _ = key;
        todo!("storage: Store::get")
    }

    /// The revision of the current version of `key`, from the index alone.
    pub fn rev_of(&self, key: &[u8]) -> Option<u64> {
        let _ = key;
        todo!("storage: Store::rev_of")
    }

    /// Atomically reads the current version of `key` and writes what `decide` returns.
    ///
    /// `decide` runs while writers to this store are held off, so the read and the write are
    /// one step. With `sync = true` the call returns only after an fsync covered the write (the
    /// wait happens after other writers are let go, so concurrent syncing writers share fsyncs).
    pub fn mutate<R, E>(
        &self,
        key: &[u8],
        sync: bool,
        decide: impl FnOnce(Option<Existing<'_>>) -> Result<(Mutation, R), E>,
    ) -> Result<R, E>
    where
        E: From<StorageError>,
    {
        let _ = (key, sync, decide);
        todo!("storage: Store::mutate")
    }

    /// Number of live keys.
    pub fn len(&self) -> u64 {
        todo!("storage: Store::len")
    }

    /// True when no key is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Visits every live key with its revision, from the index alone (no I/O), until `visit`
    /// returns false. Keys written during the visit may or may not be seen.
    pub fn for_each_key(&self, visit: &mut dyn FnMut(&[u8], u64) -> bool) {
        let _ = visit;
        todo!("storage: Store::for_each_key")
    }

    /// Visits every live record (key, revision, value) until `visit` returns false.
    pub fn scan(
        &self,
        visit: &mut dyn FnMut(&[u8], u64, &[u8]) -> bool,
    ) -> Result<(), StorageError> {
        let _ = visit;
        todo!("storage: Store::scan")
    }

    /// Removes every key. With `sync = true`, durable when it returns.
    pub fn truncate(&self, rev: u64, sync: bool) -> Result<(), StorageError> {
        let _ = (rev, sync);
        todo!("storage: Store::truncate")
    }

    /// Changes the maximal journal size; it applies to journals started from now on.
    pub fn set_journal_size(&self, bytes: u64) {
        let _ = bytes;
        todo!("storage: Store::set_journal_size")
    }

    /// Seals the active journal now, if it holds any record.
    pub fn rotate(&self) -> Result<(), StorageError> {
        todo!("storage: Store::rotate")
    }

    /// Compacts every datafile that the policy selects, now, on the caller's thread.
    pub fn compact(&self) -> Result<CompactionReport, StorageError> {
        todo!("storage: Store::compact")
    }

    /// Background upkeep, called periodically by one maintenance thread: fsyncs writes older
    /// than the sync interval, and compacts when the policy says so.
    pub fn maintain(&self) -> Result<(), StorageError> {
        todo!("storage: Store::maintain")
    }

    /// Makes every write so far durable.
    pub fn sync(&self) -> Result<(), StorageError> {
        todo!("storage: Store::sync")
    }

    /// What the engine holds now.
    pub fn figures(&self) -> Figures {
        todo!("storage: Store::figures")
    }

    /// Counters since open.
    pub fn stats(&self) -> StoreStats {
        todo!("storage: Store::stats")
    }

    /// Flushes and closes: syncs the journal, writes what a fast restart needs, refuses later
    /// writes with `ShuttingDown`.
    pub fn close(&self) -> Result<(), StorageError> {
        todo!("storage: Store::close")
    }

    /// The error that poisoned the store, if any.
    pub fn poisoned(&self) -> Option<String> {
        todo!("storage: Store::poisoned")
    }
}
