//! [`OsFileIo`]: the real file system, through `std::fs` and positional I/O.
//!
//! What it is: a thin adapter; every trait call is one or a few system calls.
//! What it is not: buffered. Nothing is held in user space, so a killed process loses nothing
//! that a `write_all_at` already handed to the kernel.
//! Invariants: directory durability is explicit (`sync_dir` opens the directory and fsyncs it);
//! files are created readable and writable by their owner only (0600), directories 0700: a data
//! directory holds user accounts' password hashes.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::{FileHandle, FileIo};

/// The permissions of every file the engine creates: its owner's only.
pub const FILE_MODE: u32 = 0o600;

/// The permissions of every directory the engine creates: its owner's only.
pub const DIR_MODE: u32 = 0o700;

/// The operating system's file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct OsFileIo;

impl OsFileIo {
    /// A new handle on the real file system.
    pub fn new() -> OsFileIo {
        OsFileIo
    }
}

/// One open file of the real file system.
struct OsFile {
    file: File,
}

impl FileHandle for OsFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
}

impl FileIo for OsFileIo {
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Box::new(OsFile { file }))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(path)?;
        Ok(Box::new(OsFile { file }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir_all(path)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(path)? {
            names.push(PathBuf::from(entry?.file_name()));
        }
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }
}
