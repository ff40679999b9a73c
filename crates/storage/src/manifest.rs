//! The store's manifest: the durable list of the files (by fid) that hold its data.
//!
//! What it is: reading and atomically replacing `manifest.db`, one record of type `Manifest`
//! whose value is the fids (u64 each, ascending) of the journals and every sealed datafile whose
//! header and directory entry are durable, and [`FileSet`], the store's open files with the
//! lock that serialises those rewrites. The store rewrites it after every change of that set,
//! and *before* it deletes a file (a spare or a journal the writer created is added before a
//! record in it is acknowledged; a compaction adds its output and drops what it replaced).
//! Recovery checks the directory against it: a file the manifest lists must be there (as a
//! journal or a datafile) unless a datafile that is there supersedes it. So a datafile deleted
//! behind the engine's back, or a lost journal, stops the store from opening instead of
//! silently losing its documents.
//!
//! What it is not: the source of truth about what is *in* the files (records and hints are),
//! nor of which files exist beyond it: files newer than the manifest (a journal the writer
//! created whose first round had not named it yet, a compaction output committed a moment
//! before) are normal after a crash and recovery takes them.
//!
//! Invariants: the manifest is replaced by writing `manifest.db.tmp`, syncing it, renaming it
//! over `manifest.db` and syncing the directory, so a crash leaves the old or the new list whole;
//! it is checksummed like every record; a file leaves the manifest before it leaves the disk.

use std::collections::BTreeMap;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::format::{self, RecordType};
use crate::io::FileIo;

/// A store's open journals and datafiles by fid, with the manifest that names them; shared by
/// the store and its group commit (whose rounds name a journal the writer created before they
/// acknowledge a record in it). Derefs to the file map.
pub(crate) struct FileSet {
    files: RwLock<BTreeMap<u64, Arc<DataFile>>>,
    /// Serialises rewrites of the manifest; holds the fids the manifest on disk names (`None`:
    /// not known to match, after a failed rewrite or a recovery that could not write one).
    pub(crate) listed: Mutex<Option<Vec<u64>>>,
    /// A file was removed without a directory fsync (a journal start that failed): the next
    /// group-commit round fsyncs the directory before it acknowledges anything.
    dir_dirty: AtomicBool,
    io: Arc<dyn FileIo>,
    dir: PathBuf,
}

impl Deref for FileSet {
    type Target = RwLock<BTreeMap<u64, Arc<DataFile>>>;

    fn deref(&self) -> &Self::Target {
        &self.files
    }
}

impl FileSet {
    /// An empty set for the store in `dir`.
    pub(crate) fn new(io: Arc<dyn FileIo>, dir: &Path) -> FileSet {
        FileSet {
            files: RwLock::new(BTreeMap::new()),
            listed: Mutex::new(None),
            dir_dirty: AtomicBool::new(false),
            io,
            dir: dir.to_path_buf(),
        }
    }

    /// The fids the manifest should name: every file whose header and directory entry are
    /// durable (all but a journal the writer created that nothing has made durable yet).
    pub(crate) fn listable(&self) -> Vec<u64> {
        let files = self.files.read();
        files
            .values()
            .filter(|f| f.entry_durable())
            .map(|f| f.fid)
            .collect()
    }

    /// Rewrites the manifest from the current file set (call after changing it, before
    /// deleting any file that left it).
    pub(crate) fn write_manifest(&self) -> Result<(), WriteFailure> {
        let mut listed = self.listed.lock();
        let fids = self.listable();
        match write(self.io.as_ref(), &self.dir, &fids) {
            Ok(()) => {
                *listed = Some(fids);
                Ok(())
            }
            Err(failure) => {
                // Before the rename the old list is still the one on disk; after it, either
                // list may be, so the next refresh rewrites it whatever the files are.
                if !failure.old_kept {
                    *listed = None;
                }
                Err(failure)
            }
        }
    }

    /// Takes `fid` out of the file set when the manifest on disk is known not to name it; true
    /// if it did. Done under the manifest's lock, so no rewrite can name the file afterwards;
    /// false (and nothing changed) when the manifest may name it.
    pub(crate) fn forget_unlisted(&self, fid: u64) -> bool {
        let listed = self.listed.lock();
        match listed.as_deref() {
            Some(fids) if !fids.contains(&fid) => {
                self.files.write().remove(&fid);
                true
            }
            _ => false,
        }
    }

    /// Records that a file was removed without a directory fsync.
    pub(crate) fn mark_dir_dirty(&self) {
        self.dir_dirty.store(true, Ordering::Release);
    }

    /// True (once) when a removal awaits a directory fsync; the caller fsyncs the directory.
    pub(crate) fn take_dir_dirty(&self) -> bool {
        self.dir_dirty.swap(false, Ordering::AcqRel)
    }

