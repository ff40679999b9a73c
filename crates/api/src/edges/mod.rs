//! `/_api/edges/{collection}`: the edges of one vertex through the edge index (ArangoDB 3.12's
//! "Get inbound and outbound edges"), and the internal `POST` form for several vertices.
//!
//! What it is: the dispatch onto the operations interface's `index_lookup` with
//! [`IndexLookup::Edge`] on the edge index, each hit read as a whole document, and the replies
//! in ArangoDB's shapes:
//! - `GET /_api/edges/C?vertex=V&direction=in|out|any` (also `inbound`/`outbound`; absent or
//!   empty: any): `{edges: [...], error: false, code: 200, stats: {...}}`, the stats in the
//!   cursor API's shape (`scannedIndex`: the index hits; `filtered`: 0);
//! - `POST /_api/edges/C?direction=...` with a JSON array of vertex ids (ArangoDB keeps it
//!   undocumented, for its own tools): the edges of every vertex, each edge once, without
//!   `stats`.
//!
//! `any` gives the outbound edges, then the inbound ones that are not also outbound (an edge
//! looping on the vertex comes once); within one direction edges come in key order.
//!
//! What it is not: a traversal, nor a check that the vertex exists (any non-empty string is
//! looked up, as ArangoDB does).
//!
//! Invariants, as ArangoDB's handler: the suffix is exactly one segment (400/400 otherwise);
//! for `POST` the body is checked first (an array of strings: 400/400); then the collection
//! (404/1203 when missing, 400/1218 when it is not an edge collection), then `direction`
//! (400/400), then, for `GET`, `vertex` (missing or empty: 400/1205); other methods are
//! 501/9. Reading needs `ro` on the collection. Inside a stream transaction
//! (`x-arango-trx-id`) the lookup sees the transaction's own writes. The work runs on the
//! blocking pool, and the reply is bounded by `--http.max-reply-size`.

#[cfg(test)]
mod tests;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use http::Method;
use quince_errors::{
    ArangoError, Result, ARANGO_COLLECTION_TYPE_INVALID, ARANGO_DOCUMENT_HANDLE_BAD,
    HTTP_BAD_PARAMETER, NOT_IMPLEMENTED,
};
use quince_ops::{
    hit_document, CollectionOps, CollectionType, EdgeDirection, IndexLookup, EDGE_INDEX_ID,
};
use serde_json::{json, Value};

use crate::blocking::blocking;
use crate::permission::Access;
use crate::reply_budget::ReplyBudget;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// Handles every request under `/_api/edges`.
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    match req.method {
        Method::GET => read_edges(&req).await,
        Method::POST => read_edges_of_many(&req).await,
        _ => Err(ArangoError::with_message(
            NOT_IMPLEMENTED,
            "ILLEGAL /_api/edges",
        )),
    }
}

/// The directions `direction` asks for: `[Out]`, `[In]` or `[Out, In]` (any).
fn directions(req: &ApiRequest) -> Result<&'static [EdgeDirection]> {
    match req.param("direction").unwrap_or("") {
        "" | "any" => Ok(&[EdgeDirection::Out, EdgeDirection::In]),
        "out" | "outbound" => Ok(&[EdgeDirection::Out]),
        "in" | "inbound" => Ok(&[EdgeDirection::In]),
        other => Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            format!("<direction> must by any, in, or out, not: {other}"),
        )),
    }
}

/// The edge collection named by the one suffix segment, readable by the caller.
fn edge_collection(req: &ApiRequest, usage: &'static str) -> Result<Arc<dyn CollectionOps>> {
    let [name] = req.suffix.as_slice() else {
        return Err(ArangoError::with_message(HTTP_BAD_PARAMETER, usage));
    };
    let collection = req.database.collection(name)?;
    if collection.kind() != CollectionType::Edge {
        return Err(ArangoError::new(ARANGO_COLLECTION_TYPE_INVALID));
    }
    req.require(Access::Read, &collection.name())?;
    Ok(collection)
}

