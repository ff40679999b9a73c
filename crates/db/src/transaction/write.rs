//! The operations of a running transaction on one collection: writes decided into its buffer,
//! and reads that see the buffer over the committed data.
//!
//! What it is: [`Transaction::write`] (every item of a write request: parsed and prepared as
//! the write path does, then decided under the store's writer lock against the transaction's
//! own version of the key or the committed one, the key reserved, the result buffered),
//! [`Transaction::truncate`], [`Transaction::read`], [`Transaction::read_rev`],
//! [`Transaction::count`], [`Transaction::scan`] and [`Transaction::index_lookup`].
//!
//! What it is not: a write to the store. Nothing is appended before commit.
//!
//! Invariants: a decision reads the committed version and reserves the key in one step under
//! the store's writer lock, so a plain writer can never slip in between; items are
//! independent, as in the write path (an item that fails leaves the others, and the
//! transaction, as they are); the buffered bytes never pass `maxTransactionSize` (32).

use std::collections::HashSet;
use std::sync::Arc;

use quince_errors::{ArangoError, Result, RESOURCE_LIMIT};
use quince_model::document::{render_document, stored_object};
use quince_model::key::is_valid_key;
use quince_model::rev::RevisionId;
use quince_ops::{
    parse_items, stored_edge_ends, IndexHit, IndexLookup, StoredDocument, WriteKind, WriteOptions,
    WriteOutcome, WriteRequest, WriteResults,
};
use quince_storage::Mutation;
use serde_json::Value;

use crate::collection::Collection;
use crate::current::{Buffered, Current};
use crate::documents::not_found;
use crate::write_path::Prepared;

use super::buffer::Buffer;
use super::{Operation, Transaction};

impl Transaction {
    /// Writes each item of `request` into the transaction (nothing is visible to others, or
    /// durable, before commit; `waitForSync` of an item applies at commit).
    pub(crate) fn write(
        &self,
        collection: &Arc<Collection>,
        request: WriteRequest,
    ) -> WriteResults {
        let count = request.items.len();
        let refused = |error: ArangoError| WriteResults {
            items: (0..count).map(|_| Err(error.clone())).collect(),
            durability: None,
            synced: false,
        };
        let mut operation = match self.running() {
            Ok(operation) => operation,
            Err(error) => return refused(error),
        };
        if let Err(error) = self.check_writable(collection) {
            return refused(error);
        }
        let own_name = if request.kind == WriteKind::Remove {
            collection.name()
        } else {
            String::new()
        };
        let (ops, options) = parse_items(request, &own_name);
        let items = ops
            .into_iter()
            .enumerate()
            .map(|(item, op)| {
                let (key, op) = op.and_then(|op| collection.prepare(op))?;
                let prepared = Prepared { item, key, op };
                operation.write_one(collection, &prepared, &options)
            })
            .collect();
        WriteResults {
            items,
            durability: None,
            synced: false,
        }
    }

