//! The write path: appending records to the active journal, handing it off when full, taking
//! the next.
//!
//! What it is: methods of [`Store`] that run under the writer lock. Each record is encoded in
//! full and handed to the file in ONE positional write, with no buffering in user space: a
//! killed process loses nothing the kernel accepted. (A transaction's part, `group.rs`, hands
//! the whole records of several writes to the file in one positional write by the same rules;
//! its group is never split across journals.)
//!
//! What it is not: durability, nor the seal. Appends reach the page cache; `sync.rs` makes them
//! durable; `handoff.rs` seals handed-off journals and prepares spares, outside the writer lock.
//!
//! Invariants: nothing here fsyncs (a file or the directory) or rewrites the manifest, so no
//! writer waits for the disk under the writer lock; a failed write poisons the store before
//! anything else is appended, so no record is ever written after a torn one; a full journal is
//! handed off (its footer appended) before its successor takes a record, journals become
//! active in fid order, and each journal the writer takes starts with a link record naming the
//! one handed off before it, so the journals on disk read in fid order are one log: at most one
//! active journal, the handed-off ones before it (each ending with its footer), the spare after
//! it; every record of a sealed datafile is durable (the seal fsyncs before it renames); the
//! index is updated only after the record's write returned.
//!
//! The hint file of a freshly sealed datafile is NOT written under the writer lock: reading back
//! a 32 MiB datafile and writing its hint takes tens of milliseconds, and every writer of the
//! collection would wait for it. The seal queues the datafile in `hints_pending`; the next
//! maintenance pass (or `rotate`, or `close`) writes the hint. A crash before that only costs
//! the next open a scan of that datafile, which then writes the hint itself.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::datafile::{DataFile, FileName};
use crate::error::StorageError;
use crate::format::{self, FileHeader, RecordType};
use crate::hint::{HintBuilder, HintEntry};
use crate::index::Location;
use crate::store::{Store, Writer};

impl Store {
    /// Appends a document record and points the index at it; returns its `seq`.
    pub(crate) fn write_document(
        &self,
        writer: &mut Writer,
        key: &[u8],
        rev: u64,
        value: &[u8],
    ) -> Result<u64, StorageError> {
        let size =
            format::record_size(key.len(), value.len()).ok_or(StorageError::RecordTooLarge {
                size: (key.len() + value.len()) as u64,
            })?;
        let seq = writer.seq_next;
        let bytes = format::encode(RecordType::Document, seq, rev, key, value);
        let (journal, offset) = self.append(writer, &bytes)?;
        let location = Location {
            fid: journal.fid as u32,
            size: size as u32,
            offset,
            seq,
            rev,
        };
        self.index_put(key, location, &journal);
        self.published(writer, seq, rev);
        Ok(seq)
    }

    /// Appends a tombstone and removes the key from the index; returns its `seq`.
    pub(crate) fn write_tombstone(
        &self,
        writer: &mut Writer,
        key: &[u8],
        rev: u64,
    ) -> Result<u64, StorageError> {
        let size = format::record_size(key.len(), 0).ok_or(StorageError::RecordTooLarge {
            size: key.len() as u64,
        })?;
        let seq = writer.seq_next;
        let bytes = format::encode(RecordType::Tombstone, seq, rev, key, &[]);
        let (journal, _) = self.append(writer, &bytes)?;
        journal.add_markers(1, size);
        self.index_remove(key);
        self.published(writer, seq, rev);
        Ok(seq)
    }

    /// Appends a truncate marker and empties the index; returns its `seq`.
    pub(crate) fn write_truncate(
        &self,
        writer: &mut Writer,
        rev: u64,
    ) -> Result<u64, StorageError> {
        let seq = writer.seq_next;
        let bytes = format::encode(RecordType::Truncate, seq, rev, &[], &[]);
        let (journal, _) = self.append(writer, &bytes)?;
        journal.add_markers(0, format::PREFIX_SIZE as u64);
        // Clear first, then count: a compaction re-pointing a key meanwhile either fails (key
        // gone) or counted it live before `kill_all` moves it to dead.
        self.index.clear();
        for file in self.files.read().values() {
            file.kill_all();
        }
        self.live_value_bytes.store(0, Ordering::Relaxed);
        self.published(writer, seq, rev);
        Ok(seq)
    }

