//! The primary index: key -> location of the key's current record, in memory.
//!
//! What it is: a hash map split into shards, each behind its own reader-writer lock, so reads
//! of different keys never contend and a shard's rehash stalls only a sixteenth of the keys.
//!
//! What it is not: persistent. It is rebuilt on open from hint files and scans.
//!
//! Memory (per entry, 64-bit): a slot holds the boxed key (16 bytes: pointer and length) and a
//! [`Location`] (32 bytes) = 48 bytes, plus 1 control byte; hashbrown keeps its table between
//! 7/16 and 7/8 full, so a slot costs 56 to 112 bytes of table per entry (about 74 at the
//! typical two-thirds load, 56 right after recovery, which sizes the table exactly). The key's
//! own allocation adds its length plus about 16 bytes of allocator overhead. Typical total
//! beyond the key bytes: about 90 bytes; [`PrimaryIndex::memory_bytes`] reports the figure from
//! the real table capacities.
//!
//! Invariants: an entry exists only for a live key; its location names a record whose `seq` and
//! `rev` it carries.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;

/// Where a key's current record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file's id.
    pub fid: u32,
    /// The record's size before padding.
    pub size: u32,
    /// The record's offset in its file.
    pub offset: u64,
    /// The record's write sequence number.
    pub seq: u64,
    /// The record's revision.
    pub rev: u64,
}

const _: () = assert!(std::mem::size_of::<Location>() == 32);

/// Number of shards (a power of two).
const SHARDS: usize = 16;

type Shard = HashMap<Box<[u8]>, Location>;

/// The sharded key -> location map.
pub struct PrimaryIndex {
    shards: Box<[RwLock<Shard>]>,
    key_bytes: AtomicU64,
}

fn shard_of(key: &[u8]) -> usize {
    // FNV-1a: cheap and good enough to spread keys over a handful of shards.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (hash as usize ^ (hash >> 32) as usize) & (SHARDS - 1)
}

impl PrimaryIndex {
    /// An empty index.
    pub fn new() -> PrimaryIndex {
        PrimaryIndex {
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
            key_bytes: AtomicU64::new(0),
        }
    }

    /// The location of `key`'s current record.
    pub fn get(&self, key: &[u8]) -> Option<Location> {
        self.shards[shard_of(key)].read().get(key).copied()
    }

    /// Points `key` at `location`, returning the previous location.
    pub fn insert(&self, key: &[u8], location: Location) -> Option<Location> {
        let mut shard = self.shards[shard_of(key)].write();
        if let Some(slot) = shard.get_mut(key) {
            return Some(std::mem::replace(slot, location));
        }
        shard.insert(key.into(), location);
        self.key_bytes
            .fetch_add(key.len() as u64, Ordering::Relaxed);
        None
    }

    /// Points `key` at `location` unless it already names a newer record (by `seq`, then by
    /// fid, so the copy in a compaction output wins over its source). Used by recovery.
    pub fn insert_if_newer(&self, key: &[u8], location: Location) {
        let mut shard = self.shards[shard_of(key)].write();
        if let Some(slot) = shard.get_mut(key) {
            if (location.seq, location.fid) > (slot.seq, slot.fid) {
                *slot = location;
            }
            return;
        }
        shard.insert(key.into(), location);
        self.key_bytes
            .fetch_add(key.len() as u64, Ordering::Relaxed);
    }

    /// Removes `key`, returning its location.
    pub fn remove(&self, key: &[u8]) -> Option<Location> {
        let removed = self.shards[shard_of(key)].write().remove(key);
        if removed.is_some() {
            self.key_bytes
                .fetch_sub(key.len() as u64, Ordering::Relaxed);
        }
        removed
    }

