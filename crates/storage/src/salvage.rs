//! Salvage: the operator's way past a damaged file (`--database.ignore-datafile-errors`).
//!
//! What it is: [`salvage_damaged_files`], run by recovery before anything else when
//! `StoreOptions::salvage` is set. It verifies every datafile and the journal in full (hints are
//! not trusted for this), and for each damaged one (a record that does not verify in a sealed
//! datafile, a journal tail that is not a torn append, a broken file header, records that break
//! the rules of transaction groups) it:
//! 1. copies every record that still verifies, skipping the damaged ranges (after a bad record
//!    it looks for the next 8-byte-aligned offset where a whole record verifies), into
//!    `compaction-<new fid>.db`: file header, a supersedes record naming the damaged file,
//!    the records with their own `seq`, footer; fsyncs it. Group markers are not copied (what
//!    is kept of a group becomes plain records), commit records are (so `Store::newest_commit`
//!    survives), and the records of a group still open where the file's verified records end
//!    are left out, as recovery would cut them (`salvage.group_dropped`);
//! 2. renames the damaged file to `<its name>.corrupt` (kept for the operator, never deleted by
//!    the engine) and fsyncs the directory;
//! 3. renames the copy to `datafile-<new fid>.db` and fsyncs the directory.
//!
//! A crash between 2 and 3 leaves the damaged file under its `.corrupt` name and the copy
//! unfinished (deleted by the next open as an unfinished compaction); the manifest still lists
//! the damaged file, so a plain open refuses ("set aside by an interrupted salvage") and a
//! salvaging open starts again from the `.corrupt` file. Ordinary recovery then opens the store
//! from the clean files, and the supersedes record keeps the manifest check satisfied.
//!
//! What it is not: automatic. Without the option a damaged file stops the store from opening
//! (`StorageError::Corrupted`); salvage loses the damaged records, and only an operator can
//! decide that this is better than restoring a backup. Nor does it keep transactions whole: a
//! group damaged in the middle keeps the records that verify, and a whole part that was pending
//! at the end of a salvaged journal is kept as if committed (its marker is not copied).
//!
//! Invariants: nothing is deleted; every record copied verified whole; each skipped range is
//! logged (`event = "salvage.skipped"`) with its file, offset and length.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::datafile::FileName;
use crate::error::StorageError;
use crate::format::{
    self, DecodeError, FileHeader, RecordRef, RecordType, FILE_HEADER_RECORD_SIZE,
};
use crate::group_reader::GroupReader;
use crate::io::{FileHandle, FileIo};
use crate::tail::{self, Tail};

/// The suffix a damaged file is set aside under.
pub const CORRUPT_SUFFIX: &str = ".corrupt";

/// Output bytes buffered before one write.
const FLUSH_SIZE: usize = 4 << 20;

/// The fid a `.corrupt` name set aside, if it is one.
fn corrupt_fid(name: &str) -> Option<(u64, FileName)> {
    let original = name.strip_suffix(CORRUPT_SUFFIX)?;
    let parsed = FileName::parse(original)?;
    match parsed {
        FileName::Journal(fid) | FileName::Datafile(fid) => Some((fid, parsed)),
        _ => None,
    }
}

/// Verifies every journal and datafile of `dir` in full and salvages the damaged ones, plus any
/// file the manifest lists that an interrupted salvage set aside. Returns how many it salvaged.
pub fn salvage_damaged_files(io: &dyn FileIo, dir: &Path) -> Result<usize, StorageError> {
    let names: Vec<String> = io
        .list_dir(dir)
        .map_err(|e| StorageError::io(dir, e))?
        .into_iter()
        .filter_map(|n| n.to_str().map(str::to_owned))
        .collect();
    let mut fid_max = 0u64;
    let mut candidates = Vec::new();
    let mut set_aside = Vec::new();
    for name in &names {
        if let Some((fid, original)) = corrupt_fid(name) {
            fid_max = fid_max.max(fid);
            set_aside.push((fid, original));
            continue;
        }
        match FileName::parse(name) {
            Some(file @ (FileName::Journal(fid) | FileName::Datafile(fid))) => {
                fid_max = fid_max.max(fid);
                candidates.push(file);
            }
            Some(FileName::Hint(fid) | FileName::Compaction(fid) | FileName::Spare(fid)) => {
                fid_max = fid_max.max(fid)
            }
            None => {}
        }
    }
    let superseded = superseded_fids(io, dir, &candidates);
    let mut done = 0;
    for file in candidates {
        let fid = match file {
            FileName::Journal(fid) | FileName::Datafile(fid) => fid,
            _ => unreachable!("only journals and datafiles are candidates"),
        };
        if superseded.contains(&fid) {
            continue;
        }
        let path = file.path_in(dir);
        if let Some(reason) = damage(io, &path, file)? {
            tracing::error!(event = "salvage.damaged", path = %path.display(), %reason);
            fid_max += 1;
            salvage(io, dir, &path, fid, fid_max, true)?;
            done += 1;
        }
    }
    let listed = crate::manifest::read(io, dir)?.unwrap_or_default();
    for (fid, original) in set_aside {
        let present = names.iter().any(|n| {
            matches!(
                FileName::parse(n),
                Some(FileName::Journal(f) | FileName::Datafile(f)) if f == fid
            )
        });
        if listed.contains(&fid) && !present && !superseded.contains(&fid) {
            let path = dir.join(format!("{}{CORRUPT_SUFFIX}", original.name()));
            fid_max += 1;
            salvage(io, dir, &path, fid, fid_max, false)?;
            done += 1;
        }
    }
    Ok(done)
}