    /// Appends a metadata record and makes it the store's metadata; returns its `seq`.
    pub(crate) fn write_meta_locked(
        &self,
        writer: &mut Writer,
        value: &[u8],
    ) -> Result<u64, StorageError> {
        let size = format::record_size(0, value.len()).ok_or(StorageError::RecordTooLarge {
            size: value.len() as u64,
        })?;
        let seq = writer.seq_next;
        let bytes = format::encode(RecordType::Meta, seq, 0, &[], value);
        let (journal, _) = self.append(writer, &bytes)?;
        journal.add_markers(0, size);
        *self.meta.lock() = Some((seq, value.to_vec()));
        self.published(writer, seq, 0);
        Ok(seq)
    }

    /// Bookkeeping after a record with `seq` and `rev` was written.
    pub(crate) fn published(&self, writer: &mut Writer, seq: u64, rev: u64) {
        writer.seq_next = seq + 1;
        writer.records += 1;
        self.seq_written.store(seq, Ordering::Release);
        self.last_tick.fetch_max(rev, Ordering::Relaxed);
    }

    /// Writes one encoded record (or a transaction's whole group, `group.rs`) at the end of the
    /// active journal, rotating first if it would not fit. Returns the journal and the offset.
    pub(crate) fn append(
        &self,
        writer: &mut Writer,
        bytes: &[u8],
    ) -> Result<(Arc<DataFile>, u64), StorageError> {
        let len = bytes.len() as u64;
        let end = self.journal_of(writer)?.len.load(Ordering::Relaxed);
        // A journal with records is sealed when this record and a footer would pass its size;
        // an empty one takes the record anyway, so a record larger than the journal size gets
        // a journal of its own.
        if writer.records > 0 && end + len + format::FOOTER_RECORD_SIZE > writer.capacity {
            self.rotate_locked(writer)?;
        }
        let journal = self.journal_of(writer)?;
        let offset = journal.len.load(Ordering::Relaxed);
        if let Err(e) = journal.handle.write_all_at(bytes, offset) {
            let path = journal.file_name().path_in(&self.dir);
            return Err(self.poison.poison(StorageError::io(&path, e)));
        }
        journal.len.store(offset + len, Ordering::Release);
        self.counters
            .bytes_written
            .fetch_add(len, Ordering::Relaxed);
        Ok((journal, offset))
    }

    /// The active journal, taken first if there is none (a new store, a store reopened
    /// without one, or one whose previous journal was just handed off): the spare journal
    /// `maintain` prepared when there is one, else a journal created here (see
    /// [`Store::start_journal`]). Fails when the store is poisoned, or when no journal can be
    /// started. Never fsyncs.
    pub(crate) fn journal_of(&self, writer: &mut Writer) -> Result<Arc<DataFile>, StorageError> {
        self.poison.check()?;
        if let Some(journal) = &writer.journal {
            return Ok(journal.clone());
        }
        let previous = writer.fid_last;
        let journal = match writer.spare.take() {
            Some(spare) => {
                self.spare_fid.store(0, Ordering::Relaxed);
                // The link to the journal handed off before, as its first record.
                let link = format::encode_link(previous);
                let offset = spare.len.load(Ordering::Relaxed);
                if let Err(e) = spare.handle.write_all_at(&link, offset) {
                    let path = spare.file_name().path_in(&self.dir);
                    return Err(self.poison.poison(StorageError::io(&path, e)));
                }
                spare
                    .len
                    .store(offset + link.len() as u64, Ordering::Release);
                spare
            }
            None => self.start_journal(previous)?,
        };
        assert!(
            journal.fid > previous,
            "journals become active in the order of their fids"
        );
        writer.fid_last = journal.fid;
        *self.active.write() = journal.clone();
        writer.capacity = self.journal_size.load(Ordering::Relaxed);
        writer.journal = Some(journal.clone());
        writer.records = 0;
        Ok(journal)
    }

