//! Every integration test of `quince-api` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-api --test integration NAME::`).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `every_test_file_is_built` fails otherwise.

// Helpers the files share, compiled once.
mod coordinator_support;
mod support;

#[path = "admin.rs"]
mod admin;
#[path = "admin_hooks.rs"]
mod admin_hooks;
#[path = "cluster_endpoints.rs"]
mod cluster_endpoints;
#[path = "coordinator_over_api.rs"]
mod coordinator_over_api;
#[path = "coordinator_queries.rs"]
mod coordinator_queries;
#[path = "coordinator_transactions.rs"]
mod coordinator_transactions;
#[path = "databases.rs"]
mod databases;
#[path = "import.rs"]
mod import;
#[path = "indexes.rs"]
mod indexes;
#[path = "jobs.rs"]
mod jobs;
#[path = "pipeline.rs"]
mod pipeline;
#[path = "replication.rs"]
mod replication;
#[path = "users.rs"]
mod users;

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
