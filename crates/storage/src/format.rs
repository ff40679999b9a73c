//! The record (marker) format of journals and datafiles: layout, encoding, decoding, CRC.
//!
//! What it is: pure functions over byte slices. Every record is
//!
//! ```text
//! 0       4       8    9   10      12      16      24      32        32+k      size   (pad to 8)
//! | size  | crc   |type| 0 | hchk  |key_len| seq   | rev   | key ... | value ... | 0.. |
//! ```
//!
//! little-endian; `size` counts the whole record before padding; `crc` is CRC32C over those
//! `size` bytes with the crc field read as zero; `hchk` (the header check) is the low 16 bits of
//! CRC32C over the framing fields alone (`size`, `type`, `key_len`), so a damaged header is told
//! apart from a record cut short by a crash (see `crate::tail`); `seq` is the store's own write
//! sequence number (recovery resolves versions by it), `rev` the caller's revision.
//!
//! Typed payloads have their codecs here too: file header, link, footer, supersedes, and the
//! transaction records, the group marker (`trx u64 | count u32 | flags u32 | commit_participant
//! u64`) and the commit record (`trx u64`).
//!
//! What it is not: I/O. Reading and scanning files lives in `scan.rs`; following groups across
//! records, in `group_reader.rs`.
//!
//! Invariants: a record decodes only if its size is sane, its padding fits, its type is known, its
//! header check and its CRC match, so a torn or zeroed tail can never decode as a record; encode
//! then decode is the identity.

use std::fmt;

/// Bytes of the fixed record header (size, crc, type, reserved, key length).
pub const HEADER_SIZE: usize = 16;
/// Bytes of the header plus the `seq` and `rev` stamps every record carries.
pub const PREFIX_SIZE: usize = HEADER_SIZE + 16;
/// Records start at multiples of this.
pub const ALIGN: u64 = 8;
/// The largest record the engine writes (the marker bound): 1 GiB.
pub const RECORD_SIZE_MAX: u64 = 1 << 30;
/// The largest write sequence number the engine hands out or accepts from a file (2^62: more
/// than a century at a billion writes a second), so that `seq + 1` never overflows.
pub const SEQ_MAX: u64 = 1 << 62;
/// The longest key the engine accepts.
pub const KEY_SIZE_MAX: usize = 64 * 1024;
/// The magic at the start of every journal and datafile's header record.
pub const FILE_MAGIC: [u8; 8] = *b"QUINCEJ1";
/// The version of this format (2: records carry the header check).
pub const FORMAT_VERSION: u32 = 2;
/// Bytes of a file header record (prefix plus magic, version, reserved, fid, maximal size).
pub const FILE_HEADER_RECORD_SIZE: u64 = PREFIX_SIZE as u64 + 32;
/// Bytes of a link record (prefix plus the fid it names): the first record of a journal the
/// writer took, right after the file header.
pub const LINK_RECORD_SIZE: u64 = PREFIX_SIZE as u64 + 8;
/// Bytes of a footer record (prefix plus record count).
pub const FOOTER_RECORD_SIZE: u64 = PREFIX_SIZE as u64 + 8;

/// Bytes of a group marker's value: trx u64, count u32, flags u32, commit participant u64.
pub const GROUP_MARKER_VALUE_SIZE: usize = 24;
/// Bytes of a group marker record (prefix plus its value; a multiple of 8, so no padding).
pub const GROUP_MARKER_RECORD_SIZE: u64 = PREFIX_SIZE as u64 + GROUP_MARKER_VALUE_SIZE as u64;
/// Bytes of a commit record (prefix plus the trx).
pub const COMMIT_RECORD_SIZE: u64 = PREFIX_SIZE as u64 + 8;
/// Group marker flag: this part is the transaction's commit point.
pub const GROUP_FLAG_COMMIT_POINT: u32 = 1;

