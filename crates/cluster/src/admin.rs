//! The cluster's own endpoints, as any member answers them from the metadata store:
//! `/_admin/cluster/health`, `/_api/cluster/endpoints` and `/_admin/cluster/maintenance`.
//!
//! What it is: [`health`] (every registered server with its status: supervision's judgement
//! from `Supervision/Health` when it made one, else whether its heartbeat key lives; and the
//! agency's members as ArangoDB's agents, `AGNT-<etcd member id>`, each probed now),
//! [`coordinator_endpoints`] (the coordinators whose heartbeat lives) and [`set_maintenance`]
//! (`Target/Maintenance` on a lease of the requested duration, or removed), and [`Member`],
//! which adds them to a role's [`ClusterOps`].
//!
//! What it is not: supervision (it judges and writes health; this only reads), or HTTP (the
//! api renders the values).
//!
//! Invariants: reads only, except `Target/Maintenance` and the cluster id (written once, if
//! absent, by the first member that is asked).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use quince_errors::{ArangoError, Result, CLUSTER_BACKEND_UNAVAILABLE};
use quince_meta::{Compare, MetaError, MetaStore, Op, Txn};
use quince_ops::{
    ClusterOps, ForwardedReply, ForwardedRequest, InternalReply, InternalRequest, ServerRole,
};
use serde_json::{json, Map, Value};

use crate::layout::{
    decode, encode, HealthRecord, Heartbeat, Layout, Maintenance, Role, ServerRecord,
};
use crate::node::Node;

/// ArangoDB's default duration of the maintenance mode: 60 minutes.
pub const MAINTENANCE_DEFAULT: Duration = Duration::from_secs(3600);

/// The error a client sees when the metadata store fails.
pub fn store_error(error: MetaError) -> ArangoError {
    ArangoError::with_message(
        CLUSTER_BACKEND_UNAVAILABLE,
        format!("the agency is unreachable: {error}"),
    )
}

