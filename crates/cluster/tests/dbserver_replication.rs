//! The DB server role end to end in one process: two or three DB servers over one
//! `MemoryStore`, each with a real local engine in its own temporary directory, talking through
//! the in-process transport (the harness in `dbservers/`). The Plan is written here as a
//! coordinator would.

use crate::dbservers;

use std::sync::Arc;

use quince_cluster::dbserver::start_with_transport;
use quince_cluster::in_sync::{self, ShardId};
use quince_cluster::layout::{encode, CollectionPlan, ReplicationMode};
use quince_model::object_text::ObjectText;
use quince_ops::{ClusterOps, Engine, InternalRequest, WriteKind, WriteOptions, WriteRequest};
use serde_json::{json, Value};

use dbservers::{cluster, contents, eventually, id, insert, write, CID, DB};

#[test]
fn the_plan_places_shards_and_leaders_replicate_every_kind_of_write() {
    let c = cluster(3);
    let index = json!({"id": "7", "name": "by_total", "type": "persistent", "fields": ["total"]});
    c.plan(
        &[("s101", 0, &[1]), ("s102", 1, &[2])],
        ReplicationMode::Synchronous,
        1,
        vec![index],
    );
    let on_leader = c.wait_shard(0, "s101");
    let on_follower = c.wait_shard(1, "s101");
    c.wait_shard(1, "s102");
    c.wait_shard(2, "s102");
    assert!(c.local(0, "s102").is_none() && c.local(2, "s101").is_none());
    assert!(on_follower.indexes().iter().any(|i| i.name == "by_total"));
    c.wait_in_sync("s101", &[0, 1]);

    let leader = c.served(0, "s101");
    // Not synced (the api answers 202), yet acknowledged only through the handle it awaits.
    let results = leader.write(WriteRequest::new(
        WriteKind::Insert,
        vec![json!({"_key": "z"})],
        WriteOptions::default(),
    ));
    assert!(!results.synced && results.durability.is_some());
    results.settle().unwrap();
    assert!(on_follower.read("z").is_ok());
    write(
        &*leader,
        WriteKind::Remove,
        vec![json!("z")],
        WriteOptions::default(),
    )
    .unwrap();
    let written = insert(
        &*leader,
        vec![json!({"_key": "a", "total": 1}), json!({"_key": "b"})],
    );
    assert!(
        written.iter().all(|w| w.new.is_none()),
        "returnNew only when asked"
    );
    assert_eq!(
        contents(&*on_follower),
        contents(&*on_leader),
        "applied before the answer"
    );
    let options = WriteOptions {
        return_new: true,
        ..WriteOptions::default()
    };
    let updated = write(
        &*leader,
        WriteKind::Update,
        vec![json!({"_key": "a", "total": 2})],
        options,
    )
    .unwrap();
    assert_eq!(
        updated[0].as_ref().unwrap().new.as_ref().unwrap()["total"],
        2
    );
    write(
        &*leader,
        WriteKind::Remove,
        vec![json!("b")],
        WriteOptions::default(),
    )
    .unwrap();
    let follower_docs = contents(&*on_follower);
    assert_eq!(follower_docs, contents(&*on_leader));
    assert_eq!(follower_docs.len(), 1);
    assert_eq!(follower_docs[0].2["total"], 2);

    // Followers serve reads and refuse writes; so does a server that holds no leadership.
    let follower = c.served(1, "s101");
    assert_eq!(follower.read("a").unwrap().rev, follower_docs[0].1);
    let refused = write(
        &*follower,
        WriteKind::Insert,
        vec![json!({})],
        WriteOptions::default(),
    );
    assert_eq!(refused.unwrap()[0].as_ref().unwrap_err().num(), 1496);
    assert_eq!(follower.truncate(false).unwrap_err().num(), 1496);

    leader.truncate(false).unwrap();
    assert_eq!(on_follower.count(), 0);

    // A property change in the Plan reaches the shards.
    let key = c.layout.collection(DB, CID);
    let mut plan: CollectionPlan =
        serde_json::from_slice(&c.store.get(&key).unwrap().unwrap().value).unwrap();
    plan.properties = json!({"waitForSync": true});
    c.store.put(&key, &encode(&plan)).unwrap();
    eventually("waitForSync reaches the follower", || {
        on_follower.wait_for_sync()
    });

    // The Plan drops an index, and moves s102 off member 2.
    c.plan(
        &[("s101", 0, &[1]), ("s102", 1, &[0])],
        ReplicationMode::Synchronous,
        1,
        vec![],
    );
    eventually("the index is dropped", || on_follower.indexes().len() == 1);
    eventually("s102 leaves member 2", || c.local(2, "s102").is_none());
    c.wait_shard(0, "s102");
    c.wait_in_sync("s102", &[0, 1]);
}

