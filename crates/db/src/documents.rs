//! The document decisions of a [`Collection`]: read, and what insert, replace, update and
//! remove write, with every option of [`WriteOptions`]; plus the one-document convenience forms
//! over the write path.
//!
//! What it is: the decisions ArangoDB makes per document (key generation and validation,
//! `overwriteMode`, `_rev` and `If-Match` preconditions, edge ends, merges, `versionAttribute`,
//! computed values and the schema, `returnNew`/`returnOld`), called by the write path (`write_path.rs`) inside the store's
//! mutate closure so that the read of the current version and the write of the next one are
//! one step.
//!
//! What it is not: the write path. Every write, whatever its form, goes through
//! [`Collection::write`]; `insert`, `replace_deferred` and friends here only build a one-item
//! request for it (for tests and internal callers such as the `_users` store).
//!
//! Invariants: every write gets a fresh revision from the catalog's clock, taken while the
//! store holds writers off, so revisions of one collection grow in write order; a failed
//! precondition, a missing document or a bad edge writes nothing; a deferred write returns a
//! `Durability` exactly when the effective `waitForSync` is true and a record was written.

use std::borrow::Cow;
use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, ARANGO_DOCUMENT_KEY_BAD, ARANGO_DOCUMENT_NOT_FOUND,
    ARANGO_DOCUMENT_TYPE_INVALID, ARANGO_UNIQUE_CONSTRAINT_VIOLATED,
};
use quince_model::document::{
    edge_ends, encode_document, render_document, render_value, stored_object, EdgeEnds,
};
use quince_model::key::is_valid_key;
use quince_model::merge::{merge_patch, version_allows_write, MergeOptions};
use quince_model::rev::RevisionId;
use quince_storage::{Mutation, WriteTicket};
use serde_json::{Map, Value};

use quince_ops::{
    check_revisions, CollectionType, Durability, OverwriteMode, RuleInput, StoredDocument,
    WriteEvent, WriteKind, WriteOptions, WriteOutcome, WriteRequest, WriteResults,
};

use crate::collection::Collection;
use crate::current::Current;

/// How a write over an existing version builds the new one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overwrite {
    /// The body is the new document.
    Replace,
    /// The body is merged into the stored document.
    Update,
}

pub(crate) fn not_found() -> ArangoError {
    ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND)
}

fn not_an_object() -> ArangoError {
    ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID)
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

/// The one item of a one-item request, with the request's durability.
fn only(results: WriteResults) -> Result<Deferred> {
    let WriteResults {
        mut items,
        durability,
        ..
    } = results;
    assert_eq!(items.len(), 1, "a one-item request has one result");
    let outcome = items.pop().expect("one item")?;
    Ok((outcome, durability))
}

/// The durability to report for a write: only when it must be synced. The storage syncer that
/// covers the record answers it.
pub(crate) fn durability_of(sync: bool, ticket: Option<WriteTicket>) -> Option<Durability> {
    let ticket = ticket.filter(|_| sync)?;
    let (durability, completer) = Durability::pending(ticket.seq());
    ticket.on_durable(Box::new(move |result| {
        completer.complete(result.map_err(ArangoError::from));
    }));
    Some(durability)
}

impl Collection {
    /// `waitForSync` of one write: the request's OR the collection's.
    pub(crate) fn effective_sync(&self, options: &WriteOptions) -> bool {
        options.wait_for_sync || self.wait_for_sync()
    }

    /// The JSON prefix of this collection's `_id`s.
    pub(crate) fn current_id_prefix(&self) -> String {
        self.meta.read().id_prefix.clone()
    }