    /// Points `key` at `new` only if it still points at `expected` (compaction's re-pointing,
    /// which must not undo a writer's newer version). `on_success` runs under the shard lock, so
    /// whoever later replaces `new` sees its effects.
    pub fn replace_if(
        &self,
        key: &[u8],
        expected: Location,
        new: Location,
        on_success: &mut dyn FnMut(),
    ) -> bool {
        let mut shard = self.shards[shard_of(key)].write();
        match shard.get_mut(key) {
            Some(slot) if *slot == expected => {
                *slot = new;
                on_success();
                true
            }
            _ => false,
        }
    }

    /// Visits every location (no keys), under each shard's read lock.
    pub fn for_each_location(&self, visit: &mut dyn FnMut(&[u8], &Location)) {
        for shard in self.shards.iter() {
            for (key, location) in shard.read().iter() {
                visit(key, location);
            }
        }
    }

    /// Keeps only the entries `keep` accepts (used once, at the end of recovery).
    pub fn retain(&self, keep: &mut dyn FnMut(&[u8], &Location) -> bool) {
        for shard in self.shards.iter() {
            let mut shard = shard.write();
            let mut dropped = 0u64;
            shard.retain(|k, l| {
                let kept = keep(k, l);
                if !kept {
                    dropped += k.len() as u64;
                }
                kept
            });
            shard.shrink_to_fit();
            self.key_bytes.fetch_sub(dropped, Ordering::Relaxed);
        }
    }

    /// Reserves room for `additional` more keys, spread over the shards.
    pub fn reserve(&self, additional: usize) {
        for shard in self.shards.iter() {
            shard.write().reserve(additional / SHARDS + 1);
        }
    }

    /// Removes every entry.
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            *shard.write() = HashMap::new();
        }
        self.key_bytes.store(0, Ordering::Relaxed);
    }

    /// Number of keys.
    pub fn len(&self) -> u64 {
        self.shards.iter().map(|s| s.read().len() as u64).sum()
    }

    /// Visits every key with its location until `visit` returns false. Each shard is copied
    /// out before visiting so `visit` may call back into the store without deadlocking.
    pub fn for_each(&self, visit: &mut dyn FnMut(&[u8], &Location) -> bool) {
        for shard in self.shards.iter() {
            let entries: Vec<(Box<[u8]>, Location)> =
                shard.read().iter().map(|(k, l)| (k.clone(), *l)).collect();
            for (key, location) in &entries {
                if !visit(key, location) {
                    return;
                }
            }
        }
    }

    /// Bytes of memory the index holds: table slots by real capacity, keys, and an allocator
    /// overhead estimate of 16 bytes per key.
    pub fn memory_bytes(&self) -> u64 {
        let slot = (std::mem::size_of::<(Box<[u8]>, Location)>() + 1) as u64;
        let mut total = self.key_bytes.load(Ordering::Relaxed);
        for shard in self.shards.iter() {
            let shard = shard.read();
            total += shard.capacity() as u64 * slot + shard.len() as u64 * 16;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(fid: u32, offset: u64) -> Location {
        Location {
            fid,
            size: 40,
            offset,
            seq: offset,
            rev: offset,
        }
    }

    #[test]
    fn replace_if_keeps_a_newer_writer() {
        let index = PrimaryIndex::new();
        index.insert(b"a", loc(1, 8));
        let mut hits = 0;
        assert!(!index.replace_if(b"a", loc(1, 16), loc(2, 8), &mut || hits += 1));
        assert!(index.replace_if(b"a", loc(1, 8), loc(2, 8), &mut || hits += 1));
        assert_eq!(hits, 1);
        assert_eq!(index.get(b"a"), Some(loc(2, 8)));
    }

    #[test]
    fn memory_per_entry_stays_under_budget_at_recovery_sizing() {
        let index = PrimaryIndex::new();
        let n = 100_000u64;
        index.reserve(n as usize);
        for i in 0..n {
            index.insert(format!("key{i:08}").as_bytes(), loc(1, i * 8));
        }
        assert_eq!(index.len(), n);
        let key_bytes = n * 11;
        let per_entry = (index.memory_bytes() - key_bytes) / n;
        assert!(
            per_entry < 100,
            "index costs {per_entry} bytes per entry beyond the key"
        );
    }
}
