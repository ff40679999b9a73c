//! Stream transactions of the local engine through the operations interface: visibility
//! (own writes inside, nothing outside before commit), write-write conflicts, collection
//! locks, the size bound, the idle timeout, the status rules, that a commit survives a
//! restart whole, and how client stream transactions share a database's slots (a user's
//! share, the read-only bound, the administrators' reserve, the total, and that transactions
//! a request opens for itself take no slot).

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_db::{
    Catalog, CollectionOps, DatabaseOps, DbConfig, WriteKind, WriteOptions, WriteRequest,
};
use quince_ops::{
    Beginner, Rank, TransactionOps, TransactionOptions, TransactionStatus, RUNNING_ADMIN_RESERVE,
    RUNNING_MAX, RUNNING_PER_USER_MAX, RUNNING_READ_ONLY_MAX,
};
use serde_json::{json, Value};

use common::{collection, config};

fn database(catalog: &Catalog) -> Arc<dyn DatabaseOps> {
    catalog.database("_system").unwrap()
}

fn begin(catalog: &Catalog, write: &[&str]) -> Arc<dyn TransactionOps> {
    database(catalog)
        .begin_transaction(TransactionOptions {
            write: write.iter().map(|s| s.to_string()).collect(),
            ..TransactionOptions::default()
        })
        .expect("begins")
}

fn ids(transactions: &[Arc<dyn TransactionOps>]) -> Vec<String> {
    transactions.iter().map(|t| t.id()).collect()
}

fn insert(c: &dyn CollectionOps, doc: Value) -> quince_errors::Result<String> {
    c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![doc],
        WriteOptions::default(),
    ))
    .settle_one()
    .map(|o| o.key)
}

fn value(c: &dyn CollectionOps, key: &str) -> Option<Value> {
    c.read(key)
        .ok()
        .map(|d| serde_json::from_slice::<Value>(&d.json).unwrap()["v"].clone())
}

#[test]
fn writes_are_seen_inside_and_nowhere_else_until_commit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let (a, b) = (collection(&catalog, "a"), collection(&catalog, "b"));
    insert(&*a, json!({"_key": "old", "v": 0})).unwrap();
    let trx = begin(&catalog, &["a", "b"]);
    let view = trx.database();
    let (ta, tb) = (view.collection("a").unwrap(), view.collection("b").unwrap());
    insert(&*ta, json!({"_key": "x", "v": 1})).unwrap();
    insert(&*tb, json!({"_key": "y", "v": 2})).unwrap();
    ta.write(WriteRequest::one(
        WriteKind::Remove,
        "old",
        Default::default(),
        WriteOptions::default(),
    ))
    .settle_one()
    .unwrap();
    assert_eq!(value(&*ta, "x"), Some(json!(1)));
    assert_eq!(value(&*ta, "old"), None);
    assert_eq!(ta.count(), 1);
    assert_eq!(value(&*a, "x"), None, "not visible outside before commit");
    assert_eq!(value(&*a, "old"), Some(json!(0)));
    assert_eq!(a.count(), 1);
    let mut seen = 0;
    ta.scan(&mut |_| {
        seen += 1;
        true
    })
    .unwrap();
    assert_eq!(seen, 1);
    trx.commit().unwrap();
    assert_eq!(trx.status(), TransactionStatus::Committed);
    assert_eq!(value(&*a, "x"), Some(json!(1)));
    assert_eq!(value(&*b, "y"), Some(json!(2)));
    assert_eq!(value(&*a, "old"), None);
    // Committed is final: a second commit is fine, an abort is refused.
    trx.commit().unwrap();
    assert_eq!(trx.abort().unwrap_err().num(), 1653);
    drop((a, b, ta, tb, view, trx));
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = common::open_os(dir.path());
    let db = database(&catalog);
    assert_eq!(value(&*db.collection("a").unwrap(), "x"), Some(json!(1)));
    assert_eq!(value(&*db.collection("b").unwrap(), "y"), Some(json!(2)));
    assert_eq!(value(&*db.collection("a").unwrap(), "old"), None);
}

