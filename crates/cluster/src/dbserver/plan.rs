//! [`PlanView`]: a DB server's copy of `Plan/` (databases, collections, shards), read whole
//! from the metadata store, and the lookups the other parts make in it.
//!
//! What it is: the decoded keys of one consistent read of `Plan/`, with each shard's
//! `mod_revision`, indexed by shard name (shard names are cluster-wide unique: `s<id>`).
//! [`PlanView::with_shard`] updates one shard from a fresher read (the fencing of replication
//! requests that name a newer epoch than the view knows).
//!
//! What it is not: the reconciliation (`maintenance.rs`), or a cache of `Current`.
//!
//! Invariants: a shard's entry is replaced only by one with a higher `mod_revision`, so a late
//! whole read never takes a shard back to an older epoch than one already seen.

use std::collections::BTreeMap;

use quince_meta::{MetaError, MetaStore, Revision};

use crate::in_sync::ShardId;
use crate::layout::{decode, CollectionPlan, DatabasePlan, Layout, ShardPlan};

/// One shard's Plan entry as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedShard {
    /// Database, collection id, shard name.
    pub id: ShardId,
    /// Leader, followers, epoch.
    pub plan: ShardPlan,
    /// The `mod_revision` of its key.
    pub revision: Revision,
}

/// `Plan/` as read (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct PlanView {
    /// The store's revision of the read.
    pub revision: Revision,
    /// `Plan/Databases/<db>`.
    pub databases: BTreeMap<String, DatabasePlan>,
    /// `Plan/Collections/<db>/<cid>`, by `(db, cid)`.
    pub collections: BTreeMap<(String, u64), CollectionPlan>,
    /// `Plan/Shards/...`, by shard name.
    pub shards: BTreeMap<String, PlannedShard>,
}

impl PlanView {
    /// Reads `Plan/` whole.
    pub fn read(store: &dyn MetaStore, layout: &Layout) -> Result<PlanView, MetaError> {
        let snapshot = store.range(&layout.plan())?;
        let mut view = PlanView {
            revision: snapshot.revision,
            ..PlanView::default()
        };
        let databases = layout.databases();
        let collections = format!("{}/Plan/Collections/", layout.prefix());
        let shards = layout.all_shard_plans();
        for entry in &snapshot.entries {
            if let Some(name) = entry.key.strip_prefix(&databases) {
                if let Some(plan) = decode::<DatabasePlan>(&entry.value) {
                    view.databases.insert(name.to_owned(), plan);
                }
            } else if let Some(rest) = entry.key.strip_prefix(&collections) {
                let Some((db, cid)) = rest.split_once('/') else {
                    continue;
                };
                let (Ok(cid), Some(plan)) = (cid.parse(), decode::<CollectionPlan>(&entry.value))
                else {
                    continue;
                };
                view.collections.insert((db.to_owned(), cid), plan);
            } else if let Some(rest) = entry.key.strip_prefix(&shards) {
                let mut parts = rest.splitn(3, '/');
                let (Some(db), Some(cid), Some(shard)) = (parts.next(), parts.next(), parts.next())
                else {
                    continue;
                };
                let (Ok(cid), Some(plan)) = (cid.parse(), decode::<ShardPlan>(&entry.value)) else {
                    continue;
                };
                view.shards.insert(
                    shard.to_owned(),
                    PlannedShard {
                        id: ShardId::new(db, cid, shard),
                        plan,
                        revision: entry.mod_revision,
                    },
                );
            }
        }
        Ok(view)
    }

    /// The shard of that name, if planned.
    pub fn shard(&self, name: &str) -> Option<&PlannedShard> {
        self.shards.get(name)
    }

    /// The collection a shard belongs to.
    pub fn collection_of(&self, shard: &ShardId) -> Option<&CollectionPlan> {
        self.collections.get(&(shard.db.clone(), shard.cid))
    }

    /// This view with `fresh` in place of its shard's entry, when fresher.
    pub fn with_shard(&self, fresh: PlannedShard) -> PlanView {
        let mut next = self.clone();
        let known = self.shards.get(&fresh.id.shard).map_or(0, |s| s.revision);
        if fresh.revision > known {
            next.shards.insert(fresh.id.shard.clone(), fresh);
        }
        next
    }

    /// This (newer) whole read, keeping any shard entry of `older` that is fresher than the
    /// read (one re-read meanwhile by the fencing of a replication request).
    pub fn keeping_fresher(mut self, older: &PlanView) -> PlanView {
        for (name, shard) in &older.shards {
            if shard.revision > self.revision {
                self.shards.insert(name.clone(), shard.clone());
            }
        }
        self
    }

    /// Every shard of the Plan `me` holds (as leader or follower).
    pub fn shards_of<'a>(&'a self, me: &'a str) -> impl Iterator<Item = &'a PlannedShard> + 'a {
        self.shards
            .values()
            .filter(move |s| s.plan.servers().any(|server| server == me))
    }
}

/// True for the name of a shard collection (`s` and digits): the only local collections the
/// DB server role creates, drops or replicates.
pub fn is_shard_name(name: &str) -> bool {
    name.len() > 1 && name.starts_with('s') && name[1..].bytes().all(|b| b.is_ascii_digit())
}
