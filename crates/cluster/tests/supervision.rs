//! Supervision over the in-memory store: health judgement, failover, repair, maintenance,
//! fencing, and the runner thread.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_cluster::in_sync::{self, read_shard, ShardId};
use quince_cluster::layout::{
    decode, encode, HealthRecord, ReplicationMode, Role, ShardPlan, Status,
};
use quince_cluster::supervision::time::{iso8601, parse_iso8601};
use quince_cluster::supervision::{
    Supervision, SupervisionConfig, SupervisionRunner, Supervisor, TickError,
};
use quince_meta::{LeaseId, MemoryStore, MetaStore, Op, Txn};
use support::{dbserver, heartbeat, plan_collection, register, Meta, EPOCH_MS};

const SECOND: Duration = Duration::from_secs(1);

struct Cluster {
    meta: Meta,
    leases: Vec<Option<LeaseId>>,
    supervision: Supervision,
}

impl Cluster {
    /// `n` DB servers, each with a heartbeat.
    fn new(n: usize) -> Cluster {
        let meta = Meta::new();
        let mut leases = Vec::new();
        for i in 1..=n {
            register(&meta.store, &meta.layout, &dbserver(i), Role::Dbserver, i);
            leases.push(Some(
                heartbeat(&meta.store, &meta.layout, &dbserver(i), Role::Dbserver, 1).unwrap(),
            ));
        }
        let supervision = Supervision::new(
            Arc::new(meta.store.clone()),
            meta.layout.clone(),
            SupervisionConfig::default(),
            "CRDN-1".into(),
        );
        Cluster {
            meta,
            leases,
            supervision,
        }
    }

    /// Advances one second: live servers keep their leases alive, then supervision ticks.
    fn second(&mut self) -> quince_cluster::supervision::TickReport {
        self.meta.advance(SECOND);
        for lease in self.leases.iter().flatten() {
            self.meta.store.keep_alive(*lease).unwrap();
        }
        self.supervision.tick(self.meta.now(), None).unwrap()
    }

    fn crash(&mut self, n: usize) {
        self.leases[n - 1] = None;
    }

    fn restart(&mut self, n: usize, started: u64) {
        let lease = heartbeat(
            &self.meta.store,
            &self.meta.layout,
            &dbserver(n),
            Role::Dbserver,
            started,
        )
        .unwrap();
        self.leases[n - 1] = Some(lease);
    }

    fn health(&self, n: usize) -> HealthRecord {
        let entry = self.meta.store.get(&self.meta.layout.health(&dbserver(n)));
        decode(&entry.unwrap().expect("a health record").value).unwrap()
    }

    fn listed_failed(&self, n: usize) -> bool {
        let key = self.meta.layout.failed_server(&dbserver(n));
        self.meta.store.get(&key).unwrap().is_some()
    }

    /// One shard on servers `leader` then `followers`, all in sync at epoch 1.
    fn shard(&self, replication_factor: u32, leader: usize, followers: &[usize]) -> ShardId {
        let plan = ShardPlan {
            leader: dbserver(leader),
            followers: followers.iter().map(|f| dbserver(*f)).collect(),
            epoch: 1,
        };
        let (store, layout) = (&self.meta.store, &self.meta.layout);
        let shard = plan_collection(
            store,
            layout,
            replication_factor,
            1,
            ReplicationMode::Synchronous,
            std::slice::from_ref(&plan),
        )
        .remove(0);
        in_sync::report_leadership(store, layout, &shard, &plan.leader, 1).unwrap();
        for follower in &plan.followers {
            in_sync::grow(store, layout, &shard, &plan.leader, 1, follower).unwrap();
        }
        shard
    }

    fn plan(&self, shard: &ShardId) -> ShardPlan {
        read_shard(&self.meta.store, &self.meta.layout, shard)
            .unwrap()
            .plan
            .unwrap()
    }
}

