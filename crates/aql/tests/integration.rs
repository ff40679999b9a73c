//! Every integration test of `quince-aql` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-aql --test integration NAME::`).
//! Binaries of their own, because they change the whole process:
//! `bounds.rs` (installs a counting global allocator).
//! `graph_queries.rs` (installs a counting global allocator).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

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
