//! [`World`]: one seeded simulation: a `MemoryStore` on a `ManualClock`, simulated DB
//! servers, supervising coordinators (the real `Supervisor`), clients and faults, all in one
//! thread, advancing simulated time in fixed steps.
//!
//! Not a benchmark: time is simulated; every random choice comes from the seed, so a seed
//! replays exactly.
//!
//! A run: `chaos_ms` of writes and random faults (crashes with restarts, pauses, partitions of
//! a server from the store or from its peers, store outages, supervisor pauses, crashes and
//! partitions, maintenance), then every fault heals and the world runs until every shard has
//! a `GOOD` leader that acknowledged a write after the healing (liveness, bounded), and the
//! final checks can run (`World::missing_at_end`, `History`). The faults themselves are in
//! `faults.rs`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use quince_cluster::in_sync::{self, ShardId};
use quince_cluster::layout::{
    decode, HealthRecord, Layout, ReplicationMode, Role, ShardPlan, Status,
};
use quince_cluster::supervision::{SupervisionConfig, Supervisor};
use quince_meta::{ManualClock, MemoryStore, MetaStore};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::dbserver::{index_of, plan_of, Ctx, ServerOptions, SimServer};
use crate::history::{History, Trace};
use crate::link::Link;
use crate::net::Network;
use crate::support;

/// One run's parameters (drawn from the seed by [`SimOptions::from_seed`]).
#[derive(Clone, Debug)]
pub struct SimOptions {
    pub seed: u64,
    pub servers: usize,
    pub shards: usize,
    pub supervisors: usize,
    pub replication_factor: usize,
    pub write_concern: usize,
    pub synchronous: bool,
    pub step_ms: u64,
    pub chaos_ms: u64,
    pub settle_limit_ms: u64,
    /// Chance per step of a new fault.
    pub fault_rate: f64,
    /// Chance per step of a client write.
    pub write_rate: f64,
    pub loss: f64,
}

impl SimOptions {
    pub fn from_seed(seed: u64, synchronous: bool) -> SimOptions {
        let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed_5eed);
        let servers = rng.gen_range(3..=5);
        let replication_factor = 3.min(servers);
        SimOptions {
            seed,
            servers,
            shards: rng.gen_range(1..=3),
            supervisors: rng.gen_range(1..=2),
            replication_factor,
            write_concern: rng.gen_range(1..=2),
            synchronous,
            step_ms: 100,
            chaos_ms: 60_000,
            settle_limit_ms: 60_000,
            fault_rate: rng.gen_range(0.02..0.06),
            write_rate: 0.5,
            loss: rng.gen_range(0.0..0.03),
        }
    }
}

/// A supervising coordinator.
pub(crate) struct SimSupervisor {
    pub(crate) id: String,
    pub(crate) link: Link,
    pub(crate) supervisor: Supervisor,
    pub(crate) up: bool,
    pub(crate) down_until: u64,
    pub(crate) paused_until: u64,
    pub(crate) cut_until: u64,
    pub(crate) next_tick: u64,
}

/// The whole simulated cluster.
pub struct World {
    pub options: SimOptions,
    pub(crate) server_options: ServerOptions,
    pub config: SupervisionConfig,
    pub(crate) clock: Arc<ManualClock>,
    pub store: MemoryStore,
    pub layout: Layout,
    pub now: u64,
    pub(crate) rng: StdRng,
    pub(crate) net: Network,
    pub servers: Vec<SimServer>,
    pub(crate) down_until: Vec<u64>,
    pub(crate) store_cut_until: Vec<u64>,
    pub(crate) peers_cut_until: Vec<u64>,
    pub(crate) supervisors: Vec<SimSupervisor>,
    pub shards: Vec<ShardId>,
    pub history: History,
    pub trace: Trace,
    pub(crate) next_value: u64,
    pub(crate) client_plans: Vec<Option<ShardPlan>>,
    pub(crate) store_down_until: u64,
    pub(crate) maintenance_until: Option<u64>,
    /// The last step at which each server's heartbeat key was present, and whether it was
    /// at the last read (during a store outage nothing can write a heartbeat, so an absent
    /// one stays absent and a present one counts as present).
    pub(crate) heartbeat_seen: Vec<(u64, bool)>,
    /// Set once every fault was healed: when.
    pub healed_at: Option<u64>,
}

