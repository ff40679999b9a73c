//! The harness shared by the DB server integration tests (`dbserver_replication.rs`,
//! `dbserver_transactions.rs`): two or three DB servers over one `MemoryStore`, each with a
//! real local engine in its own temporary directory, talking through the in-process transport.
//! The Plan is written here as a coordinator would.
//!
//! Not a coordinator and not a server: tests drive the Plan and the engines themselves.
//! Invariants: member `i` is server `id(i)`; every member is registered with the transport;
//! dropping the [`Cluster`] stops every server before it shuts its engine down.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_cluster::dbserver::{start_with_transport, DbServer, LocalTransport, Transport};
use quince_cluster::in_sync::{self, ShardId};
use quince_cluster::layout::{
    encode, CollectionPlan, DatabasePlan, Layout, ReplicationMode, Role, ShardPlan,
};
use quince_cluster::node::{ClusterConfig, Node};
use quince_db::{Catalog, DbConfig};
use quince_meta::{MemoryStore, MetaStore};
use quince_ops::{CollectionOps, Engine, WriteKind, WriteOptions, WriteRequest};
use quince_storage::io::OsFileIo;
use serde_json::{json, Value};

pub const DB: &str = "shop";
pub const CID: u64 = 100;

pub struct Member {
    pub server: Arc<DbServer>,
    pub node: Arc<Node>,
    pub catalog: Arc<Catalog>,
    pub _dir: tempfile::TempDir,
}

pub struct Cluster {
    pub memory: MemoryStore,
    pub store: Arc<dyn MetaStore>,
    pub layout: Layout,
    pub transport: Arc<LocalTransport>,
    pub members: Vec<Member>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for member in &self.members {
            member.server.stop();
            member.node.leave();
        }
        for member in &self.members {
            let _ = member.catalog.shutdown();
        }
    }
}

pub fn id(i: usize) -> String {
    format!("PRMR-{i}")
}

/// `n` DB servers that call each other through the in-process transport.
pub fn cluster(n: usize) -> Cluster {
    let transport = LocalTransport::new();
    cluster_over(n, transport.clone(), transport)
}

/// `n` DB servers registered with `transport` that send their own requests through
/// `outgoing` (a wrapper around `transport`, or `transport` itself).
pub fn cluster_over(
    n: usize,
    transport: Arc<LocalTransport>,
    outgoing: Arc<dyn Transport>,
) -> Cluster {
    let memory = MemoryStore::default();
    let store: Arc<dyn MetaStore> = Arc::new(memory.clone());
    let layout = Layout::default();
    let mut members = Vec::new();
    for i in 0..n {
        let mut config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
        config.follower_timeout = Duration::from_millis(500);
        let node = Node::join(Arc::clone(&store), config, id(i), "3.12.4", "quince").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(DbConfig {
            default_journal_size: 1024 * 1024,
            sync_interval: Duration::from_millis(20),
            ..DbConfig::new(dir.path().to_path_buf(), Arc::new(OsFileIo::new()))
        })
        .unwrap();
        let local: Arc<dyn Engine> = Arc::clone(&catalog) as Arc<dyn Engine>;
        let server = start_with_transport(Arc::clone(&node), local, outgoing.clone()).unwrap();
        transport.register(&server);
        members.push(Member {
            server,
            node,
            catalog,
            _dir: dir,
        });
    }
    store
        .put(
            &layout.database(DB),
            &encode(&DatabasePlan {
                name: DB.into(),
                id: 2,
                sharding: String::new(),
                replication_factor: 2,
                write_concern: 1,
            }),
        )
        .unwrap();
    Cluster {
        memory,
        store,
        layout,
        transport,
        members,
    }
}

