//! The requests and results of the document operations, and the rules that turn a request's
//! items into operations: the same for every implementation of the interface.
//!
//! What it is: [`WriteRequest`] (a kind, the items as the client sent them, the options) and
//! [`WriteResults`] (one result per item, in order, and one durability handle for the whole
//! request); [`ReadRequest`] for bulk reads; and the parsing of items into [`DocumentOp`]s:
//! selectors (`"key"`, `"coll/key"`, `{_key|_id, _rev}`), the `_key` of a replace or update
//! item, and which `_rev` is a precondition (only when `ignoreRevs` is false).
//!
//! What it is not: the decisions that need the stored data (keys generated or accepted,
//! overwrite modes, merges, edge ends): those are the engine's, in its write path.
//!
//! Invariants: parsing never fails a whole request; an item that cannot be parsed gets its own
//! error (1227 not an object, 1205 no key, 1221 a key that is not a string, 1202 a handle of
//! another collection) and the others go on.

use quince_errors::{
    ArangoError, Result, ARANGO_DOCUMENT_HANDLE_BAD, ARANGO_DOCUMENT_KEY_BAD,
    ARANGO_DOCUMENT_NOT_FOUND, ARANGO_DOCUMENT_TYPE_INVALID,
};
use quince_model::rev::RevisionId;
use serde_json::{Map, Value};

use crate::durability::Durability;
use crate::options::{WriteOptions, WriteOutcome};

/// What a write request does to each of its items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// Each item is a document to insert (or, by `overwriteMode`, to write over).
    Insert,
    /// Each item is a whole new version of the document its `_key` names.
    Replace,
    /// Each item is a patch merged into the document its `_key` names.
    Update,
    /// Each item is a selector of a document to remove.
    Remove,
}

/// A write of one or many documents of one collection.
#[derive(Clone, Debug)]
pub struct WriteRequest {
    /// What is done to each item.
    pub kind: WriteKind,
    /// The items as sent: documents, patches or selectors.
    pub items: Vec<Value>,
    /// The options of every item.
    pub options: WriteOptions,
    /// The single-document forms' key (from the URL): it names the one item's document, taken
    /// as is (never split as a handle), and wins over any `_key` in the body.
    pub key: Option<String>,
}

impl WriteRequest {
    /// A request of `kind` over `items`.
    pub fn new(kind: WriteKind, items: Vec<Value>, options: WriteOptions) -> WriteRequest {
        WriteRequest {
            kind,
            items,
            options,
            key: None,
        }
    }

    /// The request that writes one document addressed by its key (the single-document forms).
    /// A removal ignores the body; `If-Match` (in the options) is the expected revision of a
    /// replace or update whatever `_rev` the body carries.
    pub fn one(
        kind: WriteKind,
        key: &str,
        mut body: Map<String, Value>,
        options: WriteOptions,
    ) -> WriteRequest {
        if kind != WriteKind::Remove {
            body.insert("_key".into(), Value::String(key.to_owned()));
            if let Some(rev) = &options.if_match {
                body.insert("_rev".into(), Value::String(rev.clone()));
            }
        }
        WriteRequest {
            key: Some(key.to_owned()),
            ..WriteRequest::new(kind, vec![Value::Object(body)], options)
        }
    }
}

/// What a write request did: one result per item, in input order.
#[derive(Debug)]
#[must_use = "a synced write is acknowledged only once its durability is known"]
pub struct WriteResults {
    /// Each item's outcome or error.
    pub items: Vec<Result<WriteOutcome>>,
    /// When the effective `waitForSync` is true and something was written: resolves once every
    /// write of the request is durable. An engine whose writes must also be replicated before
    /// they are acknowledged (a shard leader in synchronous mode) hands one out whatever
    /// `waitForSync` says: it resolves once every write of the request is acknowledged
    /// (replicated, and durable when synced). Callers await it whenever it is present.
    pub durability: Option<Durability>,
    /// The effective `waitForSync` (the request's OR the collection's): the api answers 201
    /// (200 for removals) when true, 202 when false, whatever the items' fates.
    pub synced: bool,
}

impl WriteResults {
    /// Blocks until durable when synced, then hands back the items (for callers off the async
    /// runtime; the api awaits [`WriteResults::durability`] instead).
    pub fn settle(self) -> Result<Vec<Result<WriteOutcome>>> {
        if let Some(durability) = self.durability {
            durability.wait()?;
        }
        Ok(self.items)
    }

