//! Repair: restoring a shard's replication factor in `Plan` when followers are lost.
//!
//! What it is: [`plan_repair`], a pure function from a shard's Plan, the servers' health and
//! the spare DB servers to the Plan with (a) each follower that has been `FAILED` for longer
//! than the repair delay replaced, in its place, by a `GOOD` DB server that holds no copy of
//! the shard, and (b) spare servers added at the end while the Plan lists fewer servers than
//! the collection's `replicationFactor`, and (c) followers removed while the Plan lists more
//! servers than that (a lowered factor: failed followers first, then the last ones). The
//! tick writes the result in one transaction guarded by the Plan key's revision and the
//! supervision's fence.
//!
//! What it is not: a change of leader (the epoch and the leader stay: a failed leader is
//! failover's business), or the copying of data: a new follower is not in the in-sync set
//! and catches up through its leader (`docs/cluster.md`, "Catching up").
//!
//! Invariants: the result never lists a server twice, never drops the leader, and never
//! adds a server that is not `GOOD`; a follower that is not failed is removed only to bring
//! the Plan down to the replication factor.

use std::time::Duration;

use crate::layout::{ServerId, ShardPlan, Status};

/// One change [`plan_repair`] made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repair {
    /// A failed follower was replaced.
    Replaced {
        /// The failed follower, removed.
        failed: ServerId,
        /// The spare put in its place.
        by: ServerId,
    },
    /// A spare was added to reach the replication factor.
    Added(ServerId),
    /// A follower beyond the replication factor was removed (it was lowered).
    Removed(ServerId),
}

/// What [`plan_repair`] needs to know about a shard's servers.
pub struct RepairInput<'a> {
    /// Each server's status (`None`: unknown, treated as not failed).
    pub status: &'a dyn Fn(&str) -> Option<Status>,
    /// How long a server has been `FAILED` (`None`: not failed).
    pub failed_for: &'a dyn Fn(&str) -> Option<Duration>,
    /// The repair delay.
    pub delay: Duration,
    /// `GOOD` DB servers in order of preference (the least loaded first).
    pub spares: &'a [ServerId],
}

