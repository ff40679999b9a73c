//! The expiry of ttl indexes: documents whose date lies more than `expireAfter` seconds in the
//! past are removed by the maintenance thread, through the one write path.
//!
//! What it is: [`Collection::expire_ttl`], one pass over a collection's ttl indexes: the
//! expired entries are read from the index (at most [`TTL_REMOVES_PER_PASS_MAX`] per index and
//! pass), each document is read again and its date checked again, and the expired ones are
//! removed in write requests of [`TTL_REMOVE_BATCH`] with their `_rev` as a precondition, so a
//! document updated meanwhile (given a later date) is left alone, and every other index hears
//! of the removals as it hears of any write.
//!
//! What it is not: exact timing. A document expires at the first pass after its time
//! (`--ttl.frequency`, 30 s by default), and a pass removes a bounded number of documents.
//!
//! Invariants: only documents whose current version is expired are removed; a removal that
//! loses a race (412 or 404) is skipped silently.

use std::ops::Bound;

use quince_errors::Result;
use quince_ops::{IndexLookup, IndexType, WriteKind, WriteOptions, WriteRequest};
use serde_json::{json, Map, Value};

use crate::collection::Collection;

/// The most documents one ttl index gives up in one pass (ArangoDB's
/// `--ttl.max-collection-removes` default).
pub(crate) const TTL_REMOVES_PER_PASS_MAX: usize = 100_000;

/// The documents removed by one write request.
const TTL_REMOVE_BATCH: usize = 1_000;

impl Collection {
    /// Removes the documents expired at `now` (seconds since the epoch) from every ttl index
    /// of the collection; the number removed.
    pub(crate) fn expire_ttl(&self, now: f64) -> Result<u64> {
        let ttl: Vec<_> = self
            .secondary_indexes()
            .into_iter()
            .filter(|index| index.definition().kind == IndexType::Ttl)
            .collect();
        let mut removed = 0;
        for index in ttl {
            let cutoff = now - index.definition().expire_after.unwrap_or(0.0);
            let Some(cutoff) = serde_json::Number::from_f64(cutoff) else {
                continue;
            };
            let lookup = IndexLookup::Sorted {
                prefix: Vec::new(),
                low: Bound::Unbounded,
                high: Bound::Included(Value::Number(cutoff.clone())),
                reverse: false,
            };
            let mut keys: Vec<String> = Vec::new();
            self.index_lookup(index.definition().id, &lookup, &mut |hit| {
                keys.push(hit.key.to_owned());
                keys.len() < TTL_REMOVES_PER_PASS_MAX
            })?;
            let cutoff = cutoff.as_f64().unwrap_or(f64::MIN);
            for batch in keys.chunks(TTL_REMOVE_BATCH) {
                let selectors: Vec<Value> = batch
                    .iter()
                    .filter_map(|key| {
                        let document = self.read(key).ok()?;
                        let object: Map<String, Value> =
                            serde_json::from_slice(&document.json).ok()?;
                        let entries = index.spec.entries(&object).ok()?;
                        let seconds = entries.first()?.first()?.as_f64()?;
                        (seconds <= cutoff).then(|| json!({"_key": key, "_rev": document.rev}))
                    })
                    .collect();
                if selectors.is_empty() {
                    continue;
                }
                let options = WriteOptions {
                    ignore_revs: false,
                    ..WriteOptions::default()
                };
                let results = self.write(WriteRequest::new(WriteKind::Remove, selectors, options));
                removed += results.items.iter().filter(|item| item.is_ok()).count() as u64;
            }
        }
        Ok(removed)
    }
}
