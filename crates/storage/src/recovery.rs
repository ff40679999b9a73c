//! Opening a store: rebuilding the index and counters from what is on disk.
//!
//! What it is: `Store::recover`, used by `create` and `open`. Steps:
//! 1. list the directory; delete leftover `compaction-*.db` files (an unfinished compaction)
//!    and hint files without a datafile;
//! 2. read the supersedes record at the head of every datafile and delete the files a finished
//!    compaction replaced (finishing its cleanup);
//! 3. load every remaining datafile from its hint file when the hint is whole and matches,
//!    else by scanning it strictly (any bad record in a sealed file is `Corrupted`), and write
//!    a fresh hint for next time;
//! 4. read the journals as one log (`chain.rs`): finish the seals of handed-off journals, cut
//!    the torn tail at the end of the log and every record after it, cut a transaction's group
//!    that the log ends inside, note a pending group, keep the spare;
//! 5. for each key keep the record with the highest `seq`; drop keys whose winner is a
//!    tombstone or is older than the newest truncate marker; count live and dead per file; read
//!    back the newest metadata and commit records.
//!
//! What it is not: a repair tool. It never skips a bad record in the middle of a sealed file,
//! and a sealed datafile holding an incomplete group is `Corrupted`. Nor does it decide a
//! pending group: `group::settle`, with the other stores, does.
//!
//! Invariants: after recovery the active journal ends at its last good record and every journal
//! kept is fsynced, so every record recovery kept is durable; the index names, per key, the record with the highest `seq`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};

use crate::datafile::{DataFile, FileName};
use crate::error::StorageError;
use crate::format::{self, FileHeader, RecordType, FILE_HEADER_RECORD_SIZE};
use crate::group_reader::GroupReader;
use crate::hint::{self, HintEntry};
use crate::index::{Location, PrimaryIndex};
use crate::io::{FileHandle, FileIo};
use crate::poison::Poison;
use crate::store::{value_len, Counters, Store, StoreOptions, Writer};
use crate::sync::GroupCommit;

/// Per-file totals seen while loading, before liveness is known.
#[derive(Default)]
struct FileTotals {
    docs: u64,
    doc_bytes: u64,
    tombstones: u64,
    marker_bytes: u64,
    /// Bytes of group markers: dead weight once their group is whole.
    group_marker_bytes: u64,
}

/// Where the newest record of a kind (metadata, commit) is.
#[derive(Clone, Copy)]
struct RecordAt {
    seq: u64,
    fid: u64,
    offset: u64,
    size: u32,
}

impl RecordAt {
    /// Keeps the newer by `seq` of `slot` and this record.
    fn keep_newest(slot: &mut Option<RecordAt>, fid: u64, e: &HintEntry<'_>) {
        if slot.is_none_or(|m| m.seq < e.seq) {
            *slot = Some(RecordAt {
                seq: e.seq,
                fid,
                offset: e.offset,
                size: e.size,
            });
        }
    }
}

/// The state recovery accumulates over all files.
pub(crate) struct Resolver {
    index: PrimaryIndex,
    totals: HashMap<u64, FileTotals>,
    truncate_seq: u64,
    seq_max: u64,
    tick: u64,
    meta: Option<RecordAt>,
    /// The newest commit record (by `seq`): by the callers' rule (transaction ids of the
    /// commits touching a store increase) the one with the highest transaction id.
    commit: Option<RecordAt>,
}

impl Resolver {
    /// Takes one record of file `fid` into account.
    pub(crate) fn apply(&mut self, fid: u64, e: &HintEntry<'_>) {
        let (kind, seq, rev, offset, size, key) = (e.kind, e.seq, e.rev, e.offset, e.size, e.key);
        let totals = self.totals.entry(fid).or_default();
        let location = Location {
            fid: fid as u32,
            size,
            offset,
            seq,
            rev,
        };
        match kind {
            RecordType::Document => {
                totals.docs += 1;
                totals.doc_bytes += u64::from(size);
                self.index.insert_if_newer(key, location);
            }
            RecordType::Tombstone => {
                totals.tombstones += 1;
                totals.marker_bytes += u64::from(size);
                // Size 0 marks a tombstone inside recovery; real records are never that small.
                self.index.insert_if_newer(
                    key,
                    Location {
                        size: 0,
                        ..location
                    },
                );
            }
            RecordType::Truncate => {
                totals.marker_bytes += u64::from(size);
                self.truncate_seq = self.truncate_seq.max(seq);
            }
            RecordType::Meta => {
                totals.marker_bytes += u64::from(size);
                RecordAt::keep_newest(&mut self.meta, fid, e);
            }
            RecordType::Commit => {
                totals.marker_bytes += u64::from(size);
                RecordAt::keep_newest(&mut self.commit, fid, e);
            }
            RecordType::GroupMarker => totals.group_marker_bytes += u64::from(size),
            RecordType::FileHeader
            | RecordType::Footer
            | RecordType::Supersedes
            | RecordType::Manifest
            | RecordType::Link => return,
        }
        self.seq_max = self.seq_max.max(seq);
        self.tick = self.tick.max(rev);
    }
}

