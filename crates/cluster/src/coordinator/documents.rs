//! Document reads and writes of a sharded collection: keys generated, items split by shard,
//! one request per shard to its leader, results reassembled in request order.
//!
//! What it is: [`write`] (insert, replace, update, remove of one or many documents; bulk
//! reads are in `reads.rs`), over the shared item parsing of `quince-ops`, and
//! [`insert_texts`], the same inserts from bodies checked as object text, sent without
//! building their objects where the shard keys are `["_key"]`:
//! - inserts get a `_key` generated here when they bring none (`keys.rs`); a `_key` given for
//!   a collection whose shard keys are not `["_key"]` is 1466; a `_key` given where
//!   `allowUserKeys` is false is 1222;
//! - an item goes to `shards[hash(shard keys) % n]` (`sharding.rs`); with shard keys other than
//!   `_key`, replacements, updates, removals and reads by key ask every shard where the
//!   document is (as ArangoDB does), and a replacement or update that would change a shard key
//!   value is 1469 (a replacement's missing shard key counts as `null`; an update may leave one
//!   out);
//! - each shard's part is one multi-document request on the shard collection
//!   (`/_api/document/<shard>` with the options as query parameters); the revision
//!   preconditions of replacements, updates and removals travel as `_rev` in each item with
//!   `ignoreRevs=false`, so `If-Match` applies to each (inserts keep the client's `ignoreRevs`);
//! - `_id` in results, in `new`/`old` and in read documents names the collection, not the shard.
//!
//! What it is not: the transport or its retries (`shard_requests.rs`), or the rules a leader
//! applies to each document (the DB server's local engine applies them).
//!
//! Invariants: one result per item, in input order; an item whose shard's request failed as a
//! whole gets that error; nothing is sent twice (`shard_requests.rs`).

use std::collections::BTreeMap;

use quince_client::request::{encode_segment, Method};
use quince_errors::{
    ArangoError, Result, ARANGO_DOCUMENT_KEY_BAD, ARANGO_DOCUMENT_KEY_UNEXPECTED,
    ARANGO_DOCUMENT_NOT_FOUND, CLUSTER_MUST_NOT_CHANGE_SHARDING_ATTRIBUTES,
    CLUSTER_MUST_NOT_SPECIFY_KEY, INTERNAL,
};
use quince_model::keygen::{KeyGeneratorType, KeyOptions};
use quince_model::object_text::{ObjectText, SystemAttribute};
use quince_ops::{
    parse_items, DocumentOp, Durability, OverwriteMode, WriteKind, WriteOptions, WriteOutcome,
    WriteRequest, WriteResults,
};
use serde_json::{Map, Value};

use super::keys::{generate_key, KeyBlocks};
use super::shard_requests::{error_from_body, error_from_value, Router, ShardCall};
use crate::layout::CollectionPlan;
use crate::sharding::{is_default_shard_keys, shard_index};

/// Where an item goes.
pub(super) enum Target {
    /// The shard at this index of the collection's list.
    Shard(usize),
    /// Wherever the document of this key is (shard keys other than `_key`).
    Locate(String),
}

/// An item with its position in the request.
type Positioned = (usize, Vec<u8>);

/// One item ready to send.
struct Routed {
    target: Target,
    item: Map<String, Value>,
}

/// The collection's key options (the defaults when the Plan holds none or bad ones).
pub fn key_options(plan: &CollectionPlan) -> KeyOptions {
    KeyOptions::parse(plan.properties.get("keyOptions")).unwrap_or_default()
}

