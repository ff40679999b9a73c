//! [`StorageError`]: what can go wrong below the document layer.

use std::path::PathBuf;

use quince_errors::{ArangoError, ErrorCode, HasErrorCode};

/// An operating error of the storage engine. It knows nothing about HTTP.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// An I/O call failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file the call was about.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A file that must be whole is not (a sealed datafile, a hint file with a bad checksum is
    /// not this: hints are rebuilt).
    #[error("corrupted file {path} at offset {offset}: {reason}")]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// Where the bad bytes start.
        offset: u64,
        /// What check failed.
        reason: String,
    },
    /// The disk is full; the store stays readable and refuses writes until reopened.
    #[error("filesystem full while writing {path}")]
    Full {
        /// The file being written.
        path: PathBuf,
    },
    /// An earlier write or fsync failed; the store refuses writes until it is reopened.
    #[error("store is read-only after an earlier I/O failure: {reason}")]
    Poisoned {
        /// The first failure, as text.
        reason: String,
    },
    /// The store is closing or closed.
    #[error("store is shutting down")]
    ShuttingDown,
    /// The store was deleted (its collection dropped) while the call ran.
    #[error("collection or view not found: it was dropped")]
    Deleted,
    /// A record would not fit in any journal (larger than the 2 GiB marker bound).
    #[error("record of {size} bytes is too large")]
    RecordTooLarge {
        /// The encoded size.
        size: u64,
    },
}

/// A copy of the same failure, for every caller a failed append or fsync answers (the items of
/// a transaction's part, the waiters of a group commit). `std::io::Error` is not `Clone`; its kind and text
/// are what callers see of it.
impl Clone for StorageError {
    fn clone(&self) -> Self {
        match self {
            StorageError::Io { path, source } => StorageError::Io {
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            StorageError::Corrupted {
                path,
                offset,
                reason,
            } => StorageError::Corrupted {
                path: path.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            StorageError::Full { path } => StorageError::Full { path: path.clone() },
            StorageError::Poisoned { reason } => StorageError::Poisoned {
                reason: reason.clone(),
            },
            StorageError::ShuttingDown => StorageError::ShuttingDown,
            StorageError::Deleted => StorageError::Deleted,
            StorageError::RecordTooLarge { size } => StorageError::RecordTooLarge { size: *size },
        }
    }
}

impl HasErrorCode for StorageError {
    fn error_code(&self) -> ErrorCode {
        match self {
            StorageError::Io { .. } => quince_errors::ARANGO_IO_ERROR,
            StorageError::Corrupted { .. } => quince_errors::ARANGO_CORRUPTED_DATAFILE,
            StorageError::Full { .. } => quince_errors::ARANGO_FILESYSTEM_FULL,
            StorageError::Poisoned { .. } => quince_errors::ARANGO_READ_ONLY,
            StorageError::ShuttingDown => quince_errors::SHUTTING_DOWN,
            StorageError::Deleted => quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND,
            StorageError::RecordTooLarge { .. } => quince_errors::ARANGO_DOCUMENT_TOO_LARGE,
        }
    }
}

impl From<StorageError> for ArangoError {
    fn from(e: StorageError) -> Self {
        let code = e.error_code();
        let err = ArangoError::with_message(code, e.to_string());
        // A poisoned store is a server-side failure the client cannot fix.
        if matches!(e, StorageError::Poisoned { .. }) {
            err.with_status(503)
        } else {
            err
        }
    }
}

impl StorageError {
    /// The error for a failed I/O call on `path`: `Full` for ENOSPC, `Io` otherwise.
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> StorageError {
        if source.kind() == std::io::ErrorKind::StorageFull {
            StorageError::Full {
                path: path.to_path_buf(),
            }
        } else {
            StorageError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    }

    /// A sealed file failed a check.
    pub(crate) fn corrupted(
        path: &std::path::Path,
        offset: u64,
        reason: impl Into<String>,
    ) -> StorageError {
        StorageError::Corrupted {
            path: path.to_path_buf(),
            offset,
            reason: reason.into(),
        }
    }
}