#[test]
fn abort_drops_everything_and_releases_the_keys() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let a = collection(&catalog, "a");
    let trx = begin(&catalog, &["a"]);
    let ta = trx.database().collection("a").unwrap();
    insert(&*ta, json!({"_key": "x", "v": 1})).unwrap();
    assert_eq!(insert(&*a, json!({"_key": "x"})).unwrap_err().num(), 1200);
    trx.abort().unwrap();
    trx.abort().unwrap();
    assert_eq!(trx.commit().unwrap_err().num(), 1653);
    assert_eq!(insert(&*ta, json!({"_key": "z"})).unwrap_err().num(), 1654);
    assert_eq!(a.count(), 0);
    insert(&*a, json!({"_key": "x", "v": 9})).unwrap();
    assert_eq!(value(&*a, "x"), Some(json!(9)));
}

#[test]
fn two_transactions_writing_one_key_do_not_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let a = collection(&catalog, "a");
    insert(&*a, json!({"_key": "k", "v": 0})).unwrap();
    let (t1, t2) = (begin(&catalog, &["a"]), begin(&catalog, &["a"]));
    let (c1, c2) = (
        t1.database().collection("a").unwrap(),
        t2.database().collection("a").unwrap(),
    );
    let patch = |c: &dyn CollectionOps, v: i64| {
        c.write(WriteRequest::one(
            WriteKind::Update,
            "k",
            json!({"v": v}).as_object().unwrap().clone(),
            WriteOptions::default(),
        ))
        .settle_one()
    };
    patch(&*c1, 1).unwrap();
    assert_eq!(patch(&*c2, 2).unwrap_err().num(), 1200);
    // Each sees its own state: t2 still reads the committed version.
    assert_eq!(value(&*c1, "k"), Some(json!(1)));
    assert_eq!(value(&*c2, "k"), Some(json!(0)));
    t1.commit().unwrap();
    assert_eq!(value(&*c2, "k"), Some(json!(1)), "read committed");
    patch(&*c2, 2).unwrap();
    t2.commit().unwrap();
    assert_eq!(value(&*a, "k"), Some(json!(2)));
}

#[test]
fn exclusive_collections_wait_and_time_out_with_18() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let a = collection(&catalog, "a");
    let db = database(&catalog);
    let exclusive = db
        .begin_transaction(TransactionOptions {
            exclusive: vec!["a".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let started = Instant::now();
    let refused = db
        .begin_transaction(TransactionOptions {
            write: vec!["a".into()],
            lock_timeout: 0.2,
            ..TransactionOptions::default()
        })
        .err()
        .unwrap();
    assert_eq!(refused.num(), 18);
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_eq!(insert(&*a, json!({"_key": "p"})).unwrap_err().num(), 18);
    exclusive.commit().unwrap();
    insert(&*a, json!({"_key": "p"})).unwrap();
    begin(&catalog, &["a"]).abort().unwrap();
}

#[test]
fn undeclared_collections_and_the_size_bound_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "a");
    collection(&catalog, "r");
    let db = database(&catalog);
    assert_eq!(
        db.begin_transaction(TransactionOptions {
            write: vec!["missing".into()],
            ..TransactionOptions::default()
        })
        .err()
        .unwrap()
        .num(),
        1203
    );
    let trx = db
        .begin_transaction(TransactionOptions {
            write: vec!["a".into()],
            read: vec!["r".into()],
            allow_implicit: false,
            max_transaction_size: 200,
            ..TransactionOptions::default()
        })
        .unwrap();
    let view = trx.database();
    let r = view.collection("r").unwrap();
    assert_eq!(insert(&*r, json!({"_key": "q"})).unwrap_err().num(), 1652);
    assert_eq!(r.read("q").unwrap_err().num(), 1202, "declared for reading");
    let a = view.collection("a").unwrap();
    insert(&*a, json!({"_key": "small"})).unwrap();
    let big = json!({"_key": "big", "pad": "x".repeat(300)});
    assert_eq!(insert(&*a, big).unwrap_err().num(), 32);
    assert_eq!(trx.status(), TransactionStatus::Running);
    trx.commit().unwrap();
    assert_eq!(db.collection("a").unwrap().count(), 1);
}

