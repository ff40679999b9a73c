//! The entry arena of one index shard: keys and their packed locations, back to back in chunks.
//!
//! What it is: an append-only heap of variable-size entries, each
//!
//! ```text
//! 0 key_len u8 | 1 fid u32 | 5 size u32 | 9 offset u48 | 15 seq u64 | 23 rev u64 | 31 key ...
//! ```
//!
//! (little-endian, unaligned), addressed by a 32-bit [`EntryRef`]: the chunk's number in the
//! high 16 bits, the entry's byte offset in its chunk in the low 16. Chunks are never resized,
//! so there is no doubling slack: a new chunk holds an eighth of what the arena already has
//! (between [`CHUNK_MIN`] and [`CHUNK_MAX`] bytes), so the unused tail of the newest chunk is at
//! most an eighth of the arena. A freed entry goes on a free list for its key length and is
//! reused by the next entry of that length; freed bytes are counted as dead so the shard can
//! decide to copy its live entries into a fresh arena.
//!
//! What it is not: a map. Which entry belongs to which key is the shard's hash table; the arena
//! never reads its own chunks sequentially.
//!
//! Invariants: an entry never straddles chunks; a live [`EntryRef`] names the first byte of an
//! entry written by [`Arena::push`] and not freed since; `live + dead` bytes are entries, every
//! other byte of a chunk is unused.

use super::Location;

/// The address of an entry: chunk number << 16 | byte offset in the chunk.
pub(super) type EntryRef = u32;

/// The longest key an arena entry holds (its length is one byte).
pub(super) const KEY_MAX: usize = u8::MAX as usize;
/// Bytes of an entry before its key.
pub(super) const HEADER: usize = 31;
/// The smallest chunk, so a tiny shard stays tiny.
pub(super) const CHUNK_MIN: usize = 512;
/// The largest chunk: offsets within a chunk fit the low 16 bits of an [`EntryRef`].
pub(super) const CHUNK_MAX: usize = 1 << 16;
/// Chunks an arena may have: chunk numbers fit the high 16 bits of an [`EntryRef`].
const CHUNKS_MAX: usize = 1 << 16;
/// Offsets are stored in 48 bits (256 TiB, far beyond any journal or datafile).
const OFFSET_LIMIT: u64 = 1 << 48;
/// The end of a free list. Never a real entry: an entry at offset 0xFFFF would not fit.
const FREE_END: EntryRef = u32::MAX;

const _: () = assert!(HEADER + KEY_MAX <= CHUNK_MIN);
const _: () = assert!(
    HEADER >= 5,
    "a freed entry holds its free-list link after the length"
);

/// Chunks of packed entries with per-key-length free lists.
pub(super) struct Arena {
    chunks: Vec<Box<[u8]>>,
    /// Bytes used in the newest chunk.
    tail: usize,
    /// Bytes of all chunks.
    capacity: usize,
    /// Bytes of live entries.
    live: usize,
    /// Bytes of freed entries (on free lists).
    dead: usize,
    /// Head of the free list per key length; allocated on the first free.
    free: Option<Box<[EntryRef; KEY_MAX + 1]>>,
}

impl Arena {
    /// An empty arena; allocates nothing.
    pub(super) fn new() -> Arena {
        Arena {
            chunks: Vec::new(),
            tail: 0,
            capacity: 0,
            live: 0,
            dead: 0,
            free: None,
        }
    }

    /// Stores an entry for `key` (at most [`KEY_MAX`] bytes) at `location`.
    pub(super) fn push(&mut self, key: &[u8], location: &Location) -> EntryRef {
        assert!(
            key.len() <= KEY_MAX,
            "key of {} bytes in the arena",
            key.len()
        );
        let len = HEADER + key.len();
        let at = match self.pop_free(key.len()) {
            Some(at) => {
                self.dead -= len;
                at
            }
            None => self.bump(len),
        };
        self.live += len;
        let entry = self.bytes_mut(at, len);
        entry[0] = key.len() as u8;
        write_location(&mut entry[1..HEADER], location);
        entry[HEADER..].copy_from_slice(key);
        at
    }

    /// The key of a live entry.
    pub(super) fn key(&self, at: EntryRef) -> &[u8] {
        &self.entry(at)[HEADER..]
    }

    /// The location of a live entry.
    pub(super) fn location(&self, at: EntryRef) -> Location {
        read_location(&self.entry(at)[1..HEADER])
    }

    /// Re-points a live entry.
    pub(super) fn set_location(&mut self, at: EntryRef, location: &Location) {
        write_location(&mut self.bytes_mut(at, HEADER)[1..], location);
    }

    /// Frees a live entry; it goes on the free list for its key length.
    pub(super) fn free(&mut self, at: EntryRef) {
        let key_len = self.entry(at)[0] as usize;
        let free = self
            .free
            .get_or_insert_with(|| Box::new([FREE_END; KEY_MAX + 1]));
        let next = std::mem::replace(&mut free[key_len], at);
        self.bytes_mut(at, HEADER)[1..5].copy_from_slice(&next.to_le_bytes());
        self.live -= HEADER + key_len;
        self.dead += HEADER + key_len;
    }

    /// Bytes of live entries.
    pub(super) fn live_bytes(&self) -> usize {
        self.live
    }

    /// Bytes of freed entries not yet reused.
    pub(super) fn dead_bytes(&self) -> usize {
        self.dead
    }

