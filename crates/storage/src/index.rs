//! The primary index: key -> location of the key's current record, in memory.
//!
//! What it is: a hash index split into [`SHARDS`] shards, each behind its own reader-writer lock,
//! so reads of different keys never contend and a shard's rehash or recopy stalls only a
//! sixteenth of the keys. Each shard (`index/shard.rs`) is a `hashbrown::HashTable` of 4-byte entry
//! references into an arena (`index/arena.rs`) of packed entries: key length, [`Location`] in 30 bytes
//! (the offset in 48 bits), key bytes, back to back in chunks that never double.
//!
//! What it is not: persistent. It is rebuilt on open from hint files and scans. It is public
//! only so its memory bound can be measured from outside the crate (`tests/index_memory.rs`,
//! with a counting allocator); the rest of the engine is its only real user.
//!
//! Memory (per entry, 64-bit): 31 bytes of entry header plus the key; the table slot (4 bytes
//! and a control byte) at hashbrown's 7/16 to 7/8 load, 5.7 to 11.4 bytes; the unused end of the
//! newest chunk, at most an eighth of the arena. An 8-byte key costs 39 + 11.4 + 4.9 = at most
//! about 56 bytes all in, a 40-byte key at most about 92 (see `docs/storage-format.md`).
//! [`PrimaryIndex::memory_bytes`] reports the figure from the real allocations.
//!
//! Invariants: an entry exists only for a live key (and, during recovery, for tombstones until
//! [`PrimaryIndex::retain`] drops them); its location names a record whose `seq` and `rev` it
//! carries.

mod arena;
mod shard;

use std::hash::BuildHasher;

use hashbrown::DefaultHashBuilder;
use parking_lot::RwLock;

use shard::Shard;

/// Where a key's current record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file's id.
    pub fid: u32,
    /// The record's size before padding.
    pub size: u32,
    /// The record's offset in its file (below 2^48).
    pub offset: u64,
    /// The record's write sequence number.
    pub seq: u64,
    /// The record's revision.
    pub rev: u64,
}

/// Number of shards (a power of two).
pub const SHARDS: usize = 16;

/// The sharded key -> location index.
pub struct PrimaryIndex {
    shards: Box<[RwLock<Shard>]>,
    hasher: DefaultHashBuilder,
}

impl Default for PrimaryIndex {
    fn default() -> PrimaryIndex {
        PrimaryIndex::new()
    }
}

impl PrimaryIndex {
    /// An empty index.
    pub fn new() -> PrimaryIndex {
        PrimaryIndex {
            shards: (0..SHARDS).map(|_| RwLock::new(Shard::new())).collect(),
            hasher: DefaultHashBuilder::default(),
        }
    }

    /// The key's hash and its shard. The shard comes from bits 48..52, which hashbrown uses
    /// neither for the bucket (low bits) nor for the control byte (top 7 bits).
    fn locate(&self, key: &[u8]) -> (u64, &RwLock<Shard>) {
        let hash = self.hasher.hash_one(key);
        (hash, &self.shards[(hash >> 48) as usize & (SHARDS - 1)])
    }

    /// The location of `key`'s current record.
    pub fn get(&self, key: &[u8]) -> Option<Location> {
        let (hash, shard) = self.locate(key);
        shard.read().get(hash, key)
    }

    /// Points `key` at `location`, returning the previous location.
    pub fn insert(&self, key: &[u8], location: Location) -> Option<Location> {
        let (hash, shard) = self.locate(key);
        let mut shard = shard.write();
        let previous = shard.modify(hash, key, |slot| std::mem::replace(slot, location));
        if previous.is_none() {
            shard.insert_absent(&self.hasher, hash, key, location);
        }
        previous
    }

    /// Points `key` at `location` unless it already names a newer record (by `seq`, then by
    /// fid, so the copy in a compaction output wins over its source). Used by recovery.
    pub fn insert_if_newer(&self, key: &[u8], location: Location) {
        let (hash, shard) = self.locate(key);
        let mut shard = shard.write();
        let present = shard.modify(hash, key, |slot| {
            if (location.seq, location.fid) > (slot.seq, slot.fid) {
                *slot = location;
            }
        });
        if present.is_none() {
            shard.insert_absent(&self.hasher, hash, key, location);
        }
    }

    /// Removes `key`, returning its location.
    pub fn remove(&self, key: &[u8]) -> Option<Location> {
        let (hash, shard) = self.locate(key);
        shard.write().remove(&self.hasher, hash, key)
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
        let (hash, shard) = self.locate(key);
        let mut shard = shard.write();
        let replaced = shard.modify(hash, key, |slot| {
            let matches = *slot == expected;
            if matches {
                *slot = new;
                on_success();
            }
            matches
        });
        replaced == Some(true)
    }

    /// Visits every key with its location, under each shard's read lock in turn.
    pub fn for_each_location(&self, visit: &mut dyn FnMut(&[u8], &Location)) {
        for shard in self.shards.iter() {
            shard.read().for_each(visit);
        }
    }

    /// Keeps only the entries `keep` accepts, then sizes every shard to what is left (used once,
    /// at the end of recovery).
    pub fn retain(&self, keep: &mut dyn FnMut(&[u8], &Location) -> bool) {
        for shard in self.shards.iter() {
            shard.write().retain(&self.hasher, keep);
        }
    }

    /// Reserves room for `additional` more keys, spread over the shards.
    pub fn reserve(&self, additional: usize) {
        for shard in self.shards.iter() {
            shard.write().reserve(&self.hasher, additional / SHARDS + 1);
        }
    }

    /// Removes every entry and gives the memory back.
    pub fn clear(&self) {
        for shard in self.shards.iter() {
            *shard.write() = Shard::new();
        }
    }

    /// Number of keys.
    pub fn len(&self) -> u64 {
        self.shards.iter().map(|s| s.read().len() as u64).sum()
    }

    /// Whether the index has no keys.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Visits every key with its location until `visit` returns false. Each shard is copied
    /// out (keys into one buffer) before visiting, so `visit` may call back into the store
    /// without deadlocking.
    pub fn for_each(&self, visit: &mut dyn FnMut(&[u8], &Location) -> bool) {
        let mut keys: Vec<u8> = Vec::new();
        let mut entries: Vec<(usize, Location)> = Vec::new();
        for shard in self.shards.iter() {
            keys.clear();
            entries.clear();
            shard.read().for_each(&mut |key, location| {
                keys.extend_from_slice(key);
                entries.push((keys.len(), *location));
            });
            let mut start = 0;
            for (end, location) in &entries {
                if !visit(&keys[start..*end], location) {
                    return;
                }
                start = *end;
            }
        }
    }

    /// Bytes of memory the index holds, from the real allocation sizes of every shard's table,
    /// arena and side map, plus the shard array itself.
    pub fn memory_bytes(&self) -> u64 {
        let shards = self.shards.len() * std::mem::size_of::<RwLock<Shard>>();
        let held: usize = self.shards.iter().map(|s| s.read().memory_bytes()).sum();
        (shards + held) as u64
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
        let per_entry = index.memory_bytes() / n;
        assert!(
            per_entry < 100,
            "index costs {per_entry} bytes per entry, key included"
        );
    }
}