/// The fids the supersedes records of the datafiles among `files` name (damaged ones are
/// skipped: what they say cannot be trusted).
fn superseded_fids(io: &dyn FileIo, dir: &Path, files: &[FileName]) -> BTreeSet<u64> {
    let mut out = BTreeSet::new();
    for file in files {
        if !matches!(file, FileName::Datafile(_)) {
            continue;
        }
        let path = file.path_in(dir);
        let Ok(handle) = io.open(&path) else {
            continue;
        };
        let Ok(len) = handle.len() else { continue };
        if let Ok(fids) = crate::recovery::read_supersedes(handle.as_ref(), len, &path) {
            out.extend(fids);
        }
    }
    out
}

/// Why the file at `path` is damaged, or `None` when every record verifies (a journal may end
/// in a torn tail, which ordinary recovery cuts).
fn damage(io: &dyn FileIo, path: &Path, file: FileName) -> Result<Option<String>, StorageError> {
    let io_err = |e| StorageError::io(path, e);
    let handle = io.open(path).map_err(io_err)?;
    let len = handle.len().map_err(io_err)?;
    let journal = matches!(file, FileName::Journal(_));
    if journal && len <= FILE_HEADER_RECORD_SIZE {
        // Never held a record; ordinary recovery decides about it.
        return Ok(None);
    }
    let mut last = None;
    // Records that verify but break the rules of transaction groups are damage too: ordinary
    // recovery refuses them.
    let mut groups = GroupReader::new(!journal);
    let mut misplaced = None;
    let outcome = crate::scan::scan(
        handle.as_ref(),
        0,
        len,
        &mut |offset, r| {
            last = Some(r.kind);
            if offset >= FILE_HEADER_RECORD_SIZE && misplaced.is_none() {
                if let Err(reason) = groups.push(offset, &r) {
                    misplaced = Some(format!("at offset {offset}: {reason}"));
                }
            }
            Ok(())
        },
        &io_err,
    )?;
    if misplaced.is_some() {
        return Ok(misplaced);
    }
    match outcome.bad {
        None if journal || last == Some(RecordType::Footer) => Ok(None),
        None => Ok(Some("sealed datafile has no footer".to_owned())),
        Some((offset, error)) if journal && offset >= FILE_HEADER_RECORD_SIZE => {
            match tail::classify(handle.as_ref(), offset, len, &error, &io_err)? {
                Tail::Torn => Ok(None),
                Tail::Damaged { reason } => Ok(Some(format!("at offset {offset}: {reason}"))),
            }
        }
        Some((offset, error)) => Ok(Some(format!("at offset {offset}: {error}"))),
    }
}

