//! The agency layout: which keys a cluster keeps in its metadata store, and their values.
//!
//! What it is: [`Layout`], the key paths under one prefix (`/arango` by default, as in
//! ArangoDB's agency), and the JSON values stored there (serde types). The tree follows
//! ArangoDB's: `Plan` is the desired state (written by coordinators for DDL and by
//! supervision for failover), `Current` what servers report, `Target` intents (maintenance,
//! failed servers, short names), `Supervision` the supervision's own records (health,
//! leader election), `Sync` heartbeats and counters. Each collection and each shard has a key
//! of its own, so no value grows with the cluster and a failover rewrites one small key.
//!
//! | key | value | written by |
//! |---|---|---|
//! | `Plan/Databases/<db>` | [`DatabasePlan`] | coordinators |
//! | `Plan/Collections/<db>/<cid>` | [`CollectionPlan`] | coordinators |
//! | `Plan/Shards/<db>/<cid>/<shard>` | [`ShardPlan`] (leader, followers, epoch) | coordinators (create), supervision (failover, repair) |
//! | `Current/Shards/<db>/<cid>/<shard>` | [`ShardCurrent`] (the in-sync set of an epoch) | the shard's leader |
//! | `Current/ServersRegistered/<id>` | [`ServerRecord`] | each server at start |
//! | `Sync/ServerStates/<id>` | [`Heartbeat`], bound to the server's lease | each server |
//! | `Supervision/Health/<id>` | [`HealthRecord`] | supervision |
//! | `Supervision/Leader/<lease>` | the candidate's server id (an election) | coordinators |
//! | `Target/Maintenance` | [`Maintenance`], bound to a lease of its timeout | `PUT /_admin/cluster/maintenance` |
//! | `Target/MaintenanceDBServers/<id>` | [`ServerMaintenance`], bound to a lease of its timeout | `PUT /_admin/cluster/maintenance/<id>` |
//! | `Target/NumberOfCoordinators`, `Target/NumberOfDBServers`, `Target/CleanedServers` | the numbers a deployment tool set | `PUT /_admin/cluster/numberOfServers` |
//! | `Target/FailedServers/<id>` | the time it was declared failed | supervision |
//! | `Target/MapUniqueToShortID/<id>` | [`ShortName`] | each server at first start |
//! | `Target/ShortNameCounter/<role>` | the last short-name number of the role | each server at first start |
//! | `Sync/LatestID` | the last id handed out (decimal text) | [`Layout::latest_id`] users |
//! | `Sync/UserVersion` | bumped on every change of users or permissions | coordinators |
//!
//! What it is not: the logic that reads or writes them (coordinator, replication,
//! supervision modules).
//!
//! Invariants: values are JSON objects with ArangoDB's camelCase names; a shard's `epoch`
//! only grows, and each new epoch is written by one transaction that checked the previous
//! value of the shard's Plan key (fencing: see `docs/cluster.md`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A server's id: `PRMR-<uuid>` for DB servers, `CRDN-<uuid>` for coordinators.
pub type ServerId = String;

/// The key paths of one cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    prefix: String,
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new("/arango")
    }
}