/// The hint entry describing the record `r` at `offset`.
pub(crate) fn entry_of<'a>(offset: u64, r: &format::RecordRef<'a>) -> HintEntry<'a> {
    HintEntry {
        kind: r.kind,
        seq: r.seq,
        rev: r.rev,
        offset,
        size: r.size,
        key: r.key,
    }
}

/// The engine's files found in a directory.
#[derive(Default)]
struct Listing {
    journals: Vec<u64>,
    datafiles: BTreeSet<u64>,
    hints: BTreeSet<u64>,
    compactions: Vec<u64>,
    spares: Vec<u64>,
    fid_max: u64,
}

fn list(io: &dyn FileIo, dir: &Path) -> Result<Listing, StorageError> {
    let mut listing = Listing::default();
    for name in io.list_dir(dir).map_err(|e| StorageError::io(dir, e))? {
        let Some(parsed) = name.to_str().and_then(FileName::parse) else {
            continue;
        };
        let fid = match parsed {
            FileName::Journal(fid) => {
                listing.journals.push(fid);
                fid
            }
            FileName::Datafile(fid) => {
                listing.datafiles.insert(fid);
                fid
            }
            FileName::Hint(fid) => {
                listing.hints.insert(fid);
                fid
            }
            FileName::Compaction(fid) => {
                listing.compactions.push(fid);
                fid
            }
            FileName::Spare(fid) => {
                listing.spares.push(fid);
                fid
            }
        };
        listing.fid_max = listing.fid_max.max(fid);
    }
    Ok(listing)
}

/// Reads and checks the file header record of `handle`.
pub(crate) fn read_header(
    handle: &dyn FileHandle,
    len: u64,
    path: &Path,
) -> Result<FileHeader, StorageError> {
    if len < FILE_HEADER_RECORD_SIZE {
        return Err(StorageError::corrupted(
            path,
            0,
            "file shorter than its header",
        ));
    }
    let mut buf = vec![0u8; FILE_HEADER_RECORD_SIZE as usize];
    handle
        .read_exact_at(&mut buf, 0)
        .map_err(|e| StorageError::io(path, e))?;
    let record =
        format::decode(&buf).map_err(|e| StorageError::corrupted(path, 0, e.to_string()))?;
    format::parse_file_header(&record).map_err(|e| StorageError::corrupted(path, 0, e))
}

/// The fids a datafile's supersedes record names (empty if it has none). Only a supersedes
/// record is read in full; any other second record is left for its reader to verify, so a
/// datafile with a hint costs two small reads here.
pub(crate) fn read_supersedes(
    handle: &dyn FileHandle,
    len: u64,
    path: &Path,
) -> Result<Vec<u64>, StorageError> {
    let at = FILE_HEADER_RECORD_SIZE;
    if len < at + format::HEADER_SIZE as u64 {
        return Err(StorageError::corrupted(
            path,
            at,
            "datafile ends after its header",
        ));
    }
    let mut head = [0u8; format::HEADER_SIZE];
    handle
        .read_exact_at(&mut head, at)
        .map_err(|e| StorageError::io(path, e))?;
    if head[8] != RecordType::Supersedes as u8 {
        return Ok(Vec::new());
    }
    let size = u64::from(u32::from_le_bytes(head[..4].try_into().expect("4 bytes")));
    let padded = format::padded(size);
    if size > format::RECORD_SIZE_MAX || at + padded > len {
        return Err(StorageError::corrupted(
            path,
            at,
            "supersedes record out of bounds",
        ));
    }
    let mut buf = vec![0u8; padded as usize];
    handle
        .read_exact_at(&mut buf, at)
        .map_err(|e| StorageError::io(path, e))?;
    let record =
        format::decode(&buf).map_err(|e| StorageError::corrupted(path, at, e.to_string()))?;
    format::parse_fids(record.value).map_err(|e| StorageError::corrupted(path, at, e))
}

