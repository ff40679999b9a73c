//! The coordinator over a metadata store in memory and three DB servers answered in process
//! (`coordinator::testing`): create a collection of three shards, insert many documents,
//! read them back, remove them, and the rules of routing (shard keys, 1466, 1469), of
//! catalogs (distributeShardsLike, OneShard) and of leader changes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_cluster::coordinator::testing::FakeDbServers;
use quince_cluster::coordinator::{start_with, Coordinator, Timeouts};
use quince_cluster::in_sync::{promote, ShardId};
use quince_cluster::layout::{Layout, Role};
use quince_cluster::node::{ClusterConfig, Node};
use quince_meta::{MemoryStore, MetaStore};
use quince_ops::{
    CollectionOps, CollectionType, CreateCollection, Engine, ReadRequest, UserDocuments, WriteKind,
    WriteOptions, WriteRequest,
};
use serde_json::{json, Value};

/// The error number of a result that must be an error.
trait NumErr {
    fn num_err(self) -> u32;
}

impl<T> NumErr for quince_errors::Result<T> {
    fn num_err(self) -> u32 {
        match self {
            Ok(_) => panic!("expected an error"),
            Err(error) => error.num(),
        }
    }
}

const SERVERS: [&str; 3] = ["PRMR-a", "PRMR-b", "PRMR-c"];

struct Cluster {
    store: Arc<dyn MetaStore>,
    servers: Arc<FakeDbServers>,
    nodes: Vec<Arc<Node>>,
    coordinator: Arc<Coordinator>,
    engine: Arc<dyn Engine>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.coordinator.stop();
        self.servers.stop();
        for node in &self.nodes {
            node.leave();
        }
    }
}

fn cluster() -> Cluster {
    let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
    let mut nodes = Vec::new();
    for (n, id) in SERVERS.iter().enumerate() {
        let config = ClusterConfig::new(Role::Dbserver, &format!("tcp://127.0.0.1:{}", 9000 + n));
        nodes.push(Node::join(store.clone(), config, id.to_string(), "3.12.4", "quince").unwrap());
    }
    let servers = FakeDbServers::start(store.clone(), Layout::default(), &SERVERS);
    let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:8999");
    let node = Node::join(store.clone(), config, "CRDN-x".into(), "3.12.4", "quince").unwrap();
    nodes.push(node.clone());
    let timeouts = Timeouts {
        ddl: Duration::from_secs(20),
        leader_retry: Duration::from_secs(10),
        request: Duration::from_secs(10),
    };
    let coordinator = start_with(node, servers.clone(), timeouts).unwrap();
    let engine = coordinator.engine();
    Cluster {
        store,
        servers,
        nodes,
        coordinator,
        engine,
    }
}

fn create(
    engine: &dyn Engine,
    db: &str,
    name: &str,
    body: Value,
) -> quince_errors::Result<Arc<dyn CollectionOps>> {
    let database = engine.database(db).expect("the database exists");
    let request = CreateCollection {
        name: name.to_string(),
        kind: CollectionType::Document,
        wait_for_sync: None,
        is_system: false,
        key_options: body.get("keyOptions").cloned(),
        journal_size: None,
        schema: None,
        computed_values: None,
        cache_enabled: None,
    };
    database.create_collection_with(request, &body)
}

fn write(
    collection: &dyn CollectionOps,
    kind: WriteKind,
    items: Vec<Value>,
) -> Vec<quince_errors::Result<quince_ops::WriteOutcome>> {
    collection
        .write(WriteRequest::new(kind, items, WriteOptions::default()))
        .settle()
        .unwrap()
}

