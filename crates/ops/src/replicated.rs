//! [`ReplicatedOp`]: one change a shard's leader ships to its followers, as a follower applies
//! it ([`crate::CollectionOps::apply_replicated`]).
//!
//! What it is: the effect of a write, not the request that caused it: a document stored whole
//! (with the `_key` and `_rev` the leader gave it), a removal by key, or a truncate. Applying
//! the same list of operations to two copies that were identical leaves them identical.
//!
//! What it is not: a client write. No key is generated, no revision precondition, schema or
//! computed value is checked (the leader applied those), and nothing is answered per item.
//!
//! Invariants: a [`ReplicatedOp::Put`] document is an object with a string `_key` and a string
//! `_rev` (and `_from`/`_to` in an edge collection); applying it replaces whatever version the
//! key holds. A removal of a key that is absent is no error.

use quince_errors::{ArangoError, Result, ARANGO_DOCUMENT_HANDLE_BAD, ARANGO_DOCUMENT_KEY_BAD};
use quince_model::key::is_valid_key;
use quince_model::rev::RevisionId;
use serde_json::{Map, Value};

/// One replicated change (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub enum ReplicatedOp {
    /// Store this document, as it is, under its `_key`.
    Put(Map<String, Value>),
    /// Remove the document with this key, if present.
    Remove(String),
    /// Remove every document.
    Truncate,
}

impl ReplicatedOp {
    /// The key and revision of a put's document: 1205 without a string `_key`, 1221 for a key
    /// that is not legal, 400 without a `_rev` that is a revision.
    pub fn put_parts(document: &Map<String, Value>) -> Result<(&str, RevisionId)> {
        let key = match document.get("_key") {
            Some(Value::String(key)) => key.as_str(),
            _ => return Err(ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD)),
        };
        if !is_valid_key(key) {
            return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD));
        }
        let rev = document
            .get("_rev")
            .and_then(Value::as_str)
            .and_then(RevisionId::decode)
            .ok_or_else(|| {
                ArangoError::with_message(
                    quince_errors::HTTP_BAD_PARAMETER,
                    "a replicated document needs the _rev its leader gave it",
                )
            })?;
        Ok((key, rev))
    }
}
