//! [`DataFile`]: one open journal or datafile with its live/dead counters, and file naming.
//!
//! What it is: the shared, reference-counted handle every reader and writer of a file uses, plus
//! the O(1) bookkeeping that makes `figures` and compaction selection O(files).
//!
//! What it is not: the writer. Appends go through `journal.rs`; this only counts.
//!
//! Invariants: `len` only grows while the file is a journal and is the end of its good prefix;
//! `live_count` is the number of index entries pointing into the file (once recovery settled);
//! counters are adjusted under the index shard lock that made the change, so they never go
//! negative.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::io::FileHandle;

/// What a file in a store's directory is, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileName {
    /// `journal-<fid>.db`: the active journal, a full one handed off, or the spare.
    Journal(u64),
    /// `datafile-<fid>.db`: a sealed datafile.
    Datafile(u64),
    /// `compaction-<fid>.db`: compaction output in progress.
    Compaction(u64),
    /// `datafile-<fid>.hint`: the hint file of a datafile.
    Hint(u64),
    /// `spare-<fid>.db`: a spare journal being made; renamed to `journal-<fid>.db` once its
    /// header is durable, so a journal never lacks its header because a spare was cut short.
    Spare(u64),
}

impl FileName {
    /// Parses a directory entry's name; `None` for names that are not the engine's.
    pub fn parse(name: &str) -> Option<FileName> {
        let (stem, ext) = name.rsplit_once('.')?;
        let (prefix, fid) = stem.rsplit_once('-')?;
        if fid.is_empty() || !fid.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let fid: u64 = fid.parse().ok()?;
        Some(match (prefix, ext) {
            ("journal", "db") => FileName::Journal(fid),
            ("datafile", "db") => FileName::Datafile(fid),
            ("compaction", "db") => FileName::Compaction(fid),
            ("datafile", "hint") => FileName::Hint(fid),
            ("spare", "db") => FileName::Spare(fid),
            _ => return None,
        })
    }

    /// The file's name.
    pub fn name(self) -> String {
        match self {
            FileName::Journal(fid) => format!("journal-{fid}.db"),
            FileName::Datafile(fid) => format!("datafile-{fid}.db"),
            FileName::Compaction(fid) => format!("compaction-{fid}.db"),
            FileName::Hint(fid) => format!("datafile-{fid}.hint"),
            FileName::Spare(fid) => format!("spare-{fid}.db"),
        }
    }

    /// The file's path in `dir`.
    pub fn path_in(self, dir: &Path) -> PathBuf {
        dir.join(self.name())
    }
}

/// One open journal or datafile.
pub struct DataFile {
    /// The file's id.
    pub fid: u64,
    /// The open file; shared by readers, kept open after unlinking while anyone holds it.
    pub handle: Box<dyn FileHandle>,
    sealed: AtomicBool,
    /// The file's header and its directory entry are durable (see [`DataFile::entry_durable`]).
    entry_durable: AtomicBool,
    /// The end of the file's good prefix: readers and scans never look past it.
    pub len: AtomicU64,
    live_count: AtomicU64,
    live_bytes: AtomicU64,
    dead_count: AtomicU64,
    dead_bytes: AtomicU64,
    tombstones: AtomicU64,
    marker_bytes: AtomicU64,
}

/// A snapshot of one file's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileCounts {
    /// Documents the index points to.
    pub live_count: u64,
    /// Their bytes (records, before padding).
    pub live_bytes: u64,
    /// Superseded or removed documents.
    pub dead_count: u64,
    /// Their bytes.
    pub dead_bytes: u64,
    /// Tombstones.
    pub tombstones: u64,
    /// Bytes of tombstones and truncate markers.
    pub marker_bytes: u64,
    /// The file's length.
    pub len: u64,
}

impl DataFile {
    /// The placeholder `Store::active` holds while there is no journal (before the first write
    /// starts one, and after a seal): it keeps no sealed file, which compaction may delete,
    /// open. Syncing it does nothing, which is right: a seal raised `synced` to every record.
    pub(crate) fn no_journal() -> std::sync::Arc<DataFile> {
        std::sync::Arc::new(DataFile::new(0, Box::new(NoFile), false, 0))
    }

