//! The one write path of a [`Collection`]: every insert, replace, update and remove (single,
//! multi-document, import batch, batch-request part: they all arrive as a [`WriteRequest`], or,
//! for inserts whose bodies were checked as object text, through `Collection::insert_texts` in
//! `insert_text.rs`), and every truncate, passes through [`Collection::write`] (or
//! `insert_texts`, which shares its steps from preparing on: `write_prepared`) or
//! [`Collection::truncate`].
//! (A stream transaction decides its writes with the same decisions, `decide_op`, and commits
//! them through the storage engine's transaction groups: `transaction/commit.rs`.)
//!
//! What it is: three steps per request. (1) The items are parsed (`ops::request`) and
//! prepared without any lock: keys accepted or generated in input order, edge ends checked.
//! (2) The prepared items are decided and appended under the collection's hook lock and ONE
//! acquisition of the store's writer lock: a lone item with `Store::mutate_deferred` (one
//! record), several as one storage `Part` committed as one transaction group
//! (`quince_storage::commit`). Each decision sees the current version (including the earlier
//! items of the request), a key a running stream transaction reserved is refused (1200), and
//! the hooks' `check` runs inside it, so a refused change appends nothing; the collection's
//! computed values and schema (`WriteRules`) run inside it too, on the new version, so a
//! schema violation (1620) also appends nothing and a moderate schema sees the version it
//! replaces. (3) Each change is
//! reported to the hooks as applied (or aborted when its append failed), the collection's
//! revision moves, and one durability handle covers the request.
//!
//! What it is not: all-or-nothing for the items' decisions. Items are independent: one that
//! fails does not stop or undo the others (as in ArangoDB). But the items that succeed are
//! written as one group, so a crash keeps all of them or none.
//!
//! Invariants: one result per item, in input order; a durability handle exactly when the
//! effective `waitForSync` is true and a record was written, and it is the newest write's, so
//! when it resolves every write of the request is durable; the writer lock is held for the
//! whole request (the request's size, which the body bound limits, bounds the time); no fsync
//! happens here (synced writes are awaited by the caller after every lock is released); hooks
//! see every change exactly once, in append order.

use std::sync::Arc;

use quince_errors::{ArangoError, Result};
use quince_model::key::is_valid_key;
use quince_model::object_text::ObjectText;
use quince_model::rev::RevisionId;
use quince_storage::{Existing, Mutation};
use serde_json::{Map, Value};

use quince_ops::{
    parse_items, DocumentOp, Durability, WriteKind, WriteOptions, WriteOutcome, WriteRequest,
    WriteResults,
};

use crate::collection::Collection;
use crate::current::Current;
use crate::documents::{durability_of, not_found, Overwrite};
use crate::hooks::{DocumentHook, OwnedChange, Version};

/// An item that passed the checks made before the store is asked.
pub(crate) struct Prepared {
    /// Its position in the request.
    pub(crate) item: usize,
    /// The document's key (accepted or generated for an insert).
    pub(crate) key: String,
    pub(crate) op: PreparedOp,
}

pub(crate) enum PreparedOp {
    Insert(Map<String, Value>),
    /// An insert whose body is checked object text (`insert_text.rs`).
    InsertText(ObjectText),
    Modify {
        body: Map<String, Value>,
        how: Overwrite,
        expected_rev: Option<String>,
    },
    Remove {
        expected_rev: Option<String>,
    },
}

impl Collection {
    /// Writes the items of `request`, each on its own (see the module doc).
    pub fn write(&self, request: WriteRequest) -> WriteResults {
        let is_removal = request.kind == WriteKind::Remove;
        // Only a removal's selectors name the collection (`"coll/key"`).
        let own_name = if is_removal {
            self.name()
        } else {
            String::new()
        };
        let (ops, options) = parse_items(request, &own_name);
        let sync = self.effective_sync(&options);
        let count = ops.len();
        if is_removal && ops.iter().any(Result::is_ok) {
            // A removal first records the key generator's `lastValue`, so a generated key
            // cannot come back after a crash even when its document is gone.
            if let Err(error) = self.persist_key_generator() {
                let items = ops
                    .into_iter()
                    .map(|op| op.and(Err(error.clone())))
                    .collect();
                return WriteResults {
                    items,
                    durability: None,
                    synced: sync,
                };
            }
        }
        let prepared = ops.into_iter().map(|op| op.and_then(|op| self.prepare(op)));
        self.write_prepared(prepared, count, &options, sync)
    }