impl Layout {
    /// The layout under `prefix` (no trailing slash).
    pub fn new(prefix: &str) -> Layout {
        Layout {
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    /// The prefix itself.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `Plan/` (every planned thing).
    pub fn plan(&self) -> String {
        format!("{}/Plan/", self.prefix)
    }

    /// `Plan/Databases/` (all databases).
    pub fn databases(&self) -> String {
        format!("{}/Plan/Databases/", self.prefix)
    }

    /// `Plan/Databases/<db>`.
    pub fn database(&self, db: &str) -> String {
        format!("{}/Plan/Databases/{db}", self.prefix)
    }

    /// `Plan/Collections/<db>/` (a database's collections).
    pub fn collections(&self, db: &str) -> String {
        format!("{}/Plan/Collections/{db}/", self.prefix)
    }

    /// `Plan/Collections/<db>/<cid>`.
    pub fn collection(&self, db: &str, cid: u64) -> String {
        format!("{}/Plan/Collections/{db}/{cid}", self.prefix)
    }

    /// `Plan/Shards/` (every shard of every database).
    pub fn all_shard_plans(&self) -> String {
        format!("{}/Plan/Shards/", self.prefix)
    }

    /// `Plan/Shards/<db>/<cid>/` (a collection's shards).
    pub fn shard_plans(&self, db: &str, cid: u64) -> String {
        format!("{}/Plan/Shards/{db}/{cid}/", self.prefix)
    }

    /// `Plan/Shards/<db>/<cid>/<shard>`.
    pub fn shard_plan(&self, db: &str, cid: u64, shard: &str) -> String {
        format!("{}/Plan/Shards/{db}/{cid}/{shard}", self.prefix)
    }

    /// `Current/Shards/` (every shard's reported state).
    pub fn all_shard_currents(&self) -> String {
        format!("{}/Current/Shards/", self.prefix)
    }

    /// `Current/Shards/<db>/<cid>/<shard>`.
    pub fn shard_current(&self, db: &str, cid: u64, shard: &str) -> String {
        format!("{}/Current/Shards/{db}/{cid}/{shard}", self.prefix)
    }

    /// `Current/ServersRegistered/` (every server that ever started).
    pub fn servers_registered(&self) -> String {
        format!("{}/Current/ServersRegistered/", self.prefix)
    }

    /// `Current/ServersRegistered/<id>`.
    pub fn server_registered(&self, id: &str) -> String {
        format!("{}/Current/ServersRegistered/{id}", self.prefix)
    }

    /// `Sync/ServerStates/` (every live server's heartbeat).
    pub fn heartbeats(&self) -> String {
        format!("{}/Sync/ServerStates/", self.prefix)
    }

    /// `Sync/ServerStates/<id>`.
    pub fn heartbeat(&self, id: &str) -> String {
        format!("{}/Sync/ServerStates/{id}", self.prefix)
    }

    /// `Supervision/Health/` (every server's health as supervision judged it).
    pub fn health_records(&self) -> String {
        format!("{}/Supervision/Health/", self.prefix)
    }

    /// `Supervision/Health/<id>`.
    pub fn health(&self, id: &str) -> String {
        format!("{}/Supervision/Health/{id}", self.prefix)
    }

    /// `Supervision/Leader`: the election of the supervising coordinator.
    pub fn supervision_election(&self) -> String {
        format!("{}/Supervision/Leader", self.prefix)
    }

    /// `Target/Maintenance`.
    pub fn maintenance(&self) -> String {
        format!("{}/Target/Maintenance", self.prefix)
    }

    /// `Target/MaintenanceDBServers/<id>`.
    pub fn server_maintenance(&self, id: &str) -> String {
        format!("{}/Target/MaintenanceDBServers/{id}", self.prefix)
    }

    /// `Target/MaintenanceDBServers/`.
    pub fn servers_maintenance(&self) -> String {
        format!("{}/Target/MaintenanceDBServers/", self.prefix)
    }

    /// `Target/NumberOf<role>` (`Coordinators`, `DBServers`).
    pub fn target_number_of(&self, role: &str) -> String {
        format!("{}/Target/NumberOf{role}", self.prefix)
    }

    /// `Target/CleanedServers`.
    pub fn target_cleaned_servers(&self) -> String {
        format!("{}/Target/CleanedServers", self.prefix)
    }

    /// `Target/FailedServers/<id>`.
    pub fn failed_server(&self, id: &str) -> String {
        format!("{}/Target/FailedServers/{id}", self.prefix)
    }

    /// `Target/FailedServers/`.
    pub fn failed_servers(&self) -> String {
        format!("{}/Target/FailedServers/", self.prefix)
    }

    /// `Target/MapUniqueToShortID/<id>`.
    pub fn short_name(&self, id: &str) -> String {
        format!("{}/Target/MapUniqueToShortID/{id}", self.prefix)
    }

    /// `Target/ShortNameCounter/<role>`: the last short-name number of a role.
    pub fn short_name_counter(&self, role: Role) -> String {
        format!(
            "{}/Target/ShortNameCounter/{}",
            self.prefix,
            role.health_role()
        )
    }

    /// `Target/MapUniqueToShortID/`.
    pub fn short_names(&self) -> String {
        format!("{}/Target/MapUniqueToShortID/", self.prefix)
    }

    /// `Sync/LatestID`: the counter of cluster-wide ids.
    pub fn latest_id(&self) -> String {
        format!("{}/Sync/LatestID", self.prefix)
    }

    /// `Sync/UserVersion`: bumped on user and permission changes.
    pub fn user_version(&self) -> String {
        format!("{}/Sync/UserVersion", self.prefix)
    }
}

/// A server's role, as `/_admin/server/role` and the health API name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Role {
    /// Holds shards (`/_admin/server/role` says `PRIMARY`).
    Dbserver,
    /// Serves clients, routes to shards.
    Coordinator,
}

impl Role {
    /// The prefix of this role's server ids.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Role::Dbserver => "PRMR",
            Role::Coordinator => "CRDN",
        }
    }

    /// The role's name in `/_admin/server/role`.
    pub fn server_role(self) -> &'static str {
        match self {
            Role::Dbserver => "PRIMARY",
            Role::Coordinator => "COORDINATOR",
        }
    }

    /// The role's name in `/_admin/cluster/health` and in short names.
    pub fn health_role(self) -> &'static str {
        match self {
            Role::Dbserver => "DBServer",
            Role::Coordinator => "Coordinator",
        }
    }
}

