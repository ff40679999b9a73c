//! [`SortedIndex`]: one persistent or ttl index of a collection, kept by the write path as a
//! [`DocumentHook`].
//!
//! What it is: the index's [`IndexSpec`] and its [`Entries`], and the hook methods:
//! - `check` computes the change's old and new entries and, for a unique index, refuses a new
//!   tuple that another document holds (1210, ArangoDB's message), counting the changes the
//!   same run accepted before (pending) as if they were applied;
//! - `applied` moves the pending change into the entries, `aborted` forgets it, `truncated`
//!   clears everything;
//! - `recovered` collects every live document's entries and `recovery_finished` sorts them and
//!   builds the map in one pass (on open, and when the index is created over existing
//!   documents; on create a unique violation among them refuses the index).
//!
//! What it is not: the place of locks between writers: the collection's hook lock serialises
//! every hook call of a collection (`hooks.rs`); the locks here only let lookups read while a
//! run is between `check` and `applied`.
//!
//! Invariants: the entries are exactly those of the collection's committed documents once no
//! run is in progress; pending changes are resolved (applied or aborted) before the hook lock
//! is released; lock order: `pending`, then `entries`.

use std::collections::{BTreeMap, VecDeque};

use parking_lot::{Mutex, RwLock};
use quince_errors::{ArangoError, Result, ARANGO_UNIQUE_CONSTRAINT_VIOLATED};
use quince_ops::{IndexDefinition, IndexSpec};
use serde_json::Value;

use crate::hooks::{Change, DocumentHook, Version};

use super::sorted::{around, Entries, IndexKey};

/// A change `check` accepted, with its entries, until `applied` or `aborted` names it.
struct PendingChange {
    key: String,
    old_rev: Option<u64>,
    new_rev: Option<u64>,
    old: Vec<Box<[Value]>>,
    new: Vec<Box<[Value]>>,
}

/// The changes of the current run (see the module doc).
#[derive(Default)]
struct Pending {
    changes: VecDeque<PendingChange>,
    /// For unique indexes: the entries pending changes add and remove, with counts.
    added: BTreeMap<IndexKey, u32>,
    removed: BTreeMap<IndexKey, u32>,
}

fn bump(map: &mut BTreeMap<IndexKey, u32>, entry: IndexKey, up: bool) {
    if up {
        *map.entry(entry).or_insert(0) += 1;
    } else if let Some(n) = map.get_mut(&entry) {
        *n -= 1;
        if *n == 0 {
            map.remove(&entry);
        }
    }
}

impl Pending {
    /// Counts (or uncounts) a unique index's pending change in `added` and `removed`.
    fn record(&mut self, change: &PendingChange, up: bool) {
        for values in &change.old {
            bump(
                &mut self.removed,
                IndexKey::entry(values.clone(), &change.key),
                up,
            );
        }
        for values in &change.new {
            bump(
                &mut self.added,
                IndexKey::entry(values.clone(), &change.key),
                up,
            );
        }
    }

    /// Takes the pending change of `change` out of the queue.
    fn take(&mut self, change: &Change<'_>) -> Option<PendingChange> {
        let old_rev = change.old.map(|v| v.rev.0);
        let new_rev = change.new.map(|v| v.rev.0);
        let at = self
            .changes
            .iter()
            .position(|p| p.key == change.key && p.old_rev == old_rev && p.new_rev == new_rev)?;
        self.changes.remove(at)
    }
}

/// Recovery state: the entries collected so far, and whether duplicates refuse the build.
struct Recovery {
    building: Vec<IndexKey>,
    /// True when the index is being created (a unique violation refuses it); false on open
    /// (the documents were accepted before: a violation is logged, not fatal).
    strict: bool,
}

/// One persistent or ttl index.
pub(crate) struct SortedIndex {
    /// The definition and its parsed paths.
    pub(crate) spec: IndexSpec,
    /// The entries of the committed documents.
    entries: RwLock<Entries>,
    /// The changes of the run in progress.
    pending: Mutex<Pending>,
    /// The build in progress (empty outside recovery).
    recovery: Mutex<Recovery>,
    /// For logs: `<index name>`.
    name: String,
}

impl SortedIndex {
    /// An empty index; `strict` makes a unique violation found while recovering an error.
    pub(crate) fn new(spec: IndexSpec, strict: bool) -> SortedIndex {
        SortedIndex {
            name: spec.definition.name.clone(),
            spec,
            entries: RwLock::new(Entries::default()),
            pending: Mutex::new(Pending::default()),
            recovery: Mutex::new(Recovery {
                building: Vec::new(),
                strict,
            }),
        }
    }

    pub(crate) fn definition(&self) -> &IndexDefinition {
        &self.spec.definition
    }