impl World {
    pub fn new(options: SimOptions) -> World {
        let clock = Arc::new(ManualClock::default());
        let store = MemoryStore::new(clock.clone());
        let layout = Layout::default();
        let n = options.servers;
        let mut servers = Vec::new();
        for i in 0..n {
            support::register(
                &store,
                &layout,
                &support::dbserver(i + 1),
                Role::Dbserver,
                i + 1,
            );
            servers.push(SimServer::new(i, Link::new(store.clone()), options.shards));
        }
        let placements: Vec<ShardPlan> = (0..options.shards)
            .map(|s| ShardPlan {
                leader: support::dbserver(s % n + 1),
                followers: (1..options.replication_factor)
                    .map(|k| support::dbserver((s + k) % n + 1))
                    .collect(),
                epoch: 1,
            })
            .collect();
        let mode = if options.synchronous {
            ReplicationMode::Synchronous
        } else {
            ReplicationMode::Asynchronous
        };
        let shards = support::plan_collection(
            &store,
            &layout,
            options.replication_factor as u32,
            options.write_concern as u32,
            mode,
            &placements,
        );
        for (shard, plan) in shards.iter().zip(&placements) {
            in_sync::report_leadership(&store, &layout, shard, &plan.leader, 1).unwrap();
            for follower in &plan.followers {
                in_sync::grow(&store, &layout, shard, &plan.leader, 1, follower).unwrap();
            }
        }
        let config = SupervisionConfig {
            history_wait: Duration::ZERO,
            ..SupervisionConfig::default()
        };
        let supervisors = (0..options.supervisors)
            .map(|i| {
                // Not registered: simulated coordinators keep no heartbeat.
                let id = format!("CRDN-{}", i + 1);
                let link = Link::new(store.clone());
                SimSupervisor {
                    supervisor: Supervisor::new(
                        Arc::new(link.clone()),
                        layout.clone(),
                        config.clone(),
                        id.clone(),
                    ),
                    id,
                    link,
                    up: true,
                    down_until: 0,
                    paused_until: 0,
                    cut_until: 0,
                    next_tick: 1_000 + 300 * i as u64,
                }
            })
            .collect();
        let server_options = ServerOptions {
            follower_timeout: 3_000,
            write_concern: options.write_concern,
            synchronous: options.synchronous,
            loss: options.loss,
            plan_refresh: 0.3,
        };
        World {
            rng: StdRng::seed_from_u64(options.seed),
            server_options,
            config,
            clock,
            store,
            layout,
            now: 0,
            net: Network::default(),
            servers,
            down_until: vec![0; n],
            store_cut_until: vec![0; n],
            peers_cut_until: vec![0; n],
            supervisors,
            client_plans: vec![None; options.shards],
            shards,
            history: History::default(),
            trace: Trace::new(80),
            next_value: 0,
            store_down_until: 0,
            maintenance_until: None,
            heartbeat_seen: vec![(0, true); n],
            healed_at: None,
            options,
        }
    }

    fn wall(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(support::EPOCH_MS + self.now)
    }