impl Store {
    /// Creates (`create`) or opens the store in `dir` and recovers it.
    pub(crate) fn recover(
        io: Arc<dyn FileIo>,
        dir: &Path,
        options: StoreOptions,
        create: bool,
    ) -> Result<Store, StorageError> {
        let started = Instant::now();
        if create {
            io.create_dir_all(dir)
                .map_err(|e| StorageError::io(dir, e))?;
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                io.sync_dir(parent)
                    .map_err(|e| StorageError::io(parent, e))?;
            }
        }
        if options.salvage && !create {
            crate::salvage::salvage_damaged_files(io.as_ref(), dir)?;
        }
        let listing = list(io.as_ref(), dir)?;
        let listed = crate::manifest::read(io.as_ref(), dir)?;
        let found = !listing.journals.is_empty() || !listing.datafiles.is_empty();
        if create && found {
            let e = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "store exists");
            return Err(StorageError::io(dir, e));
        }
        if listing.fid_max >= u64::from(u32::MAX) {
            // The index keeps fids in 32 bits; the engine never names a file past that.
            return Err(StorageError::corrupted(
                dir,
                0,
                format!(
                    "a file is numbered {}, beyond the engine's range",
                    listing.fid_max
                ),
            ));
        }
        let remove = |name: FileName| {
            let path = name.path_in(dir);
            io.remove_file(&path)
                .map_err(|e| StorageError::io(&path, e))
        };
        for fid in &listing.compactions {
            tracing::warn!(event = "compaction.leftover_removed", fid, dir = %dir.display());
            remove(FileName::Compaction(*fid))?;
        }
        for fid in &listing.spares {
            // A spare journal whose making was cut short: it held its header at most.
            tracing::info!(event = "journal.spare_leftover_removed", fid, dir = %dir.display());
            remove(FileName::Spare(*fid))?;
        }

        // Open every datafile and finish compactions whose cleanup a crash interrupted.
        let mut datafiles: BTreeMap<u64, (Box<dyn FileHandle>, u64)> = BTreeMap::new();
        let mut superseded = BTreeSet::new();
        for fid in &listing.datafiles {
            let path = FileName::Datafile(*fid).path_in(dir);
            let handle = io.open(&path).map_err(|e| StorageError::io(&path, e))?;
            let len = handle.len().map_err(|e| StorageError::io(&path, e))?;
            let header = read_header(handle.as_ref(), len, &path)?;
            if header.fid != *fid {
                return Err(StorageError::corrupted(
                    &path,
                    0,
                    "fid does not match the name",
                ));
            }
            let replaces = read_supersedes(handle.as_ref(), len, &path)?;
            if let Some(newer) = replaces.iter().find(|replaced| **replaced >= *fid) {
                // A compaction output always has a higher fid than every file it replaces.
                return Err(StorageError::corrupted(
                    &path,
                    0,
                    format!("it claims to replace file {newer}, which is not older"),
                ));
            }
            superseded.extend(replaces);
            datafiles.insert(*fid, (handle, len));
        }
        if let Some(listed) = &listed {
            check_listed_files(io.as_ref(), dir, listed, &listing, &superseded)?;
        }
        // The files a committed compaction replaced are set aside now and deleted only once
        // every remaining datafile has loaded: if a compaction output turns out damaged, the
        // store refuses to open with the originals still on disk.
        let mut replaced = Vec::new();
        for fid in &superseded {
            if datafiles.remove(fid).is_some() {
                replaced.push(*fid);
            }
        }

        let mut resolver = Resolver {
            index: PrimaryIndex::new(),
            totals: HashMap::new(),
            truncate_seq: 0,
            seq_max: 0,
            tick: 0,
            meta: None,
            commit: None,
        };
        let mut hints_missing = Vec::new();
        for (fid, (handle, len)) in &datafiles {
            let used_hint = listing.hints.contains(fid)
                && load_hint(io.as_ref(), dir, *fid, *len, &mut resolver)?;
            if !used_hint {
                scan_datafile(handle.as_ref(), *fid, *len, dir, &mut resolver)?;
                hints_missing.push(*fid);
            }
        }
        for fid in replaced {
            tracing::info!(event = "compaction.cleanup_finished", fid, dir = %dir.display());
            remove(FileName::Datafile(fid))?;
        }
        for fid in &listing.hints {
            if !datafiles.contains_key(fid) {
                remove(FileName::Hint(*fid))?;
            }
        }
        io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;

        // The journals: one log, lenient at its end (`chain.rs`).
        let fid_next = listing.fid_max + 1;
        let mut journals = listing.journals.clone();
        journals.sort_unstable();
        let chain = crate::chain::recover_journals(
            io.as_ref(),
            dir,
            &journals,
            listed.as_ref(),
            &mut resolver,
        )?;
        let holds_records = !datafiles.is_empty()
            || !chain.sealed.is_empty()
            || chain.active.as_ref().is_some_and(|j| j.records > 0);
        if listed.is_none() && holds_records {
            // Only a store that never got past its creation (an empty journal at most) may lack
            // its manifest; otherwise which files belong to it can no longer be checked.
            return Err(StorageError::corrupted(
                &crate::manifest::path_in(dir),
                0,
                "the store holds data but its manifest is missing",
            ));
        }

        let Resolver {
            index,
            totals,
            truncate_seq,
            seq_max,
            tick,
            meta,
            commit,
        } = resolver;
        if seq_max > format::SEQ_MAX {
            // Not a number this engine hands out (it would take centuries of writes): the
            // record's checksum is right, but the record was not written by this store.
            return Err(StorageError::corrupted(
                dir,
                0,
                format!("a record carries sequence number {seq_max}, beyond the engine's range"),
            ));
        }
        index.retain(&mut |_, l| l.size != 0 && l.seq > truncate_seq);

        let journal_size = options.journal_size;
        let poison = Arc::new(Poison::default());
        let files = Arc::new(crate::manifest::FileSet::new(io.clone(), dir));
        let store = Store {
            dir: dir.to_path_buf(),
            io: io.clone(),
            policy: options.compaction.clone(),
            sync_interval: options.sync_interval,
            journal_size: AtomicU64::new(journal_size),
            index,
            files: files.clone(),
            writer: Mutex::new(Writer {
                journal: None,
                capacity: 0,
                records: 0,
                seq_next: 0,
                spare: None,
                fid_last: 0,
            }),
            active: RwLock::new(DataFile::no_journal()),
            group_commit: Arc::new(GroupCommit::new(
                seq_max,
                dir.to_path_buf(),
                files.clone(),
                poison.clone(),
            )),
            poison,
            hints_pending: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            deleted: AtomicBool::new(false),
            fid_next: AtomicU64::new(0),
            spare_fid: AtomicU64::new(0),
            seq_written: AtomicU64::new(seq_max),
            last_tick: AtomicU64::new(tick),
            live_value_bytes: AtomicU64::new(0),
            upkeep: Mutex::new(Instant::now()),
            meta: Mutex::new(None),
            newest_commit: Mutex::new(None),
            pending: Mutex::new(None),
            relocation: RwLock::new(()),
            compactors: AtomicU64::new(0),
            compactor_bytes: AtomicU64::new(0),
            counters: Counters::default(),
        };
        {
            let mut files = store.files.write();
            for (fid, (handle, len)) in datafiles {
                files.insert(fid, Arc::new(DataFile::new(fid, handle, true, len)));
            }
        }
        // Without a journal (a new store, or every journal sealed), the first write takes the
        // spare or starts one: opening writes no data file, so a store opens on a full disk.
        let crate::chain::Chain {
            sealed,
            active,
            spare,
            retired,
            pending,
        } = chain;
        *store.pending.lock() = pending;
        let sealed_last = sealed.iter().map(|j| j.fid).max();
        for j in sealed {
            store
                .files
                .write()
                .insert(j.fid, Arc::new(DataFile::new(j.fid, j.handle, true, j.len)));
            hints_missing.push(j.fid);
        }
        let fid_last = active.as_ref().map(|j| j.fid).or(sealed_last).unwrap_or(0);
        let (journal, capacity, records) = match active {
            Some(j) => {
                let file = Arc::new(DataFile::new(j.fid, j.handle, false, j.len));
                store.files.write().insert(j.fid, file.clone());
                *store.active.write() = file.clone();
                (Some(file), j.capacity, j.records)
            }
            None => (None, journal_size, 0),
        };
        let spare = spare.map(|j| {
            let file = Arc::new(DataFile::new(j.fid, j.handle, false, j.len));
            store.files.write().insert(j.fid, file.clone());
            store.spare_fid.store(j.fid, Ordering::Relaxed);
            file
        });
        store.fid_next.store(fid_next, Ordering::Relaxed);
        *store.writer.lock() = Writer {
            journal,
            capacity,
            records,
            seq_next: seq_max + 1,
            spare,
            fid_last,
        };
        store.settle_counters(&totals);
        if let Some(at) = meta {
            let value = store.read_record_at(at, RecordType::Meta)?;
            *store.meta.lock() = Some((at.seq, value));
        }
        if let Some(at) = commit {
            let value = store.read_record_at(at, RecordType::Commit)?;
            let path = store.files.read()[&at.fid].file_name().path_in(dir);
            let trx = format::parse_commit(&value)
                .map_err(|reason| StorageError::corrupted(&path, at.offset, reason))?;
            *store.newest_commit.lock() = Some((at.seq, trx));
        }
        let fids = store.files.listable();
        if listed.as_ref() == Some(&fids) {
            *store.files.listed.lock() = Some(fids);
        } else {
            // Only a refresh: a manifest that lists files recovery removed (they were superseded)
            // or lacks a journal created after it is still right by its rule, so a failure (a
            // full disk) is logged and `maintain` writes it later.
            if let Err(error) = store.write_manifest() {
                tracing::warn!(event = "manifest.write_failed", dir = %dir.display(), error = %error);
            }
        }
        if store.files.listed.lock().is_some() {
            // Named by no manifest any more; they hold their header only.
            for fid in &retired {
                tracing::info!(event = "journal.unused_removed", fid, dir = %dir.display());
                remove(FileName::Journal(*fid))?;
            }
            if !retired.is_empty() {
                io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
            }
        }
        for fid in hints_missing {
            let file = store.files.read()[&fid].clone();
            // A hint only speeds up the next open; failing to write one (a full disk) must not
            // keep the store closed. A partial hint fails its checksum and is ignored.
            if let Err(error) = store.write_hint_of(&file) {
                tracing::warn!(event = "hint.write_failed", fid, error = %error);
            }
        }
        tracing::info!(
            event = "store.opened",
            dir = %dir.display(),
            keys = store.index.len(),
            datafiles = store.files.read().values().filter(|f| f.is_sealed()).count(),
            elapsed_ms = started.elapsed().as_millis() as u64,
        );
        Ok(store)
    }

    /// Reads and checks the record of type `kind` (metadata, commit) recovery found at `at`;
    /// returns its value.
    fn read_record_at(&self, at: RecordAt, kind: RecordType) -> Result<Vec<u8>, StorageError> {
        let file = self.files.read()[&at.fid].clone();
        let path = file.file_name().path_in(&self.dir);
        let mut buf = vec![0u8; format::padded(u64::from(at.size)) as usize];
        file.handle
            .read_exact_at(&mut buf, at.offset)
            .map_err(|e| StorageError::io(&path, e))?;
        match format::decode(&buf) {
            Ok(r) if r.kind == kind && r.seq == at.seq => Ok(r.value.to_vec()),
            Ok(_) => Err(StorageError::corrupted(
                &path,
                at.offset,
                format!("{kind:?} record does not match its hint"),
            )),
            Err(e) => Err(StorageError::corrupted(&path, at.offset, e.to_string())),
        }
    }

    /// Sets every file's live and dead counters from the settled index and the totals seen.
    fn settle_counters(&self, totals: &HashMap<u64, FileTotals>) {
        let files = self.files.read();
        let mut value_bytes = 0;
        self.index.for_each_location(&mut |key, location| {
            files[&u64::from(location.fid)].add_live(u64::from(location.size));
            value_bytes += value_len(key, location);
        });
        self.live_value_bytes.store(value_bytes, Ordering::Relaxed);
        for (fid, file) in files.iter() {
            let Some(t) = totals.get(fid) else { continue };
            let live = file.counts();
            file.add_dead(t.docs - live.live_count, t.doc_bytes - live.live_bytes);
            file.add_dead(0, t.group_marker_bytes);
            file.add_markers(t.tombstones, t.marker_bytes);
        }
    }
}