#[test]
fn documents_spread_over_three_shards_and_come_back_in_order() {
    let cluster = cluster();
    let engine = &*cluster.engine;
    let users = UserDocuments::open(engine).expect("_users is usable at once");
    users.put("root", json!({"user": "root"})).unwrap();
    assert_eq!(users.load().unwrap().len(), 1);

    let collection = create(
        engine,
        "_system",
        "things",
        json!({"numberOfShards": 3, "replicationFactor": 2}),
    )
    .unwrap();
    let shards = collection.shards(true).unwrap();
    let shards = shards.as_object().unwrap();
    assert_eq!(shards.len(), 3);
    let mut leaders: Vec<&str> = shards.values().map(|s| s[0].as_str().unwrap()).collect();
    leaders.sort();
    assert_eq!(leaders, SERVERS, "one leader per server");
    for servers in shards.values() {
        assert_eq!(servers.as_array().unwrap().len(), 2);
        assert_ne!(servers[0], servers[1]);
    }
    let properties = collection.cluster_properties().unwrap();
    assert_eq!(properties["numberOfShards"], 3);
    assert_eq!(properties["shardKeys"], json!(["_key"]));

    let items: Vec<Value> = (0..300).map(|n| json!({"n": n})).collect();
    let results = write(&*collection, WriteKind::Insert, items);
    let keys: Vec<String> = results
        .iter()
        .map(|r| {
            let outcome = r.as_ref().unwrap();
            assert_eq!(outcome.id, format!("things/{}", outcome.key));
            outcome.key.clone()
        })
        .collect();
    let mut distinct = keys.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 300, "generated keys are unique");
    // Every shard got a share, on its leader.
    for (shard, servers) in shards {
        let leader = servers[0].as_str().unwrap();
        let local = cluster
            .servers
            .engine(leader)
            .database("_system")
            .unwrap()
            .collection(shard)
            .unwrap();
        assert!(local.count() > 50, "shard {shard} holds {}", local.count());
        let responsible = collection
            .responsible_shard(&json!({"_key": keys[0]}))
            .unwrap();
        if &responsible == shard {
            assert!(
                local.read(&keys[0]).is_ok(),
                "responsibleShard names the holder"
            );
        }
    }
    assert_eq!(collection.count(), 300);

    // Reads in request order, `_id` in the collection's name.
    let mut selectors: Vec<Value> = keys.iter().rev().map(|k| json!(k)).collect();
    selectors.push(json!("missing"));
    let mut seen = Vec::new();
    collection
        .read_many(
            &ReadRequest {
                selectors,
                ignore_revs: true,
            },
            &mut |result| {
                seen.push(result.map(|d| serde_json::from_slice::<Value>(&d.json).unwrap()));
                true
            },
        )
        .unwrap();
    assert_eq!(seen.len(), 301);
    for (document, key) in seen.iter().zip(keys.iter().rev()) {
        let document = document.as_ref().unwrap();
        assert_eq!(document["_key"], json!(key));
        assert_eq!(document["_id"], json!(format!("things/{key}")));
    }
    assert_eq!(seen[300].as_ref().unwrap_err().num(), 1202);
    let mut scanned = 0;
    collection
        .scan(&mut |document| {
            let value: Value = serde_json::from_slice(&document.json).unwrap();
            assert!(value["_id"].as_str().unwrap().starts_with("things/"));
            scanned += 1;
            true
        })
        .unwrap();
    assert_eq!(scanned, 300);

    // A user key, a replacement with returnNew, removals.
    let mine = write(
        &*collection,
        WriteKind::Insert,
        vec![json!({"_key": "mine", "a": 1})],
    );
    assert_eq!(mine[0].as_ref().unwrap().id, "things/mine");
    let options = WriteOptions {
        return_new: true,
        ..WriteOptions::default()
    };
    let replaced = collection
        .write(WriteRequest::new(
            WriteKind::Replace,
            vec![json!({"_key": "mine", "a": 2})],
            options,
        ))
        .settle_one()
        .unwrap();
    assert_eq!(replaced.new.unwrap()["_id"], "things/mine");
    let removals: Vec<Value> = keys[..100].iter().map(|k| json!(k)).collect();
    let removed = write(&*collection, WriteKind::Remove, removals);
    assert!(removed.iter().all(Result::is_ok));
    assert_eq!(collection.count(), 201);
    assert_eq!(collection.read(&keys[0]).num_err(), 1202);
    assert!(collection.read(&keys[200]).is_ok());
    collection.truncate(false).unwrap();
    assert_eq!(collection.count(), 0);

    // Indexes: on every shard's leader, recorded in the Plan; unique ones need the shard keys.
    let unique = json!({"type": "persistent", "fields": ["n"], "unique": true});
    assert_eq!(collection.create_index(&unique).num_err(), 1470);
    let (index, new) = collection
        .create_index(&json!({"type": "persistent", "fields": ["n"]}))
        .unwrap();
    assert!(new);
    let (again, new) = collection
        .create_index(&json!({"type": "persistent", "fields": ["n"]}))
        .unwrap();
    assert!(!new);
    assert_eq!(again.id, index.id);
    for (shard, servers) in shards {
        let leader = servers[0].as_str().unwrap();
        let local = cluster.servers.engine(leader).database("_system").unwrap();
        let names: Vec<String> = local
            .collection(shard)
            .unwrap()
            .indexes()
            .into_iter()
            .map(|i| i.name)
            .collect();
        assert!(names.contains(&index.name), "{names:?}");
    }
    let listed: Vec<u64> = collection.indexes().iter().map(|i| i.id).collect();
    assert_eq!(listed, vec![0, index.id]);
    collection.drop_index(&index.id.to_string()).unwrap();
    assert_eq!(collection.indexes().len(), 1);
    assert_eq!(collection.drop_index("primary").num_err(), 1212);
}

