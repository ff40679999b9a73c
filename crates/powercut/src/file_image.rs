//! [`FileImage`]: one regular file's bytes as reads see them and as a power cut would leave them.
//!
//! What it is: the *live* image (what `read` returns), the *durable* image (what the last
//! successful fsync or fdatasync of the file covered) and the ordered list of the writes and
//! length changes made since then. [`FileImage::survive_cut`] builds the bytes a reboot finds:
//! the durable image plus a seeded *prefix in write order* of the unsynced operations, of which
//! the last kept write may be torn (only a prefix of its bytes lands, or a prefix of its range
//! lands as zeroes).
//!
//! What it is not: a model of reordering inside one file (a later unsynced write never survives
//! without every earlier one), of bit rot, or of a lying fsync; docs/safety.md excludes those.
//! Metadata (mode, times) lives with the inode, not here.
//!
//! Invariants: `live` always equals `durable` with every pending operation applied in order;
//! `sync` makes `durable == live` and empties the pending list; a cut never yields a byte that
//! was not written by some operation (or a zero of an extension or a torn write).

use crate::rng::SplitMix64;

/// The largest file the model holds (everything is in memory).
pub const FILE_BYTES_MAX: u64 = 4 << 30;

/// One operation since the last sync, in the order it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PendingOp {
    /// `pwrite(data, offset)`.
    Write {
        /// Where the bytes go.
        offset: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// `ftruncate(len)`: cut or zero-extend.
    SetLen(u64),
}

impl PendingOp {
    /// Applies the operation to an image.
    fn apply(&self, image: &mut Vec<u8>) {
        match self {
            PendingOp::Write { offset, data } => write_into(image, *offset, data),
            PendingOp::SetLen(len) => image.resize(to_usize(*len), 0),
        }
    }

    /// Bytes this operation carries (0 for a length change).
    fn data_len(&self) -> u64 {
        match self {
            PendingOp::Write { data, .. } => data.len() as u64,
            PendingOp::SetLen(_) => 0,
        }
    }
}

/// How the first unsynced operation that did not survive whole ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tear {
    /// Nothing of it landed (or every unsynced operation survived).
    None,
    /// Only its first `kept` bytes landed.
    Prefix {
        /// Bytes that landed.
        kept: u64,
        /// Bytes the write had.
        of: u64,
    },
    /// Its first `zeroed` bytes landed as zeroes, the rest not at all.
    Zeroes {
        /// Zero bytes that landed.
        zeroed: u64,
        /// Bytes the write had.
        of: u64,
    },
}

/// What a power cut did to one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutOutcome {
    /// Unsynced operations before the cut.
    pub ops_total: usize,
    /// Of those, how many survived whole (always a prefix).
    pub ops_kept: usize,
    /// What happened to operation number `ops_kept`, if there was one.
    pub tear: Tear,
    /// Unsynced bytes that did not land as written.
    pub bytes_dropped: u64,
    /// Length of the live image before the cut.
    pub live_len: u64,
    /// Length after the cut.
    pub len_after: u64,
}

/// A regular file's images.
#[derive(Clone, Debug, Default)]
pub struct FileImage {
    /// What reads see.
    live: Vec<u8>,
    /// What the last sync covered.
    durable: Vec<u8>,
    /// Operations since the last sync, oldest first.
    pending: Vec<PendingOp>,
}

impl FileImage {
    /// An empty file (durably empty: a cut keeps it, if its name survives, as zero bytes).
    pub fn new() -> FileImage {
        FileImage::default()
    }

    /// An image whose live and durable bytes are `bytes`.
    pub fn with_durable(bytes: Vec<u8>) -> FileImage {
        FileImage {
            live: bytes.clone(),
            durable: bytes,
            pending: Vec::new(),
        }
    }

    /// The live length.
    pub fn len(&self) -> u64 {
        self.live.len() as u64
    }

    /// True when the live image is empty.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// The live bytes.
    pub fn live(&self) -> &[u8] {
        &self.live
    }

    /// The durable bytes.
    pub fn durable(&self) -> &[u8] {
        &self.durable
    }

    /// Unsynced operations.
    pub fn pending(&self) -> &[PendingOp] {
        &self.pending
    }

    /// Up to `size` live bytes from `offset` (fewer at the end of the file).
    pub fn read(&self, offset: u64, size: usize) -> &[u8] {
        let start = to_usize(offset.min(self.len()));
        let end = start.saturating_add(size).min(self.live.len());
        &self.live[start..end]
    }

