//! Helpers for the query tests over an engine: a collection made with defaults, documents
//! inserted (every one must succeed), and a query run to its end with its results and outcome.

#![allow(dead_code)]

use std::sync::Arc;

use quince_aql::{prepare, Control, Outcome, QueryOptions};
use quince_ops::{
    CollectionOps, CollectionType, CreateCollection, DatabaseOps, WriteKind, WriteOptions,
    WriteRequest,
};
use serde_json::{Map, Value};

/// A create request for a document collection with defaults.
pub fn request(name: &str) -> CreateCollection {
    CreateCollection {
        name: name.into(),
        kind: CollectionType::Document,
        wait_for_sync: None,
        is_system: false,
        key_options: None,
        journal_size: None,
        schema: None,
        computed_values: None,
        cache_enabled: None,
    }
}

/// A new document collection of `db`.
pub fn create(db: &Arc<dyn DatabaseOps>, name: &str) -> Arc<dyn CollectionOps> {
    db.create_collection(request(name)).unwrap()
}

/// Inserts `docs`; every insert must succeed.
pub fn insert(c: &Arc<dyn CollectionOps>, docs: Vec<Value>) {
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(results.items.iter().all(|r| r.is_ok()));
}

/// Runs `query` with `binds` (an object) to its end: its results and outcome.
pub fn run_with(
    db: &Arc<dyn DatabaseOps>,
    query: &str,
    binds: Value,
) -> quince_errors::Result<(Vec<Value>, Outcome)> {
    let binds: Map<String, Value> = binds.as_object().cloned().unwrap_or_default();
    let prepared = prepare(Arc::clone(db), query, binds, QueryOptions::default())?;
    let mut out = Vec::new();
    let outcome = prepared.run(Control::new(None), None, &mut |v| {
        out.push(v);
        Ok(true)
    })?;
    Ok((out, outcome))
}

/// The results of `query` with `binds`; panics with the error if it fails.
pub fn results(db: &Arc<dyn DatabaseOps>, query: &str, binds: Value) -> Vec<Value> {
    match run_with(db, query, binds) {
        Ok((out, _)) => out,
        Err(e) => panic!("{query}: {e:?}"),
    }
}
