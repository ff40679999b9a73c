//! The write side of an import: documents into the collection, with the counters, details,
//! `onDuplicate`, `waitForSync` and the undo log of an all-or-nothing (`complete`) import.
//!
//! What it is: [`Writer`], which receives documents in input order (and records that are not
//! documents, and empty lines), writes each with one insert of the database layer
//! (`onDuplicate=update|replace` is the insert's `overwriteMode`, so "insert or overwrite" is
//! one atomic step per document; `ignore` turns a unique-constraint failure into `ignored`),
//! and counts what happened.
//!
//! All or nothing: with `complete=true` every successful write is remembered in an undo log
//! (the key and the revision this import wrote, and for an overwrite the version it replaced,
//! which the insert returns atomically as `old`). On the first failure the log is replayed
//! backwards: a created document is removed and an overwritten one is put back, each only if
//! its current revision is still the one this import wrote (an `If-Match` precondition).
//! This was chosen over validating everything before writing because validation cannot see
//! concurrent writers anyway (a key free at validation time may be taken before the write),
//! and it keeps the body streaming: nothing but the log is held. Concurrent writers are never
//! blocked; one that changes a document this import wrote wins over the rollback (its write
//! happened after ours, and undoing ours would destroy it). A restored document has its old
//! content under a new `_rev`: the database layer gives every write a fresh revision. The log
//! is bounded ([`UNDO_BYTES_MAX`]); an import that would exceed it fails (and rolls back).
//!
//! `waitForSync`: when the request asks for it and the collection does not sync every write
//! anyway, the latest document is held back and written only when the next one arrives; the
//! last one is written synced, and the fsync that covers it covers every earlier write of
//! the import (the journal is append-only). If that last write does not write (an error, an
//! ignored duplicate), an empty update of the latest document this import wrote carries the
//! fsync instead (the database layer has no "sync this collection" call to use here).
//!
//! What it is not: parsing or conversion (see `convert`), HTTP.
//!
//! Invariants: every record is counted in exactly one of created, updated, ignored, errors,
//! empty; details are positions as ArangoDB reports them (a failed write: its 0-based index
//! among the documents that passed conversion; a failed conversion: the record's 1-based line
//! or element number) and hold at most [`DETAILS_BYTES_MAX`] bytes.

use std::sync::Arc;

use quince_db::{Collection, OverwriteMode, WriteOptions};
use quince_errors::{ArangoError, Result};
use serde_json::{Map, Value};

use super::convert::{excerpt, render_map, Conversion, Invalid, RecordKind};
use super::options::{ImportOptions, OnDuplicate};

/// The bound on the undo log of an all-or-nothing import, in (estimated) bytes.
pub(crate) const UNDO_BYTES_MAX: usize = 256 << 20;

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

/// One write to undo.
enum Undo {
    /// The import created `key` at `rev`.
    Remove { key: String, rev: String },
    /// The import overwrote `old` with `rev`.
    Restore { key: String, rev: String, old: Value },
}

/// A document held back until the next one arrives (`waitForSync` imports).
struct Held {
    doc: Map<String, Value>,
    kind: RecordKind,
    /// The record it came from, to show it in a detail if the write fails.
    raw: Vec<u8>,
    /// Its position in details.
    index: u64,
}

/// Writes one import's documents.
pub(crate) struct Writer {
    collection: Arc<Collection>,
    on_duplicate: OnDuplicate,
    complete: bool,
    /// Keep detail strings.
    keep_details: bool,
    /// Hold back the latest document so that the last write can be the synced one.
    sync_at_end: bool,
    /// The options of an ordinary write.
    options: WriteOptions,
    counts: Counts,
    details: Vec<String>,
    details_bytes: usize,
    /// The position of the next document that passes conversion.
    next_index: u64,
    undo: Vec<Undo>,
    undo_bytes: usize,
    held: Option<Held>,
    /// Key and revision of the latest document this import wrote.
    latest: Option<(String, String)>,
    /// Writes of this import not yet covered by a synced write.
    unsynced: bool,
}

