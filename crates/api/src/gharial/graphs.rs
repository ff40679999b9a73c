//! Graph lifecycle: `GET /_api/gharial` (list), `POST /_api/gharial` (create) and
//! `DELETE /_api/gharial/{graph}` (drop, optionally with the collections no other graph
//! uses).
//!
//! What it is: the handlers, and [`ensure_collections`], which creates the collections a
//! definition names and refuses those of the wrong type (an edge definition's collection
//! that is a document collection: 400/1944; an orphan that is an edge collection: 400/1927),
//! and [`drop_created`], which undoes those creations when the change fails.
//!
//! What it is not: reading one graph (answered from the dispatch) or the rules of a
//! definition (`rules.rs`).
//!
//! Invariants: a create answers 201 with `waitForSync`, else 202, with the stored graph
//! and its `_rev` as `etag`; 409/1925 when the name is taken and 409/1921 when another graph
//! uses one of its edge collections with other vertex collections (ArangoDB's documented
//! status for both); a drop answers 202 `{removed: true}` whatever `waitForSync` says, as
//! ArangoDB does. A create that fails leaves no graph and none of the collections it
//! created (all or nothing). Creating needs `rw` on the database and read access to every collection;
//! dropping collections needs write access to each.

use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, GRAPH_EDGE_DEFINITION_IS_DOCUMENT, GRAPH_WRONG_COLLECTION_TYPE_VERTEX,
};
use quince_ops::graph::{list_graphs, read_graph, GraphDefinition};
use quince_ops::{CollectionType, CreateCollection, DatabaseOps};
use serde_json::{json, Value};

use super::{graph_reply, rules, store, success, wait_for_sync};
use crate::blocking::blocking;
use crate::document::durable;
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::ApiResult;
use crate::state::Api;

/// `GET /_api/gharial`: `{graphs: [...]}`, sorted by name.
pub(super) fn list(req: &ApiRequest) -> ApiResult {
    let graphs: Vec<Value> = list_graphs(&*req.database)?
        .iter()
        .map(|(graph, rev)| graph.to_json(rev))
        .collect();
    Ok(success(200, json!({ "graphs": graphs })))
}

/// `POST /_api/gharial`.
pub(super) async fn create(req: &ApiRequest) -> ApiResult {
    req.require_database(Access::Write)?;
    let graph = rules::parse_create(&req.required_json_body()?)?;
    for collection in graph
        .edge_collections()
        .iter()
        .chain(&graph.vertex_collections())
    {
        req.require(Access::Read, collection)?;
    }
    let database = Arc::clone(&req.database);
    let _guard = store::definitions_lock(&*database).await;
    let (graph, written) = blocking(move || {
        let others: Vec<GraphDefinition> = list_graphs(&*database)?
            .into_iter()
            .map(|(g, _)| g)
            .collect();
        if others.iter().any(|other| other.name == graph.name) {
            return Err(ArangoError::with_message(
                quince_errors::GRAPH_DUPLICATE,
                format!("graph already exists: graph '{}'", graph.name),
            )
            .with_status(409));
        }
        for definition in &graph.edge_definitions {
            rules::check_conflicts(definition, &others, &graph.name)
                .map_err(|e| e.with_status(409))?;
        }
        let created = ensure_collections(&*database, &graph)?;
        let written = store::insert(&*database, &graph)
            .inspect_err(|_| drop_created(&*database, &created))?;
        Ok((graph, written))
    })
    .await?;
    durable(written.durability).await?;
    let status = if wait_for_sync(req) { 201 } else { 202 };
    Ok(graph_reply(status, &graph, &written.rev))
}

/// Creates the collections of `graph` that do not exist: edge collections for its edge
/// definitions, document collections for its vertex collections, and answers their names.
/// Checks every existing one's type before creating any; all or nothing: when one cannot be
/// created, those this call created are dropped again before the error is answered.
pub(super) fn ensure_collections(
    database: &dyn DatabaseOps,
    graph: &GraphDefinition,
) -> Result<Vec<String>> {
    let kind_of = |name: &str| database.collection(name).ok().map(|c| c.kind());
    for name in graph.edge_collections() {
        if kind_of(&name) == Some(CollectionType::Document) {
            return Err(ArangoError::with_message(
                GRAPH_EDGE_DEFINITION_IS_DOCUMENT,
                format!("edge definition collection is a document collection: collection '{name}'"),
            ));
        }
    }
    for name in &graph.orphan_collections {
        if kind_of(name) == Some(CollectionType::Edge) {
            return Err(ArangoError::with_message(
                GRAPH_WRONG_COLLECTION_TYPE_VERTEX,
                format!("collection not a vertex collection: collection '{name}'"),
            ));
        }
    }
    let wanted = graph
        .edge_collections()
        .into_iter()
        .map(|name| (name, CollectionType::Edge))
        .chain(
            graph
                .vertex_collections()
                .into_iter()
                .map(|name| (name, CollectionType::Document)),
        );
    let mut created = Vec::new();
    for (name, kind) in wanted {
        if kind_of(&name).is_some() {
            continue;
        }
        let outcome = database.create_collection(CreateCollection {
            name: name.clone(),
            kind,
            wait_for_sync: None,
            is_system: false,
            key_options: None,
            journal_size: None,
            schema: None,
            computed_values: None,
            cache_enabled: None,
        });
        match outcome {
            Ok(_) => created.push(name),
            // Another request created it meanwhile (outside graph definitions).
            Err(e) if e.is(quince_errors::ARANGO_DUPLICATE_NAME) => {}
            Err(e) => {
                drop_created(database, &created);
                return Err(e);
            }
        }
    }
    Ok(created)
}

/// Drops the collections a failed graph change created (best effort: the change's own
/// error is what the client gets; a collection that cannot be dropped stays, empty).
pub(super) fn drop_created(database: &dyn DatabaseOps, created: &[String]) {
    for name in created.iter().rev() {
        if let Err(e) = database.drop_collection(name, false) {
            tracing::warn!(
                collection = %name,
                error = %e,
                "a collection created for a graph that could not be made stays"
            );
        }
    }
}

/// `DELETE /_api/gharial/{graph}[?dropCollections=true]`.
pub(super) async fn drop_graph(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    req.require_database(Access::Write)?;
    let drop_collections = req.bool_param("dropCollections", false);
    let database = Arc::clone(&req.database);
    let _guard = store::definitions_lock(&*database).await;
    let (graph, _) = read_graph(&*database, name)?;
    let candidates: Vec<String> = graph
        .edge_collections()
        .into_iter()
        .chain(graph.vertex_collections())
        .collect();
    if drop_collections {
        for collection in &candidates {
            if database.collection(collection).is_ok() {
                req.require(Access::Write, collection)?;
            }
        }
    }
    let users = Arc::clone(api.users_handle());
    let graph_name = graph.name.clone();
    let written = blocking(move || {
        let written = store::remove(&*database, &graph_name)?;
        if drop_collections {
            for dropped in store::drop_unused(&*database, &candidates)? {
                users.forget_collection(database.name(), &dropped)?;
            }
        }
        Ok(written)
    })
    .await?;
    durable(written.durability).await?;
    Ok(success(202, json!({ "removed": true })))
}
