//! A graph's collections: listing its vertex collections and edge collections, adding and
//! removing orphan vertex collections, adding, replacing and removing edge definitions.
//!
//! What it is: one handler per change. Each takes the database's definitions lock, re-reads
//! the graph under it, applies `rules.rs`, creates missing collections (an add that fails
//! drops those it created again), and stores the graph (a replace reaches every graph that
//! defines the edge collection, as ArangoDB documents).
//!
//! What it is not: the graph documents' storage (`store.rs`) or vertex and edge documents
//! (`elements.rs`).
//!
//! Invariants, with ArangoDB's codes: adding a vertex collection that is already an orphan
//! is 400/1938, one an edge definition uses 400/1929, an existing edge collection 400/1927;
//! removing one that is not an orphan is 404/1928; adding an edge definition for an edge
//! collection the graph has is 400/1920, one another graph defines otherwise 400/1921;
//! replacing or removing a definition the graph lacks is 404/1930. Vertex collections a
//! removed or replaced definition no longer reaches stay in the graph as orphans. Adding
//! answers 201 with `waitForSync` (else 202); removing a vertex collection 200 (else 202);
//! each with the graph and its `_rev` as `etag`. Dropping collections (`dropCollection`;
//! for edge definitions also `dropCollections`, which python-arango sends, where arangojs
//! sends the singular) drops only collections no graph uses any more.

use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, GRAPH_COLLECTION_MULTI_USE, GRAPH_COLLECTION_USED_IN_EDGE_DEF,
    GRAPH_COLLECTION_USED_IN_ORPHANS, GRAPH_EDGE_COLLECTION_NOT_USED,
    GRAPH_NOT_IN_ORPHAN_COLLECTION, HTTP_BAD_PARAMETER,
};
use quince_ops::graph::{list_graphs, read_graph, EdgeDefinition, GraphDefinition};
use quince_ops::DatabaseOps;
use serde_json::{json, Map, Value};

use super::graphs::{drop_created, ensure_collections};
use super::store::{self, Written};
use super::{graph_reply, object_body, rules, success, wait_for_sync, Element};
use crate::blocking::blocking;
use crate::document::durable;
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `GET /{graph}/vertex` or `/{graph}/edge`: `{collections: [...]}`, sorted.
pub(super) fn list(graph: &GraphDefinition, element: Element) -> ApiResponse {
    let mut collections = match element {
        Element::Vertex => graph.vertex_collections(),
        Element::Edge => graph.edge_collections(),
    };
    collections.sort();
    success(200, json!({ "collections": collections }))
}

/// Runs `change` on graph `name` under the definitions lock on the blocking pool, then waits
/// for the stored definitions to be durable and answers the graph as it is now.
async fn change<F>(req: &ApiRequest, name: &str, synced_status: u16, change: F) -> ApiResult
where
    F: FnOnce(&dyn DatabaseOps, GraphDefinition) -> Result<Vec<Written>> + Send + 'static,
{
    req.require_database(Access::Write)?;
    let database = Arc::clone(&req.database);
    let _guard = store::definitions_lock(&*database).await;
    let name = name.to_owned();
    let (graph, rev, written) = blocking(move || {
        let (graph, _) = read_graph(&*database, &name)?;
        let written = change(&*database, graph)?;
        let (graph, rev) = read_graph(&*database, &name)?;
        Ok((graph, rev, written))
    })
    .await?;
    for written in written {
        durable(written.durability).await?;
    }
    let status = if wait_for_sync(req) {
        synced_status
    } else {
        202
    };
    Ok(graph_reply(status, &graph, &rev))
}

/// The satellites an add names (`options.satellites`), kept with the graph's options.
fn keep_satellites(graph: &mut GraphDefinition, body: &Map<String, Value>) {
    let Some(Value::Array(new)) = body.get("options").and_then(|o| o.get("satellites")) else {
        return;
    };
    let entry = graph
        .options
        .entry("satellites")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = entry {
        for item in new {
            if item.is_string() && !list.contains(item) {
                list.push(item.clone());
            }
        }
    }
}

/// `POST /{graph}/vertex` with `{collection, options?}`: a new orphan collection.
pub(super) async fn add_vertex_collection(req: &ApiRequest, name: &str) -> ApiResult {
    let body = object_body(req)?;
    let collection = match body.get("collection") {
        Some(Value::String(c)) if !c.is_empty() => c.clone(),
        _ => {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "the body must name the vertex collection: {\"collection\": ...}",
            ))
        }
    };
    req.require(Access::Read, &collection)?;
    change(req, name, 201, move |database, mut graph| {
        if graph.orphan_collections.contains(&collection) {
            return Err(ArangoError::new(GRAPH_COLLECTION_USED_IN_ORPHANS));
        }
        if graph.vertex_collections().contains(&collection) {
            return Err(ArangoError::with_message(
                GRAPH_COLLECTION_USED_IN_EDGE_DEF,
                format!("{collection} collection already used in edge def"),
            ));
        }
        graph.orphan_collections.push(collection);
        keep_satellites(&mut graph, &body);
        let created = ensure_collections(database, &graph)?;
        let written =
            store::replace(database, &graph).inspect_err(|_| drop_created(database, &created))?;
        Ok(vec![written])
    })
    .await
}

