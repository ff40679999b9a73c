//! `quince-cluster`: Quince as a sharded, replicated cluster of coordinators and DB servers
//! over a metadata store (`quince-meta`; etcd in production).
//!
//! What it is: the agency layout ([`layout`]), the sharding function ([`sharding`]), and (in
//! their own modules) the coordinator's implementation of the operations interface, shard
//! replication on DB servers, and supervision. `docs/cluster.md` describes the whole.
//!
//! What it is not: HTTP serving (the api crate serves both roles) or process management
//! (`quince start`, in the server crate).
//!
//! Invariants: every cluster-wide decision is a transaction on the metadata store guarded by
//! the revision or epoch it was based on; no acknowledged write depends on a local belief
//! about leadership alone.

pub mod admin;
pub mod coordinator;
pub mod dbserver;
pub mod in_sync;
pub mod layout;
pub mod node;
pub mod peers;
pub mod servers;
pub mod sharding;
pub mod supervision;
