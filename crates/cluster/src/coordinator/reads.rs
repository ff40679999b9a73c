//! Bulk and single reads of a sharded collection: selectors split by shard, one `onlyget`
//! request per shard to its leader, results in request order.
//!
//! What it is: [`read_many`] (and [`stored`], a leader's document with `_id` in the
//! collection's name). With shard keys other than `_key`, a key's document is looked for on
//! every shard (`documents::locate`), and a `_rev` precondition is checked here (412/1200).
//!
//! What it is not: writes (`documents.rs`) or scans (`collection.rs`).
//!
//! Invariants: one result per selector, in order; a shard whose request failed as a whole
//! answers that error for each of its selectors.

use std::collections::BTreeMap;

use quince_client::request::{encode_segment, Method};
use quince_errors::{ArangoError, Result, ARANGO_DOCUMENT_NOT_FOUND, INTERNAL};
use quince_ops::{selector, ReadRequest, StoredDocument};
use serde_json::{Map, Value};

use super::documents::{key_shard, locate, rename_id, Target};
use super::shard_requests::{error_from_body, error_from_value, Router, ShardCall};
use crate::layout::CollectionPlan;

/// A document from a leader's reply, its `_id` in the collection's name.
pub fn stored(mut document: Value, collection: &str) -> StoredDocument {
    rename_id(&mut document, collection);
    StoredDocument {
        rev: document
            .get("_rev")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        json: serde_json::to_vec(&document).expect("a document serializes"),
    }
}

/// Reads each selected document from its shard's leader, handing each item's result to
/// `visit` in order until it returns false.
pub fn read_many(
    router: &Router,
    db: &str,
    plan: &CollectionPlan,
    request: &ReadRequest,
    visit: &mut dyn FnMut(Result<StoredDocument>) -> bool,
) {
    let mut results: Vec<Option<Result<StoredDocument>>> = Vec::new();
    let mut parts: BTreeMap<usize, Vec<(usize, Value)>> = BTreeMap::new();
    let mut lookups: Vec<(usize, String, Option<String>)> = Vec::new();
    for (position, item) in request.selectors.iter().enumerate() {
        match selector(item, &plan.name) {
            Err(error) => results.push(Some(Err(error))),
            Ok((key, rev)) => {
                results.push(None);
                let mut selector = Map::new();
                selector.insert("_key".into(), Value::String(key.to_string()));
                if let Some(rev) = rev.filter(|_| !request.ignore_revs) {
                    selector.insert("_rev".into(), Value::String(rev.to_string()));
                }
                match key_shard(plan, key) {
                    Target::Shard(index) => parts
                        .entry(index)
                        .or_default()
                        .push((position, Value::Object(selector))),
                    Target::Locate(key) => lookups.push((
                        position,
                        key,
                        rev.filter(|_| !request.ignore_revs).map(str::to_string),
                    )),
                }
            }
        }
    }
    if !lookups.is_empty() {
        let keys: Vec<String> = lookups.iter().map(|(_, key, _)| key.clone()).collect();
        match locate(router, db, plan, &keys) {
            Err(error) => {
                for (position, _, _) in &lookups {
                    results[*position] = Some(Err(error.clone()));
                }
            }
            Ok(found) => {
                for (position, key, rev) in &lookups {
                    results[*position] = Some(match found.get(key) {
                        None => Err(ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND)),
                        Some((_, document)) => {
                            let document = stored(document.clone(), &plan.name);
                            match rev {
                                Some(rev) if !rev.is_empty() && *rev != document.rev => {
                                    Err(quince_ops::read_conflict())
                                }
                                _ => Ok(document),
                            }
                        }
                    });
                }
            }
        }
    }
    let order: Vec<usize> = parts.keys().copied().collect();
    let calls: Vec<ShardCall> = parts
        .iter()
        .map(|(index, items)| {
            let shard = &plan.shards[*index];
            let body: Vec<&Value> = items.iter().map(|(_, item)| item).collect();
            ShardCall {
                db: db.to_string(),
                shard: shard.clone(),
                method: Method::Put,
                path: format!(
                    "/_api/document/{}?onlyget=true&ignoreRevs={}",
                    encode_segment(shard),
                    request.ignore_revs
                ),
                body: Some(serde_json::to_vec(&body).expect("selectors serialize")),
                read_only: true,
            }
        })
        .collect();
    for (index, reply) in order.iter().zip(router.to_leaders(&calls)) {
        let items = &parts[index];
        let answers: Result<Vec<Value>> = reply.and_then(|reply| {
            if reply.status >= 400 {
                return Err(error_from_body(reply.status, &reply.body));
            }
            serde_json::from_slice::<Vec<Value>>(&reply.body)
                .ok()
                .filter(|answers| answers.len() == items.len())
                .ok_or_else(|| {
                    ArangoError::with_message(INTERNAL, "a DB server's read reply is malformed")
                })
        });
        match answers {
            Ok(answers) => {
                for ((position, _), answer) in items.iter().zip(answers) {
                    results[*position] = Some(
                        if answer.get("error").and_then(Value::as_bool) == Some(true) {
                            Err(error_from_value(&answer, None))
                        } else {
                            Ok(stored(answer, &plan.name))
                        },
                    );
                }
            }
            Err(error) => {
                for (position, _) in items {
                    results[*position] = Some(Err(error.clone()));
                }
            }
        }
    }
    for result in results {
        if !visit(result.unwrap_or_else(|| Err(ArangoError::new(INTERNAL)))) {
            return;
        }
    }
}
