//! [`Buffer`]: one collection's share of a running transaction: the versions it wrote and has
//! not committed.
//!
//! What it is: per key, the revision the key had when the transaction first wrote it (its
//! *base*, `None` when absent) and the version it wrote last (a revision and stored bytes, or
//! `None` for a removal), with the keys in the order they were first written.
//!
//! What it is not: visible to anyone but its transaction. Nothing here touches the store.
//!
//! Invariants: every key here is reserved by the transaction in the collection's
//! [`crate::transaction::locks::TrxLocks`], so its committed version is still `base` when the
//! transaction commits; `bytes` is the sum of the stored bytes (and keys) of the buffered
//! versions, which `maxTransactionSize` bounds.

use std::collections::HashMap;
use std::sync::Arc;

use crate::collection::Collection;

/// One key's uncommitted change.
pub(crate) struct Change {
    /// The committed revision when the transaction first wrote the key (`None`: absent).
    pub base: Option<u64>,
    /// The version the transaction wrote last: revision and stored bytes, `None` for removed.
    pub new: Option<(u64, Vec<u8>)>,
    /// The revision of the last write (the new version's, or the tombstone's).
    pub rev: u64,
}

/// A transaction's changes to one collection.
pub(crate) struct Buffer {
    pub collection: Arc<Collection>,
    pub changes: HashMap<String, Change>,
    /// The keys in the order they were first written.
    pub order: Vec<String>,
    /// Bytes of the buffered versions.
    pub bytes: u64,
}

impl Buffer {
    pub(crate) fn new(collection: Arc<Collection>) -> Buffer {
        Buffer {
            collection,
            changes: HashMap::new(),
            order: Vec::new(),
            bytes: 0,
        }
    }

    /// Records that the transaction wrote `new` over `key`, whose committed revision is
    /// `committed` (used as the base when the key is new to the buffer).
    pub(crate) fn record(
        &mut self,
        key: &str,
        committed: Option<u64>,
        rev: u64,
        new: Option<(u64, Vec<u8>)>,
    ) {
        let new_len = new.as_ref().map_or(0, |(_, v)| v.len()) as u64;
        match self.changes.get_mut(key) {
            Some(change) => {
                let old_len = change.new.as_ref().map_or(0, |(_, v)| v.len()) as u64;
                change.new = new;
                change.rev = rev;
                self.bytes = self.bytes - old_len + new_len;
            }
            None => {
                self.changes.insert(
                    key.to_owned(),
                    Change {
                        base: committed,
                        new,
                        rev,
                    },
                );
                self.order.push(key.to_owned());
                self.bytes += new_len + key.len() as u64;
            }
        }
    }

    /// How the transaction changes the collection's count.
    pub(crate) fn count_delta(&self) -> i64 {
        self.changes
            .values()
            .map(|c| i64::from(c.new.is_some()) - i64::from(c.base.is_some()))
            .sum()
    }
}
