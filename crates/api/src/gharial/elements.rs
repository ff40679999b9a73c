//! Vertex and edge documents of a graph: `POST /{graph}/{vertex|edge}/{collection}` and
//! `GET`/`HEAD`/`PATCH`/`PUT`/`DELETE /{graph}/{vertex|edge}/{collection}/{key}`.
//!
//! What it is: the graph's checks around one document operation of the db layer: the
//! collection must belong to the graph (vertex: 404/1926, edge: 404/1939); an edge's `_from`
//! and `_to` must be document ids (400/1233) in the collections its edge definition allows
//! (400/1947 "referenced _from collection 'X' is not part of the graph") and must exist
//! (404/1202); removals go through `cascade.rs`. Replies in gharial's shapes:
//! `{error, code, vertex|edge: {_id, _key, _rev[, _oldRev]}, new?, old?}`, a read's
//! `{error, code, vertex|edge: document}`, and `{error, code, removed: true, old?}`.
//!
//! What it is not: revision or merge semantics (the db layer's, as for `/_api/document`,
//! whose option parsing and helpers are reused here).
//!
//! Invariants: the expected revision comes from `If-Match`, else from `?rev=`; a read whose
//! revision differs is 412/1200, `If-None-Match` equal to the revision is 304 (GET and HEAD);
//! a HEAD never has a body; `keepNull` defaults to true; statuses: create 201, modify and
//! remove 200 when the write was synced (the request's or the collection's `waitForSync`),
//! else 202; writes carry the new `_rev` as `etag`.

use std::sync::Arc;

use http::header::ETAG;
use http::Method;
use quince_errors::{
    ArangoError, Result, ARANGO_DOCUMENT_NOT_FOUND, ARANGO_DOCUMENT_TYPE_INVALID,
    ARANGO_INVALID_EDGE_ATTRIBUTE, GRAPH_EDGE_COL_DOES_NOT_EXIST,
    GRAPH_REFERENCED_VERTEX_COLLECTION_NOT_PART_OF_THE_GRAPH, GRAPH_VERTEX_COL_DOES_NOT_EXIST,
};
use quince_ops::graph::{EdgeDefinition, GraphDefinition};
use quince_ops::{OverwriteMode, WriteKind, WriteOptions, WriteOutcome, WriteRequest};
use serde_json::{json, Map, Value};

use super::{cascade, Element};
use crate::blocking::blocking;
use crate::document::render::etag_value;
use crate::document::single::revision_mismatch;
use crate::document::{collection, durable, params};
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

impl Element {
    /// The reply field naming the document (`vertex` or `edge`).
    fn field(self) -> &'static str {
        match self {
            Element::Vertex => "vertex",
            Element::Edge => "edge",
        }
    }
}

/// 404/1926 or 404/1939 unless `collection` belongs to the graph as `element`.
fn check_membership(graph: &GraphDefinition, element: Element, collection: &str) -> Result<()> {
    match element {
        Element::Vertex if !graph.vertex_collections().iter().any(|c| c == collection) => {
            Err(ArangoError::with_message(
                GRAPH_VERTEX_COL_DOES_NOT_EXIST,
                format!(
                    "{collection} vertex collection does not exist or is not part of the graph"
                ),
            ))
        }
        Element::Edge if !graph.edge_collections().iter().any(|c| c == collection) => {
            Err(ArangoError::with_message(
                GRAPH_EDGE_COL_DOES_NOT_EXIST,
                format!("{collection} edge collection does not exist or is not part of the graph"),
            ))
        }
        _ => Ok(()),
    }
}

/// The expected revision: `If-Match`, else `?rev=`.
fn expected_rev(req: &ApiRequest) -> Option<String> {
    params::if_match(req).or_else(|| {
        req.param("rev")
            .map(params::strip_quotes)
            .filter(|rev| !rev.is_empty())
            .map(str::to_owned)
    })
}