/// True when the collection's `waitForSync` is on.
pub fn collection_wait_for_sync(plan: &CollectionPlan) -> bool {
    plan.properties
        .get("waitForSync")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn shard_of(plan: &CollectionPlan, document: &Map<String, Value>) -> usize {
    shard_index(&plan.shard_keys, plan.shards.len(), document)
}

/// Where the document of `key` is: its shard with the default shard keys, else to be
/// located.
pub(super) fn key_shard(plan: &CollectionPlan, key: &str) -> Target {
    if is_default_shard_keys(&plan.shard_keys) {
        let mut document = Map::new();
        document.insert("_key".into(), Value::String(key.to_string()));
        Target::Shard(shard_of(plan, &document))
    } else {
        Target::Locate(key.to_string())
    }
}

/// Rewrites a document's `_id` from the shard's name to the collection's.
pub fn rename_id(document: &mut Value, collection: &str) {
    if let Some(Value::String(id)) = document.get_mut("_id") {
        if let Some((_, key)) = id.split_once('/') {
            *id = format!("{collection}/{key}");
        }
    }
}

/// Routes one parsed operation.
fn route(
    plan: &CollectionPlan,
    keys: &KeyOptions,
    blocks: &KeyBlocks,
    op: DocumentOp,
    options: &WriteOptions,
) -> Result<Routed> {
    let default_keys = is_default_shard_keys(&plan.shard_keys);
    match op {
        DocumentOp::Insert(mut body) => {
            match body.get("_key") {
                Some(Value::String(key)) => {
                    if !default_keys {
                        return Err(ArangoError::new(CLUSTER_MUST_NOT_SPECIFY_KEY));
                    }
                    if !keys.allow_user_keys {
                        return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_UNEXPECTED));
                    }
                    quince_model::key::validate_key(key)?;
                }
                Some(_) => {
                    if !default_keys {
                        return Err(ArangoError::new(CLUSTER_MUST_NOT_SPECIFY_KEY));
                    }
                    return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD));
                }
                None => match generate_key(keys, blocks)? {
                    Some(key) => {
                        body.insert("_key".into(), Value::String(key));
                    }
                    // Autoincrement: only with one shard (checked at creation); its leader
                    // generates the key.
                    None => {
                        return Ok(Routed {
                            target: Target::Shard(0),
                            item: body,
                        })
                    }
                },
            }
            Ok(Routed {
                target: Target::Shard(shard_of(plan, &body)),
                item: body,
            })
        }
        DocumentOp::Modify { key, .. } | DocumentOp::Remove { key, .. }
            if !quince_model::key::is_valid_key(&key) =>
        {
            // No document has it.
            Err(ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND))
        }
        DocumentOp::Modify {
            key,
            mut body,
            expected_rev,
            ..
        } => {
            body.remove("_rev");
            body.insert("_key".into(), Value::String(key.clone()));
            if let Some(rev) = options.if_match.clone().or(expected_rev) {
                body.insert("_rev".into(), Value::String(rev));
            }
            let target = if default_keys {
                key_shard(plan, &key)
            } else {
                Target::Locate(key)
            };
            Ok(Routed { target, item: body })
        }
        DocumentOp::Remove { key, expected_rev } => {
            let mut item = Map::new();
            item.insert("_key".into(), Value::String(key.clone()));
            if let Some(rev) = options.if_match.clone().or(expected_rev) {
                item.insert("_rev".into(), Value::String(rev));
            }
            Ok(Routed {
                target: key_shard(plan, &key),
                item,
            })
        }
    }
}

/// The query string of a write.
fn write_query(kind: WriteKind, options: &WriteOptions, sync: bool) -> String {
    let flag = |b: bool| if b { "true" } else { "false" };
    // Replacements, updates and removals carry their preconditions as `_rev` (only those);
    // an insert's body is the client's, so its `ignoreRevs` is the client's too.
    let ignore_revs = kind == WriteKind::Insert && options.ignore_revs;
    let mut query = format!(
        "waitForSync={}&returnNew={}&returnOld={}&ignoreRevs={}",
        flag(sync),
        flag(options.return_new),
        flag(options.return_old),
        flag(ignore_revs)
    );
    if matches!(kind, WriteKind::Update)
        || (kind == WriteKind::Insert && options.overwrite_mode == OverwriteMode::Update)
    {
        query.push_str(&format!(
            "&keepNull={}&mergeObjects={}",
            flag(options.keep_null),
            flag(options.merge_objects)
        ));
    }
    if kind == WriteKind::Insert {
        let mode = match options.overwrite_mode {
            OverwriteMode::Conflict => "conflict",
            OverwriteMode::Ignore => "ignore",
            OverwriteMode::Replace => "replace",
            OverwriteMode::Update => "update",
        };
        query.push_str(&format!("&overwriteMode={mode}"));
    }
    if let Some(attribute) = &options.version_attribute {
        query.push_str(&format!("&versionAttribute={}", encode_segment(attribute)));
    }
    if options.skip_document_validation {
        query.push_str("&skipDocumentValidation=true");
    }
    query
}

