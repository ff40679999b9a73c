//! [`SimServer`]: a simulated DB server following `docs/cluster.md`'s replication rules with
//! the real metadata functions (`in_sync::report_leadership`, `shrink`, `grow`) over its own
//! [`Link`] to the store.
//!
//! Not a storage engine: a shard's data is the set of values written to it (every write is a
//! unique value), kept across crashes as if on disk. Catching up is done by the world (it
//! needs both servers: `world.rs`).
//!
//! The rules it follows:
//! - it leads a shard at an epoch only once its cached Plan names it at that epoch and
//!   `report_leadership` succeeded; it steps down as soon as its cache names another;
//! - a write is accepted only while leading, in synchronous mode only with at least
//!   `writeConcern` members in its in-sync set; it is applied, shipped to every in-sync
//!   follower, and acknowledged once each of them applied it or was removed with `shrink`
//!   (a follower silent for the follower timeout, or refusing); a `shrink` that fails
//!   answers the write with an error (never acknowledged), and `Resigned` ends the leadership;
//! - a follower applies a write only when its Plan (refreshed first when the message carries
//!   a newer epoch) names the sender as leader at the message's epoch.

use std::collections::BTreeSet;

use quince_cluster::in_sync::{self, InSyncError, ShardId};
use quince_cluster::layout::{decode, Layout, Role, ShardCurrent, ShardPlan};
use quince_meta::{LeaseId, MetaError, MetaStore};
use rand::rngs::StdRng;
use rand::Rng;

use crate::history::{History, Trace};
use crate::link::Link;
use crate::net::{Envelope, Msg, Network};
use crate::support;

/// The simulation's knobs that servers need.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    pub follower_timeout: u64,
    pub write_concern: usize,
    pub synchronous: bool,
    pub loss: f64,
    pub plan_refresh: f64,
}

/// What a server call needs from the world.
pub struct Ctx<'a> {
    pub now: u64,
    pub layout: &'a Layout,
    pub shards: &'a [ShardId],
    pub net: &'a mut Network,
    pub rng: &'a mut StdRng,
    pub history: &'a mut History,
    pub trace: &'a mut Trace,
    pub options: &'a ServerOptions,
}

impl Ctx<'_> {
    /// Sends with a random delay, or loses the message.
    pub fn send(&mut self, from: usize, to: usize, msg: Msg) {
        if self.rng.gen_bool(self.options.loss) {
            return;
        }
        let delay = if self.rng.gen_bool(0.02) {
            self.rng.gen_range(500..5_000)
        } else {
            self.rng.gen_range(1..150)
        };
        self.net.send(self.now + delay, from, to, msg);
    }
}

/// A write waiting for followers.
#[derive(Clone, Debug)]
pub struct Pending {
    pub value: u64,
    pub waiting: BTreeSet<String>,
    pub deadline: u64,
}

/// A shard this server leads.
#[derive(Clone, Debug)]
pub struct Leading {
    pub epoch: u64,
    /// Whom it sends every write to (itself first): never smaller than the set in the store.
    pub in_sync: Vec<String>,
    pub pending: Vec<Pending>,
}

/// One shard on this server.
#[derive(Clone, Debug, Default)]
pub struct Replica {
    pub data: BTreeSet<u64>,
    pub plan: Option<ShardPlan>,
    pub current: Option<ShardCurrent>,
    pub leading: Option<Leading>,
    pub next_catch_up: u64,
}

/// A simulated DB server.
pub struct SimServer {
    pub index: usize,
    pub id: String,
    pub link: Link,
    pub up: bool,
    pub paused_until: u64,
    pub peers_cut: bool,
    pub lease: Option<LeaseId>,
    pub started: u64,
    pub next_beat: u64,
    pub replicas: Vec<Replica>,
}

/// `PRMR-<index + 1>`'s index.
pub fn index_of(id: &str) -> usize {
    id.trim_start_matches("PRMR-")
        .parse::<usize>()
        .expect("a simulated id")
        - 1
}

