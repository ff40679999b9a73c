//! What one supervision tick reads from the metadata store: [`ClusterView`].
//!
//! What it is: the registered servers, their heartbeats, health records and failed-server
//! entries, the maintenance flags (the cluster's, and each DB server's), and every shard's
//! Plan with its `mod_revision` and its collection's `replicationFactor`. Several reads, not
//! one snapshot: every decision made
//! from it is a transaction guarded by the revision of the key it changes (or by
//! `in_sync::promote`'s own reads), so a change in between only makes it fail and wait for
//! the next tick.
//!
//! What it is not: a cache kept between ticks.
//!
//! Invariants: values that do not decode are skipped (logged), never guessed.

use std::collections::{BTreeMap, HashMap, HashSet};

use quince_meta::{MetaError, MetaStore, Revision};

use crate::in_sync::ShardId;
use crate::layout::{
    decode, CollectionPlan, HealthRecord, Layout, ServerId, ServerRecord, ShardPlan,
};
use crate::supervision::time::parse_iso8601;

/// One shard's Plan as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedShard {
    /// Which shard.
    pub id: ShardId,
    /// Its Plan.
    pub plan: ShardPlan,
    /// The Plan key's `mod_revision`.
    pub revision: Revision,
    /// The collection's `replicationFactor` (`None` when the collection's key is missing).
    pub replication_factor: Option<u32>,
}

/// The cluster as one tick reads it.
#[derive(Clone, Debug, Default)]
pub struct ClusterView {
    /// `Current/ServersRegistered`, by id.
    pub registered: BTreeMap<ServerId, ServerRecord>,
    /// Ids with a `Sync/ServerStates` heartbeat.
    pub heartbeats: Vec<ServerId>,
    /// `Supervision/Health`, by id, with the record's `mod_revision`.
    pub health: HashMap<ServerId, (HealthRecord, Revision)>,
    /// `Target/FailedServers`: since when (ms), by id (`None` when the value is unreadable).
    pub failed_servers: HashMap<ServerId, Option<u64>>,
    /// `Target/Maintenance` exists.
    pub maintenance: bool,
    /// The DB servers under `Target/MaintenanceDBServers`.
    pub servers_in_maintenance: HashSet<ServerId>,
    /// Every shard's Plan, in key order.
    pub shards: Vec<PlannedShard>,
}

fn last_segment<'a>(prefix: &str, key: &'a str) -> Option<&'a str> {
    key.strip_prefix(prefix).filter(|rest| !rest.contains('/'))
}

impl ClusterView {
    /// Reads the view.
    pub fn read(store: &dyn MetaStore, layout: &Layout) -> Result<ClusterView, MetaError> {
        let mut view = ClusterView::default();
        let prefix = layout.servers_registered();
        for entry in store.range(&prefix)?.entries {
            match (
                last_segment(&prefix, &entry.key),
                decode::<ServerRecord>(&entry.value),
            ) {
                (Some(id), Some(record)) => {
                    view.registered.insert(id.to_string(), record);
                }
                _ => tracing::warn!(key = entry.key, "unreadable server registration"),
            }
        }
        let prefix = layout.heartbeats();
        view.heartbeats = store
            .range(&prefix)?
            .entries
            .iter()
            .filter_map(|entry| last_segment(&prefix, &entry.key).map(str::to_string))
            .collect();
        let prefix = layout.health_records();
        for entry in store.range(&prefix)?.entries {
            if let (Some(id), Some(record)) = (
                last_segment(&prefix, &entry.key),
                decode::<HealthRecord>(&entry.value),
            ) {
                view.health
                    .insert(id.to_string(), (record, entry.mod_revision));
            }
        }
        let prefix = layout.failed_servers();
        for entry in store.range(&prefix)?.entries {
            if let Some(id) = last_segment(&prefix, &entry.key) {
                let since = decode::<String>(&entry.value).and_then(|text| parse_iso8601(&text));
                view.failed_servers.insert(id.to_string(), since);
            }
        }
        view.maintenance = store.get(&layout.maintenance())?.is_some();
        let prefix = layout.servers_maintenance();
        for entry in store.range(&prefix)?.entries {
            if let Some(id) = last_segment(&prefix, &entry.key) {
                view.servers_in_maintenance.insert(id.to_string());
            }
        }
        let mut replication: HashMap<(String, u64), u32> = HashMap::new();
        let collections = format!("{}/Plan/Collections/", layout.prefix());
        for entry in store.range(&collections)?.entries {
            if let Some(collection) = decode::<CollectionPlan>(&entry.value) {
                let Some(db) = entry
                    .key
                    .strip_prefix(&collections)
                    .and_then(|rest| rest.split_once('/'))
                    .map(|(db, _)| db.to_string())
                else {
                    continue;
                };
                replication.insert((db, collection.id), collection.replication_factor);
            }
        }
        let prefix = layout.all_shard_plans();
        for entry in store.range(&prefix)?.entries {
            let parts: Vec<&str> = entry.key[prefix.len()..].split('/').collect();
            let (Some(plan), [db, cid, shard]) = (decode::<ShardPlan>(&entry.value), &parts[..])
            else {
                tracing::warn!(key = entry.key, "unreadable shard plan");
                continue;
            };
            let Ok(cid) = cid.parse::<u64>() else {
                continue;
            };
            view.shards.push(PlannedShard {
                id: ShardId::new(db, cid, shard),
                plan,
                revision: entry.mod_revision,
                replication_factor: replication.get(&(db.to_string(), cid)).copied(),
            });
        }
        Ok(view)
    }

    /// `id`'s health record.
    pub fn health_record(&self, id: &str) -> Option<&HealthRecord> {
        self.health.get(id).map(|(record, _)| record)
    }

    /// Whether `id` has a heartbeat.
    pub fn has_heartbeat(&self, id: &str) -> bool {
        self.heartbeats.iter().any(|h| h == id)
    }
}
