//! Every integration test of `quince-meta` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-meta --test integration NAME::`).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

// Helpers the files share, compiled once.
mod support;

#[path = "conformance.rs"]
mod conformance;
#[path = "etcd_failover.rs"]
mod etcd_failover;
#[path = "etcd_store.rs"]
mod etcd_store;