    /// `pwrite`: live at once, durable at the next sync. False if the file would pass
    /// [`FILE_BYTES_MAX`] (nothing changes then).
    pub fn write(&mut self, offset: u64, data: &[u8]) -> bool {
        let Some(end) = offset.checked_add(data.len() as u64) else {
            return false;
        };
        if end > FILE_BYTES_MAX {
            return false;
        }
        if data.is_empty() {
            return true;
        }
        let op = PendingOp::Write {
            offset,
            data: data.to_vec(),
        };
        op.apply(&mut self.live);
        self.pending.push(op);
        true
    }

    /// `ftruncate`: live at once, durable at the next sync. False past [`FILE_BYTES_MAX`].
    pub fn set_len(&mut self, len: u64) -> bool {
        if len > FILE_BYTES_MAX {
            return false;
        }
        let op = PendingOp::SetLen(len);
        op.apply(&mut self.live);
        self.pending.push(op);
        true
    }

    /// fsync / fdatasync: everything written so far becomes durable.
    pub fn sync(&mut self) {
        for op in self.pending.drain(..) {
            op.apply(&mut self.durable);
        }
        debug_assert!(
            self.durable == self.live,
            "durable differs from live after sync"
        );
    }

    /// The image a reboot finds after a power cut now: the durable bytes and a seeded prefix
    /// of the pending operations, the first one left out possibly torn. The result has no
    /// pending operations.
    pub fn survive_cut(&self, rng: &mut SplitMix64) -> (FileImage, CutOutcome) {
        let total = self.pending.len();
        let kept = to_usize(rng.below(total as u64 + 1));
        let mut bytes = self.durable.clone();
        let mut landed = 0u64;
        for op in &self.pending[..kept] {
            op.apply(&mut bytes);
            landed += op.data_len();
        }
        let tear = match self.pending.get(kept) {
            Some(PendingOp::Write { offset, data }) => tear_write(rng, &mut bytes, *offset, data),
            _ => Tear::None,
        };
        if let Tear::Prefix { kept, .. } = tear {
            landed += kept;
        }
        let unsynced: u64 = self.pending.iter().map(PendingOp::data_len).sum();
        let outcome = CutOutcome {
            ops_total: total,
            ops_kept: kept,
            tear,
            bytes_dropped: unsynced - landed,
            live_len: self.len(),
            len_after: bytes.len() as u64,
        };
        (FileImage::with_durable(bytes), outcome)
    }
}

/// Lands part of one write, as the seed decides: nothing, a strict prefix, or zeroes.
fn tear_write(rng: &mut SplitMix64, bytes: &mut Vec<u8>, offset: u64, data: &[u8]) -> Tear {
    let of = data.len() as u64;
    match rng.below(3) {
        0 => Tear::None,
        1 => {
            let kept = rng.below(of);
            write_into(bytes, offset, &data[..to_usize(kept)]);
            Tear::Prefix { kept, of }
        }
        _ => {
            let zeroed = 1 + rng.below(of);
            write_into(bytes, offset, &vec![0; to_usize(zeroed)]);
            Tear::Zeroes { zeroed, of }
        }
    }
}

/// Writes `data` at `offset`, zero-filling any gap past the end.
fn write_into(image: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let start = to_usize(offset);
    let end = start + data.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    image[start..end].copy_from_slice(data);
}