/// `Plan/Databases/<db>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabasePlan {
    /// The name.
    pub name: String,
    /// The cluster-wide id.
    pub id: u64,
    /// `""` (flexible) or `"single"` (OneShard: every collection one shard, placed like the
    /// first).
    pub sharding: String,
    /// The default `replicationFactor` of new collections.
    pub replication_factor: u32,
    /// The default `writeConcern` of new collections.
    pub write_concern: u32,
}

/// How a shard's leader acknowledges writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplicationMode {
    /// After every in-sync follower applied the write (ArangoDB 3.x; the default).
    #[default]
    Synchronous,
    /// After the leader applied it; followers catch up behind (the 2015 white paper's mode:
    /// a failover may lose acknowledged writes).
    Asynchronous,
}

/// `Plan/Collections/<db>/<cid>`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionPlan {
    /// The cluster-wide id (also the local id of the collection on no server: shards have
    /// ids of their own).
    pub id: u64,
    /// The name.
    pub name: String,
    /// 2 document, 3 edge.
    #[serde(rename = "type")]
    pub kind: u64,
    /// `numberOfShards`.
    pub number_of_shards: u32,
    /// `shardKeys` (`["_key"]` by default).
    pub shard_keys: Vec<String>,
    /// `replicationFactor` (total copies of each shard).
    pub replication_factor: u32,
    /// `writeConcern` (copies that must be in sync for writes).
    pub write_concern: u32,
    /// `shardingStrategy` (`hash`).
    pub sharding_strategy: String,
    /// `distributeShardsLike`: the prototype collection's name, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribute_shards_like: Option<String>,
    /// Quince's own `replicationMode`.
    #[serde(default)]
    pub replication_mode: ReplicationMode,
    /// The shard names in hash order: a document goes to `shards[hash % shards.len()]`.
    pub shards: Vec<String>,
    /// Every other property as a local collection takes it at creation (`waitForSync`,
    /// `keyOptions`, `schema`, `computedValues`, `isSystem`, `cacheEnabled`, ...).
    pub properties: Value,
    /// The index definitions (create bodies with their assigned `id` and `name`), created on
    /// every shard.
    #[serde(default)]
    pub indexes: Vec<Value>,
}

/// `Plan/Shards/<db>/<cid>/<shard>`: who should hold a shard.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardPlan {
    /// The planned leader.
    pub leader: ServerId,
    /// The planned followers, in order of preference.
    pub followers: Vec<ServerId>,
    /// The leader's epoch: raised by one with every change of leader. Replication requests
    /// carry it; a follower refuses any lower one.
    pub epoch: u64,
}

impl ShardPlan {
    /// The leader, then the followers.
    pub fn servers(&self) -> impl Iterator<Item = &ServerId> {
        std::iter::once(&self.leader).chain(self.followers.iter())
    }
}

/// `Current/Shards/<db>/<cid>/<shard>`: the shard as its leader reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardCurrent {
    /// The epoch this report belongs to (the leader's, from `Plan`).
    pub epoch: u64,
    /// The leader that wrote it.
    pub leader: ServerId,
    /// The servers holding every acknowledged write of this epoch, the leader first. Only these
    /// may be promoted. Shrunk here *before* the leader acknowledges a write a member did not
    /// apply; grown only after the member caught up.
    pub in_sync: Vec<ServerId>,
}

