//! [`GroupReader`]: follows transaction groups while a file's records are read in order.
//!
//! What it is: a small state machine fed every record of a journal or datafile after its file
//! header, in file order (recovery's journal chain, the strict scan of a sealed datafile,
//! salvage). A group marker opens a group of `count` records; the group closes when that many
//! records have followed. It answers where the last group still open starts (recovery cuts a
//! journal there: the group is debris of a transaction that did not finish its append) and
//! which group closed last (a part that may still wait for its transaction's verdict).
//!
//! What it is not: a judge of what an open group means. The callers decide: a journal's log
//! end cuts it (`chain.rs`), a sealed datafile refuses it (`recovery.rs`), salvage leaves its
//! records out (`salvage.rs`).
//!
//! Invariants (checked, each violation is an error the caller turns into `Corrupted`): a group
//! holds only documents and tombstones, except that the commit-point part of a transaction may
//! end with ONE commit record for the same transaction; the records of a group carry the `seq`
//! numbers right after its marker's; no group opens inside another; in a journal a commit
//! record only ends a group (only compaction and salvage outputs hold one alone).

use crate::format::{self, GroupMarker, RecordRef, RecordType};

/// A group whose marker was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// The marker's offset in the file.
    pub(crate) offset: u64,
    /// The marker's `seq`.
    pub(crate) seq: u64,
    /// What the marker says.
    pub(crate) marker: GroupMarker,
    /// Records of the group read so far.
    pub(crate) seen: u32,
    /// The offset just after the last record read (padding included).
    pub(crate) end: u64,
}

impl Group {
    /// The `seq` of the group's last record (once closed).
    pub(crate) fn last_seq(&self) -> u64 {
        self.seq + u64::from(self.seen)
    }
}

/// Follows the groups of one file.
pub(crate) struct GroupReader {
    /// Commit records outside a group are allowed (compaction and salvage outputs).
    commit_alone: bool,
    /// The group being read, if its count is not reached yet.
    open: Option<Group>,
    /// The group that closed last.
    closed: Option<Group>,
}

impl GroupReader {
    /// A reader for a journal (`commit_alone` false) or a sealed datafile (true).
    pub(crate) fn new(commit_alone: bool) -> GroupReader {
        GroupReader {
            commit_alone,
            open: None,
            closed: None,
        }
    }

    /// Takes the next record, at `offset`. Fails with the reason when the record cannot be
    /// there.
    pub(crate) fn push(&mut self, offset: u64, r: &RecordRef<'_>) -> Result<(), String> {
        let end = offset + r.padded_size();
        let Some(group) = &mut self.open else {
            return match r.kind {
                RecordType::GroupMarker => {
                    let marker = format::parse_group_marker(r.value).map_err(str::to_owned)?;
                    self.open = Some(Group {
                        offset,
                        seq: r.seq,
                        marker,
                        seen: 0,
                        end,
                    });
                    Ok(())
                }
                RecordType::Commit if !self.commit_alone => {
                    Err("a commit record that does not end a transaction's group".to_owned())
                }
                RecordType::Commit => format::parse_commit(r.value)
                    .map(|_| ())
                    .map_err(str::to_owned),
                _ => Ok(()),
            };
        };
        let last = group.seen + 1 == group.marker.count;
        let fits = match r.kind {
            RecordType::Document | RecordType::Tombstone => true,
            RecordType::Commit => {
                last && group.marker.commit_point
                    && format::parse_commit(r.value) == Ok(group.marker.trx)
            }
            _ => false,
        };
        if !fits {
            return Err(format!(
                "a {:?} record inside the group of transaction {} ({} of {} records read)",
                r.kind, group.marker.trx, group.seen, group.marker.count
            ));
        }
        if r.seq != group.last_seq() + 1 {
            return Err(format!(
                "record seq {} inside the group of transaction {} does not follow {}",
                r.seq,
                group.marker.trx,
                group.last_seq()
            ));
        }
        group.seen += 1;
        group.end = end;
        if last {
            self.closed = self.open.take();
        }
        Ok(())
    }

    /// The group whose count was not reached when the records ended.
    pub(crate) fn open(&self) -> Option<&Group> {
        self.open.as_ref()
    }

    /// The group that closed last.
    pub(crate) fn closed(&self) -> Option<&Group> {
        self.closed.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{decode, encode, encode_commit, encode_group_marker};

    fn feed(reader: &mut GroupReader, records: &[Vec<u8>]) -> Result<(), String> {
        let mut offset = 64;
        for bytes in records {
            reader.push(offset, &decode(bytes).unwrap())?;
            offset += bytes.len() as u64;
        }
        Ok(())
    }

    fn marker(seq: u64, count: u32, commit_point: bool) -> Vec<u8> {
        let marker = GroupMarker {
            trx: 7,
            count,
            commit_point,
            commit_participant: if commit_point { 0 } else { 3 },
        };
        encode_group_marker(seq, &marker)
    }

    fn doc(seq: u64) -> Vec<u8> {
        encode(RecordType::Document, seq, seq, b"k", b"v")
    }

    #[test]
    fn a_group_closes_after_its_count() {
        let mut reader = GroupReader::new(false);
        let first = doc(1);
        feed(
            &mut reader,
            &[first.clone(), marker(2, 3, true), doc(3), doc(4)],
        )
        .unwrap();
        let open = *reader.open().unwrap();
        assert_eq!((open.offset, open.seen), (64 + first.len() as u64, 2));
        feed(&mut reader, &[encode_commit(5, 7)]).unwrap();
        assert!(reader.open().is_none());
        assert_eq!(reader.closed().unwrap().last_seq(), 5);
    }

    #[test]
    fn what_cannot_be_in_a_group_is_refused() {
        let meta = encode(RecordType::Meta, 3, 0, b"", b"m");
        assert!(feed(&mut GroupReader::new(false), &[marker(2, 2, true), meta]).is_err());
        // A commit record only ends a commit point, for its own transaction.
        let commit = encode_commit(3, 7);
        assert!(feed(&mut GroupReader::new(false), &[marker(2, 1, false), commit]).is_err());
        let other = encode_commit(3, 8);
        assert!(feed(&mut GroupReader::new(false), &[marker(2, 1, true), other]).is_err());
        let early = encode_commit(3, 7);
        assert!(feed(&mut GroupReader::new(false), &[marker(2, 2, true), early]).is_err());
        // Records of a group carry the seqs after the marker's.
        assert!(feed(&mut GroupReader::new(false), &[marker(2, 2, true), doc(4)]).is_err());
        // A commit record alone: only in compaction and salvage outputs.
        let alone = encode_commit(9, 7);
        assert!(feed(&mut GroupReader::new(false), std::slice::from_ref(&alone)).is_err());
        assert!(feed(&mut GroupReader::new(true), &[alone]).is_ok());
    }
}