const _: () = assert!(HEADER_SIZE == 16);
const _: () = assert!(GROUP_MARKER_RECORD_SIZE.is_multiple_of(ALIGN));
const _: () = assert!(COMMIT_RECORD_SIZE.is_multiple_of(ALIGN));
const _: () = assert!(FILE_HEADER_RECORD_SIZE.is_multiple_of(ALIGN));
const _: () = assert!(FOOTER_RECORD_SIZE.is_multiple_of(ALIGN));
const _: () = assert!(RECORD_SIZE_MAX < u32::MAX as u64);

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RecordType {
    /// First record of every file: magic, format version, fid, maximal size.
    FileHeader = 1,
    /// A version of a key (a put).
    Document = 2,
    /// A removal of a key.
    Tombstone = 3,
    /// Every record with a lower `seq` is dead.
    Truncate = 4,
    /// Last record of a sealed file: the number of records before it.
    Footer = 5,
    /// Second record of a compaction output: the fids (u64 each) of the files it replaces.
    Supersedes = 6,
    /// The store's metadata (an opaque value, the newest by `seq` wins; see `Store::meta`).
    Meta = 7,
    /// The only record of a store's manifest file: the fids of its journal and datafiles.
    Manifest = 8,
    /// First record after the header of a journal the writer took: the fid (u64) of the
    /// journal it handed off before (0: none that could still be unsynced). Recovery reads the
    /// journals as one log through these links (`chain.rs`).
    Link = 9,
    /// First record of a transaction's group in one store: the transaction, how many records
    /// follow it in the group, whether this part is the commit point, and (if not) which store
    /// holds the commit point (`GroupMarker`). The group's records follow it at once, in the
    /// same journal.
    GroupMarker = 10,
    /// Last record of the commit-point part of a transaction spanning several stores: the
    /// transaction (u64) is committed once this record is durable.
    Commit = 11,
}

impl RecordType {
    /// The type for a stored byte, if it is one.
    pub fn from_byte(byte: u8) -> Option<RecordType> {
        Some(match byte {
            1 => RecordType::FileHeader,
            2 => RecordType::Document,
            3 => RecordType::Tombstone,
            4 => RecordType::Truncate,
            5 => RecordType::Footer,
            6 => RecordType::Supersedes,
            7 => RecordType::Meta,
            8 => RecordType::Manifest,
            9 => RecordType::Link,
            10 => RecordType::GroupMarker,
            11 => RecordType::Commit,
            _ => return None,
        })
    }
}

/// A decoded record, borrowing from the buffer it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordRef<'a> {
    /// The record's type.
    pub kind: RecordType,
    /// The store's write sequence number.
    pub seq: u64,
    /// The caller's revision.
    pub rev: u64,
    /// The key (empty for non-key records).
    pub key: &'a [u8],
    /// The value (the payload for header, footer and supersedes records).
    pub value: &'a [u8],
    /// The record's size before padding.
    pub size: u32,
}

impl RecordRef<'_> {
    /// Bytes the record occupies in its file, padding included.
    pub fn padded_size(&self) -> u64 {
        padded(u64::from(self.size))
    }
}

/// Why bytes do not decode as a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The buffer ends before the record does; `needed` bytes (padded) would be required.
    Short {
        /// Bytes needed from the record's start.
        needed: u64,
    },
    /// The size field is zero: never-written (zeroed) space.
    Zero,
    /// A field is impossible (size, key length, type, reserved bytes).
    Malformed(&'static str),
    /// The checksum does not match.
    Checksum,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Short { needed } => write!(f, "record truncated ({needed} bytes needed)"),
            DecodeError::Zero => f.write_str("zeroed space where a record should start"),
            DecodeError::Malformed(what) => write!(f, "malformed record: {what}"),
            DecodeError::Checksum => f.write_str("record checksum mismatch"),
        }
    }
}

/// `len` rounded up to the record alignment.
pub fn padded(len: u64) -> u64 {
    len.div_ceil(ALIGN) * ALIGN
}

/// The size (before padding) of a record with this key and value, if it is within bounds.
pub fn record_size(key_len: usize, value_len: usize) -> Option<u64> {
    let size = PREFIX_SIZE as u64 + key_len as u64 + value_len as u64;
    (key_len <= KEY_SIZE_MAX && size <= RECORD_SIZE_MAX).then_some(size)
}

/// Encodes a record, padding included, into a fresh buffer.
///
/// Panics if the record is out of bounds: callers check [`record_size`] first.
pub fn encode(kind: RecordType, seq: u64, rev: u64, key: &[u8], value: &[u8]) -> Vec<u8> {
    let size = record_size(key.len(), value.len()).expect("record within bounds");
    let mut buf = Vec::with_capacity(padded(size) as usize);
    encode_into(&mut buf, kind, seq, rev, key, value);
    buf
}