impl Writer {
    /// A writer for one import into `collection`.
    pub fn new(collection: Arc<Collection>, options: &ImportOptions) -> Writer {
        let overwrite_mode = match options.on_duplicate {
            OnDuplicate::Error | OnDuplicate::Ignore => OverwriteMode::Conflict,
            OnDuplicate::Update => OverwriteMode::Update,
            OnDuplicate::Replace => OverwriteMode::Replace,
        };
        let write_options = WriteOptions {
            overwrite_mode,
            // The undo log needs the version an overwrite replaced.
            return_old: options.complete && overwrite_mode != OverwriteMode::Conflict,
            ..WriteOptions::default()
        };
        Writer {
            sync_at_end: options.wait_for_sync && !collection.wait_for_sync(),
            collection,
            on_duplicate: options.on_duplicate,
            complete: options.complete,
            keep_details: options.details,
            options: write_options,
            counts: Counts::default(),
            details: Vec::new(),
            details_bytes: 0,
            next_index: 0,
            undo: Vec::new(),
            undo_bytes: 0,
            held: None,
            latest: None,
            unsynced: false,
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
        doc: Map<String, Value>,
        kind: RecordKind,
        raw: &[u8],
        conversion: &Conversion,
    ) -> Result<()> {
        let index = self.next_index;
        self.next_index += 1;
        if !self.sync_at_end {
            return self.write(doc, kind, raw, index, conversion, false);
        }
        let mut next = Held {
            doc,
            kind,
            raw: Vec::new(),
            index,
        };
        let previous = self.held.take();
        let mut buffer = match previous {
            Some(previous) => {
                self.write(
                    previous.doc,
                    previous.kind,
                    &previous.raw,
                    previous.index,
                    conversion,
                    false,
                )?;
                previous.raw
            }
            None => Vec::new(),
        };
        buffer.clear();
        buffer.extend_from_slice(raw);
        next.raw = buffer;
        self.held = Some(next);
        Ok(())
    }

    /// Writes what is held back (synced when asked) and reports.
    pub fn finish(&mut self, conversion: &Conversion) -> Result<Report> {
        if let Some(last) = self.held.take() {
            self.write(last.doc, last.kind, &last.raw, last.index, conversion, true)?;
        }
        if self.sync_at_end && self.unsynced {
            self.sync_by_touching();
        }
        Ok(Report {
            counts: self.counts,
            details: self
                .keep_details
                .then(|| std::mem::take(&mut self.details)),
        })
    }

    /// Undoes every write of this import, latest first (all-or-nothing imports only).
    pub fn roll_back(&mut self) {
        assert!(self.complete || self.undo.is_empty());
        let undone = self.undo.len();
        while let Some(entry) = self.undo.pop() {
            let result = match entry {
                Undo::Remove { key, rev } => {
                    let options = if_match(rev);
                    self.collection.remove(&key, None, &options).map(|_| ())
                }
                Undo::Restore { key, rev, old } => {
                    let options = if_match(rev);
                    self.collection.replace(&key, old, &options).map(|_| ())
                }
            };
            if let Err(err) = result {
                // A concurrent writer changed or removed the document after this import wrote
                // it; its write is the later one and stays.
                tracing::debug!(event = "import.rollback_skipped", error = %err);
            }
        }
        self.undo_bytes = 0;
        tracing::info!(event = "import.rolled_back", writes = undone);
    }

    /// Writes one document and counts the outcome.
    fn write(
        &mut self,
        doc: Map<String, Value>,
        kind: RecordKind,
        raw: &[u8],
        index: u64,
        conversion: &Conversion,
        sync: bool,
    ) -> Result<()> {
        let result = if sync {
            let options = WriteOptions {
                wait_for_sync: true,
                ..self.options.clone()
            };
            self.collection.insert(Value::Object(doc), &options)
        } else {
            self.collection.insert(Value::Object(doc), &self.options)
        };
        match result {
            Ok(outcome) => {
                if outcome.old_rev.is_some() {
                    self.counts.updated += 1;
                } else {
                    self.counts.created += 1;
                }
                if self.complete {
                    let entry = match outcome.old {
                        Some(old) if outcome.old_rev.is_some() => Undo::Restore {
                            key: outcome.key.clone(),
                            rev: outcome.rev.clone(),
                            old,
                        },
                        _ => Undo::Remove {
                            key: outcome.key.clone(),
                            rev: outcome.rev.clone(),
                        },
                    };
                    self.remember(entry)?;
                }
                self.unsynced = !outcome.synced;
                if self.sync_at_end {
                    self.latest = Some((outcome.key, outcome.rev));
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

    fn remember(&mut self, entry: Undo) -> Result<()> {
        let size = match &entry {
            Undo::Remove { key, rev } => key.len() + rev.len() + 64,
            Undo::Restore { key, rev, old } => {
                key.len() + rev.len() + 64 + super::convert::render(old).len() * 2
            }
        };
        self.undo_bytes += size;
        self.undo.push(entry);
        if self.undo_bytes > UNDO_BYTES_MAX {
            return Err(ArangoError::with_message(
                quince_errors::HTTP_REQUEST_ENTITY_TOO_LARGE,
                format!(
                    "an all-or-nothing import (complete=true) may overwrite at most \
                     {UNDO_BYTES_MAX} bytes of undo information; import in smaller requests"
                ),
            ));
        }
        Ok(())
    }

    fn detail(&mut self, detail: String) {
        if !self.keep_details || self.details_bytes + detail.len() > DETAILS_BYTES_MAX {
            return;
        }
        self.details_bytes += detail.len();
        self.details.push(detail);
    }

    /// Makes the import's earlier writes durable when its last record wrote nothing: an empty
    /// update of the latest document it wrote, synced. If someone changed that document since,
    /// the update is refused; the writes are then left to the background sync (within the
    /// sync interval) and a warning is logged.
    fn sync_by_touching(&mut self) {
        let Some((key, rev)) = self.latest.take() else {
            return;
        };
        let options = WriteOptions {
            wait_for_sync: true,
            ..if_match(rev)
        };
        if let Err(err) = self
            .collection
            .update(&key, Value::Object(Map::new()), &options)
        {
            tracing::warn!(event = "import.sync_touch_failed", %key, error = %err);
        }
    }
}

/// The options of a write that must find the revision `rev`.
fn if_match(rev: String) -> WriteOptions {
    WriteOptions {
        if_match: Some(rev),
        ..WriteOptions::default()
    }
}
