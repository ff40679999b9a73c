//! Point-in-time images of stores, for hot backups: what a store holds at one instant, and
//! writing that image into another directory by hard links and prefix copies.
//!
//! What it is: [`Store::pause_upkeep`] (a guard that holds the store's upkeep lock, so no seal,
//! hint write, spare journal, compaction or close changes the store's files while it is held),
//! [`image_together`] (the write barrier: every paused store's writer lock, taken in the order
//! given, while each one's [`StoreImage`] is recorded), [`UpkeepPause::image`] (one store's image
//! alone, for a backup that may be inconsistent across stores), and [`StoreImage::write_to`].
//!
//! What it is not: the backup's layout, its catalog files or its naming (`quince-db` decides
//! those); a copy of records still to come: an image is fixed when it is taken.
//!
//! Invariants:
//! - an image names every file the store held when it was taken: each sealed datafile (with
//!   its hint if one was written) and each journal with its length then. Under the writer lock
//!   no append is half done, so each journal's length ends on a record (a transaction's group
//!   is whole in it, and a transaction spanning several stores is whole in every image taken
//!   together, since its commit holds all of its stores' writer locks);
//! - while a store's upkeep is paused its files keep their names and a sealed datafile is never
//!   deleted, so the files an image names are still there when it is written out;
//! - a datafile and a hint are never written in place once complete (a seal renames a journal,
//!   compaction unlinks, a hint is replaced by remove and create), so [`StoreImage::write_to`]
//!   hard-links them; a journal is appended to, so only its imaged prefix is copied;
//! - the target's manifest names exactly the imaged files; every file, the manifest and the
//!   directory are fsynced before `write_to` returns.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::datafile::FileName;
use crate::error::StorageError;
use crate::io::{OsFileIo, DIR_MODE, FILE_MODE};
use crate::store::Store;

/// A store whose upkeep is paused: no seal, hint, spare, compaction or close runs until it is
/// dropped. Writers are not held by it.
pub struct UpkeepPause<'a> {
    store: &'a Store,
    _upkeep: MutexGuard<'a, Instant>,
}

/// One file of an image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImagedFile {
    /// A sealed datafile, and whether its hint file existed.
    Datafile {
        /// Its fid.
        fid: u64,
        /// Its hint file was there when the image was taken.
        hint: bool,
    },
    /// A journal (active, handed off, or the spare) and the bytes it held.
    Journal {
        /// Its fid.
        fid: u64,
        /// Its length when the image was taken.
        len: u64,
    },
}

/// What a store held at one instant.
#[derive(Clone, Debug)]
pub struct StoreImage {
    /// The store's directory.
    dir: PathBuf,
    /// Its files, by fid.
    files: Vec<ImagedFile>,
}

/// What writing an image produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImageWritten {
    /// Files in the target (the manifest included).
    pub files: u64,
    /// Their bytes (linked files counted whole).
    pub bytes: u64,
}

impl Store {
    /// Pauses the store's upkeep until the guard drops, waiting at most until `deadline` for
    /// upkeep in progress (a compaction waits for running scans); `None` on timeout.
    pub fn pause_upkeep(&self, deadline: Instant) -> Option<UpkeepPause<'_>> {
        let upkeep = self.upkeep.try_lock_until(deadline)?;
        Some(UpkeepPause {
            store: self,
            _upkeep: upkeep,
        })
    }

    /// The image of the store; the caller holds its writer lock and its upkeep.
    fn image_locked(&self) -> Result<StoreImage, StorageError> {
        self.check_writable()?;
        let files = self.files.read();
        let mut imaged = Vec::with_capacity(files.len());
        for file in files.values() {
            if file.is_sealed() {
                let hint = self.io.exists(&FileName::Hint(file.fid).path_in(&self.dir));
                imaged.push(ImagedFile::Datafile {
                    fid: file.fid,
                    hint,
                });
            } else {
                imaged.push(ImagedFile::Journal {
                    fid: file.fid,
                    len: file.len.load(Ordering::Acquire),
                });
            }
        }
        Ok(StoreImage {
            dir: self.dir.clone(),
            files: imaged,
        })
    }
}

