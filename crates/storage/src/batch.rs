//! Batched mutations: many keys decided and written under ONE acquisition of the writer lock,
//! their records appended with one positional write per journal they land in.
//!
//! What it is: [`Store::mutate_batch_deferred`]. Each item is decided exactly as
//! [`Store::mutate_deferred`] decides one (the closure sees the key's current version, which
//! includes every earlier item of the batch), and each item has its own outcome: a decision that
//! fails, or a record too large, fails that item alone. The records are the very records the
//! single path writes (same bytes, same `seq` order, same journal boundaries), staged in one
//! buffer and appended together, so recovery, hint files and compaction cannot tell a batch from
//! the same writes made one by one.
//!
//! What it is not: a transaction. A crash during the append keeps a prefix of the batch (the
//! torn tail is cut by recovery, as for any unacknowledged write); items are independent.
//! Records that must survive together are written as a transaction's part (`group.rs`).
//!
//! Invariants:
//! - the staged records of one append become visible (index, counters, `seq_written`) only after
//!   the append returned, all together; a failed append poisons the store first, and none of its
//!   records becomes visible;
//! - an append holds records of one journal only: a record that would not fit the active
//!   journal makes the staged ones go out first, then the journal is handed off (as the single
//!   path hands it off), so a handed-off journal, and the datafile it becomes, never holds a
//!   record the index does not know yet, and compaction (which never takes the writer lock) can
//!   never drop it;
//! - a key is staged at most once per append: an item whose key is already staged makes the
//!   staged records go out first, so every decision reads the index (and disk) for the truth;
//! - the staged buffer is bounded by [`STAGED_BYTES_MAX`] (plus one record).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use hashbrown::HashSet;

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::format::{self, RecordType};
use crate::index::Location;
use crate::store::{Existing, Mutation, Store, Writer};
use crate::sync::WriteTicket;

/// Encoded bytes staged before they are appended even though the journal has room: bounds the
/// buffer (the values are in the caller's memory already; this is their second copy).
pub(crate) const STAGED_BYTES_MAX: usize = 8 << 20;

/// A record in the staging buffer.
struct Staged<'k> {
    key: &'k [u8],
    kind: RecordType,
    seq: u64,
    rev: u64,
    /// Where the record starts in [`Stage::buf`].
    start: usize,
    /// The record's size before padding.
    size: u32,
    /// The item it belongs to (its position in the results).
    item: usize,
}

/// Records encoded and waiting for one append to the active journal.
#[derive(Default)]
struct Stage<'k> {
    buf: Vec<u8>,
    records: Vec<Staged<'k>>,
    keys: HashSet<&'k [u8]>,
}

impl Stage<'_> {
    fn clear(&mut self) {
        self.buf.clear();
        self.records.clear();
        self.keys.clear();
    }
}

/// The newest record appended so far: its `seq` and its journal (for the ticket).
type Newest = Option<(u64, Arc<DataFile>)>;

