//! Hint files: a sealed datafile's index in compact form, so a restart need not rescan it.
//!
//! What it is: encoding and decoding of `datafile-<fid>.hint`:
//!
//! ```text
//! header (40 bytes):
//!   0 "QUINCEH1" | 8 version u32 | 12 reserved u32 | 16 fid u64 | 24 datafile_len u64 | 32 count u64
//! entry (40 bytes + key padded to 8), `count` times, in datafile order:
//!   0 type u8 | 1 reserved [3] | 4 key_len u32 | 8 seq u64 | 16 rev u64 | 24 offset u64
//!   | 32 size u32 | 36 reserved u32 | 40 key (for a supersedes entry: the fid list) | pad
//! trailer (8 bytes): crc32c u32 of everything before it | reserved u32
//! ```
//!
//! Entries cover documents, tombstones, truncate markers, metadata records, group markers and
//! commit records; file header, link, supersedes and footer records are not listed.
//!
//! What it is not: authoritative. A hint whose checksum, fid or datafile length does not match
//! is ignored and the datafile is scanned instead; values are still verified on every read.
//!
//! Invariants: `parse(encode(x)) == x`; a hint parses only if its checksum is right.

use crate::format::{padded, RecordType, KEY_SIZE_MAX};

const HINT_MAGIC: [u8; 8] = *b"QUINCEH1";
const HINT_VERSION: u32 = 1;
const HEADER_LEN: usize = 40;
const ENTRY_LEN: usize = 40;
const TRAILER_LEN: usize = 8;

/// One hint entry: where a record is and what it says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HintEntry<'a> {
    /// The record's type (document, tombstone, truncate or supersedes).
    pub kind: RecordType,
    /// The record's write sequence number.
    pub seq: u64,
    /// The record's revision.
    pub rev: u64,
    /// The record's offset in the datafile.
    pub offset: u64,
    /// The record's size before padding.
    pub size: u32,
    /// The key (for a supersedes entry, the encoded fid list).
    pub key: &'a [u8],
}

/// Accumulates the entries of one hint file.
pub struct HintBuilder {
    buf: Vec<u8>,
    count: u64,
}

impl HintBuilder {
    /// An empty hint.
    pub fn new() -> HintBuilder {
        HintBuilder {
            buf: vec![0; HEADER_LEN],
            count: 0,
        }
    }

    /// Adds an entry.
    pub fn push(&mut self, entry: &HintEntry<'_>) {
        assert!(
            entry.key.len() <= u32::MAX as usize,
            "hint key length fits in u32"
        );
        self.buf.push(entry.kind as u8);
        self.buf.extend_from_slice(&[0; 3]);
        self.buf
            .extend_from_slice(&(entry.key.len() as u32).to_le_bytes());
        self.buf.extend_from_slice(&entry.seq.to_le_bytes());
        self.buf.extend_from_slice(&entry.rev.to_le_bytes());
        self.buf.extend_from_slice(&entry.offset.to_le_bytes());
        self.buf.extend_from_slice(&entry.size.to_le_bytes());
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.extend_from_slice(entry.key);
        let len = padded(self.buf.len() as u64) as usize;
        self.buf.resize(len, 0);
        self.count += 1;
    }

    /// The finished file's bytes, for the datafile `fid` of `datafile_len` bytes.
    pub fn finish(mut self, fid: u64, datafile_len: u64) -> Vec<u8> {
        self.buf[..8].copy_from_slice(&HINT_MAGIC);
        self.buf[8..12].copy_from_slice(&HINT_VERSION.to_le_bytes());
        self.buf[16..24].copy_from_slice(&fid.to_le_bytes());
        self.buf[24..32].copy_from_slice(&datafile_len.to_le_bytes());
        self.buf[32..40].copy_from_slice(&self.count.to_le_bytes());
        let crc = crc32c::crc32c(&self.buf);
        self.buf.extend_from_slice(&crc.to_le_bytes());
        self.buf.extend_from_slice(&[0; 4]);
        self.buf
    }
}

/// A parsed hint file.
pub struct Hint<'a> {
    /// The datafile's fid.
    pub fid: u64,
    /// The datafile's length when the hint was written.
    pub datafile_len: u64,
    /// The entries, in datafile order.
    pub entries: Vec<HintEntry<'a>>,
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Parses and verifies a hint file's bytes.
pub fn parse(bytes: &[u8]) -> Result<Hint<'_>, &'static str> {
    if bytes.len() < HEADER_LEN + TRAILER_LEN {
        return Err("hint file too short");
    }
    let body_len = bytes.len() - TRAILER_LEN;
    if crc32c::crc32c(&bytes[..body_len]) != u32_at(bytes, body_len)
        || u32_at(bytes, body_len + 4) != 0
    {
        return Err("hint checksum mismatch");
    }
    if bytes[..8] != HINT_MAGIC || u32_at(bytes, 8) != HINT_VERSION {
        return Err("bad hint magic or version");
    }
    let count = u64_at(bytes, 32);
    // Each entry takes at least ENTRY_LEN bytes, which bounds the allocation below.
    if count > (body_len / ENTRY_LEN) as u64 {
        return Err("hint entry count out of range");
    }
    let mut entries = Vec::with_capacity(count as usize);
    let mut at = HEADER_LEN;
    for _ in 0..count {
        if at + ENTRY_LEN > body_len {
            return Err("hint entry truncated");
        }
        let kind = RecordType::from_byte(bytes[at]).ok_or("bad hint entry type")?;
        let key_len = u32_at(bytes, at + 4) as usize;
        if kind != RecordType::Supersedes && key_len > KEY_SIZE_MAX {
            return Err("hint key too long");
        }
        let key_end = at + ENTRY_LEN + key_len;
        if key_end > body_len {
            return Err("hint key truncated");
        }
        entries.push(HintEntry {
            kind,
            seq: u64_at(bytes, at + 8),
            rev: u64_at(bytes, at + 16),
            offset: u64_at(bytes, at + 24),
            size: u32_at(bytes, at + 32),
            key: &bytes[at + ENTRY_LEN..key_end],
        });
        at = padded(key_end as u64) as usize;
    }
    if at != body_len {
        return Err("hint has trailing bytes");
    }
    Ok(Hint {
        fid: u64_at(bytes, 16),
        datafile_len: u64_at(bytes, 24),
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_any_flipped_byte_is_detected() {
        let mut builder = HintBuilder::new();
        let a = HintEntry {
            kind: RecordType::Document,
            seq: 3,
            rev: 4,
            offset: 48,
            size: 40,
            key: b"abc",
        };
        let b = HintEntry {
            kind: RecordType::Tombstone,
            key: b"k",
            offset: 96,
            ..a
        };
        builder.push(&a);
        builder.push(&b);
        let bytes = builder.finish(7, 1000);
        let hint = parse(&bytes).unwrap();
        assert_eq!((hint.fid, hint.datafile_len), (7, 1000));
        assert_eq!(hint.entries, vec![a, b]);
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            assert!(parse(&bad).is_err(), "flip at {i} not detected");
        }
    }
}
