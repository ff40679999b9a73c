//! A timing, not a test of behaviour (ignored by default; machines differ, so nothing is
//! asserted about speed): what a schema and computed values add to an insert. Batches of 1,000
//! ten-attribute documents through the write path into four collections: plain, with a strict
//! schema naming every attribute, with one computed value, and with both; best of five rounds,
//! per document. Run by hand on one machine:
//! `cargo test --release -p quince-db --test schema_timing -- --ignored --nocapture`

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use common::{create, opts};
use quince_db::{Catalog, Collection, DbConfig};
use quince_storage::io::OsFileIo;
use serde_json::{json, Map, Value};

const BATCH: usize = 1_000;
const BATCHES: usize = 20;

fn collection(catalog: &Catalog, name: &str, schema: bool, computed: bool) -> Arc<Collection> {
    let mut request = create(name);
    if schema {
        let properties: Map<String, Value> = (1..=10)
            .map(|i| {
                (
                    format!("test{i}"),
                    json!({"type": "string", "maxLength": 64}),
                )
            })
            .collect();
        request.schema = Some(json!({
            "rule": {"type": "object", "properties": properties,
                     "required": ["test1", "test2"], "additionalProperties": false},
            "level": "strict", "message": "bad document",
        }));
    }
    if computed {
        request.computed_values = Some(json!([{
            "name": "test10",
            "expression": "RETURN CONCAT(@doc.test1, '-', @doc.test2)",
            "overwrite": true,
        }]));
    }
    catalog
        .database("_system")
        .unwrap()
        .create_collection(request)
        .unwrap()
}

#[test]
#[ignore = "a timing: run by hand with --ignored --nocapture"]
fn what_schema_and_computed_values_cost_per_insert() {
    let dir = tempfile::tempdir().unwrap();
    let config = DbConfig::new(dir.path().to_path_buf(), Arc::new(OsFileIo::new()));
    let catalog = Catalog::open(config).unwrap();
    let doc: Value = json!({
        "test1": "some test value", "test2": "some test value", "test3": "some test value",
        "test4": "some test value", "test5": "some test value", "test6": "some test value",
        "test7": "some test value", "test8": "some test value", "test9": "some test value",
        "test10": "some test value"
    });
    let cases = [
        ("plain", false, false),
        ("schema", true, false),
        ("computed", false, true),
        ("both", true, true),
    ];
    for (name, schema, computed) in cases {
        let c = collection(&catalog, name, schema, computed);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..BATCHES {
                let (items, _) = c.insert_many_deferred(vec![doc.clone(); BATCH], &opts());
                assert!(items.iter().all(Result::is_ok));
            }
            best = best.min(t.elapsed().as_secs_f64() / (BATCH * BATCHES) as f64);
        }
        println!("{name:>8}: {:.2} µs per insert", best * 1e6);
    }
    catalog.shutdown().unwrap();
}
