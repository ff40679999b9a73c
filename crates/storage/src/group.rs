//! Transactions: records of one or several stores that become visible and durable together, or
//! not at all, across a killed process and a power cut.
//!
//! What it is: [`Part`], a transaction's part in one store (it holds the store's writer lock
//! and stages records in memory), [`commit`], which writes the parts as *groups* (a group
//! marker, then the part's records, all in one journal and contiguous) and publishes them, and
//! what a restart needs to finish the job: [`Store::pending_group`], [`Store::newest_commit`],
//! [`Store::cut_pending_group`] and [`settle`]. The byte layout and the recovery steps are in
//! `docs/storage-format.md` ("Transactions"); the promises in `docs/safety.md`.
//!
//! The commit protocol. One non-empty part: its group (marker flagged as the commit point, then
//! the records) is appended with one write and published; its ticket is the caller's
//! durability handle, as for a plain write. Several: let L be the last non-empty part (the
//! highest participant id). Every other part's group is appended (its marker names L), then
//! made durable; then L's group (marker flagged as the commit point, records, and a commit
//! record naming the transaction) is appended and made durable; only then are the records of
//! every part put in the indexes, and the writer locks released. The transaction is committed
//! exactly when L's commit record is durable.
//!
//! Why that order is enough. A part that is not the commit point is followed in its store's
//! log by nothing before the whole transaction is durable: its writer lock is held until then,
//! and a failure poisons every participant, so nothing more is appended until the stores are
//! reopened and settled. So whenever a part's transaction may be uncommitted, the part is the
//! very end of its store's log, where recovery finds it as the *pending group*; a part
//! followed by anything is committed. [`settle`] then asks the store that holds the commit
//! point: its newest commit record has a transaction id at least the pending one's exactly when
//! the pending transaction committed (transaction ids of the commits touching a store increase,
//! and nothing reaches the commit point's store after a failed commit before the settle).
//!
//! What it is not: isolation or conflict detection (the writer locks serialise writers of a
//! store; readers see a transaction's records once it is published, store by store, not at one
//! instant across stores), nor the choice of transaction ids (the caller's, e.g. an HLC value
//! taken while holding every part), nor a lock manager: a caller holding parts of several
//! stores takes them in ascending participant order, the global lock order (`store.rs`).
//!
//! Invariants: a group is never split across journals (the journal is handed off only before a
//! group's marker, and an empty journal takes a group of any size); a group's records carry the
//! `seq` numbers right after its marker's; nothing of a part is in the index before its
//! transaction is durable (several parts) or appended whole (one part); the multi-store commit
//! is the one place where the engine waits for an fsync while holding writer locks (group-commit
//! rounds never take a writer lock, so the wait cannot deadlock); after a failed commit that
//! may have appended anything, every store of a non-empty part is poisoned.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::format::{self, GroupMarker, RecordType, GROUP_MARKER_RECORD_SIZE};
use crate::index::Location;
use crate::store::{Existing, Mutation, Store, Writer};
use crate::sync::WriteTicket;

/// A transaction's part in one store: holds the store's writer lock from [`Store::part`] until
/// [`commit`] consumes it (dropping it writes nothing and releases the lock).
///
/// Not `Send`: the writer lock is released by the thread that took it.
pub struct Part<'s> {
    store: &'s Store,
    /// The caller's id of the store in this transaction (the lock order; named by the other
    /// parts' markers when this part is the commit point).
    participant: u64,
    writer: MutexGuard<'s, Writer>,
    /// The group's bytes: room for the marker, then the staged records, encoded with the `seq`
    /// numbers they will have (the writer lock is held, so the next `seq` cannot move).
    buf: Vec<u8>,
    staged: Vec<Staged>,
    /// For each key staged, the position in `staged` of its newest record.
    keys: HashMap<Box<[u8]>, usize>,
}

/// A record staged in [`Part::buf`].
struct Staged {
    kind: RecordType,
    seq: u64,
    rev: u64,
    /// Where the record starts in the group's bytes.
    start: usize,
    /// The record's size before padding.
    size: u32,
    key_len: usize,
}