/// `DELETE /{graph}/vertex/{collection}[?dropCollection=true]`.
pub(super) async fn remove_vertex_collection(
    api: &Api,
    req: &ApiRequest,
    name: &str,
    collection: &str,
) -> ApiResult {
    let drop = req.bool_param("dropCollection", false);
    if drop && req.database.collection(collection).is_ok() {
        req.require(Access::Write, collection)?;
    }
    let collection = collection.to_owned();
    let users = Arc::clone(api.users_handle());
    change(req, name, 200, move |database, mut graph| {
        let Some(at) = graph
            .orphan_collections
            .iter()
            .position(|c| *c == collection)
        else {
            return Err(ArangoError::new(GRAPH_NOT_IN_ORPHAN_COLLECTION));
        };
        graph.orphan_collections.remove(at);
        let written = store::replace(database, &graph)?;
        if drop {
            for dropped in store::drop_unused(database, &[collection])? {
                users.forget_collection(database.name(), &dropped)?;
            }
        }
        Ok(vec![written])
    })
    .await
}

/// The edge definition of a body, and its collections' permissions checked (read access).
fn definition_of(req: &ApiRequest) -> Result<(EdgeDefinition, Map<String, Value>)> {
    let body = object_body(req)?;
    // A definition may arrive wrapped (`{edgeDefinition: {...}}`) or as the body itself.
    let definition = match body.get("edgeDefinition") {
        Some(inner @ Value::Object(_)) => rules::parse_edge_definition(inner)?,
        _ => rules::parse_edge_definition(&Value::Object(body.clone()))?,
    };
    for collection in std::iter::once(&definition.collection)
        .chain(&definition.from)
        .chain(&definition.to)
    {
        req.require(Access::Read, collection)?;
    }
    Ok((definition, body))
}

fn not_used(collection: &str) -> ArangoError {
    ArangoError::with_message(
        GRAPH_EDGE_COLLECTION_NOT_USED,
        format!("edge collection not used in graph: collection '{collection}'"),
    )
}

/// `POST /{graph}/edge` with `{collection, from, to, options?}`.
pub(super) async fn add_edge_definition(req: &ApiRequest, name: &str) -> ApiResult {
    let (definition, body) = definition_of(req)?;
    change(req, name, 201, move |database, mut graph| {
        if graph.edge_collections().contains(&definition.collection) {
            return Err(ArangoError::with_message(
                GRAPH_COLLECTION_MULTI_USE,
                format!(
                    "multi use of edge collection in edge def: collection '{}'",
                    definition.collection
                ),
            ));
        }
        let others: Vec<GraphDefinition> =
            list_graphs(database)?.into_iter().map(|(g, _)| g).collect();
        rules::check_conflicts(&definition, &others, &graph.name)?;
        graph.edge_definitions.push(definition);
        rules::settle_orphans(&mut graph);
        keep_satellites(&mut graph, &body);
        let created = ensure_collections(database, &graph)?;
        let written =
            store::replace(database, &graph).inspect_err(|_| drop_created(database, &created))?;
        Ok(vec![written])
    })
    .await
}

/// `PUT /{graph}/edge/{collection}` with the new definition: every graph that defines the
/// edge collection takes it.
pub(super) async fn replace_edge_definition(
    req: &ApiRequest,
    name: &str,
    collection: &str,
) -> ApiResult {
    let (definition, _) = definition_of(req)?;
    let collection = collection.to_owned();
    change(req, name, 201, move |database, graph| {
        if !graph.edge_collections().contains(&collection) || definition.collection != collection {
            return Err(not_used(&collection));
        }
        let mut written = Vec::new();
        for (mut other, _) in list_graphs(database)? {
            let Some(at) = other
                .edge_definitions
                .iter()
                .position(|d| d.collection == collection)
            else {
                continue;
            };
            let before = other.vertex_collections();
            other.edge_definitions[at] = definition.clone();
            rules::keep_vertex_collections(&mut other, &before);
            rules::settle_orphans(&mut other);
            ensure_collections(database, &other)?;
            written.push(store::replace(database, &other)?);
        }
        Ok(written)
    })
    .await
}

/// `DELETE /{graph}/edge/{collection}[?dropCollections=true]`.
pub(super) async fn remove_edge_definition(
    api: &Api,
    req: &ApiRequest,
    name: &str,
    collection: &str,
) -> ApiResult {
    let drop = req.bool_param("dropCollections", false) || req.bool_param("dropCollection", false);
    if drop && req.database.collection(collection).is_ok() {
        req.require(Access::Write, collection)?;
    }
    let collection = collection.to_owned();
    let users = Arc::clone(api.users_handle());
    change(req, name, 201, move |database, mut graph| {
        let Some(at) = graph
            .edge_definitions
            .iter()
            .position(|d| d.collection == collection)
        else {
            return Err(not_used(&collection));
        };
        let before = graph.vertex_collections();
        graph.edge_definitions.remove(at);
        rules::keep_vertex_collections(&mut graph, &before);
        let written = store::replace(database, &graph)?;
        if drop {
            for dropped in store::drop_unused(database, &[collection])? {
                users.forget_collection(database.name(), &dropped)?;
            }
        }
        Ok(vec![written])
    })
    .await
}
