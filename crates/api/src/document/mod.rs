//! `/_api/document`: single and multi-document operations (<https://docs.arangodb.com/3.12/develop/http-api/documents/>).
//!
//! What it is: the dispatch on method and path shape (`/{coll}/{key}` is one document,
//! `/{coll}` with an array body is many, `POST /?collection=` is the legacy insert form, and
//! `PUT /{coll}?onlyget` is a bulk read), plus the rule that decides where a write runs.
//!
//! What it is not: document semantics. Keys, revisions, merges, preconditions and edge
//! attributes are decided by `quince-db`; this module only maps HTTP onto those calls and their
//! results back onto HTTP.
//!
//! Invariants: single-document operations run inline on their connection's task (a write is
//! a page-cache append, and the engine never fsyncs on it), except where the database says its
//! calls wait on the network (`DatabaseOps::blocks_on_network`: a coordinator's), where every
//! request of this family runs on the blocking pool; multi-document ones run on the
//! blocking pool (`multi.rs`); a write that must be synced (effective `waitForSync`: the request's flag OR the
//! collection's) is answered only after its `Durability` resolved, which the task awaits
//! without holding a thread (the storage syncers fire a oneshot). A failed fsync answers the
//! storage error, never 201. Body errors (400/600, 400/1227) are reported before a missing
//! collection (404/1203), as ArangoDB does.

mod multi;
pub(crate) mod params;
pub(crate) mod render;
pub(crate) mod single;

#[cfg(test)]
pub(crate) mod tests;

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, Result};
use quince_model::object_text::ObjectText;
use quince_ops::{CollectionOps, Durability};
use serde_json::Value;

use crate::request::ApiRequest;
use crate::response::ApiResult;

use params::WriteKind;

/// Handles every request under `/_api/document`. When the database's calls wait on the
/// network (a cluster coordinator's), the whole request runs on the blocking pool, so no
/// runtime worker waits for a DB server.
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    if req.database.blocks_on_network() {
        let runtime = tokio::runtime::Handle::current();
        return crate::blocking::blocking(move || runtime.block_on(dispatch(req))).await;
    }
    dispatch(req).await
}

/// [`handle`]'s dispatch on method and path.
async fn dispatch(req: ApiRequest) -> ApiResult {
    let method = req.method.clone();
    match method {
        Method::GET | Method::HEAD => {
            let [collection, key] = document_path(&req, method.as_str())?;
            if method == Method::GET {
                single::read(&req, collection, key)
            } else {
                single::head(&req, collection, key)
            }
        }
        Method::POST => {
            let collection = insert_collection_name(&req)?.to_owned();
            // The fast route: an object or an array of objects whose text can be stored as is
            // (anything else, errors included, takes the parser's route below).
            if let Some(document) = ObjectText::scan(&req.body, req.json_depth_max) {
                return single::insert_text(&req, &collection, document).await;
            }
            if let Some(documents) = ObjectText::scan_array(&req.body, req.json_depth_max) {
                return multi::insert_texts(&req, &collection, documents).await;
            }
            match req.json_body()? {
                Value::Array(items) => multi::insert(&req, &collection, items).await,
                Value::Object(document) => single::insert(&req, &collection, document).await,
                _ => Err(ArangoError::new(
                    quince_errors::ARANGO_DOCUMENT_TYPE_INVALID,
                )),
            }
        }
        Method::PUT if req.has_param("onlyget") => {
            let collection = match req.suffix.as_slice() {
                [collection] => collection.clone(),
                _ => return Err(expecting("PUT /_api/document/<collection>?onlyget=true")),
            };
            let selectors = expect_array(req.json_body()?)?;
            multi::read(&req, &collection, selectors).await
        }
        Method::PUT | Method::PATCH => {
            let kind = if method == Method::PUT {
                WriteKind::Replace
            } else {
                WriteKind::Update
            };
            match req.suffix.as_slice() {
                [collection] => {
                    let collection = collection.clone();
                    let items = expect_array(req.json_body()?)?;
                    multi::modify(&req, &collection, items, kind).await
                }
                [collection, key] => {
                    let (collection, key) = (collection.clone(), key.clone());
                    let document = match req.json_body()? {
                        Value::Object(document) => document,
                        _ => {
                            return Err(ArangoError::new(
                                quince_errors::ARANGO_DOCUMENT_TYPE_INVALID,
                            ))
                        }
                    };
                    single::modify(&req, &collection, &key, document, kind).await
                }
                _ => Err(expecting(&format!(
                    "{} /_api/document/<document-handle>",
                    method.as_str()
                ))),
            }
        }
        Method::DELETE => match req.suffix.as_slice() {
            [collection] => {
                let collection = collection.clone();
                let selectors = expect_array(req.required_json_body()?)?;
                multi::remove(&req, &collection, selectors).await
            }
            [collection, key] => {
                let (collection, key) = (collection.clone(), key.clone());
                single::remove(&req, &collection, &key).await
            }
            _ => Err(expecting("DELETE /_api/document/<document-handle>")),
        },
        _ => Err(ArangoError::new(quince_errors::HTTP_METHOD_NOT_ALLOWED)),
    }
}

/// The `{collection}/{key}` of a request that names one document.
fn document_path<'r>(req: &'r ApiRequest, method: &str) -> Result<[&'r str; 2]> {
    match req.suffix.as_slice() {
        [collection, key] => Ok([collection.as_str(), key.as_str()]),
        _ => Err(expecting(&format!(
            "{method} /_api/document/<document-handle>"
        ))),
    }
}

/// The collection of an insert: the path segment, or the legacy `?collection=` parameter.
fn insert_collection_name(req: &ApiRequest) -> Result<&str> {
    match req.suffix.as_slice() {
        [collection] => Ok(collection.as_str()),
        [] => match req.param("collection") {
            Some(name) if !name.is_empty() => Ok(name),
            _ => Err(ArangoError::new(
                quince_errors::ARANGO_COLLECTION_PARAMETER_MISSING,
            )),
        },
        _ => Err(ArangoError::with_message(
            quince_errors::HTTP_SUPERFLUOUS_SUFFICES,
            "superfluous suffix, expecting POST /_api/document/<collection>",
        )),
    }
}

/// The items of a multi-document body, which must be an array (400/1227 otherwise).
fn expect_array(body: Value) -> Result<Vec<Value>> {
    match body {
        Value::Array(items) => Ok(items),
        _ => Err(ArangoError::new(
            quince_errors::ARANGO_DOCUMENT_TYPE_INVALID,
        )),
    }
}

/// 400 for a path of the wrong shape, naming the expected one.
fn expecting(shape: &str) -> ArangoError {
    ArangoError::with_message(
        quince_errors::HTTP_BAD_PARAMETER,
        format!("expecting {shape}"),
    )
}

/// The collection a request names, or 404/1203 "collection or view not found".
pub(crate) fn collection(req: &ApiRequest, name: &str) -> Result<Arc<dyn CollectionOps>> {
    req.database.collection(name).map_err(|err| {
        if err.is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND) {
            ArangoError::new(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND)
        } else {
            err
        }
    })
}

/// Waits until a synced write is durable (no-op for `None`), parking this task, not a thread.
pub(crate) async fn durable(durability: Option<Durability>) -> Result<()> {
    match durability {
        Some(durability) => durability.await,
        None => Ok(()),
    }
}