/// `Current/ServersRegistered/<id>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerRecord {
    /// The id.
    pub id: ServerId,
    /// The role.
    pub role: Role,
    /// `tcp://host:port` where other servers and clients reach it (`--cluster.my-address`).
    pub endpoint: String,
    /// `DBServer0001`, `Coordinator0002`.
    pub short_name: String,
    /// The server's version.
    pub version: String,
    /// The storage engine's name.
    pub engine: String,
}

/// `Sync/ServerStates/<id>`: present while the server's lease lives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Heartbeat {
    /// The endpoint.
    pub endpoint: String,
    /// The role.
    pub role: Role,
    /// When the process started (ms since the Unix epoch): a change means a restart.
    pub started: u64,
}

/// A server's health status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Heartbeats arrive.
    Good,
    /// No heartbeat for the ok threshold.
    Bad,
    /// No heartbeat for the grace period: its shards fail over.
    Failed,
}

/// `Supervision/Health/<id>`, served by `GET /_admin/cluster/health` (ArangoDB's names).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct HealthRecord {
    /// `GOOD`, `BAD` or `FAILED`.
    pub status: Status,
    /// `DBServer` or `Coordinator`.
    pub role: String,
    /// `tcp://host:port`.
    pub endpoint: String,
    /// `DBServer0001`.
    pub short_name: String,
    /// `SERVING` or `UNKNOWN`.
    pub sync_status: String,
    /// ISO 8601 UTC time of the last heartbeat seen.
    pub last_acked_time: String,
    /// The server's version.
    pub version: String,
    /// The storage engine.
    pub engine: String,
}

/// `Target/Maintenance`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Maintenance {
    /// Until when (ISO 8601 UTC); the key's lease removes it then.
    pub until: String,
}

/// `Target/MaintenanceDBServers/<id>`: one DB server in maintenance (the supervision neither
/// fails over its shards nor replaces it as a follower).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMaintenance {
    /// Always `maintenance`.
    #[serde(rename = "Mode")]
    pub mode: String,
    /// Until when (ISO 8601 UTC); the key's lease removes it then.
    #[serde(rename = "Until")]
    pub until: String,
}

/// `Target/MapUniqueToShortID/<id>`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ShortName {
    /// `DBServer0001`.
    pub short_name: String,
    /// The number in it.
    #[serde(rename = "TransactionID")]
    pub number: u64,
}

/// Encodes a layout value as the bytes stored.
pub fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("layout values serialize")
}

/// Decodes a stored layout value; `None` for bytes that are not one (logged by callers).
pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Option<T> {
    serde_json::from_slice(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_use_arangodb_names() {
        let shard = ShardCurrent {
            epoch: 3,
            leader: "PRMR-a".into(),
            in_sync: vec!["PRMR-a".into(), "PRMR-b".into()],
        };
        let text = String::from_utf8(encode(&shard)).unwrap();
        assert_eq!(
            text,
            r#"{"epoch":3,"leader":"PRMR-a","inSync":["PRMR-a","PRMR-b"]}"#
        );
        assert_eq!(decode::<ShardCurrent>(text.as_bytes()), Some(shard));
        let health = HealthRecord {
            status: Status::Good,
            role: "DBServer".into(),
            endpoint: "tcp://127.0.0.1:1".into(),
            short_name: "DBServer0001".into(),
            sync_status: "SERVING".into(),
            last_acked_time: "2026-01-01T00:00:00Z".into(),
            version: "3.12.4".into(),
            engine: "quince".into(),
        };
        let value: Value = serde_json::from_slice(&encode(&health)).unwrap();
        assert_eq!(value["Status"], "GOOD");
        assert_eq!(value["ShortName"], "DBServer0001");
        assert_eq!(value["LastAckedTime"], "2026-01-01T00:00:00Z");
    }

    #[test]
    fn keys_nest_under_the_prefix() {
        let layout = Layout::new("/arango/");
        assert_eq!(
            layout.shard_plan("db", 7, "s9"),
            "/arango/Plan/Shards/db/7/s9"
        );
        assert!(layout
            .shard_plan("db", 7, "s9")
            .starts_with(&layout.shard_plans("db", 7)));
        assert!(layout
            .collection("db", 7)
            .starts_with(&layout.collections("db")));
        assert!(!layout
            .collection("db2", 7)
            .starts_with(&layout.collections("db")));
    }
}