    /// A file with zeroed counters.
    pub fn new(fid: u64, handle: Box<dyn FileHandle>, sealed: bool, len: u64) -> DataFile {
        assert!(
            fid <= u64::from(u32::MAX),
            "fids fit in the index's 32 bits"
        );
        DataFile {
            fid,
            handle,
            sealed: AtomicBool::new(sealed),
            entry_durable: AtomicBool::new(true),
            len: AtomicU64::new(len),
            live_count: AtomicU64::new(0),
            live_bytes: AtomicU64::new(0),
            dead_count: AtomicU64::new(0),
            dead_bytes: AtomicU64::new(0),
            tombstones: AtomicU64::new(0),
            marker_bytes: AtomicU64::new(0),
        }
    }

    /// True once the file is a read-only datafile.
    pub fn is_sealed(&self) -> bool {
        self.sealed.load(Ordering::Acquire)
    }

    /// True once the file's header is fsynced and its directory entry is covered by a directory
    /// fsync: only then may the manifest name it, and only then may a write in it be
    /// acknowledged. Every file is born so except a journal the writer had to create itself
    /// (no spare was ready), which the next group-commit round or maintenance pass makes so.
    pub fn entry_durable(&self) -> bool {
        self.entry_durable.load(Ordering::Acquire)
    }

    /// Records whether the file's header and directory entry are durable.
    pub fn set_entry_durable(&self, durable: bool) {
        self.entry_durable.store(durable, Ordering::Release);
    }

    /// Marks the journal sealed.
    pub fn seal(&self) {
        self.sealed.store(true, Ordering::Release);
    }

    /// The file's current name.
    pub fn file_name(&self) -> FileName {
        if self.is_sealed() {
            FileName::Datafile(self.fid)
        } else {
            FileName::Journal(self.fid)
        }
    }

    /// Counts a document the index now points to.
    pub fn add_live(&self, bytes: u64) {
        self.live_count.fetch_add(1, Ordering::Relaxed);
        self.live_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Moves a document from live to dead.
    pub fn kill(&self, bytes: u64) {
        let before = self.live_count.fetch_sub(1, Ordering::Relaxed);
        assert!(before > 0, "file {} has no live document to kill", self.fid);
        self.live_bytes.fetch_sub(bytes, Ordering::Relaxed);
        self.add_dead(1, bytes);
    }

    /// Counts documents that are dead from the start.
    pub fn add_dead(&self, count: u64, bytes: u64) {
        self.dead_count.fetch_add(count, Ordering::Relaxed);
        self.dead_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Moves every live document to dead (truncate).
    pub fn kill_all(&self) {
        let count = self.live_count.swap(0, Ordering::Relaxed);
        let bytes = self.live_bytes.swap(0, Ordering::Relaxed);
        self.add_dead(count, bytes);
    }

    /// Counts `tombstones` tombstones and `bytes` bytes of markers (tombstones and truncate
    /// markers).
    pub fn add_markers(&self, tombstones: u64, bytes: u64) {
        self.tombstones.fetch_add(tombstones, Ordering::Relaxed);
        self.marker_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A snapshot of the counters.
    pub fn counts(&self) -> FileCounts {
        FileCounts {
            live_count: self.live_count.load(Ordering::Relaxed),
            live_bytes: self.live_bytes.load(Ordering::Relaxed),
            dead_count: self.dead_count.load(Ordering::Relaxed),
            dead_bytes: self.dead_bytes.load(Ordering::Relaxed),
            tombstones: self.tombstones.load(Ordering::Relaxed),
            marker_bytes: self.marker_bytes.load(Ordering::Relaxed),
            len: self.len.load(Ordering::Acquire),
        }
    }
}

/// The handle of [`DataFile::no_journal`]: nothing to read or write, nothing to sync.
struct NoFile;

impl FileHandle for NoFile {
    fn read_exact_at(&self, _: &mut [u8], _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no journal yet"))
    }
    fn write_all_at(&self, _: &[u8], _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no journal yet"))
    }
    fn sync_data(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn len(&self) -> std::io::Result<u64> {
        Ok(0)
    }
    fn set_len(&self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("no journal yet"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            FileName::Journal(3),
            FileName::Datafile(12),
            FileName::Compaction(7),
            FileName::Spare(9),
        ] {
            assert_eq!(FileName::parse(&name.name()), Some(name));
        }
        assert_eq!(FileName::parse("datafile-4.hint"), Some(FileName::Hint(4)));
        assert_eq!(FileName::parse("parameter.json"), None);
        assert_eq!(FileName::parse("journal-x.db"), None);
        assert_eq!(FileName::parse("journal--1.db"), None);
    }
}
