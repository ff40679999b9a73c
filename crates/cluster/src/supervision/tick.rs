//! [`Supervision`]: one supervision step, [`Supervision::tick`], over the metadata store.
//!
//! What it is: the pure step the elected coordinator runs once per `frequency` (and the
//! simulation tests call directly with simulated time). A tick reads the cluster
//! ([`ClusterView`]), judges every registered server's health and writes the records that
//! changed (`Supervision/Health/<id>`; `Target/FailedServers/<id>` while a DB server is
//! `FAILED`), then, unless `Target/Maintenance` exists, fails over every shard whose leader
//! is `FAILED` (`in_sync::promote`, candidates: `GOOD` in-sync followers) and repairs the
//! replication of shards with long-failed followers or too few servers ([`plan_repair`]); a
//! DB server under `Target/MaintenanceDBServers` is neither failed over nor replaced.
//!
//! What it is not: the election or the timer (`runner.rs`); a tick trusts the fence it is
//! given, not a belief that it leads.
//!
//! Invariants:
//! - every write of a tick carries the fence: a supervisor that lost its election changes
//!   nothing, and its tick ends with [`TickError::Fenced`];
//! - a Plan change is guarded by the revision of the Plan key it was computed from;
//! - a tick that fails, or comes more than two `frequency` periods after the last one,
//!   forgets what it knew of last-seen times (see `health.rs`), so time the supervisor could
//!   not observe (a store outage, a pause, another coordinator's turn) never counts against a
//!   server.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use quince_meta::{Compare, EventKind, MetaError, MetaStore, Op, Revision, Txn};

use crate::in_sync::{self, Promotion, ShardId};
use crate::layout::{encode, Layout, Role, ServerId, ShardPlan, Status};
use crate::supervision::health::{health_record, judge, needs_write, LastSeen};
use crate::supervision::jobs::{self, FinishedJob};
use crate::supervision::repair::{plan_repair, Repair, RepairInput};
use crate::supervision::time::{iso8601, millis};
use crate::supervision::view::ClusterView;
use crate::supervision::SupervisionConfig;

/// What one tick did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Servers whose status changed, with the new status.
    pub health: Vec<(ServerId, Status)>,
    /// Shards whose failed leader was replaced, with their new Plan.
    pub failovers: Vec<(ShardId, ShardPlan)>,
    /// Shards whose leader failed with no `GOOD` in-sync follower to promote.
    pub stuck: Vec<ShardId>,
    /// Shards whose followers were replaced or completed, with their new Plan.
    pub repairs: Vec<(ShardId, ShardPlan)>,
    /// `Target/Maintenance` was set: no failover or repair was tried.
    pub maintenance: bool,
}

/// Why a tick stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TickError {
    /// The store failed (what was written before stays written).
    Store(MetaError),
    /// The fence no longer holds: another coordinator supervises now.
    Fenced,
}

impl fmt::Display for TickError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TickError::Store(error) => write!(f, "{error}"),
            TickError::Fenced => f.write_str("supervision leadership lost"),
        }
    }
}

impl From<MetaError> for TickError {
    fn from(error: MetaError) -> Self {
        TickError::Store(error)
    }
}

/// The supervision's state between ticks: the last-seen times and a job counter.
pub struct Supervision {
    store: Arc<dyn MetaStore>,
    layout: Layout,
    config: SupervisionConfig,
    me: ServerId,
    last_seen: LastSeen,
    sequence: u64,
    last_tick: Option<u64>,
}

