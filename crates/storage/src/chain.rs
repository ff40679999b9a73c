//! Recovering the journals: the chain of `journal-<fid>.db` files a crash can leave, read in
//! fid order as one log.
//!
//! What it is: [`recover_journals`], step 4 of recovery. Journals become active in fid order
//! and each is handed off (footer appended) before the next takes a record, so a crash leaves,
//! oldest first: journals handed off whose seal did not finish (each should end with its
//! footer), the active journal (no footer; a torn tail possible), and journals that hold only
//! their header (the spare made ahead of need, a spare that lost the race to a newer journal,
//! or journals whose records were all lost or cut). The rule:
//! - a journal that holds records and ends with its footer is a finished hand-off: it is kept
//!   whole and sealed now (fsync, rename to a datafile);
//! - the first journal that holds records and has no footer is where the log ends: its torn
//!   tail is cut (the shapes of `tail.rs`; anything else is damage and refused), and it stays
//!   the active journal. The log also ends, with nothing kept of the journal, where a journal's
//!   link record (written by the writer as the first record of every journal it takes) names a
//!   journal found on disk that is not a finished hand-off (it lost its footer, or all of its
//!   records, or even its header), and where a journal's first record does not follow the
//!   previous journal's last one (`seq` numbers are consecutive across journals);
//! - every record in a journal after that end is cut, leaving its header: those records were
//!   written after a point of the log that did not survive, and none of them was acknowledged,
//!   because a group-commit round fsyncs every journal handed off before a record's journal
//!   before it acknowledges the record (so a journal holding an acknowledged record never
//!   links to a journal that lost its end);
//! - journals holding no record (their header, and maybe a link) never end the log: nothing
//!   links to a spare never taken. The first one after the last journal with records is kept,
//!   cut to its header, as the spare; the others are retired (named in no manifest, then
//!   removed: they hold no record);
//! - a transaction's group (`group.rs`) never spans journals: where a journal's good prefix
//!   ends before a group marker's count of records is reached (a torn tail, the end of the
//!   file), the group is debris of an append that did not finish, and the good prefix ends at
//!   its marker (`journal.group_cut`; the marker proves none of its records was acknowledged).
//!   A record of another kind inside a group is damage (`group_reader.rs`). A whole group that
//!   ends the log and is not its transaction's commit point is the store's *pending group*.
//!   Since a journal with such a cut holds fewer records, the chain rules above see the journal
//!   as it is after the cut.
//!
//! What it is not: a reader of sealed datafiles (`recovery.rs`), nor a repair tool: a bad
//! record that is not a torn tail is `Corrupted` wherever it is, and nothing is cut from a
//! journal before every journal was checked.
//!
//! Invariants: every record kept is fsynced before the store opens; every cut is fsynced; a
//! journal shorter than its header is removed only when the manifest does not name it (the
//! manifest names a journal only once its header is durable); the journals kept are at most
//! one active journal and one spare, with the spare's fid above the active one's.

use std::collections::BTreeSet;
use std::path::Path;

use crate::datafile::FileName;
use crate::error::StorageError;
use crate::format::{RecordType, FILE_HEADER_RECORD_SIZE};
use crate::group_reader::{Group, GroupReader};
use crate::io::{FileHandle, FileIo};
use crate::recovery::{entry_of, read_header, Resolver};
use crate::tail::Tail;

/// A journal kept open by recovery.
pub(crate) struct RecoveredJournal {
    pub(crate) fid: u64,
    pub(crate) handle: Box<dyn FileHandle>,
    /// The end of its good prefix (after any cut).
    pub(crate) len: u64,
    pub(crate) capacity: u64,
    /// Records after the header, the footer not counted.
    pub(crate) records: u64,
}