#[test]
fn a_failed_follower_leaves_the_in_sync_set_before_the_write_is_acknowledged() {
    let c = cluster(2);
    c.plan_in_sync("s201", ReplicationMode::Synchronous, 1);
    let leader = c.served(0, "s201");
    insert(&*leader, vec![json!({"_key": "before"})]);

    c.transport.set_cut(&id(1), true);
    insert(&*leader, vec![json!({"_key": "while-cut"})]);
    assert_eq!(
        c.in_sync("s201"),
        vec![id(0)],
        "the follower was removed before the write was acknowledged"
    );

    // Back: it catches up (the write it missed included) and rejoins.
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s201", &[0, 1]);
    let follower = c.local(1, "s201").unwrap();
    assert_eq!(
        contents(&*follower),
        contents(&*c.local(0, "s201").unwrap())
    );
    assert_eq!(follower.count(), 2);
}

#[test]
fn below_write_concern_writes_are_refused_with_1429() {
    let c = cluster(2);
    c.plan_in_sync("s301", ReplicationMode::Synchronous, 2);
    let leader = c.served(0, "s301");
    insert(&*leader, vec![json!({"_key": "ok"})]);
    c.transport.set_cut(&id(1), true);
    // This write sees two in-sync copies, loses one, and is acknowledged once it is removed.
    insert(&*leader, vec![json!({"_key": "last"})]);
    let refused = write(
        &*leader,
        WriteKind::Insert,
        vec![json!({})],
        WriteOptions::default(),
    );
    let error = refused.unwrap().remove(0).unwrap_err();
    assert_eq!((error.num(), error.status), (1429, 403));
    assert_eq!(leader.truncate(false).unwrap_err().num(), 1429);
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s301", &[0, 1]);
    insert(&*leader, vec![json!({"_key": "again"})]);
}

#[test]
fn a_write_whose_follower_cannot_be_removed_is_never_acknowledged() {
    let c = cluster(2);
    c.plan_in_sync("s401", ReplicationMode::Synchronous, 1);
    let leader = c.served(0, "s401");
    c.transport.set_cut(&id(1), true);
    c.memory.set_available(false);
    let failed = write(
        &*leader,
        WriteKind::Insert,
        vec![json!({"_key": "x"})],
        WriteOptions::default(),
    );
    assert_eq!(
        failed.unwrap_err().num(),
        1478,
        "the store could not be changed"
    );
    c.memory.set_available(true);
    // Once the removal can be made, writes go on without the follower.
    eventually("a write is acknowledged again", || {
        write(
            &*leader,
            WriteKind::Insert,
            vec![json!({})],
            WriteOptions::default(),
        )
        .is_ok()
    });
    assert_eq!(c.in_sync("s401"), vec![id(0)]);
}