#[test]
fn a_silent_server_goes_bad_then_failed_and_is_good_again_when_it_returns() {
    let mut cluster = Cluster::new(3);
    cluster.second();
    assert_eq!(cluster.health(2).status, Status::Good);
    assert_eq!(cluster.health(2).sync_status, "SERVING");
    assert_eq!(cluster.health(2).role, "DBServer");
    assert_eq!(cluster.health(2).short_name, "DBServer0002");
    cluster.crash(2);
    let crashed_at = EPOCH_MS + 1_000;
    let mut changes = Vec::new();
    for second in 2..=15u64 {
        let report = cluster.second();
        for (id, status) in report.health {
            assert_eq!(id, dbserver(2));
            changes.push((second, status));
        }
    }
    // The lease (3 s) ends at second 4; the tick at 4 is the first to miss it.
    assert_eq!(changes, vec![(9, Status::Bad), (14, Status::Failed)]);
    let record = cluster.health(2);
    assert_eq!(record.status, Status::Failed);
    assert_eq!(record.sync_status, "UNKNOWN");
    assert_eq!(record.last_acked_time, iso8601(crashed_at + 3_000));
    assert!(parse_iso8601(&record.last_acked_time).is_some());
    assert!(cluster.listed_failed(2));
    assert!(!cluster.listed_failed(1));
    assert_eq!(cluster.health(1).status, Status::Good);
    cluster.restart(2, 2);
    let report = cluster.second();
    assert_eq!(report.health, vec![(dbserver(2), Status::Good)]);
    assert_eq!(cluster.health(2).sync_status, "SERVING");
    assert!(!cluster.listed_failed(2), "removed when it came back");
}

#[test]
fn a_new_supervisor_keeps_counting_from_the_recorded_last_seen_time() {
    let mut cluster = Cluster::new(3);
    cluster.second();
    cluster.crash(3);
    for _ in 0..9 {
        cluster.second();
    }
    assert_eq!(cluster.health(3).status, Status::Bad);
    // Another coordinator takes over: it knows nothing in memory.
    cluster.supervision = Supervision::new(
        Arc::new(cluster.meta.store.clone()),
        cluster.meta.layout.clone(),
        SupervisionConfig::default(),
        "CRDN-2".into(),
    );
    let mut failed_at = None;
    for second in 11..=17 {
        let report = cluster.second();
        if report.health.contains(&(dbserver(3), Status::Failed)) {
            failed_at = Some(second);
        }
        assert_ne!(cluster.health(3).status, Status::Good, "still missing");
    }
    assert_eq!(failed_at, Some(14), "the same moment as without the change");
}

#[test]
fn a_failed_leader_is_replaced_by_a_good_in_sync_follower_after_the_grace_period() {
    let mut cluster = Cluster::new(4);
    let shard = cluster.shard(3, 1, &[2, 3]);
    // Follower 2 is in sync but BAD when the leader fails: 3 is promoted.
    cluster.crash(2);
    for _ in 0..3 {
        cluster.second();
    }
    cluster.crash(1);
    let crashed = cluster.meta.now();
    let mut promoted = None;
    for _ in 0..30 {
        let report = cluster.second();
        assert!(report.stuck.is_empty());
        if let Some((id, plan)) = report.failovers.into_iter().next() {
            assert_eq!(id, shard);
            promoted = Some((cluster.meta.now(), plan));
            break;
        }
    }
    let (at, plan) = promoted.expect("a failover");
    let config = SupervisionConfig::default();
    let took = at.duration_since(crashed).unwrap();
    assert!(
        took >= config.grace_period,
        "not before the grace period: {took:?}"
    );
    assert!(
        took <= config.grace_period + config.frequency + support::HEARTBEAT_TTL,
        "{took:?}"
    );
    assert_eq!(plan.leader, dbserver(3));
    assert_eq!(plan.followers, vec![dbserver(2), dbserver(1)]);
    assert_eq!(plan.epoch, 2);
    let current = read_shard(&cluster.meta.store, &cluster.meta.layout, &shard)
        .unwrap()
        .current
        .unwrap();
    assert_eq!(current.in_sync, vec![dbserver(3)]);
    let finished = cluster
        .meta
        .store
        .range(&format!(
            "{}/Target/Finished/",
            cluster.meta.layout.prefix()
        ))
        .unwrap();
    let job: serde_json::Value = serde_json::from_slice(&finished.entries[0].value).unwrap();
    assert_eq!(job["type"], "failedLeader");
    assert_eq!(job["fromServer"], dbserver(1));
    assert_eq!(job["toServer"], dbserver(3));
}

#[test]
fn a_failed_leader_without_a_good_in_sync_follower_stays() {
    let mut cluster = Cluster::new(3);
    let shard = cluster.shard(3, 1, &[]);
    // Followers planned, never caught up.
    let plan = ShardPlan {
        leader: dbserver(1),
        followers: vec![dbserver(2), dbserver(3)],
        epoch: 1,
    };
    let key = cluster
        .meta
        .layout
        .shard_plan(&shard.db, shard.cid, &shard.shard);
    cluster.meta.store.put(&key, &encode(&plan)).unwrap();
    cluster.crash(1);
    let mut stuck = 0;
    for _ in 0..20 {
        stuck += cluster.second().stuck.len();
    }
    assert!(stuck > 0);
    assert_eq!(cluster.plan(&shard), plan, "nothing changed");
}

