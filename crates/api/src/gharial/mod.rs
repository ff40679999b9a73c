//! `/_api/gharial`: named graphs (ArangoDB 3.12's Graph HTTP API): graph lifecycle, vertex
//! collections and edge definitions, and vertex and edge documents checked against the graph.
//!
//! What it is: the dispatch on path shape and method, and the replies every part shares:
//! - `/` (`graphs.rs`): list, create; `/{graph}`: read, drop;
//! - `/{graph}/vertex`, `/{graph}/edge`, `/{graph}/vertex/{c}` (DELETE),
//!   `/{graph}/edge/{c}` (PUT, DELETE) (`definitions.rs`): the graph's collections;
//! - `/{graph}/vertex/{c}` (POST), `/{graph}/edge/{c}` (POST), and
//!   `/{graph}/{vertex|edge}/{c}/{key}` (`elements.rs`): documents.
//!
//! What it is not: storage of definitions (`store.rs`), their rules (`rules.rs`), or document
//! semantics (the db layer decides keys, revisions and merges, as for `/_api/document`).
//!
//! Invariants: the graph is looked up before anything else under `/{graph}` (404/1924), and
//! a second segment other than `vertex` or `edge` is 404/404, as in ArangoDB; methods a path
//! does not serve are 405; definition changes run under the database's definitions lock and
//! re-read the graph under it; engine calls that may block run on the blocking pool.

mod cascade;
mod definitions;
mod elements;
mod graphs;
mod rules;
pub(crate) mod store;

use http::header::ETAG;
use http::Method;
use quince_errors::{ArangoError, Result, HTTP_METHOD_NOT_ALLOWED, HTTP_NOT_FOUND};
use quince_ops::graph::{read_graph, GraphDefinition};
use serde_json::{json, Value};

use crate::document::render::etag_value;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// Which documents a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Element {
    Vertex,
    Edge,
}

/// Handles every request under `/_api/gharial`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix = req.suffix.clone();
    let method = req.method.clone();
    let Some((name, rest)) = suffix.split_first() else {
        return match method {
            Method::GET => graphs::list(&req),
            Method::POST => graphs::create(&req).await,
            _ => Err(not_allowed()),
        };
    };
    let (graph, rev) = read_graph(&*req.database, name)?;
    let Some((kind, rest)) = rest.split_first() else {
        return match method {
            Method::GET => Ok(graph_reply(200, &graph, &rev)),
            Method::DELETE => graphs::drop_graph(api, &req, name).await,
            _ => Err(not_allowed()),
        };
    };
    let element = match kind.as_str() {
        "vertex" => Element::Vertex,
        "edge" => Element::Edge,
        _ => return Err(ArangoError::new(HTTP_NOT_FOUND)),
    };
    match (rest, element, &method) {
        ([], _, &Method::GET) => Ok(definitions::list(&graph, element)),
        ([], Element::Vertex, &Method::POST) => {
            definitions::add_vertex_collection(&req, name).await
        }
        ([], Element::Edge, &Method::POST) => definitions::add_edge_definition(&req, name).await,
        ([collection], _, &Method::POST) => {
            elements::create(&req, &graph, element, collection).await
        }
        ([collection], Element::Vertex, &Method::DELETE) => {
            definitions::remove_vertex_collection(api, &req, name, collection).await
        }
        ([collection], Element::Edge, &Method::PUT) => {
            definitions::replace_edge_definition(&req, name, collection).await
        }
        ([collection], Element::Edge, &Method::DELETE) => {
            definitions::remove_edge_definition(api, &req, name, collection).await
        }
        ([collection, key], _, _) => elements::handle(&req, graph, element, collection, key).await,
        ([_, _, _, ..], _, _) => Err(ArangoError::new(HTTP_NOT_FOUND)),
        _ => Err(not_allowed()),
    }
}

fn not_allowed() -> ArangoError {
    ArangoError::new(HTTP_METHOD_NOT_ALLOWED)
}

/// `{error: false, code, graph}` with the graph's `_rev` as the `etag`.
fn graph_reply(status: u16, graph: &GraphDefinition, rev: &str) -> ApiResponse {
    let body = json!({"error": false, "code": status, "graph": graph.to_json(rev)});
    ApiResponse::json(status, &body).with_header(ETAG, &etag_value(rev))
}

/// `{error: false, code}` merged with `fields`.
fn success(status: u16, fields: Value) -> ApiResponse {
    let mut body = json!({"error": false, "code": status});
    if let (Value::Object(body), Value::Object(fields)) = (&mut body, fields) {
        body.extend(fields);
    }
    ApiResponse::json(status, &body)
}

/// The request's `waitForSync` (it chooses between the synced and the accepted status).
fn wait_for_sync(req: &ApiRequest) -> bool {
    req.bool_param("waitForSync", false)
}

/// The object body of a request (400/600 when it is not JSON, 400/10 when it is not an object).
fn object_body(req: &ApiRequest) -> Result<serde_json::Map<String, Value>> {
    match req.required_json_body()? {
        Value::Object(object) => Ok(object),
        _ => Err(ArangoError::with_message(
            quince_errors::BAD_PARAMETER,
            "the body must be a JSON object",
        )),
    }
}
