//! [`Store`]: one collection's journal, datafiles, primary index and maintenance.
//!
//! What it is: the public face of the engine and the state it shares between threads. The work
//! is split by concern: `journal.rs` appends and hands full journals off, `handoff.rs` seals
//! them and prepares the spare journal in the background, `sync.rs` is group commit,
//! `recovery.rs` and `chain.rs` open, `compaction.rs` rewrites datafiles, `group.rs` commits
//! transactions, `consistency.rs` checks the invariants; each adds methods to [`Store`].
//!
//! What it is not: a document store. Keys and values are bytes; `rev` is opaque.
//!
//! Invariants: one writer at a time (the `writer` mutex) appends, then updates the index, so
//! the index never points past a file's written length; a key's index entry always names its
//! newest record by `seq`; after poisoning no byte is appended; nothing done under the writer
//! lock waits for the disk, except the commit of a transaction spanning several stores (no
//! fsync, no directory fsync, no manifest rewrite: a full journal is
//! handed off with its footer in the page cache, and the next journal is the spare `maintain`
//! made durable beforehand, or one created in the page cache and made durable by the
//! group-commit round that first acknowledges a record in it). [`Store::check_consistency`]
//! checks these and the counters.
//!
//! Lock order. A thread holding one of these locks takes only locks further down the list:
//! 1. `upkeep`: maintenance passes, compaction, the second half of `rotate`, `close`,
//!    `abandon`, `check_consistency`, `cut_pending_group`;
//! 2. `writer`: every append (`mutate*`, `write_meta`, `truncate`, a transaction's [`crate::Part`]
//!    from `Store::part` until `commit`), the first half of `rotate`, `mark_closed`, `abandon`,
//!    `restore`, `cut_pending_group`; `prepare_spare` takes it (under `upkeep`) only to install
//!    the spare. The writer locks of SEVERAL stores are held together only by a transaction's
//!    parts, taken in ascending participant id (the global lock order between stores: two
//!    transactions touching the same stores take them in the same order), and a thread
//!    holding a part takes no other lock of any store but those below `writer`;
//! 3. `relocation`: shared by scans, exclusive while compaction re-points keys (under `upkeep`,
//!    never under `writer`);
//! 4. the index's shard locks (inside [`PrimaryIndex`]; released before a file is counted);
//! 5. `meta`, `newest_commit`, `pending` and `active` (each taken alone, under `writer`, or
//!    `meta` and `newest_commit` in compaction's scan);
//! 6. `files.listed` (the manifest lock), then `files` itself (read or write);
//! 7. `hints_pending`, then group commit's state lock, then the poison latch's mutex: leaves.
//!
//! Waiting for a ticket (an fsync by a syncer round) is allowed under `upkeep` (`maintain`'s
//! sync, compaction's commit, `close`), and under `writer` in ONE place only: the commit of a
//! transaction spanning several stores (`group.rs`), which must make every part durable before
//! anything can follow it in any participant's log. A syncer round takes none of the store's
//! locks but group commit's state (never across an fsync) and, to name a journal the writer
//! created, `files.listed` then `files`; so a round can never wait for a writer, and that
//! wait cannot deadlock. Every other writer never waits for a round.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::format::{self, RecordType};
use crate::index::{Location, PrimaryIndex};
use crate::io::FileIo;
use crate::manifest::FileSet;
use crate::poison::Poison;
use crate::sync::{GroupCommit, WriteTicket};

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
    /// Open a store with damaged files by salvaging what still verifies (the damaged files are
    /// set aside, never deleted; see `salvage.rs`) instead of refusing with `Corrupted`. An
    /// operator's decision: `--database.ignore-datafile-errors`.
    pub salvage: bool,
}

/// A stored record as read back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The revision the record was written with.
    pub rev: u64,
    /// The value bytes.
    pub value: Vec<u8>,
}

