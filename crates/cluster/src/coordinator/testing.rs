//! [`FakeDbServers`]: DB servers answered in process, for the coordinator's tests.
//!
//! What it is: a [`Transport`] that answers, for each named server, the parts of the document
//! and collection API a coordinator uses (multi-document inserts, replacements, updates,
//! removals and `onlyget` reads on `/_api/document/<shard>`; count, truncate, revision,
//! checksum of `/_api/collection/<shard>/...`; `POST /_api/cursor` over one shard, answered
//! with every document whatever the query's filter, projection and limit, which the
//! coordinator applies again anyway; index
//! create, list and drop) over one engine per server (a [`FakeEngine`] unless the test brings
//! its own: [`FakeDbServers::over`]), and a thread that follows the
//! Plan as DB servers would: it creates each planned shard collection on its servers and
//! writes the shard's Current as its leader (every planned server in sync). A server that is
//! not the shard's planned leader refuses with 503/1496; a server marked down is
//! [`PeerError::NotSent`].
//!
//! [`TestCluster`] puts it together: a [`quince_meta::MemoryStore`], DB server members with
//! heartbeats, the fake servers, and a started [`Coordinator`] over them.
//!
//! What it is not: a DB server (no replication: followers hold nothing), or HTTP; only for
//! tests (the crate's own, its integration tests, the api's and the conformance suite).
//!
//! Invariants: answers have the shapes a real DB server's have (arrays of per-item results,
//! error bodies `{error, errorNum, errorMessage, code}`).

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;
use quince_client::request::Method;
use quince_errors::ArangoError;
use quince_meta::MetaStore;
use quince_ops::fake::FakeEngine;
use quince_ops::{
    CollectionType, CreateCollection, Engine, OverwriteMode, ReadRequest, WriteKind, WriteOptions,
    WriteOutcome, WriteRequest,
};
use serde_json::{json, Value};

use super::context::Timeouts;
use super::transport::Transport;
use super::{start_with, Coordinator};
use crate::layout::{
    decode, encode, CollectionPlan, Layout, Role, ServerId, ShardCurrent, ShardPlan,
};
use crate::node::{ClusterConfig, Node};
use crate::peers::{PeerError, PeerReply, PeerRequest};

/// A coordinator over in-process DB servers and a store in memory; stopped when dropped.
pub struct TestCluster {
    /// The metadata store.
    pub store: Arc<dyn MetaStore>,
    /// The DB servers.
    pub servers: Arc<FakeDbServers>,
    /// The members (DB servers, then the coordinator).
    pub nodes: Vec<Arc<Node>>,
    /// The coordinator.
    pub coordinator: Arc<Coordinator>,
}

impl TestCluster {
    /// A cluster of DB servers of these ids and one coordinator (`CRDN-test`).
    pub fn start(servers: &[&str], timeouts: Timeouts) -> TestCluster {
        let store: Arc<dyn MetaStore> = Arc::new(quince_meta::MemoryStore::default());
        let mut nodes = Vec::new();
        for (n, id) in servers.iter().enumerate() {
            let config =
                ClusterConfig::new(Role::Dbserver, &format!("tcp://127.0.0.1:{}", 9000 + n));
            let node = Node::join(store.clone(), config, id.to_string(), "3.12.4", "quince")
                .expect("a DB server joins");
            nodes.push(node);
        }
        let fakes = FakeDbServers::start(store.clone(), Layout::default(), servers);
        let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:8999");
        let node = Node::join(
            store.clone(),
            config,
            "CRDN-test".into(),
            "3.12.4",
            "quince",
        )
        .expect("the coordinator joins");
        nodes.push(node.clone());
        let coordinator =
            start_with(node, fakes.clone(), timeouts).expect("the coordinator starts");
        TestCluster {
            store,
            servers: fakes,
            nodes,
            coordinator,
        }
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        self.coordinator.stop();
        self.servers.stop();
        for node in &self.nodes {
            node.leave();
        }
    }
}

struct Inner {
    store: Arc<dyn MetaStore>,
    layout: Layout,
    engines: BTreeMap<ServerId, Arc<dyn Engine>>,
    down: Mutex<HashSet<ServerId>>,
    stop: AtomicBool,
    requests: AtomicUsize,
}