#[test]
fn maintenance_stops_failover_but_not_health() {
    let mut cluster = Cluster::new(3);
    let shard = cluster.shard(2, 1, &[2]);
    let maintenance = cluster.meta.layout.maintenance();
    cluster
        .meta
        .store
        .put(&maintenance, b"{\"until\":\"x\"}")
        .unwrap();
    cluster.crash(1);
    for _ in 0..20 {
        let report = cluster.second();
        assert!(report.maintenance);
        assert!(report.failovers.is_empty());
    }
    assert_eq!(cluster.health(1).status, Status::Failed);
    assert_eq!(cluster.plan(&shard).leader, dbserver(1));
    cluster
        .meta
        .store
        .txn(Txn::when(vec![], vec![Op::delete(maintenance)]))
        .unwrap();
    let report = cluster.second();
    assert_eq!(report.failovers.len(), 1);
    assert_eq!(cluster.plan(&shard).leader, dbserver(2));
}

#[test]
fn a_db_server_in_maintenance_keeps_its_shards_while_it_is_down() {
    for leads in [true, false] {
        let mut cluster = Cluster::new(4);
        let shard = if leads {
            cluster.shard(2, 1, &[2])
        } else {
            cluster.shard(2, 2, &[1])
        };
        let key = cluster.meta.layout.server_maintenance(&dbserver(1));
        cluster
            .meta
            .store
            .put(&key, b"{\"Mode\":\"maintenance\",\"Until\":\"x\"}")
            .unwrap();
        let before = cluster.plan(&shard);
        cluster.crash(1);
        for _ in 0..40 {
            let report = cluster.second();
            assert!(report.failovers.is_empty(), "{report:?}");
            assert!(report.repairs.is_empty(), "{report:?}");
        }
        assert_eq!(
            cluster.health(1).status,
            Status::Failed,
            "health is still told"
        );
        assert_eq!(cluster.plan(&shard), before, "its shards stay as they were");
        cluster
            .meta
            .store
            .txn(Txn::when(vec![], vec![Op::delete(key)]))
            .unwrap();
        let report = cluster.second();
        let acted = report.failovers.len() + report.repairs.len();
        assert_eq!(
            acted, 1,
            "after maintenance the supervision acts: {report:?}"
        );
        let after = cluster.plan(&shard);
        if leads {
            assert_eq!(after.leader, dbserver(2), "failed over");
        } else {
            assert!(
                !after.followers.contains(&dbserver(1)),
                "replaced: {after:?}"
            );
        }
    }
}

#[test]
fn a_long_failed_follower_is_replaced_and_a_short_shard_completed() {
    let mut cluster = Cluster::new(4);
    let shard = cluster.shard(3, 1, &[2, 3]);
    cluster.crash(3);
    let mut replaced_at = None;
    for second in 1..=30 {
        let report = cluster.second();
        if !report.repairs.is_empty() {
            replaced_at = Some(second);
            break;
        }
    }
    // Lease gone at 3 (first missed then), FAILED at 13, replaced 10 s later.
    assert_eq!(replaced_at, Some(23));
    let plan = cluster.plan(&shard);
    assert_eq!(plan.leader, dbserver(1));
    assert_eq!(plan.epoch, 1, "the leader and the epoch stay");
    assert_eq!(plan.followers, vec![dbserver(2), dbserver(4)]);
    // Now the collection wants 4 copies: no GOOD spare is left (3 is failed).
    let mut collection: serde_json::Value = serde_json::from_slice(
        &cluster
            .meta
            .store
            .get(&cluster.meta.layout.collection("db", 100))
            .unwrap()
            .unwrap()
            .value,
    )
    .unwrap();
    collection["replicationFactor"] = 4.into();
    cluster
        .meta
        .store
        .put(
            &cluster.meta.layout.collection("db", 100),
            &serde_json::to_vec(&collection).unwrap(),
        )
        .unwrap();
    assert!(cluster.second().repairs.is_empty());
    cluster.restart(3, 2);
    let report = cluster.second();
    assert_eq!(report.repairs.len(), 1);
    assert_eq!(
        cluster.plan(&shard).followers,
        vec![dbserver(2), dbserver(4), dbserver(3)]
    );
}

