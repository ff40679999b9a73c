//! [`Context`]: what every part of a coordinator shares: the node, the Plan cache, the router
//! to shard leaders, the key blocks and the time bounds.
//!
//! What it is not: logic; each concern has its own module.
//!
//! Invariants: one context per coordinator; it outlives every handle the engine gives out
//! (handles hold an `Arc` to it).

use std::sync::Arc;
use std::time::Duration;

use quince_errors::{ArangoError, CLUSTER_AGENCY_COMMUNICATION_FAILED};
use quince_meta::MetaError;

use super::keys::KeyBlocks;
use super::plan_cache::PlanCache;
use super::shard_requests::Router;
use super::transaction::Registry;
use crate::node::Node;

/// Time bounds of a coordinator.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// How long DDL waits for DB servers to report what the Plan asks (shards' leaders in
    /// Current; with `waitForSyncReplication` every copy in sync).
    pub ddl: Duration,
    /// How long a request to a shard is retried while its leader cannot be reached or refuses
    /// to lead (a failover takes up to about 15 s).
    pub leader_retry: Duration,
    /// How long a request to a DB server may take.
    pub request: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            ddl: Duration::from_secs(60),
            leader_retry: Duration::from_secs(30),
            request: Duration::from_secs(120),
        }
    }
}

/// The shared state (see the module documentation).
pub struct Context {
    /// This member.
    pub node: Arc<Node>,
    /// The Plan view.
    pub cache: Arc<PlanCache>,
    /// Requests to shard leaders.
    pub router: Router,
    /// Generated keys (and transaction ids).
    pub keys: Arc<KeyBlocks>,
    /// The stream transactions this coordinator began.
    pub transactions: Arc<Registry>,
    /// The time bounds.
    pub timeouts: Timeouts,
}

/// A metadata store failure as the client sees it (1492).
pub fn agency_error(error: MetaError) -> ArangoError {
    ArangoError::with_message(
        CLUSTER_AGENCY_COMMUNICATION_FAILED,
        format!("agency operation failed: {error}"),
    )
}