#[test]
fn shard_keys_other_than_key_are_enforced() {
    let cluster = cluster();
    let engine = &*cluster.engine;
    let collection = create(
        engine,
        "_system",
        "people",
        json!({"numberOfShards": 3, "shardKeys": ["country"]}),
    )
    .unwrap();
    let given = write(
        &*collection,
        WriteKind::Insert,
        vec![json!({"_key": "k", "country": "de"})],
    );
    assert_eq!(given[0].as_ref().unwrap_err().num(), 1466);
    let inserted = write(
        &*collection,
        WriteKind::Insert,
        vec![json!({"country": "de", "v": 1}), json!({"country": "fr"})],
    );
    let key = inserted[0].as_ref().unwrap().key.clone();
    let changed = write(
        &*collection,
        WriteKind::Update,
        vec![json!({"_key": key, "country": "fr"})],
    );
    assert_eq!(changed[0].as_ref().unwrap_err().num(), 1469);
    let replaced = write(
        &*collection,
        WriteKind::Replace,
        vec![json!({"_key": key, "v": 2})],
    );
    assert_eq!(
        replaced[0].as_ref().unwrap_err().num(),
        1469,
        "a missing shard key is null"
    );
    let kept = write(
        &*collection,
        WriteKind::Update,
        vec![json!({"_key": key, "v": 3})],
    );
    assert!(kept[0].is_ok(), "{:?}", kept[0]);
    let document: Value = serde_json::from_slice(&collection.read(&key).unwrap().json).unwrap();
    assert_eq!(document["v"], 3);
    assert_eq!(document["_id"], json!(format!("people/{key}")));
    let removed = write(
        &*collection,
        WriteKind::Remove,
        vec![json!(key), json!("nothing")],
    );
    assert!(removed[0].is_ok());
    assert_eq!(removed[1].as_ref().unwrap_err().num(), 1202);
    assert_eq!(
        collection.responsible_shard(&json!({"v": 1})).num_err(),
        1468
    );
}