    /// Writes prepared items (`count` of them, each prepared in input order as the iterator is
    /// drained): a lone item as one record, several as one storage group.
    pub(crate) fn write_prepared(
        &self,
        items: impl Iterator<Item = Result<(String, PreparedOp)>>,
        count: usize,
        options: &WriteOptions,
        sync: bool,
    ) -> WriteResults {
        let mut items = items;
        if count == 1 {
            // The single-document forms: no bookkeeping of positions.
            let item = items.next().expect("one item");
            let (outcome, durability) = match item {
                Ok((key, op)) => {
                    let prepared = Prepared { item: 0, key, op };
                    let run = self.write_run(std::slice::from_ref(&prepared), options, sync);
                    let outcome = run.outcomes.into_iter().next().expect("one outcome");
                    (outcome, run.durability)
                }
                Err(err) => (Err(err), None),
            };
            return WriteResults {
                items: vec![outcome],
                durability,
                synced: sync,
            };
        }
        // Many items: each is prepared (keys generated in input order), then every prepared
        // item is decided and the successful ones are written as ONE storage group.
        let mut results: Vec<Option<Result<WriteOutcome>>> = Vec::with_capacity(count);
        results.resize_with(count, || None);
        let mut prepared: Vec<Prepared> = Vec::with_capacity(count);
        for (item, prepared_item) in items.enumerate() {
            match prepared_item {
                Ok((key, op)) => prepared.push(Prepared { item, key, op }),
                Err(err) => results[item] = Some(Err(err)),
            }
        }
        let mut durability = None;
        if !prepared.is_empty() {
            let run = self.write_run(&prepared, options, sync);
            for (p, outcome) in prepared.iter().zip(run.outcomes) {
                results[p.item] = Some(outcome);
            }
            durability = run.durability;
        }
        WriteResults {
            items: results
                .into_iter()
                .map(|r| r.expect("every item has an outcome"))
                .collect(),
            durability,
            synced: sync,
        }
    }

    /// The checks of an item made before the store is asked: an insert's key (given and
    /// valid, or generated) and edge ends; a named key that cannot exist is not found.
    pub(crate) fn prepare(&self, op: DocumentOp) -> Result<(String, PreparedOp)> {
        match op {
            DocumentOp::Insert(body) => {
                let key = self.insert_key(&body)?;
                self.insert_edge(&body)?;
                Ok((key, PreparedOp::Insert(body)))
            }
            DocumentOp::Modify {
                key,
                body,
                merge,
                expected_rev,
            } => {
                if !is_valid_key(&key) {
                    return Err(not_found());
                }
                let how = if merge {
                    Overwrite::Update
                } else {
                    Overwrite::Replace
                };
                Ok((
                    key,
                    PreparedOp::Modify {
                        body,
                        how,
                        expected_rev,
                    },
                ))
            }
            DocumentOp::Remove { key, expected_rev } => {
                if !is_valid_key(&key) {
                    return Err(not_found());
                }
                Ok((key, PreparedOp::Remove { expected_rev }))
            }
        }
    }