/// The current version of a key, handed to a [`Store::mutate`] closure (and to a
/// [`crate::Part::mutate`] closure, where it may be a version the part staged).
pub struct Existing<'a> {
    pub(crate) store: &'a Store,
    pub(crate) key: &'a [u8],
    /// The value when the version is one a transaction's part staged (not on disk yet).
    pub(crate) staged: Option<&'a [u8]>,
    /// The revision of the current version.
    pub rev: u64,
}

impl Existing<'_> {
    /// Reads the current value (one positioned read; none for a staged version).
    pub fn value(&self) -> Result<Vec<u8>, StorageError> {
        if let Some(value) = self.staged {
            return Ok(value.to_vec());
        }
        // The writer lock is held, so the key's version cannot change; compaction may only move
        // it, which `read_current` follows.
        match self.store.read_current(self.key)? {
            Some(record) => {
                assert_eq!(record.rev, self.rev, "a key changed under the writer lock");
                Ok(record.value)
            }
            None => panic!("a key vanished under the writer lock"),
        }
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
    /// Journals: the active one (0 or 1) and full ones handed off whose seal has not finished
    /// yet. A spare journal made ahead of need (or being made) is not counted.
    pub journals_count: u64,
    /// Bytes of those journals.
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

/// Counters since open, as atomics.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) bytes_written: AtomicU64,
    pub(crate) syncs: AtomicU64,
    pub(crate) seals: AtomicU64,
    pub(crate) compactions: AtomicU64,
}

/// The state only the writer (holder of `Store::writer`) touches.
pub(crate) struct Writer {
    /// The active journal; `None` until the next write starts one (a new store, one opened
    /// without a journal, one whose journal was just sealed or could not be started).
    pub(crate) journal: Option<Arc<DataFile>>,
    /// The size the active journal was created for.
    pub(crate) capacity: u64,
    /// Records in the active journal after its header (for the footer).
    pub(crate) records: u64,
    /// The `seq` of the next record.
    pub(crate) seq_next: u64,
    /// The spare journal `maintain` prepared (durable, named in the manifest, header only),
    /// which the next journal start takes without I/O.
    pub(crate) spare: Option<Arc<DataFile>>,
    /// The highest fid that was ever the active journal (or, after open, of any file): a spare
    /// is installed only above it, so journals become active in fid order.
    pub(crate) fid_last: u64,
}