#[test]
fn followers_fence_stale_epochs_and_wrong_leaders() {
    let c = cluster(3);
    c.plan(
        &[("s501", 0, &[1, 2])],
        ReplicationMode::Synchronous,
        1,
        vec![],
    );
    c.wait_shard(1, "s501");
    c.wait_shard(2, "s501");
    c.wait_in_sync("s501", &[0, 1, 2]);
    let leader = c.served(0, "s501");
    insert(&*leader, vec![json!({"_key": "a"})]);
    let apply = |epoch: u64, from: &str| {
        let body = json!({
            "shard": "s501", "cid": CID, "epoch": epoch, "leader": from,
            "ops": [{"put": {"_key": "forged", "_rev": "_kAAAAAAAAA"}}],
        });
        let reply = c.members[1]
            .server
            .internal(InternalRequest {
                method: "POST".into(),
                database: DB.into(),
                path: vec!["apply".into()],
                query: Vec::new(),
                body: serde_json::to_vec(&body).unwrap(),
            })
            .unwrap();
        let value: Value = serde_json::from_slice(&reply.body).unwrap();
        (reply.status, value["errorNum"].as_u64())
    };
    assert_eq!(apply(1, &id(2)), (406, Some(1490)), "not the leader");

    // Supervision promotes member 2 (epoch 2): the follower learns it from the store as soon
    // as a request names the new epoch, and refuses the old leader from then on.
    let promoted = in_sync::promote(
        &*c.store,
        &c.layout,
        &ShardId::new(DB, CID, "s501"),
        &id(0),
        &|s| s == id(2),
        None,
    )
    .unwrap();
    assert!(matches!(promoted, in_sync::Promotion::Promoted(_)));
    let probe = json!({"shard": "s501", "cid": CID, "epoch": 2, "leader": id(1), "ops": []});
    let reply = c.members[1]
        .server
        .internal(InternalRequest {
            method: "POST".into(),
            database: DB.into(),
            path: vec!["apply".into()],
            query: Vec::new(),
            body: serde_json::to_vec(&probe).unwrap(),
        })
        .unwrap();
    assert_eq!(reply.status, 406, "member 1 is not the leader at epoch 2");
    assert_eq!(apply(1, &id(0)), (503, Some(1491)), "epoch 1 is over");
    assert_eq!(
        c.local(1, "s501").unwrap().count(),
        1,
        "nothing forged was applied"
    );

    // The old leader can acknowledge nothing more: its followers refuse it, and it cannot
    // change the in-sync set of an epoch that is over.
    let stale = write(
        &*leader,
        WriteKind::Insert,
        vec![json!({"_key": "late"})],
        WriteOptions::default(),
    );
    let error = match stale {
        Err(error) => error,
        Ok(mut items) => items.remove(0).unwrap_err(),
    };
    assert!([1491, 1496].contains(&error.num()), "{error:?}");
    // The new leader takes over, the old one catches up as its follower.
    c.wait_in_sync("s501", &[0, 1, 2]);
    let new_leader = c.served(2, "s501");
    insert(&*new_leader, vec![json!({"_key": "b"})]);
    let expected = contents(&*c.local(2, "s501").unwrap());
    assert_eq!(contents(&*c.local(0, "s501").unwrap()), expected);
    assert_eq!(contents(&*c.local(1, "s501").unwrap()), expected);
    // ("late" was never acknowledged; whether it survived depends on whether the new leader
    // applied it before it learnt of epoch 2: either way all three copies agree.)
}

#[test]
fn a_follower_that_missed_writes_or_holds_extra_ones_ends_identical() {
    let c = cluster(2);
    let unique = json!({"id": "9", "name": "by_u", "type": "persistent", "fields": ["u"], "unique": true, "sparse": true});
    // The leader alone first: a shard large enough to be compared in several pages.
    c.plan(
        &[("s601", 0, &[])],
        ReplicationMode::Synchronous,
        1,
        vec![unique.clone()],
    );
    c.wait_in_sync("s601", &[0]);
    let leader = c.served(0, "s601");
    for chunk in 0..24 {
        let items = (0..1000)
            .map(|i| json!({"_key": format!("k{chunk}-{i}"), "n": i}))
            .collect();
        insert(&*leader, items);
    }
    insert(
        &*leader,
        vec![json!({"_key": "x", "u": 1}), json!({"_key": "y", "u": 2})],
    );
    // The follower is added, catches up and is sent every later write.
    c.plan(
        &[("s601", 0, &[1])],
        ReplicationMode::Synchronous,
        1,
        vec![unique],
    );
    c.wait_in_sync("s601", &[0, 1]);
    let follower = c.local(1, "s601").unwrap();
    assert_eq!(follower.count(), 24_002);
    assert_eq!(
        contents(&*follower),
        contents(&*c.local(0, "s601").unwrap())
    );

    // Cut off, it misses writes and (as an old leader might) holds writes nobody acknowledged,
    // swapping unique values with the leader's.
    c.transport.set_cut(&id(1), true);
    write(
        &*leader,
        WriteKind::Remove,
        vec![json!("k0-0")],
        WriteOptions::default(),
    )
    .unwrap();
    insert(&*leader, vec![json!({"_key": "new"})]);
    assert_eq!(c.in_sync("s601"), vec![id(0)]);
    let options = WriteOptions::default();
    write(
        &*follower,
        WriteKind::Update,
        vec![json!({"_key": "x", "u": 3})],
        options.clone(),
    )
    .unwrap();
    write(
        &*follower,
        WriteKind::Update,
        vec![json!({"_key": "y", "u": 1})],
        options.clone(),
    )
    .unwrap();
    write(
        &*follower,
        WriteKind::Update,
        vec![json!({"_key": "x", "u": 2})],
        options.clone(),
    )
    .unwrap();
    insert(&*follower, vec![json!({"_key": "extra"})]);
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s601", &[0, 1]);
    assert_eq!(
        contents(&*follower),
        contents(&*c.local(0, "s601").unwrap())
    );
    assert!(follower.read("extra").is_err() && follower.read("new").is_ok());
}

