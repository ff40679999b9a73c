//! Every integration test of `quince-api` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-api --test integration NAME::`).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

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
