//! [`History`]: what the simulation observed (acknowledged writes, Plan changes, first
//! acknowledgements per epoch) and the checks made on it; [`Trace`], the last events, printed
//! with the seed when a check fails.
//!
//! Not the system under test: nothing here influences what servers do.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// One acknowledged write.
#[derive(Clone, Debug)]
pub struct Acked {
    pub shard: usize,
    pub value: u64,
    pub epoch: u64,
    pub leader: String,
    pub at: u64,
}

/// A change of a shard's leader seen in Plan.
#[derive(Clone, Debug)]
pub struct Failover {
    pub shard: usize,
    pub at: u64,
    pub from: String,
    pub to: String,
    pub epoch: u64,
}

/// The observations and the violations found so far.
#[derive(Default)]
pub struct History {
    pub acked: Vec<Acked>,
    /// The leader's data when it acknowledged its first write of an epoch, by (shard, epoch).
    pub first_ack: BTreeMap<(usize, u64), (String, BTreeSet<u64>)>,
    /// The last Plan (epoch, leader) seen per shard.
    plan_seen: HashMap<usize, (u64, String)>,
    /// The leader that acknowledged writes of (shard, epoch).
    ack_leader: HashMap<(usize, u64), String>,
    pub failovers: Vec<Failover>,
    pub violations: Vec<String>,
    /// Acknowledgements of an epoch after a later epoch's leader had acknowledged (the old
    /// leader's answer arrived late; harmless when the new leader holds the write).
    pub late_acks: usize,
    max_acked_epoch: HashMap<usize, u64>,
}

impl History {
    /// Records an acknowledgement by `leader`, whose data is `data`.
    pub fn ack(
        &mut self,
        shard: usize,
        value: u64,
        epoch: u64,
        leader: &str,
        at: u64,
        data: &BTreeSet<u64>,
    ) {
        let max = self.max_acked_epoch.entry(shard).or_default();
        if epoch < *max {
            self.late_acks += 1;
        }
        *max = (*max).max(epoch);
        match self.ack_leader.get(&(shard, epoch)) {
            Some(other) if other != leader => self.violations.push(format!(
                "(b) shard {shard} epoch {epoch}: writes acknowledged by {other} and {leader}"
            )),
            Some(_) => {}
            None => {
                self.ack_leader.insert((shard, epoch), leader.to_string());
            }
        }
        self.first_ack
            .entry((shard, epoch))
            .or_insert_with(|| (leader.to_string(), data.clone()));
        self.acked.push(Acked {
            shard,
            value,
            epoch,
            leader: leader.to_string(),
            at,
        });
    }

    /// Records the Plan of `shard` as read at `at`; checks that epochs never go down and
    /// that an epoch keeps its leader.
    pub fn plan(&mut self, shard: usize, epoch: u64, leader: &str, at: u64) -> Option<Failover> {
        let previous = self.plan_seen.insert(shard, (epoch, leader.to_string()));
        let (old_epoch, old_leader) = previous?;
        if epoch < old_epoch {
            self.violations.push(format!(
                "(b) shard {shard}: epoch went down from {old_epoch} to {epoch}"
            ));
        } else if epoch == old_epoch && leader != old_leader {
            self.violations.push(format!(
                "(b) shard {shard} epoch {epoch}: leader changed from {old_leader} to {leader}"
            ));
        } else if epoch > old_epoch && leader != old_leader {
            let failover = Failover {
                shard,
                at,
                from: old_leader,
                to: leader.to_string(),
                epoch,
            };
            self.failovers.push(failover.clone());
            return Some(failover);
        }
        None
    }

    /// (c): every write acknowledged at an epoch was held by the leader of every later epoch
    /// when that leader acknowledged its first write.
    pub fn check_epoch_handover(&mut self) {
        for acked in &self.acked {
            for ((shard, epoch), (leader, data)) in self
                .first_ack
                .range((acked.shard, acked.epoch + 1)..(acked.shard + 1, 0))
            {
                debug_assert_eq!(*shard, acked.shard);
                if !data.contains(&acked.value) {
                    self.violations.push(format!(
                        "(c) shard {shard}: write {} acknowledged by {} at epoch {} (t={}ms) \
                         missing on {leader} when it began acknowledging epoch {epoch}",
                        acked.value, acked.leader, acked.epoch, acked.at
                    ));
                }
            }
        }
    }

    /// The acknowledged writes of `shard` that `data` lacks.
    pub fn missing(&self, shard: usize, data: &BTreeSet<u64>) -> Vec<&Acked> {
        self.acked
            .iter()
            .filter(|acked| acked.shard == shard && !data.contains(&acked.value))
            .collect()
    }
}

/// The last events, for failure reports.
pub struct Trace {
    events: VecDeque<String>,
    keep: usize,
}

impl Trace {
    pub fn new(keep: usize) -> Trace {
        Trace {
            events: VecDeque::new(),
            keep,
        }
    }

    pub fn event(&mut self, at: u64, text: String) {
        if self.events.len() == self.keep {
            self.events.pop_front();
        }
        self.events
            .push_back(format!("{:>7}.{:03}s {text}", at / 1000, at % 1000));
    }

    pub fn dump(&self) -> String {
        self.events.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}