/// ISO 8601 UTC, seconds precision (`2026-11-26T03:00:00Z`).
pub fn iso8601(unix_millis: u64) -> String {
    let seconds = i64::try_from(unix_millis / 1000).unwrap_or(i64::MAX);
    jiff::Timestamp::from_second(seconds)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

/// The cluster's id, made on first use.
fn cluster_id(store: &dyn MetaStore, layout: &Layout) -> std::result::Result<String, MetaError> {
    let key = format!("{}/Target/ClusterId", layout.prefix());
    if let Some(entry) = store.get(&key)? {
        return Ok(String::from_utf8_lossy(&entry.value).to_string());
    }
    let id = uuid::Uuid::new_v4().to_string();
    store.txn(Txn::when(
        vec![Compare::Absent(key.clone())],
        vec![Op::put(key.clone(), id)],
    ))?;
    Ok(store
        .get(&key)?
        .map(|e| String::from_utf8_lossy(&e.value).to_string())
        .unwrap_or_default())
}

fn by_id<T: for<'de> serde::Deserialize<'de>>(
    store: &dyn MetaStore,
    prefix: &str,
) -> std::result::Result<BTreeMap<String, T>, MetaError> {
    Ok(store
        .range(prefix)?
        .entries
        .into_iter()
        .filter_map(|entry| {
            let id = entry.key.strip_prefix(prefix)?.to_string();
            Some((id, decode::<T>(&entry.value)?))
        })
        .collect())
}

/// `GET /_admin/cluster/health`'s body without `error` and `code`.
pub fn health(node: &Node) -> Result<Value> {
    let store = &*node.store;
    let layout = node.layout();
    let registered: BTreeMap<String, ServerRecord> =
        by_id(store, &layout.servers_registered()).map_err(store_error)?;
    let judged: BTreeMap<String, HealthRecord> =
        by_id(store, &layout.health_records()).map_err(store_error)?;
    let beating: BTreeMap<String, Heartbeat> =
        by_id(store, &layout.heartbeats()).map_err(store_error)?;
    let mut members = Map::new();
    for (id, record) in registered {
        let alive = beating.contains_key(&id);
        let entry = match judged.get(&id) {
            Some(health) => {
                let mut value = serde_json::to_value(health).expect("a health record serializes");
                value["Timestamp"] = value["LastAckedTime"].clone();
                value
            }
            None => json!({
                "Status": if alive { "GOOD" } else { "BAD" },
                "Role": record.role.health_role(),
                "Endpoint": record.endpoint,
                "ShortName": record.short_name,
                "SyncStatus": if alive { "SERVING" } else { "UNKNOWN" },
                "Version": record.version,
                "Engine": record.engine,
            }),
        };
        let mut entry = entry;
        let failed = entry["Status"] == "FAILED";
        entry["CanBeDeleted"] = json!(failed && record.role == Role::Coordinator);
        members.insert(id, entry);
    }
    // The agency's members (etcd's), as ArangoDB lists its agents.
    let agents = store.members().map_err(store_error)?;
    let leader = agents
        .iter()
        .find(|a| a.leader)
        .map(|a| format!("AGNT-{}", a.id));
    for agent in agents {
        members.insert(
            format!("AGNT-{}", agent.id),
            json!({
                "Role": "Agent",
                "ShortName": agent.name,
                "Endpoint": agent.endpoint.replacen("http://", "tcp://", 1),
                "Status": if agent.reachable { "GOOD" } else { "BAD" },
                "Leading": agent.leader,
                "Leader": leader,
                "Version": agent.version,
                "Engine": "etcd",
                "CanBeDeleted": false,
            }),
        );
    }
    Ok(json!({
        "ClusterId": cluster_id(store, layout).map_err(store_error)?,
        "Health": members,
    }))
}

/// Every live coordinator's endpoint, in short-name order.
pub fn coordinator_endpoints(node: &Node) -> Result<Vec<String>> {
    let store = &*node.store;
    let layout = node.layout();
    let registered: BTreeMap<String, ServerRecord> =
        by_id(store, &layout.servers_registered()).map_err(store_error)?;
    let beating: BTreeMap<String, Heartbeat> =
        by_id(store, &layout.heartbeats()).map_err(store_error)?;
    let mut coordinators: Vec<&ServerRecord> = registered
        .values()
        .filter(|r| r.role == Role::Coordinator && beating.contains_key(&r.id))
        .collect();
    coordinators.sort_by(|a, b| a.short_name.cmp(&b.short_name));
    Ok(coordinators
        .into_iter()
        .map(|r| r.endpoint.clone())
        .collect())
}

/// Pauses supervision for `duration` (`Some`) or resumes it (`None`).
pub fn set_maintenance(node: &Node, duration: Option<Duration>) -> Result<Option<String>> {
    let store = &*node.store;
    let key = node.layout().maintenance();
    let Some(duration) = duration else {
        store
            .txn(Txn::when(Vec::new(), vec![Op::delete(key)]))
            .map_err(store_error)?;
        return Ok(None);
    };
    put_for(node, key, duration, |until| Maintenance { until })?;
    let minutes = duration.as_secs().div_ceil(60);
    Ok(Some(format!(
        "Cluster supervision deactivated. It will be reactivated automatically in {minutes} \
         minutes unless this call is repeated until then."
    )))
}

/// Puts `value(until)` (`until` the ISO 8601 UTC time `duration` from now) at `key`, bound to
/// a lease of `duration`, so the key disappears then.
pub fn put_for<T: serde::Serialize>(
    node: &Node,
    key: String,
    duration: Duration,
    value: impl FnOnce(String) -> T,
) -> Result<()> {
    let store = &*node.store;
    let lease = store.grant_lease(duration).map_err(store_error)?;
    let until =
        crate::node::unix_millis() + u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    store
        .txn(Txn::when(
            Vec::new(),
            vec![Op::Put {
                key,
                value: encode(&value(iso8601(until))),
                lease: Some(lease),
            }],
        ))
        .map_err(store_error)?;
    Ok(())
}

/// A role's [`ClusterOps`] with the cluster endpoints every member answers.
pub struct Member {
    node: Arc<Node>,
    role: Arc<dyn ClusterOps>,
}

impl Member {
    /// `role`'s operations, answering the cluster endpoints from `node`'s store.
    pub fn new(node: Arc<Node>, role: Arc<dyn ClusterOps>) -> Member {
        Member { node, role }
    }
}

impl ClusterOps for Member {
    fn role(&self) -> ServerRole {
        self.role.role()
    }

    fn server_id(&self) -> String {
        self.role.server_id()
    }

    fn internal(&self, request: InternalRequest) -> Result<InternalReply> {
        self.role.internal(request)
    }

    fn internal_is_quick(&self, request: &InternalRequest) -> bool {
        self.role.internal_is_quick(request)
    }

    fn health(&self) -> Result<Value> {
        health(&self.node)
    }

    fn coordinator_endpoints(&self) -> Result<Vec<String>> {
        coordinator_endpoints(&self.node)
    }

    fn forward(&self, request: &ForwardedRequest) -> Result<Option<ForwardedReply>> {
        self.role.forward(request)
    }

    fn server_maintenance(&self, server: &str) -> Result<Option<Value>> {
        crate::servers::server_maintenance(&self.node, server)
    }

    fn set_server_maintenance(&self, server: &str, seconds: Option<u64>) -> Result<()> {
        crate::servers::set_server_maintenance(&self.node, server, seconds.map(Duration::from_secs))
    }

    fn number_of_servers(&self) -> Result<Value> {
        crate::servers::number_of_servers(&self.node)
    }

    fn set_number_of_servers(&self, body: &Value) -> Result<()> {
        crate::servers::set_number_of_servers(&self.node, body)
    }

    fn server_get(&self, server: &str, path: &str) -> Result<InternalReply> {
        self.role.server_get(server, path)
    }

    fn set_maintenance(&self, seconds: Option<u64>) -> Result<Option<String>> {
        set_maintenance(&self.node, seconds.map(Duration::from_secs))
    }

    fn users_changed(&self) {
        let key = self.node.layout().user_version();
        let stamp = format!("{}:{}", self.node.id, uuid::Uuid::new_v4());
        if let Err(error) = self.node.store.put(&key, stamp.as_bytes()) {
            tracing::warn!(event = "cluster.user_version_failed", "{error}");
        }
    }

    fn watch_users(&self, reload: Box<dyn Fn() + Send + Sync>) {
        let store = self.node.store.clone();
        let key = self.node.layout().user_version();
        let spawned = std::thread::Builder::new()
            .name("cluster-users".into())
            .spawn(move || follow_user_version(&*store, &key, &*reload));
        if let Err(error) = spawned {
            tracing::error!(event = "cluster.user_watch_failed", "{error}");
        }
    }
}

/// Calls `reload` after every change of `key` (`Sync/UserVersion`), for the life of the
/// process: the watch is reopened after errors from the revision after the last one seen (or
/// from now, after a compaction, with one reload for what may have been missed).
fn follow_user_version(store: &dyn MetaStore, key: &str, reload: &(dyn Fn() + Send + Sync)) {
    // The revision to watch from; 0 until the store answered once.
    let mut from = 0;
    loop {
        if from == 0 {
            match store.range(key) {
                Ok(snapshot) => from = snapshot.revision + 1,
                Err(_) => {
                    std::thread::sleep(Duration::from_secs(1));
                    continue;
                }
            }
        }
        let watch = match store.watch(key, from) {
            Ok(watch) => watch,
            Err(MetaError::Compacted(_)) => {
                // Changes may have been missed: reload once, and follow from now on.
                reload();
                from = 0;
                continue;
            }
            Err(_) => {
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
        };
        while let Ok(batch) = watch.next_timeout(Duration::from_secs(5)) {
            let Some(events) = batch else { continue };
            if let Some(last) = events.last() {
                from = last.entry.mod_revision + 1;
            }
            reload();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::ClusterConfig;
    use quince_meta::MemoryStore;

    /// Member `id` in `role` joined to `store`.
    fn join(store: &Arc<dyn MetaStore>, role: Role, endpoint: &str, id: &str) -> Arc<Node> {
        Node::join(
            store.clone(),
            ClusterConfig::new(role, endpoint),
            id.into(),
            "3.12.4",
            "quince",
        )
        .unwrap()
    }

    #[test]
    fn health_lists_every_registered_member_and_endpoints_the_live_coordinators() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let db = join(&store, Role::Dbserver, "tcp://127.0.0.1:1", "PRMR-a");
        let coordinator = join(&store, Role::Coordinator, "tcp://127.0.0.1:2", "CRDN-b");
        let body = health(&coordinator).unwrap();
        assert_eq!(body["Health"]["PRMR-a"]["Status"], "GOOD");
        assert_eq!(body["Health"]["PRMR-a"]["Role"], "DBServer");
        assert_eq!(body["Health"]["CRDN-b"]["ShortName"], "Coordinator0001");
        assert!(body["ClusterId"].as_str().unwrap().len() > 10);
        assert_eq!(
            health(&db).unwrap()["ClusterId"],
            body["ClusterId"],
            "one id"
        );
        assert_eq!(
            coordinator_endpoints(&db).unwrap(),
            vec!["tcp://127.0.0.1:2"]
        );
        coordinator.leave();
        assert!(coordinator_endpoints(&db).unwrap().is_empty());
        assert_eq!(health(&db).unwrap()["Health"]["CRDN-b"]["Status"], "BAD");
        db.leave();
    }

    struct NoRole;

    impl ClusterOps for NoRole {
        fn role(&self) -> ServerRole {
            ServerRole::Coordinator
        }
        fn server_id(&self) -> String {
            "CRDN-x".into()
        }
        fn internal(&self, _request: InternalRequest) -> Result<InternalReply> {
            Err(ArangoError::new(quince_errors::HTTP_NOT_FOUND))
        }
        fn internal_is_quick(&self, request: &InternalRequest) -> bool {
            request.param("quick").is_some()
        }
    }

    #[test]
    fn a_member_asks_its_role_whether_a_request_is_quick() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let node = join(&store, Role::Dbserver, "tcp://127.0.0.1:2", "PRMR-q");
        let member = Member::new(node.clone(), Arc::new(NoRole));
        let request = |query: Vec<(String, String)>| InternalRequest {
            method: "POST".into(),
            database: "_system".into(),
            path: vec!["apply".into()],
            query,
            body: Vec::new(),
        };
        assert!(member.internal_is_quick(&request(vec![("quick".into(), "1".into())])));
        assert!(!member.internal_is_quick(&request(Vec::new())));
        node.leave();
    }

    #[test]
    fn a_user_change_on_one_coordinator_reloads_the_others() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let coordinator = |id: &str| join(&store, Role::Coordinator, "tcp://127.0.0.1:2", id);
        let (a, b) = (coordinator("CRDN-a"), coordinator("CRDN-b"));
        let member_a = Member::new(a.clone(), Arc::new(NoRole));
        let member_b = Member::new(b.clone(), Arc::new(NoRole));
        let (sender, reloads) = std::sync::mpsc::channel();
        let sender = parking_lot::Mutex::new(sender);
        member_b.watch_users(Box::new(move || {
            let _ = sender.lock().send(());
        }));
        // The watch starts from the store's revision when the thread first reads it: change
        // until one reload arrives.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            member_a.users_changed();
            if reloads.recv_timeout(Duration::from_millis(200)).is_ok() {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no reload");
        }
        a.leave();
        b.leave();
    }

    #[test]
    fn maintenance_is_a_key_on_a_lease() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let node = join(&store, Role::Coordinator, "tcp://127.0.0.1:2", "CRDN-b");
        let warning = set_maintenance(&node, Some(MAINTENANCE_DEFAULT))
            .unwrap()
            .unwrap();
        assert!(warning.contains("60 minutes"), "{warning}");
        let entry = store.get(&node.layout().maintenance()).unwrap().unwrap();
        assert_ne!(entry.lease, 0);
        assert_eq!(set_maintenance(&node, None).unwrap(), None);
        assert!(store.get(&node.layout().maintenance()).unwrap().is_none());
        node.leave();
    }
}