/// In-process DB servers (see the module documentation).
pub struct FakeDbServers {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl FakeDbServers {
    /// Servers of these ids over `store`, each over a new fake engine; the Plan-following
    /// thread starts at once.
    pub fn start(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        servers: &[&str],
    ) -> Arc<FakeDbServers> {
        let engines = servers
            .iter()
            .map(|id| (id.to_string(), FakeEngine::new() as Arc<dyn Engine>))
            .collect();
        FakeDbServers::over(store, layout, engines)
    }

    /// Servers of these ids over these engines (any implementation of the interface: a test
    /// may also serve them through the real api).
    pub fn over(
        store: Arc<dyn MetaStore>,
        layout: Layout,
        engines: Vec<(ServerId, Arc<dyn Engine>)>,
    ) -> Arc<FakeDbServers> {
        let inner = Arc::new(Inner {
            store,
            layout,
            engines: engines.into_iter().collect(),
            down: Mutex::new(HashSet::new()),
            stop: AtomicBool::new(false),
            requests: AtomicUsize::new(0),
        });
        let runner = inner.clone();
        let thread = std::thread::Builder::new()
            .name("fake-dbservers".into())
            .spawn(move || {
                while !runner.stop.load(Ordering::Acquire) {
                    runner.follow_plan();
                    std::thread::park_timeout(Duration::from_millis(10));
                }
            })
            .expect("spawning the fake DB servers");
        Arc::new(FakeDbServers {
            inner,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The engine of one server (its shard collections are named `s<id>`).
    pub fn engine(&self, server: &str) -> Arc<dyn Engine> {
        self.inner.engines[server].clone()
    }

    /// Makes a server unreachable (true) or reachable again.
    pub fn set_down(&self, server: &str, down: bool) {
        let mut set = self.inner.down.lock();
        if down {
            set.insert(server.to_string());
        } else {
            set.remove(server);
        }
    }

    /// How many requests were answered or refused so far.
    pub fn requests(&self) -> usize {
        self.inner.requests.load(Ordering::Acquire)
    }

    /// Stops the Plan-following thread.
    pub fn stop(&self) {
        self.inner.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.lock().take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for FakeDbServers {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Inner {
    /// Creates every planned shard on its servers and reports each shard's leader.
    fn follow_plan(&self) {
        let Ok(collections) = self
            .store
            .range(&format!("{}/Plan/Collections/", self.layout.prefix()))
        else {
            return;
        };
        for entry in collections.entries {
            let Some(plan) = decode::<CollectionPlan>(&entry.value) else {
                continue;
            };
            let db = entry.key.rsplit('/').nth(1).unwrap_or_default().to_string();
            for shard in &plan.shards {
                let Ok(Some(shard_entry)) =
                    self.store.get(&self.layout.shard_plan(&db, plan.id, shard))
                else {
                    continue;
                };
                let Some(shard_plan) = decode::<ShardPlan>(&shard_entry.value) else {
                    continue;
                };
                for server in shard_plan.servers() {
                    if let Some(engine) = self.engines.get(server) {
                        create_shard(engine, &db, shard, &plan);
                    }
                }
                let current_key = self.layout.shard_current(&db, plan.id, shard);
                let current = ShardCurrent {
                    epoch: shard_plan.epoch,
                    leader: shard_plan.leader.clone(),
                    in_sync: shard_plan.servers().cloned().collect(),
                };
                let known = self
                    .store
                    .get(&current_key)
                    .ok()
                    .flatten()
                    .and_then(|e| decode::<ShardCurrent>(&e.value));
                if known.as_ref() != Some(&current) {
                    let _ = self.store.put(&current_key, &encode(&current));
                }
            }
        }
    }

    fn leader_of(&self, shard: &str) -> Option<ServerId> {
        let plans = self.store.range(&self.layout.all_shard_plans()).ok()?;
        plans
            .entries
            .iter()
            .find(|e| e.key.ends_with(&format!("/{shard}")))
            .and_then(|e| decode::<ShardPlan>(&e.value))
            .map(|p| p.leader)
    }

    fn answer(&self, server: &ServerId, request: &PeerRequest<'_>) -> PeerReply {
        let (path, query) = request.path.split_once('?').unwrap_or((request.path, ""));
        let params: Vec<(&str, &str)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        let param = |name: &str| params.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        let flag = |name: &str, default: bool| param(name).map_or(default, |v| v == "true");
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let engine = &self.engines[server];
        let Some(database) = engine.database(request.database) else {
            return error_reply(&ArangoError::new(quince_errors::ARANGO_DATABASE_NOT_FOUND));
        };
        let shard = match segments.as_slice() {
            ["_api", "document", shard] | ["_api", "collection", shard, _] => shard.to_string(),
            ["_api", "index"] => param("collection").unwrap_or_default().to_string(),
            ["_api", "index", shard, _] => shard.to_string(),
            ["_api", "cursor"] => {
                let body: Value =
                    serde_json::from_slice(request.body.unwrap_or(b"{}")).unwrap_or_default();
                body["bindVars"]["@shardCollection"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            }
            _ => return error_reply(&ArangoError::new(quince_errors::HTTP_NOT_FOUND)),
        };
        if self.leader_of(&shard).as_deref() != Some(server.as_str()) {
            return error_reply(&ArangoError::new(quince_errors::CLUSTER_NOT_LEADER));
        }
        let collection = match database.collection(&shard) {
            Ok(collection) => collection,
            Err(error) => return error_reply(&error),
        };
        let body: Value = request
            .body
            .and_then(|b| serde_json::from_slice(b).ok())
            .unwrap_or(Value::Null);
        match (request.method, segments.as_slice()) {
            (Method::Put, ["_api", "document", _]) if param("onlyget").is_some() => {
                let read = ReadRequest {
                    selectors: body.as_array().cloned().unwrap_or_default(),
                    ignore_revs: flag("ignoreRevs", true),
                };
                let mut out = Vec::new();
                let _ = collection.read_many(&read, &mut |result| {
                    out.push(match result {
                        Ok(document) => serde_json::from_slice(&document.json).unwrap_or_default(),
                        Err(error) => error_value(&error),
                    });
                    true
                });
                reply(200, &Value::Array(out))
            }
            (method, ["_api", "document", _]) => {
                let kind = match method {
                    Method::Post => WriteKind::Insert,
                    Method::Put => WriteKind::Replace,
                    Method::Patch => WriteKind::Update,
                    _ => WriteKind::Remove,
                };
                let options = WriteOptions {
                    wait_for_sync: flag("waitForSync", false),
                    return_new: flag("returnNew", false),
                    return_old: flag("returnOld", false),
                    overwrite_mode: match param("overwriteMode") {
                        Some("ignore") => OverwriteMode::Ignore,
                        Some("replace") => OverwriteMode::Replace,
                        Some("update") => OverwriteMode::Update,
                        _ => OverwriteMode::Conflict,
                    },
                    keep_null: flag("keepNull", true),
                    merge_objects: flag("mergeObjects", true),
                    ignore_revs: flag("ignoreRevs", true),
                    version_attribute: param("versionAttribute").map(percent_decode),
                    skip_document_validation: flag("skipDocumentValidation", false),
                    ..WriteOptions::default()
                };
                let items = body.as_array().cloned().unwrap_or_default();
                let results = collection.write(WriteRequest::new(kind, items, options));
                let synced = results.synced;
                let out: Vec<Value> = results
                    .items
                    .into_iter()
                    .map(|item| match item {
                        Ok(outcome) => outcome_value(outcome),
                        Err(error) => error_value(&error),
                    })
                    .collect();
                let status = match (kind, synced) {
                    (_, false) => 202,
                    (WriteKind::Remove, true) => 200,
                    (_, true) => 201,
                };
                reply(status, &Value::Array(out))
            }
            (Method::Get, ["_api", "collection", _, "count"]) => {
                reply(200, &json!({"count": collection.count()}))
            }
            (Method::Get, ["_api", "collection", _, "revision"]) => {
                reply(200, &json!({"revision": collection.revision()}))
            }
            (Method::Get, ["_api", "collection", _, "checksum"]) => {
                match collection.checksum(flag("withRevisions", false), flag("withData", false)) {
                    Ok((checksum, revision)) => {
                        reply(200, &json!({"checksum": checksum, "revision": revision}))
                    }
                    Err(error) => error_reply(&error),
                }
            }
            (Method::Get, ["_api", "collection", _, "figures"]) => {
                let figures = collection.figures();
                reply(
                    200,
                    &json!({"figures": {"alive": {"count": figures.storage.alive_count,
                        "size": figures.storage.alive_size}}}),
                )
            }
            (Method::Put, ["_api", "collection", _, "truncate"]) => {
                match collection.truncate(false) {
                    Ok(()) => reply(200, &json!({"name": shard})),
                    Err(error) => error_reply(&error),
                }
            }
            (Method::Post, ["_api", "cursor"]) => {
                let mut documents = Vec::new();
                let _ = collection.scan(&mut |document| {
                    documents
                        .push(serde_json::from_slice::<Value>(&document.json).unwrap_or_default());
                    true
                });
                reply(201, &json!({"result": documents, "hasMore": false}))
            }
            (Method::Post, ["_api", "index"]) => match collection.create_index(&body) {
                Ok((description, new)) => reply(if new { 201 } else { 200 }, &description.json),
                Err(error) => error_reply(&error),
            },
            (Method::Get, ["_api", "index"]) => {
                let indexes: Vec<Value> =
                    collection.indexes().into_iter().map(|d| d.json).collect();
                reply(200, &json!({ "indexes": indexes }))
            }
            (Method::Delete, ["_api", "index", _, id]) => match collection.drop_index(id) {
                Ok(_) => reply(200, &json!({})),
                Err(error) => error_reply(&error),
            },
            _ => error_reply(&ArangoError::new(quince_errors::HTTP_NOT_FOUND)),
        }
    }
}

/// Creates the shard collection `shard` in `db` on `engine` when missing.
fn create_shard(engine: &Arc<dyn Engine>, db: &str, shard: &str, plan: &CollectionPlan) {
    let database = match engine.database(db) {
        Some(database) => database,
        None => match engine.create_database(db) {
            Ok(database) => database,
            Err(_) => return,
        },
    };
    if let Ok(existing) = database.collection(shard) {
        // Property changes in the Plan reach the shard, as a DB server applies them.
        let schema = plan
            .properties
            .get("schema")
            .cloned()
            .unwrap_or(Value::Null);
        let wait_for_sync = plan.properties.get("waitForSync").and_then(Value::as_bool);
        let properties = existing.properties();
        if properties.schema != schema || Some(properties.wait_for_sync) != wait_for_sync {
            let _ = existing.update_properties(quince_ops::PropertiesUpdate {
                schema: Some(schema),
                wait_for_sync,
                ..Default::default()
            });
        }
        return;
    }
    let _ = database.create_collection(CreateCollection {
        name: shard.to_string(),
        kind: if plan.kind == 3 {
            CollectionType::Edge
        } else {
            CollectionType::Document
        },
        wait_for_sync: plan.properties.get("waitForSync").and_then(Value::as_bool),
        is_system: false,
        key_options: None,
        journal_size: None,
        schema: plan
            .properties
            .get("schema")
            .filter(|s| !s.is_null())
            .cloned(),
        computed_values: None,
        cache_enabled: None,
    });
}

/// Decodes `%XX` escapes of a query value.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn outcome_value(outcome: WriteOutcome) -> Value {
    let mut value = json!({"_id": outcome.id, "_key": outcome.key, "_rev": outcome.rev});
    if let Some(old_rev) = outcome.old_rev {
        value["_oldRev"] = json!(old_rev);
    }
    if let Some(new) = outcome.new {
        value["new"] = new;
    }
    if let Some(old) = outcome.old {
        value["old"] = old;
    }
    value
}

fn error_value(error: &ArangoError) -> Value {
    let mut value = json!({"error": true, "errorNum": error.num(),
        "errorMessage": error.message, "code": error.status});
    for (name, text) in &error.extra {
        value[*name] = json!(text);
    }
    value
}

fn reply(status: u16, body: &Value) -> PeerReply {
    PeerReply {
        status,
        body: serde_json::to_vec(body).expect("a reply serializes"),
    }
}

fn error_reply(error: &ArangoError) -> PeerReply {
    reply(error.status, &error_value(error))
}

impl Transport for FakeDbServers {
    fn send(
        &self,
        server: &ServerId,
        _endpoint: &str,
        request: &PeerRequest<'_>,
    ) -> Result<PeerReply, PeerError> {
        self.inner.requests.fetch_add(1, Ordering::AcqRel);
        if self.inner.down.lock().contains(server) || !self.inner.engines.contains_key(server) {
            return Err(PeerError::NotSent(format!("{server} is down")));
        }
        Ok(self.inner.answer(server, request))
    }
}