#[test]
fn idle_transactions_are_aborted() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(DbConfig {
        transaction_idle_timeout: Duration::from_millis(50),
        ..config(dir.path(), Arc::new(quince_storage::io::OsFileIo::new()))
    })
    .unwrap();
    collection(&catalog, "a");
    let trx = begin(&catalog, &["a"]);
    insert(
        &*trx.database().collection("a").unwrap(),
        json!({"_key": "x"}),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while trx.status() == TransactionStatus::Running {
        assert!(
            Instant::now() < deadline,
            "the idle transaction was never aborted"
        );
        std::thread::yield_now();
    }
    assert_eq!(trx.status(), TransactionStatus::Aborted);
    assert!(database(&catalog).running_transactions().is_empty());
    assert_eq!(database(&catalog).collection("a").unwrap().count(), 0);
    // Its key is free again.
    insert(
        &*database(&catalog).collection("a").unwrap(),
        json!({"_key": "x"}),
    )
    .unwrap();
}

#[test]
fn truncate_inside_a_transaction_is_undone_by_abort() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let a = collection(&catalog, "a");
    for i in 0..5 {
        insert(&*a, json!({"_key": format!("k{i}")})).unwrap();
    }
    let trx = begin(&catalog, &["a"]);
    let ta = trx.database().collection("a").unwrap();
    insert(&*ta, json!({"_key": "new"})).unwrap();
    ta.truncate(false).unwrap();
    assert_eq!(ta.count(), 0);
    assert_eq!(a.count(), 5);
    trx.abort().unwrap();
    assert_eq!(a.count(), 5);
    let trx = begin(&catalog, &["a"]);
    trx.database()
        .collection("a")
        .unwrap()
        .truncate(false)
        .unwrap();
    trx.commit().unwrap();
    assert_eq!(a.count(), 0);
}

#[test]
fn transactions_are_listed_and_found_by_id() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "a");
    let db = database(&catalog);
    let trx = begin(&catalog, &["a"]);
    assert_eq!(ids(&db.running_transactions()), vec![trx.id()]);
    assert_eq!(db.transaction(&trx.id()).unwrap().id(), trx.id());
    trx.commit().unwrap();
    assert!(db.running_transactions().is_empty());
    assert_eq!(
        db.transaction(&trx.id()).unwrap().status(),
        TransactionStatus::Committed
    );
    assert_eq!(db.transaction("42").err().unwrap().num(), 1655);
    assert_eq!(db.transaction("nope").err().unwrap().num(), 1655);
    assert_eq!(
        trx.database()
            .begin_transaction(TransactionOptions::default())
            .err()
            .unwrap()
            .num(),
        1651
    );
}

