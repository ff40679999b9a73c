//! Inserts whose bodies are checked object text ([`ObjectText`]): the fast route from the
//! request's bytes to the stored form, with no JSON tree in between.
//!
//! What it is: [`Collection::insert_texts`] (the engine's `CollectionOps::insert_texts`), the
//! checks made before the store is asked (the `_key`, or a generated one; the edge ends) and
//! the decision inside the store's mutate closure, which splices `_key`, `_rev` (and an edge's
//! `_from` and `_to`) in front of the body's own attributes
//! (`quince_model::document::encode_object_text`).
//!
//! What it is not: a second set of rules. Whenever the insert is more than "store this new
//! document" (a version already exists, so `overwriteMode` decides; the collection has computed
//! values or a schema for inserts), the text becomes the object the slow route would have
//! parsed and the slow route's decision (`decide_insert`) takes over.
//!
//! Invariants: for the same body, options and collection state, every result, stored byte,
//! hook call and error is what [`Collection::write`] of the parsed body gives; items go
//! through the one write path (`write_path.rs`), prepared in input order.

use quince_errors::Result;
use quince_model::document::{encode_object_text, render_value, validate_edge_end, EdgeEnds};
use quince_model::object_text::{ObjectText, SystemAttribute};
use quince_ops::{CollectionType, WriteEvent, WriteOptions, WriteOutcome, WriteResults};
use quince_storage::Mutation;

use crate::collection::Collection;
use crate::current::Current;
use crate::write_path::PreparedOp;

/// An edge's checked ends, owned (`_from`, `_to`).
pub(crate) type OwnedEnds = (String, String);

impl Collection {
    /// Inserts each of `documents` as [`Collection::write`] inserts their objects.
    pub fn insert_texts(&self, documents: Vec<ObjectText>, options: WriteOptions) -> WriteResults {
        let sync = self.effective_sync(&options);
        let count = documents.len();
        let prepared = documents
            .into_iter()
            .map(|document| self.prepare_text(document));
        self.write_prepared(prepared, count, &options, sync)
    }

    /// The checks made before the store is asked, as `prepare` makes them for an insert: the
    /// key (given and valid, or generated), then the edge ends.
    fn prepare_text(&self, body: ObjectText) -> Result<(String, PreparedOp)> {
        let key = self.insert_key_of(body.attribute(SystemAttribute::Key).as_ref())?;
        self.text_edge_ends(&body)?;
        Ok((key, PreparedOp::InsertText(body)))
    }

    /// The checked ends of an edge (400/1233 when one is missing or bad); none in a document
    /// collection.
    pub(crate) fn text_edge_ends(&self, body: &ObjectText) -> Result<Option<OwnedEnds>> {
        if self.kind() == CollectionType::Document {
            return Ok(None);
        }
        let from = body.attribute(SystemAttribute::From);
        let from = validate_edge_end(from.as_ref())?.to_owned();
        let to = body.attribute(SystemAttribute::To);
        let to = validate_edge_end(to.as_ref())?.to_owned();
        Ok(Some((from, to)))
    }

    /// What an insert of `body` as `key` writes over `existing` (inside the store's mutate
    /// closure): the spliced new document, or the slow route's decision (see the module doc).
    pub(crate) fn decide_insert_text(
        &self,
        key: &str,
        body: &ObjectText,
        edge: Option<OwnedEnds>,
        existing: Option<&dyn Current>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Mutation, WriteOutcome)> {
        if existing.is_some() || self.rules_apply(WriteEvent::Insert) {
            let object = body.to_object();
            return self.decide_insert(key, &object, existing, options, sync);
        }
        let rev = self.shared.hlc.next();
        let ends = edge.as_ref().map(|(from, to)| EdgeEnds { from, to });
        let value = encode_object_text(key, rev, ends, body);
        let mut outcome = self.outcome(key, rev, sync);
        if options.return_new {
            outcome.new = Some(render_value(&value, &self.current_id_prefix()));
        }
        Ok((Mutation::Put { rev: rev.0, value }, outcome))
    }
}
