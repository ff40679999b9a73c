//! [`Poison`]: the store's read-only latch after a failed write or fsync.
//!
//! What it is: a flag plus the first failure's text. Once set it stays set for the life of the
//! `Store`; only reopening (which recovers from what is on disk) clears it.
//! What it is not: a retry policy. After a failed fsync the kernel may have dropped the dirty
//! pages, so retrying could report success for data that is gone; we never retry.
//! Invariant: the first reason wins; later failures do not overwrite it.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use crate::error::StorageError;

/// The read-only latch.
#[derive(Default)]
pub struct Poison {
    set: AtomicBool,
    reason: Mutex<Option<String>>,
}

impl Poison {
    /// Latches the store read-only because of `error`, and hands the error back.
    pub fn poison(&self, error: StorageError) -> StorageError {
        let mut reason = self.reason.lock();
        if reason.is_none() {
            // Latched before anything else: a syncer round that checks the latch after its own
            // fsync must see it.
            *reason = Some(error.to_string());
            self.set.store(true, Ordering::Release);
            tracing::error!(event = "storage.poisoned", error = %error, "store is now read-only");
        }
        error
    }

    /// The first failure, if any.
    pub fn reason(&self) -> Option<String> {
        if self.set.load(Ordering::Acquire) {
            self.reason.lock().clone()
        } else {
            None
        }
    }

    /// `Err(Poisoned)` once latched.
    pub fn check(&self) -> Result<(), StorageError> {
        match self.reason() {
            Some(reason) => Err(StorageError::Poisoned { reason }),
            None => Ok(()),
        }
    }
}