impl Staged {
    fn key<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        let at = self.start + format::PREFIX_SIZE;
        &buf[at..at + self.key_len]
    }

    fn value<'b>(&self, buf: &'b [u8]) -> &'b [u8] {
        let at = self.start + format::PREFIX_SIZE + self.key_len;
        &buf[at..self.start + self.size as usize]
    }
}

/// What a part's group is in its transaction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The only part: the commit point, without a commit record.
    Alone,
    /// One of several parts, not the commit point.
    Member { commit_participant: u64 },
    /// The commit point of several parts: its group ends with the commit record.
    CommitPoint,
}

/// Where a part's group went.
struct Appended {
    journal: Arc<DataFile>,
    offset: u64,
    /// The `seq` of the group's last record.
    last_seq: u64,
}

/// A transaction's part that recovery found at the very end of a store's log, not its
/// transaction's commit point: committed exactly when the commit point's store holds a commit
/// record for it (see [`settle`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingGroup {
    /// The transaction.
    pub trx: u64,
    /// The caller's id of the store holding the transaction's commit point.
    pub commit_participant: u64,
}

impl Store {
    /// Takes the writer lock for a transaction's part in this store. A caller holding parts of
    /// several stores takes them in ascending `participant` order (the global lock order, see
    /// `store.rs`), and until it commits or drops the parts it calls nothing else that takes a
    /// writer lock of those stores (no write, `rotate`, `maintain`, `close`): the lock is not
    /// reentrant.
    pub fn part(&self, participant: u64) -> Part<'_> {
        Part {
            store: self,
            participant,
            writer: self.writer.lock(),
            buf: vec![0; GROUP_MARKER_RECORD_SIZE as usize],
            staged: Vec::new(),
            keys: HashMap::new(),
        }
    }

    /// The group at the very end of the log, found by recovery, that is not its transaction's
    /// commit point: its records are in the index, and whether to keep them is the caller's
    /// decision ([`settle`]). `None` once anything was written after it, or when there is none.
    pub fn pending_group(&self) -> Option<PendingGroup> {
        self.pending_at().map(|p| PendingGroup {
            trx: p.trx,
            commit_participant: p.commit_participant,
        })
    }

    /// The highest transaction id of a commit record the store holds (0: none). Found by
    /// recovery (journals, datafiles, compaction outputs) and raised by later commits. It is
    /// the transaction of the newest commit record: callers give the commits touching a store
    /// increasing ids.
    pub fn newest_commit(&self) -> u64 {
        self.newest_commit.lock().map_or(0, |(_, trx)| trx)
    }

    /// Cuts the pending group (its transaction did not commit): truncates the active journal
    /// at the group's marker and fsyncs it. The store is then closed (writes answer
    /// `ShuttingDown`, and its index still names the cut records): the caller drops it and opens
    /// it again. Valid right after open, before any write; does nothing when there is no
    /// pending group. A failed truncation or fsync poisons the store.
    pub fn cut_pending_group(&self) -> Result<(), StorageError> {
        let _upkeep = self.upkeep.lock();
        let writer = self.writer.lock();
        let Some(pending) = self.pending_at() else {
            return Ok(());
        };
        self.check_writable()?;
        let journal = writer
            .journal
            .clone()
            .filter(|j| j.fid == pending.fid)
            .expect("a pending group is in the active journal");
        let path = journal.file_name().path_in(&self.dir);
        let len = journal.len.load(Ordering::Acquire);
        journal
            .handle
            .set_len(pending.offset)
            .and_then(|()| journal.handle.sync_data())
            .map_err(|e| self.poison.poison(StorageError::io(&path, e)))?;
        journal.len.store(pending.offset, Ordering::Release);
        self.closed.store(true, Ordering::Release);
        *self.pending.lock() = None;
        tracing::warn!(
            event = "group.pending_cut",
            path = %path.display(),
            offset = pending.offset,
            trx = pending.trx,
            records = pending.records,
            dropped_bytes = len - pending.offset,
        );
        Ok(())
    }

    /// Where the pending group is, while nothing was written after it.
    pub(crate) fn pending_at(&self) -> Option<crate::chain::PendingAt> {
        let pending = (*self.pending.lock())?;
        let untouched = self.seq_written.load(Ordering::Acquire) == pending.last_seq
            && !self.closed.load(Ordering::Acquire);
        untouched.then_some(pending)
    }
}