/// Finds, on every shard, the documents of `keys`: for each key its shard's index and the
/// document (absent when no shard holds it). Errors of whole shard requests are answered.
pub(super) fn locate(
    router: &Router,
    db: &str,
    plan: &CollectionPlan,
    keys: &[String],
) -> Result<BTreeMap<String, (usize, Value)>> {
    let body = serde_json::to_vec(keys).expect("keys serialize");
    let calls: Vec<ShardCall> = plan
        .shards
        .iter()
        .map(|shard| ShardCall {
            db: db.to_string(),
            shard: shard.clone(),
            method: Method::Put,
            path: format!(
                "/_api/document/{}?onlyget=true&ignoreRevs=true",
                encode_segment(shard)
            ),
            body: Some(body.clone()),
            read_only: true,
        })
        .collect();
    let mut found = BTreeMap::new();
    for (index, reply) in router.to_leaders(&calls).into_iter().enumerate() {
        let reply = reply?;
        if reply.status >= 400 {
            return Err(error_from_body(reply.status, &reply.body));
        }
        let items: Vec<Value> = serde_json::from_slice(&reply.body).map_err(|e| {
            ArangoError::with_message(INTERNAL, format!("a DB server's reply: {e}"))
        })?;
        for (key, item) in keys.iter().zip(items) {
            if item.get("error").and_then(Value::as_bool) != Some(true) {
                found.insert(key.clone(), (index, item));
            }
        }
    }
    Ok(found)
}

/// 1469 when `item` (a replacement, or an update when `patch`) changes a shard key value of
/// `old`.
fn check_shard_keys(
    plan: &CollectionPlan,
    old: &Value,
    item: &Map<String, Value>,
    patch: bool,
) -> Result<()> {
    for key in &plan.shard_keys {
        let new = match item.get(key) {
            Some(value) => value,
            None if patch => continue,
            None => &Value::Null,
        };
        if !same_value(old.get(key).unwrap_or(&Value::Null), new) {
            return Err(ArangoError::new(
                CLUSTER_MUST_NOT_CHANGE_SHARDING_ATTRIBUTES,
            ));
        }
    }
    Ok(())
}

/// JSON equality as the sharding hash sees it: numbers by value (`1` is `1.0`), objects
/// whatever their members' order.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(name, value)| y.get(name).is_some_and(|other| same_value(value, other)))
        }
        _ => a == b,
    }
}

/// One item of a leader's multi-document reply, as a result for the client.
fn outcome(item: Value, collection: &str, synced: bool) -> Result<WriteOutcome> {
    if item.get("error").and_then(Value::as_bool) == Some(true) {
        let mut error = error_from_value(&item, None);
        for name in ["_id", "_key", "_rev"] {
            if let Some(value) = item.get(name).and_then(Value::as_str) {
                let value = if name == "_id" {
                    value
                        .split_once('/')
                        .map_or(value.to_string(), |(_, k)| format!("{collection}/{k}"))
                } else {
                    value.to_string()
                };
                error = error.with_extra(name, value);
            }
        }
        return Err(error);
    }
    let text = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_string);
    let key = text("_key").unwrap_or_default();
    let fix = |value: Option<&Value>| {
        value.filter(|v| v.is_object()).map(|v| {
            let mut v = v.clone();
            rename_id(&mut v, collection);
            v
        })
    };
    Ok(WriteOutcome {
        id: format!("{collection}/{key}"),
        rev: text("_rev").unwrap_or_default(),
        old_rev: text("_oldRev"),
        new: fix(item.get("new")),
        old: fix(item.get("old")),
        key,
        synced,
    })
}