fn to_usize(value: u64) -> usize {
    usize::try_from(value).expect("file offsets are bounded by FILE_BYTES_MAX")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image_with(ops: &[(u64, &[u8])]) -> FileImage {
        let mut image = FileImage::new();
        for (offset, data) in ops {
            assert!(image.write(*offset, data));
        }
        image
    }

    #[test]
    fn writes_are_live_at_once_and_durable_after_sync() {
        let mut image = image_with(&[(0, b"hello"), (5, b" world")]);
        assert_eq!(image.live(), b"hello world");
        assert_eq!(image.durable(), b"");
        assert_eq!(image.read(6, 100), b"world");
        assert_eq!(image.read(100, 5), b"");
        image.sync();
        assert_eq!(image.durable(), b"hello world");
        assert!(image.pending().is_empty());
    }

    #[test]
    fn gaps_and_set_len_zero_fill() {
        let mut image = image_with(&[(4, b"x")]);
        assert_eq!(image.live(), b"\0\0\0\0x");
        assert!(image.set_len(2));
        assert_eq!(image.live(), b"\0\0");
        assert!(image.set_len(4));
        assert_eq!(image.live(), b"\0\0\0\0");
        image.sync();
        assert_eq!(image.durable(), b"\0\0\0\0");
    }

    #[test]
    fn bounded_size() {
        let mut image = FileImage::new();
        assert!(!image.write(FILE_BYTES_MAX, b"x"));
        assert!(!image.write(u64::MAX, b"x"));
        assert!(!image.set_len(FILE_BYTES_MAX + 1));
        assert!(image.is_empty());
        assert!(image.pending().is_empty());
    }

    #[test]
    fn a_synced_file_survives_whole() {
        let mut image = image_with(&[(0, b"durable")]);
        image.sync();
        for seed in 0..50 {
            let (after, outcome) = image.survive_cut(&mut SplitMix64::new(seed));
            assert_eq!(after.live(), b"durable");
            assert_eq!(after.durable(), b"durable");
            assert_eq!(outcome.ops_total, 0);
            assert_eq!(outcome.bytes_dropped, 0);
        }
    }

    /// Every cut image is the durable bytes plus whole writes 0..k plus a torn write k:
    /// nothing reordered, nothing invented.
    #[test]
    fn cut_keeps_a_prefix_in_write_order_with_a_torn_last_write() {
        let mut image = image_with(&[(0, b"AAAA")]);
        image.sync();
        let writes: [(u64, &[u8]); 3] = [(4, b"BBBB"), (8, b"CCCC"), (2, b"DD")];
        for (offset, data) in writes {
            assert!(image.write(offset, data));
        }
        let mut seen_kept = [false; 4];
        let mut seen_prefix = false;
        let mut seen_zeroes = false;
        for seed in 0..400 {
            let (after, outcome) = image.survive_cut(&mut SplitMix64::new(seed));
            assert_eq!(outcome.ops_total, 3);
            seen_kept[outcome.ops_kept] = true;
            let mut expected = b"AAAA".to_vec();
            for (offset, data) in &writes[..outcome.ops_kept] {
                write_into(&mut expected, *offset, data);
            }
            let torn = writes.get(outcome.ops_kept);
            match outcome.tear {
                Tear::None => {}
                Tear::Prefix { kept, of } => {
                    let (offset, data) = torn.expect("a tear names a write");
                    assert_eq!(of, data.len() as u64);
                    assert!(kept < of);
                    write_into(&mut expected, *offset, &data[..kept as usize]);
                    seen_prefix = true;
                }
                Tear::Zeroes { zeroed, of } => {
                    let (offset, data) = torn.expect("a tear names a write");
                    assert_eq!(of, data.len() as u64);
                    assert!(zeroed >= 1 && zeroed <= of);
                    write_into(&mut expected, *offset, &vec![0; zeroed as usize]);
                    seen_zeroes = true;
                }
            }
            assert_eq!(after.live(), &expected[..], "seed {seed}: {outcome:?}");
            assert!(after.pending().is_empty());
            assert_eq!(outcome.len_after, expected.len() as u64);
        }
        assert!(
            seen_kept.iter().all(|&s| s),
            "every prefix length occurs: {seen_kept:?}"
        );
        assert!(seen_prefix && seen_zeroes);
    }

    #[test]
    fn cut_is_deterministic_per_seed() {
        let image = image_with(&[(0, b"one"), (3, b"two"), (6, b"three")]);
        for seed in 0..20 {
            let (a, oa) = image.survive_cut(&mut SplitMix64::new(seed));
            let (b, ob) = image.survive_cut(&mut SplitMix64::new(seed));
            assert_eq!(a.live(), b.live());
            assert_eq!(oa, ob);
        }
    }

    #[test]
    fn dropped_bytes_are_counted() {
        let image = image_with(&[(0, b"12345678")]);
        for seed in 0..50 {
            let (after, outcome) = image.survive_cut(&mut SplitMix64::new(seed));
            let landed = match outcome.tear {
                Tear::Prefix { kept, .. } => kept,
                _ if outcome.ops_kept == 1 => 8,
                _ => 0,
            };
            assert_eq!(outcome.bytes_dropped, 8 - landed);
            assert!(after.len() <= 8);
        }
    }

    #[test]
    fn truncation_survives_only_in_order() {
        let mut image = image_with(&[(0, b"0123456789")]);
        image.sync();
        assert!(image.set_len(4));
        assert!(image.write(4, b"xy"));
        for seed in 0..100 {
            let (after, outcome) = image.survive_cut(&mut SplitMix64::new(seed));
            match outcome.ops_kept {
                0 => assert_eq!(after.live(), b"0123456789"),
                1 => {
                    // The truncate landed; the write may be torn.
                    assert!(after.live().starts_with(b"0123"));
                    assert!(after.len() <= 6);
                }
                _ => assert_eq!(after.live(), b"0123xy"),
            }
        }
    }
}