impl<'s> Part<'s> {
    /// The caller's id of the store in this transaction.
    pub fn participant(&self) -> u64 {
        self.participant
    }

    /// True when nothing is staged: such a part takes no part in [`commit`].
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty()
    }

    /// Encoded bytes staged (records, padding included; the marker and the commit record not
    /// counted): callers bound transactions with it.
    pub fn staged_bytes(&self) -> u64 {
        (self.buf.len() - GROUP_MARKER_RECORD_SIZE as usize) as u64
    }

    /// Decides one item under the lock exactly as [`Store::mutate_deferred`]'s closure does:
    /// `decide` sees the key's current version including this part's earlier staged items
    /// ([`Existing::value`] returns the staged value; a key the part removed is `None`). A
    /// failed decision, `Mutation::Keep` or a `Remove` of an absent key stages nothing; a
    /// record too large fails the item alone. Nothing reaches the disk before [`commit`].
    pub fn mutate<R, E>(
        &mut self,
        key: &[u8],
        decide: impl FnOnce(Option<Existing<'_>>) -> Result<(Mutation, R), E>,
    ) -> Result<R, E>
    where
        E: From<StorageError>,
    {
        self.store.check_writable()?;
        let current = match self.keys.get(key) {
            Some(&at) => {
                let staged = &self.staged[at];
                (staged.kind == RecordType::Document)
                    .then(|| (staged.rev, Some(staged.value(&self.buf))))
            }
            None => self.store.index.get(key).map(|l| (l.rev, None)),
        };
        let exists = current.is_some();
        let view = current.map(|(rev, staged)| Existing {
            store: self.store,
            key,
            staged,
            rev,
        });
        let (mutation, result) = decide(view)?;
        match mutation {
            Mutation::Keep => {}
            Mutation::Remove { .. } if !exists => {}
            Mutation::Put { rev, value } => self.stage(key, RecordType::Document, rev, &value)?,
            Mutation::Remove { rev } => self.stage(key, RecordType::Tombstone, rev, &[])?,
        }
        Ok(result)
    }

    /// Encodes one record into the group's bytes.
    fn stage(
        &mut self,
        key: &[u8],
        kind: RecordType,
        rev: u64,
        value: &[u8],
    ) -> Result<(), StorageError> {
        let too_large = StorageError::RecordTooLarge {
            size: (key.len() + value.len()) as u64,
        };
        let size = format::record_size(key.len(), value.len()).ok_or(too_large)?;
        // The count (u32) includes a commit record.
        if self.staged.len() as u64 + 2 > u64::from(u32::MAX) {
            return Err(StorageError::RecordTooLarge {
                size: self.staged_bytes(),
            });
        }
        let seq = self.writer.seq_next + 1 + self.staged.len() as u64;
        let start = self.buf.len();
        format::encode_into(&mut self.buf, kind, seq, rev, key, value);
        self.keys.insert(key.into(), self.staged.len());
        self.staged.push(Staged {
            kind,
            seq,
            rev,
            start,
            size: size as u32,
            key_len: key.len(),
        });
        Ok(())
    }

    /// Appends the group (marker, staged records, and for the commit point of several parts
    /// the commit record) at the end of the active journal, with one write, handing the
    /// journal off first when the group and a footer would pass it (an empty journal takes any
    /// group). Advances the writer's `seq` and `seq_written`; publishes nothing. A failed write
    /// poisons the store.
    fn append(&mut self, trx: u64, role: Role) -> Result<Appended, StorageError> {
        let seq = self.writer.seq_next;
        assert_eq!(
            self.staged.first().map(|s| s.seq),
            Some(seq + 1),
            "a part's records are numbered after its marker, under the lock it holds"
        );
        let mut count = self.staged.len() as u64;
        if role == Role::CommitPoint {
            count += 1;
            self.buf
                .extend_from_slice(&format::encode_commit(seq + count, trx));
        }
        let marker = GroupMarker {
            trx,
            count: u32::try_from(count).expect("bounded when staged"),
            commit_point: !matches!(role, Role::Member { .. }),
            commit_participant: match role {
                Role::Member { commit_participant } => commit_participant,
                Role::Alone | Role::CommitPoint => 0,
            },
        };
        let marker_bytes = format::encode_group_marker(seq, &marker);
        self.buf[..marker_bytes.len()].copy_from_slice(&marker_bytes);
        let (journal, offset) = self.store.append(&mut self.writer, &self.buf)?;
        let last_seq = seq + count;
        self.writer.seq_next = last_seq + 1;
        self.writer.records += count + 1;
        self.store.seq_written.store(last_seq, Ordering::Release);
        Ok(Appended {
            journal,
            offset,
            last_seq,
        })
    }

    /// Puts the appended group's records in the index and counts them; returns the ticket of
    /// its last record.
    fn publish(&mut self, trx: u64, role: Role, at: &Appended) -> WriteTicket {
        let store = self.store;
        let journal = &at.journal;
        // A group marker is dead weight once its group is whole.
        journal.add_dead(0, GROUP_MARKER_RECORD_SIZE);
        for staged in &self.staged {
            let key = staged.key(&self.buf);
            match staged.kind {
                RecordType::Document => {
                    let location = Location {
                        fid: journal.fid as u32,
                        size: staged.size,
                        offset: at.offset + staged.start as u64,
                        seq: staged.seq,
                        rev: staged.rev,
                    };
                    store.index_put(key, location, journal);
                }
                RecordType::Tombstone => {
                    journal.add_markers(1, u64::from(staged.size));
                    store.index_remove(key);
                }
                other => unreachable!("a part stages documents and tombstones, not {other:?}"),
            }
            store.last_tick.fetch_max(staged.rev, Ordering::Relaxed);
        }
        if role == Role::CommitPoint {
            journal.add_markers(0, format::COMMIT_RECORD_SIZE);
            *store.newest_commit.lock() = Some((at.last_seq, trx));
        }
        store.ticket(at.last_seq, journal.clone())
    }
}

