//! The multi-document forms: `POST`/`PUT`/`PATCH`/`DELETE /{coll}` with an array body, and the
//! bulk read `PUT /{coll}?onlyget`.
//!
//! What it is: one write request (or one bulk read) of the operations interface per HTTP
//! request, run on the blocking pool (see the invariants for where not), and the rendering of
//! its per-item results in input order (<https://docs.arangodb.com/3.12/develop/http-api/documents/>). The items'
//! parsing (selectors, `_key`s) and per-item rules are the db layer's.
//!
//! What it is not: atomic. An item that fails does not undo or stop the others, and the HTTP
//! status is the success status even when every item failed.
//!
//! Invariants: no multi-document read or write of more than one item runs on a runtime worker;
//! a write of one item runs inline, as a single-document write does (the same work: a cluster's
//! coordinator sends each single-document write to its shard's leader as a one-item request);
//! where the whole request already runs on the blocking pool (a database whose calls wait on
//! the network, `mod.rs`), nothing is handed to the pool a second time; the result array has
//! one entry per item (only the errors when `silent`); the status depends on the effective
//! `waitForSync` alone; a synced request is answered once the request's durability resolved,
//! awaited without holding a thread; if that fsync fails the whole request answers the error.

use std::sync::Arc;

use quince_errors::ArangoError;
use quince_model::object_text::ObjectText;
use quince_ops::{CollectionOps, ReadRequest, WriteOptions, WriteRequest};
use serde_json::Value;

use crate::blocking::blocking_unless;
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
    write(
        req,
        collection_name,
        WriteKind::Insert,
        Items::Values(items),
    )
    .await
}

/// [`insert`] of a body already checked as an array of object texts: the same steps and
/// reply, with the documents handed to the engine as text (`CollectionOps::insert_texts`).
pub(super) async fn insert_texts(
    req: &ApiRequest,
    collection_name: &str,
    documents: Vec<ObjectText>,
) -> ApiResult {
    let items = Items::Texts(documents);
    write(req, collection_name, WriteKind::Insert, items).await
}

/// The items of a write request: as parsed, or (inserts) as checked object texts.
enum Items {
    Values(Vec<Value>),
    Texts(Vec<ObjectText>),
}

/// `PUT` (replace) or `PATCH` (update) `/_api/document/{coll}` with an array of objects, each
/// naming its document by `_key`.
pub(super) async fn modify(
    req: &ApiRequest,
    collection_name: &str,
    items: Vec<Value>,
    kind: WriteKind,
) -> ApiResult {
    assert!(matches!(kind, WriteKind::Replace | WriteKind::Update));
    write(req, collection_name, kind, Items::Values(items)).await
}

/// `DELETE /_api/document/{coll}` with an array of selectors.
pub(super) async fn remove(
    req: &ApiRequest,
    collection_name: &str,
    selectors: Vec<Value>,
) -> ApiResult {
    write(
        req,
        collection_name,
        WriteKind::Remove,
        Items::Values(selectors),
    )
    .await
}

/// `PUT /_api/document/{coll}?onlyget`: read each selected document (200, documents inline).
pub(super) async fn read(
    req: &ApiRequest,
    collection_name: &str,
    selectors: Vec<Value>,
) -> ApiResult {
    req.require(crate::permission::Access::Read, collection_name)?;
    let collection = collection(req, collection_name)?;
    let request = ReadRequest {
        selectors,
        ignore_revs: req.bool_param("ignoreRevs", true),
    };
    let mut reply = MultiReply::new(false, request.selectors.len(), req.replies.budget());
    let inline = req.database.blocks_on_network();
    let reply = blocking_unless(inline, move || {
        collection.read_many(&request, &mut |document| {
            match document {
                Ok(document) => reply.push_raw(&document.json),
                Err(err) => reply.push_error(&err),
            }
            // A read has no effects to report: stop once the reply outgrew its budget.
            !reply.overflowed()
        })?;
        Ok(reply)
    })
    .await?;
    reply.finish(200)
}

/// Runs one write request of `kind` over `items` (on the blocking pool unless it holds one
/// item or the request already runs there: see the invariants), waits once for its
/// durability, and answers 201/202 (200/202 for removals) with the per-item results.
async fn write(
    req: &ApiRequest,
    collection_name: &str,
    kind: WriteKind,
    items: Items,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let options: WriteOptions = params::write_options(req, kind, false);
    let silent = params::silent(req);
    let collection: Arc<dyn CollectionOps> = collection(req, collection_name)?;
    let on_pool = req.database.blocks_on_network();
    let (count, results) = match items {
        Items::Values(items) => {
            let count = items.len();
            let request = WriteRequest::new(kind, items, options);
            let write = move || Ok(collection.write(request));
            (count, blocking_unless(on_pool || count == 1, write).await?)
        }
        Items::Texts(documents) => {
            let count = documents.len();
            let write = move || Ok(collection.insert_texts(documents, options));
            (count, blocking_unless(on_pool || count == 1, write).await?)
        }
    };
    let synced = results.synced;
    durable(results.durability).await?;
    let mut reply = MultiReply::new(silent, count, req.replies.budget());
    for result in &results.items {
        reply.push_result(result, kind);
    }
    reply.finish(write_status(kind, synced)).map_err(|err| {
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
