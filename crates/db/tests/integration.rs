//! Every integration test of `quince-db` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-db --test integration NAME::`).
//! Binaries of their own, because they change the whole process:
//! `descriptor_limit.rs` (lowers the process's descriptor limit).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

// Helpers the files share, compiled once.
mod common;

#[path = "atomic_writes_after_crash.rs"]
mod atomic_writes_after_crash;
#[path = "bounded_open_files.rs"]
mod bounded_open_files;
#[path = "catalog_debris.rs"]
mod catalog_debris;
#[path = "collections_and_databases.rs"]
mod collections_and_databases;
#[path = "concurrent_updates.rs"]
mod concurrent_updates;
#[path = "crash_on_simulated_disk.rs"]
mod crash_on_simulated_disk;
#[path = "data_dir_lock.rs"]
mod data_dir_lock;
#[path = "deferred_durability.rs"]
mod deferred_durability;
#[path = "document_hooks.rs"]
mod document_hooks;
#[path = "drop_collection.rs"]
mod drop_collection;
#[path = "edge_index.rs"]
mod edge_index;
#[path = "full_disk.rs"]
mod full_disk;
#[path = "fulltext_index.rs"]
mod fulltext_index;
#[path = "geo_index.rs"]
mod geo_index;
#[path = "hot_backup.rs"]
mod hot_backup;
#[path = "index_restart_timing.rs"]
mod index_restart_timing;
#[path = "indexes.rs"]
mod indexes;
#[path = "insert_many.rs"]
mod insert_many;
#[path = "insert_texts.rs"]
mod insert_texts;
#[path = "keygen_after_crash.rs"]
mod keygen_after_crash;
#[path = "model_based_ops.rs"]
mod model_based_ops;
#[path = "ops_conformance.rs"]
mod ops_conformance;
#[path = "permissions.rs"]
mod permissions;
#[path = "restart_keeps_everything.rs"]
mod restart_keeps_everything;
#[path = "schema_and_computed.rs"]
mod schema_and_computed;
#[path = "schema_timing.rs"]
mod schema_timing;
#[path = "transactions.rs"]
mod transactions;
#[path = "ttl_expiry.rs"]
mod ttl_expiry;
#[path = "write_path_timing.rs"]
mod write_path_timing;
