//! Multi-document inserts of a [`Collection`]: many documents decided and written under one
//! acquisition of the store's writer lock, their records appended together
//! (`Store::mutate_batch_deferred`).
//!
//! What it is: [`Collection::insert_many_deferred`], the batched form of
//! [`Collection::insert_deferred`] for `POST /_api/document/{c}` with an array and for
//! `/_api/import`. Each document is still its own operation: the same checks in the same order
//! (object, key, edge ends, then `overwriteMode` against the current version, which includes the
//! earlier documents of the batch), the same errors, a fresh revision per write.
//!
//! What it is not: atomic. A document that fails does not stop or undo the others.
//!
//! Invariants: one outcome per document, in input order; the returned [`Durability`] (only when
//! the effective `waitForSync` is true and something was written) is that of the newest write,
//! so when it resolves every write of the call is durable; the writer lock is held for at most
//! [`LOCKED_DOCS_MAX`] documents at a time, so other writers of the collection wait for a
//! bounded run.

use quince_errors::{ArangoError, Result, ARANGO_DOCUMENT_TYPE_INVALID};
use serde_json::{Map, Value};

use crate::collection::Collection;
use crate::documents::durability_of;
use crate::durability::Durability;
use crate::options::{WriteOptions, WriteOutcome};

/// Documents decided and written per acquisition of the store's writer lock.
pub(crate) const LOCKED_DOCS_MAX: usize = 1024;

/// A document that passed the checks made before the store is asked.
struct Prepared {
    /// Its position in the input.
    item: usize,
    key: String,
    body: Map<String, Value>,
}

impl Collection {
    /// Inserts each of `documents` as [`Collection::insert_deferred`] would, one after the
    /// other, but writes them in batches: returns each document's outcome in input order and
    /// the durability of the newest synced write.
    pub fn insert_many_deferred(
        &self,
        documents: Vec<Value>,
        options: &WriteOptions,
    ) -> (Vec<Result<WriteOutcome>>, Option<Durability>) {
        let count = documents.len();
        let mut results: Vec<Option<Result<WriteOutcome>>> = Vec::with_capacity(count);
        results.resize_with(count, || None);
        let sync = self.effective_sync(options);
        let mut durability = None;
        let mut documents = documents.into_iter().enumerate().peekable();
        let mut prepared: Vec<Prepared> = Vec::with_capacity(count.min(LOCKED_DOCS_MAX));
        while documents.peek().is_some() {
            // Keys are generated per run, in input order, as the single inserts would.
            prepared.clear();
            for (item, document) in documents.by_ref() {
                match self.prepare(document) {
                    Ok((key, body)) => prepared.push(Prepared { item, key, body }),
                    Err(err) => results[item] = Some(Err(err)),
                }
                if prepared.len() == LOCKED_DOCS_MAX {
                    break;
                }
            }
            if prepared.is_empty() {
                continue;
            }
            let keys: Vec<&[u8]> = prepared.iter().map(|p| p.key.as_bytes()).collect();
            let (outcomes, ticket) = self.store.mutate_batch_deferred(&keys, |i, existing| {
                let Prepared { key, body, .. } = &prepared[i];
                let edge = self.insert_edge(body)?;
                self.decide_insert(key, body, edge, existing, options, sync)
            });
            for (p, outcome) in prepared.iter().zip(outcomes) {
                if let Ok(outcome) = &outcome {
                    self.note_write(outcome);
                }
                results[p.item] = Some(outcome);
            }
            durability = Durability::newest(durability, durability_of(sync, ticket));
        }
        let results = results
            .into_iter()
            .map(|r| r.expect("every document has an outcome"))
            .collect();
        (results, durability)
    }

    /// The checks of an insert made before the store is asked: an object (1227), its key
    /// (given and valid, or generated), its edge ends in an edge collection.
    fn prepare(&self, document: Value) -> Result<(String, Map<String, Value>)> {
        let Value::Object(body) = document else {
            return Err(ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID));
        };
        let key = self.insert_key(&body)?;
        self.insert_edge(&body)?;
        Ok((key, body))
    }
}