/// What recovery does with the journals it found.
#[derive(Default)]
pub(crate) struct Chain {
    /// Finished hand-offs, now renamed to datafiles (their hints are still to write).
    pub(crate) sealed: Vec<RecoveredJournal>,
    /// The active journal: where the log ends.
    pub(crate) active: Option<RecoveredJournal>,
    /// A journal holding only its header, newer than every journal with records.
    pub(crate) spare: Option<RecoveredJournal>,
    /// Journals holding only their header that are not needed: removed once the manifest no
    /// longer names them.
    pub(crate) retired: Vec<u64>,
    /// The group that ends the log, when it is a part that is not its transaction's commit
    /// point: whether its transaction committed is for the caller to find out (`group.rs`).
    pub(crate) pending: Option<PendingAt>,
}

/// Where a pending group is: the last records of the active journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingAt {
    /// The active journal.
    pub(crate) fid: u64,
    /// The group marker's offset: a cut there removes the group.
    pub(crate) offset: u64,
    /// The transaction.
    pub(crate) trx: u64,
    /// The caller's id of the store holding the commit point.
    pub(crate) commit_participant: u64,
    /// The `seq` of the group's last record, the last of the log.
    pub(crate) last_seq: u64,
    /// Records of the group after its marker.
    pub(crate) records: u32,
}

/// One journal as found, before the chain decides what to keep.
struct Examined {
    fid: u64,
    handle: Box<dyn FileHandle>,
    capacity: u64,
    /// The end of the good prefix.
    good_end: u64,
    /// The file's length.
    len: u64,
    records: u64,
    /// The journal its link record names (the one handed off before it), if it has one.
    link: Option<u64>,
    first_seq: Option<u64>,
    last_seq: Option<u64>,
    /// The good prefix ends with a footer.
    footer: bool,
    /// A group whose records did not all survive, cut from the good prefix (`good_end` is its
    /// marker's offset).
    group_cut: Option<Group>,
    /// The group whose last record is the last record of the good prefix.
    trailing: Option<Group>,
}

