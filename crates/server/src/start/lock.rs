//! The data directory's lock: one starter per data directory.
//!
//! What it is: [`DataDirLock`], an exclusive `flock` on `DATA-DIR/starter.lock`, held for the
//! starter's life (the kernel drops it when the starter exits, however it exits).
//!
//! What it is not: protection against processes that ignore the lock.
//!
//! Invariants: while one starter holds the lock, a second one on the same directory fails
//! at once with a message naming the directory.

use std::fs::File;
use std::path::Path;

/// The lock file's name.
pub const LOCK_FILE: &str = "starter.lock";

/// The held lock (released when dropped or when the process ends).
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Takes the lock of `dir`, or says which directory is in use.
    pub fn take(dir: &Path) -> Result<DataDirLock, String> {
        let path = dir.join(LOCK_FILE);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        if file.try_lock().is_err() {
            return Err(format!(
                "another quince start runs on the data directory {}",
                dir.display()
            ));
        }
        Ok(DataDirLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_fails_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::take(dir.path()).unwrap();
        assert!(DataDirLock::take(dir.path()).is_err());
        drop(first);
        assert!(DataDirLock::take(dir.path()).is_ok());
    }
}