    /// The only item's result, durable when synced (for one-item requests, off the runtime).
    pub fn settle_one(self) -> Result<WriteOutcome> {
        let mut items = self.settle()?;
        assert_eq!(items.len(), 1, "settle_one needs a one-item request");
        items.pop().expect("one item")
    }
}

/// A bulk read of documents of one collection by selectors (`PUT /_api/document/{c}?onlyget`).
#[derive(Clone, Debug)]
pub struct ReadRequest {
    /// The selectors as sent.
    pub selectors: Vec<Value>,
    /// False makes a selector's `_rev` a precondition (412/1200 when it names another one).
    pub ignore_revs: bool,
}

/// One item of a write request, parsed.
#[derive(Clone, Debug, PartialEq)]
pub enum DocumentOp {
    /// Insert this object.
    Insert(Map<String, Value>),
    /// Replace (`merge` false) or update (`merge` true) the document `key` with `body`.
    Modify {
        /// The document's key.
        key: String,
        /// The new version or the patch.
        body: Map<String, Value>,
        /// True for an update (merge), false for a replace.
        merge: bool,
        /// A `_rev` precondition from the body (only when `ignoreRevs` is false).
        expected_rev: Option<String>,
    },
    /// Remove the document `key`.
    Remove {
        /// The document's key.
        key: String,
        /// A `_rev` precondition from the selector (only when `ignoreRevs` is false).
        expected_rev: Option<String>,
    },
}

impl DocumentOp {
    /// The key this operation names, when it names one (an insert's key may be generated).
    pub fn named_key(&self) -> Option<&str> {
        match self {
            DocumentOp::Insert(_) => None,
            DocumentOp::Modify { key, .. } | DocumentOp::Remove { key, .. } => Some(key),
        }
    }
}

/// Parses every item of `request` against the collection `own_name` (only removals by
/// selector read it); hands the options back.
pub fn parse_items(
    request: WriteRequest,
    own_name: &str,
) -> (Vec<Result<DocumentOp>>, WriteOptions) {
    let WriteRequest {
        kind,
        items,
        options,
        key,
    } = request;
    let ops = items
        .into_iter()
        .map(|item| match (&key, kind) {
            (Some(key), WriteKind::Remove) => Ok(DocumentOp::Remove {
                key: key.clone(),
                expected_rev: item
                    .get("_rev")
                    .and_then(Value::as_str)
                    .filter(|_| !options.ignore_revs)
                    .map(str::to_owned),
            }),
            (Some(key), WriteKind::Replace | WriteKind::Update) => match item {
                Value::Object(body) => Ok(modify_op(kind, key.clone(), body, &options)),
                _ => Err(ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID)),
            },
            _ => parse_item(kind, item, own_name, &options),
        })
        .collect();
    (ops, options)
}

/// Parses one item (see the module doc for the errors).
pub fn parse_item(
    kind: WriteKind,
    item: Value,
    own_name: &str,
    options: &WriteOptions,
) -> Result<DocumentOp> {
    match kind {
        WriteKind::Insert => match item {
            Value::Object(body) => Ok(DocumentOp::Insert(body)),
            _ => Err(ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID)),
        },
        WriteKind::Replace | WriteKind::Update => {
            let key = modify_key(&item)?;
            let Value::Object(body) = item else {
                unreachable!("modify_key accepts objects only")
            };
            Ok(modify_op(kind, key, body, options))
        }
        WriteKind::Remove => {
            let (key, rev) = selector(&item, own_name)?;
            Ok(DocumentOp::Remove {
                key: key.to_owned(),
                expected_rev: rev.filter(|_| !options.ignore_revs).map(str::to_owned),
            })
        }
    }
}

/// A replace or update of `key` with `body`, whose `_rev` is a precondition only when
/// revisions are not ignored.
fn modify_op(
    kind: WriteKind,
    key: String,
    body: Map<String, Value>,
    options: &WriteOptions,
) -> DocumentOp {
    let expected_rev = match body.get("_rev") {
        Some(Value::String(rev)) if !options.ignore_revs => Some(rev.clone()),
        _ => None,
    };
    DocumentOp::Modify {
        key,
        body,
        merge: kind == WriteKind::Update,
        expected_rev,
    }
}

/// The key of an item of a replace or update: its `_key` attribute (1205 when missing, 1221
/// when not a string). The item must be an object (1227).
fn modify_key(item: &Value) -> Result<String> {
    let object = item
        .as_object()
        .ok_or_else(|| ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID))?;
    match object.get("_key") {
        Some(Value::String(key)) => Ok(key.clone()),
        None => Err(ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD)),
        Some(_) => Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD)),
    }
}