    /// Removes every document the transaction sees, inside the transaction.
    pub(crate) fn truncate(&self, collection: &Arc<Collection>) -> Result<()> {
        let mut operation = self.running()?;
        self.check_writable(collection)?;
        let mut keys: Vec<String> = Vec::new();
        collection.store.for_each_key(&mut |key, _rev| {
            keys.push(String::from_utf8_lossy(key).into_owned());
            true
        });
        if let Some(buffer) = operation.state.buffers.get(&collection.id()) {
            let seen: HashSet<&str> = keys.iter().map(String::as_str).collect();
            let added: Vec<String> = buffer
                .order
                .iter()
                .filter(|k| !seen.contains(k.as_str()))
                .cloned()
                .collect();
            keys.extend(added);
        }
        let options = WriteOptions::default();
        for key in keys {
            let prepared = Prepared {
                item: 0,
                key,
                op: crate::write_path::PreparedOp::Remove { expected_rev: None },
            };
            match operation.write_one(collection, &prepared, &options) {
                Ok(_) => {}
                Err(error) if error.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// One document as the transaction sees it.
    pub(crate) fn read(&self, collection: &Collection, key: &str) -> Result<StoredDocument> {
        let operation = self.running()?;
        self.check_readable(collection)?;
        match operation.buffered(collection, key) {
            Some(Some((rev, value))) => Ok(StoredDocument {
                rev: RevisionId(*rev).encode(),
                json: render_document(value, &collection.current_id_prefix()),
            }),
            Some(None) => Err(not_found()),
            None => collection.read(key),
        }
    }

    /// The `_rev` of a document as the transaction sees it.
    pub(crate) fn read_rev(&self, collection: &Collection, key: &str) -> Result<String> {
        let operation = self.running()?;
        self.check_readable(collection)?;
        match operation.buffered(collection, key) {
            Some(Some((rev, _))) => Ok(RevisionId(*rev).encode()),
            Some(None) => Err(not_found()),
            None => collection.read_rev(key),
        }
    }

    /// The number of documents as the transaction sees it.
    pub(crate) fn count(&self, collection: &Collection) -> Result<u64> {
        let operation = self.running()?;
        self.check_readable(collection)?;
        let delta = operation
            .state
            .buffers
            .get(&collection.id())
            .map_or(0, Buffer::count_delta);
        Ok((collection.count() as i64 + delta).max(0) as u64)
    }

    /// Visits every document the transaction sees.
    ///
    /// The transaction's own changes to the collection are copied out first and its state is
    /// released before the first visit: a visitor may wait as long as it likes (a streaming
    /// cursor waits for the client's next fetch) or call the transaction again, and every other
    /// request naming the transaction (that fetch included) still gets its state. A key the
    /// transaction wrote is taken from the copy, never from the store, so a commit that lands
    /// during the scan shows no document twice.
    pub(crate) fn scan(
        &self,
        collection: &Collection,
        visit: &mut dyn FnMut(StoredDocument) -> bool,
    ) -> Result<()> {
        let operation = self.running()?;
        self.check_readable(collection)?;
        let prefix = collection.current_id_prefix();
        let (written, own): (HashSet<String>, Vec<StoredDocument>) =
            match operation.state.buffers.get(&collection.id()) {
                None => Default::default(),
                Some(buffer) => (
                    buffer.changes.keys().cloned().collect(),
                    buffer
                        .order
                        .iter()
                        .filter_map(|key| buffer.changes[key].new.as_ref())
                        .map(|(rev, value)| StoredDocument {
                            rev: RevisionId(*rev).encode(),
                            json: render_document(value, &prefix),
                        })
                        .collect(),
                ),
            };
        drop(operation);
        let mut going = true;
        collection.store.scan(&mut |key, rev, stored| {
            let mine = !written.is_empty()
                && std::str::from_utf8(key).is_ok_and(|key| written.contains(key));
            if mine {
                return true;
            }
            going = visit(StoredDocument {
                rev: RevisionId(rev).encode(),
                json: render_document(stored, &prefix),
            });
            going
        })?;
        if going {
            for document in own {
                if !visit(document) {
                    break;
                }
            }
        }
        Ok(())
    }
}

impl Transaction {
    /// An index lookup as the transaction sees the collection: the committed hits of the
    /// keys it did not write, and the hits of its own versions, put in the lookup's order and
    /// cut to its limit ([`IndexLookup::finish`]). The committed index is asked for as many
    /// more hits as the transaction changed keys, so dropping those never leaves a limited
    /// lookup short. The hits are collected before `visit` runs (it may call the transaction
    /// again).
    pub(crate) fn index_lookup(
        &self,
        collection: &Arc<Collection>,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        let operation = self.running()?;
        self.check_readable(collection)?;
        let Some(buffer) = operation.state.buffers.get(&collection.id()) else {
            drop(operation);
            return collection.index_lookup(index_id, lookup, visit);
        };
        // The entries one of the transaction's own versions gives the index.
        let edge = match lookup {
            _ if !collection.is_edge_index(Some(index_id), "") => None,
            IndexLookup::Edge { direction, .. } => Some(*direction),
            // The committed lookup refuses the wrong form.
            _ => {
                drop(operation);
                return collection.index_lookup(index_id, lookup, visit);
            }
        };
        let spec = match edge {
            Some(_) => None,
            None => Some(collection.index_spec(index_id)?),
        };
        let entries_of = |value: &[u8]| -> Result<Vec<Box<[Value]>>> {
            match (&spec, edge) {
                (Some(spec), _) => spec.entries(&stored_object(value)),
                (None, Some(direction)) => Ok(stored_edge_ends(value)
                    .map(|ends| vec![direction.hit_values(&ends)])
                    .unwrap_or_default()),
                (None, None) => Ok(Vec::new()),
            }
        };
        let mut hits: Vec<(Box<[Value]>, String)> = Vec::new();
        let wider = lookup.widened(buffer.changes.len());
        collection.index_lookup(index_id, &wider, &mut |hit| {
            if !buffer.changes.contains_key(hit.key) {
                hits.push((hit.values.into(), hit.key.to_owned()));
            }
            true
        })?;
        for key in &buffer.order {
            if let Some((_, value)) = &buffer.changes[key].new {
                for values in lookup.entries_hits(&entries_of(value)?) {
                    hits.push((values, key.clone()));
                }
            }
        }
        drop(operation);
        lookup.finish(&mut hits);
        for (values, key) in &hits {
            if !visit(IndexHit {
                key,
                values,
                document: None,
            }) {
                break;
            }
        }
        Ok(())
    }
}

impl Operation<'_> {
    /// The transaction's own version of `key` in `collection`: `None` when it did not write
    /// the key, `Some(None)` when it removed it.
    fn buffered(&self, collection: &Collection, key: &str) -> Option<Option<&(u64, Vec<u8>)>> {
        if !is_valid_key(key) {
            return None;
        }
        let change = self.state.buffers.get(&collection.id())?.changes.get(key)?;
        Some(change.new.as_ref())
    }

    /// Decides one prepared item against the transaction's version of its key (or the
    /// committed one), reserves the key and buffers the result.
    fn write_one(
        &mut self,
        collection: &Arc<Collection>,
        p: &Prepared,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let trx = self.transaction.id;
        let used: u64 = self.state.buffers.values().map(|b| b.bytes).sum();
        let left = self
            .transaction
            .options
            .max_transaction_size
            .saturating_sub(used);
        let max = self.transaction.options.max_transaction_size;
        let buffer = self
            .state
            .buffers
            .entry(collection.id())
            .or_insert_with(|| Buffer::new(Arc::clone(collection)));
        let key = p.key.as_str();
        let (outcome, _) = collection.store.mutate_deferred(
            key.as_bytes(),
            |existing| -> Result<(Mutation, WriteOutcome)> {
                let committed = existing.as_ref().map(|e| e.rev);
                let (mutation, outcome) = match buffer.changes.get(key) {
                    Some(change) => {
                        let own = change
                            .new
                            .as_ref()
                            .map(|(rev, value)| Buffered { rev: *rev, value });
                        let own = own.as_ref().map(|c| c as &dyn Current);
                        collection.decide_op(p, own, options, false)?
                    }
                    None => {
                        let current = existing.as_ref().map(|e| e as &dyn Current);
                        collection.decide_op(p, current, options, false)?
                    }
                };
                let (rev, new) = match mutation {
                    Mutation::Keep => return Ok((Mutation::Keep, outcome)),
                    Mutation::Put { rev, value } => (rev, Some((rev, value))),
                    Mutation::Remove { rev } => (rev, None),
                };
                let size = new.as_ref().map_or(0, |(_, v)| v.len()) as u64 + key.len() as u64;
                if size > left {
                    return Err(ArangoError::with_message(
                        RESOURCE_LIMIT,
                        format!(
                            "aborting transaction because maximal transaction size limit of \
                             {max} bytes is reached"
                        ),
                    ));
                }
                collection.trx_locks.reserve(key, trx)?;
                buffer.record(key, committed, rev, new);
                Ok((Mutation::Keep, outcome))
            },
        )?;
        Ok(outcome)
    }
}
