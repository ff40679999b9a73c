//! Test support shared by the supervision tests and the simulation: a cluster's metadata in a
//! [`MemoryStore`] on a [`ManualClock`], with servers registered, heartbeats on leases, and
//! one collection's shards planned.
//!
//! Not a server: nothing here replicates; tests drive the metadata functions themselves.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quince_cluster::in_sync::ShardId;
use quince_cluster::layout::{
    encode, CollectionPlan, Heartbeat, Layout, ReplicationMode, Role, ServerRecord, ShardPlan,
};
use quince_meta::{Clock, LeaseId, ManualClock, MemoryStore, MetaError, MetaStore, Op, Txn};

/// The wall-clock time simulated time 0 stands for (2026-01-01T00:00:00Z).
pub const EPOCH_MS: u64 = 1_767_225_600_000;

/// Heartbeat lease time to live (`--cluster.heartbeat-ttl`).
pub const HEARTBEAT_TTL: Duration = Duration::from_secs(3);

/// A store and the clock that drives it.
pub struct Meta {
    pub clock: Arc<ManualClock>,
    pub store: MemoryStore,
    pub layout: Layout,
}

impl Meta {
    pub fn new() -> Meta {
        let clock = Arc::new(ManualClock::default());
        Meta {
            store: MemoryStore::new(clock.clone()),
            clock,
            layout: Layout::default(),
        }
    }

    /// The wall-clock time of the simulated now.
    pub fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(EPOCH_MS) + self.clock.now()
    }

    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }
}

/// `PRMR-<n>`.
pub fn dbserver(n: usize) -> String {
    format!("PRMR-{n}")
}

/// Registers a server of `role`.
pub fn register(store: &dyn MetaStore, layout: &Layout, id: &str, role: Role, n: usize) {
    let record = ServerRecord {
        id: id.to_string(),
        role,
        endpoint: format!("tcp://127.0.0.1:{}", 8600 + n),
        short_name: format!("{}{n:04}", role.health_role()),
        version: "3.12.4".into(),
        engine: "quince".into(),
    };
    store
        .put(&layout.server_registered(id), &encode(&record))
        .unwrap();
}

/// Grants a heartbeat lease and writes the heartbeat on it.
pub fn heartbeat(
    store: &dyn MetaStore,
    layout: &Layout,
    id: &str,
    role: Role,
    started: u64,
) -> Result<LeaseId, MetaError> {
    let lease = store.grant_lease(HEARTBEAT_TTL)?;
    let beat = Heartbeat {
        endpoint: format!("tcp://{id}"),
        role,
        started,
    };
    store.txn(Txn::when(
        Vec::new(),
        vec![Op::Put {
            key: layout.heartbeat(id),
            value: encode(&beat),
            lease: Some(lease),
        }],
    ))?;
    Ok(lease)
}

/// The database and collection id [`plan_collection`] plans.
pub const DB: &str = "db";
/// See [`DB`].
pub const CID: u64 = 100;

/// Plans collection [`CID`] in database [`DB`] with one shard per entry of `placements`.
pub fn plan_collection(
    store: &dyn MetaStore,
    layout: &Layout,
    replication_factor: u32,
    write_concern: u32,
    mode: ReplicationMode,
    placements: &[ShardPlan],
) -> Vec<ShardId> {
    let (db, cid) = (DB, CID);
    let shards: Vec<String> = (0..placements.len())
        .map(|i| format!("s{}", cid + 1 + i as u64))
        .collect();
    let collection = CollectionPlan {
        id: cid,
        name: format!("c{cid}"),
        kind: 2,
        number_of_shards: placements.len() as u32,
        shard_keys: vec!["_key".into()],
        replication_factor,
        write_concern,
        sharding_strategy: "hash".into(),
        distribute_shards_like: None,
        replication_mode: mode,
        shards: shards.clone(),
        properties: serde_json::json!({}),
        indexes: Vec::new(),
    };
    store
        .put(&layout.collection(db, cid), &encode(&collection))
        .unwrap();
    shards
        .iter()
        .zip(placements)
        .map(|(shard, plan)| {
            store
                .put(&layout.shard_plan(db, cid, shard), &encode(plan))
                .unwrap();
            ShardId::new(db, cid, shard)
        })
        .collect()
}