/// A selector of a removal or bulk read: `"key"`, `"coll/key"`, or an object with `_key` (or
/// `_id`) and an optional `_rev`. A handle of another collection selects nothing here (1202);
/// a selector that names no key is 1205.
pub fn selector<'v>(item: &'v Value, own_name: &str) -> Result<(&'v str, Option<&'v str>)> {
    let (handle, rev) = match item {
        Value::String(handle) => (handle.as_str(), None),
        Value::Object(object) => {
            let handle = match (object.get("_key"), object.get("_id")) {
                (Some(Value::String(key)), _) => key.as_str(),
                (None, Some(Value::String(id))) => id.as_str(),
                _ => return Err(ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD)),
            };
            (handle, object.get("_rev").and_then(Value::as_str))
        }
        _ => return Err(ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD)),
    };
    let key = match handle.split_once('/') {
        Some((collection, key)) if collection == own_name => key,
        Some(_) => return Err(ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND)),
        None => handle,
    };
    if key.is_empty() {
        return Err(ArangoError::new(ARANGO_DOCUMENT_HANDLE_BAD));
    }
    Ok((key, rev))
}

/// Checks a write's revision preconditions against the current revision of `collection/key`:
/// `If-Match` (always) and the selector's or body's `_rev` (when given: parsing passes it only
/// when `ignoreRevs` is false). An empty `_rev` is no precondition; text that is not a revision
/// names none, so it never matches. A failure is 412/1200 naming the current version.
pub fn check_revisions(
    collection: &str,
    key: &str,
    current: RevisionId,
    expected_rev: Option<&str>,
    options: &WriteOptions,
) -> Result<()> {
    for expected in options.if_match.as_deref().into_iter().chain(expected_rev) {
        if !expected.is_empty() && RevisionId::decode(expected) != Some(current) {
            return Err(read_conflict()
                .with_extra("_id", format!("{collection}/{key}"))
                .with_extra("_key", key)
                .with_extra("_rev", current.encode()));
        }
    }
    Ok(())
}

/// The 412/1200 of a bulk read whose selector names another revision than the current one.
pub fn read_conflict() -> ArangoError {
    ArangoError::with_message(
        quince_errors::ARANGO_CONFLICT,
        "conflict, _rev values do not match",
    )
    .with_status(412)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors_name_keys_in_three_forms() {
        let plain = json!("k1");
        assert_eq!(selector(&plain, "c").unwrap(), ("k1", None));
        let handle = json!("c/k2");
        assert_eq!(selector(&handle, "c").unwrap(), ("k2", None));
        let item = json!({"_key": "k3", "_rev": "_r"});
        assert_eq!(selector(&item, "c").unwrap(), ("k3", Some("_r")));
    }

    #[test]
    fn bad_selectors_fail_with_arangodb_codes() {
        assert_eq!(selector(&json!("other/k"), "c").unwrap_err().num(), 1202);
        assert_eq!(selector(&json!(12), "c").unwrap_err().num(), 1205);
        assert_eq!(selector(&json!({"a": 1}), "c").unwrap_err().num(), 1205);
        assert_eq!(selector(&json!(""), "c").unwrap_err().num(), 1205);
    }

    #[test]
    fn modify_items_need_a_string_key_and_revs_count_only_when_not_ignored() {
        let strict = WriteOptions {
            ignore_revs: false,
            ..WriteOptions::default()
        };
        let lax = WriteOptions::default();
        let item = json!({"_key": "k", "_rev": "_abc", "a": 1});
        match parse_item(WriteKind::Update, item.clone(), "c", &strict).unwrap() {
            DocumentOp::Modify {
                key,
                merge,
                expected_rev,
                ..
            } => assert_eq!(
                (key.as_str(), merge, expected_rev.as_deref()),
                ("k", true, Some("_abc"))
            ),
            other => panic!("{other:?}"),
        }
        match parse_item(WriteKind::Replace, item, "c", &lax).unwrap() {
            DocumentOp::Modify { expected_rev, .. } => assert_eq!(expected_rev, None),
            other => panic!("{other:?}"),
        }
        let err = |item| {
            parse_item(WriteKind::Replace, item, "c", &lax)
                .unwrap_err()
                .num()
        };
        assert_eq!(err(json!({"a": 1})), 1205);
        assert_eq!(err(json!({"_key": 5})), 1221);
        assert_eq!(err(json!([1])), 1227);
        let insert = |item| parse_item(WriteKind::Insert, item, "c", &lax).map(|_| ());
        assert_eq!(insert(json!("x")).unwrap_err().num(), 1227);
    }
}
