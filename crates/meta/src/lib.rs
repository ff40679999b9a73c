//! `quince-meta`: the metadata store a Quince cluster keeps its Plan, Current, Target and
//! Health in (ArangoDB calls it the agency).
//!
//! What it is: one interface, [`MetaStore`], with etcd's semantics: keys are `/`-separated tree
//! paths; every change gets a store-wide revision; a transaction applies its operations only
//! when all its preconditions hold ([`Txn`]); a watch delivers every change under a prefix
//! from a given revision on, in order ([`Watch`]); a key may be bound to a lease that expires
//! unless kept alive ([`MetaStore::grant_lease`]); an election over leases picks one leader
//! ([`election`]). Implementations: [`MemoryStore`], in-process and deterministic (time is a
//! [`Clock`] the caller may drive), for simulation tests; and [`EtcdStore`], etcd over its v3
//! gRPC API (tonic, with the messages declared in [`etcd_wire`]), for real clusters: every call bounded by a timeout (then
//! [`MetaError::Unavailable`]), failing over between the etcd members it was given, watches
//! resumed after a broken stream (`etcd.rs`). The same scenarios run against both
//! (`tests/conformance.rs`).
//!
//! What it is not: a consensus protocol (etcd is the consensus), or the cluster's layout (the
//! `quince-cluster` crate names the keys and their values).
//!
//! Invariants (every implementation):
//! - revisions grow by one per successful transaction that changed something, and a key's
//!   `mod_revision` is the revision of its last change. Where they start differs: an empty
//!   `MemoryStore` is at 0 (its first change is 1), a fresh etcd at 1 (its first change is 2);
//!   callers compare revisions, never assume their values;
//! - a watch from revision `r` sees every change with revision `>= r` under its prefix exactly
//!   once, in revision order, or fails with [`MetaError::Compacted`];
//! - a lease's keys disappear together (one revision, delete events) when it expires or is
//!   revoked; an expired lease cannot be kept alive again;
//! - calls block. [`EtcdStore`] runs its calls on a runtime of its own, so a call made on a
//!   worker thread of another async runtime works, but blocks that thread for up to the call
//!   timeout: async callers should use their runtime's `spawn_blocking`.

pub mod election;
mod etcd;
pub mod etcd_process;
pub mod etcd_wire;
mod memory;
mod store;

pub use etcd::{EtcdOptions, EtcdStore};
pub use memory::{Clock, ManualClock, MemoryStore, SystemClock};
pub use store::{
    Compare, Entry, Event, EventKind, LeaseId, MetaError, MetaStore, Op, Revision, Snapshot,
    StoreMember, Txn, TxnResult, Watch,
};
