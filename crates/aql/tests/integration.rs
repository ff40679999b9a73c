//! Every integration test of `quince-aql` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-aql --test integration NAME::`).
//! Binaries of their own, because they change the whole process:
//! `bounds.rs` (installs a counting global allocator).
//! `graph_queries.rs` (installs a counting global allocator).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `every_test_file_is_built` fails otherwise.

// Helpers the files share, compiled once.
mod common;
mod engine;
mod support;

#[path = "exec_smoke.rs"]
mod exec_smoke;
#[path = "functions.rs"]
mod functions;
#[path = "functions_doc.rs"]
mod functions_doc;
#[path = "functions_extreme.rs"]
mod functions_extreme;
#[path = "graph_algorithms.rs"]
mod graph_algorithms;
#[path = "indexed_functions.rs"]
mod indexed_functions;
#[path = "model.rs"]
mod model;
#[path = "parse.rs"]
mod parse;
#[path = "parse_graph.rs"]
mod parse_graph;
#[path = "parse_roundtrip.rs"]
mod parse_roundtrip;
#[path = "queries.rs"]
mod queries;
#[path = "query_info.rs"]
mod query_info;
#[path = "shard_conditions.rs"]
mod shard_conditions;
#[path = "value.rs"]
mod value;

/// A test file that is neither a module here nor a `[[test]]` would never run.
#[test]
fn every_test_file_is_built() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let here = include_str!("integration.rs");
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".rs") || name == "integration.rs" {
            continue;
        }
        let module = format!("#[path = \"{name}\"]");
        let binary = format!("path = \"tests/{name}\"");
        assert!(
            here.contains(&module) || manifest.contains(&binary),
            "tests/{name} is not built: add it to tests/integration.rs"
        );
    }
}