/// The repaired Plan and what changed, or `None` when nothing needs (or can) change.
pub fn plan_repair(
    plan: &ShardPlan,
    replication_factor: Option<u32>,
    input: &RepairInput<'_>,
) -> Option<(ShardPlan, Vec<Repair>)> {
    let mut next = plan.clone();
    let mut changes = Vec::new();
    let mut spares = input
        .spares
        .iter()
        .filter(|spare| (input.status)(spare) == Some(Status::Good));
    let mut taken: Vec<ServerId> = plan.servers().cloned().collect();
    let mut next_spare = |taken: &mut Vec<ServerId>| {
        let spare = spares.find(|spare| !taken.contains(spare))?.clone();
        taken.push(spare.clone());
        Some(spare)
    };
    for slot in next.followers.iter_mut() {
        let expired = (input.failed_for)(slot).is_some_and(|failed| failed >= input.delay);
        if !expired || (input.status)(slot) != Some(Status::Failed) {
            continue;
        }
        let Some(spare) = next_spare(&mut taken) else {
            break;
        };
        changes.push(Repair::Replaced {
            failed: slot.clone(),
            by: spare.clone(),
        });
        *slot = spare;
    }
    let wanted = replication_factor.map_or(0, |factor| factor as usize);
    while next.followers.len() + 1 < wanted {
        let Some(spare) = next_spare(&mut taken) else {
            break;
        };
        changes.push(Repair::Added(spare.clone()));
        next.followers.push(spare);
    }
    // A lowered factor: the last followers go (those that failed first).
    if wanted > 0 {
        while next.followers.len() + 1 > wanted {
            let position = next
                .followers
                .iter()
                .rposition(|f| (input.status)(f) == Some(Status::Failed))
                .unwrap_or(next.followers.len() - 1);
            changes.push(Repair::Removed(next.followers.remove(position)));
        }
    }
    (!changes.is_empty()).then_some((next, changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> ShardPlan {
        ShardPlan {
            leader: "A".into(),
            followers: vec!["B".into(), "C".into()],
            epoch: 4,
        }
    }

    fn statuses(id: &str) -> Option<Status> {
        match id {
            "C" => Some(Status::Failed),
            "E" => Some(Status::Bad),
            _ => Some(Status::Good),
        }
    }

    #[test]
    fn a_follower_failed_past_the_delay_is_replaced_in_its_place() {
        let spares: Vec<ServerId> = vec!["E".into(), "A".into(), "D".into()];
        let failed_for = |id: &str| (id == "C").then_some(Duration::from_secs(11));
        let input = RepairInput {
            status: &statuses,
            failed_for: &failed_for,
            delay: Duration::from_secs(10),
            spares: &spares,
        };
        let (next, changes) = plan_repair(&plan(), Some(3), &input).expect("repaired");
        assert_eq!(next.leader, "A");
        assert_eq!(next.epoch, 4, "the epoch stays");
        assert_eq!(
            next.followers,
            vec!["B", "D"],
            "not BAD E, not A who holds it"
        );
        assert_eq!(
            changes,
            vec![Repair::Replaced {
                failed: "C".into(),
                by: "D".into()
            }]
        );
    }

    #[test]
    fn a_lowered_factor_removes_failed_followers_first_then_the_last() {
        let spares: Vec<ServerId> = vec!["D".into()];
        let never = |_: &str| None;
        let input = RepairInput {
            status: &statuses,
            failed_for: &never,
            delay: Duration::from_secs(10),
            spares: &spares,
        };
        let (next, changes) = plan_repair(&plan(), Some(2), &input).expect("trimmed");
        assert_eq!(next.leader, "A");
        assert_eq!(next.followers, vec!["B"], "failed C goes first");
        assert_eq!(changes, vec![Repair::Removed("C".into())]);
        let healthy = |_: &str| Some(Status::Good);
        let input = RepairInput {
            status: &healthy,
            ..input
        };
        let (next, changes) = plan_repair(&plan(), Some(1), &input).expect("trimmed");
        assert!(next.followers.is_empty());
        assert_eq!(
            changes,
            vec![Repair::Removed("C".into()), Repair::Removed("B".into())]
        );
        assert!(
            plan_repair(&plan(), Some(3), &input).is_none(),
            "at the factor: nothing"
        );
    }

    #[test]
    fn a_follower_failed_for_less_than_the_delay_stays() {
        let spares: Vec<ServerId> = vec!["D".into()];
        let failed_for = |id: &str| (id == "C").then_some(Duration::from_secs(9));
        let input = RepairInput {
            status: &statuses,
            failed_for: &failed_for,
            delay: Duration::from_secs(10),
            spares: &spares,
        };
        assert_eq!(plan_repair(&plan(), Some(3), &input), None);
        let no_spares = RepairInput {
            spares: &[],
            failed_for: &|_| Some(Duration::from_secs(60)),
            ..input
        };
        assert_eq!(
            plan_repair(&plan(), Some(3), &no_spares),
            None,
            "without a spare nothing changes"
        );
    }

    #[test]
    fn a_shard_below_its_replication_factor_gets_spares() {
        let spares: Vec<ServerId> = vec!["D".into(), "B".into(), "F".into(), "G".into()];
        let input = RepairInput {
            status: &statuses,
            failed_for: &|_| None,
            delay: Duration::from_secs(10),
            spares: &spares,
        };
        let short = ShardPlan {
            leader: "A".into(),
            followers: vec!["B".into()],
            epoch: 1,
        };
        let (next, changes) = plan_repair(&short, Some(4), &input).expect("grown");
        assert_eq!(next.followers, vec!["B", "D", "F"]);
        assert_eq!(
            changes,
            vec![Repair::Added("D".into()), Repair::Added("F".into())]
        );
        assert_eq!(plan_repair(&next, Some(4), &input), None, "complete");
        assert_eq!(
            plan_repair(&short, None, &input),
            None,
            "no collection, no factor"
        );
    }
}