    /// Hands the active journal off for sealing: appends its footer (to the page cache) and
    /// gives it to group commit, whose rounds fsync it before they acknowledge anything newer,
    /// and to `maintain`, which renames it to a datafile once an fsync covered it. The next
    /// write takes the next journal. No fsync, no rename: nothing here waits for the disk.
    pub(crate) fn rotate_locked(&self, writer: &mut Writer) -> Result<(), StorageError> {
        let journal = self.journal_of(writer)?;
        let offset = journal.len.load(Ordering::Relaxed);
        let footer = format::encode_footer(writer.records);
        if let Err(e) = journal.handle.write_all_at(&footer, offset) {
            writer.journal = None;
            *self.active.write() = DataFile::no_journal();
            let path = journal.file_name().path_in(&self.dir);
            return Err(self.poison.poison(StorageError::io(&path, e)));
        }
        journal
            .len
            .store(offset + footer.len() as u64, Ordering::Release);
        // A group followed by a footer is no longer the end of the log: it cannot be pending.
        *self.pending.lock() = None;
        // Every record written so far is in this journal or an older one.
        self.group_commit
            .hand_off(journal, self.seq_written.load(Ordering::Acquire));
        *self.active.write() = DataFile::no_journal();
        writer.journal = None;
        writer.records = 0;
        Ok(())
    }

    /// Creates the next journal under the writer lock because no spare was ready: the file and
    /// its header, in the page cache only. Its header and directory entry become durable with
    /// the first group-commit round that acknowledges a record in it (or a later one), or the
    /// next maintenance pass, which also names it in the manifest; until then it is a file
    /// newer than the manifest, which recovery takes.
    ///
    /// A full disk while creating the journal is not a failure of what is stored: the
    /// half-made file (no record) is removed, its fid given back, `Full` returned and the store
    /// stays writable, so a write after space was freed starts it again; a server whose
    /// journals were all sealed can open on a full disk, serve reads and drop collections. Any
    /// other failure poisons the store.
    fn start_journal(&self, previous: u64) -> Result<Arc<DataFile>, StorageError> {
        let fid = self.fid_next.fetch_add(1, Ordering::Relaxed);
        let capacity = self.journal_size.load(Ordering::Relaxed);
        match self.create_journal(fid, capacity, Some(previous)) {
            Ok(journal) => Ok(journal),
            Err(e @ StorageError::Full { .. }) if self.poison.reason().is_none() => {
                self.forget_half_made(fid)?;
                tracing::warn!(event = "journal.start_failed", fid, error = %e);
                Err(e)
            }
            Err(e) => Err(self.poison.poison(e)),
        }
    }

    /// Removes the half-made journal `fid` (never in the file set, never listed) and gives its
    /// fid back unless another file took the next one meanwhile, so retries on a full disk do
    /// not use up the 32-bit fid space.
    ///
    /// The removal is not made durable here (that would be a directory fsync under the writer
    /// lock): the directory is marked dirty, and the next group-commit round fsyncs it before it
    /// acknowledges anything. Until then a crash may bring the half-made journal back; no write
    /// after it can have been acknowledged, so recovery may read it as the end of the log.
    pub(crate) fn forget_half_made(&self, fid: u64) -> Result<(), StorageError> {
        for name in [FileName::Journal(fid), FileName::Spare(fid)] {
            let path = name.path_in(&self.dir);
            match self.io.remove_file(&path) {
                Ok(()) => Ok(()),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(err) => Err(self.poison.poison(StorageError::io(&path, err))),
            }?;
        }
        self.files.mark_dir_dirty();
        let _ = self
            .fid_next
            .compare_exchange(fid + 1, fid, Ordering::Relaxed, Ordering::Relaxed);
        Ok(())
    }

    /// Writes the hint files still owed for sealed datafiles, outside the writer lock, with the
    /// upkeep lock held (so a closing store waits for it). A hint only speeds up the next open,
    /// so a failure (a full disk) is logged, not returned: the next open scans that datafile
    /// instead and retries.
    pub(crate) fn write_pending_hints_locked(&self) {
        let pending = std::mem::take(&mut *self.hints_pending.lock());
        for file in pending {
            // Compaction may have replaced the datafile meanwhile; its hint went with it.
            if !self.files.read().contains_key(&file.fid) {
                continue;
            }
            if let Err(error) = self.write_hint_of(&file) {
                tracing::warn!(event = "hint.write_failed", fid = file.fid, error = %error);
            }
        }
    }