/// Writes the items of `request` to their shards' leaders (see the module documentation).
pub fn write(
    router: &Router,
    blocks: &KeyBlocks,
    db: &str,
    plan: &CollectionPlan,
    request: WriteRequest,
) -> WriteResults {
    let kind = request.kind;
    let (ops, options) = parse_items(request, &plan.name);
    let sync = options.wait_for_sync || collection_wait_for_sync(plan);
    let keys = key_options(plan);
    let mut results: Vec<Option<Result<WriteOutcome>>> = Vec::with_capacity(ops.len());
    let mut routed: Vec<Option<Routed>> = Vec::with_capacity(ops.len());
    for op in ops {
        match op.and_then(|op| route(plan, &keys, blocks, op, &options)) {
            Ok(item) => {
                results.push(None);
                routed.push(Some(item));
            }
            Err(error) => {
                results.push(Some(Err(error)));
                routed.push(None);
            }
        }
    }
    // Shard keys other than `_key`: find each named document's shard first.
    let lookups: Vec<String> = routed
        .iter()
        .flatten()
        .filter_map(|r| match &r.target {
            Target::Locate(key) => Some(key.clone()),
            Target::Shard(_) => None,
        })
        .collect();
    if !lookups.is_empty() {
        let found = locate(router, db, plan, &lookups);
        for (slot, result) in routed.iter_mut().zip(results.iter_mut()) {
            let Some(Routed {
                target: Target::Locate(key),
                item,
            }) = slot
            else {
                continue;
            };
            let decided = match &found {
                Err(error) => Err(error.clone()),
                Ok(found) => match found.get(key.as_str()) {
                    None => Err(ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND)),
                    Some((index, old)) => match kind {
                        WriteKind::Replace | WriteKind::Update => {
                            check_shard_keys(plan, old, item, kind == WriteKind::Update)
                                .map(|()| *index)
                        }
                        _ => Ok(*index),
                    },
                },
            };
            match decided {
                Ok(index) => {
                    let item = std::mem::take(item);
                    *slot = Some(Routed {
                        target: Target::Shard(index),
                        item,
                    });
                }
                Err(error) => {
                    *result = Some(Err(error));
                    *slot = None;
                }
            }
        }
    }
    // One request per shard.
    let mut parts: BTreeMap<usize, Vec<Positioned>> = BTreeMap::new();
    for (position, slot) in routed.into_iter().enumerate() {
        if let Some(Routed {
            target: Target::Shard(index),
            item,
        }) = slot
        {
            let text = serde_json::to_vec(&item).expect("items serialize");
            parts.entry(index).or_default().push((position, text));
        }
    }
    send_parts(router, db, plan, kind, &options, sync, parts, results)
}

/// Inserts of bodies checked as object text (`CollectionOps::insert_texts`): the same requests
/// to the same leaders, and the same results, as [`write`] of an insert request whose items
/// are the documents' objects, without building those objects where the shard keys are
/// `["_key"]` (the text is sent as it came, a generated `_key` spliced in at its end, where
/// [`write`] appends it).
pub fn insert_texts(
    router: &Router,
    blocks: &KeyBlocks,
    db: &str,
    plan: &CollectionPlan,
    documents: Vec<ObjectText>,
    options: WriteOptions,
) -> WriteResults {
    if !is_default_shard_keys(&plan.shard_keys) {
        let items = documents
            .iter()
            .map(|document| Value::Object(document.to_object()))
            .collect();
        let request = WriteRequest::new(WriteKind::Insert, items, options);
        return write(router, blocks, db, plan, request);
    }
    let sync = options.wait_for_sync || collection_wait_for_sync(plan);
    let keys = key_options(plan);
    let mut results: Vec<Option<Result<WriteOutcome>>> = Vec::with_capacity(documents.len());
    let mut parts: BTreeMap<usize, Vec<Positioned>> = BTreeMap::new();
    for (position, document) in documents.iter().enumerate() {
        match route_text(plan, &keys, blocks, document) {
            Ok((index, text)) => {
                results.push(None);
                parts.entry(index).or_default().push((position, text));
            }
            Err(error) => results.push(Some(Err(error))),
        }
    }
    send_parts(
        router,
        db,
        plan,
        WriteKind::Insert,
        &options,
        sync,
        parts,
        results,
    )
}

/// The shard and the text to send of an insert's object text, with the shard keys `["_key"]`:
/// the checks and the key [`route`] makes for an insert.
fn route_text(
    plan: &CollectionPlan,
    keys: &KeyOptions,
    blocks: &KeyBlocks,
    document: &ObjectText,
) -> Result<(usize, Vec<u8>)> {
    match document.attribute(SystemAttribute::Key) {
        Some(Value::String(key)) => {
            if !keys.allow_user_keys {
                return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_UNEXPECTED));
            }
            quince_model::key::validate_key(&key)?;
            Ok((key_shard_index(plan, &key), document.text().to_vec()))
        }
        Some(_) => Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD)),
        None => match generate_key(keys, blocks)? {
            Some(key) => Ok((
                key_shard_index(plan, &key),
                with_key_appended(document.text(), &key),
            )),
            // Autoincrement: only with one shard (checked at creation); its leader
            // generates the key.
            None => Ok((0, document.text().to_vec())),
        },
    }
}