/// One collection's data: journal, datafiles, primary index.
///
/// `Store` is `Send + Sync`; share it with an `Arc`. Reads never wait for writers' fsyncs.
pub struct Store {
    pub(crate) dir: PathBuf,
    pub(crate) io: Arc<dyn FileIo>,
    pub(crate) policy: CompactionPolicy,
    pub(crate) sync_interval: Duration,
    /// The maximal size of journals started from now on.
    pub(crate) journal_size: AtomicU64,
    pub(crate) index: PrimaryIndex,
    /// Every open journal and datafile by fid.
    /// Shared with `group_commit`, which names in the manifest a journal the writer created.
    pub(crate) files: Arc<FileSet>,
    pub(crate) writer: Mutex<Writer>,
    /// The active journal, for `sync` (which must not take the writer lock).
    pub(crate) active: RwLock<Arc<DataFile>>,
    /// Shared with the syncer threads, which answer this store's durability waiters.
    pub(crate) group_commit: Arc<GroupCommit>,
    /// Shared with `group_commit`, which latches it when an fsync fails.
    pub(crate) poison: Arc<Poison>,
    /// Datafiles sealed since the last maintenance pass, whose hint files are still to write
    /// (one per seal; `maintain`, `rotate` and `close` drain it).
    pub(crate) hints_pending: Mutex<Vec<Arc<DataFile>>>,
    pub(crate) closed: AtomicBool,
    /// Set by [`Store::abandon`]: the store's directory is being deleted.
    pub(crate) deleted: AtomicBool,
    pub(crate) fid_next: AtomicU64,
    /// The fid of `Writer::spare` (0: none), readable without the writer lock.
    pub(crate) spare_fid: AtomicU64,
    /// The highest `seq` whose record has been written (published after the write).
    pub(crate) seq_written: AtomicU64,
    /// The highest revision on disk.
    pub(crate) last_tick: AtomicU64,
    /// Bytes of live values.
    pub(crate) live_value_bytes: AtomicU64,
    /// Held by background upkeep (writing hint files, compaction) and by `close`, so that once a
    /// store is closed nothing writes into its directory any more; holds when the last
    /// compaction ran.
    pub(crate) upkeep: Mutex<Instant>,
    /// The store's metadata: the newest `Meta` record's `seq` and value.
    pub(crate) meta: Mutex<Option<(u64, Vec<u8>)>>,
    /// The newest commit record's `seq` and transaction (`Store::newest_commit`); compaction
    /// keeps that record, and only it.
    pub(crate) newest_commit: Mutex<Option<(u64, u64)>>,
    /// The group recovery found at the end of the log that is not its transaction's commit
    /// point (`Store::pending_group`); it stays pending while nothing is written after it.
    pub(crate) pending: Mutex<Option<crate::chain::PendingAt>>,
    /// Scans hold it shared; compaction holds it exclusively while it re-points keys and drops
    /// files, so a scan never misses a record that moved behind its back. Scans take it
    /// recursively (they never queue behind a waiting compaction), so a paused scan delays
    /// compaction of its store, never other scans.
    pub(crate) relocation: RwLock<()>,
    /// Compaction outputs in progress: count and bytes.
    pub(crate) compactors: AtomicU64,
    pub(crate) compactor_bytes: AtomicU64,
    pub(crate) counters: Counters,
}

/// What [`Store::scan`] calls for each live record: key, revision, value; false stops.
pub type RecordVisitor<'a> = dyn FnMut(&[u8], u64, &[u8]) -> bool + 'a;

/// How many times a read follows a key that compaction moved before giving up.
const READ_ATTEMPTS_MAX: usize = 64;

impl Store {
    /// Creates an empty store in `dir` (created if missing; must not already hold a store).
    pub fn create(
        io: Arc<dyn FileIo>,
        dir: &Path,
        options: StoreOptions,
    ) -> Result<Store, StorageError> {
        Store::recover(io, dir, options, true)
    }

    /// Opens the store in `dir`, recovering it: scans the journal, verifies checksums, cuts a
    /// torn tail, loads hint files or rescans datafiles without one.
    pub fn open(
        io: Arc<dyn FileIo>,
        dir: &Path,
        options: StoreOptions,
    ) -> Result<Store, StorageError> {
        Store::recover(io, dir, options, false)
    }

    /// The current version of `key`, read from disk.
    pub fn get(&self, key: &[u8]) -> Result<Option<Record>, StorageError> {
        self.read_current(key).map_err(|e| self.deleted_or(e))
    }

    /// `Deleted` for a failure of a store being deleted (its files may be gone already: it is
    /// not damaged), else the failure itself.
    fn deleted_or(&self, error: StorageError) -> StorageError {
        if self.deleted.load(Ordering::Acquire) {
            StorageError::Deleted
        } else {
            error
        }
    }

    /// Reads the record the index names for `key`, following it if compaction moves it.
    pub(crate) fn read_current(&self, key: &[u8]) -> Result<Option<Record>, StorageError> {
        for _ in 0..READ_ATTEMPTS_MAX {
            let Some(location) = self.index.get(key) else {
                return Ok(None);
            };
            let file = self.files.read().get(&u64::from(location.fid)).cloned();
            // A missing file means compaction re-pointed the key and dropped the file between
            // our two lookups; the index already names the new place. The same holds when the
            // file went while we read it (its descriptor had been closed, and it is deleted).
            if let Some(file) = file {
                match self.read_at(&file, &location, key) {
                    Ok((rev, value)) => return Ok(Some(Record { rev, value })),
                    Err(_) if !self.files.read().contains_key(&file.fid) => continue,
                    Err(e) => return Err(e),
                }
            }
        }
        panic!("key kept moving during {READ_ATTEMPTS_MAX} reads");
    }