#[test]
fn catalogs_follow_arangodb_rules() {
    let cluster = cluster();
    let engine = &*cluster.engine;
    assert_eq!(
        create(engine, "_system", "big", json!({"numberOfShards": 1001})).num_err(),
        1450
    );
    assert_eq!(
        create(engine, "_system", "wide", json!({"replicationFactor": 4})).num_err(),
        1487
    );
    assert!(create(engine, "_system", "wide", json!({"replicationFactor": 4, "enforceReplicationFactor": false, "waitForSyncReplication": false})).is_ok());
    let prototype = create(engine, "_system", "proto", json!({"numberOfShards": 4})).unwrap();
    let follower = create(
        engine,
        "_system",
        "follower",
        json!({"distributeShardsLike": "proto"}),
    )
    .unwrap();
    let placed = |c: &Arc<dyn CollectionOps>| -> Vec<Value> {
        let shards = c.shards(true).unwrap();
        let names = c.shards(false).unwrap();
        names
            .as_array()
            .unwrap()
            .iter()
            .map(|n| shards[n.as_str().unwrap()].clone())
            .collect()
    };
    assert_eq!(placed(&prototype), placed(&follower));
    assert_eq!(follower.cluster_properties().unwrap()["numberOfShards"], 4);
    assert_eq!(
        create(
            engine,
            "_system",
            "chain",
            json!({"distributeShardsLike": "follower"})
        )
        .num_err(),
        1484
    );
    assert_eq!(
        create(
            engine,
            "_system",
            "lost",
            json!({"distributeShardsLike": "nothing"})
        )
        .num_err(),
        1486
    );
    let system = engine.database("_system").unwrap();
    assert_eq!(system.drop_collection("proto", false).num_err(), 1485);
    assert_eq!(
        create(engine, "_system", "proto", json!({})).num_err(),
        1207
    );
    system.rename_collection("proto", "prototype").unwrap();
    assert_eq!(
        follower.cluster_properties().unwrap()["distributeShardsLike"],
        "prototype"
    );
    system.drop_collection("follower", false).unwrap();
    system.drop_collection("prototype", false).unwrap();
    assert_eq!(system.collection("prototype").num_err(), 1203);

    // OneShard: every collection one shard, placed like the first.
    let single = engine
        .create_database_with(
            "single",
            &json!({"sharding": "single", "replicationFactor": 2}),
        )
        .unwrap();
    assert_eq!(single.cluster_properties().unwrap()["sharding"], "single");
    let first = create(engine, "single", "first", json!({"numberOfShards": 5})).unwrap();
    let second = create(engine, "single", "second", json!({})).unwrap();
    assert_eq!(first.cluster_properties().unwrap()["numberOfShards"], 1);
    assert_eq!(placed(&first), placed(&second));
    assert_eq!(placed(&first)[0].as_array().unwrap().len(), 2);
    assert_eq!(engine.create_database("single").num_err(), 1207);
    engine.drop_database("single").unwrap();
    assert!(engine.database("single").is_none());
    // A stream transaction that declares no collection begins on no DB server.
    let transaction = system
        .begin_transaction(quince_ops::TransactionOptions::default())
        .unwrap();
    let running: Vec<String> = system
        .running_transactions()
        .iter()
        .map(|t| t.id())
        .collect();
    assert_eq!(running, vec![transaction.id()]);
    transaction.abort().unwrap();
}

/// A coordinator's client stream transactions share its slots as a database's do (the same
/// `quince_ops::Slots`): one user holds at most its share, and neither another user nor a
/// transaction a request opens for itself (an AQL write query) is refused meanwhile.
#[test]
fn stream_transactions_share_the_coordinators_slots() {
    use quince_ops::{Beginner, Rank, TransactionOptions, RUNNING_PER_USER_MAX};
    let cluster = cluster();
    let system = cluster.engine.database("_system").unwrap();
    let begin = |begun_by: Beginner| {
        system.begin_transaction(TransactionOptions {
            begun_by,
            ..TransactionOptions::default()
        })
    };
    let ro = || Beginner::client("ro", Rank::User);
    for _ in 0..RUNNING_PER_USER_MAX {
        begin(ro()).unwrap();
    }
    let refused = begin(ro()).err().unwrap();
    assert_eq!(refused.num(), 32);
    assert!(refused.message.contains("per user"), "{refused}");
    begin(Beginner::client("rw", Rank::User)).unwrap();
    let own = begin(Beginner::request()).unwrap();
    assert!(!own.begun_by().stream);
    own.commit().unwrap();
    let first = system
        .running_transactions()
        .into_iter()
        .find(|t| t.begun_by().user == "ro")
        .unwrap();
    first.abort().unwrap();
    begin(ro()).unwrap();
    assert_eq!(begin(ro()).num_err(), 32);
}

#[test]
fn writes_follow_a_new_leader() {
    let cluster = cluster();
    let engine = &*cluster.engine;
    let collection = create(
        engine,
        "_system",
        "moving",
        json!({"numberOfShards": 1, "replicationFactor": 2}),
    )
    .unwrap();
    let names = collection.shards(false).unwrap();
    let shard = names[0].as_str().unwrap().to_string();
    let servers = collection.shards(true).unwrap()[&shard].clone();
    let (leader, follower) = (
        servers[0].as_str().unwrap().to_string(),
        servers[1].as_str().unwrap().to_string(),
    );
    cluster.servers.set_down(&leader, true);
    let before = cluster.servers.requests();
    let cid = collection.id();
    let store = cluster.store.clone();
    let servers = cluster.servers.clone();
    let failover = std::thread::spawn(move || {
        // Fail over once the coordinator found the leader unreachable.
        let deadline = Instant::now() + Duration::from_secs(10);
        while servers.requests() == before {
            assert!(Instant::now() < deadline, "the coordinator never tried");
            std::thread::yield_now();
        }
        promote(
            &*store,
            &Layout::default(),
            &ShardId::new("_system", cid, &shard),
            &leader,
            &|_| true,
            None,
        )
        .unwrap();
    });
    let written = write(
        &*collection,
        WriteKind::Insert,
        vec![json!({"_key": "after"})],
    );
    failover.join().unwrap();
    assert!(written[0].is_ok(), "{:?}", written[0]);
    let now = collection.shards(true).unwrap();
    assert_eq!(now[names[0].as_str().unwrap()][0], json!(follower));
}