#[test]
fn asynchronous_shards_acknowledge_at_once_and_followers_catch_up_behind() {
    let c = cluster(2);
    c.plan_in_sync("s701", ReplicationMode::Asynchronous, 2);
    let leader = c.served(0, "s701");
    let follower = c.local(1, "s701").unwrap();
    insert(&*leader, vec![json!({"_key": "a"})]);
    eventually("the follower applied the write", || follower.count() == 1);

    // A failed follower does not hold writes up (writeConcern is not checked), and leaves the
    // in-sync set, so that a promotion prefers caught-up members.
    c.transport.set_cut(&id(1), true);
    insert(&*leader, vec![json!({"_key": "b"})]);
    insert(&*leader, vec![json!({"_key": "c"})]);
    eventually("the follower left the in-sync set", || {
        c.in_sync("s701") == vec![id(0)]
    });
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s701", &[0, 1]);
    assert_eq!(
        contents(&*follower),
        contents(&*c.local(0, "s701").unwrap())
    );
}

#[test]
fn a_restarted_leader_counts_nobody_in_sync_until_they_join_again() {
    let mut c = cluster(2);
    c.plan_in_sync("s801", ReplicationMode::Synchronous, 1);
    insert(&*c.served(0, "s801"), vec![json!({"_key": "a"})]);
    // The leader restarts at the same epoch: it has no senders, so its old in-sync set (which
    // Current still holds) must not count; the follower is cut off and cannot rejoin.
    c.members[0].server.stop();
    c.transport.set_cut(&id(1), true);
    let local: Arc<dyn Engine> = Arc::clone(&c.members[0].catalog) as Arc<dyn Engine>;
    let node = Arc::clone(&c.members[0].node);
    let restarted = start_with_transport(node, local, c.transport.clone()).unwrap();
    c.transport.register(&restarted);
    c.members[0].server = restarted;
    eventually("the restarted leader serves writes", || {
        write(
            &*c.served(0, "s801"),
            WriteKind::Insert,
            vec![json!({"_key": "b"})],
            WriteOptions::default(),
        )
        .is_ok_and(|items| items[0].is_ok())
    });
    assert_eq!(c.in_sync("s801"), vec![id(0)]);
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s801", &[0, 1]);
    assert_eq!(
        contents(&*c.local(1, "s801").unwrap()),
        contents(&*c.local(0, "s801").unwrap())
    );
}

#[test]
fn internal_requests_answer_arangodb_errors() {
    let c = cluster(1);
    let ask = |method: &str, path: &str, query: Vec<(String, String)>| {
        c.members[0]
            .server
            .internal(InternalRequest {
                method: method.into(),
                database: DB.into(),
                path: vec![path.into()],
                query,
                body: b"{}".to_vec(),
            })
            .unwrap()
    };
    assert_eq!(ask("GET", "nothing", vec![]).status, 404);
    assert_eq!(ask("POST", "apply", vec![]).status, 400);
    let keys = ask("GET", "keys", vec![("shard".into(), "s1".into())]);
    assert_eq!(keys.status, 404, "no such database or shard");
    assert_eq!(c.members[0].server.role().name(), "PRIMARY");
}