/// Reads the journals `fids` (ascending) as one log, applies the records kept to `resolver`,
/// cuts what must be cut, fsyncs what is kept and seals finished hand-offs.
pub(crate) fn recover_journals(
    io: &dyn FileIo,
    dir: &Path,
    fids: &[u64],
    listed: Option<&Vec<u64>>,
    resolver: &mut Resolver,
) -> Result<Chain, StorageError> {
    let mut examined = Vec::new();
    for fid in fids {
        let is_listed = listed.is_some_and(|l| l.contains(fid));
        if let Some(journal) = examine(io, dir, *fid, is_listed)? {
            examined.push(journal);
        }
    }
    // Where each journal is cut (None: kept whole), and which ones are finished hand-offs.
    let mut keep_until: Vec<u64> = examined.iter().map(|j| j.good_end).collect();
    let mut handed_off = BTreeSet::new();
    let mut end = None;
    let mut prev_last: Option<u64> = None;
    // Finished hand-offs: a journal whose link names one of the journals found must name one
    // of these, or what it links to lost its end.
    let mut intact = BTreeSet::new();
    for (i, j) in examined.iter().enumerate() {
        if j.records == 0 {
            // Its header (and link) at most: nothing to keep but the header.
            keep_until[i] = FILE_HEADER_RECORD_SIZE;
            continue;
        }
        let follows = prev_last.is_none_or(|p| j.first_seq == Some(p + 1));
        let linked = match j.link {
            Some(previous) if fids.contains(&previous) => intact.contains(&previous),
            _ => true,
        };
        if end.is_some() || !follows || !linked {
            let path = FileName::Journal(j.fid).path_in(dir);
            tracing::warn!(
                event = "journal.unreachable_cut",
                path = %path.display(),
                records = j.records,
                dropped_bytes = j.len - FILE_HEADER_RECORD_SIZE,
                reason = if !follows {
                    "a gap before it"
                } else if !linked {
                    "the journal it follows lost its end"
                } else {
                    "an earlier journal ends the log"
                },
            );
            keep_until[i] = FILE_HEADER_RECORD_SIZE;
            if end.is_none() {
                // Nothing of this journal is kept; the log ended before it.
                end = Some(None);
            }
            continue;
        }
        if j.footer {
            handed_off.insert(i);
            intact.insert(j.fid);
            prev_last = j.last_seq;
            continue;
        }
        end = Some(Some(i));
    }
    let end = end.flatten();
    let last_used = end.or(handed_off.last().copied());
    let mut chain = Chain::default();
    for (i, j) in examined.into_iter().enumerate() {
        let path = FileName::Journal(j.fid).path_in(dir);
        let io_err = |e| StorageError::io(&path, e);
        let keep = keep_until[i];
        // Cut at the marker as the end of the log, or with the whole journal when the group was
        // all it held (a journal cut for another reason is logged as `journal.unreachable_cut`).
        let log_end = keep == j.good_end || j.records == 0;
        if let Some(group) = j.group_cut.filter(|_| log_end) {
            // The engine's own marker proves these records are what is left of a group whose
            // append did not finish: none of them was acknowledged or published.
            tracing::warn!(
                event = "journal.group_cut",
                path = %path.display(),
                offset = group.offset,
                trx = group.marker.trx,
                records_present = group.seen,
                records_expected = group.marker.count,
            );
        }
        if keep < j.len {
            j.handle.set_len(keep).map_err(io_err)?;
        }
        if keep > FILE_HEADER_RECORD_SIZE {
            apply(j.handle.as_ref(), j.fid, keep, &path, resolver)?;
        }
        // What the journal holds may have survived a process crash in the page cache only
        // (and a cut must stick): make it durable now, so `synced` can start at the highest
        // recovered seq.
        j.handle.sync_data().map_err(io_err)?;
        let records = if keep > FILE_HEADER_RECORD_SIZE {
            j.records
        } else {
            0
        };
        let recovered = RecoveredJournal {
            fid: j.fid,
            handle: j.handle,
            len: keep,
            capacity: j.capacity,
            records,
        };
        if handed_off.contains(&i) {
            let to = FileName::Datafile(j.fid).path_in(dir);
            io.rename(&path, &to).map_err(io_err)?;
            tracing::info!(event = "journal.seal_finished", path = %path.display());
            chain.sealed.push(recovered);
        } else if Some(i) == end {
            chain.pending = j
                .trailing
                .filter(|g| !g.marker.commit_point)
                .map(|g| PendingAt {
                    fid: j.fid,
                    offset: g.offset,
                    trx: g.marker.trx,
                    commit_participant: g.marker.commit_participant,
                    last_seq: g.last_seq(),
                    records: g.seen,
                });
            chain.active = Some(recovered);
        } else if chain.spare.is_none() && last_used.is_none_or(|u| i > u) {
            chain.spare = Some(recovered);
        } else {
            chain.retired.push(recovered.fid);
        }
    }
    // Renames, and entries a killed process created without a directory fsync.
    io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
    Ok(chain)
}