#[test]
fn a_supervisor_that_lost_its_election_writes_nothing() {
    let meta = Meta::new();
    register(&meta.store, &meta.layout, &dbserver(1), Role::Dbserver, 1);
    let store: Arc<dyn MetaStore> = Arc::new(meta.store.clone());
    let config = SupervisionConfig::default();
    let mut first = Supervisor::new(
        store.clone(),
        meta.layout.clone(),
        config.clone(),
        "CRDN-1".into(),
    );
    let mut second = Supervisor::new(store, meta.layout.clone(), config, "CRDN-2".into());
    assert!(first.step(meta.now()).unwrap().is_some());
    assert!(second.step(meta.now()).unwrap().is_none());
    let election = meta.layout.supervision_election();
    let leader = quince_meta::election::leader(&meta.store, &election)
        .unwrap()
        .unwrap();
    let fence = quince_meta::election::Leadership {
        key: leader.key,
        revision: leader.mod_revision,
    }
    .fence();
    // The first pauses past its lease; the second takes over.
    meta.advance(Duration::from_secs(4));
    assert!(second.step(meta.now()).unwrap().is_some());
    let mut stale = Supervision::new(
        Arc::new(meta.store.clone()),
        meta.layout.clone(),
        SupervisionConfig::default(),
        "CRDN-1".into(),
    );
    meta.advance(Duration::from_secs(2));
    meta.store.expire_leases();
    let revision = meta.store.revision();
    assert_eq!(stale.tick(meta.now(), Some(&fence)), Err(TickError::Fenced));
    assert_eq!(meta.store.revision(), revision, "nothing written");
    assert!(first.step(meta.now()).unwrap().is_none(), "it follows now");
    assert!(!first.is_leading());
    assert!(second.is_leading());
}

#[test]
fn the_runner_thread_supervises_and_stops() {
    let store = MemoryStore::default();
    let layout = quince_cluster::layout::Layout::default();
    register(&store, &layout, &dbserver(1), Role::Dbserver, 1);
    heartbeat(&store, &layout, &dbserver(1), Role::Dbserver, 1).unwrap();
    let config = SupervisionConfig {
        frequency: Duration::from_millis(20),
        ..SupervisionConfig::default()
    };
    let runner = SupervisionRunner::start(
        Arc::new(store.clone()),
        layout.clone(),
        config,
        "CRDN-1".into(),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while store.get(&layout.health(&dbserver(1))).unwrap().is_none() {
        assert!(Instant::now() < deadline, "no health record written");
        std::thread::sleep(Duration::from_millis(5));
    }
    runner.stop();
    let candidates = store
        .range(&format!("{}/", layout.supervision_election()))
        .unwrap();
    assert!(candidates.entries.is_empty(), "it resigned");
}

#[test]
fn a_server_that_came_back_while_nobody_looked_counts_from_the_next_miss() {
    let mut cluster = Cluster::new(2);
    cluster.second();
    cluster.crash(2);
    for _ in 0..9 {
        cluster.second();
    }
    assert_eq!(cluster.health(2).status, Status::Bad);
    assert_eq!(cluster.health(2).sync_status, "UNKNOWN");
    // Nobody supervises for 8 s; meanwhile server 2 restarts and stops again.
    cluster.supervision = Supervision::new(
        Arc::new(cluster.meta.store.clone()),
        cluster.meta.layout.clone(),
        SupervisionConfig {
            history_wait: Duration::ZERO,
            ..SupervisionConfig::default()
        },
        "CRDN-2".into(),
    );
    cluster.restart(2, 2);
    cluster.crash(2);
    for _ in 0..8 {
        cluster.meta.advance(SECOND);
        for lease in cluster.leases.iter().flatten() {
            cluster.meta.store.keep_alive(*lease).unwrap();
        }
    }
    let first_miss = cluster.meta.now() + SECOND;
    let report = cluster.second();
    assert_eq!(
        report.health,
        vec![(dbserver(2), Status::Good)],
        "its heartbeat was written after the record: the old time says nothing"
    );
    assert_eq!(
        cluster.health(2).last_acked_time,
        iso8601(quince_cluster::supervision::time::millis(first_miss))
    );
    let mut failed_after = None;
    for second in 1..=12 {
        if cluster
            .second()
            .health
            .contains(&(dbserver(2), Status::Failed))
        {
            failed_after = Some(second);
        }
    }
    assert_eq!(
        failed_after,
        Some(10),
        "the full grace period from that tick"
    );
}