/// The write options of a gharial document request (gharial has no overwrite modes).
fn write_options(req: &ApiRequest, kind: WriteKind) -> WriteOptions {
    let mut options = params::write_options(req, kind, true);
    options.overwrite_mode = OverwriteMode::Conflict;
    if kind != WriteKind::Insert {
        if let Some(rev) = expected_rev(req) {
            options.ignore_revs = false;
            options.if_match = Some(rev);
        }
    }
    options
}

/// `POST /{graph}/{vertex|edge}/{collection}`.
pub(super) async fn create(
    req: &ApiRequest,
    graph: &GraphDefinition,
    element: Element,
    collection_name: &str,
) -> ApiResult {
    check_membership(graph, element, collection_name)?;
    req.require(Access::Write, collection_name)?;
    let Value::Object(document) = req.required_json_body()? else {
        return Err(ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID));
    };
    if element == Element::Edge {
        check_edge(req, graph, collection_name, &document, true)?;
    }
    let target = collection(req, collection_name)?;
    let options = write_options(req, WriteKind::Insert);
    let request = WriteRequest::new(WriteKind::Insert, vec![Value::Object(document)], options);
    let outcome = write_one(target.write(request)).await?;
    Ok(write_reply(
        element,
        &outcome,
        if outcome.synced { 201 } else { 202 },
    ))
}

/// `GET`, `HEAD`, `PATCH`, `PUT` or `DELETE /{graph}/{vertex|edge}/{collection}/{key}`.
pub(super) async fn handle(
    req: &ApiRequest,
    graph: GraphDefinition,
    element: Element,
    collection_name: &str,
    key: &str,
) -> ApiResult {
    check_membership(&graph, element, collection_name)?;
    match req.method {
        Method::GET => read(req, element, collection_name, key),
        Method::HEAD => Ok(head(req, collection_name, key)),
        Method::PATCH | Method::PUT => {
            let kind = if req.method == Method::PUT {
                WriteKind::Replace
            } else {
                WriteKind::Update
            };
            modify(req, &graph, element, collection_name, key, kind).await
        }
        Method::DELETE => remove(req, graph, element, collection_name, key).await,
        _ => Err(ArangoError::new(quince_errors::HTTP_METHOD_NOT_ALLOWED)),
    }
}

