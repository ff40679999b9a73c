//! The write side of an import: documents into the collection, with the counters, details,
//! `onDuplicate`, `waitForSync` and the undo log of an all-or-nothing (`complete`) import.
//!
//! What it is: [`Writer`], which receives documents in input order (and records that are not
//! documents, and empty lines), writes each with one insert of the database layer
//! (`onDuplicate=update|replace` is the insert's `overwriteMode`, so "insert or overwrite" is
//! one atomic step per document; `ignore` turns a unique-constraint failure into `ignored`),
//! and counts what happened. The inserts of a batch are one call of the database layer
//! (`insert_many_deferred`: one writer-lock acquisition and one journal append per run of
//! documents), each still its own insert with its own outcome. A batch whose documents all took
//! the fast route (checked object text, `convert::Converted::Text`) goes as text
//! (`insert_texts`), any other as objects.
//!
//! All or nothing: with `complete=true` the import runs inside a stream transaction (its own,
//! or the request's `x-arango-trx-id`): the writer stops at the first failure and the importer
//! aborts the transaction, so nothing of it is ever visible; on success the importer commits,
//! and the storage engine's transaction groups make the whole import appear at once and, after
//! a crash, be whole or absent.
//!
//! Batches: documents are converted (parsed) as they arrive, outside any lock, and written in
//! batches of up to [`BATCH_DOCS`] under a per-collection import lock, so two imports into one
//! collection (`quince import --threads 2`) overlap one's parsing with the other's writing
//! instead of contending for the store's writer lock on every document. Ordinary document
//! requests never take the import lock.
//!
//! `waitForSync` (the request's or the collection's): every write is made with the database
//! layer's deferred form, which returns a durability handle instead of blocking; the newest
//! handle is kept and waited for once at the end. Handles of one collection are ordered, so
//! the newest one being durable means every write of the import is.
//!
//! What it is not: parsing or conversion (see `convert`), HTTP.
//!
//! Invariants: every record is counted in exactly one of created, updated, ignored, errors,
//! empty; details are positions as ArangoDB reports them (a failed write: its 0-based index
//! among the documents that passed conversion; a failed conversion: the record's 1-based line
//! or element number) and hold at most [`DETAILS_BYTES_MAX`] bytes.

use std::ops::Range;
use std::sync::{Arc, Mutex};

use quince_errors::{ArangoError, Result};
use quince_ops::{
    CollectionOps, Durability, OverwriteMode, WriteKind, WriteOptions, WriteOutcome, WriteRequest,
    WriteResults,
};
use serde_json::{Map, Value};

use super::convert::{excerpt, render_map, Conversion, Converted, Invalid, RecordKind};
use super::options::{ImportOptions, OnDuplicate};

/// Documents written per batch under the import lock.
pub(crate) const BATCH_DOCS: usize = 512;

/// Record bytes kept per batch (to show a failed document); a batch is written when it would
/// pass this.
const BATCH_RAW_BYTES: usize = 4 << 20;

/// Import locks, by collection id: imports into one collection write one batch at a time.
static IMPORT_LOCKS: [Mutex<()>; 64] = [const { Mutex::new(()) }; 64];

/// The bound on the detail strings of one import, in bytes; later failures are still counted.
pub(crate) const DETAILS_BYTES_MAX: usize = 16 << 20;

/// The counters of the reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub created: u64,
    pub errors: u64,
    pub empty: u64,
    pub updated: u64,
    pub ignored: u64,
}

/// What a finished import reports.
#[derive(Debug)]
pub(crate) struct Report {
    pub counts: Counts,
    /// The detail strings, when asked for.
    pub details: Option<Vec<String>>,
}

/// A converted document waiting for its batch: the document, its record kind, its position in
/// details, and where its record is in [`Pending::raw`].
type Waiting = (Converted, RecordKind, u64, Range<usize>);

/// Converted documents waiting for the next batch write.
#[derive(Default)]
struct Pending {
    /// The documents, in input order.
    docs: Vec<Waiting>,
    /// The records the documents came from, to show one in a detail if its write fails.
    raw: Vec<u8>,
}

/// Writes one import's documents.
pub(crate) struct Writer {
    collection: Arc<dyn CollectionOps>,
    on_duplicate: OnDuplicate,
    complete: bool,
    /// Keep detail strings.
    keep_details: bool,
    /// The options of every write (`wait_for_sync` is the effective one).
    options: WriteOptions,
    counts: Counts,
    details: Vec<String>,
    details_bytes: usize,
    /// The position of the next document that passes conversion.
    next_index: u64,
    pending: Pending,
    /// The durability of the newest synced write (waitForSync imports).
    durability: Option<Durability>,
}

impl Writer {
    /// A writer for one import into `collection`.
    pub fn new(collection: Arc<dyn CollectionOps>, options: &ImportOptions) -> Writer {
        let overwrite_mode = match options.on_duplicate {
            OnDuplicate::Error | OnDuplicate::Ignore => OverwriteMode::Conflict,
            OnDuplicate::Update => OverwriteMode::Update,
            OnDuplicate::Replace => OverwriteMode::Replace,
        };
        let write_options = WriteOptions {
            wait_for_sync: options.wait_for_sync || collection.wait_for_sync(),
            overwrite_mode,
            skip_document_validation: options.skip_document_validation,
            ..WriteOptions::default()
        };
        Writer {
            collection,
            on_duplicate: options.on_duplicate,
            complete: options.complete,
            keep_details: options.details,
            options: write_options,
            counts: Counts::default(),
            details: Vec::new(),
            details_bytes: 0,
            next_index: 0,
            pending: Pending::default(),
            durability: None,
        }
    }

