//! [`TrxLocks`]: what a collection knows of the stream transactions that write it: the keys
//! they reserved, and who holds its collection lock.
//!
//! What it is: per collection, a map from reserved key to the transaction that wrote it
//! (write-write conflict detection: a second writer of a reserved key, a transaction or a plain
//! request, gets 409/1200 at once), and a collection lock with two modes: *write* (shared by
//! every transaction that declared the collection for writing) and *exclusive* (one
//! transaction, and no other transaction writing). A begin waits for its locks up to its
//! `lockTimeout` (then 500/18).
//!
//! What it is not: a read lock. Reads never wait: they see committed data (and, inside a
//! transaction, its own writes).
//!
//! Invariants: a key is reserved by at most one transaction; a reservation is taken under the
//! store's writer lock together with the read of the version it builds on, and released only
//! after the transaction's commit published its writes (or after its abort), so no other
//! writer can change a reserved key in between; while a transaction holds the exclusive lock
//! no other transaction holds the collection's write lock, and plain writes are refused with
//! 18 rather than made to wait (they hold a connection task, not a transaction).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};
use quince_errors::{ArangoError, Result, ARANGO_CONFLICT, LOCK_TIMEOUT};

/// One collection's reservations and lock.
#[derive(Default)]
pub(crate) struct TrxLocks {
    /// How many keys are reserved: a plain write checks the map only when this is not zero.
    reserved: AtomicUsize,
    keys: Mutex<HashMap<String, u64>>,
    /// The holder of the exclusive lock (0: none), readable without the lock by plain writes.
    exclusive_holder: AtomicU64,
    lock: Mutex<LockState>,
    released: Condvar,
}

#[derive(Default)]
struct LockState {
    /// The transaction holding the exclusive lock.
    exclusive: Option<u64>,
    /// Transactions holding the write lock.
    writers: usize,
}

/// The answer to a second writer of a key a transaction reserved.
pub(crate) fn write_conflict() -> ArangoError {
    ArangoError::with_message(
        ARANGO_CONFLICT,
        "write-write conflict: the document is written by a running transaction",
    )
}

impl TrxLocks {
    /// The transaction that reserved `key`, if any.
    pub(crate) fn holder(&self, key: &str) -> Option<u64> {
        if self.reserved.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.keys.lock().get(key).copied()
    }

    /// Refuses a plain (non-transactional) write of `key`: 1200 when a transaction reserved it,
    /// 18 while a transaction holds the collection exclusively. Called under the writer lock.
    pub(crate) fn check_plain_write(&self, key: &str) -> Result<()> {
        if self.holder(key).is_some() {
            return Err(write_conflict());
        }
        let owner = self.exclusive_holder.load(Ordering::Acquire);
        if owner != 0 {
            return Err(ArangoError::with_message(
                LOCK_TIMEOUT,
                format!("the collection is locked exclusively by transaction {owner}"),
            ));
        }
        Ok(())
    }

    /// Reserves `key` for `trx` (1200 when another transaction holds it). Called under the
    /// store's writer lock.
    pub(crate) fn reserve(&self, key: &str, trx: u64) -> Result<()> {
        let mut keys = self.keys.lock();
        match keys.get(key) {
            Some(&holder) if holder == trx => Ok(()),
            Some(_) => Err(write_conflict()),
            None => {
                keys.insert(key.to_owned(), trx);
                self.reserved.fetch_add(1, Ordering::AcqRel);
                Ok(())
            }
        }
    }

    /// Releases `trx`'s reservations of `keys`.
    pub(crate) fn release<'k>(&self, trx: u64, keys: impl IntoIterator<Item = &'k str>) {
        let mut map = self.keys.lock();
        for key in keys {
            if map.get(key) == Some(&trx) {
                map.remove(key);
                self.reserved.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Takes the collection lock for `trx` (exclusive or write), waiting until `deadline`
    /// (none: without bound); 18 when it passes.
    pub(crate) fn lock(
        &self,
        trx: u64,
        exclusive: bool,
        deadline: Option<Instant>,
        name: &str,
    ) -> Result<()> {
        let mut state = self.lock.lock();
        loop {
            let free = match (exclusive, state.exclusive) {
                (_, Some(owner)) if owner != trx => false,
                (true, _) => state.writers == 0,
                (false, _) => true,
            };
            if free {
                if exclusive {
                    state.exclusive = Some(trx);
                    self.exclusive_holder.store(trx, Ordering::Release);
                } else {
                    state.writers += 1;
                }
                return Ok(());
            }
            let timed_out = match deadline {
                Some(deadline) => self.released.wait_until(&mut state, deadline).timed_out(),
                None => {
                    self.released.wait(&mut state);
                    false
                }
            };
            if timed_out {
                return Err(ArangoError::with_message(
                    LOCK_TIMEOUT,
                    format!("timeout waiting to lock collection '{name}'"),
                ));
            }
        }
    }

    /// Gives back a lock [`TrxLocks::lock`] granted.
    pub(crate) fn unlock(&self, trx: u64, exclusive: bool) {
        let mut state = self.lock.lock();
        if exclusive {
            if state.exclusive == Some(trx) {
                state.exclusive = None;
                self.exclusive_holder.store(0, Ordering::Release);
            }
        } else {
            state.writers = state.writers.saturating_sub(1);
        }
        drop(state);
        self.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_reserved_key_refuses_other_writers() {
        let locks = TrxLocks::default();
        assert!(locks.check_plain_write("k").is_ok());
        locks.reserve("k", 1).unwrap();
        locks.reserve("k", 1).unwrap();
        assert_eq!(locks.reserve("k", 2).unwrap_err().num(), 1200);
        assert_eq!(locks.check_plain_write("k").unwrap_err().num(), 1200);
        assert!(locks.check_plain_write("other").is_ok());
        locks.release(2, ["k"]);
        assert_eq!(locks.holder("k"), Some(1));
        locks.release(1, ["k"]);
        assert_eq!(locks.holder("k"), None);
        locks.reserve("k", 2).unwrap();
    }

    #[test]
    fn exclusive_waits_for_writers_and_times_out() {
        let locks = TrxLocks::default();
        locks.lock(1, false, None, "c").unwrap();
        let soon = Some(Instant::now() + Duration::from_millis(20));
        assert_eq!(locks.lock(2, true, soon, "c").unwrap_err().num(), 18);
        locks.unlock(1, false);
        locks.lock(2, true, soon, "c").unwrap();
        assert_eq!(locks.check_plain_write("k").unwrap_err().num(), 18);
        let soon = Some(Instant::now() + Duration::from_millis(20));
        assert_eq!(locks.lock(3, false, soon, "c").unwrap_err().num(), 18);
        locks.unlock(2, true);
        locks.lock(3, false, None, "c").unwrap();
    }
}