    /// Bytes of memory the arena holds: chunks, the chunk table and the free-list heads.
    pub(super) fn memory_bytes(&self) -> usize {
        self.capacity
            + self.chunks.capacity() * std::mem::size_of::<Box<[u8]>>()
            + self
                .free
                .as_ref()
                .map_or(0, |f| std::mem::size_of_val(&**f))
    }

    fn pop_free(&mut self, key_len: usize) -> Option<EntryRef> {
        let head = *self.free.as_ref()?.get(key_len)?;
        if head == FREE_END {
            return None;
        }
        let link = &self.entry_raw(head)[1..5];
        let next = u32::from_le_bytes(link.try_into().expect("four bytes"));
        self.free.as_mut().expect("checked above")[key_len] = next;
        Some(head)
    }

    /// Takes `len` fresh bytes at the end of the newest chunk, starting a chunk if they do not
    /// fit (the old chunk's remainder, less than one entry, stays unused).
    fn bump(&mut self, len: usize) -> EntryRef {
        let room = self.chunks.last().map_or(0, |c| c.len() - self.tail);
        if room < len {
            assert!(self.chunks.len() < CHUNKS_MAX, "index shard arena is full");
            let size = (self.capacity / 8).clamp(CHUNK_MIN, CHUNK_MAX);
            self.chunks.push(vec![0u8; size].into_boxed_slice());
            self.capacity += size;
            self.tail = 0;
        }
        let at = ((self.chunks.len() - 1) << 16 | self.tail) as EntryRef;
        self.tail += len;
        at
    }

    fn entry_raw(&self, at: EntryRef) -> &[u8] {
        &self.chunks[(at >> 16) as usize][(at & 0xFFFF) as usize..]
    }

    fn entry(&self, at: EntryRef) -> &[u8] {
        let raw = self.entry_raw(at);
        &raw[..HEADER + raw[0] as usize]
    }

    fn bytes_mut(&mut self, at: EntryRef, len: usize) -> &mut [u8] {
        let start = (at & 0xFFFF) as usize;
        &mut self.chunks[(at >> 16) as usize][start..start + len]
    }
}

fn write_location(out: &mut [u8], location: &Location) {
    assert!(
        location.offset < OFFSET_LIMIT,
        "record offset {} beyond 48 bits",
        location.offset
    );
    out[0..4].copy_from_slice(&location.fid.to_le_bytes());
    out[4..8].copy_from_slice(&location.size.to_le_bytes());
    out[8..14].copy_from_slice(&location.offset.to_le_bytes()[..6]);
    out[14..22].copy_from_slice(&location.seq.to_le_bytes());
    out[22..30].copy_from_slice(&location.rev.to_le_bytes());
}

fn read_location(bytes: &[u8]) -> Location {
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let mut offset = [0u8; 8];
    offset[..6].copy_from_slice(&bytes[8..14]);
    Location {
        fid: u32_at(0),
        size: u32_at(4),
        offset: u64::from_le_bytes(offset),
        seq: u64_at(14),
        rev: u64_at(22),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(n: u64) -> Location {
        Location {
            fid: n as u32 ^ 0xdead_beef,
            size: (n as u32).wrapping_mul(7),
            offset: (OFFSET_LIMIT - 1) - n,
            seq: u64::MAX - n,
            rev: n << 20,
        }
    }

    #[test]
    fn entries_round_trip_across_chunks() {
        let mut arena = Arena::new();
        let keys: Vec<Vec<u8>> = (0..5_000u64)
            .map(|i| vec![b'a' + (i % 26) as u8; (i % (KEY_MAX as u64 + 1)) as usize])
            .collect();
        let refs: Vec<EntryRef> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| arena.push(k, &loc(i as u64)))
            .collect();
        assert!(arena.chunks.len() > 1);
        for (i, (key, at)) in keys.iter().zip(&refs).enumerate() {
            assert_eq!(arena.key(*at), &key[..]);
            assert_eq!(arena.location(*at), loc(i as u64));
        }
        arena.set_location(refs[7], &loc(99));
        assert_eq!(arena.location(refs[7]), loc(99));
        assert_eq!(arena.key(refs[7]), &keys[7][..]);
    }

    #[test]
    fn a_freed_entry_is_reused_by_the_next_key_of_its_length() {
        let mut arena = Arena::new();
        let a = arena.push(b"abc", &loc(1));
        let b = arena.push(b"defg", &loc(2));
        arena.free(a);
        assert_eq!(arena.dead_bytes(), HEADER + 3);
        assert_ne!(
            arena.push(b"wxyz", &loc(3)),
            a,
            "a different length takes fresh bytes"
        );
        assert_eq!(arena.push(b"xyz", &loc(4)), a);
        assert_eq!(arena.dead_bytes(), 0);
        assert_eq!(arena.key(a), b"xyz");
        assert_eq!(arena.key(b), b"defg");
        assert_eq!(arena.live_bytes(), 3 * HEADER + 4 + 4 + 3);
    }

    #[test]
    fn the_newest_chunk_is_at_most_an_eighth_of_the_arena() {
        let mut arena = Arena::new();
        for i in 0..200_000u64 {
            arena.push(&i.to_le_bytes(), &loc(i));
            let newest = arena.chunks.last().unwrap().len();
            assert!(newest <= CHUNK_MIN.max(arena.capacity / 8));
        }
        // Unused: the rest of the newest chunk, and less than one entry at each older chunk's end.
        let entry = HEADER + 8;
        let unused = arena.capacity - arena.live_bytes();
        assert!(unused <= arena.capacity / 8 + arena.chunks.len() * entry);
    }
}