/// A streaming AQL cursor inside a stream transaction pauses its scan mid-visit until the
/// client fetches the next batch; that fetch (and any other request naming the transaction)
/// asks the transaction for its status. A scan that held the transaction's state while
/// visiting deadlocked the two, and the status request blocked a runtime worker.
#[test]
fn a_scan_paused_mid_visit_does_not_block_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    let c = collection(&catalog, "c");
    for i in 0..10 {
        insert(&*c, json!({"_key": format!("k{i}"), "v": i})).unwrap();
    }
    let trx = begin(&catalog, &["c"]);
    let tc = trx.database().collection("c").unwrap();
    insert(&*tc, json!({"_key": "mine", "v": 99})).unwrap();
    let (paused_tx, paused_rx) = std::sync::mpsc::channel::<()>();
    let (resume_tx, resume_rx) = std::sync::mpsc::channel::<()>();
    let scanner = std::thread::spawn(move || {
        let mut seen = Vec::new();
        tc.scan(&mut |doc| {
            if seen.is_empty() {
                paused_tx.send(()).unwrap();
                resume_rx.recv().unwrap();
            }
            seen.push(serde_json::from_slice::<Value>(&doc.json).unwrap()["_key"].clone());
            true
        })
        .unwrap();
        seen
    });
    paused_rx.recv().unwrap();
    // While the scan waits in its visitor, the transaction still answers.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let asker = Arc::clone(&trx);
    std::thread::spawn(move || {
        let status = asker.status();
        let count = asker.database().collection("c").unwrap().count();
        done_tx.send((status, count)).unwrap();
    });
    let answered = done_rx.recv_timeout(Duration::from_secs(20));
    resume_tx.send(()).unwrap();
    assert_eq!(
        answered.expect("status and count answered while a scan was paused"),
        (TransactionStatus::Running, 11)
    );
    let mut seen = scanner.join().unwrap();
    seen.sort_by_key(|k| k.to_string());
    assert_eq!(
        seen.len(),
        11,
        "every committed document and the transaction's own"
    );
    assert!(seen.contains(&json!("mine")));
    trx.commit().unwrap();
}

/// A begin by `begun_by` that reads `c`, or writes it too when `write`.
fn begin_by(
    db: &Arc<dyn DatabaseOps>,
    begun_by: Beginner,
    write: bool,
) -> quince_errors::Result<Arc<dyn TransactionOps>> {
    let c = vec!["c".to_owned()];
    db.begin_transaction(TransactionOptions {
        read: if write { Vec::new() } else { c.clone() },
        write: if write { c } else { Vec::new() },
        begun_by,
        ..TransactionOptions::default()
    })
}

fn user(name: &str) -> Beginner {
    Beginner::client(name, Rank::User)
}

/// Begins `n` transactions by `begun_by`, each of which must succeed.
fn fill(db: &Arc<dyn DatabaseOps>, begun_by: &Beginner, write: bool, n: usize) {
    for i in 0..n {
        if let Err(e) = begin_by(db, begun_by.clone(), write) {
            panic!("begin {i} of {n} by {begun_by:?} was refused: {e}");
        }
    }
}

/// The error of a begin that must be refused for want of a slot (400/32).
fn refused(db: &Arc<dyn DatabaseOps>, begun_by: Beginner, write: bool) -> String {
    let error = begin_by(db, begun_by, write)
        .err()
        .expect("the begin is refused");
    assert_eq!(error.num(), 32, "{error}");
    error.message.to_string()
}

#[test]
fn one_user_holds_at_most_a_quarter_of_the_slots() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "c");
    let db = database(&catalog);
    fill(&db, &user("ro"), false, RUNNING_PER_USER_MAX);
    let message = refused(&db, user("ro"), false);
    assert!(
        message.contains("'ro'") && message.contains("per user"),
        "{message}"
    );
    assert!(refused(&db, user("ro"), true).contains("per user"));
    // Everyone else goes on: reads and writes of another user, an administrator, a superuser.
    begin_by(&db, user("rw"), false).unwrap();
    begin_by(&db, user("rw"), true).unwrap().abort().unwrap();
    begin_by(&db, Beginner::client("admin", Rank::Admin), true).unwrap();
    begin_by(&db, Beginner::superuser(), false).unwrap();
    // A transaction that ends gives its slot back to its user.
    let mine: Vec<_> = db
        .running_transactions()
        .into_iter()
        .filter(|t| t.begun_by().user == "ro")
        .collect();
    assert_eq!(mine.len(), RUNNING_PER_USER_MAX);
    mine[0].abort().unwrap();
    mine[1].commit().unwrap();
    begin_by(&db, user("ro"), false).unwrap();
    begin_by(&db, user("ro"), false).unwrap();
    refused(&db, user("ro"), false);
}