#[test]
fn inserts_of_object_texts_are_replicated_as_parsed_ones_are() {
    let c = cluster(2);
    c.plan(
        &[("s101", 0, &[1])],
        ReplicationMode::Synchronous,
        1,
        vec![],
    );
    let on_leader = c.wait_shard(0, "s101");
    let on_follower = c.wait_shard(1, "s101");
    c.wait_in_sync("s101", &[0, 1]);
    let leader = c.served(0, "s101");
    let texts = |bodies: &[Value]| -> Vec<ObjectText> {
        bodies
            .iter()
            .map(|body| ObjectText::scan(&serde_json::to_vec(body).unwrap(), 64).unwrap())
            .collect()
    };

    let results = leader.insert_texts(
        texts(&[json!({"_key": "t1", "v": [1, {"w": "\u{e9}"}]}), json!({})]),
        WriteOptions::default(),
    );
    assert!(!results.synced && results.durability.is_some());
    let outcomes = results.settle().unwrap();
    assert!(outcomes.iter().all(|o| o.as_ref().unwrap().new.is_none()));
    let generated = outcomes[1].as_ref().unwrap().key.clone();
    assert!(on_follower.read("t1").is_ok() && on_follower.read(&generated).is_ok());
    assert_eq!(
        contents(&*on_follower),
        contents(&*on_leader),
        "applied before the answer"
    );

    let options = WriteOptions {
        return_new: true,
        ..WriteOptions::default()
    };
    let outcomes = leader
        .insert_texts(
            texts(&[json!({"_key": "t2", "n": 2}), json!({"_key": "t1"})]),
            options,
        )
        .settle()
        .unwrap();
    assert_eq!(outcomes[0].as_ref().unwrap().new.as_ref().unwrap()["n"], 2);
    assert_eq!(outcomes[1].as_ref().unwrap_err().num(), 1210);
    assert_eq!(contents(&*on_follower), contents(&*on_leader));
    assert_eq!(on_follower.count(), 3);

    let follower = c.served(1, "s101");
    let refused = follower
        .insert_texts(texts(&[json!({"_key": "t3"})]), WriteOptions::default())
        .settle()
        .unwrap();
    assert_eq!(refused[0].as_ref().unwrap_err().num(), 1496);
}

#[test]
fn only_small_unsynced_applies_at_a_known_epoch_may_skip_the_blocking_pool() {
    let c = cluster(2);
    c.plan_in_sync("s101", ReplicationMode::Synchronous, 1);
    let follower = &c.members[1].server;
    let apply = |facts: &[(&str, &str)]| InternalRequest {
        method: "POST".into(),
        database: DB.into(),
        path: vec!["apply".into()],
        query: facts
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body: Vec::new(),
    };
    let quick = [
        ("shard", "s101"),
        ("epoch", "1"),
        ("ops", "3"),
        ("waitForSync", "false"),
    ];
    assert!(follower.internal_is_quick(&apply(&quick)));
    for (at, value, why) in [
        (1, "2", "an epoch newer than the view reads the Plan key"),
        (2, "17", "a large batch"),
        (3, "true", "a synced batch"),
        (0, "s999", "a shard the view does not hold"),
    ] {
        let mut facts = quick;
        facts[at].1 = value;
        assert!(!follower.internal_is_quick(&apply(&facts)), "{why}");
    }
    assert!(
        !follower.internal_is_quick(&apply(&quick[1..])),
        "without the facts"
    );
    let mut keys = apply(&quick);
    keys.method = "GET".into();
    keys.path = vec!["keys".into()];
    assert!(!follower.internal_is_quick(&keys), "only applies");
}

#[test]
fn while_an_order_lock_waits_on_the_network_document_requests_leave_the_runtime_workers() {
    let c = cluster(2);
    c.plan_in_sync("s101", ReplicationMode::Synchronous, 1);
    let server = &c.members[0].server;
    let engine = server.engine();
    let database = engine.database(DB).unwrap();
    assert!(!engine.blocks_on_network() && !database.blocks_on_network());
    let hold = server.hold_order_on_network();
    let second = server.hold_order_on_network();
    assert!(engine.blocks_on_network() && database.blocks_on_network());
    drop(hold);
    assert!(database.blocks_on_network(), "one hold is left");
    drop(second);
    assert!(!engine.blocks_on_network() && !database.blocks_on_network());
}