#[test]
fn many_shards_are_reached_by_a_bounded_number_of_threads() {
    let cluster = cluster();
    let collection = create(
        &*cluster.engine,
        "_system",
        "wide",
        json!({"numberOfShards": 40}),
    )
    .unwrap();
    let items: Vec<Value> = (0..400)
        .map(|n| json!({"_key": format!("k{n}"), "n": n}))
        .collect();
    let results = write(&*collection, WriteKind::Insert, items);
    assert!(results.iter().all(Result::is_ok));
    let selectors: Vec<Value> = (0..400).rev().map(|n| json!(format!("k{n}"))).collect();
    let mut seen = Vec::new();
    collection
        .read_many(
            &ReadRequest {
                selectors,
                ignore_revs: true,
            },
            &mut |result| {
                let document: Value = serde_json::from_slice(&result.unwrap().json).unwrap();
                seen.push(document["n"].as_u64().unwrap());
                true
            },
        )
        .unwrap();
    assert_eq!(seen, (0..400).rev().collect::<Vec<u64>>());
    assert_eq!(collection.count(), 400);
}

#[test]
fn coordinators_starting_together_make_one_system_database() {
    use quince_cluster::coordinator::start_with;
    use quince_cluster::layout::Role;
    use quince_cluster::node::{ClusterConfig, Node};
    use quince_meta::{MemoryStore, MetaStore};

    let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
    let mut nodes = Vec::new();
    for id in SERVERS {
        let config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
        nodes.push(Node::join(store.clone(), config, id.into(), "3.12.4", "quince").unwrap());
    }
    let servers = quince_cluster::coordinator::testing::FakeDbServers::start(
        store.clone(),
        Layout::default(),
        &SERVERS,
    );
    let coordinators: Vec<_> = ["CRDN-1", "CRDN-2", "CRDN-3"]
        .iter()
        .map(|id| {
            let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:2");
            let node =
                Node::join(store.clone(), config, id.to_string(), "3.12.4", "quince").unwrap();
            nodes.push(node.clone());
            let servers = servers.clone();
            std::thread::spawn(move || start_with(node, servers, Timeouts::default()).unwrap())
        })
        .collect();
    let coordinators: Vec<_> = coordinators
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let collections = store
        .range(&Layout::default().collections("_system"))
        .unwrap();
    assert_eq!(collections.entries.len(), 1, "one _users");
    for coordinator in &coordinators {
        let engine = coordinator.engine();
        assert!(engine
            .database("_system")
            .unwrap()
            .collection("_users")
            .is_ok());
        coordinator.stop();
    }
    servers.stop();
    for node in nodes {
        node.leave();
    }
}

#[test]
fn without_db_servers_start_fails_clearly() {
    use quince_cluster::coordinator::start_with;
    use quince_cluster::layout::Role;
    use quince_cluster::node::{ClusterConfig, Node};
    use quince_meta::{MemoryStore, MetaStore};

    let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
    let servers = quince_cluster::coordinator::testing::FakeDbServers::start(
        store.clone(),
        Layout::default(),
        &[],
    );
    let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:2");
    let node = Node::join(store.clone(), config, "CRDN-1".into(), "3.12.4", "quince").unwrap();
    let timeouts = Timeouts {
        ddl: Duration::from_millis(200),
        ..Timeouts::default()
    };
    let error = start_with(node.clone(), servers.clone(), timeouts)
        .err()
        .unwrap();
    assert_eq!(error.num(), 1487, "{error}");
    assert!(error.message.contains("no DB server"), "{error}");
    servers.stop();
    node.leave();
}

/// The inserts of object texts (`CollectionOps::insert_texts`, the api's route for a body it
/// could check without parsing) against the inserts of the same objects through `write`.
fn insert_texts(
    collection: &dyn CollectionOps,
    bodies: &[Value],
) -> Vec<quince_errors::Result<quince_ops::WriteOutcome>> {
    let texts = bodies
        .iter()
        .map(|body| {
            let text = serde_json::to_vec(body).unwrap();
            quince_model::object_text::ObjectText::scan(&text, 64).expect("object text")
        })
        .collect();
    collection
        .insert_texts(texts, WriteOptions::default())
        .settle()
        .unwrap()
}