impl SimServer {
    pub fn new(index: usize, link: Link, shards: usize) -> SimServer {
        SimServer {
            index,
            id: support::dbserver(index + 1),
            link,
            up: true,
            paused_until: 0,
            peers_cut: false,
            lease: None,
            started: 1,
            next_beat: 0,
            replicas: vec![Replica::default(); shards],
        }
    }

    /// Running and not paused.
    pub fn alive(&self, now: u64) -> bool {
        self.up && now >= self.paused_until
    }

    /// Reachable by peers and clients.
    pub fn reachable(&self, now: u64) -> bool {
        self.alive(now) && !self.peers_cut
    }

    pub fn crash(&mut self, ctx: &mut Ctx<'_>) {
        self.up = false;
        self.lease = None;
        for replica in &mut self.replicas {
            replica.leading = None;
            replica.plan = None;
            replica.current = None;
        }
        ctx.trace.event(ctx.now, format!("{} crashes", self.id));
    }

    pub fn restart(&mut self, ctx: &mut Ctx<'_>) {
        self.up = true;
        self.started += 1;
        self.next_beat = ctx.now;
        ctx.trace.event(ctx.now, format!("{} restarts", self.id));
    }

    /// Keeps the heartbeat lease alive (a new lease and heartbeat when it expired).
    fn heartbeat(&mut self, ctx: &mut Ctx<'_>) {
        if ctx.now < self.next_beat {
            return;
        }
        self.next_beat = ctx.now + 1_000;
        if let Some(lease) = self.lease {
            match self.link.keep_alive(lease) {
                Ok(()) => return,
                Err(MetaError::LeaseNotFound(_)) => self.lease = None,
                Err(_) => return,
            }
        }
        if let Ok(lease) = support::heartbeat(
            &self.link,
            ctx.layout,
            &self.id,
            Role::Dbserver,
            self.started,
        ) {
            self.lease = Some(lease);
        }
    }

    /// Reads a shard's Plan and Current into the cache (kept when the store is unreachable).
    fn refresh(&mut self, shard: usize, ctx: &Ctx<'_>) {
        if let Ok(state) = in_sync::read_shard(&self.link, ctx.layout, &ctx.shards[shard]) {
            let replica = &mut self.replicas[shard];
            replica.plan = state.plan;
            replica.current = state.current;
        }
    }

    /// One step: heartbeat, Plan refresh, leadership, follower timeouts. Answers the shards
    /// on which this server wants to catch up, with their leader's index.
    pub fn step(&mut self, ctx: &mut Ctx<'_>) -> Vec<(usize, usize)> {
        let mut catch_up = Vec::new();
        if !self.alive(ctx.now) {
            return catch_up;
        }
        self.heartbeat(ctx);
        for shard in 0..self.replicas.len() {
            let stale = self.replicas[shard].plan.is_none();
            if stale || ctx.rng.gen_bool(ctx.options.plan_refresh) {
                self.refresh(shard, ctx);
            }
            let Some(plan) = self.replicas[shard].plan.clone() else {
                continue;
            };
            let leads = plan.leader == self.id;
            let leading_epoch = self.replicas[shard].leading.as_ref().map(|l| l.epoch);
            if leading_epoch.is_some() && (!leads || leading_epoch != Some(plan.epoch)) {
                self.step_down(shard, ctx, "its Plan names another");
            }
            if leads && self.replicas[shard].leading.is_none() {
                match in_sync::report_leadership(
                    &self.link,
                    ctx.layout,
                    &ctx.shards[shard],
                    &self.id,
                    plan.epoch,
                ) {
                    Ok(current) => {
                        ctx.trace.event(
                            ctx.now,
                            format!(
                                "{} leads shard {shard} at epoch {} with {:?}",
                                self.id, plan.epoch, current.in_sync
                            ),
                        );
                        self.replicas[shard].leading = Some(Leading {
                            epoch: plan.epoch,
                            in_sync: current.in_sync,
                            pending: Vec::new(),
                        });
                    }
                    Err(_) => continue,
                }
            }
            if self.replicas[shard].leading.is_some() {
                self.time_out_followers(shard, ctx);
            } else if plan.followers.contains(&self.id)
                && ctx.now >= self.replicas[shard].next_catch_up
            {
                let in_sync = self.replicas[shard]
                    .current
                    .as_ref()
                    .is_some_and(|c| c.epoch == plan.epoch && c.in_sync.contains(&self.id));
                // Also now and then when listed: the leader may have dropped it and not yet
                // told it (the leader answers "in sync" when it sends to it).
                if !in_sync || ctx.rng.gen_bool(0.05) {
                    self.replicas[shard].next_catch_up = ctx.now + 1_000;
                    catch_up.push((shard, index_of(&plan.leader)));
                }
            }
        }
        catch_up
    }