/// The shard of `key` with the shard keys `["_key"]`.
fn key_shard_index(plan: &CollectionPlan, key: &str) -> usize {
    let mut document = Map::new();
    document.insert("_key".into(), Value::String(key.to_string()));
    shard_of(plan, &document)
}

/// The compact text of an object (`{...}`, as `serde_json` writes it) with `"_key": key` as
/// its last member: what `serde_json` writes for the object once `_key` is inserted into it.
fn with_key_appended(object: &[u8], key: &str) -> Vec<u8> {
    debug_assert!(object.first() == Some(&b'{') && object.last() == Some(&b'}'));
    let mut out = Vec::with_capacity(object.len() + key.len() + 12);
    out.extend_from_slice(&object[..object.len() - 1]);
    if object.len() > 2 {
        out.push(b',');
    }
    out.extend_from_slice(b"\"_key\":");
    serde_json::to_writer(&mut out, key).expect("strings serialize");
    out.push(b'}');
    out
}

/// Sends each shard's part (items as JSON text, with their positions in the request) as one
/// multi-document request to the shard's leader, and fills `results` with the answers (an item
/// already answered keeps its result).
#[allow(clippy::too_many_arguments)]
fn send_parts(
    router: &Router,
    db: &str,
    plan: &CollectionPlan,
    kind: WriteKind,
    options: &WriteOptions,
    sync: bool,
    parts: BTreeMap<usize, Vec<Positioned>>,
    mut results: Vec<Option<Result<WriteOutcome>>>,
) -> WriteResults {
    let method = match kind {
        WriteKind::Insert => Method::Post,
        WriteKind::Replace => Method::Put,
        WriteKind::Update => Method::Patch,
        WriteKind::Remove => Method::Delete,
    };
    let query = write_query(kind, options, sync);
    let order: Vec<usize> = parts.keys().copied().collect();
    let calls: Vec<ShardCall> = parts
        .iter()
        .map(|(index, items)| {
            let shard = &plan.shards[*index];
            let length = items.iter().map(|(_, text)| text.len() + 1).sum::<usize>() + 1;
            let mut body = Vec::with_capacity(length);
            body.push(b'[');
            for (i, (_, text)) in items.iter().enumerate() {
                if i > 0 {
                    body.push(b',');
                }
                body.extend_from_slice(text);
            }
            body.push(b']');
            ShardCall {
                db: db.to_string(),
                shard: shard.clone(),
                method,
                path: format!("/_api/document/{}?{query}", encode_segment(shard)),
                body: Some(body),
                read_only: false,
            }
        })
        .collect();
    let replies = router.to_leaders(&calls);
    for (index, reply) in order.iter().zip(replies) {
        let items = &parts[index];
        let answers: Result<Vec<Value>> = reply.and_then(|reply| {
            if reply.status >= 400 {
                return Err(error_from_body(reply.status, &reply.body));
            }
            let answers: Vec<Value> = serde_json::from_slice(&reply.body).map_err(|e| {
                ArangoError::with_message(INTERNAL, format!("a DB server's reply: {e}"))
            })?;
            if answers.len() != items.len() {
                return Err(ArangoError::with_message(
                    INTERNAL,
                    "a DB server answered another number of results than it got items",
                ));
            }
            Ok(answers)
        });
        match answers {
            Ok(answers) => {
                for ((position, _), answer) in items.iter().zip(answers) {
                    results[*position] = Some(outcome(answer, &plan.name, sync));
                }
            }
            Err(error) => {
                for (position, _) in items {
                    results[*position] = Some(Err(error.clone()));
                }
            }
        }
    }
    let items: Vec<Result<WriteOutcome>> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(ArangoError::new(INTERNAL))))
        .collect();
    let wrote = items.iter().any(Result::is_ok);
    WriteResults {
        items,
        durability: (sync && wrote).then(|| Durability::ready(Ok(()))),
        synced: sync,
    }
}