/// The stored document of `key` on its shard's leader, without `_key`, `_id` and `_rev`.
fn stored_without_meta(cluster: &Cluster, collection: &dyn CollectionOps, key: &str) -> Value {
    let shard = collection
        .responsible_shard(&json!({ "_key": key }))
        .unwrap();
    let shards = collection.shards(true).unwrap();
    let leader = shards[&shard][0].as_str().unwrap().to_string();
    let local = cluster
        .servers
        .engine(&leader)
        .database("_system")
        .unwrap()
        .collection(&shard)
        .unwrap();
    let mut document: Value = serde_json::from_slice(&local.read(key).unwrap().json).unwrap();
    let object = document.as_object_mut().unwrap();
    for name in ["_key", "_id", "_rev"] {
        object.remove(name);
    }
    document
}

#[test]
fn text_inserts_reach_the_same_shards_as_parsed_ones_with_the_same_rules() {
    let cluster = cluster();
    let engine = &*cluster.engine;
    let collection = create(engine, "_system", "texts", json!({"numberOfShards": 3})).unwrap();
    let bodies = vec![
        json!({"a": 1, "b": [2.5, null, {"c": "\u{e9}\n"}]}),
        json!({}),
        json!({"_key": "given", "x": true}),
        json!({"_key": 7}),
        json!({"_key": "bad/key"}),
        json!({"z": 1, "_rev": "ignored", "_id": "other/x"}),
    ];
    let by_text = insert_texts(&*collection, &bodies);
    let mut parsed_bodies = bodies.clone();
    parsed_bodies[2]["_key"] = json!("given2");
    let by_write = write(&*collection, WriteKind::Insert, parsed_bodies);
    assert_eq!(by_text.len(), bodies.len());
    for (n, (text, parsed)) in by_text.iter().zip(&by_write).enumerate() {
        match (text, parsed) {
            (Ok(text), Ok(parsed)) => {
                assert_eq!(text.id, format!("texts/{}", text.key), "item {n}");
                assert_eq!(
                    stored_without_meta(&cluster, &*collection, &text.key),
                    stored_without_meta(&cluster, &*collection, &parsed.key),
                    "item {n} is stored as the parsed insert stores it, on its shard"
                );
            }
            (Err(text), Err(parsed)) => {
                assert_eq!(text.num(), parsed.num(), "item {n}");
                assert_eq!(text.status, parsed.status, "item {n}");
            }
            _ => panic!("item {n}: {text:?} against {parsed:?}"),
        }
    }
    assert_eq!(by_text[2].as_ref().unwrap().key, "given");
    assert_eq!(by_text[3].as_ref().unwrap_err().num(), 1221);
    assert_eq!(by_text[4].as_ref().unwrap_err().num(), 1221);
    assert_eq!(
        insert_texts(&*collection, &[json!({"_key": "given"})])[0]
            .as_ref()
            .unwrap_err()
            .num(),
        1210,
        "the leader's own rules still apply"
    );

    let no_user_keys = create(
        engine,
        "_system",
        "generated",
        json!({"numberOfShards": 2, "keyOptions": {"allowUserKeys": false}}),
    )
    .unwrap();
    let results = insert_texts(&*no_user_keys, &[json!({"_key": "k"}), json!({"v": 1})]);
    assert_eq!(results[0].as_ref().unwrap_err().num(), 1222);
    assert!(results[1].is_ok(), "{:?}", results[1]);

    let other_keys = create(
        engine,
        "_system",
        "countries",
        json!({"numberOfShards": 3, "shardKeys": ["country"]}),
    )
    .unwrap();
    let results = insert_texts(
        &*other_keys,
        &[
            json!({"_key": "k", "country": "de"}),
            json!({"country": "de"}),
        ],
    );
    assert_eq!(results[0].as_ref().unwrap_err().num(), 1466);
    let key = results[1].as_ref().unwrap().key.clone();
    let document: Value = serde_json::from_slice(&other_keys.read(&key).unwrap().json).unwrap();
    assert_eq!(document["country"], "de");
}