    /// An empty line.
    pub fn empty(&mut self) {
        self.counts.empty += 1;
    }

    /// A record that is not a document: an error, or the end of an all-or-nothing import.
    pub fn invalid(&mut self, invalid: Invalid) -> Result<()> {
        if self.complete {
            return Err(invalid.error);
        }
        self.counts.errors += 1;
        self.detail(invalid.detail);
        Ok(())
    }

    /// A document converted from `raw` (a record of `kind`).
    pub fn document(
        &mut self,
        doc: Converted,
        kind: RecordKind,
        raw: &[u8],
        conversion: &Conversion,
    ) -> Result<()> {
        let full = self.pending.docs.len() >= BATCH_DOCS
            || self.pending.raw.len() + raw.len() > BATCH_RAW_BYTES;
        if full && !self.pending.docs.is_empty() {
            self.flush(conversion)?;
        }
        let index = self.next_index;
        self.next_index += 1;
        let start = self.pending.raw.len();
        self.pending.raw.extend_from_slice(raw);
        let range = start..self.pending.raw.len();
        self.pending.docs.push((doc, kind, index, range));
        Ok(())
    }

    /// Writes what is pending, waits for durability when asked, and reports.
    pub fn finish(&mut self, conversion: &Conversion) -> Result<Report> {
        self.flush(conversion)?;
        if let Some(durability) = self.durability.take() {
            durability.wait()?;
        }
        Ok(Report {
            counts: self.counts,
            details: self.keep_details.then(|| std::mem::take(&mut self.details)),
        })
    }

    /// Writes the pending documents under the collection's import lock.
    fn flush(&mut self, conversion: &Conversion) -> Result<()> {
        let mut pending = std::mem::take(&mut self.pending);
        let slot = (self.collection.id() % IMPORT_LOCKS.len() as u64) as usize;
        // A panic while holding the lock poisons it; the lock guards no data, so go on.
        let guard = IMPORT_LOCKS[slot]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let results = write_batch(&*self.collection, &mut pending.docs, &self.options);
        drop(guard);
        let (written, durability) = (results.items, results.durability);
        self.durability = Durability::newest(self.durability.take(), durability);
        // Every outcome is counted even after a failure: the batch's later documents were
        // written too. The first failure is the one reported.
        let mut result = Ok(());
        for ((_, kind, index, range), outcome) in pending.docs.drain(..).zip(written) {
            let counted = self.account(outcome, kind, &pending.raw[range], index, conversion);
            if result.is_ok() {
                result = counted;
            }
        }
        // The buffers go back for the next batch, keeping their capacity.
        pending.docs.clear();
        pending.raw.clear();
        self.pending = pending;
        result
    }

    /// Counts the outcome of one document's insert.
    fn account(
        &mut self,
        written: Result<WriteOutcome>,
        kind: RecordKind,
        raw: &[u8],
        index: u64,
        conversion: &Conversion,
    ) -> Result<()> {
        match written {
            Ok(outcome) => {
                if outcome.old_rev.is_some() {
                    self.counts.updated += 1;
                } else {
                    self.counts.created += 1;
                }
                Ok(())
            }
            Err(err)
                if self.on_duplicate == OnDuplicate::Ignore
                    && err.is(quince_errors::ARANGO_UNIQUE_CONSTRAINT_VIOLATED) =>
            {
                self.counts.ignored += 1;
                Ok(())
            }
            Err(err) => {
                // The document went into the insert; it is shown from its record again.
                let shown = conversion
                    .convert(kind, raw, 0)
                    .map(|doc| render_map(&doc))
                    .unwrap_or_default();
                let detail = format!(
                    "at position {index}: creating document failed with error '{}', \
                     offending document: {}",
                    err.code.message,
                    excerpt(&shown)
                );
                if self.complete {
                    return Err(ArangoError {
                        message: detail.into(),
                        ..err
                    });
                }
                self.counts.errors += 1;
                self.detail(detail);
                Ok(())
            }
        }
    }

    fn detail(&mut self, detail: String) {
        if !self.keep_details || self.details_bytes + detail.len() > DETAILS_BYTES_MAX {
            return;
        }
        self.details_bytes += detail.len();
        self.details.push(detail);
    }
}

/// Inserts the documents of one batch in one call (they are left empty): as object texts when
/// every one took the fast route, else as objects.
fn write_batch(
    collection: &dyn CollectionOps,
    docs: &mut [Waiting],
    options: &WriteOptions,
) -> WriteResults {
    let all_text = docs
        .iter()
        .all(|(doc, ..)| matches!(doc, Converted::Text(_)));
    let taken = docs
        .iter_mut()
        .map(|(doc, ..)| std::mem::replace(doc, Converted::Object(Map::new())));
    if all_text {
        let texts = taken
            .map(|doc| match doc {
                Converted::Text(text) => text,
                Converted::Object(_) => unreachable!("every document is text"),
            })
            .collect();
        return collection.insert_texts(texts, options.clone());
    }
    let documents: Vec<Value> = taken.map(|doc| Value::Object(doc.into_object())).collect();
    collection.write(WriteRequest::new(
        WriteKind::Insert,
        documents,
        options.clone(),
    ))
}