/// Opens and checks one journal; `None` if it never got a whole header (then removed).
/// `listed`: the manifest names it (so its header was durable).
fn examine(
    io: &dyn FileIo,
    dir: &Path,
    fid: u64,
    listed: bool,
) -> Result<Option<Examined>, StorageError> {
    let path = FileName::Journal(fid).path_in(dir);
    let io_err = |e| StorageError::io(&path, e);
    let handle = io.open(&path).map_err(io_err)?;
    let len = handle.len().map_err(io_err)?;
    if len <= FILE_HEADER_RECORD_SIZE {
        // Records are appended only after the header, and bytes survive only as a prefix, so
        // a journal this short never held a record: it was being created when the process
        // stopped.
        let whole =
            len == FILE_HEADER_RECORD_SIZE && read_header(handle.as_ref(), len, &path).is_ok();
        if !whole && listed {
            return Err(StorageError::corrupted(
                &path,
                0,
                "journal is shorter than its header, but the manifest lists it",
            ));
        }
        if !whole {
            tracing::warn!(event = "journal.incomplete_removed", path = %path.display());
            io.remove_file(&path).map_err(io_err)?;
            io.sync_dir(dir).map_err(|e| StorageError::io(dir, e))?;
            return Ok(None);
        }
    }
    let header = read_header(handle.as_ref(), len, &path)?;
    if header.fid != fid {
        return Err(StorageError::corrupted(
            &path,
            0,
            "fid does not match the name",
        ));
    }
    let (mut records, mut first_seq, mut last_seq) = (0u64, None, None);
    let (mut footer, mut after_footer) = (false, None);
    let (mut link, mut misplaced_link) = (None, None);
    let mut groups = GroupReader::new(false);
    // What `records`, `first_seq` and `last_seq` were when the group still open began.
    let mut before_group = (0u64, None, None);
    let outcome = crate::scan::scan(
        handle.as_ref(),
        FILE_HEADER_RECORD_SIZE,
        len,
        &mut |offset, r| {
            if footer {
                after_footer.get_or_insert(offset);
            }
            if r.kind == RecordType::GroupMarker && groups.open().is_none() {
                before_group = (records, first_seq, last_seq);
            }
            groups
                .push(offset, &r)
                .map_err(|reason| StorageError::corrupted(&path, offset, reason))?;
            if r.kind == RecordType::Footer {
                footer = true;
            } else if r.kind == RecordType::Link {
                match crate::format::parse_link(r.value) {
                    Some(previous) if offset == FILE_HEADER_RECORD_SIZE => link = Some(previous),
                    _ => {
                        misplaced_link.get_or_insert(offset);
                    }
                }
            } else {
                records += 1;
                first_seq.get_or_insert(r.seq);
                last_seq = Some(r.seq);
            }
            Ok(())
        },
        &|e| StorageError::io(&path, e),
    )?;
    if let Some(offset) = after_footer {
        return Err(StorageError::corrupted(
            &path,
            offset,
            "a record after the journal's footer",
        ));
    }
    if let Some(offset) = misplaced_link {
        return Err(StorageError::corrupted(
            &path,
            offset,
            "a link record that is not the journal's first record",
        ));
    }
    if let Some((offset, error)) = &outcome.bad {
        match crate::tail::classify(handle.as_ref(), *offset, len, error, &io_err)? {
            Tail::Torn => tracing::warn!(
                event = "journal.tail_truncated",
                path = %path.display(),
                offset,
                dropped_bytes = len - offset,
                reason = %error,
            ),
            Tail::Damaged { reason } => {
                return Err(StorageError::corrupted(&path, *offset, reason))
            }
        }
    }
    // A group whose count the good prefix does not reach lost its end with the torn tail (or
    // the file ended): the good prefix ends before its marker.
    let mut good_end = outcome.good_end;
    let group_cut = groups.open().copied();
    if let Some(group) = &group_cut {
        good_end = group.offset;
        (records, first_seq, last_seq) = before_group;
    }
    let trailing = groups.closed().filter(|g| g.end == good_end).copied();
    Ok(Some(Examined {
        fid,
        handle,
        capacity: header.maximal_size,
        good_end,
        len,
        records,
        link,
        first_seq,
        last_seq,
        footer,
        group_cut,
        trailing,
    }))
}

/// Applies the records of `[header, end)` of a journal to `resolver`.
fn apply(
    handle: &dyn FileHandle,
    fid: u64,
    end: u64,
    path: &Path,
    resolver: &mut Resolver,
) -> Result<(), StorageError> {
    let outcome = crate::scan::scan(
        handle,
        FILE_HEADER_RECORD_SIZE,
        end,
        &mut |offset, r| {
            resolver.apply(fid, &entry_of(offset, &r));
            Ok(())
        },
        &|e| StorageError::io(path, e),
    )?;
    if let Some((offset, error)) = outcome.bad {
        // Read once already: the file changed under recovery.
        return Err(StorageError::corrupted(path, offset, error.to_string()));
    }
    Ok(())
}