/// Loads a datafile's entries from its hint; false if the hint is unusable.
fn load_hint(
    io: &dyn FileIo,
    dir: &Path,
    fid: u64,
    datafile_len: u64,
    resolver: &mut Resolver,
) -> Result<bool, StorageError> {
    let path = FileName::Hint(fid).path_in(dir);
    let handle = io.open(&path).map_err(|e| StorageError::io(&path, e))?;
    let len = handle.len().map_err(|e| StorageError::io(&path, e))?;
    // A hint is far smaller than its datafile (an entry per record, without the value); a
    // larger one is not read into memory.
    if len > datafile_len.saturating_mul(2).saturating_add(64) {
        tracing::warn!(event = "hint.invalid", path = %path.display(), reason = "size");
        return Ok(false);
    }
    let mut bytes = vec![0u8; len as usize];
    handle
        .read_exact_at(&mut bytes, 0)
        .map_err(|e| StorageError::io(&path, e))?;
    let hint = match hint::parse(&bytes) {
        Ok(hint) if hint.fid == fid && hint.datafile_len == datafile_len => hint,
        Ok(_) => {
            tracing::warn!(event = "hint.mismatch", path = %path.display());
            return Ok(false);
        }
        Err(reason) => {
            tracing::warn!(event = "hint.invalid", path = %path.display(), reason);
            return Ok(false);
        }
    };
    resolver.index.reserve(hint.entries.len());
    // A hint's checksum only says it is the hint that was written; its entries must also fit
    // the datafile and the record format before the index trusts them.
    let fits = |e: &HintEntry<'_>| {
        e.offset.is_multiple_of(format::ALIGN)
            && e.offset >= format::FILE_HEADER_RECORD_SIZE
            && e.offset
                .checked_add(format::padded(u64::from(e.size)))
                .is_some_and(|end| end <= datafile_len)
            && u64::from(e.size) >= (format::PREFIX_SIZE + e.key.len()) as u64
            && e.seq <= format::SEQ_MAX
    };
    // Entries are in datafile order, one record each: they may not overlap.
    let ordered = hint.entries.windows(2).all(|pair| {
        pair[0]
            .offset
            .checked_add(format::padded(u64::from(pair[0].size)))
            .is_some_and(|end| end <= pair[1].offset)
    });
    if !hint.entries.iter().all(fits) || !ordered {
        tracing::warn!(event = "hint.invalid", path = %path.display(), reason = "entry");
        return Ok(false);
    }
    for e in &hint.entries {
        resolver.apply(fid, e);
    }
    Ok(true)
}

