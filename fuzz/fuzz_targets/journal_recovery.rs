//! Fuzz target: recovery of a store whose files are arbitrary bytes, and the record decoder.
//!
//! What it is: the first input byte picks a mode (low two bits) and options; the rest becomes
//! file contents on the in-memory `SimFileIo`, then `Store::open` runs:
//! - mode 0: the journal of a store that took one write (`journal-1.db`);
//! - mode 1: `[hint length: u16 LE][hint][datafile]`: the sealed datafile and its hint file of
//!   a store that also has a journal (`datafile-1.db`, `datafile-1.hint`, `journal-2.db`; the
//!   names are whatever the engine chose, see `quince_fuzz::stores::Fixtures`);
//! - mode 2: the record decoder and the hint parser alone, on the bytes;
//! - mode 3: `[hint length: u16][journal length: u16][hint][journal][datafile]`: all three
//!   files of the sealed store.
//!
//! Bit 2 reseals: the checksums of the fuzzed records and hint are recomputed first, so the
//! input reaches what lies behind them (version resolution, hint entries, supersedes lists,
//! metadata) instead of stopping at a CRC mismatch. Bit 3 opens with salvage on (the
//! operator's `--database.ignore-datafile-errors`).
//!
//! What it is not: a crash-consistency test (the simulated disk injects no faults; the input is
//! the damage) nor a check of *what* recovery keeps.
//!
//! Invariants checked: nothing panics or hangs; `Store::open` returns a store or a
//! `StorageError`; recovery never yields a version that was not written: every key, revision
//! and value an opened store serves (by key or by scan) is a document record that decodes
//! somewhere in its files (`stores::written`); an opened store survives `stores::exercise`
//! (every key read back with the revision its index holds, a write, a clean close, and a reopen
//! that serves the same versions and the write); a record that decodes re-encodes to the same
//! bytes, and its header and payload parse or are refused without a panic (a group marker that
//! parses re-encodes to the same bytes).

#![no_main]

use libfuzzer_sys::fuzz_target;
use quince_fuzz::stores::{self, fixtures};
use quince_fuzz::Input;
use quince_storage::fuzzing as format;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let flags = input.u8();
    let reseal = flags & 0b100 != 0;
    let salvage = flags & 0b1000 != 0;
    match flags & 0b11 {
        0 => {
            let mut journal = input.rest().to_vec();
            if reseal {
                format::reseal_records(&mut journal);
            }
            let io = fixtures().fresh.crash(0, false);
            stores::replace_file(&io, &fixtures().fresh_journal, &journal);
            recover(&io, salvage);
        }
        1 | 3 => {
            let both = flags & 0b11 == 3;
            let hint_len = usize::from(input.u16());
            let journal_len = if both { usize::from(input.u16()) } else { 0 };
            let mut hint = input.bytes(hint_len).to_vec();
            let mut journal = input.bytes(journal_len).to_vec();
            let mut datafile = input.rest().to_vec();
            if reseal {
                format::reseal_hint(&mut hint);
                format::reseal_records(&mut journal);
                format::reseal_records(&mut datafile);
            }
            let io = fixtures().sealed.crash(0, false);
            stores::replace_file(&io, &fixtures().sealed_datafile, &datafile);
            stores::replace_file(&io, &fixtures().sealed_hint, &hint);
            if both {
                stores::replace_file(&io, &fixtures().sealed_journal, &journal);
            }
            recover(&io, salvage);
        }
        _ => {
            let mut bytes = input.rest().to_vec();
            if reseal {
                format::reseal_records(&mut bytes);
            }
            decode_all(&bytes);
            if reseal {
                format::reseal_hint(&mut bytes);
            }
            parse_hint(&bytes);
        }
    }
});

/// Opens the store and, when it opens, puts it through its paces.
fn recover(io: &quince_storage::io::SimFileIo, salvage: bool) {
    let written = stores::written(io);
    if let Ok(store) = stores::open(io, salvage) {
        stores::exercise(io, store, salvage, &written);
    }
}

/// Decodes records back to back, as a scan does, checking each one that decodes.
fn decode_all(bytes: &[u8]) {
    let mut at = 0usize;
    while at < bytes.len() {
        let Ok(record) = format::decode(&bytes[at..]) else {
            return;
        };
        let size = record.size as usize;
        let padded = record.padded_size() as usize;
        assert!(size >= format::PREFIX_SIZE && padded <= bytes.len() - at);
        assert_eq!(
            record.key.len() + record.value.len() + format::PREFIX_SIZE,
            size
        );
        let encoded = format::encode(
            record.kind,
            record.seq,
            record.rev,
            record.key,
            record.value,
        );
        assert_eq!(encoded.len(), padded, "re-encoding changes the padded size");
        assert_eq!(
            &encoded[..size],
            &bytes[at..at + size],
            "a decoded record does not re-encode to its bytes"
        );
        match record.kind {
            format::RecordType::FileHeader => {
                let _ = format::parse_file_header(&record);
            }
            format::RecordType::Supersedes | format::RecordType::Manifest => {
                let _ = format::parse_fids(record.value);
            }
            format::RecordType::GroupMarker => {
                // A marker that parses re-encodes to its bytes when framed as the engine
                // frames it (no key, revision 0).
                if let Ok(marker) = format::parse_group_marker(record.value) {
                    if record.key.is_empty() && record.rev == 0 {
                        let encoded = format::encode_group_marker(record.seq, &marker);
                        assert_eq!(&encoded[..size], &bytes[at..at + size]);
                    }
                }
            }
            format::RecordType::Commit => {
                let _ = format::parse_commit(record.value);
            }
            _ => {}
        }
        at += padded;
    }
}

/// Parses the bytes as a hint file; a hint that parses must describe bytes it holds.
fn parse_hint(bytes: &[u8]) {
    let Ok(hint) = format::parse_hint(bytes) else {
        return;
    };
    for entry in &hint.entries {
        assert!(entry.key.len() <= bytes.len());
        let _ = (entry.kind, entry.seq, entry.rev, entry.offset, entry.size);
    }
}
