//! The multi-document forms: `POST`/`PUT`/`PATCH`/`DELETE /{coll}` with an array body, and the
//! bulk read `PUT /{coll}?onlyget`.
//!
//! What it is: a loop over the single-document operations of the db layer, one independent
//! operation per item, collecting successes and inline errors in input order
//! (`reference/arangodb-http-api.md` §2.4). Inserts are one batched call of the db layer
//! (`insert_many_deferred`), which makes the same independent inserts with fewer appends.
//!
//! What it is not: atomic. An item that fails does not undo or stop the others, and the HTTP
//! status is the success status even when every item failed.
//!
//! Invariants: the result array has one entry per item (only the errors when `silent`); the
//! status depends on the effective `waitForSync` alone; a synced request is answered once its
//! newest write is durable (which makes every earlier write of the collection durable), with
//! one wait for the whole request; if that fsync fails the whole request answers the error.

use quince_db::{Collection, Deferred, Durability, WriteOptions};
use quince_errors::{ArangoError, Result};
use serde_json::Value;

use crate::request::ApiRequest;
use crate::response::ApiResult;

use super::params::{self, WriteKind};
use super::render::{write_status, MultiReply};
use super::{collection, durable};

/// `POST /_api/document/{coll}` with an array: insert each object.
pub(super) async fn insert(
    req: &ApiRequest,
    collection_name: &str,
    items: Vec<Value>,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let options = params::write_options(req, WriteKind::Insert, false);
    let silent = params::silent(req);
    let count = items.len();
    run_writes(
        req,
        collection_name,
        WriteKind::Insert,
        options,
        silent,
        count,
        |c, options, reply| {
            // One batched call: the documents are written with one journal append per run
            // instead of one per document, each still its own insert.
            let (results, durability) = c.insert_many_deferred(items, options);
            reply.durability = Durability::newest(reply.durability.take(), durability);
            for result in &results {
                reply.reply.push_result(result, WriteKind::Insert);
            }
        },
    )
    .await
}

/// `PUT` (replace) or `PATCH` (update) `/_api/document/{coll}` with an array of objects, each
/// naming its document by `_key`.
pub(super) async fn modify(
    req: &ApiRequest,
    collection_name: &str,
    items: Vec<Value>,
    kind: WriteKind,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    assert!(matches!(kind, WriteKind::Replace | WriteKind::Update));
    let options = params::write_options(req, kind, false);
    let silent = params::silent(req);
    let count = items.len();
    run_writes(
        req,
        collection_name,
        kind,
        options,
        silent,
        count,
        |c, options, reply| {
            for item in items {
                let result = match modify_key(&item) {
                    Ok(key) if kind == WriteKind::Replace => {
                        c.replace_deferred(&key, item, options)
                    }
                    Ok(key) => c.update_deferred(&key, item, options),
                    Err(err) => Err(err),
                };
                reply.push(result, kind);
            }
        },
    )
    .await
}

/// `DELETE /_api/document/{coll}` with an array of selectors.
pub(super) async fn remove(
    req: &ApiRequest,
    collection_name: &str,
    selectors: Vec<Value>,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let options = params::write_options(req, WriteKind::Remove, false);
    let silent = params::silent(req);
    run_writes(
        req,
        collection_name,
        WriteKind::Remove,
        options,
        silent,
        selectors.len(),
        |c, options, reply| {
            let own_name = c.name();
            for item in &selectors {
                let result = selector(item, &own_name)
                    .and_then(|(key, rev)| c.remove_deferred(key, rev, options));
                reply.push(result, WriteKind::Remove);
            }
        },
    )
    .await
}

/// `PUT /_api/document/{coll}?onlyget`: read each selected document (200, documents inline).
pub(super) fn read(req: &ApiRequest, collection_name: &str, selectors: Vec<Value>) -> ApiResult {
    req.require(crate::permission::Access::Read, collection_name)?;
    let collection = collection(req, collection_name)?;
    let check_revs = !req.bool_param("ignoreRevs", true);
    let own_name = collection.name();
    let mut reply = MultiReply::new(false, selectors.len(), req.replies.budget());
    for item in &selectors {
        if reply.overflowed() {
            // A read has no effects to report: stop at once.
            break;
        }
        let document = selector(item, &own_name).and_then(|(key, rev)| {
            let document = collection.read(key)?;
            match rev {
                Some(expected) if check_revs && expected != document.rev => {
                    Err(ArangoError::with_message(
                        quince_errors::ARANGO_CONFLICT,
                        "conflict, _rev values do not match",
                    )
                    .with_status(412))
                }
                _ => Ok(document),
            }
        });
        match document {
            Ok(document) => reply.push_raw(&document.json),
            Err(err) => reply.push_error(&err),
        }
    }
    reply.finish(200)
}

