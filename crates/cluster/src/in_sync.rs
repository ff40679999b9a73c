//! The in-sync set of a shard: the metadata transactions that keep "no acknowledged write is
//! lost on failover" true.
//!
//! What it is: the only code that writes a shard's `Current` key ([`ShardCurrent`]) and changes
//! a shard's leader in `Plan`. Each function is one guarded transaction on the metadata store,
//! retried while only unrelated keys moved:
//! - [`report_leadership`]: a leader starting an epoch records itself as the only in-sync
//!   member (unless it already did);
//! - [`shrink`]: a leader removes a member that did not apply a write, *before* it
//!   acknowledges that write;
//! - [`grow`]: a leader adds a member that caught up, *after* it started sending that
//!   member every write;
//! - [`promote`]: supervision replaces a failed leader by a healthy in-sync follower, raising
//!   the epoch, in one transaction that writes `Plan` and resets `Current` to the new leader.
//!
//! What it is not: the replication itself (what leaders send, what followers apply), or the
//! judgement of who is healthy (supervision).
//!
//! Invariants:
//! - every change of `Current` is guarded by the `mod_revision` of the shard's `Plan` key as
//!   the caller's epoch was read from, so a leader that was replaced (new epoch) can change
//!   nothing: it gets [`InSyncError::Resigned`] and must not acknowledge;
//! - a promotion picks only a member of the `Current` in-sync set of the `Plan`'s epoch, and is
//!   guarded by the revisions of both keys it read, so it races safely with [`shrink`];
//! - epochs only grow.

use quince_meta::{Compare, MetaError, MetaStore, Op, Revision, Txn};

use crate::layout::{decode, encode, Layout, ServerId, ShardCurrent, ShardPlan};

/// How many times a transaction is retried when other writers moved its keys.
const RETRIES: usize = 64;

/// One shard, by database name, collection id and shard name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ShardId {
    /// The database.
    pub db: String,
    /// The collection's cluster-wide id.
    pub cid: u64,
    /// The shard's name (`s1234`).
    pub shard: String,
}

impl ShardId {
    /// A shard id.
    pub fn new(db: &str, cid: u64, shard: &str) -> ShardId {
        ShardId {
            db: db.to_string(),
            cid,
            shard: shard.to_string(),
        }
    }

    fn plan_key(&self, layout: &Layout) -> String {
        layout.shard_plan(&self.db, self.cid, &self.shard)
    }

    fn current_key(&self, layout: &Layout) -> String {
        layout.shard_current(&self.db, self.cid, &self.shard)
    }
}

/// Why an in-sync change was not made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InSyncError {
    /// The caller is no longer the shard's leader at its epoch (or the shard is gone): it must
    /// not acknowledge the writes that waited for this change (1491).
    Resigned,
    /// The store failed; the change may or may not have been made (1478/1457 to clients).
    Store(MetaError),
}

impl From<MetaError> for InSyncError {
    fn from(error: MetaError) -> Self {
        InSyncError::Store(error)
    }
}

/// A shard's two keys as read, each with its `mod_revision` (0 when absent).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShardState {
    /// `Plan/Shards/...`.
    pub plan: Option<ShardPlan>,
    /// Its revision.
    pub plan_revision: Revision,
    /// `Current/Shards/...`.
    pub current: Option<ShardCurrent>,
    /// Its revision.
    pub current_revision: Revision,
}

/// Reads a shard's Plan and Current keys (two reads; the transactions that use them are
/// guarded by both revisions, so a change in between only makes them retry).
pub fn read_shard(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
) -> Result<ShardState, MetaError> {
    let plan = store.get(&shard.plan_key(layout))?;
    let current = store.get(&shard.current_key(layout))?;
    Ok(ShardState {
        plan_revision: plan.as_ref().map_or(0, |e| e.mod_revision),
        plan: plan.and_then(|e| decode(&e.value)),
        current_revision: current.as_ref().map_or(0, |e| e.mod_revision),
        current: current.and_then(|e| decode(&e.value)),
    })
}