/// True when an autoincrement generator cannot serve this many shards (1470 at creation).
pub fn autoincrement_needs_one_shard(keys: &KeyOptions, shards: u32) -> bool {
    matches!(keys.kind, KeyGeneratorType::Autoincrement { .. }) && shards > 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(shard_keys: &[&str]) -> CollectionPlan {
        CollectionPlan {
            id: 1,
            name: "c".into(),
            kind: 2,
            number_of_shards: 2,
            shard_keys: shard_keys.iter().map(|k| k.to_string()).collect(),
            replication_factor: 1,
            write_concern: 1,
            sharding_strategy: "hash".into(),
            distribute_shards_like: None,
            replication_mode: Default::default(),
            shards: vec!["s2".into(), "s3".into()],
            properties: json!({"waitForSync": true, "keyOptions": {"type": "padded", "allowUserKeys": false}}),
            indexes: Vec::new(),
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn shard_key_changes_are_judged_by_value() {
        let plan = plan(&["a", "b"]);
        let old = json!({"a": 1, "b": {"x": 1, "y": 2}});
        let same = object(json!({"a": 1.0, "b": {"y": 2, "x": 1}}));
        assert!(check_shard_keys(&plan, &old, &same, false).is_ok());
        let patch = object(json!({"b": {"x": 1, "y": 2}}));
        assert!(
            check_shard_keys(&plan, &old, &patch, true).is_ok(),
            "an update may leave one out"
        );
        assert_eq!(
            check_shard_keys(&plan, &old, &patch, false)
                .unwrap_err()
                .num(),
            1469,
            "a replacement's missing shard key is null"
        );
        let moved = object(json!({"a": 2}));
        assert_eq!(
            check_shard_keys(&plan, &old, &moved, true)
                .unwrap_err()
                .num(),
            1469
        );
    }

    #[test]
    fn inserts_get_keys_and_the_collection_rules() {
        let store: std::sync::Arc<dyn quince_meta::MetaStore> =
            std::sync::Arc::new(quince_meta::MemoryStore::default());
        let blocks = KeyBlocks::new(store, crate::layout::Layout::default());
        let default_keys = plan(&["_key"]);
        let keys = key_options(&default_keys);
        assert!(collection_wait_for_sync(&default_keys));
        let options = WriteOptions::default();
        let insert = |plan: &CollectionPlan, body: Value| {
            route(
                plan,
                &keys,
                &blocks,
                DocumentOp::Insert(object(body)),
                &options,
            )
        };
        let routed = insert(&default_keys, json!({"a": 1})).unwrap();
        assert_eq!(routed.item["_key"].as_str().unwrap().len(), 16, "padded");
        assert_eq!(
            insert(&default_keys, json!({"_key": "x"}))
                .err()
                .unwrap()
                .num(),
            1222
        );
        let other_keys = plan(&["a"]);
        assert_eq!(
            insert(&other_keys, json!({"_key": "x"}))
                .err()
                .unwrap()
                .num(),
            1466
        );
        let Target::Shard(index) = insert(&other_keys, json!({"a": 5})).unwrap().target else {
            panic!("an insert goes to a shard");
        };
        assert_eq!(index, shard_of(&other_keys, &object(json!({"a": 5}))));
        let remove = DocumentOp::Remove {
            key: "k".into(),
            expected_rev: Some("_r".into()),
        };
        let routed = route(&other_keys, &keys, &blocks, remove, &options).unwrap();
        assert!(matches!(routed.target, Target::Locate(ref k) if k == "k"));
        assert_eq!(routed.item["_rev"], "_r");
    }

    #[test]
    fn a_generated_key_is_spliced_where_serde_writes_it() {
        for body in [
            json!({}),
            json!({"a": 1}),
            json!({"a": {"b": [1, "}"]}, "c": "\u{e9}\"}"}),
        ] {
            let mut object = body.as_object().unwrap().clone();
            let text = serde_json::to_vec(&object).unwrap();
            object.insert("_key".into(), Value::String("k\"1".into()));
            assert_eq!(
                with_key_appended(&text, "k\"1"),
                serde_json::to_vec(&object).unwrap(),
                "{body}"
            );
        }
    }

    #[test]
    fn the_query_carries_the_options() {
        let options = WriteOptions {
            return_new: true,
            overwrite_mode: OverwriteMode::Update,
            keep_null: false,
            version_attribute: Some("v x".into()),
            ..WriteOptions::default()
        };
        let query = write_query(WriteKind::Insert, &options, true);
        assert_eq!(
            query,
            "waitForSync=true&returnNew=true&returnOld=false&ignoreRevs=true\
             &keepNull=false&mergeObjects=true&overwriteMode=update&versionAttribute=v%20x"
        );
    }
}
