//! The small file-I/O trait every byte of the engine goes through, and its implementations.
//!
//! What it is: [`FileIo`] (directory-level calls) and [`FileHandle`] (one open file), with
//! [`OsFileIo`] for the real file system, [`CachedFileIo`] (a bound on the descriptors held over
//! another `FileIo`) and [`SimFileIo`] for tests: an in-memory file system that keeps a
//! *durable* image (what an fsync covered) beside the *live* one, and can inject torn writes,
//! lost unsynced data, failed fsyncs and a full disk.
//!
//! What it is not: a cache or a buffer. Every call reaches the implementation.
//!
//! Invariants: `sync_data` returning `Ok` means every byte written to that handle before the
//! call survives a crash; a directory entry created, renamed or removed survives a crash only
//! after `sync_dir` on its parent returned `Ok`.

use std::io;
use std::path::{Path, PathBuf};

/// One open file. Reads and writes are positional, so a handle can be shared between threads.
// `len` is the file's length, an I/O call; an `is_empty` beside it would invite a second call.
#[allow(clippy::len_without_is_empty)]
pub trait FileHandle: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`, or fails with `UnexpectedEof`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes everything written so far durable (fdatasync).
    fn sync_data(&self) -> io::Result<()>;
    /// The current length in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Cuts or extends the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

/// The directory-level calls of a file system.
pub trait FileIo: Send + Sync + 'static {
    /// Opens an existing file for reading and writing.
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>>;
    /// Creates a new file; fails if it exists.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>>;
    /// Renames a file, replacing the target if it exists.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Removes a directory and everything in it.
    fn remove_dir_all(&self, path: &Path) -> io::Result<()>;
    /// The names of the entries of a directory (files and directories), in no order.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>>;
    /// True if the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Makes the directory's entries (creates, renames, removes) durable.
    fn sync_dir(&self, path: &Path) -> io::Result<()>;
}

mod cached;
mod os;
mod sim;

pub use cached::CachedFileIo;
pub use os::{OsFileIo, DIR_MODE, FILE_MODE};
pub use sim::{SimFileIo, SimStats};