/// The reply of a multi-document write being built, and the durability it waits for.
struct Writes {
    reply: MultiReply,
    /// The newest synced write's durability: once it resolves, every write before it did.
    durability: Option<Durability>,
}

impl Writes {
    /// Records one item's result.
    fn push(&mut self, result: quince_errors::Result<Deferred>, kind: WriteKind) {
        let result = result.map(|(outcome, durability)| {
            self.durability = Durability::newest(self.durability.take(), durability);
            outcome
        });
        self.reply.push_result(&result, kind);
    }
}

/// Resolves the collection, runs `writes` inline (each item one deferred write), waits once for
/// the durability of the newest synced write, and answers 201/202 (200/202 for removals).
async fn run_writes<F>(
    req: &ApiRequest,
    collection_name: &str,
    kind: WriteKind,
    options: WriteOptions,
    silent: bool,
    count: usize,
    writes: F,
) -> ApiResult
where
    F: FnOnce(&Collection, &WriteOptions, &mut Writes),
{
    let collection = collection(req, collection_name)?;
    let synced = options.wait_for_sync || collection.wait_for_sync();
    let mut state = Writes {
        reply: MultiReply::new(silent, count, req.replies.budget()),
        durability: None,
    };
    writes(&collection, &options, &mut state);
    durable(state.durability).await?;
    state
        .reply
        .finish(write_status(kind, synced))
        .map_err(|err| {
            // The items were processed (each on its own, as always): say so.
            ArangoError::with_message(
                quince_errors::RESOURCE_LIMIT,
                format!(
                    "every item was processed, but the reply cannot be sent: {}",
                    err.message
                ),
            )
            .with_status(err.status)
        })
}

/// The key of an item of a multi replace/update: its `_key` attribute (1205 when missing,
/// 1221 when not a string). The item must be an object (1227).
fn modify_key(item: &Value) -> Result<String> {
    let object = item
        .as_object()
        .ok_or_else(|| ArangoError::new(quince_errors::ARANGO_DOCUMENT_TYPE_INVALID))?;
    match object.get("_key") {
        Some(Value::String(key)) => Ok(key.clone()),
        None => Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_HANDLE_BAD)),
        Some(_) => Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_KEY_BAD)),
    }
}

/// A selector of a multi remove or bulk read: `"key"`, `"coll/key"`, or an object with `_key`
/// (or `_id`) and an optional `_rev`. A handle of another collection selects nothing here
/// (1202); a selector that names no key is 1205.
fn selector<'v>(item: &'v Value, own_name: &str) -> Result<(&'v str, Option<&'v str>)> {
    let (handle, rev) = match item {
        Value::String(handle) => (handle.as_str(), None),
        Value::Object(object) => {
            let handle = match (object.get("_key"), object.get("_id")) {
                (Some(Value::String(key)), _) => key.as_str(),
                (None, Some(Value::String(id))) => id.as_str(),
                _ => return Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_HANDLE_BAD)),
            };
            (handle, object.get("_rev").and_then(Value::as_str))
        }
        _ => return Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_HANDLE_BAD)),
    };
    let key = match handle.split_once('/') {
        Some((collection, key)) if collection == own_name => key,
        Some(_) => return Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_NOT_FOUND)),
        None => handle,
    };
    if key.is_empty() {
        return Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_HANDLE_BAD));
    }
    Ok((key, rev))
}

#[cfg(test)]
mod tests {
    use super::selector;
    use serde_json::json;

    #[test]
    fn selectors_name_keys_in_three_forms() {
        let plain = json!("k1");
        assert_eq!(selector(&plain, "c").unwrap(), ("k1", None));
        let handle = json!("c/k2");
        assert_eq!(selector(&handle, "c").unwrap(), ("k2", None));
        let item = json!({"_key": "k3", "_rev": "_r"});
        let (key, rev) = selector(&item, "c").unwrap();
        assert_eq!((key, rev), ("k3", Some("_r")));
    }

    #[test]
    fn bad_selectors_fail_with_arangodb_codes() {
        assert_eq!(selector(&json!("other/k"), "c").unwrap_err().num(), 1202);
        assert_eq!(selector(&json!(12), "c").unwrap_err().num(), 1205);
        assert_eq!(selector(&json!({"a": 1}), "c").unwrap_err().num(), 1205);
        assert_eq!(selector(&json!(""), "c").unwrap_err().num(), 1205);
    }
}