/// Appends an encoded record, padding included, to `buf`.
pub fn encode_into(
    buf: &mut Vec<u8>,
    kind: RecordType,
    seq: u64,
    rev: u64,
    key: &[u8],
    value: &[u8],
) {
    let size = record_size(key.len(), value.len()).expect("record within bounds");
    let start = buf.len();
    let check = header_check(size as u32, kind as u8, key.len() as u32);
    buf.extend_from_slice(&(size as u32).to_le_bytes());
    buf.extend_from_slice(&[0; 4]);
    buf.extend_from_slice(&[kind as u8, 0]);
    buf.extend_from_slice(&check.to_le_bytes());
    buf.extend_from_slice(&(key.len() as u32).to_le_bytes());
    buf.extend_from_slice(&seq.to_le_bytes());
    buf.extend_from_slice(&rev.to_le_bytes());
    buf.extend_from_slice(key);
    buf.extend_from_slice(value);
    let crc = crc32c::crc32c(&buf[start..]);
    buf[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    buf.resize(start + padded(size) as usize, 0);
}

/// The header check of a record's framing fields: the low 16 bits of CRC32C over `size`, `type`
/// and `key_len` as they are laid out.
pub fn header_check(size: u32, kind: u8, key_len: u32) -> u16 {
    let crc = crc32c::crc32c(&size.to_le_bytes());
    let crc = crc32c::crc32c_append(crc, &[kind]);
    let crc = crc32c::crc32c_append(crc, &key_len.to_le_bytes());
    (crc & 0xffff) as u16
}

/// The CRC of a record's bytes with its crc field taken as zero.
fn record_crc(bytes: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&bytes[..4]);
    let crc = crc32c::crc32c_append(crc, &[0; 4]);
    crc32c::crc32c_append(crc, &bytes[8..])
}

fn u32_at(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().expect("8 bytes"))
}

/// Decodes the record at the start of `buf`, verifying everything that can be verified.
pub fn decode(buf: &[u8]) -> Result<RecordRef<'_>, DecodeError> {
    if buf.len() < HEADER_SIZE {
        return Err(DecodeError::Short {
            needed: HEADER_SIZE as u64,
        });
    }
    let size = u32_at(buf, 0);
    if size == 0 {
        return Err(DecodeError::Zero);
    }
    if u64::from(size) < PREFIX_SIZE as u64 || u64::from(size) > RECORD_SIZE_MAX {
        return Err(DecodeError::Malformed("size out of range"));
    }
    let kind = RecordType::from_byte(buf[8]).ok_or(DecodeError::Malformed("unknown type"))?;
    if buf[9] != 0 {
        return Err(DecodeError::Malformed("reserved byte set"));
    }
    let check = u16::from_le_bytes([buf[10], buf[11]]);
    if check != header_check(size, buf[8], u32_at(buf, 12)) {
        return Err(DecodeError::Malformed("header check mismatch"));
    }
    let key_len = u32_at(buf, 12) as usize;
    if key_len > KEY_SIZE_MAX || PREFIX_SIZE + key_len > size as usize {
        return Err(DecodeError::Malformed("key length out of range"));
    }
    let padded_size = padded(u64::from(size));
    if (buf.len() as u64) < padded_size {
        return Err(DecodeError::Short {
            needed: padded_size,
        });
    }
    let bytes = &buf[..size as usize];
    if record_crc(bytes) != u32_at(buf, 4) {
        return Err(DecodeError::Checksum);
    }
    Ok(RecordRef {
        kind,
        seq: u64_at(buf, 16),
        rev: u64_at(buf, 24),
        key: &bytes[PREFIX_SIZE..PREFIX_SIZE + key_len],
        value: &bytes[PREFIX_SIZE + key_len..],
        size,
    })
}

/// What a file header record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// The file's id.
    pub fid: u64,
    /// The size the file was created for (a journal is sealed before passing it).
    pub maximal_size: u64,
}

/// Encodes a file header record.
pub fn encode_file_header(header: FileHeader) -> Vec<u8> {
    let mut payload = Vec::with_capacity(32);
    payload.extend_from_slice(&FILE_MAGIC);
    payload.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    payload.extend_from_slice(&[0; 4]);
    payload.extend_from_slice(&header.fid.to_le_bytes());
    payload.extend_from_slice(&header.maximal_size.to_le_bytes());
    encode(RecordType::FileHeader, 0, 0, &[], &payload)
}

/// Reads a file header out of a decoded record.
pub fn parse_file_header(record: &RecordRef<'_>) -> Result<FileHeader, &'static str> {
    let p = record.value;
    if record.kind != RecordType::FileHeader || p.len() != 32 {
        return Err("first record is not a file header");
    }
    if p[..8] != FILE_MAGIC {
        return Err("bad file magic");
    }
    if u32_at(p, 8) != FORMAT_VERSION {
        return Err("unsupported format version");
    }
    Ok(FileHeader {
        fid: u64_at(p, 16),
        maximal_size: u64_at(p, 24),
    })
}

/// Encodes a link record naming the journal handed off before this one.
pub fn encode_link(previous_fid: u64) -> Vec<u8> {
    encode(RecordType::Link, 0, 0, &[], &previous_fid.to_le_bytes())
}

/// The fid a link record's payload names.
pub fn parse_link(payload: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(payload.try_into().ok()?))
}