/// `GET /_api/edges/C?vertex=V&direction=D`.
async fn read_edges(req: &ApiRequest) -> ApiResult {
    let usage =
        "expected GET /_api/edges/<collection-identifier>?vertex=<vertex-id>&direction=<direction>";
    let collection = edge_collection(req, usage)?;
    let directions = directions(req)?;
    let vertex = match req.param("vertex") {
        Some(vertex) if !vertex.is_empty() => vertex.to_owned(),
        _ => {
            return Err(ArangoError::with_message(
                ARANGO_DOCUMENT_HANDLE_BAD,
                "illegal document handle",
            ))
        }
    };
    let budget = req.replies.budget();
    let started = Instant::now();
    let found = blocking(move || collect(&*collection, &[vertex], directions, budget)).await?;
    let stats = json!({
        "writesExecuted": 0,
        "writesIgnored": 0,
        "documentLookups": 0,
        "seeks": 0,
        "scannedFull": 0,
        "scannedIndex": found.scanned,
        "cursorsCreated": 0,
        "cursorsRearmed": 0,
        "cacheHits": 0,
        "cacheMisses": 0,
        "filtered": 0,
        "httpRequests": 0,
        "executionTime": started.elapsed().as_secs_f64(),
        "peakMemoryUsage": 0,
        "intermediateCommits": 0,
    });
    Ok(found.reply(Some(&stats)))
}

/// `POST /_api/edges/C?direction=D` with `["V1", "V2", ...]`.
async fn read_edges_of_many(req: &ApiRequest) -> ApiResult {
    let usage = "expected POST /_api/edges/<collection-identifier>?direction=<direction>";
    if req.suffix.len() != 1 {
        return Err(ArangoError::with_message(HTTP_BAD_PARAMETER, usage));
    }
    let body = req
        .required_json_body()
        .map_err(|_| ArangoError::with_message(HTTP_BAD_PARAMETER, usage))?;
    let vertices: Option<Vec<String>> = match body {
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::String(id) => Some(id),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    let Some(vertices) = vertices else {
        return Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "Expected an array of vertex _id's in body parameter",
        ));
    };
    let collection = edge_collection(req, usage)?;
    let directions = directions(req)?;
    let budget = req.replies.budget();
    let found = blocking(move || collect(&*collection, &vertices, directions, budget)).await?;
    Ok(found.reply(None))
}

/// The edges found, as rendered JSON texts, and the index hits that found them.
struct Found {
    /// `,`-separated edge documents, in order.
    edges: Vec<u8>,
    /// Index hits, a looping edge of an `any` lookup counted twice.
    scanned: u64,
    /// Holds the reply's share of the bound on reply memory until the reply is built.
    _budget: ReplyBudget,
}

impl Found {
    fn reply(self, stats: Option<&Value>) -> ApiResponse {
        let mut body = Vec::with_capacity(self.edges.len() + 256);
        body.extend_from_slice(b"{\"edges\":[");
        body.extend_from_slice(&self.edges);
        body.extend_from_slice(b"],\"error\":false,\"code\":200");
        if let Some(stats) = stats {
            body.extend_from_slice(b",\"stats\":");
            body.extend_from_slice(stats.to_string().as_bytes());
        }
        body.push(b'}');
        ApiResponse::json_bytes(200, body)
    }
}

/// Looks up the edges of each vertex in each direction and reads them, each edge once.
fn collect(
    collection: &dyn CollectionOps,
    vertices: &[String],
    directions: &[EdgeDirection],
    mut budget: ReplyBudget,
) -> Result<Found> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut edges: Vec<u8> = Vec::new();
    let mut scanned = 0u64;
    for vertex in vertices {
        for &direction in directions {
            let lookup = IndexLookup::Edge {
                direction,
                vertex: vertex.clone(),
            };
            let mut hits = Vec::new();
            collection.index_lookup(EDGE_INDEX_ID, &lookup, &mut |hit| {
                scanned += 1;
                if !seen.contains(hit.key) {
                    hits.push((hit.key.to_owned(), hit.document.map(<[u8]>::to_vec)));
                }
                true
            })?;
            for (key, carried) in hits {
                let Some(document) = hit_document(collection, &key, carried)? else {
                    continue;
                };
                if !edges.is_empty() {
                    edges.push(b',');
                }
                edges.extend_from_slice(&document);
                budget.grow(edges.len())?;
                seen.insert(key);
            }
        }
    }
    Ok(Found {
        edges,
        scanned,
        _budget: budget,
    })
}
