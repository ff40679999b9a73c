//! Sequential reading of a journal or datafile, record by record, in large chunks.
//!
//! What it is: the one loop that walks a file's records (recovery, sealing, compaction, scans).
//! What it is not: a judge of what a bad record means; it reports where the good prefix ends and
//! why, and the caller decides (cut a journal's tail, or fail loudly on a sealed datafile).
//!
//! Invariants: records are visited in file order, each fully verified by `format::decode`;
//! memory is bounded by the chunk size or one record, whichever is larger.

use crate::error::StorageError;
use crate::format::{self, DecodeError, RecordRef};
use crate::io::FileHandle;

/// Bytes read per chunk.
const CHUNK_SIZE: u64 = 4 << 20;

/// Where the good prefix of a scanned range ends.
#[derive(Debug)]
pub struct ScanOutcome {
    /// The offset just after the last good record (padding included).
    pub good_end: u64,
    /// The first bad record, if the range did not end cleanly: its offset and the reason.
    pub bad: Option<(u64, DecodeError)>,
}

/// Visits the records of `handle` from `start` to `end` (exclusive) in order, stopping at the
/// first record that does not decode. I/O errors and errors from `visit` end the scan.
pub fn scan(
    handle: &dyn FileHandle,
    start: u64,
    end: u64,
    visit: &mut dyn FnMut(u64, RecordRef<'_>) -> Result<(), StorageError>,
    on_io: &dyn Fn(std::io::Error) -> StorageError,
) -> Result<ScanOutcome, StorageError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_start = start;
    let mut offset = start;
    while offset < end {
        let at = (offset - buf_start) as usize;
        match format::decode(&buf[at.min(buf.len())..]) {
            Ok(record) => {
                let next = offset + record.padded_size();
                if next > end {
                    return Ok(ScanOutcome {
                        good_end: offset,
                        bad: Some((
                            offset,
                            DecodeError::Short {
                                needed: next - offset,
                            },
                        )),
                    });
                }
                visit(offset, record)?;
                offset = next;
            }
            Err(DecodeError::Short { needed }) if buf_start + (buf.len() as u64) < end => {
                let needed = needed.max(format::HEADER_SIZE as u64);
                if offset + needed > end {
                    return Ok(ScanOutcome {
                        good_end: offset,
                        bad: Some((offset, DecodeError::Short { needed })),
                    });
                }
                let len = CHUNK_SIZE.max(needed).min(end - offset);
                buf.resize(len as usize, 0);
                handle.read_exact_at(&mut buf, offset).map_err(on_io)?;
                buf_start = offset;
            }
            Err(e) => {
                return Ok(ScanOutcome {
                    good_end: offset,
                    bad: Some((offset, e)),
                })
            }
        }
    }
    Ok(ScanOutcome {
        good_end: offset,
        bad: None,
    })
}