/// Commits `parts` as ONE transaction `trx` (nonzero; the caller guarantees that the ids of
/// successive commits touching a store increase, e.g. an HLC value taken while holding every
/// part). The parts are in ascending participant order. Parts that staged nothing take no part.
/// Returns one entry per part given, in order: `None` for an empty part, else the ticket of its
/// group's last record.
///
/// - One non-empty part: its group is appended (one write) and published, without an fsync;
///   the ticket is the caller's durability handle, as for a plain write. A crash keeps all of
///   the group or none of it.
/// - Several: every part but the last non-empty one (L) is appended and made durable, then L's
///   group with its commit record, made durable too; only then is anything published. When it
///   returns `Ok`, the transaction is durable and whole in every store (its tickets are
///   already durable).
///
/// On failure nothing is published; the store that failed is poisoned as for any failed write
/// or fsync, and when the transaction may have reached any journal, every store of a non-empty
/// part is poisoned too: reopen them all and [`settle`] them together before writing to any.
/// As after any failed fsync, the outcome is then unknown until that reopen: the transaction
/// is whole in every store, or absent from all (a commit record may have become durable before
/// the failure was seen).
pub fn commit(
    trx: u64,
    mut parts: Vec<Part<'_>>,
) -> Result<Vec<Option<WriteTicket>>, StorageError> {
    assert!(trx != 0, "transaction 0 is reserved");
    assert!(
        parts
            .windows(2)
            .all(|w| w[0].participant < w[1].participant),
        "parts are taken in ascending participant order"
    );
    let busy: Vec<usize> = (0..parts.len()).filter(|&i| !parts[i].is_empty()).collect();
    let mut tickets: Vec<Option<WriteTicket>> = parts.iter().map(|_| None).collect();
    let Some((&last, members)) = busy.split_last() else {
        return Ok(tickets);
    };
    for &i in &busy {
        parts[i].store.check_writable()?;
    }
    if members.is_empty() {
        let appended = parts[last].append(trx, Role::Alone)?;
        tickets[last] = Some(parts[last].publish(trx, Role::Alone, &appended));
        return Ok(tickets);
    }
    let commit_participant = parts[last].participant;
    let role = |i: usize| match i == last {
        true => Role::CommitPoint,
        false => Role::Member { commit_participant },
    };
    let mut appended: Vec<(usize, Appended)> = Vec::with_capacity(busy.len());
    let outcome = append_durably(
        trx,
        &mut parts,
        members,
        last,
        commit_participant,
        &mut appended,
    );
    if let Err(error) = outcome {
        let reached =
            !appended.is_empty() || busy.iter().any(|&i| parts[i].store.poisoned().is_some());
        if reached {
            for &i in &busy {
                let reason = StorageError::Poisoned {
                    reason: format!("transaction {trx} failed to commit: {error}"),
                };
                parts[i].store.poison.poison(reason);
            }
        }
        return Err(error);
    }
    for (i, at) in &appended {
        tickets[*i] = Some(parts[*i].publish(trx, role(*i), at));
    }
    Ok(tickets)
}