impl Store {
    /// Decides and writes one item per key in `keys`, in order, holding writers off for the
    /// whole batch. `decide(i, existing)` is called for item `i` exactly as
    /// [`Store::mutate_deferred`] calls its closure (it sees the writes of earlier items).
    ///
    /// Returns each item's outcome in order and, when any record was written, ONE ticket for the
    /// newest: once it is durable every item of the batch is ([`WriteTicket`]s of a store are
    /// ordered). An item fails alone when its decision fails or its record is too large; when an
    /// append or a seal fails, the store is poisoned, the items of that append get the error
    /// (their records may or may not have reached the file) and later items get `Poisoned`.
    pub fn mutate_batch_deferred<K, R, E>(
        &self,
        keys: &[K],
        mut decide: impl FnMut(usize, Option<Existing<'_>>) -> Result<(Mutation, R), E>,
    ) -> (Vec<Result<R, E>>, Option<WriteTicket>)
    where
        K: AsRef<[u8]>,
        E: From<StorageError>,
    {
        let mut results: Vec<Result<R, E>> = Vec::with_capacity(keys.len());
        let mut stage = Stage::default();
        let mut newest: Newest = None;
        let mut writer = self.writer.lock();
        for (item, key) in keys.iter().enumerate() {
            let key = key.as_ref();
            if let Err(e) = self.check_writable() {
                results.push(Err(e.into()));
                continue;
            }
            if stage.keys.contains(key) {
                if let Err(e) =
                    self.append_staged(&mut writer, &mut stage, &mut results, &mut newest)
                {
                    results.push(Err(e.into()));
                    continue;
                }
            }
            let existing = self.index.get(key);
            let view = existing.map(|l| Existing {
                store: self,
                key,
                staged: None,
                rev: l.rev,
            });
            let (mutation, result) = match decide(item, view) {
                Ok(decided) => decided,
                Err(e) => {
                    results.push(Err(e));
                    continue;
                }
            };
            let (kind, rev, value) = match mutation {
                Mutation::Keep => {
                    results.push(Ok(result));
                    continue;
                }
                Mutation::Remove { .. } if existing.is_none() => {
                    results.push(Ok(result));
                    continue;
                }
                Mutation::Put { rev, value } => (RecordType::Document, rev, value),
                Mutation::Remove { rev } => (RecordType::Tombstone, rev, Vec::new()),
            };
            let Some(size) = format::record_size(key.len(), value.len()) else {
                let size = (key.len() + value.len()) as u64;
                results.push(Err(StorageError::RecordTooLarge { size }.into()));
                continue;
            };
            if let Err(e) = self.make_room(&mut writer, &mut stage, &mut results, &mut newest, size)
            {
                results.push(Err(e.into()));
                continue;
            }
            let seq = writer.seq_next + stage.records.len() as u64;
            let start = stage.buf.len();
            format::encode_into(&mut stage.buf, kind, seq, rev, key, &value);
            stage.records.push(Staged {
                key,
                kind,
                seq,
                rev,
                start,
                size: size as u32,
                item,
            });
            stage.keys.insert(key);
            results.push(Ok(result));
        }
        // A failure here already turned the staged items' results into errors.
        let _ = self.append_staged(&mut writer, &mut stage, &mut results, &mut newest);
        drop(writer);
        assert_eq!(results.len(), keys.len(), "one outcome per item");
        let ticket = newest.map(|(seq, journal)| self.ticket(seq, journal));
        (results, ticket)
    }

    /// Makes room in the active journal for a record of `size` bytes after the staged ones,
    /// by the single path's rule: a journal holding records is sealed when the record and a
    /// footer would pass its capacity (the staged records are appended first); an empty journal
    /// takes any record. Staged bytes past [`STAGED_BYTES_MAX`] are appended too.
    fn make_room<R, E: From<StorageError>>(
        &self,
        writer: &mut Writer,
        stage: &mut Stage<'_>,
        results: &mut [Result<R, E>],
        newest: &mut Newest,
        size: u64,
    ) -> Result<(), StorageError> {
        let padded = format::padded(size);
        let journal = self.journal_of(writer)?;
        let end = journal.len.load(Ordering::Relaxed) + stage.buf.len() as u64;
        let records = writer.records + stage.records.len() as u64;
        if records > 0 && end + padded + format::FOOTER_RECORD_SIZE > writer.capacity {
            self.append_staged(writer, stage, results, newest)?;
            return self.rotate_locked(writer);
        }
        if !stage.records.is_empty() && stage.buf.len() + padded as usize > STAGED_BYTES_MAX {
            self.append_staged(writer, stage, results, newest)?;
        }
        Ok(())
    }

    /// Appends the staged records with one write, then makes them visible. On failure every
    /// staged item's result becomes the error and the store is poisoned; the returned error is
    /// the refusal for whatever the caller was about to do.
    fn append_staged<R, E: From<StorageError>>(
        &self,
        writer: &mut Writer,
        stage: &mut Stage<'_>,
        results: &mut [Result<R, E>],
        newest: &mut Newest,
    ) -> Result<(), StorageError> {
        if stage.records.is_empty() {
            return Ok(());
        }
        let appended = self.journal_of(writer).and_then(|journal| {
            let offset = journal.len.load(Ordering::Relaxed);
            match journal.handle.write_all_at(&stage.buf, offset) {
                Ok(()) => Ok((journal, offset)),
                Err(e) => {
                    let path = journal.file_name().path_in(&self.dir);
                    Err(self.poison.poison(StorageError::io(&path, e)))
                }
            }
        });
        let (journal, offset) = match appended {
            Ok(appended) => appended,
            Err(error) => {
                for record in &stage.records {
                    results[record.item] = Err(error.clone().into());
                }
                stage.clear();
                // A failed append poisoned the store; a journal that could not be started (a
                // full disk) left it writable, and the same error refuses what comes next.
                return Err(self.check_writable().err().unwrap_or(error));
            }
        };
        let len = stage.buf.len() as u64;
        journal.len.store(offset + len, Ordering::Release);
        self.counters
            .bytes_written
            .fetch_add(len, Ordering::Relaxed);
        for record in &stage.records {
            match record.kind {
                RecordType::Document => {
                    let location = Location {
                        fid: journal.fid as u32,
                        size: record.size,
                        offset: offset + record.start as u64,
                        seq: record.seq,
                        rev: record.rev,
                    };
                    self.index_put(record.key, location, &journal);
                }
                RecordType::Tombstone => {
                    journal.add_markers(1, u64::from(record.size));
                    self.index_remove(record.key);
                }
                other => unreachable!("a batch stages documents and tombstones, not {other:?}"),
            }
            assert_eq!(
                record.seq, writer.seq_next,
                "records are numbered in append order"
            );
            self.published(writer, record.seq, record.rev);
        }
        let last = stage.records.last().expect("checked non-empty").seq;
        *newest = Some((last, journal));
        stage.clear();
        Ok(())
    }
}