/// Applies `change` to the Current of a shard `me` leads at `epoch`, guarded; `change` answers
/// `None` when nothing needs changing. Answers Current afterwards; [`InSyncError::Resigned`]
/// when there is none of this epoch (the leader has not reported yet: it may not replicate).
fn change_current(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
    me: &str,
    epoch: u64,
    change: &dyn Fn(Option<&ShardCurrent>) -> Option<ShardCurrent>,
) -> Result<ShardCurrent, InSyncError> {
    for _ in 0..RETRIES {
        let state = read_shard(store, layout, shard)?;
        let Some(plan) = state.plan.as_ref() else {
            return Err(InSyncError::Resigned);
        };
        if plan.epoch != epoch || plan.leader != me {
            return Err(InSyncError::Resigned);
        }
        let current = state.current.as_ref().filter(|c| c.epoch == epoch);
        if state.current.as_ref().is_some_and(|c| c.epoch > epoch) {
            return Err(InSyncError::Resigned);
        }
        let Some(next) = change(current) else {
            return current.cloned().ok_or(InSyncError::Resigned);
        };
        let outcome = store.txn(Txn::when(
            vec![
                Compare::ModRevision(shard.plan_key(layout), state.plan_revision),
                Compare::ModRevision(shard.current_key(layout), state.current_revision),
            ],
            vec![Op::put(shard.current_key(layout), encode(&next))],
        ))?;
        if outcome.succeeded {
            return Ok(next);
        }
    }
    Err(InSyncError::Store(MetaError::Unavailable(
        "the shard's keys kept changing".into(),
    )))
}

/// Records `me` as the leader of `epoch` with itself as the only in-sync member, unless
/// Current already belongs to this epoch (then it is answered unchanged).
pub fn report_leadership(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
    me: &str,
    epoch: u64,
) -> Result<ShardCurrent, InSyncError> {
    change_current(store, layout, shard, me, epoch, &|current| match current {
        Some(_) => None,
        None => Some(ShardCurrent {
            epoch,
            leader: me.to_string(),
            in_sync: vec![me.to_string()],
        }),
    })
}

/// Removes `member` from the in-sync set (a no-op when it is not in it).
pub fn shrink(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
    me: &str,
    epoch: u64,
    member: &str,
) -> Result<ShardCurrent, InSyncError> {
    change_current(store, layout, shard, me, epoch, &|current| {
        let current = current?;
        if !current.in_sync.iter().any(|m| m == member) || member == me {
            return None;
        }
        let mut next = current.clone();
        next.in_sync.retain(|m| m != member);
        Some(next)
    })
}

/// Adds `member` to the in-sync set (a no-op when it is in it already). Call only once
/// `member` holds every acknowledged write and receives every new one.
pub fn grow(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
    me: &str,
    epoch: u64,
    member: &str,
) -> Result<ShardCurrent, InSyncError> {
    change_current(store, layout, shard, me, epoch, &|current| {
        let current = current?;
        if current.in_sync.iter().any(|m| m == member) {
            return None;
        }
        let mut next = current.clone();
        next.in_sync.push(member.to_string());
        Some(next)
    })
}

/// What [`promote`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Promotion {
    /// The new plan (its leader is the promoted follower).
    Promoted(ShardPlan),
    /// The shard's leader is not `failed_leader` any more (someone else acted).
    NotNeeded,
    /// No healthy in-sync follower exists: the shard waits for its leader or a follower.
    NoCandidate,
    /// The fence (supervision's leadership) no longer holds.
    Fenced,
}