/// The durable half of a commit of several parts: appends the members' groups, waits until
/// they are durable, appends the commit point's group (with its commit record) and waits for
/// it. Each group appended joins `appended`, in order.
fn append_durably(
    trx: u64,
    parts: &mut [Part<'_>],
    members: &[usize],
    last: usize,
    commit_participant: u64,
    appended: &mut Vec<(usize, Appended)>,
) -> Result<(), StorageError> {
    for &i in members {
        let at = parts[i].append(trx, Role::Member { commit_participant })?;
        appended.push((i, at));
    }
    wait_durable(
        appended
            .iter()
            .map(|(i, at)| parts[*i].store.ticket(at.last_seq, at.journal.clone())),
    )?;
    let at = parts[last].append(trx, Role::CommitPoint)?;
    let ticket = parts[last].store.ticket(at.last_seq, at.journal.clone());
    appended.push((last, at));
    wait_durable(std::iter::once(ticket))
}

/// Waits until every ticket is durable; the first failure if one is not. The fsyncs of
/// different stores overlap: every ticket is registered before the first wait.
fn wait_durable(tickets: impl Iterator<Item = WriteTicket>) -> Result<(), StorageError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    let mut waiting = 0;
    for ticket in tickets {
        let sender = sender.clone();
        ticket.on_durable(Box::new(move |result| {
            // The receiver waits below until every callback fired; it cannot be gone.
            let _ = sender.send(result);
        }));
        waiting += 1;
    }
    drop(sender);
    let mut outcome = Ok(());
    for _ in 0..waiting {
        // Every callback fires exactly once; a lost one is answered like a store going away.
        let result = receiver.recv().unwrap_or(Err(StorageError::ShuttingDown));
        if let (Ok(()), Err(error)) = (&outcome, result) {
            outcome = Err(error);
        }
    }
    outcome
}

/// Decides the pending groups of `stores` (the caller's participant id of each, and the store,
/// all opened and not written since): a pending transaction committed exactly when the store
/// holding its commit point is in the list and its [`Store::newest_commit`] is at least the
/// transaction's id, or when that store is not in the list at all (its collection was dropped:
/// the transaction counts as committed). Cuts every pending group that did not commit
/// ([`Store::cut_pending_group`]) and returns the participant ids of the stores it cut (or
/// failed to cut): the caller reopens those, and settles again (a reopened store may show an
/// earlier group, which is always committed: it was followed by a write).
pub fn settle(stores: &[(u64, &Store)]) -> Vec<u64> {
    let verdicts: Vec<(u64, &Store, PendingGroup, Option<u64>)> = stores
        .iter()
        .filter_map(|&(id, store)| {
            let pending = store.pending_group()?;
            let newest = stores
                .iter()
                .find(|(other, _)| *other == pending.commit_participant)
                .map(|(_, holder)| holder.newest_commit());
            Some((id, store, pending, newest))
        })
        .collect();
    let mut cut = Vec::new();
    for (id, store, pending, newest) in verdicts {
        if newest.is_none_or(|newest| newest >= pending.trx) {
            continue;
        }
        tracing::warn!(
            event = "group.uncommitted_cut",
            participant = id,
            trx = pending.trx,
            commit_participant = pending.commit_participant,
            newest_commit = newest,
        );
        if let Err(error) = store.cut_pending_group() {
            tracing::error!(event = "group.cut_failed", participant = id, trx = pending.trx, error = %error);
        }
        cut.push(id);
    }
    cut
}
