//! Where gharial keeps graph definitions: the `_graphs` system collection, written through
//! the operations interface, and the per-database lock that orders every change to them.
//!
//! What it is: [`definitions_lock`] (one async mutex per database: graph creation, every
//! definition change and every collection drop hold it, so two changes never validate
//! against the same old state), the writes of a definition document ([`insert`],
//! [`replace`], [`remove`]), the creation of `_graphs` with the first graph, and
//! [`check_droppable`] (403/1942 for a collection a graph uses).
//!
//! What it is not: the rules of a change (`rules.rs`) or reading definitions
//! (`quince_ops::graph`).
//!
//! Invariants: `_graphs` writes always wait for sync (a definition acknowledged survives a
//! crash), whatever the request's `waitForSync`, which only chooses the status; a definition
//! is changed only by a caller that holds the database's lock; `_graphs` is a system document
//! collection.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use quince_errors::{ArangoError, Result, GRAPH_MUST_NOT_DROP_COLLECTION};
use quince_ops::graph::{list_graphs, GraphDefinition, GRAPHS_COLLECTION};
use quince_ops::{
    CollectionOps, CollectionType, CreateCollection, DatabaseOps, Durability, WriteKind,
    WriteOptions, WriteRequest,
};
use serde_json::{Map, Value};
use tokio::sync::{Mutex, OwnedMutexGuard};

/// One lock per database id, made on first use.
static LOCKS: LazyLock<parking_lot::Mutex<HashMap<u64, Arc<Mutex<()>>>>> =
    LazyLock::new(Default::default);

/// Waits for the lock on `database`'s graph definitions (held across the engine calls and the
/// wait for durability of one change).
pub(crate) async fn definitions_lock(database: &dyn DatabaseOps) -> OwnedMutexGuard<()> {
    let lock = Arc::clone(LOCKS.lock().entry(database.id()).or_default());
    lock.lock_owned().await
}

/// A written definition: its new `_rev`, and the handle that resolves once it is durable.
pub(crate) struct Written {
    pub rev: String,
    pub durability: Option<Durability>,
}

/// `_graphs`, created (a system document collection) when `create` and it does not exist.
fn graphs_collection(database: &dyn DatabaseOps, create: bool) -> Result<Arc<dyn CollectionOps>> {
    match database.collection(GRAPHS_COLLECTION) {
        Ok(collection) => Ok(collection),
        Err(e) if create && e.is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND) => database
            .create_collection(CreateCollection {
                name: GRAPHS_COLLECTION.to_owned(),
                kind: CollectionType::Document,
                wait_for_sync: Some(true),
                is_system: true,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            }),
        Err(e) => Err(e),
    }
}

fn synced() -> WriteOptions {
    WriteOptions {
        wait_for_sync: true,
        ..WriteOptions::default()
    }
}

fn write(collection: &dyn CollectionOps, request: WriteRequest) -> Result<Written> {
    let mut results = collection.write(request);
    let outcome = results
        .items
        .pop()
        .expect("a one-item request has one result")?;
    Ok(Written {
        rev: outcome.rev,
        durability: results.durability,
    })
}

/// Stores a new graph (409/1925 when one of that name exists).
pub(crate) fn insert(database: &dyn DatabaseOps, graph: &GraphDefinition) -> Result<Written> {
    let collection = graphs_collection(database, true)?;
    let request = WriteRequest::new(WriteKind::Insert, vec![graph.to_document()], synced());
    write(&*collection, request).map_err(|e| {
        if e.is(quince_errors::ARANGO_UNIQUE_CONSTRAINT_VIOLATED) {
            ArangoError::with_message(
                quince_errors::GRAPH_DUPLICATE,
                format!("graph already exists: graph '{}'", graph.name),
            )
        } else {
            e
        }
    })
}

/// Replaces a stored graph's definition.
pub(crate) fn replace(database: &dyn DatabaseOps, graph: &GraphDefinition) -> Result<Written> {
    let collection = graphs_collection(database, false)?;
    let Value::Object(document) = graph.to_document() else {
        unreachable!("a definition's document is an object");
    };
    let request = WriteRequest::one(WriteKind::Replace, &graph.name, document, synced());
    write(&*collection, request)
}

/// Removes a stored graph.
pub(crate) fn remove(database: &dyn DatabaseOps, name: &str) -> Result<Written> {
    let collection = graphs_collection(database, false)?;
    let request = WriteRequest::one(WriteKind::Remove, name, Map::new(), synced());
    write(&*collection, request)
}

/// 403/1942 when a graph of `database` uses `collection` (the caller holds the lock, so no
/// graph can start using it before the drop).
pub(crate) fn check_droppable(database: &dyn DatabaseOps, collection: &str) -> Result<()> {
    for (graph, _) in list_graphs(database)? {
        let role = if graph.orphan_collections.iter().any(|c| c == collection) {
            "an orphan collection"
        } else if graph.edge_collections().iter().any(|c| c == collection) {
            "an edge collection"
        } else if graph.vertex_collections().iter().any(|c| c == collection) {
            "a vertex collection"
        } else {
            continue;
        };
        return Err(ArangoError::with_message(
            GRAPH_MUST_NOT_DROP_COLLECTION,
            format!(
                "must not drop collection while part of graph: collection '{collection}' is {role} inside graph '{}'",
                graph.name
            ),
        ));
    }
    Ok(())
}

/// Drops each collection of `candidates` that exists and that no graph of `database` uses
/// any more (the graph that let go of them is already stored without them); the names
/// dropped, so that their grants go with them.
pub(crate) fn drop_unused(
    database: &dyn DatabaseOps,
    candidates: &[String],
) -> Result<Vec<String>> {
    let graphs = list_graphs(database)?;
    let mut dropped = Vec::new();
    for name in candidates {
        if graphs.iter().any(|(graph, _)| graph.uses_collection(name)) || dropped.contains(name) {
            continue;
        }
        match database.drop_collection(name, false) {
            Ok(_) => dropped.push(name.clone()),
            Err(e) if e.is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(dropped)
}
