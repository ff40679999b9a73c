//! Stream transactions on DB servers (`docs/cluster.md`, "Transactions"): a transaction that
//! writes shards its server leads commits locally and ships each shard's changes to the
//! followers as one batch; an abort ships nothing; a server that does not lead a shard refuses
//! to begin a transaction that writes it. Three DB servers over one `MemoryStore`, real local
//! engines in temporary directories, the in-process transport (the harness in `dbservers/`,
//! shared with `dbserver_replication.rs`), with every apply request recorded.

use crate::dbservers;

use std::sync::Arc;

use parking_lot::Mutex;
use quince_cluster::dbserver::{LocalTransport, Transport};
use quince_cluster::layout::ReplicationMode;
use quince_cluster::peers::PeerError;
use quince_ops::{
    CollectionOps, DatabaseOps, InternalReply, InternalRequest, TransactionOps, TransactionOptions,
    TransactionStatus, WriteKind, WriteOptions,
};
use serde_json::{json, Value};

use dbservers::{cluster_over, contents, eventually, id, insert, write, Cluster, DB};

/// The in-process transport, recording the number of operations of each apply request.
struct Recording {
    inner: Arc<LocalTransport>,
    applies: Mutex<Vec<(String, usize)>>,
}

impl Transport for Recording {
    fn call(
        &self,
        server: &str,
        request: InternalRequest,
        long: bool,
    ) -> Result<InternalReply, PeerError> {
        if request.path == ["apply"] {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let ops = body["ops"].as_array().map_or(0, Vec::len);
            let shard = body["shard"].as_str().unwrap_or_default().to_owned();
            self.applies.lock().push((shard, ops));
        }
        self.inner.call(server, request, long)
    }
}

/// The harness's cluster, its servers sending through a [`Recording`].
struct Recorded {
    cluster: Cluster,
    recorded: Arc<Recording>,
}