    /// Decides and appends one run of prepared items under one acquisition of the writer lock,
    /// then tells the hooks what became of each change; the hook lock is held throughout.
    fn write_run(&self, prepared: &[Prepared], options: &WriteOptions, sync: bool) -> Run {
        let hooks = self.hooks.lock();
        let hooks: &[Arc<dyn DocumentHook>] = &hooks;
        let mut changes: Vec<Option<OwnedChange>> = Vec::new();
        if !hooks.is_empty() {
            changes.resize_with(prepared.len(), || None);
        }
        let mut decide = |i: usize, existing: Option<Existing<'_>>| {
            let p = &prepared[i];
            let decided = self.decide(p, existing, hooks, options, sync)?;
            if let Some(change) = decided.change {
                changes[i] = Some(change);
            }
            Ok::<_, ArangoError>((decided.mutation, decided.outcome))
        };
        let (outcomes, ticket) = if let [only] = prepared {
            let key = only.key.as_bytes();
            match self
                .store
                .mutate_deferred(key, |existing| decide(0, existing))
            {
                Ok((outcome, ticket)) => (vec![Ok(outcome)], ticket),
                Err(err) => (vec![Err(err)], None),
            }
        } else {
            // One part, one group: a crash keeps every successful item or none of them.
            let mut part = self.store.part(self.id());
            let mut outcomes: Vec<Result<WriteOutcome>> = prepared
                .iter()
                .enumerate()
                .map(|(i, p)| part.mutate(p.key.as_bytes(), |existing| decide(i, existing)))
                .collect();
            match quince_storage::commit(self.shared.hlc.next().0, vec![part]) {
                Ok(mut tickets) => (outcomes, tickets.pop().flatten()),
                Err(err) => {
                    // Nothing was published: every item that was to be written failed.
                    let err = ArangoError::from(err);
                    for outcome in &mut outcomes {
                        if outcome.is_ok() {
                            *outcome = Err(err.clone());
                        }
                    }
                    (outcomes, None)
                }
            }
        };
        let written = outcomes.iter().filter(|o| o.is_ok()).count();
        self.shared.counters.documents_written(written as u64);
        for (change, outcome) in changes.iter().zip(&outcomes) {
            let Some(change) = change else { continue };
            for hook in hooks {
                match outcome {
                    Ok(_) => hook.applied(&change.view()),
                    Err(_) => hook.aborted(&change.view()),
                }
            }
        }
        Run {
            outcomes,
            durability: durability_of(sync, ticket),
        }
    }

    /// One item's decision inside the store's mutate closure: what to write, what to answer,
    /// and (when hooks exist) the change, which every hook has checked. A key a running
    /// transaction reserved, or a collection a transaction holds exclusively, refuses it.
    fn decide(
        &self,
        p: &Prepared,
        existing: Option<Existing<'_>>,
        hooks: &[Arc<dyn DocumentHook>],
        options: &WriteOptions,
        sync: bool,
    ) -> Result<Decided> {
        self.trx_locks.check_plain_write(&p.key)?;
        let old = match (&existing, hooks.is_empty()) {
            (Some(existing), false) => Some((RevisionId(existing.rev), Current::value(existing)?)),
            _ => None,
        };
        let key = p.key.as_str();
        let current = existing.as_ref().map(|e| e as &dyn Current);
        let (mutation, outcome) = self.decide_op(p, current, options, sync)?;
        let change = checked_change(hooks, key, old, &mutation)?;
        if let Some(rev) = mutation_rev(&mutation) {
            self.note_revision(rev);
        }
        Ok(Decided {
            mutation,
            outcome,
            change,
        })
    }

    /// What one prepared item writes over `current` (the store's version, or a transaction's
    /// own), and what it answers.
    pub(crate) fn decide_op(
        &self,
        p: &Prepared,
        current: Option<&dyn Current>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let key = p.key.as_str();
        match &p.op {
            PreparedOp::Insert(body) => {
                // Bad edge ends refuse the insert whatever it finds (an `ignore` included).
                self.insert_edge(body)?;
                self.decide_insert(key, body, current, options, sync)
            }
            PreparedOp::InsertText(body) => {
                // As above: bad edge ends refuse the insert whatever it finds.
                let edge = self.text_edge_ends(body)?;
                self.decide_insert_text(key, body, edge, current, options, sync)
            }
            PreparedOp::Modify {
                body,
                how,
                expected_rev,
            } => {
                let current = current.ok_or_else(not_found)?;
                let expected = expected_rev.as_deref();
                self.write_over(key, current, body, *how, expected, options, sync)
            }
            PreparedOp::Remove { expected_rev } => {
                let current = current.ok_or_else(not_found)?;
                self.decide_remove(key, current, expected_rev.as_deref(), options, sync)
            }
        }
    }

    /// Removes every document: through the hook lock, so hooks see the truncate between two
    /// whole write requests; durable on return when `wait_for_sync` (or the collection's)
    /// says so, with the fsync made after every lock is released.
    pub fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        {
            let hooks = self.hooks.lock();
            self.persist_key_generator()?;
            let rev = self.shared.hlc.next();
            self.store.truncate(rev.0, false)?;
            self.shared.counters.truncated();
            self.note_revision(rev);
            for hook in hooks.iter() {
                hook.truncated();
            }
        }
        if wait_for_sync || self.wait_for_sync() {
            self.store.sync()?;
        }
        Ok(())
    }

    /// Adds the collection's edge index (an edge collection's), its secondary indexes and the
    /// hooks the catalog's [`crate::HookFactory`] makes for this collection of `database`,
    /// all recovered from the live documents in one scan (on open and on create).
    pub(crate) fn attach_hooks(&self, database: &str) -> Result<()> {
        let mut hooks: Vec<Arc<dyn DocumentHook>> = Vec::new();
        if let Some(edge) = &self.edge_index {
            hooks.push(Arc::clone(edge) as Arc<dyn DocumentHook>);
        }
        hooks.extend(
            self.secondary_indexes()
                .into_iter()
                .map(|index| index as Arc<dyn DocumentHook>),
        );
        if let Some(factory) = self.shared.hooks.clone() {
            hooks.extend(factory.hooks_for(database, &self.properties()));
        }
        self.add_hooks(hooks)
    }

    /// Adds derived state: hands every live document to `hook` (the recovery hook), then
    /// reports every later change to it. Writers of the collection wait meanwhile.
    pub fn add_hook(&self, hook: Arc<dyn DocumentHook>) -> Result<()> {
        self.add_hooks(vec![hook])
    }

    /// [`Collection::add_hook`] for several hooks, with one scan of the documents.
    pub(crate) fn add_hooks(&self, new: Vec<Arc<dyn DocumentHook>>) -> Result<()> {
        let mut hooks = self.hooks.lock();
        self.recover_hooks(&new)?;
        hooks.extend(new);
        Ok(())
    }

    /// Hands every live document to each of `hooks`, then tells them recovery finished. The
    /// caller holds the hook lock.
    pub(crate) fn recover_hooks(&self, hooks: &[Arc<dyn DocumentHook>]) -> Result<()> {
        if hooks.is_empty() {
            return Ok(());
        }
        let mut failure = None;
        self.store.scan(&mut |key, rev, document| {
            let Ok(key) = std::str::from_utf8(key) else {
                failure = Some(ArangoError::with_message(
                    quince_errors::ARANGO_CORRUPTED_DATAFILE,
                    "a stored key is not UTF-8",
                ));
                return false;
            };
            let version = Version {
                rev: RevisionId(rev),
                document,
            };
            for hook in hooks {
                if let Err(error) = hook.recovered(key, version) {
                    failure = Some(error);
                    return false;
                }
            }
            true
        })?;
        if let Some(error) = failure {
            return Err(error);
        }
        for hook in hooks {
            hook.recovery_finished()?;
        }
        Ok(())
    }
}

