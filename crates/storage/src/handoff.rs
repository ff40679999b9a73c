//! The background half of a journal's life: the spare journal made ahead of need, and the seal
//! of a full journal that the writer handed off.
//!
//! What it is: methods of [`Store`] that `maintain` (every 100 ms, one thread per catalog),
//! `rotate` and `close` call with the upkeep lock held, never the writer lock, so that every
//! fsync of a journal's start and end happens off the request path:
//! - [`Store::finish_seals`]: for each handed-off journal, oldest first, fsync it (footer
//!   included), rename it to `datafile-<fid>.db`, fsync the directory, queue its hint, and
//!   tell group commit (which raises `synced` to its last record);
//! - [`Store::settle_entries`]: fsync the header and the directory of a journal the writer had
//!   to create itself (no spare was ready), so the manifest may name it;
//! - [`Store::prepare_spare`]: create the next journal (`spare-<fid>.db`, header, fsync,
//!   rename to `journal-<fid>.db`, directory fsync), name it in the manifest, and leave it for
//!   the writer to take without waiting for the disk (it appends the link record only);
//! - [`Store::refresh_manifest`]: rewrite the manifest when the files it should name changed.
//!
//! What it is not: the writer. The writer (`journal.rs`) appends the footer, hands the journal
//! to group commit and takes the spare, all under the writer lock and without an fsync.
//!
//! Invariants: the spare is only installed when its fid is above every fid the writer used, so
//! journals become active in fid order (recovery reads the chain of journals in that order); a
//! spare that lost that race is taken out of the manifest before its file is removed (it never
//! held a record); a journal is renamed to a datafile only after an fsync covered all of it; a
//! failed fsync, rename or manifest rewrite poisons the store, except that a spare that cannot
//! be created for lack of space is logged and tried again on the next pass (the writer then
//! creates its journal itself, and answers `Full` if that fails too).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::datafile::{DataFile, FileName};
use crate::error::StorageError;
use crate::store::Store;

impl Store {
    /// Seals every handed-off journal: fsync (through group commit), rename, directory fsync,
    /// hint queued. Stops at the first failure, which has poisoned the store.
    pub(crate) fn finish_seals(&self) -> Result<(), StorageError> {
        for (journal, _) in self.group_commit.handed_off() {
            // Every journal handed off before this one is sealed (fsynced) already; this fsync
            // covers the rest of its records and its footer.
            let from = FileName::Journal(journal.fid).path_in(&self.dir);
            journal
                .handle
                .sync_data()
                .map_err(|e| self.poison.poison(StorageError::io(&from, e)))?;
            self.counters.syncs.fetch_add(1, Ordering::Relaxed);
            let to = FileName::Datafile(journal.fid).path_in(&self.dir);
            self.io
                .rename(&from, &to)
                .map_err(|e| self.poison.poison(StorageError::io(&from, e)))?;
            journal.seal();
            self.io
                .sync_dir(&self.dir)
                .map_err(|e| self.poison.poison(StorageError::io(&self.dir, e)))?;
            journal.set_entry_durable(true);
            // Raises `synced` to its last record: everything up to it is durable now.
            self.group_commit.sealed(journal.fid);
            self.hints_pending.lock().push(journal);
            self.counters.seals.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Makes durable the header and directory entry of every journal the writer created
    /// without (so the manifest may name it). A failed fsync poisons the store.
    pub(crate) fn settle_entries(&self) -> Result<(), StorageError> {
        let fresh: Vec<Arc<DataFile>> = self
            .files
            .read()
            .values()
            .filter(|f| !f.entry_durable())
            .cloned()
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        for file in &fresh {
            let path = file.file_name().path_in(&self.dir);
            file.handle
                .sync_data()
                .map_err(|e| self.poison.poison(StorageError::io(&path, e)))?;
            self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        }
        self.io
            .sync_dir(&self.dir)
            .map_err(|e| self.poison.poison(StorageError::io(&self.dir, e)))?;
        fresh.iter().for_each(|f| f.set_entry_durable(true));
        Ok(())
    }

    /// Creates the spare journal if there is none. A full disk (while creating it, or while
    /// rewriting the manifest to name it, when the old manifest stayed current) is logged and
    /// leaves things as they were; any other failure poisons the store.
    pub(crate) fn prepare_spare(&self) -> Result<(), StorageError> {
        if self.spare_fid.load(Ordering::Relaxed) != 0 {
            return Ok(());
        }
        let fid = self.fid_next.fetch_add(1, Ordering::Relaxed);
        let capacity = self.journal_size.load(Ordering::Relaxed);
        let spare = match self.create_journal(fid, capacity, None) {
            Ok(spare) => spare,
            Err(e @ StorageError::Full { .. }) if self.poison.reason().is_none() => {
                self.forget_half_made(fid)?;
                tracing::debug!(event = "journal.spare_failed", fid, error = %e);
                return Ok(());
            }
            Err(e) => return Err(self.poison.poison(e)),
        };
        match self.files.refresh_manifest() {
            Ok(()) => {}
            // The spare is durable but the manifest cannot name it, and the old manifest is
            // still current: the spare holds its header only and nothing names it, so it is
            // given up like one that could not be created.
            Err(failure)
                if failure.old_kept
                    && matches!(failure.error, StorageError::Full { .. })
                    && self.poison.reason().is_none() =>
            {
                // Unless a group-commit round named it meanwhile (then it is a spare like any
                // other).
                if self.files.forget_unlisted(fid) {
                    self.forget_half_made(fid)?;
                    tracing::debug!(event = "journal.spare_failed", fid, error = %failure.error);
                    return Ok(());
                }
            }
            Err(failure) => return Err(self.poison.poison(failure.error)),
        }
        let installed = {
            let mut writer = self.writer.lock();
            let fits = writer.spare.is_none() && fid > writer.fid_last;
            if fits {
                writer.spare = Some(spare.clone());
                self.spare_fid.store(fid, Ordering::Relaxed);
            }
            fits
        };
        if !installed {
            // The writer created a newer journal while this one was made: out of the manifest,
            // then off the disk (it holds its header only).
            self.files.write().remove(&fid);
            self.refresh_manifest()?;
            let path = FileName::Journal(fid).path_in(&self.dir);
            self.io
                .remove_file(&path)
                .map_err(|e| self.poison.poison(StorageError::io(&path, e)))?;
            self.io
                .sync_dir(&self.dir)
                .map_err(|e| self.poison.poison(StorageError::io(&self.dir, e)))?;
        }
        Ok(())
    }

    /// Rewrites the manifest when the files it should name (every file whose entry is durable)
    /// are not the ones it names. A failure poisons the store.
    pub(crate) fn refresh_manifest(&self) -> Result<(), StorageError> {
        self.files
            .refresh_manifest()
            .map_err(|failure| self.poison.poison(failure.error))
    }
}