/// Scans a sealed datafile strictly: every record must verify and the last must be a footer.
fn scan_datafile(
    handle: &dyn FileHandle,
    fid: u64,
    len: u64,
    dir: &Path,
    resolver: &mut Resolver,
) -> Result<(), StorageError> {
    let path = FileName::Datafile(fid).path_in(dir);
    let mut last = None;
    // A sealed datafile holds whole groups only: a journal is handed off only before a group's
    // marker, compaction and salvage drop markers.
    let mut groups = GroupReader::new(true);
    let outcome = crate::scan::scan(
        handle,
        FILE_HEADER_RECORD_SIZE,
        len,
        &mut |offset, r| {
            last = Some(r.kind);
            groups
                .push(offset, &r)
                .map_err(|reason| StorageError::corrupted(&path, offset, reason))?;
            resolver.apply(fid, &entry_of(offset, &r));
            Ok(())
        },
        &|e| StorageError::io(&path, e),
    )?;
    if let Some((offset, error)) = outcome.bad {
        return Err(StorageError::corrupted(&path, offset, error.to_string()));
    }
    if last != Some(RecordType::Footer) {
        return Err(StorageError::corrupted(
            &path,
            len,
            "sealed datafile has no footer",
        ));
    }
    Ok(())
}

/// Every file the manifest lists must be on disk, unless a datafile on disk supersedes it.
fn check_listed_files(
    io: &dyn FileIo,
    dir: &Path,
    listed: &[u64],
    listing: &Listing,
    superseded: &BTreeSet<u64>,
) -> Result<(), StorageError> {
    for fid in listed {
        let present = listing.datafiles.contains(fid) || listing.journals.contains(fid);
        if present || superseded.contains(fid) {
            continue;
        }
        let set_aside = [FileName::Journal(*fid), FileName::Datafile(*fid)]
            .into_iter()
            .map(|name| dir.join(format!("{}{}", name.name(), crate::salvage::CORRUPT_SUFFIX)))
            .find(|path| io.exists(path));
        if let Some(path) = set_aside {
            return Err(StorageError::corrupted(
                &path,
                0,
                "an interrupted salvage set this damaged file aside; open with salvage \
                 (--database.ignore-datafile-errors) to finish it",
            ));
        }
        return Err(StorageError::corrupted(
            &FileName::Datafile(*fid).path_in(dir),
            0,
            format!(
                "file {fid} is missing (neither journal-{fid}.db nor datafile-{fid}.db \
                 exists, and no datafile supersedes it), but the store's manifest lists it: \
                 its documents would be lost"
            ),
        ));
    }
    Ok(())
}