    fn step_down(&mut self, shard: usize, ctx: &mut Ctx<'_>, why: &str) {
        if let Some(leading) = self.replicas[shard].leading.take() {
            ctx.trace.event(
                ctx.now,
                format!(
                    "{} stops leading shard {shard} epoch {} ({why}); {} writes unanswered",
                    self.id,
                    leading.epoch,
                    leading.pending.len()
                ),
            );
        }
    }

    /// Removes followers that did not answer in time (or refused) from the in-sync set,
    /// in the store first.
    fn time_out_followers(&mut self, shard: usize, ctx: &mut Ctx<'_>) {
        let Some(leading) = self.replicas[shard].leading.as_ref() else {
            return;
        };
        let epoch = leading.epoch;
        let late: BTreeSet<String> = leading
            .pending
            .iter()
            .filter(|p| p.deadline <= ctx.now)
            .flat_map(|p| p.waiting.iter().cloned())
            .collect();
        for member in late {
            let result = in_sync::shrink(
                &self.link,
                ctx.layout,
                &ctx.shards[shard],
                &self.id,
                epoch,
                &member,
            );
            let Some(leading) = self.replicas[shard].leading.as_mut() else {
                return;
            };
            match result {
                Ok(_) => {
                    leading.in_sync.retain(|m| *m != member);
                    for pending in &mut leading.pending {
                        pending.waiting.remove(&member);
                    }
                    ctx.trace.event(
                        ctx.now,
                        format!(
                            "{} drops {member} from shard {shard}'s in-sync set",
                            self.id
                        ),
                    );
                }
                Err(InSyncError::Resigned) => {
                    self.step_down(shard, ctx, "shrink: resigned");
                    return;
                }
                Err(InSyncError::Store(_)) => {
                    let before = leading.pending.len();
                    leading
                        .pending
                        .retain(|p| !(p.deadline <= ctx.now && p.waiting.contains(&member)));
                    let failed = before - leading.pending.len();
                    if failed > 0 {
                        ctx.trace.event(
                            ctx.now,
                            format!(
                                "{}: {failed} writes on shard {shard} answered with an error \
                                 (cannot drop {member})",
                                self.id
                            ),
                        );
                    }
                }
            }
        }
        self.acknowledge(shard, ctx);
    }

    /// Acknowledges every pending write no follower is still waited for.
    fn acknowledge(&mut self, shard: usize, ctx: &mut Ctx<'_>) {
        let replica = &mut self.replicas[shard];
        let Some(leading) = replica.leading.as_mut() else {
            return;
        };
        let (done, waiting): (Vec<Pending>, Vec<Pending>) = leading
            .pending
            .drain(..)
            .partition(|p| p.waiting.is_empty());
        leading.pending = waiting;
        for pending in done {
            ctx.history.ack(
                shard,
                pending.value,
                leading.epoch,
                &self.id,
                ctx.now,
                &replica.data,
            );
        }
    }

