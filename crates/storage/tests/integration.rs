//! Every integration test of `quince-storage` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-storage --test integration NAME::`).
//! Binaries of their own, because they change the whole process:
//! `index_memory.rs` (installs a counting global allocator).
//! `many_datafiles.rs` (lowers the process's descriptor limit).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

// Helpers the files share, compiled once.
mod common;

#[path = "backup_image.rs"]
mod backup_image;
#[path = "basic.rs"]
mod basic;
#[path = "close_waits_for_upkeep.rs"]
mod close_waits_for_upkeep;
#[path = "compaction.rs"]
mod compaction;
#[path = "crafted_files.rs"]
mod crafted_files;
#[path = "damaged_journal.rs"]
mod damaged_journal;
#[path = "deferred_sync.rs"]
mod deferred_sync;
#[path = "enospc.rs"]
mod enospc;
#[path = "failed_fsync.rs"]
mod failed_fsync;
#[path = "figures_journals.rs"]
mod figures_journals;
#[path = "group_commit.rs"]
mod group_commit;
#[path = "group_multi.rs"]
mod group_multi;
#[path = "group_salvage.rs"]
mod group_salvage;
#[path = "group_single.rs"]
mod group_single;
#[path = "handoff_crash.rs"]
mod handoff_crash;
#[path = "index_model.rs"]
mod index_model;
#[path = "meta.rs"]
mod meta;
#[path = "missing_datafile.rs"]
mod missing_datafile;
#[path = "model.rs"]
mod model;
#[path = "no_fsync_under_writer_lock.rs"]
mod no_fsync_under_writer_lock;
#[path = "part_items.rs"]
mod part_items;
#[path = "restart_time.rs"]
mod restart_time;
#[path = "rotation.rs"]
mod rotation;
#[path = "rotation_timing.rs"]
mod rotation_timing;
#[path = "salvage.rs"]
mod salvage;
#[path = "scan_beside_compaction.rs"]
mod scan_beside_compaction;
#[path = "seal_stall.rs"]
mod seal_stall;
#[path = "torn_tail.rs"]
mod torn_tail;
#[path = "trx_model.rs"]
mod trx_model;
