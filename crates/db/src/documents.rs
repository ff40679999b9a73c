//! The document operations of a [`Collection`]: read, insert, replace, update and remove, with
//! every option of [`WriteOptions`].
//!
//! What it is: the decisions ArangoDB makes per document (key generation and validation,
//! `overwriteMode`, `_rev` and `If-Match` preconditions, edge ends, merges, `versionAttribute`,
//! `returnNew`/`returnOld`), taken inside the store's `mutate` closure so that the read of the
//! current version and the write of the next one are one step.
//!
//! What it is not: multi-document handling (the api loops over these) or HTTP statuses beyond
//! the ones ArangoDB attaches to these errors (412 for a failed revision precondition).
//!
//! Each write comes in two forms: the blocking one (`insert`, ...) returns once the write is
//! durable when the effective `waitForSync` asks for it; the deferred one (`insert_deferred`,
//! ...) returns as soon as the write is in the journal, with a [`Durability`] handle to learn
//! when it is durable without blocking a thread.
//!
//! Invariants: every write gets a fresh revision from the catalog's clock, taken while the
//! store holds writers off, so revisions of one collection grow in write order; a failed
//! precondition, a missing document or a bad edge writes nothing; a deferred write returns a
//! `Durability` exactly when the effective `waitForSync` is true and a record was written.

use quince_errors::{
    ArangoError, Result, ARANGO_CONFLICT, ARANGO_DOCUMENT_KEY_BAD, ARANGO_DOCUMENT_NOT_FOUND,
    ARANGO_DOCUMENT_TYPE_INVALID, ARANGO_UNIQUE_CONSTRAINT_VIOLATED,
};
use quince_model::document::{
    edge_ends, encode_document, render_document, render_value, stored_object, EdgeEnds,
};
use quince_model::key::is_valid_key;
use quince_model::merge::{merge_patch, version_allows_write, MergeOptions};
use quince_model::rev::RevisionId;
use quince_storage::{Existing, Mutation, WriteTicket};
use serde_json::{Map, Value};

use crate::collection::{Collection, CollectionType, StoredDocument};
use crate::durability::Durability;
use crate::options::{OverwriteMode, WriteOptions, WriteOutcome};

/// How a write over an existing version builds the new one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Overwrite {
    /// The body is the new document.
    Replace,
    /// The body is merged into the stored document.
    Update,
}

fn not_found() -> ArangoError {
    ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND)
}

fn not_an_object() -> ArangoError {
    ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID)
}

/// True when `expected` (a `_rev` text) names revision `current`. Text that is not a revision
/// names none, so it never matches (ArangoDB treats it as an impossible revision).
fn rev_matches(expected: &str, current: RevisionId) -> bool {
    RevisionId::decode(expected) == Some(current)
}

/// A write's outcome and, when it must be synced, its pending durability.
pub type Deferred = (WriteOutcome, Option<Durability>);

/// Blocks until a deferred write is durable, then hands its outcome back.
fn settle((outcome, durability): Deferred) -> Result<WriteOutcome> {
    if let Some(durability) = durability {
        durability.wait()?;
    }
    Ok(outcome)
}

/// The durability to report for a write: only when it must be synced.
pub(crate) fn durability_of(sync: bool, ticket: Option<WriteTicket>) -> Option<Durability> {
    ticket.filter(|_| sync).map(Durability::new)
}

impl Collection {
    /// `waitForSync` of one write: the request's OR the collection's.
    pub(crate) fn effective_sync(&self, options: &WriteOptions) -> bool {
        options.wait_for_sync || self.wait_for_sync()
    }

    /// The JSON prefix of this collection's `_id`s.
    fn current_id_prefix(&self) -> String {
        self.meta.read().id_prefix.clone()
    }

    fn outcome(&self, key: &str, rev: RevisionId, synced: bool) -> WriteOutcome {
        WriteOutcome {
            id: format!("{}/{key}", self.meta.read().name),
            key: key.to_owned(),
            rev: rev.encode(),
            old_rev: None,
            new: None,
            old: None,
            synced,
        }
    }

    /// The 412 of a failed revision precondition, naming the current version.
    fn rev_conflict(&self, key: &str, current: RevisionId) -> ArangoError {
        ArangoError::with_message(ARANGO_CONFLICT, "conflict, _rev values do not match")
            .with_status(412)
            .with_extra("_id", format!("{}/{key}", self.meta.read().name))
            .with_extra("_key", key)
            .with_extra("_rev", current.encode())
    }