    /// The entries, for reading.
    pub(crate) fn entries(&self) -> parking_lot::RwLockReadGuard<'_, Entries> {
        self.entries.read()
    }

    /// The entries a version gives this index (none for no version).
    fn entries_of(&self, version: Option<Version<'_>>) -> Result<Vec<Box<[Value]>>> {
        match version {
            Some(version) => self.spec.entries_of_json(version.document),
            None => Ok(Vec::new()),
        }
    }

    /// ArangoDB's 1210: `unique constraint violated - in index <name> of type <type> over
    /// '<fields>'; conflicting key: <key>`.
    fn violation(&self, key: &str) -> ArangoError {
        let definition = self.definition();
        ArangoError::with_message(
            ARANGO_UNIQUE_CONSTRAINT_VIOLATED,
            format!(
                "unique constraint violated - in index {} of type {} over '{}'; conflicting \
                 key: {key}",
                definition.name,
                definition.kind.name(),
                definition.fields.join(", ")
            ),
        )
    }

    /// The key of a document other than `key` that holds `values`, counting pending changes.
    fn holder(
        &self,
        entries: &Entries,
        pending: &Pending,
        key: &str,
        values: &[Value],
    ) -> Option<String> {
        let (low, high) = around(values);
        let committed = entries.with_tuple(values).map(|(entry, _)| entry);
        let added = pending.added.range(low..=high).map(|(entry, _)| entry);
        committed.chain(added).find_map(|entry| {
            if entry.key() == key {
                return None;
            }
            let count =
                |map: &BTreeMap<IndexKey, u32>| i64::from(map.get(entry).copied().unwrap_or(0));
            let net =
                i64::from(entries.count(entry)) + count(&pending.added) - count(&pending.removed);
            (net > 0).then(|| entry.key().to_owned())
        })
    }
}

impl DocumentHook for SortedIndex {
    fn name(&self) -> &str {
        &self.name
    }

    fn check(&self, change: &Change<'_>) -> Result<()> {
        let pending_change = PendingChange {
            key: change.key.to_owned(),
            old_rev: change.old.map(|v| v.rev.0),
            new_rev: change.new.map(|v| v.rev.0),
            old: self.entries_of(change.old)?,
            new: self.entries_of(change.new)?,
        };
        let mut pending = self.pending.lock();
        if self.definition().unique {
            if self.spec.self_conflict(&pending_change.new) {
                return Err(self.violation(change.key));
            }
            let entries = self.entries.read();
            for values in &pending_change.new {
                if let Some(other) = self.holder(&entries, &pending, change.key, values) {
                    return Err(self.violation(&other));
                }
            }
            drop(entries);
            pending.record(&pending_change, true);
        }
        pending.changes.push_back(pending_change);
        Ok(())
    }

    fn applied(&self, change: &Change<'_>) {
        let mut pending = self.pending.lock();
        let done = match pending.take(change) {
            Some(done) => done,
            None => {
                debug_assert!(false, "applied without check: {}", change.key);
                return;
            }
        };
        if self.definition().unique {
            pending.record(&done, false);
        }
        let mut entries = self.entries.write();
        for values in done.old {
            entries.remove(&IndexKey::entry(values, &done.key));
        }
        for values in done.new {
            entries.insert(IndexKey::entry(values, &done.key));
        }
    }

    fn aborted(&self, change: &Change<'_>) {
        let mut pending = self.pending.lock();
        if let Some(done) = pending.take(change) {
            if self.definition().unique {
                pending.record(&done, false);
            }
        }
    }

    fn truncated(&self) {
        let mut pending = self.pending.lock();
        *pending = Pending::default();
        self.entries.write().clear();
    }

    fn recovered(&self, key: &str, version: Version<'_>) -> Result<()> {
        let entries = self.entries_of(Some(version))?;
        let mut recovery = self.recovery.lock();
        for values in entries {
            recovery.building.push(IndexKey::entry(values, key));
        }
        Ok(())
    }

    fn recovery_finished(&self) -> Result<()> {
        let (mut building, strict) = {
            let mut recovery = self.recovery.lock();
            (std::mem::take(&mut recovery.building), recovery.strict)
        };
        building.sort_unstable();
        if self.definition().unique {
            // Adjacent equal tuples: two documents, or one document's equal array elements
            // without `deduplicate`.
            let clash = building.windows(2).find(|w| {
                quince_ops::compare_entries(&w[0].values, &w[1].values) == std::cmp::Ordering::Equal
            });
            if let Some(w) = clash {
                if strict {
                    return Err(self.violation(w[1].key()));
                }
                tracing::warn!(
                    event = "index.unique_violation_on_open",
                    index = %self.name,
                    key = %w[1].key(),
                    "documents share the values of a unique index; the index keeps both"
                );
            }
        }
        let built = Entries::from_sorted(building);
        let mut pending = self.pending.lock();
        *pending = Pending::default();
        *self.entries.write() = built;
        self.recovery.lock().strict = false;
        Ok(())
    }
}