fn read(req: &ApiRequest, element: Element, collection_name: &str, key: &str) -> ApiResult {
    req.require(Access::Read, collection_name)?;
    let document = collection(req, collection_name)?.read(key)?;
    if expected_rev(req).is_some_and(|rev| rev != document.rev) {
        return Err(revision_mismatch(collection_name, key, &document.rev));
    }
    let etag = etag_value(&document.rev);
    if params::if_none_match(req).is_some_and(|rev| rev == document.rev) {
        return Ok(ApiResponse::empty(304).with_header(ETAG, &etag));
    }
    let mut body = Vec::with_capacity(document.json.len() + 48);
    body.extend_from_slice(br#"{"error":false,"code":200,""#);
    body.extend_from_slice(element.field().as_bytes());
    body.extend_from_slice(br#"":"#);
    body.extend_from_slice(&document.json);
    body.push(b'}');
    Ok(ApiResponse::json_bytes(200, body).with_header(ETAG, &etag))
}

fn head(req: &ApiRequest, collection_name: &str, key: &str) -> ApiResponse {
    if let Err(e) = req.require(Access::Read, collection_name) {
        return ApiResponse::empty(e.status);
    }
    let rev = match collection(req, collection_name).and_then(|c| c.read_rev(key)) {
        Ok(rev) => rev,
        Err(e) => return ApiResponse::empty(e.status),
    };
    let etag = etag_value(&rev);
    let status = if expected_rev(req).is_some_and(|expected| expected != rev) {
        412
    } else if params::if_none_match(req).is_some_and(|expected| expected == rev) {
        304
    } else {
        200
    };
    ApiResponse::empty(status).with_header(ETAG, &etag)
}

async fn modify(
    req: &ApiRequest,
    graph: &GraphDefinition,
    element: Element,
    collection_name: &str,
    key: &str,
    kind: WriteKind,
) -> ApiResult {
    req.require(Access::Write, collection_name)?;
    let Value::Object(document) = req.required_json_body()? else {
        return Err(ArangoError::new(ARANGO_DOCUMENT_TYPE_INVALID));
    };
    if element == Element::Edge {
        check_edge(
            req,
            graph,
            collection_name,
            &document,
            kind == WriteKind::Replace,
        )?;
    }
    let target = collection(req, collection_name)?;
    let request = WriteRequest::one(kind, key, document, write_options(req, kind));
    let outcome = write_one(target.write(request)).await?;
    Ok(write_reply(
        element,
        &outcome,
        if outcome.synced { 200 } else { 202 },
    ))
}

async fn remove(
    req: &ApiRequest,
    graph: GraphDefinition,
    _element: Element,
    collection_name: &str,
    key: &str,
) -> ApiResult {
    req.require(Access::Write, collection_name)?;
    let target = collection(req, collection_name)?;
    let options = write_options(req, WriteKind::Remove);
    let synced = options.wait_for_sync || target.wait_for_sync();
    let database = Arc::clone(&req.database);
    let (collection_name, key) = (target.name(), key.to_owned());
    let removed =
        blocking(move || cascade::remove(&*database, &graph, &collection_name, &key, options))
            .await?;
    for durability in removed.durabilities {
        durable(Some(durability)).await?;
    }
    let status = if synced { 200 } else { 202 };
    let mut fields = json!({ "removed": true });
    if let Some(old) = removed.outcome.old {
        fields["old"] = old;
    }
    Ok(super::success(status, fields))
}

/// The outcome of a one-item write once durable.
async fn write_one(results: quince_ops::WriteResults) -> Result<WriteOutcome> {
    let mut items = results.items;
    let outcome = items.pop().expect("a one-item request has one result")?;
    durable(results.durability).await?;
    Ok(outcome)
}

fn write_reply(element: Element, outcome: &WriteOutcome, status: u16) -> ApiResponse {
    let mut meta = json!({"_id": outcome.id, "_key": outcome.key, "_rev": outcome.rev});
    if let Some(old_rev) = &outcome.old_rev {
        meta["_oldRev"] = Value::String(old_rev.clone());
    }
    let mut fields = Map::new();
    fields.insert(element.field().to_owned(), meta);
    if let Some(new) = &outcome.new {
        fields.insert("new".into(), new.clone());
    }
    if let Some(old) = &outcome.old {
        fields.insert("old".into(), old.clone());
    }
    super::success(status, Value::Object(fields)).with_header(ETAG, &etag_value(&outcome.rev))
}

/// The edge checks: `_from` and `_to` (both required when `whole`, else those present) are
/// ids of existing documents in collections the edge definition allows.
fn check_edge(
    req: &ApiRequest,
    graph: &GraphDefinition,
    collection_name: &str,
    document: &Map<String, Value>,
    whole: bool,
) -> Result<()> {
    let definition: &EdgeDefinition = graph
        .edge_definitions
        .iter()
        .find(|d| d.collection == collection_name)
        .expect("membership was checked");
    for (attribute, allowed) in [("_from", &definition.from), ("_to", &definition.to)] {
        let id = match document.get(attribute) {
            None if !whole => continue,
            Some(Value::String(id)) => id,
            _ => return Err(ArangoError::new(ARANGO_INVALID_EDGE_ATTRIBUTE)),
        };
        let Some((vertex_collection, vertex_key)) = id.split_once('/') else {
            return Err(ArangoError::new(ARANGO_INVALID_EDGE_ATTRIBUTE));
        };
        if !allowed.iter().any(|c| c == vertex_collection) {
            return Err(ArangoError::with_message(
                GRAPH_REFERENCED_VERTEX_COLLECTION_NOT_PART_OF_THE_GRAPH,
                format!("referenced {attribute} collection '{vertex_collection}' is not part of the graph"),
            ));
        }
        req.require(Access::Read, vertex_collection)?;
        let exists = req
            .database
            .collection(vertex_collection)
            .and_then(|c| c.read_rev(vertex_key));
        if exists.is_err() {
            return Err(ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND));
        }
    }
    Ok(())
}