#[test]
fn read_only_transactions_leave_room_for_writes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "c");
    let db = database(&catalog);
    let readers = RUNNING_READ_ONLY_MAX / RUNNING_PER_USER_MAX;
    for r in 0..readers {
        fill(&db, &user(&format!("r{r}")), false, RUNNING_PER_USER_MAX);
    }
    let message = refused(&db, user("late"), false);
    assert!(message.contains("read-only"), "{message}");
    refused(&db, Beginner::client("admin", Rank::Admin), false);
    // Writes find room, for users and administrators alike.
    begin_by(&db, user("late"), true).unwrap();
    begin_by(&db, Beginner::client("admin", Rank::Admin), true).unwrap();
    // A read-only transaction that ends makes room for another.
    db.running_transactions()[0].abort().unwrap();
    begin_by(&db, user("late"), false).unwrap();
}

#[test]
fn the_last_slots_are_kept_for_administrators_and_the_total_binds_everyone() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "c");
    let db = database(&catalog);
    let open_to_users = RUNNING_MAX - RUNNING_ADMIN_RESERVE;
    let mut writers = 0;
    let mut begun = 0;
    while begun < open_to_users {
        let n = RUNNING_PER_USER_MAX.min(open_to_users - begun);
        fill(&db, &user(&format!("w{writers}")), true, n);
        writers += 1;
        begun += n;
    }
    let message = refused(&db, user("late"), true);
    assert!(message.contains("administrators"), "{message}");
    // The last writer holds less than its share: the reserve, not the share, refuses it.
    assert!(refused(&db, user(&format!("w{}", writers - 1)), true).contains("administrators"));
    // Administrators take the reserve (within their own share), then the total binds.
    fill(
        &db,
        &Beginner::client("admin", Rank::Admin),
        true,
        RUNNING_ADMIN_RESERVE - 1,
    );
    begin_by(&db, Beginner::superuser(), true).unwrap();
    assert_eq!(db.running_transactions().len(), RUNNING_MAX);
    let message = refused(&db, Beginner::client("admin", Rank::Admin), true);
    assert!(
        message.contains(&format!("at most {RUNNING_MAX})")),
        "{message}"
    );
    refused(&db, Beginner::superuser(), true);
}

#[test]
fn transactions_a_request_opens_for_itself_take_no_slot() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "c");
    let db = database(&catalog);
    fill(&db, &Beginner::superuser(), false, RUNNING_MAX);
    refused(&db, Beginner::superuser(), true);
    // An AQL write query, a `complete=true` import, a graph cascade: never refused, and they
    // take nothing from the clients.
    let own = begin_by(&db, Beginner::request(), true).unwrap();
    insert(
        &*own.database().collection("c").unwrap(),
        json!({"_key": "r"}),
    )
    .unwrap();
    own.commit().unwrap();
    assert_eq!(database(&catalog).collection("c").unwrap().count(), 1);
    let open = begin_by(&db, Beginner::request(), false).unwrap();
    db.running_transactions()
        .into_iter()
        .find(|t| t.begun_by().stream)
        .unwrap()
        .abort()
        .unwrap();
    begin_by(&db, Beginner::superuser(), true).unwrap();
    refused(&db, Beginner::superuser(), false);
    open.abort().unwrap();
}

#[test]
fn a_begin_that_fails_gives_its_slot_back() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = common::open_os(dir.path());
    collection(&catalog, "c");
    let db = database(&catalog);
    let holder = db
        .begin_transaction(TransactionOptions {
            exclusive: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    fill(&db, &user("u"), false, RUNNING_PER_USER_MAX - 1);
    let timed_out = db
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            lock_timeout: 0.01,
            begun_by: user("u"),
            ..TransactionOptions::default()
        })
        .err()
        .unwrap();
    assert_eq!(timed_out.num(), 18);
    assert_eq!(
        db.begin_transaction(TransactionOptions {
            read: vec!["missing".into()],
            begun_by: user("u"),
            ..TransactionOptions::default()
        })
        .err()
        .unwrap()
        .num(),
        1203
    );
    holder.commit().unwrap();
    begin_by(&db, user("u"), true).unwrap();
    refused(&db, user("u"), false);
}