    pub(crate) fn outcome(&self, key: &str, rev: RevisionId, synced: bool) -> WriteOutcome {
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

    /// Checks the revision preconditions of a write of `key` (the shared rule,
    /// [`quince_ops::check_revisions`]).
    pub(crate) fn check_preconditions(
        &self,
        key: &str,
        current: RevisionId,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<()> {
        let name = self.meta.read().name.clone();
        check_revisions(&name, key, current, expected_rev, options)
    }

    /// Reads a document. 1202 if missing, 1221 for a syntactically bad key... (ArangoDB answers
    /// 404/1202 for any key it cannot find, including illegal ones).
    pub fn read(&self, key: &str) -> Result<StoredDocument> {
        // A handle on a state a restore (or shutdown) closed answers 503/30, never its data.
        self.shared.check_open()?;
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

    /// Visits every live document, rendered as [`Collection::read`] renders it, until `visit`
    /// returns false.
    pub fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()> {
        self.shared.check_open()?;
        let prefix = self.current_id_prefix();
        self.store.scan(&mut |_key, rev, stored| {
            visit(StoredDocument {
                rev: RevisionId(rev).encode(),
                json: render_document(stored, &prefix),
            })
        })?;
        Ok(())
    }

    /// The current `_rev` of a document without reading it (for HEAD and If-None-Match).
    pub fn read_rev(&self, key: &str) -> Result<String> {
        self.shared.check_open()?;
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
        only(self.write(WriteRequest::new(
            WriteKind::Insert,
            vec![document],
            options.clone(),
        )))
    }

    /// Inserts each of `documents` as [`Collection::insert_deferred`] would, in one write
    /// request: each document's outcome in input order, and the durability of them all.
    pub fn insert_many_deferred(
        &self,
        documents: Vec<Value>,
        options: &WriteOptions,
    ) -> (Vec<Result<WriteOutcome>>, Option<Durability>) {
        let results = self.write(WriteRequest::new(
            WriteKind::Insert,
            documents,
            options.clone(),
        ));
        (results.items, results.durability)
    }

    /// The key of a document to insert: its `_key` (checked against the key generator's rules)
    /// or a generated one.
    pub(crate) fn insert_key(&self, body: &Map<String, Value>) -> Result<String> {
        self.insert_key_of(body.get("_key"))
    }

    /// [`Collection::insert_key`] of a body whose `_key` is `key`.
    pub(crate) fn insert_key_of(&self, key: Option<&Value>) -> Result<String> {
        match key {
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
    /// mutate closure): a new document (with the collection's rules applied), or by
    /// `overwriteMode` a conflict, nothing, or a replace or update of the existing one.
    pub(crate) fn decide_insert(
        &self,
        key: &str,
        body: &Map<String, Value>,
        existing: Option<&dyn Current>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let Some(existing) = existing else {
            let rev = self.shared.hlc.next();
            let mut no_old = || Ok(Map::new());
            let body = self.ruled(
                WriteEvent::Insert,
                key,
                rev,
                body,
                body,
                options,
                &mut no_old,
            )?;
            let edge = self.insert_edge(&body)?;
            let value = encode_document(key, rev, edge, &body);
            let mut outcome = self.outcome(key, rev, sync);
            if options.return_new {
                outcome.new = Some(render_value(&value, &self.current_id_prefix()));
            }
            return Ok((Mutation::Put { rev: rev.0, value }, outcome));
        };
        match options.overwrite_mode {
            OverwriteMode::Conflict => Err(ArangoError::new(ARANGO_UNIQUE_CONSTRAINT_VIOLATED)),
            OverwriteMode::Ignore => {
                let outcome = self.outcome(key, RevisionId(existing.rev()), sync);
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

    /// True when the collection's rules (computed values, schema) apply to `event`.
    pub(crate) fn rules_apply(&self, event: WriteEvent) -> bool {
        self.meta.read().rules.applies_to(event)
    }

    /// `body` after the collection's rules for `event` (computed values, then the schema;
    /// `WriteRules::apply`): borrowed unchanged when no rule applies. `written` is what the
    /// client sent, `old` reads the version a modification replaces. Runs inside the store's
    /// mutate closure, under the writer lock, with the revision the write will carry.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn ruled<'b>(
        &self,
        event: WriteEvent,
        key: &str,
        rev: RevisionId,
        body: &'b Map<String, Value>,
        written: &Map<String, Value>,
        options: &WriteOptions,
        old: &mut dyn FnMut() -> Result<Map<String, Value>>,
    ) -> Result<Cow<'b, Map<String, Value>>> {
        let (rules, name) = {
            let meta = self.meta.read();
            if !meta.rules.applies_to(event) {
                return Ok(Cow::Borrowed(body));
            }
            (Arc::clone(&meta.rules), meta.name.clone())
        };
        let id = format!("{name}/{key}");
        let rev = rev.encode();
        let input = RuleInput {
            event,
            key,
            id: &id,
            rev: &rev,
            written,
            skip_validation: options.skip_document_validation,
        };
        rules.apply(&input, Cow::Borrowed(body), old)
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
        let kind = match how {
            Overwrite::Replace => WriteKind::Replace,
            Overwrite::Update => WriteKind::Update,
        };
        // The body's `_rev` is a precondition unless revisions are ignored, as in the
        // single-document form whose key comes from the URL.
        let mut request = WriteRequest::new(kind, vec![Value::Object(body)], options.clone());
        request.key = Some(key.to_owned());
        only(self.write(request))
    }

    /// Writes a new version over `existing`: checks preconditions, builds the new document,
    /// applies `versionAttribute`, checks edge ends, and fills in `_oldRev`, `new` and `old`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_over(
        &self,
        key: &str,
        existing: &dyn Current,
        body: &Map<String, Value>,
        how: Overwrite,
        expected_rev: Option<&str>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let current = RevisionId(existing.rev());
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
        let rev = self.shared.hlc.next();
        let event = match how {
            Overwrite::Replace => WriteEvent::Replace,
            Overwrite::Update => WriteEvent::Update,
        };
        // The version replaced, for a moderate schema: the bytes read above, or read now.
        let mut old = || match (&old_object, &old_bytes) {
            (Some(object), _) => Ok(object.clone()),
            (None, Some(bytes)) => Ok(stored_object(bytes)),
            (None, None) => Ok(stored_object(&existing.value()?)),
        };
        let new_body = self.ruled(event, key, rev, new_body, body, options, &mut old)?;
        let edge: Option<EdgeEnds<'_>> = match self.kind() {
            CollectionType::Edge => Some(edge_ends(&new_body)?),
            CollectionType::Document => None,
        };
        let value = encode_document(key, rev, edge, &new_body);
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
        let mut selector = Map::new();
        if let Some(rev) = expected_rev {
            selector.insert("_rev".into(), Value::String(rev.to_owned()));
        }
        let mut request = WriteRequest::new(
            WriteKind::Remove,
            vec![Value::Object(selector)],
            options.clone(),
        );
        request.key = Some(key.to_owned());
        only(self.write(request))
    }

    /// The removal of `existing` (runs inside the store's mutate closure): checks the
    /// preconditions, fills in `old`, takes the tombstone's revision.
    pub(crate) fn decide_remove(
        &self,
        key: &str,
        existing: &dyn Current,
        expected_rev: Option<&str>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        let current = RevisionId(existing.rev());
        self.check_preconditions(key, current, expected_rev, options)?;
        let mut outcome = self.outcome(key, current, sync);
        if options.return_old {
            outcome.old = Some(render_value(&existing.value()?, &self.current_id_prefix()));
        }
        let rev = self.shared.hlc.next();
        Ok((Mutation::Remove { rev: rev.0 }, outcome))
    }
}
