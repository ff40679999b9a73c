//! Removing a vertex (or an edge) through gharial: the document and every edge that names
//! it in `_from` or `_to`, in one stream transaction.
//!
//! What it is: [`remove`]. The edge collections searched are the graph's own and every edge
//! collection that any graph of the database defines with the document's collection among
//! its `from` or `to` (ArangoDB's rule: an edge of another graph sharing the vertex
//! collection goes too). Edges are found through each edge collection's edge index
//! (`EDGE_INDEX_ID`, both directions), not by a scan.
//!
//! What it is not: a recursive delete (an edge pointing at a removed edge stays), or a
//! check of the graph's constraints (removals need none).
//!
//! Invariants: on an engine with stream transactions every write happens inside one, so a
//! crash or an error leaves all or none of them (an error aborts it); on an engine without
//! them (the fake engine answers 1653) the writes run one by one. The document's own
//! removal carries the request's options (`If-Match`, `returnOld`); its failure (404/1202,
//! 412/1200) fails the whole request and removes nothing.

use std::sync::Arc;

use quince_errors::{
    Result, ARANGO_DATA_SOURCE_NOT_FOUND, ARANGO_DOCUMENT_NOT_FOUND,
    TRANSACTION_DISALLOWED_OPERATION,
};
use quince_ops::graph::{list_graphs, GraphDefinition};
use quince_ops::{
    Beginner, CollectionType, DatabaseOps, Durability, EdgeDirection, IndexLookup,
    TransactionOptions, WriteKind, WriteOptions, WriteOutcome, WriteRequest, EDGE_INDEX_ID,
};
use serde_json::{json, Map};

/// What a removal did.
pub(super) struct Removed {
    /// The document's own removal.
    pub outcome: WriteOutcome,
    /// Resolve once every write is durable (empty when none waits for sync).
    pub durabilities: Vec<Durability>,
}

/// The edge collections that may hold edges naming a document of `collection`.
fn edge_collections(
    database: &dyn DatabaseOps,
    graph: &GraphDefinition,
    collection: &str,
) -> Result<Vec<String>> {
    let mut names = graph.edge_collections();
    for (other, _) in list_graphs(database)? {
        for definition in other.edge_definitions {
            let names_it = definition
                .from
                .iter()
                .chain(&definition.to)
                .any(|c| c == collection);
            if names_it && !names.contains(&definition.collection) {
                names.push(definition.collection);
            }
        }
    }
    names.retain(|name| {
        database
            .collection(name)
            .is_ok_and(|c| c.kind() == CollectionType::Edge)
    });
    Ok(names)
}

/// Removes `collection/key` and the edges naming it.
pub(super) fn remove(
    database: &dyn DatabaseOps,
    graph: &GraphDefinition,
    collection: &str,
    key: &str,
    options: WriteOptions,
) -> Result<Removed> {
    let edges = edge_collections(database, graph, collection)?;
    let mut write = vec![collection.to_owned()];
    write.extend(edges.iter().filter(|name| *name != collection).cloned());
    let begun = database.begin_transaction(TransactionOptions {
        write,
        wait_for_sync: options.wait_for_sync,
        // Opened and closed by this request: it takes none of the clients' slots.
        begun_by: Beginner::request(),
        ..TransactionOptions::default()
    });
    let transaction = match begun {
        Ok(transaction) => transaction,
        Err(e) if e.is(TRANSACTION_DISALLOWED_OPERATION) => {
            return remove_in(database, collection, key, &edges, options);
        }
        Err(e) => return Err(e),
    };
    let view: Arc<dyn DatabaseOps> = transaction.database();
    let inside = WriteOptions {
        wait_for_sync: false,
        ..options
    };
    match remove_in(&*view, collection, key, &edges, inside) {
        Ok(mut removed) => {
            removed.durabilities.extend(transaction.commit()?);
            Ok(removed)
        }
        Err(e) => {
            // The transaction's writes are dropped; the first error is the answer.
            let _ = transaction.abort();
            Err(e)
        }
    }
}

/// The writes of a removal, in `database` (a transaction's view, or the plain database).
fn remove_in(
    database: &dyn DatabaseOps,
    collection: &str,
    key: &str,
    edges: &[String],
    options: WriteOptions,
) -> Result<Removed> {
    let target = database.collection(collection)?;
    let edges_sync = options.wait_for_sync;
    let mut results = target.write(WriteRequest::one(
        WriteKind::Remove,
        key,
        Map::new(),
        options,
    ));
    let outcome = results
        .items
        .pop()
        .expect("a one-item request has one result")?;
    let mut durabilities: Vec<Durability> = results.durability.into_iter().collect();
    let id = format!("{}/{key}", target.name());
    for name in edges {
        let edge_collection = match database.collection(name) {
            Ok(c) => c,
            Err(e) if e.is(ARANGO_DATA_SOURCE_NOT_FOUND) => continue,
            Err(e) => return Err(e),
        };
        let mut keys: Vec<String> = Vec::new();
        for direction in [EdgeDirection::Out, EdgeDirection::In] {
            let lookup = IndexLookup::Edge {
                direction,
                vertex: id.clone(),
            };
            edge_collection.index_lookup(EDGE_INDEX_ID, &lookup, &mut |hit| {
                if !keys.iter().any(|k| k == hit.key) {
                    keys.push(hit.key.to_owned());
                }
                true
            })?;
        }
        if keys.is_empty() {
            continue;
        }
        let selectors = keys.iter().map(|k| json!({ "_key": k })).collect();
        let edge_options = WriteOptions {
            wait_for_sync: edges_sync,
            ..WriteOptions::default()
        };
        let results = edge_collection.write(WriteRequest::new(
            WriteKind::Remove,
            selectors,
            edge_options,
        ));
        for item in results.items {
            match item {
                Ok(_) => {}
                // Removed meanwhile (or the document itself, an edge naming itself).
                Err(e) if e.is(ARANGO_DOCUMENT_NOT_FOUND) => {}
                Err(e) => return Err(e),
            }
        }
        durabilities.extend(results.durability);
    }
    Ok(Removed {
        outcome,
        durabilities,
    })
}
