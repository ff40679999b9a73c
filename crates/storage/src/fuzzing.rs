//! The engine's private decoders, opened up for the fuzz targets in `fuzz/` (hidden from docs).
//!
//! What it is: re-exports of the record format (`format`: [`decode`], [`encode`], the group
//! marker and commit record codecs, and the constants of its layout) and the hint-file parser (`hint`: [`parse_hint`]), plus two helpers
//! that give fuzzed bytes valid checksums ([`reseal_records`], [`reseal_hint`]), so that a fuzzer
//! which cannot compute CRC32C still reaches the code behind the checks (recovery's resolution
//! of versions, hint entries, supersedes lists, metadata records).
//!
//! What it is not: an API. Nothing outside `fuzz/` may use it; the items may change with the
//! format without notice. The engine itself never calls the helpers.
//!
//! Invariants: the helpers only rewrite checksum fields (a record's header check and CRC, a hint
//! file's trailer); every other byte, and the length of the buffer, stays as it was.

pub use crate::format::{
    decode, encode, encode_commit, encode_group_marker, header_check, padded, parse_commit,
    parse_fids, parse_file_header, parse_group_marker, DecodeError, FileHeader, GroupMarker,
    RecordRef, RecordType, ALIGN, FILE_HEADER_RECORD_SIZE, HEADER_SIZE, KEY_SIZE_MAX,
    LINK_RECORD_SIZE, PREFIX_SIZE, RECORD_SIZE_MAX,
};
pub use crate::hint::{parse as parse_hint, Hint, HintEntry};

/// Rewrites the header check and CRC of each record laid out back to back in `buf` from offset
/// 0, as far as the size fields allow (a size below the prefix, or past the buffer, ends it).
/// Returns the offset where it stopped.
pub fn reseal_records(buf: &mut [u8]) -> usize {
    let mut at = 0usize;
    while buf.len() - at >= PREFIX_SIZE {
        let rec = &mut buf[at..];
        let size = u32::from_le_bytes(rec[..4].try_into().expect("4 bytes"));
        let size_usize = size as usize;
        if size_usize < PREFIX_SIZE || size_usize > rec.len() {
            break;
        }
        let key_len = u32::from_le_bytes(rec[12..16].try_into().expect("4 bytes"));
        let check = header_check(size, rec[8], key_len);
        rec[10..12].copy_from_slice(&check.to_le_bytes());
        let crc = crc32c::crc32c(&rec[..4]);
        let crc = crc32c::crc32c_append(crc, &[0; 4]);
        let crc = crc32c::crc32c_append(crc, &rec[8..size_usize]);
        rec[4..8].copy_from_slice(&crc.to_le_bytes());
        at += padded(u64::from(size)) as usize;
        if at >= buf.len() {
            return buf.len();
        }
    }
    at
}

/// Rewrites the trailer of a hint file (its CRC32C and reserved word) so that it matches the
/// bytes before it; a buffer too short for a trailer is left alone.
pub fn reseal_hint(buf: &mut [u8]) {
    const TRAILER_LEN: usize = 8;
    if buf.len() < TRAILER_LEN {
        return;
    }
    let body_len = buf.len() - TRAILER_LEN;
    let crc = crc32c::crc32c(&buf[..body_len]);
    buf[body_len..body_len + 4].copy_from_slice(&crc.to_le_bytes());
    buf[body_len + 4..].fill(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resealed_records_decode_and_keep_their_content() {
        let mut buf = encode(RecordType::Document, 3, 4, b"key", b"value");
        buf.extend(encode(RecordType::Tombstone, 5, 6, b"key", b""));
        let first = padded(decode(&buf).unwrap().size.into()) as usize;
        buf[PREFIX_SIZE] = b'K';
        buf[first + 17] ^= 0x40;
        assert!(decode(&buf).is_err());
        assert_eq!(reseal_records(&mut buf), buf.len());
        let rec = decode(&buf).unwrap();
        assert_eq!((rec.key, rec.value), (&b"Key"[..], &b"value"[..]));
        assert!(decode(&buf[first..]).is_ok());
    }

    #[test]
    fn a_resealed_hint_passes_its_checksum() {
        let mut bytes = vec![0u8; 48];
        bytes[..8].copy_from_slice(b"QUINCEH1");
        bytes[8] = 1;
        reseal_hint(&mut bytes);
        let hint = parse_hint(&bytes).unwrap();
        assert!(hint.entries.is_empty());
    }
}