    /// A client's write; false when refused (not leading, too few in sync, unreachable).
    pub fn write(&mut self, shard: usize, value: u64, ctx: &mut Ctx<'_>) -> bool {
        if !self.reachable(ctx.now) {
            return false;
        }
        let replica = &mut self.replicas[shard];
        let Some(leading) = replica.leading.as_mut() else {
            return false;
        };
        if ctx.options.synchronous && leading.in_sync.len() < ctx.options.write_concern {
            return false;
        }
        replica.data.insert(value);
        let followers: Vec<String> = leading
            .in_sync
            .iter()
            .filter(|m| **m != self.id)
            .cloned()
            .collect();
        let epoch = leading.epoch;
        let waiting = if ctx.options.synchronous {
            followers.iter().cloned().collect()
        } else {
            ctx.history
                .ack(shard, value, epoch, &self.id, ctx.now, &replica.data);
            BTreeSet::new()
        };
        if ctx.options.synchronous {
            leading.pending.push(Pending {
                value,
                waiting,
                deadline: ctx.now + ctx.options.follower_timeout,
            });
        }
        for follower in followers {
            ctx.send(
                self.index,
                index_of(&follower),
                Msg::Replicate {
                    shard,
                    epoch,
                    value,
                },
            );
        }
        self.acknowledge(shard, ctx);
        true
    }

    /// Handles one delivered message.
    pub fn receive(&mut self, envelope: Envelope, ctx: &mut Ctx<'_>) {
        let from = support::dbserver(envelope.from + 1);
        match envelope.msg {
            Msg::Replicate {
                shard,
                epoch,
                value,
            } => {
                let known = self.replicas[shard].plan.as_ref().map_or(0, |p| p.epoch);
                if epoch > known {
                    self.refresh(shard, ctx);
                }
                let replica = &mut self.replicas[shard];
                let ok = replica
                    .plan
                    .as_ref()
                    .is_some_and(|p| p.epoch == epoch && p.leader == from)
                    && replica.leading.is_none();
                if ok {
                    replica.data.insert(value);
                }
                ctx.send(
                    self.index,
                    envelope.from,
                    Msg::Answer {
                        shard,
                        epoch,
                        value,
                        ok,
                    },
                );
            }
            Msg::Answer {
                shard,
                epoch,
                value,
                ok,
            } => {
                let Some(leading) = self.replicas[shard].leading.as_mut() else {
                    return;
                };
                if leading.epoch != epoch {
                    return;
                }
                if let Some(pending) = leading.pending.iter_mut().find(|p| p.value == value) {
                    if ok {
                        pending.waiting.remove(&from);
                    } else {
                        pending.deadline = ctx.now;
                    }
                }
                self.acknowledge(shard, ctx);
            }
        }
    }

    /// The leader's side of a catch-up, under its order lock: hands out its data (then
    /// [`SimServer::commit_catch_up`] starts sending to `member` and commits it into the
    /// in-sync set). `None` when it cannot (not leading, unreachable) or need not (it sends
    /// to `member` already).
    pub fn catch_up_source(
        &mut self,
        shard: usize,
        epoch: u64,
        member: &str,
        ctx: &Ctx<'_>,
    ) -> Option<BTreeSet<u64>> {
        if !self.reachable(ctx.now) {
            return None;
        }
        let replica = &self.replicas[shard];
        let leading = replica.leading.as_ref().filter(|l| l.epoch == epoch)?;
        if leading.in_sync.iter().any(|m| m == member) {
            return None;
        }
        Some(replica.data.clone())
    }

    /// Second half of the catch-up: `member` holds the data now.
    pub fn commit_catch_up(&mut self, shard: usize, member: &str, ctx: &mut Ctx<'_>) {
        let Some(leading) = self.replicas[shard].leading.as_mut() else {
            return;
        };
        if !leading.in_sync.iter().any(|m| m == member) {
            leading.in_sync.push(member.to_string());
        }
        let epoch = leading.epoch;
        match in_sync::grow(
            &self.link,
            ctx.layout,
            &ctx.shards[shard],
            &self.id,
            epoch,
            member,
        ) {
            Ok(current) => ctx.trace.event(
                ctx.now,
                format!(
                    "{} adds {member} to shard {shard}: {:?}",
                    self.id, current.in_sync
                ),
            ),
            Err(InSyncError::Resigned) => self.step_down(shard, ctx, "grow: resigned"),
            // Unknown outcome: it may be in the store's set, so it stays in ours.
            Err(InSyncError::Store(_)) => {}
        }
    }
}

/// Decodes a Plan read straight from the store (the observer's view).
pub fn plan_of(bytes: &[u8]) -> Option<ShardPlan> {
    decode(bytes)
}