    /// Creates and heads a new journal and adds it to the store's files. Without a `link` (a
    /// spare, made by `maintain`) it is made as `spare-<fid>.db`, its header fsynced, renamed to
    /// `journal-<fid>.db` and the directory fsynced, and a failed fsync or rename poisons the
    /// store; with one (the writer's own, see [`Store::start_journal`]) the header and the link
    /// to the journal handed off before go out in one write, and nothing is fsynced.
    pub(crate) fn create_journal(
        &self,
        fid: u64,
        capacity: u64,
        link: Option<u64>,
    ) -> Result<Arc<DataFile>, StorageError> {
        let durable = link.is_none();
        let journal_path = FileName::Journal(fid).path_in(&self.dir);
        // A spare is made under a temporary name and renamed once its header is durable.
        let path = match durable {
            true => FileName::Spare(fid).path_in(&self.dir),
            false => journal_path.clone(),
        };
        let io_err = |e| StorageError::io(&path, e);
        let handle = self.io.create_new(&path).map_err(io_err)?;
        let mut header = format::encode_file_header(FileHeader {
            fid,
            maximal_size: capacity,
        });
        if let Some(previous) = link {
            // One write: a full disk fails the start before anything is in doubt.
            header.extend_from_slice(&format::encode_link(previous));
        }
        handle.write_all_at(&header, 0).map_err(io_err)?;
        if durable {
            handle
                .sync_data()
                .map_err(|e| self.poison.poison(io_err(e)))?;
            self.counters.syncs.fetch_add(1, Ordering::Relaxed);
            self.io
                .rename(&path, &journal_path)
                .map_err(|e| self.poison.poison(io_err(e)))?;
            self.io
                .sync_dir(&self.dir)
                .map_err(|e| self.poison.poison(StorageError::io(&self.dir, e)))?;
        }
        let file = Arc::new(DataFile::new(fid, handle, false, header.len() as u64));
        file.set_entry_durable(durable);
        self.files.write().insert(fid, file.clone());
        Ok(file)
    }

    /// Writes `datafile-<fid>.hint` for a sealed datafile by reading it back (which also
    /// verifies it), then fsyncs the hint and the directory.
    pub(crate) fn write_hint_of(&self, file: &DataFile) -> Result<(), StorageError> {
        let path = FileName::Datafile(file.fid).path_in(&self.dir);
        let len = file.len.load(Ordering::Acquire);
        let mut builder = HintBuilder::new();
        let outcome = crate::scan::scan(
            file.handle.as_ref(),
            format::FILE_HEADER_RECORD_SIZE,
            len,
            &mut |offset, record| {
                if matches!(
                    record.kind,
                    RecordType::Document
                        | RecordType::Tombstone
                        | RecordType::Truncate
                        | RecordType::Meta
                        | RecordType::GroupMarker
                        | RecordType::Commit
                ) {
                    builder.push(&HintEntry {
                        kind: record.kind,
                        seq: record.seq,
                        rev: record.rev,
                        offset,
                        size: record.size,
                        key: record.key,
                    });
                }
                Ok(())
            },
            &|e| StorageError::io(&path, e),
        )?;
        if let Some((offset, error)) = outcome.bad {
            return Err(StorageError::corrupted(&path, offset, error.to_string()));
        }
        self.write_hint_file(file.fid, &builder.finish(file.fid, len))
    }

    /// Replaces the hint file of `fid` with `bytes`, durably.
    pub(crate) fn write_hint_file(&self, fid: u64, bytes: &[u8]) -> Result<(), StorageError> {
        let path = FileName::Hint(fid).path_in(&self.dir);
        let io_err = |e| StorageError::io(&path, e);
        if self.io.exists(&path) {
            self.io.remove_file(&path).map_err(io_err)?;
        }
        let handle = self.io.create_new(&path).map_err(io_err)?;
        handle.write_all_at(bytes, 0).map_err(io_err)?;
        // A hint is only a cache, but a failed fsync leaves the file system's state unknown
        // (the directory's included): the store stops writing, as after any failed fsync.
        handle
            .sync_data()
            .map_err(|e| self.poison.poison(io_err(e)))?;
        self.io
            .sync_dir(&self.dir)
            .map_err(|e| self.poison.poison(StorageError::io(&self.dir, e)))
    }
}