    /// Reads and verifies the document record at `location` in `file`.
    pub(crate) fn read_at(
        &self,
        file: &DataFile,
        location: &Location,
        key: &[u8],
    ) -> Result<(u64, Vec<u8>), StorageError> {
        let mut buf = vec![0u8; format::padded(u64::from(location.size)) as usize];
        let path = file.file_name().path_in(&self.dir);
        file.handle
            .read_exact_at(&mut buf, location.offset)
            .map_err(|e| StorageError::io(&path, e))?;
        let record = format::decode(&buf)
            .map_err(|e| StorageError::corrupted(&path, location.offset, e.to_string()))?;
        if record.kind != RecordType::Document
            || record.key != key
            || record.seq != location.seq
            || record.rev != location.rev
            || record.size != location.size
        {
            return Err(StorageError::corrupted(
                &path,
                location.offset,
                "record does not match the index",
            ));
        }
        let header = format::PREFIX_SIZE + key.len();
        buf.truncate(record.size as usize);
        buf.drain(..header);
        Ok((location.rev, buf))
    }

    /// The revision of the current version of `key`, from the index alone.
    pub fn rev_of(&self, key: &[u8]) -> Option<u64> {
        self.index.get(key).map(|l| l.rev)
    }

    /// Atomically reads the current version of `key` and writes what `decide` returns.
    ///
    /// `decide` runs while writers to this store are held off, so the read and the write are
    /// one step. With `sync = true` the call returns only after an fsync covered the write (the
    /// wait happens after other writers are let go, so concurrent syncing writers share fsyncs).
    /// A `Remove` of a key that does not exist writes nothing.
    pub fn mutate<R, E>(
        &self,
        key: &[u8],
        sync: bool,
        decide: impl FnOnce(Option<Existing<'_>>) -> Result<(Mutation, R), E>,
    ) -> Result<R, E>
    where
        E: From<StorageError>,
    {
        let (result, ticket) = self.mutate_deferred(key, decide)?;
        if let (true, Some(ticket)) = (sync, ticket) {
            ticket.wait()?;
        }
        Ok(result)
    }

    /// [`Store::mutate`] without waiting: writes (to the page cache) and returns a ticket for
    /// the record written, if any (`None` for `Keep` and for a `Remove` of a missing key).
    /// [`WriteTicket::on_durable`] learns, without blocking, when an fsync covered it.
    pub fn mutate_deferred<R, E>(
        &self,
        key: &[u8],
        decide: impl FnOnce(Option<Existing<'_>>) -> Result<(Mutation, R), E>,
    ) -> Result<(R, Option<WriteTicket>), E>
    where
        E: From<StorageError>,
    {
        let mut writer = self.writer.lock();
        self.check_writable()?;
        let existing = self.index.get(key);
        let view = existing.map(|l| Existing {
            store: self,
            key,
            staged: None,
            rev: l.rev,
        });
        let (mutation, result) = decide(view)?;
        let seq = match mutation {
            Mutation::Keep => return Ok((result, None)),
            Mutation::Remove { .. } if existing.is_none() => return Ok((result, None)),
            Mutation::Put { rev, value } => self.write_document(&mut writer, key, rev, &value)?,
            Mutation::Remove { rev } => self.write_tombstone(&mut writer, key, rev)?,
        };
        // The record went to the journal now active: `append` rotates before it writes.
        let journal = writer
            .journal
            .clone()
            .expect("a successful write leaves a journal");
        drop(writer);
        Ok((result, Some(self.ticket(seq, journal))))
    }

    /// The store's metadata: the value of the newest [`Store::write_meta`], if any. Opaque to
    /// the store; it survives compaction and recovery.
    pub fn meta(&self) -> Option<Vec<u8>> {
        self.meta.lock().as_ref().map(|(_, value)| value.clone())
    }

    /// Replaces the store's metadata by appending a `Meta` record (to the page cache, like any
    /// write: it is as durable as the writes after it, and durable with the next fsync).
    pub fn write_meta(&self, value: &[u8]) -> Result<WriteTicket, StorageError> {
        let mut writer = self.writer.lock();
        self.check_writable()?;
        let seq = self.write_meta_locked(&mut writer, value)?;
        let journal = writer
            .journal
            .clone()
            .expect("a successful write leaves a journal");
        drop(writer);
        Ok(self.ticket(seq, journal))
    }

    /// Number of live keys.
    pub fn len(&self) -> u64 {
        self.index.len()
    }

    /// True when no key is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Visits every live key with its revision, from the index alone (no I/O), until `visit`
    /// returns false. Keys written during the visit may or may not be seen.
    pub fn for_each_key(&self, visit: &mut dyn FnMut(&[u8], u64) -> bool) {
        self.index
            .for_each(&mut |key, location| visit(key, location.rev));
    }

    /// Visits every live record (key, revision, value) until `visit` returns false.
    ///
    /// Reads file by file, sequentially. Keys written during the scan may or may not be seen;
    /// a key overwritten during the scan may be missed (its old version is dead, its new one
    /// may be past the scanned range).
    pub fn scan(&self, visit: &mut RecordVisitor<'_>) -> Result<(), StorageError> {
        self.scan_files(visit).map_err(|e| self.deleted_or(e))
    }

    fn scan_files(&self, visit: &mut RecordVisitor<'_>) -> Result<(), StorageError> {
        // Recursive: a scan does not queue behind a compaction that waits for another scan (a
        // streaming query's scan may pause for as long as its client takes), so scans never
        // wait for each other; compaction waits until no scan runs.
        let _no_relocation = self.relocation.read_recursive();
        let files: Vec<Arc<DataFile>> = self.files.read().values().cloned().collect();
        for file in files {
            let fid = file.fid as u32;
            let path = file.file_name().path_in(&self.dir);
            let end = file.len.load(Ordering::Acquire);
            let mut stopped = false;
            let outcome = crate::scan::scan(
                file.handle.as_ref(),
                format::FILE_HEADER_RECORD_SIZE,
                end,
                &mut |offset, record| {
                    if stopped || record.kind != RecordType::Document {
                        return Ok(());
                    }
                    let live = self
                        .index
                        .get(record.key)
                        .is_some_and(|l| l.fid == fid && l.offset == offset);
                    if live && !visit(record.key, record.rev, record.value) {
                        stopped = true;
                    }
                    Ok(())
                },
                &|e| StorageError::io(&path, e),
            )?;
            if let Some((offset, error)) = outcome.bad {
                return Err(StorageError::corrupted(&path, offset, error.to_string()));
            }
            if stopped {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Removes every key. With `sync = true`, durable when it returns.
    ///
    /// Appends a truncate marker (every record with a lower `seq` is dead) and clears the index;
    /// the old datafiles become wholly dead and compaction deletes them.
    pub fn truncate(&self, rev: u64, sync: bool) -> Result<(), StorageError> {
        let ticket = {
            let mut writer = self.writer.lock();
            self.check_writable()?;
            let seq = self.write_truncate(&mut writer, rev)?;
            let journal = writer
                .journal
                .clone()
                .expect("a successful write leaves a journal");
            self.ticket(seq, journal)
        };
        if sync {
            ticket.wait()?;
        }
        Ok(())
    }

    /// Changes the maximal journal size; it applies to journals started from now on.
    pub fn set_journal_size(&self, bytes: u64) {
        self.journal_size.store(bytes, Ordering::Relaxed);
    }

    /// Seals the active journal now, if it holds any record, and writes its hint file: hands
    /// it off under the writer lock, then (outside it) finishes every seal handed off so far.
    /// When it returns, every record written before the call is durable.
    pub fn rotate(&self) -> Result<(), StorageError> {
        {
            let mut writer = self.writer.lock();
            self.check_writable()?;
            if writer.records > 0 {
                self.rotate_locked(&mut writer)?;
            }
        }
        let _upkeep = self.upkeep.lock();
        if !self.closed.load(Ordering::Acquire) {
            self.finish_seals()?;
            self.refresh_manifest()?;
            self.write_pending_hints_locked();
        }
        Ok(())
    }

    /// Background upkeep, called periodically by one maintenance thread: seals the journals
    /// the writer handed off (fsync, rename, directory fsync), makes durable and names in the
    /// manifest a journal the writer had to create itself, prepares the spare journal the next
    /// rotation takes, writes the hint files of datafiles sealed since the last pass, fsyncs
    /// writes older than the sync interval, and compacts when the policy says so. Does nothing
    /// once the store is closed.
    pub fn maintain(&self) -> Result<(), StorageError> {
        let mut upkeep = self.upkeep.lock();
        if self.closed.load(Ordering::Acquire) || self.poison.reason().is_some() {
            return Ok(());
        }
        self.finish_seals()?;
        self.settle_entries()?;
        self.prepare_spare()?;
        self.refresh_manifest()?;
        self.write_pending_hints_locked();
        if self.sync_due(self.sync_interval) {
            self.sync()?;
        }
        if upkeep.elapsed() >= self.policy.interval {
            self.compact_locked(&mut upkeep)?;
        }
        Ok(())
    }

    /// Makes every write so far durable.
    pub fn sync(&self) -> Result<(), StorageError> {
        self.sync_all()
    }

    /// What the engine holds now.
    pub fn figures(&self) -> Figures {
        let mut f = Figures {
            journal_size: self.journal_size.load(Ordering::Relaxed),
            last_tick: self.last_tick.load(Ordering::Relaxed),
            index_size: self.index.memory_bytes(),
            documents_size: self.live_value_bytes.load(Ordering::Relaxed),
            compactors_count: self.compactors.load(Ordering::Relaxed),
            compactors_file_size: self.compactor_bytes.load(Ordering::Relaxed),
            ..Figures::default()
        };
        // The journals in use: the active one and those handed off and not sealed yet. Any
        // other journal that holds nothing is a spare (prepared, or being prepared by the
        // maintenance pass): it holds its header only and is not reported.
        let active = self.active.read().fid;
        let handed_off: Vec<u64> = self
            .group_commit
            .handed_off()
            .iter()
            .map(|(journal, _)| journal.fid)
            .collect();
        for file in self.files.read().values() {
            let c = file.counts();
            let holds_nothing =
                c.live_count == 0 && c.dead_count == 0 && c.tombstones == 0 && c.marker_bytes == 0;
            let in_use = file.fid == active || handed_off.contains(&file.fid);
            if !file.is_sealed() && !in_use && holds_nothing {
                continue;
            }
            f.alive_count += c.live_count;
            f.alive_size += c.live_bytes;
            f.dead_count += c.dead_count;
            f.dead_size += c.dead_bytes + c.marker_bytes;
            f.dead_deletion += c.tombstones;
            if file.is_sealed() {
                f.datafiles_count += 1;
                f.datafiles_file_size += c.len;
            } else {
                f.journals_count += 1;
                f.journals_file_size += c.len;
            }
        }
        f
    }

    /// Counters since open.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            bytes_written: self.counters.bytes_written.load(Ordering::Relaxed),
            syncs: self.counters.syncs.load(Ordering::Relaxed) + self.group_commit.syncs(),
            seals: self.counters.seals.load(Ordering::Relaxed),
            compactions: self.counters.compactions.load(Ordering::Relaxed),
        }
    }

    /// Flushes and closes: syncs the journal, writes the hints still owed for sealed
    /// datafiles, refuses later writes with `ShuttingDown`. Durability waiters registered before
    /// are answered (the syncers finish their rounds); journals handed off are sealed. The
    /// active journal is rescanned on the next open (it has no hint), which is cheap because it
    /// is at most one journal's size. Idempotent; a
    /// poisoned store reports its poison.
    pub fn close(&self) -> Result<(), StorageError> {
        if !self.mark_closed() {
            return Ok(());
        }
        // Waits for upkeep in progress; later upkeep sees the store closed and does nothing.
        let _upkeep = self.upkeep.lock();
        self.poison.check()?;
        self.sync()?;
        // Every handed-off journal is fsynced now; renaming them spares the next open a step.
        self.finish_seals()?;
        self.write_pending_hints_locked();
        // A hint whose fsync failed just now poisons the store too.
        self.poison.check()
    }

    /// Closes the store without touching its files (no sync, no hint): for a store whose
    /// directory is about to be deleted. When it returns, no upkeep runs, and writes (and reads
    /// that fail) answer `Deleted`. [`Store::restore`] undoes it if the deletion could not
    /// start.
    pub fn abandon(&self) {
        {
            let _writer = self.writer.lock();
            self.deleted.store(true, Ordering::Release);
            self.closed.store(true, Ordering::Release);
        }
        let _upkeep = self.upkeep.lock();
    }

    /// Undoes [`Store::abandon`] (the directory could not be deleted after all); the store
    /// works as before.
    pub fn restore(&self) {
        let _writer = self.writer.lock();
        self.deleted.store(false, Ordering::Release);
        self.closed.store(false, Ordering::Release);
    }

    /// Refuses writes from now on; true the first time.
    fn mark_closed(&self) -> bool {
        let _writer = self.writer.lock();
        !self.closed.swap(true, Ordering::AcqRel)
    }

    /// Rewrites the manifest from the current file set (call after changing it, before
    /// deleting any file that left it).
    pub(crate) fn write_manifest(&self) -> Result<(), StorageError> {
        self.files.write_manifest().map_err(|failure| failure.error)
    }

    /// The error that poisoned the store, if any.
    pub fn poisoned(&self) -> Option<String> {
        self.poison.reason()
    }

    /// `Deleted` once abandoned, `ShuttingDown` after close, `Poisoned` after a failure, else
    /// fine to write.
    pub(crate) fn check_writable(&self) -> Result<(), StorageError> {
        if self.deleted.load(Ordering::Acquire) {
            return Err(StorageError::Deleted);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(StorageError::ShuttingDown);
        }
        self.poison.check()
    }

    /// Records `location` as `key`'s current version, killing the one it replaces.
    pub(crate) fn index_put(&self, key: &[u8], location: Location, file: &DataFile) {
        file.add_live(u64::from(location.size));
        self.live_value_bytes
            .fetch_add(value_len(key, &location), Ordering::Relaxed);
        if let Some(old) = self.index.insert(key, location) {
            self.forget(key, &old);
        }
    }

    /// Removes `key` from the index, killing its current version.
    pub(crate) fn index_remove(&self, key: &[u8]) {
        if let Some(old) = self.index.remove(key) {
            self.forget(key, &old);
        }
    }

    /// Counts the version at `old` as dead.
    fn forget(&self, key: &[u8], old: &Location) {
        self.live_value_bytes
            .fetch_sub(value_len(key, old), Ordering::Relaxed);
        // The file may be gone already: compaction dropped it after re-pointing other keys.
        if let Some(file) = self.files.read().get(&u64::from(old.fid)) {
            file.kill(u64::from(old.size));
        }
    }
}

/// Bytes of the value in the document record at `location`.
pub(crate) fn value_len(key: &[u8], location: &Location) -> u64 {
    u64::from(location.size) - (format::PREFIX_SIZE + key.len()) as u64
}
