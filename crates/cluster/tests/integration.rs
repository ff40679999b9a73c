//! Every integration test of `quince-cluster` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-cluster --test integration NAME::`).
//! A binary of its own: `simulation.rs` (its modules name each other from the crate's root).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

// Helpers the files share, compiled once.
mod dbservers;
mod support;

#[path = "coordinator.rs"]
mod coordinator;
#[path = "dbserver_replication.rs"]
mod dbserver_replication;
#[path = "dbserver_transactions.rs"]
mod dbserver_transactions;
#[path = "supervision.rs"]
mod supervision;
