//! The follower's side of shard replication: [`Collection::apply_replicated`] stores what a
//! shard's leader shipped ([`ReplicatedOp`]) exactly as it was written there.
//!
//! What it is: a second, much smaller write path beside `write_path.rs`, for changes that were
//! decided elsewhere: a document is stored with the `_key` and `_rev` it carries (replacing any
//! version of that key), a removal removes the key if present, a truncate empties the
//! collection. The hooks (edge index, secondary indexes) check and see every change as they do
//! for client writes, and the catalog's revision clock is moved past every stored revision, so
//! a follower that becomes leader never hands out a revision below one it holds.
//!
//! What it is not: a client write: no key generation, precondition, schema or computed value
//! (the leader applied them), no per-item results.
//!
//! Invariants: the operations are applied in order; a run of puts and removals between two
//! truncates is one storage group (a crash keeps all of it or none), and the first operation a
//! hook refuses (a unique constraint) stops the batch with its error, the operations before it
//! applied; durable on return when asked (or the collection's `waitForSync` says so).

use std::sync::Arc;

use quince_errors::{ArangoError, Result};
use quince_model::document::{edge_ends, encode_document};
use quince_model::rev::RevisionId;
use quince_ops::{CollectionType, ReplicatedOp};
use quince_storage::Mutation;

use crate::collection::Collection;
use crate::current::Current;
use crate::hooks::{DocumentHook, OwnedChange};
use crate::write_path::checked_change;

impl Collection {
    /// Applies a leader's changes (see the module documentation).
    pub fn apply_replicated(&self, ops: &[ReplicatedOp], wait_for_sync: bool) -> Result<()> {
        self.shared.check_open()?;
        let mut wrote = false;
        for run in ops.split_inclusive(|op| matches!(op, ReplicatedOp::Truncate)) {
            let (changes, truncate) = match run.split_last() {
                Some((ReplicatedOp::Truncate, changes)) => (changes, true),
                _ => (run, false),
            };
            if !changes.is_empty() {
                self.apply_run(changes)?;
                wrote = true;
            }
            if truncate {
                self.truncate(false)?;
                wrote = true;
            }
        }
        if wrote && (wait_for_sync || self.wait_for_sync()) {
            self.store.sync()?;
        }
        Ok(())
    }

    /// Puts and removals as one storage group, under the hook lock.
    fn apply_run(&self, ops: &[ReplicatedOp]) -> Result<()> {
        let hooks = self.hooks.lock();
        let hooks: &[Arc<dyn DocumentHook>] = &hooks;
        let edge = self.kind() == CollectionType::Edge;
        let mut changes: Vec<OwnedChange> = Vec::new();
        let mut part = self.store.part(self.id());
        let mut failure = None;
        for op in ops {
            let (key, new) = match op {
                ReplicatedOp::Put(document) => {
                    let (key, rev) = match ReplicatedOp::put_parts(document) {
                        Ok(parts) => parts,
                        Err(error) => {
                            failure = Some(error);
                            break;
                        }
                    };
                    let ends = if edge {
                        match edge_ends(document) {
                            Ok(ends) => Some(ends),
                            Err(error) => {
                                failure = Some(error);
                                break;
                            }
                        }
                    } else {
                        None
                    };
                    (key, Some((rev, encode_document(key, rev, ends, document))))
                }
                ReplicatedOp::Remove(key) => (key.as_str(), None),
                ReplicatedOp::Truncate => unreachable!("runs end before a truncate"),
            };
            let outcome = part.mutate(key.as_bytes(), |existing| {
                let mutation = match (new.clone(), &existing) {
                    (Some((rev, value)), _) => {
                        self.shared.hlc.observe(rev);
                        Mutation::Put { rev: rev.0, value }
                    }
                    (None, Some(_)) => Mutation::Remove {
                        rev: self.shared.hlc.next().0,
                    },
                    (None, None) => Mutation::Keep,
                };
                let old = match (&existing, hooks.is_empty()) {
                    (Some(existing), false) => {
                        Some((RevisionId(existing.rev), Current::value(existing)?))
                    }
                    _ => None,
                };
                let change = checked_change(hooks, key, old, &mutation)?;
                if let Mutation::Put { rev, .. } | Mutation::Remove { rev } = &mutation {
                    self.note_revision(RevisionId(*rev));
                }
                Ok::<_, ArangoError>((mutation, change))
            });
            match outcome {
                Ok(change) => changes.extend(change),
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        let committed = if part.is_empty() {
            Ok(())
        } else {
            quince_storage::commit(self.shared.hlc.next().0, vec![part])
                .map(|_| ())
                .map_err(ArangoError::from)
        };
        for change in &changes {
            for hook in hooks {
                match committed {
                    Ok(()) => hook.applied(&change.view()),
                    Err(_) => hook.aborted(&change.view()),
                }
            }
        }
        committed?;
        self.shared.counters.documents_written(changes.len() as u64);
        match failure {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}