    /// Runs `f` with a server context (split borrows).
    pub(crate) fn with_ctx<T>(
        &mut self,
        f: impl FnOnce(&mut Vec<SimServer>, &mut Ctx<'_>) -> T,
    ) -> T {
        let mut ctx = Ctx {
            now: self.now,
            layout: &self.layout,
            shards: &self.shards,
            net: &mut self.net,
            rng: &mut self.rng,
            history: &mut self.history,
            trace: &mut self.trace,
            options: &self.server_options,
        };
        f(&mut self.servers, &mut ctx)
    }

    /// One step of simulated time.
    pub fn step(&mut self, chaos: bool) {
        self.now += self.options.step_ms;
        self.clock
            .advance(Duration::from_millis(self.options.step_ms));
        if chaos && self.rng.gen_bool(self.options.fault_rate) {
            self.inject_fault();
        }
        self.end_faults();
        self.deliver();
        for i in 0..self.servers.len() {
            let catch_up = self.with_ctx(|servers, ctx| servers[i].step(ctx));
            for (shard, leader) in catch_up {
                self.catch_up(i, shard, leader);
            }
        }
        self.supervise();
        if self.rng.gen_bool(self.options.write_rate) {
            let shard = self.rng.gen_range(0..self.shards.len());
            self.client_write(shard);
        }
        self.observe();
    }

    fn deliver(&mut self) {
        let now = self.now;
        let ready: Vec<bool> = self.servers.iter().map(|s| s.alive(now) || !s.up).collect();
        let due = self.net.due(now, &|to| ready[to]);
        for envelope in due {
            let (from, to) = (envelope.from, envelope.to);
            if !self.servers[to].up || self.servers[to].peers_cut || self.servers[from].peers_cut {
                continue;
            }
            self.with_ctx(|servers, ctx| servers[to].receive(envelope, ctx));
        }
    }

    /// A follower catching up with its leader, under the leader's order lock (one step).
    fn catch_up(&mut self, follower: usize, shard: usize, leader: usize) {
        if follower == leader
            || !self.servers[follower].reachable(self.now)
            || self.rng.gen_bool(0.1)
        {
            return;
        }
        let Some(epoch) = self.servers[follower].replicas[shard]
            .plan
            .as_ref()
            .map(|p| p.epoch)
        else {
            return;
        };
        let member = self.servers[follower].id.clone();
        self.with_ctx(|servers, ctx| {
            let Some(data) = servers[leader].catch_up_source(shard, epoch, &member, ctx) else {
                return;
            };
            servers[follower].replicas[shard].data = data;
            servers[leader].commit_catch_up(shard, &member, ctx);
        });
    }

    fn supervise(&mut self) {
        let wall = self.wall();
        for sup in &mut self.supervisors {
            if !sup.up || self.now < sup.paused_until || self.now < sup.next_tick {
                continue;
            }
            sup.next_tick = self.now + self.config.frequency.as_millis() as u64;
            match sup.supervisor.step(wall) {
                Ok(Some(report)) => {
                    for (id, status) in &report.health {
                        self.trace
                            .event(self.now, format!("{}: {id} is {status:?}", sup.id));
                    }
                    for (shard, plan) in &report.failovers {
                        self.trace.event(
                            self.now,
                            format!(
                                "{}: shard {} fails over to {} at epoch {}",
                                sup.id, shard.shard, plan.leader, plan.epoch
                            ),
                        );
                    }
                    for (shard, plan) in &report.repairs {
                        self.trace.event(
                            self.now,
                            format!("{}: shard {} repaired: {plan:?}", sup.id, shard.shard),
                        );
                    }
                }
                Ok(None) => {}
                Err(error) => self
                    .trace
                    .event(self.now, format!("{}: step failed: {error}", sup.id)),
            }
        }
    }

    fn client_write(&mut self, shard: usize) {
        let key = self.layout.shard_plan(
            &self.shards[shard].db,
            self.shards[shard].cid,
            &self.shards[shard].shard,
        );
        if self.client_plans[shard].is_none() || self.rng.gen_bool(0.3) {
            if let Ok(Some(entry)) = self.store.get(&key) {
                self.client_plans[shard] = plan_of(&entry.value);
            }
        }
        let Some(plan) = self.client_plans[shard].clone() else {
            return;
        };
        self.next_value += 1;
        let value = self.next_value;
        let target = index_of(&plan.leader);
        if !self.with_ctx(|servers, ctx| servers[target].write(shard, value, ctx)) {
            // Refused (not the leader, or unreachable): read Plan again next time.
            self.client_plans[shard] = None;
        }
    }

    /// The observer: Plan changes (checks (b)) and heartbeat presence (no failover before
    /// the grace period).
    fn observe(&mut self) {
        let now = self.now;
        let mut heartbeats = Vec::new();
        for (i, (seen, present)) in self.heartbeat_seen.iter_mut().enumerate() {
            match self
                .store
                .get(&self.layout.heartbeat(&support::dbserver(i + 1)))
            {
                Ok(Some(_)) => (*seen, *present) = (now, true),
                Err(_) if *present => *seen = now,
                Err(_) => {}
                Ok(None) => *present = false,
            }
            heartbeats.push(*seen);
        }
        for (index, shard) in self.shards.iter().enumerate() {
            let key = self.layout.shard_plan(&shard.db, shard.cid, &shard.shard);
            let Ok(Some(entry)) = self.store.get(&key) else {
                continue;
            };
            let plan = plan_of(&entry.value).expect("a readable plan");
            if let Some(failover) = self.history.plan(index, plan.epoch, &plan.leader, now) {
                self.trace.event(
                    failover.at,
                    format!(
                        "Plan: shard {} moves from {} to {} at epoch {}",
                        failover.shard, failover.from, failover.to, failover.epoch
                    ),
                );
                let missing = now - heartbeats[index_of(&failover.from)];
                if Duration::from_millis(missing) < self.config.grace_period {
                    self.history.violations.push(format!(
                        "premature failover of shard {index} from {}: its heartbeat was \
                         present {missing} ms before",
                        failover.from
                    ));
                }
            }
        }
    }

    /// The shards whose Plan leader is `GOOD` and acknowledged a write since the healing.
    pub fn live_shards(&self) -> usize {
        let Some(healed) = self.healed_at else {
            return 0;
        };
        (0..self.shards.len())
            .filter(|&index| {
                let shard = &self.shards[index];
                let key = self.layout.shard_plan(&shard.db, shard.cid, &shard.shard);
                let Some(plan) = self
                    .store
                    .get(&key)
                    .ok()
                    .flatten()
                    .and_then(|e| plan_of(&e.value))
                else {
                    return false;
                };
                let good = self
                    .store
                    .get(&self.layout.health(&plan.leader))
                    .ok()
                    .flatten()
                    .and_then(|e| decode::<HealthRecord>(&e.value))
                    .is_some_and(|h| h.status == Status::Good);
                good && self
                    .history
                    .acked
                    .iter()
                    .any(|a| a.shard == index && a.at > healed && a.leader == plan.leader)
            })
            .count()
    }

    /// Runs a whole scenario: chaos, healing, settling. Answers the settling time (ms) or an
    /// error when liveness was not reached.
    pub fn run(&mut self) -> Result<u64, String> {
        while self.now < self.options.chaos_ms {
            self.step(true);
        }
        self.heal();
        let healed = self.now;
        while self.live_shards() < self.shards.len() {
            if self.now - healed > self.options.settle_limit_ms {
                return Err(format!(
                    "(d) liveness: {} of {} shards live {} ms after healing",
                    self.live_shards(),
                    self.shards.len(),
                    self.options.settle_limit_ms
                ));
            }
            self.step(false);
            // Probes: every shard gets writes while settling.
            if self.now.is_multiple_of(1_000) {
                for shard in 0..self.shards.len() {
                    self.client_write(shard);
                }
            }
        }
        let settled = self.now - healed;
        for _ in 0..30 {
            self.step(false);
        }
        Ok(settled)
    }

    /// The final leader and in-sync members of each shard, with the acknowledged writes each
    /// lacks: (shard, server, missing values).
    pub fn missing_at_end(&self) -> Vec<(usize, String, Vec<u64>)> {
        let mut missing = Vec::new();
        for (index, shard) in self.shards.iter().enumerate() {
            let state = in_sync::read_shard(&self.store, &self.layout, shard).expect("store up");
            let plan = state.plan.expect("a plan");
            let mut members: BTreeSet<String> = BTreeSet::from([plan.leader.clone()]);
            if let Some(current) = state.current.filter(|c| c.epoch == plan.epoch) {
                members.extend(current.in_sync);
            }
            for member in members {
                let data = &self.servers[index_of(&member)].replicas[index].data;
                let lacks: Vec<u64> = self
                    .history
                    .missing(index, data)
                    .iter()
                    .map(|a| a.value)
                    .collect();
                if !lacks.is_empty() {
                    missing.push((index, member, lacks));
                }
            }
        }
        missing
    }
}

impl World {
    /// The leader `Plan` names for `shard` now.
    pub fn final_leader(&self, shard: usize) -> String {
        let state = in_sync::read_shard(&self.store, &self.layout, &self.shards[shard]);
        state.expect("store up").plan.expect("a plan").leader
    }

    /// Crashes server `index` for a minute (scenario tests).
    pub fn crash_for_test(&mut self, index: usize) {
        self.down_until[index] = self.now + 60_000;
        self.with_ctx(|servers, ctx| servers[index].crash(ctx));
    }
}