/// Polls `condition` until it holds (60 s at most: a catch-up of tens of thousands of
/// documents on a loaded 2-core machine takes several seconds).
pub fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Cluster {
    /// Plans collection `CID` with these shards: (name, leader, followers).
    pub fn plan(
        &self,
        shards: &[(&str, usize, &[usize])],
        mode: ReplicationMode,
        write_concern: u32,
        indexes: Vec<Value>,
    ) {
        let plan = CollectionPlan {
            id: CID,
            name: "orders".into(),
            kind: 2,
            number_of_shards: shards.len() as u32,
            shard_keys: vec!["_key".into()],
            replication_factor: 2,
            write_concern,
            sharding_strategy: "hash".into(),
            distribute_shards_like: None,
            replication_mode: mode,
            shards: shards.iter().map(|s| s.0.to_string()).collect(),
            properties: json!({"waitForSync": false}),
            indexes,
        };
        self.store
            .put(&self.layout.collection(DB, CID), &encode(&plan))
            .unwrap();
        for (shard, leader, followers) in shards {
            self.set_shard(shard, *leader, followers, 1);
        }
    }

    /// Plans collection `CID` with the one shard `shard`, led by member 0 and followed by
    /// member 1, and waits until both hold it in sync.
    pub fn plan_in_sync(&self, shard: &str, mode: ReplicationMode, write_concern: u32) {
        self.plan(&[(shard, 0, &[1])], mode, write_concern, vec![]);
        self.wait_shard(1, shard);
        self.wait_in_sync(shard, &[0, 1]);
    }

    pub fn set_shard(&self, shard: &str, leader: usize, followers: &[usize], epoch: u64) {
        let plan = ShardPlan {
            leader: id(leader),
            followers: followers.iter().map(|f| id(*f)).collect(),
            epoch,
        };
        self.store
            .put(&self.layout.shard_plan(DB, CID, shard), &encode(&plan))
            .unwrap();
    }

    pub fn in_sync(&self, shard: &str) -> Vec<String> {
        in_sync::read_shard(&*self.store, &self.layout, &ShardId::new(DB, CID, shard))
            .unwrap()
            .current
            .map(|c| c.in_sync)
            .unwrap_or_default()
    }

    pub fn wait_in_sync(&self, shard: &str, members: &[usize]) {
        let want: Vec<String> = members.iter().map(|m| id(*m)).collect();
        eventually(&format!("{shard} is in sync on {want:?}"), || {
            let mut have = self.in_sync(shard);
            have.sort();
            have == want
        });
    }

    /// Shard `shard` through member `i`'s served engine.
    pub fn served(&self, i: usize, shard: &str) -> Arc<dyn CollectionOps> {
        let engine = self.members[i].server.engine();
        engine.database(DB).unwrap().collection(shard).unwrap()
    }

    /// Shard `shard` in member `i`'s local engine, if it exists.
    pub fn local(&self, i: usize, shard: &str) -> Option<Arc<dyn CollectionOps>> {
        let catalog: &dyn Engine = &*self.members[i].catalog;
        catalog.database(DB)?.collection(shard).ok()
    }

    pub fn wait_shard(&self, i: usize, shard: &str) -> Arc<dyn CollectionOps> {
        eventually(&format!("{shard} exists on member {i}"), || {
            self.local(i, shard).is_some()
        });
        self.local(i, shard).unwrap()
    }
}

/// Every document of a collection as (key, rev, body), sorted.
pub fn contents(collection: &dyn CollectionOps) -> Vec<(String, String, Value)> {
    let mut all = Vec::new();
    collection
        .scan(&mut |document| {
            let value: Value = serde_json::from_slice(&document.json).unwrap();
            all.push((
                value["_key"].as_str().unwrap().to_owned(),
                document.rev,
                value,
            ));
            true
        })
        .unwrap();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

pub fn write(
    collection: &dyn CollectionOps,
    kind: WriteKind,
    items: Vec<Value>,
    options: WriteOptions,
) -> quince_errors::Result<Vec<quince_errors::Result<quince_ops::WriteOutcome>>> {
    collection
        .write(WriteRequest::new(kind, items, options))
        .settle()
}

pub fn insert(collection: &dyn CollectionOps, items: Vec<Value>) -> Vec<quince_ops::WriteOutcome> {
    write(
        collection,
        WriteKind::Insert,
        items,
        WriteOptions::default(),
    )
    .unwrap()
    .into_iter()
    .map(|r| r.unwrap())
    .collect()
}
