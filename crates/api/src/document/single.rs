//! The single-document forms: `GET`/`HEAD /{coll}/{key}`, `POST /{coll}` with an object,
//! `PUT`/`PATCH`/`DELETE /{coll}/{key}`.
//!
//! What it is: one function per form, mapping the request onto one call of the operations
//! interface (a one-item write request for writes) and its outcome onto status, `etag`,
//! `location` and body (<https://docs.arangodb.com/3.12/develop/http-api/documents/>).
//!
//! What it is not: the revision rules themselves. Writes hand `If-Match` to the db layer, which
//! answers 412/1200 with the current meta; only reads compare revisions here, because a read
//! has no precondition in the db layer.
//!
//! Invariants: a read's body is the stored JSON text, unchanged; a HEAD reply never has a body;
//! the URL's key wins over any `_key` in the body.

use http::header::ETAG;
use quince_errors::ArangoError;
use quince_model::object_text::ObjectText;
use quince_ops::WriteRequest;
use serde_json::{Map, Value};

use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

use super::params::{self, WriteKind};
use super::render::{etag_value, single_write_reply};
use super::{collection, durable};

/// The 412 of a read whose `If-Match` names another revision: the body names the current one.
pub(crate) fn revision_mismatch(
    collection_name: &str,
    key: &str,
    current_rev: &str,
) -> ArangoError {
    ArangoError::with_message(
        quince_errors::ARANGO_CONFLICT,
        "conflict, _rev values do not match",
    )
    .with_status(412)
    .with_extra("_id", format!("{collection_name}/{key}"))
    .with_extra("_key", key)
    .with_extra("_rev", current_rev)
}

/// `GET /_api/document/{coll}/{key}`: the document as stored, with its `etag`.
pub(super) fn read(req: &ApiRequest, collection_name: &str, key: &str) -> ApiResult {
    req.require(crate::permission::Access::Read, collection_name)?;
    let collection = collection(req, collection_name)?;
    let document = collection.read(key)?;
    if let Some(expected) = params::if_match(req) {
        if expected != document.rev {
            return Err(revision_mismatch(&collection.name(), key, &document.rev));
        }
    }
    let etag = etag_value(&document.rev);
    if params::if_none_match(req).is_some_and(|rev| rev == document.rev) {
        return Ok(ApiResponse::empty(304).with_header(ETAG, &etag));
    }
    Ok(ApiResponse::json_bytes(200, document.json).with_header(ETAG, &etag))
}

/// `HEAD /_api/document/{coll}/{key}`: GET's status and `etag`, never a body.
pub(super) fn head(req: &ApiRequest, collection_name: &str, key: &str) -> ApiResult {
    req.require(crate::permission::Access::Read, collection_name)?;
    let rev = match collection(req, collection_name).and_then(|c| c.read_rev(key)) {
        Ok(rev) => rev,
        Err(err) => return Ok(ApiResponse::empty(err.status)),
    };
    let etag = etag_value(&rev);
    if params::if_match(req).is_some_and(|expected| expected != rev) {
        return Ok(ApiResponse::empty(412).with_header(ETAG, &etag));
    }
    if params::if_none_match(req).is_some_and(|expected| expected == rev) {
        return Ok(ApiResponse::empty(304).with_header(ETAG, &etag));
    }
    Ok(ApiResponse::empty(200).with_header(ETAG, &etag))
}

/// `POST /_api/document/{coll}` with one object: insert (or overwrite, per `overwriteMode`).
pub(super) async fn insert(
    req: &ApiRequest,
    collection_name: &str,
    document: Map<String, Value>,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let collection = collection(req, collection_name)?;
    let options = params::write_options(req, WriteKind::Insert, true);
    let request = WriteRequest::new(WriteKind::Insert, vec![Value::Object(document)], options);
    let outcome = write_one(collection.write(request)).await?;
    Ok(single_write_reply(
        req.database.name(),
        &outcome,
        WriteKind::Insert,
        params::silent(req),
    ))
}

/// [`insert`] of a body already checked as object text: the same steps and reply, with the
/// document handed to the engine as text (`CollectionOps::insert_texts`).
pub(super) async fn insert_text(
    req: &ApiRequest,
    collection_name: &str,
    document: ObjectText,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let collection = collection(req, collection_name)?;
    let options = params::write_options(req, WriteKind::Insert, true);
    let outcome = write_one(collection.insert_texts(vec![document], options)).await?;
    Ok(single_write_reply(
        req.database.name(),
        &outcome,
        WriteKind::Insert,
        params::silent(req),
    ))
}

/// `PUT` (replace) or `PATCH` (update) `/_api/document/{coll}/{key}` with one object.
pub(super) async fn modify(
    req: &ApiRequest,
    collection_name: &str,
    key: &str,
    document: Map<String, Value>,
    kind: WriteKind,
) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    assert!(matches!(kind, WriteKind::Replace | WriteKind::Update));
    let collection = collection(req, collection_name)?;
    let options = params::write_options(req, kind, true);
    let request = WriteRequest::one(kind, key, document, options);
    let outcome = write_one(collection.write(request)).await?;
    Ok(single_write_reply(
        req.database.name(),
        &outcome,
        kind,
        params::silent(req),
    ))
}

/// The outcome of a one-item write request once it is durable (when synced); its error as
/// the request's error.
async fn write_one(
    results: quince_ops::WriteResults,
) -> quince_errors::Result<quince_ops::WriteOutcome> {
    let mut items = results.items;
    assert_eq!(items.len(), 1, "a one-item request has one result");
    let outcome = items.pop().expect("one item")?;
    durable(results.durability).await?;
    Ok(outcome)
}

/// `DELETE /_api/document/{coll}/{key}`.
pub(super) async fn remove(req: &ApiRequest, collection_name: &str, key: &str) -> ApiResult {
    req.require(crate::permission::Access::Write, collection_name)?;
    let collection = collection(req, collection_name)?;
    let options = params::write_options(req, WriteKind::Remove, true);
    let request = WriteRequest::one(WriteKind::Remove, key, Map::new(), options);
    let outcome = write_one(collection.write(request)).await?;
    Ok(single_write_reply(
        req.database.name(),
        &outcome,
        WriteKind::Remove,
        params::silent(req),
    ))
}