/// Encodes a footer record for a file holding `records` records before it.
pub fn encode_footer(records: u64) -> Vec<u8> {
    encode(RecordType::Footer, 0, 0, &[], &records.to_le_bytes())
}

/// Encodes a supersedes record naming the files a compaction output replaces.
pub fn encode_supersedes(fids: &[u64]) -> Vec<u8> {
    let payload: Vec<u8> = fids.iter().flat_map(|f| f.to_le_bytes()).collect();
    encode(RecordType::Supersedes, 0, 0, &[], &payload)
}

/// The fids a supersedes payload names.
pub fn parse_fids(payload: &[u8]) -> Result<Vec<u64>, &'static str> {
    if !payload.len().is_multiple_of(8) {
        return Err("supersedes payload is not a list of u64");
    }
    Ok(payload
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
        .collect())
}

/// What a group marker says (`docs/storage-format.md`, "Transaction groups").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMarker {
    /// The transaction (nonzero).
    pub trx: u64,
    /// Records of the group after the marker (at least 1), its commit record included.
    pub count: u32,
    /// This part is the transaction's commit point (flag bit 0, `GROUP_FLAG_COMMIT_POINT`).
    pub commit_point: bool,
    /// The caller's id of the store holding the commit point (0 when this part is it).
    pub commit_participant: u64,
}

/// Encodes a group marker record with `seq`.
pub fn encode_group_marker(seq: u64, marker: &GroupMarker) -> Vec<u8> {
    assert!(
        marker.trx != 0 && marker.count > 0,
        "a group belongs to a transaction and holds records: {marker:?}"
    );
    assert!(
        !marker.commit_point || marker.commit_participant == 0,
        "a commit point names no other participant: {marker:?}"
    );
    let flags = if marker.commit_point {
        GROUP_FLAG_COMMIT_POINT
    } else {
        0
    };
    let mut value = Vec::with_capacity(GROUP_MARKER_VALUE_SIZE);
    value.extend_from_slice(&marker.trx.to_le_bytes());
    value.extend_from_slice(&marker.count.to_le_bytes());
    value.extend_from_slice(&flags.to_le_bytes());
    value.extend_from_slice(&marker.commit_participant.to_le_bytes());
    let bytes = encode(RecordType::GroupMarker, seq, 0, &[], &value);
    debug_assert_eq!(bytes.len() as u64, GROUP_MARKER_RECORD_SIZE);
    bytes
}

/// Reads a group marker out of a decoded record's value; refuses what the engine never writes.
pub fn parse_group_marker(value: &[u8]) -> Result<GroupMarker, &'static str> {
    if value.len() != GROUP_MARKER_VALUE_SIZE {
        return Err("group marker value is not 24 bytes");
    }
    let flags = u32_at(value, 12);
    let marker = GroupMarker {
        trx: u64_at(value, 0),
        count: u32_at(value, 8),
        commit_point: flags & GROUP_FLAG_COMMIT_POINT != 0,
        commit_participant: u64_at(value, 16),
    };
    if flags & !GROUP_FLAG_COMMIT_POINT != 0 {
        return Err("group marker has unknown flags");
    }
    if marker.trx == 0 || marker.count == 0 {
        return Err("group marker names no transaction or no records");
    }
    if marker.commit_point && marker.commit_participant != 0 {
        return Err("group marker is the commit point but names another participant");
    }
    Ok(marker)
}

/// Encodes a commit record for `trx` with `seq`.
pub fn encode_commit(seq: u64, trx: u64) -> Vec<u8> {
    assert!(trx != 0, "transaction 0 is never committed");
    encode(RecordType::Commit, seq, 0, &[], &trx.to_le_bytes())
}