/// The revision a mutation writes (none for `Keep`).
pub(crate) fn mutation_rev(mutation: &Mutation) -> Option<RevisionId> {
    match mutation {
        Mutation::Put { rev, .. } | Mutation::Remove { rev } => Some(RevisionId(*rev)),
        Mutation::Keep => None,
    }
}

/// The change `mutation` makes to `key` (whose version was `old`), checked by every hook; none
/// when there are no hooks or nothing is written. A refusal lets the hooks that accepted it go.
pub(crate) fn checked_change(
    hooks: &[Arc<dyn DocumentHook>],
    key: &str,
    old: Option<(RevisionId, Vec<u8>)>,
    mutation: &Mutation,
) -> Result<Option<OwnedChange>> {
    if hooks.is_empty() {
        return Ok(None);
    }
    let new = match mutation {
        Mutation::Put { rev, value } => Some((RevisionId(*rev), value.clone())),
        Mutation::Remove { .. } => None,
        Mutation::Keep => return Ok(None),
    };
    let owned = OwnedChange {
        key: key.to_owned(),
        old,
        new,
    };
    for (i, hook) in hooks.iter().enumerate() {
        if let Err(refusal) = hook.check(&owned.view()) {
            // The hooks that accepted it hold it as pending: let them go.
            for accepted in &hooks[..i] {
                accepted.aborted(&owned.view());
            }
            return Err(refusal);
        }
    }
    Ok(Some(owned))
}

/// What one run wrote: each item's outcome and the newest synced write's durability.
struct Run {
    outcomes: Vec<Result<WriteOutcome>>,
    durability: Option<Durability>,
}

/// One item's decision.
struct Decided {
    mutation: Mutation,
    outcome: WriteOutcome,
    change: Option<OwnedChange>,
}