    /// The store's file system.
    pub(crate) fn io(&self) -> &dyn FileIo {
        self.io.as_ref()
    }

    /// Rewrites the manifest only when it does not name exactly the listable files.
    pub(crate) fn refresh_manifest(&self) -> Result<(), WriteFailure> {
        if self.listed.lock().as_deref() == Some(&self.listable()[..]) {
            return Ok(());
        }
        self.write_manifest()
    }
}

/// The manifest's file name.
pub const MANIFEST_FILE: &str = "manifest.db";

/// The name it is written under before the rename makes it current.
pub const MANIFEST_TEMP_FILE: &str = "manifest.db.tmp";

/// The longest manifest read back (8 bytes per file: a million files).
const MANIFEST_BYTES_MAX: u64 = 8 << 20;

/// The manifest's path in `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join(MANIFEST_FILE)
}

/// A manifest rewrite that failed.
#[derive(Debug)]
pub struct WriteFailure {
    /// What failed.
    pub error: StorageError,
    /// True when the failure came before the rename: the old manifest is still the current
    /// one, whole (a leftover `manifest.db.tmp` is never read and is removed by the next write).
    pub old_kept: bool,
}

/// Replaces the manifest of `dir` with `fids`, durably.
pub fn write(io: &dyn FileIo, dir: &Path, fids: &[u64]) -> Result<(), WriteFailure> {
    let temp = dir.join(MANIFEST_TEMP_FILE);
    let before = |e| WriteFailure {
        error: StorageError::io(&temp, e),
        old_kept: true,
    };
    if io.exists(&temp) {
        // An earlier write that never became current (it was not renamed yet).
        io.remove_file(&temp).map_err(before)?;
    }
    let payload: Vec<u8> = fids.iter().flat_map(|fid| fid.to_le_bytes()).collect();
    let bytes = format::encode(RecordType::Manifest, 0, 0, &[], &payload);
    let handle = io.create_new(&temp).map_err(before)?;
    handle.write_all_at(&bytes, 0).map_err(before)?;
    handle.sync_data().map_err(before)?;
    drop(handle);
    let path = path_in(dir);
    // A rename is atomic: when it fails, the old manifest is still the current one.
    io.rename(&temp, &path).map_err(|e| WriteFailure {
        error: StorageError::io(&path, e),
        old_kept: true,
    })?;
    io.sync_dir(dir).map_err(|e| WriteFailure {
        error: StorageError::io(dir, e),
        old_kept: false,
    })
}

/// The fids the manifest of `dir` lists; `None` when there is no manifest.
pub fn read(io: &dyn FileIo, dir: &Path) -> Result<Option<Vec<u64>>, StorageError> {
    let path = path_in(dir);
    if !io.exists(&path) {
        return Ok(None);
    }
    let io_err = |e| StorageError::io(&path, e);
    let handle = io.open(&path).map_err(io_err)?;
    let len = handle.len().map_err(io_err)?;
    if len > MANIFEST_BYTES_MAX {
        return Err(StorageError::corrupted(&path, 0, "manifest too large"));
    }
    let mut bytes = vec![0u8; len as usize];
    handle.read_exact_at(&mut bytes, 0).map_err(io_err)?;
    let record = format::decode(&bytes)
        .map_err(|e| StorageError::corrupted(&path, 0, format!("manifest: {e}")))?;
    if record.kind != RecordType::Manifest || record.padded_size() != len {
        return Err(StorageError::corrupted(
            &path,
            0,
            "manifest is not one manifest record",
        ));
    }
    let fids = format::parse_fids(record.value)
        .map_err(|e| StorageError::corrupted(&path, 0, format!("manifest: {e}")))?;
    Ok(Some(fids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimFileIo;

    #[test]
    fn round_trips_and_survives_a_crash_whole() {
        let io = SimFileIo::new();
        let dir = Path::new("/s");
        io.create_dir_all(dir).unwrap();
        assert_eq!(read(&io, dir).unwrap(), None);
        write(&io, dir, &[1, 4, 9]).unwrap();
        assert_eq!(read(&io, dir).unwrap(), Some(vec![1, 4, 9]));
        write(&io, dir, &[9, 10]).unwrap();
        let after = io.crash(3, true);
        assert_eq!(read(&after, dir).unwrap(), Some(vec![9, 10]));
    }

    #[test]
    fn a_damaged_manifest_is_corruption() {
        let io = SimFileIo::new();
        let dir = Path::new("/s");
        io.create_dir_all(dir).unwrap();
        write(&io, dir, &[2, 3]).unwrap();
        io.flip_byte(&path_in(dir), 37);
        let err = read(&io, dir).unwrap_err();
        assert!(matches!(err, StorageError::Corrupted { .. }), "{err}");
    }
}