impl std::ops::Deref for Recorded {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

fn cluster(n: usize) -> Recorded {
    let transport = LocalTransport::new();
    let recorded = Arc::new(Recording {
        inner: transport.clone(),
        applies: Mutex::new(Vec::new()),
    });
    Recorded {
        cluster: cluster_over(n, transport, recorded.clone()),
        recorded,
    }
}

/// Begins a transaction on member `i` that writes `shards`.
fn begin(c: &Cluster, i: usize, shards: &[&str]) -> quince_errors::Result<Arc<dyn TransactionOps>> {
    let database = c.members[i].server.engine().database(DB).unwrap();
    database.begin_transaction(TransactionOptions {
        write: shards.iter().map(|s| s.to_string()).collect(),
        ..TransactionOptions::default()
    })
}

/// Shard `shard` as seen inside `transaction`.
fn inside(transaction: &Arc<dyn TransactionOps>, shard: &str) -> Arc<dyn CollectionOps> {
    transaction.database().collection(shard).unwrap()
}

#[test]
fn a_committed_transaction_reaches_every_follower_and_an_aborted_one_nothing() {
    let c = cluster(3);
    c.plan(
        &[("s501", 0, &[1]), ("s502", 0, &[2])],
        ReplicationMode::Synchronous,
        1,
        vec![],
    );
    c.wait_shard(1, "s501");
    c.wait_shard(2, "s502");
    c.wait_in_sync("s501", &[0, 1]);
    c.wait_in_sync("s502", &[0, 2]);
    insert(&*c.served(0, "s501"), vec![json!({"_key": "old", "v": 0})]);
    eventually("the plain write is on the follower", || {
        c.local(1, "s501").unwrap().count() == 1
    });

    let trx = begin(&c, 0, &["s501", "s502"]).unwrap();
    let s501 = inside(&trx, "s501");
    let s502 = inside(&trx, "s502");
    // More changes than one apply batch (1000): they still travel together.
    let many: Vec<Value> = (0..1500)
        .map(|n| json!({"_key": format!("k{n}"), "n": n}))
        .collect();
    insert(&*s501, many);
    insert(
        &*s502,
        vec![json!({"_key": "a", "v": 1}), json!({"_key": "b", "v": 1})],
    );
    write(
        &*s501,
        WriteKind::Update,
        vec![
            json!({"_key": "k1", "n": -1}),
            json!({"_key": "old", "v": 2}),
        ],
        WriteOptions::default(),
    )
    .unwrap();
    write(
        &*s502,
        WriteKind::Remove,
        vec![json!("a")],
        WriteOptions::default(),
    )
    .unwrap();
    write(
        &*s501,
        WriteKind::Remove,
        vec![json!("k2")],
        WriteOptions::default(),
    )
    .unwrap();
    // Nothing is visible outside, on the leader or the followers, before the commit.
    assert_eq!(c.local(0, "s501").unwrap().count(), 1);
    assert_eq!(c.local(0, "s502").unwrap().count(), 0);
    assert_eq!(s501.count(), 1500);

    c.recorded.applies.lock().clear();
    trx.commit().unwrap();
    assert_eq!(trx.status(), TransactionStatus::Committed);
    // One apply request per shard: its last change of each key, all together.
    let mut applies = c.recorded.applies.lock().clone();
    applies.sort();
    assert_eq!(
        applies,
        vec![("s501".to_string(), 1501), ("s502".to_string(), 2)]
    );
    // Synchronous replication: the followers hold everything once the commit answered.
    let leader_501 = contents(&*c.local(0, "s501").unwrap());
    assert_eq!(leader_501.len(), 1500);
    assert_eq!(contents(&*c.local(1, "s501").unwrap()), leader_501);
    let leader_502 = contents(&*c.local(0, "s502").unwrap());
    assert_eq!(leader_502.len(), 1);
    assert_eq!(contents(&*c.local(2, "s502").unwrap()), leader_502);
    let k1 = leader_501.iter().find(|d| d.0 == "k1").unwrap();
    assert_eq!(k1.2["n"], -1);

    // An abort leaves nothing anywhere.
    let trx = begin(&c, 0, &["s501"]).unwrap();
    insert(&*inside(&trx, "s501"), vec![json!({"_key": "never"})]);
    trx.abort().unwrap();
    insert(&*c.served(0, "s501"), vec![json!({"_key": "after"})]);
    for (member, shard) in [(0, "s501"), (1, "s501")] {
        let local = c.local(member, shard).unwrap();
        assert!(local.read("never").is_err(), "member {member}");
        assert!(local.read("after").is_ok(), "member {member}");
    }
    assert_eq!(trx.commit().unwrap_err().num(), 1653);
}

#[test]
fn a_truncate_inside_a_transaction_removes_on_followers_only_what_it_removed() {
    let c = cluster(2);
    c.plan_in_sync("s601", ReplicationMode::Synchronous, 1);
    let leader = c.served(0, "s601");
    insert(&*leader, vec![json!({"_key": "x"}), json!({"_key": "y"})]);
    let trx = begin(&c, 0, &["s601"]).unwrap();
    let shard = inside(&trx, "s601");
    shard.truncate(false).unwrap();
    insert(&*shard, vec![json!({"_key": "z"})]);
    // A plain write after the transaction's truncate survives its commit, on every copy.
    insert(&*leader, vec![json!({"_key": "plain"})]);
    trx.commit().unwrap();
    let on_leader = contents(&*c.local(0, "s601").unwrap());
    let keys: Vec<&str> = on_leader.iter().map(|d| d.0.as_str()).collect();
    assert_eq!(keys, ["plain", "z"]);
    assert_eq!(contents(&*c.local(1, "s601").unwrap()), on_leader);
}

#[test]
fn followers_refuse_transactions_that_write_their_shards_and_a_lost_leadership_fails_the_commit() {
    let c = cluster(2);
    c.plan_in_sync("s701", ReplicationMode::Synchronous, 1);
    let refused = begin(&c, 1, &["s701"]).err().expect("a follower refuses");
    assert_eq!(refused.num(), 1496);
    // Reading a followed shard in a transaction is fine.
    let database: Arc<dyn DatabaseOps> = c.members[1].server.engine().database(DB).unwrap();
    let reading = database
        .begin_transaction(TransactionOptions {
            read: vec!["s701".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    reading.commit().unwrap();

    // The leadership moves while a transaction runs: its writes and its commit are refused,
    // and nothing of it is committed.
    let trx = begin(&c, 0, &["s701"]).unwrap();
    insert(&*inside(&trx, "s701"), vec![json!({"_key": "lost"})]);
    c.set_shard("s701", 1, &[0], 2);
    eventually("member 0 gave the leadership up", || {
        write(
            &*c.served(0, "s701"),
            WriteKind::Insert,
            vec![json!({})],
            WriteOptions::default(),
        )
        .map(|mut r| r.remove(0).is_err_and(|e| e.num() == 1496))
        .unwrap_or(false)
    });
    let refused = write(
        &*inside(&trx, "s701"),
        WriteKind::Insert,
        vec![json!({"_key": "later"})],
        WriteOptions::default(),
    )
    .unwrap()
    .remove(0)
    .unwrap_err();
    assert_eq!(refused.num(), 1496);
    assert_eq!(trx.commit().unwrap_err().num(), 1496);
    assert_eq!(trx.status(), TransactionStatus::Aborted);
    assert!(c.local(0, "s701").unwrap().read("lost").is_err());
}

#[test]
fn a_follower_that_fails_during_the_commit_leaves_the_in_sync_set_first() {
    let c = cluster(2);
    c.plan_in_sync("s801", ReplicationMode::Synchronous, 1);
    let trx = begin(&c, 0, &["s801"]).unwrap();
    insert(&*inside(&trx, "s801"), vec![json!({"_key": "t"})]);
    c.transport.set_cut(&id(1), true);
    trx.commit().unwrap();
    assert_eq!(
        c.in_sync("s801"),
        vec![id(0)],
        "removed before the commit answered"
    );

    // When the follower cannot be removed either, the commit is not acknowledged (the leader
    // has it).
    c.transport.set_cut(&id(1), false);
    c.wait_in_sync("s801", &[0, 1]);
    let trx = begin(&c, 0, &["s801"]).unwrap();
    insert(&*inside(&trx, "s801"), vec![json!({"_key": "u"})]);
    c.transport.set_cut(&id(1), true);
    c.memory.set_available(false);
    let error = trx.commit().unwrap_err();
    assert_eq!(error.num(), 1478);
    c.memory.set_available(true);
    assert!(c.local(0, "s801").unwrap().read("u").is_ok());
}