    /// Checks `If-Match` (always) and the selector's or body's `_rev` (when given: the caller
    /// passes it only when `ignoreRevs` is false). An empty `_rev` is no precondition.
    fn check_preconditions(
        &self,
        key: &str,
        current: RevisionId,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<()> {
        let expected = options.if_match.as_deref().into_iter().chain(expected_rev);
        for expected in expected {
            if !expected.is_empty() && !rev_matches(expected, current) {
                return Err(self.rev_conflict(key, current));
            }
        }
        Ok(())
    }

    /// Reads a document. 1202 if missing, 1221 for a syntactically bad key... (ArangoDB answers
    /// 404/1202 for any key it cannot find, including illegal ones).
    pub fn read(&self, key: &str) -> Result<StoredDocument> {
        if !is_valid_key(key) {
            return Err(not_found());
        }
        let record = self.store.get(key.as_bytes())?.ok_or_else(not_found)?;
        let json = render_document(&record.value, &self.meta.read().id_prefix);
        Ok(StoredDocument {
            rev: RevisionId(record.rev).encode(),
            json,
        })
    }

    /// The current `_rev` of a document without reading it (for HEAD and If-None-Match).
    pub fn read_rev(&self, key: &str) -> Result<String> {
        if !is_valid_key(key) {
            return Err(not_found());
        }
        self.store
            .rev_of(key.as_bytes())
            .map(|rev| RevisionId(rev).encode())
            .ok_or_else(not_found)
    }

    /// Inserts one document (an object; 1227 otherwise); durable on return when synced.
    pub fn insert(&self, document: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        settle(self.insert_deferred(document, options)?)
    }

    /// [`Collection::insert`] without waiting for the fsync (see [`Durability`]).
    pub fn insert_deferred(&self, document: Value, options: &WriteOptions) -> Result<Deferred> {
        let Value::Object(body) = document else {
            return Err(not_an_object());
        };
        let key = self.insert_key(&body)?;
        let edge = self.insert_edge(&body)?;
        let sync = self.effective_sync(options);
        let (outcome, ticket) = self.store.mutate_deferred(key.as_bytes(), |existing| {
            self.decide_insert(&key, &body, edge, existing, options, sync)
        })?;
        self.note_write(&outcome);
        Ok((outcome, durability_of(sync, ticket)))
    }

    /// The key of a document to insert: its `_key` (checked against the key generator's rules)
    /// or a generated one.
    pub(crate) fn insert_key(&self, body: &Map<String, Value>) -> Result<String> {
        match body.get("_key") {
            None => self.keygen.generate(),
            Some(Value::String(key)) => {
                self.keygen.accept_user_key(key)?;
                Ok(key.clone())
            }
            Some(_) => Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD)),
        }
    }

    /// The edge ends of a document to insert into an edge collection (checked), else `None`.
    pub(crate) fn insert_edge<'b>(
        &self,
        body: &'b Map<String, Value>,
    ) -> Result<Option<EdgeEnds<'b>>> {
        match self.kind() {
            CollectionType::Edge => Ok(Some(edge_ends(body)?)),
            CollectionType::Document => Ok(None),
        }
    }

    /// What an insert of `body` as `key` writes over `existing` (runs inside the store's
    /// mutate closure): a new document, or by `overwriteMode` a conflict, nothing, or a
    /// replace or update of the existing one.
    pub(crate) fn decide_insert(
        &self,
        key: &str,
        body: &Map<String, Value>,
        edge: Option<EdgeEnds<'_>>,
        existing: Option<Existing<'_>>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let Some(existing) = existing else {
            let rev = self.shared.hlc.next();
            let value = encode_document(key, rev, edge, body);
            let mut outcome = self.outcome(key, rev, sync);
            if options.return_new {
                outcome.new = Some(render_value(&value, &self.current_id_prefix()));
            }
            return Ok((Mutation::Put { rev: rev.0, value }, outcome));
        };
        match options.overwrite_mode {
            OverwriteMode::Conflict => Err(ArangoError::new(ARANGO_UNIQUE_CONSTRAINT_VIOLATED)),
            OverwriteMode::Ignore => {
                let outcome = self.outcome(key, RevisionId(existing.rev), sync);
                Ok((Mutation::Keep, outcome))
            }
            OverwriteMode::Replace => {
                self.write_over(key, existing, body, Overwrite::Replace, None, options, sync)
            }
            OverwriteMode::Update => {
                self.write_over(key, existing, body, Overwrite::Update, None, options, sync)
            }
        }
    }

    /// Replaces the document `key` with `document`; durable on return when synced.
    pub fn replace(
        &self,
        key: &str,
        document: Value,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        settle(self.modify(key, document, Overwrite::Replace, options)?)
    }

    /// [`Collection::replace`] without waiting for the fsync (see [`Durability`]).
    pub fn replace_deferred(
        &self,
        key: &str,
        document: Value,
        options: &WriteOptions,
    ) -> Result<Deferred> {
        self.modify(key, document, Overwrite::Replace, options)
    }

    /// Updates (merges into) the document `key`; durable on return when synced.
    pub fn update(&self, key: &str, patch: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        settle(self.modify(key, patch, Overwrite::Update, options)?)
    }

    /// [`Collection::update`] without waiting for the fsync (see [`Durability`]).
    pub fn update_deferred(
        &self,
        key: &str,
        patch: Value,
        options: &WriteOptions,
    ) -> Result<Deferred> {
        self.modify(key, patch, Overwrite::Update, options)
    }

    fn modify(
        &self,
        key: &str,
        document: Value,
        how: Overwrite,
        options: &WriteOptions,
    ) -> Result<Deferred> {
        let Value::Object(body) = document else {
            return Err(not_an_object());
        };
        if !is_valid_key(key) {
            return Err(not_found());
        }
        let body_rev = match body.get("_rev") {
            Some(Value::String(rev)) if !options.ignore_revs => Some(rev.as_str()),
            _ => None,
        };
        let sync = self.effective_sync(options);
        let (outcome, ticket) = self.store.mutate_deferred(key.as_bytes(), |existing| {
            let existing = existing.ok_or_else(not_found)?;
            self.write_over(key, existing, &body, how, body_rev, options, sync)
        })?;
        self.note_write(&outcome);
        Ok((outcome, durability_of(sync, ticket)))
    }

    /// Writes a new version over `existing`: checks preconditions, builds the new document,
    /// applies `versionAttribute`, checks edge ends, and fills in `_oldRev`, `new` and `old`.
    #[allow(clippy::too_many_arguments)]
    fn write_over(
        &self,
        key: &str,
        existing: Existing<'_>,
        body: &Map<String, Value>,
        how: Overwrite,
        expected_rev: Option<&str>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let current = RevisionId(existing.rev);
        self.check_preconditions(key, current, expected_rev, options)?;
        let needs_old = how == Overwrite::Update || options.version_attribute.is_some();
        let old_bytes = if needs_old || options.return_old {
            Some(existing.value()?)
        } else {
            None
        };
        let old_object = match (&old_bytes, needs_old) {
            (Some(bytes), true) => Some(stored_object(bytes)),
            _ => None,
        };
        let prefix = if options.return_new || options.return_old {
            self.current_id_prefix()
        } else {
            String::new()
        };
        let old_value = match (&old_bytes, options.return_old) {
            (Some(bytes), true) => Some(render_value(bytes, &prefix)),
            _ => None,
        };

        if let (Some(attribute), Some(stored)) = (&options.version_attribute, &old_object) {
            if !version_allows_write(stored, body, attribute) {
                // Skipped silently: the current version stays, and the reply says so with
                // `_rev` equal to `_oldRev`.
                let mut outcome = self.outcome(key, current, sync);
                outcome.old_rev = Some(current.encode());
                if options.return_new {
                    let bytes = old_bytes.as_deref().expect("read above");
                    outcome.new = Some(render_value(bytes, &prefix));
                }
                outcome.old = old_value;
                return Ok((Mutation::Keep, outcome));
            }
        }

        let merged;
        let new_body = match how {
            Overwrite::Replace => body,
            Overwrite::Update => {
                let stored = old_object.as_ref().expect("read above");
                let merge = MergeOptions {
                    keep_null: options.keep_null,
                    merge_objects: options.merge_objects,
                };
                merged = merge_patch(stored, body, merge);
                &merged
            }
        };
        let edge: Option<EdgeEnds<'_>> = match self.kind() {
            CollectionType::Edge => Some(edge_ends(new_body)?),
            CollectionType::Document => None,
        };
        let rev = self.shared.hlc.next();
        let value = encode_document(key, rev, edge, new_body);
        let mut outcome = self.outcome(key, rev, sync);
        outcome.old_rev = Some(current.encode());
        if options.return_new {
            outcome.new = Some(render_value(&value, &prefix));
        }
        outcome.old = old_value;
        Ok((Mutation::Put { rev: rev.0, value }, outcome))
    }

    /// Removes the document `key`; `expected_rev` is a `_rev` precondition from the selector
    /// (checked when `ignore_revs` is false) — `if_match` in the options is always checked.
    /// Durable on return when synced.
    pub fn remove(
        &self,
        key: &str,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        settle(self.remove_deferred(key, expected_rev, options)?)
    }

    /// [`Collection::remove`] without waiting for the fsync (see [`Durability`]).
    pub fn remove_deferred(
        &self,
        key: &str,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<Deferred> {
        if !is_valid_key(key) {
            return Err(not_found());
        }
        let expected_rev = expected_rev.filter(|_| !options.ignore_revs);
        let sync = self.effective_sync(options);
        self.persist_key_generator()?;
        let mut removal_rev = RevisionId(0);
        let (outcome, ticket) = self.store.mutate_deferred(key.as_bytes(), |existing| {
            let existing = existing.ok_or_else(not_found)?;
            let current = RevisionId(existing.rev);
            self.check_preconditions(key, current, expected_rev, options)?;
            let mut outcome = self.outcome(key, current, sync);
            if options.return_old {
                outcome.old = Some(render_value(&existing.value()?, &self.current_id_prefix()));
            }
            removal_rev = self.shared.hlc.next();
            Ok::<_, ArangoError>((Mutation::Remove { rev: removal_rev.0 }, outcome))
        })?;
        self.note_revision(removal_rev);
        Ok((outcome, durability_of(sync, ticket)))
    }

    /// Moves the collection's revision after a write that may have written one.
    pub(crate) fn note_write(&self, outcome: &WriteOutcome) {
        if let Some(rev) = RevisionId::decode(&outcome.rev) {
            self.note_revision(rev);
        }
    }
}