/// Replaces `failed_leader` by the first healthy member of the in-sync set (in the Plan's
/// follower order); the old leader becomes the last follower. `fence` is included in the
/// transaction (supervision passes its election's fence).
pub fn promote(
    store: &dyn MetaStore,
    layout: &Layout,
    shard: &ShardId,
    failed_leader: &str,
    healthy: &dyn Fn(&str) -> bool,
    fence: Option<Compare>,
) -> Result<Promotion, MetaError> {
    for _ in 0..RETRIES {
        let state = read_shard(store, layout, shard)?;
        let Some(plan) = state.plan else {
            return Ok(Promotion::NotNeeded);
        };
        if plan.leader != failed_leader {
            return Ok(Promotion::NotNeeded);
        }
        let in_sync: Vec<ServerId> = state
            .current
            .filter(|c| c.epoch == plan.epoch && c.leader == plan.leader)
            .map(|c| c.in_sync)
            .unwrap_or_default();
        let Some(new_leader) = plan
            .followers
            .iter()
            .find(|f| in_sync.contains(f) && healthy(f))
            .cloned()
        else {
            return Ok(Promotion::NoCandidate);
        };
        let mut followers: Vec<ServerId> = plan
            .followers
            .iter()
            .filter(|f| **f != new_leader)
            .cloned()
            .collect();
        followers.push(plan.leader.clone());
        let next = ShardPlan {
            leader: new_leader.clone(),
            followers,
            epoch: plan.epoch + 1,
        };
        let current = ShardCurrent {
            epoch: next.epoch,
            leader: new_leader,
            in_sync: vec![next.leader.clone()],
        };
        let mut compares = vec![
            Compare::ModRevision(shard.plan_key(layout), state.plan_revision),
            Compare::ModRevision(shard.current_key(layout), state.current_revision),
        ];
        compares.extend(fence.clone());
        let outcome = store.txn(Txn::when(
            compares,
            vec![
                Op::put(shard.plan_key(layout), encode(&next)),
                Op::put(shard.current_key(layout), encode(&current)),
            ],
        ))?;
        if outcome.succeeded {
            return Ok(Promotion::Promoted(next));
        }
        if let Some(fence) = &fence {
            let holds = store
                .txn(Txn::when(vec![fence.clone()], Vec::new()))?
                .succeeded;
            if !holds {
                return Ok(Promotion::Fenced);
            }
        }
    }
    Err(MetaError::Unavailable(
        "the shard's keys kept changing".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quince_meta::MemoryStore;

    fn setup() -> (MemoryStore, Layout, ShardId) {
        let store = MemoryStore::default();
        let layout = Layout::default();
        let shard = ShardId::new("db", 10, "s11");
        let plan = ShardPlan {
            leader: "A".into(),
            followers: vec!["B".into(), "C".into()],
            epoch: 1,
        };
        store
            .put(&layout.shard_plan("db", 10, "s11"), &encode(&plan))
            .unwrap();
        (store, layout, shard)
    }

    #[test]
    fn a_leader_grows_and_shrinks_its_set_only_while_it_leads() {
        let (store, layout, shard) = setup();
        let first = report_leadership(&store, &layout, &shard, "A", 1).unwrap();
        assert_eq!(first.in_sync, vec!["A"]);
        grow(&store, &layout, &shard, "A", 1, "B").unwrap();
        let grown = grow(&store, &layout, &shard, "A", 1, "C").unwrap();
        assert_eq!(grown.in_sync, vec!["A", "B", "C"]);
        let shrunk = shrink(&store, &layout, &shard, "A", 1, "B").unwrap();
        assert_eq!(shrunk.in_sync, vec!["A", "C"]);
        assert_eq!(
            report_leadership(&store, &layout, &shard, "B", 1),
            Err(InSyncError::Resigned)
        );
        assert_eq!(
            grow(&store, &layout, &shard, "A", 2, "B"),
            Err(InSyncError::Resigned)
        );
    }

    #[test]
    fn a_leader_that_never_reported_may_not_change_the_set() {
        let (store, layout, shard) = setup();
        assert_eq!(
            shrink(&store, &layout, &shard, "A", 1, "B"),
            Err(InSyncError::Resigned)
        );
        assert_eq!(
            grow(&store, &layout, &shard, "A", 1, "B"),
            Err(InSyncError::Resigned)
        );
    }

    #[test]
    fn promotion_takes_a_healthy_in_sync_follower_and_fences_the_old_leader() {
        let (store, layout, shard) = setup();
        report_leadership(&store, &layout, &shard, "A", 1).unwrap();
        let none = promote(&store, &layout, &shard, "A", &|_| true, None).unwrap();
        assert_eq!(none, Promotion::NoCandidate, "B and C never caught up");
        grow(&store, &layout, &shard, "A", 1, "C").unwrap();
        grow(&store, &layout, &shard, "A", 1, "B").unwrap();
        let promoted = promote(&store, &layout, &shard, "A", &|s| s != "B", None).unwrap();
        let Promotion::Promoted(plan) = promoted else {
            panic!("{promoted:?}")
        };
        assert_eq!(plan.leader, "C");
        assert_eq!(plan.followers, vec!["B", "A"]);
        assert_eq!(plan.epoch, 2);
        assert_eq!(
            shrink(&store, &layout, &shard, "A", 1, "B"),
            Err(InSyncError::Resigned),
            "the old leader can change nothing"
        );
        let state = read_shard(&store, &layout, &shard).unwrap();
        assert_eq!(state.current.unwrap().in_sync, vec!["C"]);
        assert_eq!(
            promote(&store, &layout, &shard, "A", &|_| true, None).unwrap(),
            Promotion::NotNeeded
        );
    }
}