impl UpkeepPause<'_> {
    /// This store's image alone (its writer lock taken briefly, waiting at most until
    /// `deadline`; `Ok(None)` on timeout). Images of several stores taken this way one after
    /// the other are each whole but not taken at one instant.
    pub fn image(&self, deadline: Instant) -> Result<Option<StoreImage>, StorageError> {
        let Some(_writer) = self.store.writer.try_lock_until(deadline) else {
            return Ok(None);
        };
        self.store.image_locked().map(Some)
    }
}

/// The images of every paused store at one instant: takes each store's writer lock in the
/// order given (ascending collection id: the order transactions take them in), records each
/// image, and releases them all. Waits at most until `deadline` for any lock (`Ok(None)` on
/// timeout, nothing held). A store that is closed, being deleted or poisoned fails it.
pub fn image_together(
    paused: &[UpkeepPause<'_>],
    deadline: Instant,
) -> Result<Option<Vec<StoreImage>>, StorageError> {
    let mut writers = Vec::with_capacity(paused.len());
    for pause in paused {
        match pause.store.writer.try_lock_until(deadline) {
            Some(writer) => writers.push(writer),
            None => return Ok(None),
        }
    }
    let images = paused
        .iter()
        .map(|pause| pause.store.image_locked())
        .collect::<Result<Vec<_>, _>>()?;
    drop(writers);
    Ok(Some(images))
}

impl StoreImage {
    /// The files of the image.
    pub fn files(&self) -> &[ImagedFile] {
        &self.files
    }

    /// Writes the image into `target` (created; must not exist): hard links for datafiles
    /// and hints, the imaged prefix of each journal copied, a manifest naming exactly these
    /// files; everything fsynced, the directory too. The caller keeps the store's upkeep
    /// paused until this returns.
    pub fn write_to(&self, target: &Path) -> Result<ImageWritten, StorageError> {
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |e| StorageError::io(&path, e)
        };
        std::fs::DirBuilder::new()
            .mode(DIR_MODE)
            .create(target)
            .map_err(io_err(target))?;
        let mut written = ImageWritten::default();
        let mut fids = Vec::with_capacity(self.files.len());
        for file in &self.files {
            match *file {
                ImagedFile::Datafile { fid, hint } => {
                    fids.push(fid);
                    let mut names = vec![FileName::Datafile(fid)];
                    if hint {
                        names.push(FileName::Hint(fid));
                    }
                    for name in names {
                        let from = name.path_in(&self.dir);
                        let to = name.path_in(target);
                        std::fs::hard_link(&from, &to).map_err(io_err(&from))?;
                        written.bytes += std::fs::metadata(&to).map_err(io_err(&to))?.len();
                        written.files += 1;
                    }
                }
                ImagedFile::Journal { fid, len } => {
                    fids.push(fid);
                    let name = FileName::Journal(fid);
                    copy_prefix(&name.path_in(&self.dir), &name.path_in(target), len)?;
                    written.bytes += len;
                    written.files += 1;
                }
            }
        }
        crate::manifest::write(&OsFileIo::new(), target, &fids).map_err(|f| f.error)?;
        written.files += 1;
        written.bytes += std::fs::metadata(crate::manifest::path_in(target))
            .map_err(io_err(target))?
            .len();
        sync_dir(target)?;
        Ok(written)
    }
}

/// True for the names of files that are never written in place once complete (sealed
/// datafiles and hint files), which a backup or a restore may share by a hard link.
pub fn is_immutable_file(name: &str) -> bool {
    matches!(
        FileName::parse(name),
        Some(FileName::Datafile(_) | FileName::Hint(_))
    )
}

/// Copies the first `len` bytes of `from` into a new file `to`, fsynced.
pub fn copy_prefix(from: &Path, to: &Path, len: u64) -> Result<(), StorageError> {
    let source = File::open(from).map_err(|e| StorageError::io(from, e))?;
    let mut target = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(to)
        .map_err(|e| StorageError::io(to, e))?;
    let copied =
        std::io::copy(&mut source.take(len), &mut target).map_err(|e| StorageError::io(to, e))?;
    if copied != len {
        return Err(StorageError::io(
            from,
            std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the file holds {copied} bytes, not the {len} imaged"),
            ),
        ));
    }
    target.flush().map_err(|e| StorageError::io(to, e))?;
    target.sync_all().map_err(|e| StorageError::io(to, e))
}

/// Fsyncs a directory.
pub fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StorageError::io(dir, e))
}