impl Supervision {
    /// The supervision of coordinator `me`.
    pub fn new(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        config: SupervisionConfig,
        me: ServerId,
    ) -> Supervision {
        Supervision {
            store,
            layout,
            config,
            me,
            last_seen: LastSeen::default(),
            sequence: 0,
            last_tick: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &SupervisionConfig {
        &self.config
    }

    /// Forgets the last-seen times (call when leadership was gained anew).
    pub fn forget(&mut self) {
        self.last_seen.forget();
        self.last_tick = None;
    }

    /// One step at wall-clock time `now`; every write carries `fence` (the supervision
    /// election's, or `None` in tests that run a single supervisor).
    pub fn tick(
        &mut self,
        now: SystemTime,
        fence: Option<&Compare>,
    ) -> Result<TickReport, TickError> {
        let now = millis(now);
        let gap = self.config.frequency.saturating_mul(2);
        if self
            .last_tick
            .is_some_and(|last| Duration::from_millis(now.saturating_sub(last)) > gap)
        {
            self.last_seen.forget();
        }
        let result = self.step(now, fence);
        if result.is_err() {
            self.last_seen.forget();
            self.last_tick = None;
        } else {
            self.last_tick = Some(now);
        }
        result
    }

    fn step(&mut self, now: u64, fence: Option<&Compare>) -> Result<TickReport, TickError> {
        let view = ClusterView::read(&*self.store, &self.layout)?;
        let mut report = TickReport::default();
        let status = self.judge_health(&view, now, fence, &mut report)?;
        if view.maintenance {
            report.maintenance = true;
            return Ok(report);
        }
        let dbserver = |id: &str| {
            view.registered
                .get(id)
                .is_some_and(|server| server.role == Role::Dbserver)
        };
        let good = |id: &str| dbserver(id) && status.get(id) == Some(&Status::Good);
        for shard in &view.shards {
            // A DB server in maintenance keeps its shards (it is expected back).
            if status.get(&shard.plan.leader) != Some(&Status::Failed)
                || view.servers_in_maintenance.contains(&shard.plan.leader)
            {
                continue;
            }
            let promotion = in_sync::promote(
                &*self.store,
                &self.layout,
                &shard.id,
                &shard.plan.leader,
                &good,
                fence.cloned(),
            )?;
            match promotion {
                Promotion::Promoted(plan) => {
                    tracing::info!(
                        shard = ?shard.id, failed = shard.plan.leader, leader = plan.leader,
                        epoch = plan.epoch, "supervision: failed leader replaced"
                    );
                    let job = FinishedJob {
                        kind: "failedLeader",
                        shard: shard.id.clone(),
                        server: Some(shard.plan.leader.clone()),
                        to_server: Some(plan.leader.clone()),
                        epoch: plan.epoch,
                        time: now,
                    };
                    self.record(&job, fence)?;
                    report.failovers.push((shard.id.clone(), plan));
                }
                Promotion::NoCandidate => {
                    tracing::debug!(shard = ?shard.id, "supervision: failed leader, no in-sync follower to promote");
                    report.stuck.push(shard.id.clone());
                }
                Promotion::NotNeeded => {}
                Promotion::Fenced => return Err(TickError::Fenced),
            }
        }
        self.repair(&view, &status, now, fence, &mut report)?;
        Ok(report)
    }

    /// Judges every registered server and writes the records that changed.
    fn judge_health(
        &mut self,
        view: &ClusterView,
        now: u64,
        fence: Option<&Compare>,
        report: &mut TickReport,
    ) -> Result<HashMap<ServerId, Status>, TickError> {
        self.last_seen
            .retain(&|id: &str| view.registered.contains_key(id));
        let returned = if self.last_seen.is_empty() {
            self.returned_since_records(view)?
        } else {
            HashSet::new()
        };
        let mut status = HashMap::new();
        for (id, server) in &view.registered {
            let present = view.has_heartbeat(id);
            let stored = view.health_record(id);
            let seen = self
                .last_seen
                .observe(id, present, stored, returned.contains(id), now);
            let judged = judge(
                seen,
                now,
                self.config.ok_threshold,
                self.config.grace_period,
            );
            status.insert(id.clone(), judged);
            let record = health_record(server, judged, present, seen);
            let mut ops = Vec::new();
            if needs_write(stored, &record) {
                if stored.map(|r| r.status) != Some(judged) {
                    tracing::info!(server = id, status = ?judged, "supervision: health changed");
                    report.health.push((id.clone(), judged));
                }
                ops.push(Op::put(self.layout.health(id), encode(&record)));
            }
            if server.role == Role::Dbserver {
                let listed = view.failed_servers.contains_key(id);
                if judged == Status::Failed && !listed {
                    ops.push(Op::put(
                        self.layout.failed_server(id),
                        encode(&iso8601(now)),
                    ));
                } else if judged != Status::Failed && listed {
                    ops.push(Op::delete(self.layout.failed_server(id)));
                }
            }
            if !ops.is_empty() && !self.fenced_txn(Vec::new(), ops, fence)? {
                return Err(TickError::Fenced);
            }
        }
        Ok(status)
    }

    /// The absent servers whose heartbeat was written after their health record (they came
    /// back and left again while no supervisor was looking), from the store's history of
    /// heartbeat events. Every absent server when that history is gone (compacted).
    fn returned_since_records(&self, view: &ClusterView) -> Result<HashSet<ServerId>, MetaError> {
        let absent: HashMap<String, (&ServerId, Revision)> = view
            .health
            .iter()
            .filter(|(id, _)| !view.has_heartbeat(id))
            .map(|(id, (_, revision))| (self.layout.heartbeat(id), (id, *revision)))
            .collect();
        let Some(oldest) = absent.values().map(|(_, revision)| *revision).min() else {
            return Ok(HashSet::new());
        };
        let watch = match self.store.watch(&self.layout.heartbeats(), oldest + 1) {
            Ok(watch) => watch,
            Err(MetaError::Compacted(_)) => {
                return Ok(absent.values().map(|(id, _)| (*id).clone()).collect());
            }
            Err(error) => return Err(error),
        };
        let mut returned = HashSet::new();
        // Bounded: heartbeats are written once per server start, so a long replay is odd.
        for _ in 0..1_000 {
            let Some(events) = watch.next_timeout(self.config.history_wait)? else {
                break;
            };
            for event in events {
                let Some((id, since)) = absent.get(&event.entry.key) else {
                    continue;
                };
                if event.kind == EventKind::Put && event.entry.mod_revision > *since {
                    returned.insert((*id).clone());
                }
            }
        }
        Ok(returned)
    }

    /// Replaces long-failed followers and completes shards below their replication factor.
    fn repair(
        &mut self,
        view: &ClusterView,
        status: &HashMap<ServerId, Status>,
        now: u64,
        fence: Option<&Compare>,
        report: &mut TickReport,
    ) -> Result<(), TickError> {
        let delay = self.config.repair_delay.unwrap_or(self.config.grace_period);
        let failed_for = |id: &str| {
            if status.get(id) != Some(&Status::Failed) || view.servers_in_maintenance.contains(id) {
                return None;
            }
            let since = view
                .failed_servers
                .get(id)
                .copied()
                .flatten()
                .unwrap_or(now);
            Some(Duration::from_millis(now.saturating_sub(since)))
        };
        let status_of = |id: &str| status.get(id).copied();
        let mut load: HashMap<ServerId, usize> = HashMap::new();
        for shard in &view.shards {
            for server in shard.plan.servers() {
                *load.entry(server.clone()).or_default() += 1;
            }
        }
        for shard in &view.shards {
            if report.failovers.iter().any(|(id, _)| *id == shard.id) {
                continue;
            }
            let mut spares: Vec<ServerId> = view
                .registered
                .iter()
                .filter(|(id, server)| {
                    server.role == Role::Dbserver && status.get(*id) == Some(&Status::Good)
                })
                .map(|(id, _)| id.clone())
                .collect();
            spares.sort_by_key(|id| (load.get(id).copied().unwrap_or(0), id.clone()));
            let input = RepairInput {
                status: &status_of,
                failed_for: &failed_for,
                delay,
                spares: &spares,
            };
            let Some((next, changes)) = plan_repair(&shard.plan, shard.replication_factor, &input)
            else {
                continue;
            };
            let key = self
                .layout
                .shard_plan(&shard.id.db, shard.id.cid, &shard.id.shard);
            let guard = vec![Compare::ModRevision(key.clone(), shard.revision)];
            if !self.fenced_txn(guard, vec![Op::put(key, encode(&next))], fence)? {
                if !self.fence_holds(fence)? {
                    return Err(TickError::Fenced);
                }
                continue;
            }
            for change in &changes {
                let (kind, server, to_server) = match change {
                    Repair::Replaced { failed, by } => {
                        *load.entry(by.clone()).or_default() += 1;
                        ("failedFollower", Some(failed.clone()), Some(by.clone()))
                    }
                    Repair::Added(by) => {
                        *load.entry(by.clone()).or_default() += 1;
                        ("addFollower", None, Some(by.clone()))
                    }
                    Repair::Removed(server) => ("removeFollower", Some(server.clone()), None),
                };
                tracing::info!(shard = ?shard.id, ?server, ?to_server, "supervision: {kind}");
                let job = FinishedJob {
                    kind,
                    shard: shard.id.clone(),
                    server,
                    to_server,
                    epoch: next.epoch,
                    time: now,
                };
                self.record(&job, fence)?;
            }
            report.repairs.push((shard.id.clone(), next));
        }
        Ok(())
    }

    fn record(&mut self, job: &FinishedJob, fence: Option<&Compare>) -> Result<(), TickError> {
        self.sequence += 1;
        let written = jobs::record(
            &*self.store,
            &self.layout,
            fence,
            job,
            self.sequence,
            &self.me,
            self.config.finished_max,
        )?;
        if written {
            Ok(())
        } else {
            Err(TickError::Fenced)
        }
    }

    /// Applies `ops` when `compares` and the fence hold; whether it did.
    fn fenced_txn(
        &self,
        mut compares: Vec<Compare>,
        ops: Vec<Op>,
        fence: Option<&Compare>,
    ) -> Result<bool, MetaError> {
        compares.extend(fence.cloned());
        Ok(self.store.txn(Txn::when(compares, ops))?.succeeded)
    }

    fn fence_holds(&self, fence: Option<&Compare>) -> Result<bool, MetaError> {
        self.fenced_txn(Vec::new(), Vec::new(), fence)
    }
}
