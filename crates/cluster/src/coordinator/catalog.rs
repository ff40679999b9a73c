//! [`Catalog`]: one parsed, immutable view of the cluster's Plan and Current as a
//! coordinator's cache last saw them.
//!
//! What it is: the databases, collections, shard plans and shard reports, the registered
//! servers' endpoints and the DB servers whose heartbeat is present, built from the raw keys
//! under the agency prefix ([`Catalog::build`]); lookups by name, id and shard.
//!
//! What it is not: the cache that keeps it current (`plan_cache.rs`) or anything that writes.
//!
//! Invariants: a catalog is never changed after it is built (a change builds a new one), so a
//! request that took one sees one consistent revision of the store; keys whose values do not
//! parse are skipped (and logged), never fatal.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use quince_meta::Revision;

use crate::layout::{
    decode, CollectionPlan, DatabasePlan, Heartbeat, Layout, Role, ServerId, ServerRecord,
    ShardCurrent, ShardPlan,
};

/// A collection as the catalog holds it: its Plan value and the database it is in.
#[derive(Clone, Debug)]
pub struct CollectionEntry {
    /// The database's name.
    pub db: String,
    /// The Plan value.
    pub plan: CollectionPlan,
}

impl std::ops::Deref for CollectionEntry {
    type Target = CollectionPlan;

    fn deref(&self) -> &CollectionPlan {
        &self.plan
    }
}

/// One view of Plan and Current (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// The store's revision this view includes every change up to.
    pub revision: Revision,
    /// `Plan/Databases`, by name.
    pub databases: BTreeMap<String, DatabasePlan>,
    /// `Plan/Collections`, by database, then by id.
    pub collections: BTreeMap<String, BTreeMap<u64, Arc<CollectionEntry>>>,
    /// `Plan/Shards`, by shard name (shard names are unique in the cluster).
    pub shard_plans: HashMap<String, ShardPlan>,
    /// `Current/Shards`, by shard name.
    pub shard_currents: HashMap<String, ShardCurrent>,
    /// `Current/ServersRegistered`: each server's endpoint.
    pub endpoints: HashMap<ServerId, String>,
    /// `Current/ServersRegistered`: each server's short name.
    pub short_names: HashMap<ServerId, String>,
    /// The DB servers whose heartbeat (`Sync/ServerStates`) is present, sorted.
    pub live_dbservers: BTreeSet<ServerId>,
}

impl Catalog {
    /// Builds a view from the raw keys (full paths) under the layout's prefix.
    pub fn build<'a>(
        layout: &Layout,
        revision: Revision,
        entries: impl Iterator<Item = (&'a String, &'a Vec<u8>)>,
    ) -> Catalog {
        let mut catalog = Catalog {
            revision,
            ..Catalog::default()
        };
        let prefix = format!("{}/", layout.prefix());
        for (key, value) in entries {
            let Some(rest) = key.strip_prefix(&prefix) else {
                continue;
            };
            let parts: Vec<&str> = rest.split('/').collect();
            match parts.as_slice() {
                ["Plan", "Databases", db] => {
                    if let Some(plan) = decode::<DatabasePlan>(value) {
                        catalog.databases.insert((*db).to_string(), plan);
                    }
                }
                ["Plan", "Collections", db, _cid] => {
                    if let Some(plan) = decode::<CollectionPlan>(value) {
                        catalog
                            .collections
                            .entry((*db).to_string())
                            .or_default()
                            .insert(
                                plan.id,
                                Arc::new(CollectionEntry {
                                    db: (*db).to_string(),
                                    plan,
                                }),
                            );
                    }
                }
                ["Plan", "Shards", _db, _cid, shard] => {
                    if let Some(plan) = decode::<ShardPlan>(value) {
                        catalog.shard_plans.insert((*shard).to_string(), plan);
                    }
                }
                ["Current", "Shards", _db, _cid, shard] => {
                    if let Some(current) = decode::<ShardCurrent>(value) {
                        catalog.shard_currents.insert((*shard).to_string(), current);
                    }
                }
                ["Current", "ServersRegistered", id] => {
                    if let Some(record) = decode::<ServerRecord>(value) {
                        catalog
                            .endpoints
                            .insert((*id).to_string(), record.endpoint.clone());
                        catalog
                            .short_names
                            .insert((*id).to_string(), record.short_name);
                    }
                }
                ["Sync", "ServerStates", id] => {
                    if let Some(beat) = decode::<Heartbeat>(value) {
                        if beat.role == Role::Dbserver {
                            catalog.live_dbservers.insert((*id).to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        catalog
    }

    /// The collection of `db` with this name or numeric id.
    pub fn collection(&self, db: &str, name_or_id: &str) -> Option<Arc<CollectionEntry>> {
        let collections = self.collections.get(db)?;
        if let Some(found) = collections.values().find(|c| c.plan.name == name_or_id) {
            return Some(found.clone());
        }
        let id = name_or_id.parse::<u64>().ok()?;
        collections.get(&id).cloned()
    }

    /// The collection of `db` with this id.
    pub fn collection_by_id(&self, db: &str, id: u64) -> Option<Arc<CollectionEntry>> {
        self.collections.get(db)?.get(&id).cloned()
    }

    /// Every collection of `db`, sorted by name.
    pub fn collections_of(&self, db: &str) -> Vec<Arc<CollectionEntry>> {
        let mut all: Vec<Arc<CollectionEntry>> = self
            .collections
            .get(db)
            .map(|c| c.values().cloned().collect())
            .unwrap_or_default();
        all.sort_by(|a, b| a.plan.name.cmp(&b.plan.name));
        all
    }

    /// True when the shard's leader reported itself in Current at the Plan's epoch.
    pub fn shard_ready(&self, shard: &str) -> bool {
        match (self.shard_plans.get(shard), self.shard_currents.get(shard)) {
            (Some(plan), Some(current)) => {
                current.epoch == plan.epoch && current.leader == plan.leader
            }
            _ => false,
        }
    }

    /// The number of in-sync copies of a shard at the Plan's epoch (0 when not reported).
    pub fn in_sync_count(&self, shard: &str) -> usize {
        match (self.shard_plans.get(shard), self.shard_currents.get(shard)) {
            (Some(plan), Some(current)) if current.epoch == plan.epoch => current.in_sync.len(),
            _ => 0,
        }
    }
}
