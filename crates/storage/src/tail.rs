//! What counts as a torn tail: the rule that decides whether the bytes after a journal's last
//! good record may be cut (a crash interrupted an append) or must be kept (the file is damaged).
//!
//! What it is: [`classify`], called by recovery with the offset of the first record of the
//! active journal that does not verify. A crash can only tear the *last* append, and under the
//! fault model of `docs/safety.md` a torn append leaves one of three shapes:
//! - the file ends inside the record: its header is incomplete, or it is complete (its header
//!   check passes) and declares more bytes than the file has (`Short`);
//! - zeroes where the record should start, and nothing but zeroes to the end of the file (space
//!   the file system allocated but never wrote: `Zero`);
//! - a record whose bytes are whole up to a 512-byte boundary and zero from there to the end of
//!   the file (sectors the disk never wrote): a header damaged only by such zeroes, or a whole
//!   header whose record fails its checksum only because of them.
//!
//! Anything else is damage, and so is any tail, of whatever shape, after which a record verifies
//! at some 8-byte-aligned offset: a record that verifies after the bad one proves that later
//! writes happened, and a crash cannot tear a write that was followed by another.
//!
//! What it is not: repair. Recovery cuts a torn tail and refuses a damaged file
//! (`StorageError::Corrupted`, errorNum 1100); salvaging what a damaged file still holds is the
//! operator's decision (`crate::salvage`).
//!
//! Invariants: reading is bounded by the file's length, in chunks of [`CHUNK_SIZE`] (one record
//! more while a candidate record is checked); the verdict is `Torn` only for the shapes above.

use crate::error::StorageError;
use crate::format::{self, DecodeError, ALIGN, HEADER_SIZE};
use crate::io::FileHandle;

/// Bytes read at a time while looking at a tail.
const CHUNK_SIZE: u64 = 4 << 20;

/// The granularity at which a disk loses unwritten data after a power cut.
pub const SECTOR_SIZE: u64 = 512;

/// What the bytes after a journal's last good record are.
#[derive(Debug, PartialEq, Eq)]
pub enum Tail {
    /// The remains of one interrupted append: safe to cut.
    Torn,
    /// Damage: the bytes must be kept and the file refused.
    Damaged {
        /// Why the tail is not a torn append (for the error and the log).
        reason: String,
    },
}

/// Classifies the bytes `[bad, len)` of a journal whose record at `bad` failed with `error`.
pub fn classify(
    handle: &dyn FileHandle,
    bad: u64,
    len: u64,
    error: &DecodeError,
    on_io: &dyn Fn(std::io::Error) -> StorageError,
) -> Result<Tail, StorageError> {
    if let Some(at) = next_valid_record(handle, bad + ALIGN, len, on_io)? {
        return Ok(Tail::Damaged {
            reason: format!(
                "a record that does not verify ({error}) is followed by a valid record at offset \
                 {at}: not a torn tail"
            ),
        });
    }
    let damaged = |what: &str| Tail::Damaged {
        reason: format!("{what} ({error}): not the shape a crash leaves"),
    };
    let zeroes_from = zero_suffix_start(handle, bad, len, on_io)?;
    // The first sector boundary from which everything to the end of the file is zero: where a
    // disk that lost the rest of the append would have stopped writing.
    let lost_from = zeroes_from.div_ceil(SECTOR_SIZE) * SECTOR_SIZE;
    Ok(match error {
        DecodeError::Short { .. } => Tail::Torn,
        DecodeError::Zero if zeroes_from == bad => Tail::Torn,
        DecodeError::Zero => damaged("zeroed space followed by data"),
        DecodeError::Malformed(_) if lost_from < (bad + HEADER_SIZE as u64).min(len) => Tail::Torn,
        DecodeError::Malformed(_) => damaged("a damaged record header"),
        DecodeError::Checksum => {
            let end = record_end(handle, bad, len, on_io)?;
            if bad + (HEADER_SIZE as u64) <= lost_from && lost_from < end.min(len) {
                Tail::Torn
            } else {
                damaged("a whole record that fails its checksum")
            }
        }
    })
}

/// The end (before padding) of the record whose header at `at` verified.
fn record_end(
    handle: &dyn FileHandle,
    at: u64,
    len: u64,
    on_io: &dyn Fn(std::io::Error) -> StorageError,
) -> Result<u64, StorageError> {
    let mut head = [0u8; HEADER_SIZE];
    if at + HEADER_SIZE as u64 > len {
        return Ok(len);
    }
    handle.read_exact_at(&mut head, at).map_err(on_io)?;
    let size = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
    Ok(at + u64::from(size))
}