/// Copies what verifies of `source` (fid `fid`) into `datafile-<out_fid>.db`; sets `source`
/// aside first when `set_aside` (else it already is).
fn salvage(
    io: &dyn FileIo,
    dir: &Path,
    source: &Path,
    fid: u64,
    out_fid: u64,
    set_aside: bool,
) -> Result<(), StorageError> {
    let io_err = |e| StorageError::io(source, e);
    let handle = io.open(source).map_err(io_err)?;
    let len = handle.len().map_err(io_err)?;
    let temp = FileName::Compaction(out_fid).path_in(dir);
    let out_err = |e| StorageError::io(&temp, e);
    let out = io.create_new(&temp).map_err(out_err)?;
    let mut pending = format::encode_file_header(FileHeader {
        fid: out_fid,
        maximal_size: 0,
    });
    pending.extend_from_slice(&format::encode_supersedes(&[fid]));
    // A group that the records that verify do not complete is left out, as recovery cuts it.
    let mut group_open: Option<(u64, u32)> = None;
    walk(
        handle.as_ref(),
        len,
        &io_err,
        &mut |_, _, _| {},
        &mut |offset, r| {
            match (r.kind, &mut group_open) {
                (RecordType::GroupMarker, _) => {
                    group_open = format::parse_group_marker(r.value)
                        .ok()
                        .map(|m| (offset, m.count));
                }
                (_, Some((_, left))) if *left > 1 => *left -= 1,
                (_, Some(_)) => group_open = None,
                (_, None) => {}
            }
            Ok(())
        },
    )?;
    let copy_until = group_open.map_or(len, |(offset, _)| offset);
    if copy_until < len {
        tracing::error!(
            event = "salvage.group_dropped",
            path = %source.display(),
            offset = copy_until,
            "the records of a group that did not survive whole are left out"
        );
    }
    let mut written = 0u64;
    let mut records = 0u64;
    let skipped = walk(
        handle.as_ref(),
        len,
        &io_err,
        &mut |from, to, error| report_skip(source, from, to, error),
        &mut |offset, r| {
            let copied = match r.kind {
                RecordType::Document
                | RecordType::Tombstone
                | RecordType::Truncate
                | RecordType::Meta => true,
                // Alone in the output, as in a compaction's: it keeps `Store::newest_commit`.
                RecordType::Commit => format::parse_commit(r.value).is_ok(),
                // Markers go: what is copied of a group is then plain records.
                _ => false,
            };
            if copied && offset < copy_until {
                format::encode_into(&mut pending, r.kind, r.seq, r.rev, r.key, r.value);
                records += 1;
            }
            if pending.len() >= FLUSH_SIZE {
                out.write_all_at(&pending, written).map_err(out_err)?;
                written += pending.len() as u64;
                pending.clear();
            }
            Ok(())
        },
    )?;
    pending.extend_from_slice(&format::encode_footer(records));
    out.write_all_at(&pending, written).map_err(out_err)?;
    out.sync_data().map_err(out_err)?;
    drop(out);
    let damaged = if set_aside {
        let aside = PathBuf::from(format!("{}{CORRUPT_SUFFIX}", source.display()));
        io.rename(source, &aside).map_err(io_err)?;
        io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
        aside
    } else {
        source.to_path_buf()
    };
    let path = FileName::Datafile(out_fid).path_in(dir);
    io.rename(&temp, &path).map_err(out_err)?;
    io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    tracing::error!(
        event = "salvage.done",
        damaged = %damaged.display(),
        output = %path.display(),
        records,
        bytes_skipped = skipped,
        "records that verified were kept; the damaged file is kept beside them"
    );
    Ok(())
}

/// Visits every record of `handle` after its file header that verifies, in file order: after
/// a bad record the walk resumes at the next 8-byte-aligned offset where a whole record
/// verifies. Each skipped range goes to `report` (from, to, why); returns the bytes skipped.
fn walk(
    handle: &dyn FileHandle,
    len: u64,
    io_err: &dyn Fn(std::io::Error) -> StorageError,
    report: &mut dyn FnMut(u64, u64, &DecodeError),
    visit: &mut dyn FnMut(u64, RecordRef<'_>) -> Result<(), StorageError>,
) -> Result<u64, StorageError> {
    let mut skipped = 0u64;
    let mut at = FILE_HEADER_RECORD_SIZE.min(len);
    while at < len {
        let outcome = crate::scan::scan(handle, at, len, visit, io_err)?;
        let Some((bad, error)) = outcome.bad else {
            break;
        };
        let next =
            tail::next_valid_record(handle, bad + format::ALIGN, len, io_err)?.unwrap_or(len);
        report(bad, next, &error);
        skipped += next - bad;
        at = next;
    }
    Ok(skipped)
}

fn report_skip(source: &Path, from: u64, to: u64, error: &DecodeError) {
    tracing::error!(
        event = "salvage.skipped",
        path = %source.display(),
        offset = from,
        bytes = to - from,
        reason = %error,
    );
}
