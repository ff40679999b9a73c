//! Faults of the simulated world: [`World::inject_fault`] (one random fault), their scheduled
//! ends ([`World::end_faults`]), and [`World::heal`] (every fault ends now).
//!
//! Not the servers' reaction to faults: crashes and restarts call into `dbserver.rs`; the
//! rest (pauses, partitions, outages, maintenance) only change what the world lets through.
//!
//! Bounds: at most two DB servers (and never all but none) are faulty at once, so a quorum of
//! copies can usually make progress; faults of the store and of supervisors are unbounded.

use std::sync::Arc;

use quince_cluster::supervision::Supervisor;
use quince_meta::{MetaStore, Op, Txn};
use rand::Rng;

use crate::dbserver::index_of;
use crate::world::World;

impl World {
    pub(crate) fn faulty_servers(&self) -> usize {
        let now = self.now;
        (0..self.servers.len())
            .filter(|&i| {
                !self.servers[i].up
                    || self.servers[i].paused_until > now
                    || self.servers[i].link.is_cut()
                    || self.servers[i].peers_cut
            })
            .count()
    }

    pub(crate) fn inject_fault(&mut self) {
        let now = self.now;
        let kind = self.rng.gen_range(0..9);
        let mut i = self.rng.gen_range(0..self.servers.len());
        // Faults hit a shard's leader half of the time: that is where failover happens.
        if self.rng.gen_bool(0.5) {
            let shard = self.rng.gen_range(0..self.shards.len());
            if let Some(plan) = self.client_plans[shard].as_ref() {
                i = index_of(&plan.leader);
            }
        }
        let max_faulty = (self.servers.len() - 1).min(2);
        let healthy = self.servers[i].up
            && self.servers[i].paused_until <= now
            && !self.servers[i].link.is_cut()
            && !self.servers[i].peers_cut;
        if kind <= 3 && (!healthy || self.faulty_servers() >= max_faulty) {
            return;
        }
        let id = self.servers[i].id.clone();
        match kind {
            0 => {
                self.down_until[i] = now + self.rng.gen_range(2_000..40_000);
                self.with_ctx(|servers, ctx| servers[i].crash(ctx));
            }
            1 => {
                let until = now + self.rng.gen_range(1_000..15_000);
                self.servers[i].paused_until = until;
                self.trace.event(now, format!("{id} pauses until {until}"));
            }
            2 => {
                self.store_cut_until[i] = now + self.rng.gen_range(1_000..25_000);
                self.servers[i].link.set_cut(true);
                self.trace.event(now, format!("{id} is cut from the store"));
            }
            3 => {
                self.peers_cut_until[i] = now + self.rng.gen_range(1_000..25_000);
                self.servers[i].peers_cut = true;
                self.trace.event(now, format!("{id} is cut from its peers"));
            }
            4 => {
                if self.store_down_until <= now {
                    self.store_down_until = now + self.rng.gen_range(1_000..8_000);
                    self.store.set_available(false);
                    self.trace.event(now, "the store is down".into());
                }
            }
            5..=7 => {
                let s = self.rng.gen_range(0..self.supervisors.len());
                let sup = &mut self.supervisors[s];
                if !sup.up || sup.paused_until > now || sup.link.is_cut() {
                    return;
                }
                match kind {
                    5 => {
                        sup.paused_until = now + self.rng.gen_range(1_000..8_000);
                        self.trace.event(now, format!("{} pauses", sup.id));
                    }
                    6 => {
                        sup.up = false;
                        sup.down_until = now + self.rng.gen_range(2_000..20_000);
                        self.trace.event(now, format!("{} crashes", sup.id));
                    }
                    _ => {
                        sup.cut_until = now + self.rng.gen_range(1_000..15_000);
                        sup.link.set_cut(true);
                        self.trace
                            .event(now, format!("{} is cut from the store", sup.id));
                    }
                }
            }
            _ => {
                if self.maintenance_until.is_none() {
                    let until = now + self.rng.gen_range(2_000..15_000);
                    if self
                        .store
                        .put(&self.layout.maintenance(), b"{\"until\":\"sim\"}")
                        .is_ok()
                    {
                        self.maintenance_until = Some(until);
                        self.trace.event(now, "maintenance on".into());
                    }
                }
            }
        }
    }

    pub(crate) fn end_faults(&mut self) {
        let now = self.now;
        for i in 0..self.servers.len() {
            if !self.servers[i].up && now >= self.down_until[i] {
                self.with_ctx(|servers, ctx| servers[i].restart(ctx));
            }
            if self.servers[i].link.is_cut() && now >= self.store_cut_until[i] {
                self.servers[i].link.set_cut(false);
                self.trace.event(
                    now,
                    format!("{} reaches the store again", self.servers[i].id),
                );
            }
            if self.servers[i].peers_cut && now >= self.peers_cut_until[i] {
                self.servers[i].peers_cut = false;
                self.trace.event(
                    now,
                    format!("{} reaches its peers again", self.servers[i].id),
                );
            }
        }
        if now >= self.store_down_until && self.store_down_until > 0 {
            self.store_down_until = 0;
            self.store.set_available(true);
            self.trace.event(now, "the store is back".into());
        }
        for sup in &mut self.supervisors {
            if !sup.up && now >= sup.down_until {
                sup.up = true;
                sup.supervisor = Supervisor::new(
                    Arc::new(sup.link.clone()),
                    self.layout.clone(),
                    self.config.clone(),
                    sup.id.clone(),
                );
                self.trace.event(now, format!("{} restarts", sup.id));
            }
            if sup.link.is_cut() && now >= sup.cut_until {
                sup.link.set_cut(false);
            }
        }
        if self.maintenance_until.is_some_and(|until| now >= until) {
            let removed = self.store.txn(Txn::when(
                Vec::new(),
                vec![Op::delete(self.layout.maintenance())],
            ));
            if removed.is_ok() {
                self.maintenance_until = None;
                self.trace.event(now, "maintenance off".into());
            }
        }
    }

    /// Ends every fault now.
    pub fn heal(&mut self) {
        let now = self.now;
        for i in 0..self.servers.len() {
            self.down_until[i] = self.down_until[i].min(now);
            self.store_cut_until[i] = self.store_cut_until[i].min(now);
            self.peers_cut_until[i] = self.peers_cut_until[i].min(now);
            self.servers[i].paused_until = self.servers[i].paused_until.min(now);
        }
        if self.store_down_until > 0 {
            self.store_down_until = now;
        }
        for sup in &mut self.supervisors {
            sup.down_until = sup.down_until.min(now);
            sup.paused_until = sup.paused_until.min(now);
            sup.cut_until = sup.cut_until.min(now);
        }
        if let Some(until) = self.maintenance_until.as_mut() {
            *until = (*until).min(now);
        }
        self.end_faults();
        self.healed_at = Some(now);
        self.trace.event(now, "every fault healed".into());
    }
}