/// The offset from which every byte of `[from, len)` is zero (`len` when the last byte is not).
fn zero_suffix_start(
    handle: &dyn FileHandle,
    from: u64,
    len: u64,
    on_io: &dyn Fn(std::io::Error) -> StorageError,
) -> Result<u64, StorageError> {
    let mut end = len;
    let mut buf = Vec::new();
    while end > from {
        let start = end.saturating_sub(CHUNK_SIZE).max(from);
        buf.resize((end - start) as usize, 0);
        handle.read_exact_at(&mut buf, start).map_err(on_io)?;
        if let Some(i) = buf.iter().rposition(|&b| b != 0) {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(from)
}

/// The offset of the first record in `[from, len)`, at an 8-byte-aligned offset, whose header
/// check and checksum verify.
pub fn next_valid_record(
    handle: &dyn FileHandle,
    from: u64,
    len: u64,
    on_io: &dyn Fn(std::io::Error) -> StorageError,
) -> Result<Option<u64>, StorageError> {
    let mut chunk_start = from.next_multiple_of(ALIGN);
    let mut buf = Vec::new();
    let mut record = Vec::new();
    while chunk_start + HEADER_SIZE as u64 <= len {
        // Chunks overlap by a header, so every aligned header is seen whole in one of them.
        let chunk_end = (chunk_start + CHUNK_SIZE + HEADER_SIZE as u64).min(len);
        buf.resize((chunk_end - chunk_start) as usize, 0);
        handle.read_exact_at(&mut buf, chunk_start).map_err(on_io)?;
        let mut at = 0usize;
        while at + HEADER_SIZE <= buf.len() {
            let offset = chunk_start + at as u64;
            // The header alone (size, type, header check) rules out almost every offset; only
            // a candidate costs a read of the whole record.
            if let Err(DecodeError::Short { needed }) = format::decode(&buf[at..at + HEADER_SIZE]) {
                if needed > HEADER_SIZE as u64 && offset + needed <= len {
                    record.resize(needed as usize, 0);
                    handle.read_exact_at(&mut record, offset).map_err(on_io)?;
                    if format::decode(&record).is_ok() {
                        return Ok(Some(offset));
                    }
                }
            }
            at += ALIGN as usize;
        }
        chunk_start += CHUNK_SIZE;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode, RecordType};
    use crate::io::{FileIo, SimFileIo};
    use std::path::Path;

    fn verdict(bytes: &[u8], bad: u64, error: DecodeError) -> Tail {
        let io = SimFileIo::new();
        io.create_dir_all(Path::new("/d")).unwrap();
        let file = io.create_new(Path::new("/d/f")).unwrap();
        file.write_all_at(bytes, 0).unwrap();
        classify(file.as_ref(), bad, bytes.len() as u64, &error, &|e| {
            StorageError::io(Path::new("/d/f"), e)
        })
        .unwrap()
    }

    fn record(n: u8, value_len: usize) -> Vec<u8> {
        encode(
            RecordType::Document,
            u64::from(n),
            1,
            &[b'k', n],
            &vec![b'v'; value_len],
        )
    }

    #[test]
    fn a_short_record_and_zeroes_are_torn() {
        let whole = record(1, 100);
        let cut = &whole[..whole.len() / 2];
        let short = DecodeError::Short { needed: 200 };
        assert_eq!(verdict(cut, 0, short.clone()), Tail::Torn);
        assert_eq!(verdict(&whole[..10], 0, short), Tail::Torn);
        assert_eq!(verdict(&[0u8; 4096], 0, DecodeError::Zero), Tail::Torn);
    }

    #[test]
    fn a_record_zeroed_from_a_sector_boundary_is_torn() {
        let mut bytes = record(1, 2000);
        bytes[1024..].fill(0);
        assert_eq!(verdict(&bytes, 0, DecodeError::Checksum), Tail::Torn);
        // Zeroes that stop before the record's last byte are not what a disk loses.
        let mut bytes = record(1, 2000);
        let last = 32 + 2 + 2000 - 1;
        bytes[1000..last].fill(0);
        assert!(matches!(
            verdict(&bytes, 0, DecodeError::Checksum),
            Tail::Damaged { .. }
        ));
    }

    #[test]
    fn a_whole_record_with_a_bad_checksum_is_damage() {
        let mut bytes = record(1, 100);
        bytes[50] ^= 0xff;
        assert!(matches!(
            verdict(&bytes, 0, DecodeError::Checksum),
            Tail::Damaged { .. }
        ));
    }

    #[test]
    fn a_valid_record_after_the_bad_one_is_damage() {
        let mut bytes = record(1, 100);
        bytes[50] ^= 0xff;
        let first = bytes.len();
        bytes.extend(record(2, 30));
        bytes.extend(vec![0u8; 3]);
        let tail = verdict(&bytes, 0, DecodeError::Checksum);
        let Tail::Damaged { reason } = tail else {
            panic!("a valid record after the damage must make it damage");
        };
        assert!(reason.contains(&format!("offset {first}")), "{reason}");
    }

    #[test]
    fn garbage_and_a_broken_header_are_damage() {
        let garbage: Vec<u8> = (0..300u32).map(|i| (i * 7919 % 251) as u8 | 1).collect();
        assert!(matches!(
            verdict(&garbage, 0, DecodeError::Malformed("size out of range")),
            Tail::Damaged { .. }
        ));
        let mut zero_then_data = vec![0u8; 600];
        zero_then_data[590] = 1;
        assert!(matches!(
            verdict(&zero_then_data, 0, DecodeError::Zero),
            Tail::Damaged { .. }
        ));
    }
}
