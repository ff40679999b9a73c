//! One shard of the primary index: a hash table of 4-byte entry references over an arena.
//!
//! What it is: `hashbrown::HashTable<EntryRef>` whose slots name entries in an [`Arena`]; the
//! table is probed with the key's hash and the candidate's key bytes are compared in the arena.
//! Keys longer than an arena entry holds (the engine accepts up to 64 KiB; ArangoDB keys are at
//! most 254 bytes) live in a plain side map, which stays empty for document keys.
//!
//! What it is not: locked or sharded. [`super::PrimaryIndex`] picks the shard, computes the
//! hash once with its own hasher and holds the shard's lock around every call here.
//!
//! Invariants: every slot of the table names a live arena entry whose key hashes to the slot's
//! hash, and no two slots name equal keys; a key is in the table or in the side map, never both,
//! by its length. When freed entries pass an eighth of the arena (and a few KiB), the live
//! entries are copied into a fresh arena and the table shrunk, so removals give memory back.

use std::collections::HashMap;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::arena::{Arena, EntryRef, KEY_MAX};
use super::Location;

/// Dead arena bytes a shard tolerates regardless of its size, so tiny shards do not recopy
/// themselves on every removal.
const DEAD_SLACK: usize = 4096;

/// A shard's table, arena and long-key side map.
pub(super) struct Shard {
    table: HashTable<EntryRef>,
    arena: Arena,
    long: HashMap<Box<[u8]>, Location>,
}

impl Shard {
    /// An empty shard; allocates nothing.
    pub(super) fn new() -> Shard {
        Shard {
            table: HashTable::new(),
            arena: Arena::new(),
            long: HashMap::new(),
        }
    }

    /// The location of `key` (whose hash is `hash`).
    pub(super) fn get(&self, hash: u64, key: &[u8]) -> Option<Location> {
        if key.len() > KEY_MAX {
            return self.long.get(key).copied();
        }
        let arena = &self.arena;
        let at = self.table.find(hash, |&at| arena.key(at) == key)?;
        Some(arena.location(*at))
    }

    /// Lets `change` rewrite `key`'s location, if the key is present; returns what `change`
    /// returned.
    pub(super) fn modify<R>(
        &mut self,
        hash: u64,
        key: &[u8],
        change: impl FnOnce(&mut Location) -> R,
    ) -> Option<R> {
        if key.len() > KEY_MAX {
            return self.long.get_mut(key).map(change);
        }
        let arena = &self.arena;
        let at = *self.table.find(hash, |&at| arena.key(at) == key)?;
        let mut location = self.arena.location(at);
        let before = location;
        let result = change(&mut location);
        if location != before {
            self.arena.set_location(at, &location);
        }
        Some(result)
    }

    /// Adds `key`, which must be absent.
    pub(super) fn insert_absent(
        &mut self,
        hasher: &DefaultHashBuilder,
        hash: u64,
        key: &[u8],
        location: Location,
    ) {
        if key.len() > KEY_MAX {
            let previous = self.long.insert(key.into(), location);
            assert!(previous.is_none(), "insert_absent of a present key");
            return;
        }
        let at = self.arena.push(key, &location);
        let arena = &self.arena;
        self.table
            .insert_unique(hash, at, |&at| hasher.hash_one(arena.key(at)));
    }

    /// Removes `key`, returning its location.
    pub(super) fn remove(
        &mut self,
        hasher: &DefaultHashBuilder,
        hash: u64,
        key: &[u8],
    ) -> Option<Location> {
        if key.len() > KEY_MAX {
            return self.long.remove(key);
        }
        let arena = &self.arena;
        let (at, _) = self
            .table
            .find_entry(hash, |&at| arena.key(at) == key)
            .ok()?
            .remove();
        let location = self.arena.location(at);
        self.arena.free(at);
        if self.len() == 0 {
            // The last key went: give every chunk and the table back at once.
            *self = Shard::new();
        } else {
            self.compact_if_sparse(hasher);
        }
        Some(location)
    }

    /// Keeps only the entries `keep` accepts, then sizes the table and arena to what is left.
    pub(super) fn retain(
        &mut self,
        hasher: &DefaultHashBuilder,
        keep: &mut dyn FnMut(&[u8], &Location) -> bool,
    ) {
        self.long.retain(|key, location| keep(key, location));
        self.long.shrink_to_fit();
        let arena = &mut self.arena;
        self.table.retain(|at| {
            let kept = keep(arena.key(*at), &arena.location(*at));
            if !kept {
                arena.free(*at);
            }
            kept
        });
        self.compact_if_sparse(hasher);
        let arena = &self.arena;
        self.table
            .shrink_to_fit(|&at| hasher.hash_one(arena.key(at)));
    }

    /// Makes room in the table for `additional` more keys.
    pub(super) fn reserve(&mut self, hasher: &DefaultHashBuilder, additional: usize) {
        let arena = &self.arena;
        self.table
            .reserve(additional, |&at| hasher.hash_one(arena.key(at)));
    }

    /// Number of keys.
    pub(super) fn len(&self) -> usize {
        self.table.len() + self.long.len()
    }

    /// Visits every key with its location.
    pub(super) fn for_each(&self, visit: &mut dyn FnMut(&[u8], &Location)) {
        for at in self.table.iter() {
            visit(self.arena.key(*at), &self.arena.location(*at));
        }
        for (key, location) in &self.long {
            visit(key, location);
        }
    }

    /// Bytes of memory the shard holds: table, arena, and the side map's slots and keys (each key
    /// charged 16 bytes of allocator overhead).
    pub(super) fn memory_bytes(&self) -> usize {
        let long_slot = std::mem::size_of::<(Box<[u8]>, Location)>() + 1;
        let long_keys: usize = self.long.keys().map(|k| k.len() + 16).sum();
        self.table.allocation_size()
            + self.arena.memory_bytes()
            + self.long.capacity() * long_slot
            + long_keys
    }

    /// Copies the live entries into a fresh arena when freed bytes pass an eighth of the arena,
    /// and shrinks the table when it is less than a quarter full. Entries keep their hashes, so
    /// the table's slots are re-pointed in place without rehashing.
    fn compact_if_sparse(&mut self, hasher: &DefaultHashBuilder) {
        let dead = self.arena.dead_bytes();
        if dead <= DEAD_SLACK || dead * 8 <= self.arena.live_bytes() + dead {
            return;
        }
        let old = std::mem::replace(&mut self.arena, Arena::new());
        for at in self.table.iter_mut() {
            *at = self.arena.push(old.key(*at), &old.location(*at));
        }
        drop(old);
        if self.table.len() < self.table.capacity() / 4 {
            let arena = &self.arena;
            self.table
                .shrink_to_fit(|&at| hasher.hash_one(arena.key(at)));
        }
    }
}