/// The transaction a commit record's value names.
pub fn parse_commit(value: &[u8]) -> Result<u64, &'static str> {
    match value.try_into().map(u64::from_le_bytes) {
        Ok(trx) if trx != 0 => Ok(trx),
        _ => Err("commit record value is not a nonzero u64"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_marker_and_commit_round_trip() {
        let marker = GroupMarker {
            trx: 77,
            count: 3,
            commit_point: false,
            commit_participant: 9,
        };
        let bytes = encode_group_marker(5, &marker);
        assert_eq!(bytes.len() as u64, GROUP_MARKER_RECORD_SIZE);
        let record = decode(&bytes).unwrap();
        assert_eq!((record.kind, record.seq), (RecordType::GroupMarker, 5));
        assert_eq!(parse_group_marker(record.value), Ok(marker));
        let bytes = encode_commit(6, 77);
        assert_eq!(bytes.len() as u64, COMMIT_RECORD_SIZE);
        assert_eq!(parse_commit(decode(&bytes).unwrap().value), Ok(77));
        // What the engine never writes is refused.
        let mut value = bytes[..0].to_vec();
        value.extend_from_slice(&77u64.to_le_bytes());
        value.extend_from_slice(&3u32.to_le_bytes());
        value.extend_from_slice(&1u32.to_le_bytes());
        value.extend_from_slice(&9u64.to_le_bytes());
        assert!(
            parse_group_marker(&value).is_err(),
            "commit point naming another store"
        );
        value[12] = 2;
        assert!(parse_group_marker(&value).is_err(), "unknown flag");
        assert!(parse_commit(&0u64.to_le_bytes()).is_err());
    }

    #[test]
    fn document_round_trips_and_is_aligned() {
        let buf = encode(RecordType::Document, 7, 42, b"key", b"value!");
        assert_eq!(buf.len() as u64 % ALIGN, 0);
        let rec = decode(&buf).unwrap();
        assert_eq!(rec.kind, RecordType::Document);
        assert_eq!(
            (rec.seq, rec.rev, rec.key, rec.value),
            (7, 42, &b"key"[..], &b"value!"[..])
        );
        assert_eq!(rec.padded_size(), buf.len() as u64);
    }

    #[test]
    fn zeroes_and_short_buffers_are_not_records() {
        assert_eq!(decode(&[0; 64]), Err(DecodeError::Zero));
        assert!(matches!(decode(&[0; 8]), Err(DecodeError::Short { .. })));
        let buf = encode(RecordType::Document, 1, 1, b"k", b"v");
        assert!(matches!(
            decode(&buf[..buf.len() - 8]),
            Err(DecodeError::Short { .. })
        ));
    }

    #[test]
    fn oversized_records_are_refused() {
        assert_eq!(record_size(KEY_SIZE_MAX + 1, 0), None);
        assert_eq!(record_size(1, RECORD_SIZE_MAX as usize), None);
    }

    #[test]
    fn file_header_round_trips() {
        let header = FileHeader {
            fid: 9,
            maximal_size: 1 << 20,
        };
        let buf = encode_file_header(header);
        assert_eq!(buf.len() as u64, FILE_HEADER_RECORD_SIZE);
        assert_eq!(parse_file_header(&decode(&buf).unwrap()), Ok(header));
        assert_eq!(encode_footer(3).len() as u64, FOOTER_RECORD_SIZE);
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn kind() -> impl Strategy<Value = RecordType> {
            prop_oneof![
                Just(RecordType::Document),
                Just(RecordType::Tombstone),
                Just(RecordType::Truncate),
            ]
        }

        proptest! {
            #[test]
            fn encode_then_decode_is_identity(
                kind in kind(),
                seq: u64,
                rev: u64,
                key in proptest::collection::vec(any::<u8>(), 0..64),
                value in proptest::collection::vec(any::<u8>(), 0..256),
            ) {
                let buf = encode(kind, seq, rev, &key, &value);
                prop_assert_eq!(buf.len() as u64 % ALIGN, 0);
                let rec = decode(&buf).unwrap();
                prop_assert_eq!(rec.kind, kind);
                prop_assert_eq!((rec.seq, rec.rev), (seq, rev));
                prop_assert_eq!(rec.key, &key[..]);
                prop_assert_eq!(rec.value, &value[..]);
            }

            #[test]
            fn any_flipped_byte_is_detected(
                seq: u64,
                rev: u64,
                key in proptest::collection::vec(any::<u8>(), 1..32),
                value in proptest::collection::vec(any::<u8>(), 0..128),
                at: prop::sample::Index,
                mask in 1u8..=255,
            ) {
                let mut buf = encode(RecordType::Document, seq, rev, &key, &value);
                let size = record_size(key.len(), value.len()).unwrap() as usize;
                // Bytes past `size` are padding, which the record does not cover.
                let i = at.index(size);
                buf[i] ^= mask;
                prop_assert!(decode(&buf).is_err(), "flip at {} went unnoticed", i);
            }
        }
    }
}
