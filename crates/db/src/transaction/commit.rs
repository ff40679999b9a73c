//! The commit of a stream transaction: every buffered change written through the storage
//! engine's transaction groups, published together.
//!
//! What it is: [`Transaction::commit_buffers`]. The collections are taken in id order (the
//! global lock order): first every hook lock, then every store's writer lock (a storage
//! `Part`); each change is checked against its reservation (the committed version must still
//! be the transaction's base) and by the collection's hooks, then `quince_storage::commit`
//! appends the parts as one transaction and publishes them. The key generators of collections
//! with removals are recorded first, as the write path does.
//!
//! What it is not: a place of decisions: every write was decided when it was made; here it
//! is only applied.
//!
//! Invariants: all or nothing: a refusal by a hook, or a storage failure, writes nothing
//! visible and aborts the transaction (the hooks that accepted a change hear it aborted);
//! the reservations are released only after the writes are published; a commit that must be
//! synced (`waitForSync` of the transaction or of a collection) returns only once durable.

use std::sync::Arc;

use parking_lot::MutexGuard;
use quince_errors::{ArangoError, Result, INTERNAL};
use quince_model::rev::RevisionId;
use quince_storage::{Mutation, Part};

use crate::current::Current;
use crate::hooks::{DocumentHook, OwnedChange};
use crate::write_path::{checked_change, mutation_rev};

use super::buffer::Buffer;
use super::{State, Transaction};

type Hooks<'a> = MutexGuard<'a, Vec<Arc<dyn DocumentHook>>>;

impl Transaction {
    /// Writes the transaction's changes (see the module doc); the buffers are consumed and
    /// their reservations released.
    pub(super) fn commit_buffers(&self, state: &mut State) -> Result<()> {
        let buffers: Vec<Buffer> = std::mem::take(&mut state.buffers).into_values().collect();
        let result = self.apply(&buffers);
        for buffer in &buffers {
            let keys = buffer.order.iter().map(String::as_str);
            buffer.collection.trx_locks.release(self.id, keys);
        }
        result
    }

    fn apply(&self, buffers: &[Buffer]) -> Result<()> {
        let writes: Vec<&Buffer> = buffers
            .iter()
            .filter(|b| {
                b.changes
                    .values()
                    .any(|c| c.base.is_some() || c.new.is_some())
            })
            .collect();
        if writes.is_empty() {
            return Ok(());
        }
        for buffer in &writes {
            if buffer.changes.values().any(|c| c.new.is_none()) {
                buffer.collection.persist_key_generator()?;
            }
        }
        let sync =
            self.options.wait_for_sync || writes.iter().any(|b| b.collection.wait_for_sync());
        let hooks: Vec<Hooks<'_>> = writes.iter().map(|b| b.collection.hooks.lock()).collect();
        // Every part is decided (and checked by the hooks) before anything is written: a
        // refusal drops the parts, which writes nothing.
        let mut parts = Vec::with_capacity(writes.len());
        let mut applied: Vec<Vec<OwnedChange>> = Vec::with_capacity(writes.len());
        for (buffer, own_hooks) in writes.iter().zip(&hooks) {
            let mut part = buffer.collection.store.part(buffer.collection.id());
            let mut accepted = Vec::new();
            let staged = stage(buffer, own_hooks, &mut part, &mut accepted);
            applied.push(accepted);
            if let Err(error) = staged {
                let_go(&hooks, &applied);
                return Err(error);
            }
            parts.push(part);
        }
        // Taken while every part is held: commits touching a store get increasing ids.
        let trx = writes[0].collection.shared.hlc.next().0;
        let tickets = match quince_storage::commit(trx, parts) {
            Ok(tickets) => tickets,
            Err(error) => {
                let_go(&hooks, &applied);
                return Err(error.into());
            }
        };
        let written = writes
            .iter()
            .flat_map(|b| b.changes.values())
            .filter(|c| c.base.is_some() || c.new.is_some())
            .count();
        writes[0]
            .collection
            .shared
            .counters
            .documents_written(written as u64);
        for ((buffer, hooks), changes) in writes.iter().zip(&hooks).zip(&applied) {
            if let Some(rev) = buffer.changes.values().map(|c| c.rev).max() {
                buffer.collection.note_revision(RevisionId(rev));
            }
            for change in changes {
                for hook in hooks.iter() {
                    hook.applied(&change.view());
                }
            }
        }
        drop(hooks);
        if sync {
            for ticket in tickets.into_iter().flatten() {
                ticket.wait()?;
            }
        }
        Ok(())
    }
}

/// Tells every hook that the changes it accepted will not be applied.
fn let_go(hooks: &[Hooks<'_>], accepted: &[Vec<OwnedChange>]) {
    for (hooks, changes) in hooks.iter().zip(accepted) {
        for change in changes {
            for hook in hooks.iter() {
                hook.aborted(&change.view());
            }
        }
    }
}

/// Stages one collection's changes in its part, each checked against its reservation and by
/// the hooks; the changes the hooks accepted are collected in `accepted`.
fn stage(
    buffer: &Buffer,
    hooks: &[Arc<dyn DocumentHook>],
    part: &mut Part<'_>,
    accepted: &mut Vec<OwnedChange>,
) -> Result<()> {
    for key in &buffer.order {
        let change = &buffer.changes[key];
        let mutation = match &change.new {
            Some((rev, value)) => Mutation::Put {
                rev: *rev,
                value: value.clone(),
            },
            None if change.base.is_some() => Mutation::Remove { rev: change.rev },
            None => continue,
        };
        part.mutate(key.as_bytes(), |existing| {
            if existing.as_ref().map(|e| e.rev) != change.base {
                return Err(ArangoError::with_message(
                    INTERNAL,
                    format!("document '{key}' changed under its transaction's reservation"),
                ));
            }
            let old = match (&existing, hooks.is_empty()) {
                (Some(e), false) => Some((RevisionId(e.rev), Current::value(e)?)),
                _ => None,
            };
            debug_assert!(mutation_rev(&mutation).is_some());
            if let Some(change) = checked_change(hooks, key, old, &mutation)? {
                accepted.push(change);
            }
            Ok::<_, ArangoError>((mutation, ()))
        })?;
    }
    Ok(())
}
