//! A crash (on `SimFileIo`: every file keeps a random prefix of its unsynced bytes) keeps each
//! multi-document request and each stream transaction whole or absent: a request's successful
//! items are one storage group, and a transaction's parts commit together. (Before transaction
//! groups, a crash kept a prefix of a multi-document request.)

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{collection, open_sim, opts};

use quince_db::{CollectionOps, DatabaseOps, WriteKind, WriteRequest};
use quince_ops::{TransactionOps, TransactionOptions};
use quince_storage::io::SimFileIo;
use serde_json::{json, Value};

/// Documents per request or transaction part.
const ITEMS: usize = 25;

fn tags(c: &dyn CollectionOps) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    c.scan(&mut |doc| {
        let value: Value = serde_json::from_slice(&doc.json).unwrap();
        *counts
            .entry(value["tag"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
        true
    })
    .unwrap();
    counts
}

fn batch(tag: &str) -> Vec<Value> {
    (0..ITEMS)
        .map(|i| json!({"_key": format!("{tag}-{i}"), "tag": tag, "pad": "x".repeat(200)}))
        .collect()
}

/// A running transaction that inserted `batch(tag)` into both `a` and `b`.
fn insert_into_a_and_b(db: &dyn DatabaseOps, tag: &str) -> Arc<dyn TransactionOps> {
    let trx = db
        .begin_transaction(TransactionOptions {
            write: vec!["a".into(), "b".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let view = trx.database();
    for name in ["a", "b"] {
        let results = view.collection(name).unwrap().write(WriteRequest::new(
            WriteKind::Insert,
            batch(tag),
            opts(),
        ));
        assert!(results.items.iter().all(Result::is_ok));
    }
    trx
}

#[test]
fn requests_and_transactions_are_whole_or_absent_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut tails_seen = Vec::new();
    for seed in 0..12u64 {
        let sim = SimFileIo::new();
        let mut committed = Vec::new();
        let crashed = {
            let catalog = open_sim(dir.path(), &sim);
            let db = catalog.database("_system").unwrap();
            let (a, b) = (collection(&catalog, "a"), collection(&catalog, "b"));
            for round in 0..6 {
                let tag = format!("req{round}");
                let results = a.write(WriteRequest::new(WriteKind::Insert, batch(&tag), opts()));
                assert!(results.items.iter().all(Result::is_ok));
                let tag = format!("trx{round}");
                insert_into_a_and_b(&*db, &tag).commit().unwrap();
                committed.push(tag);
            }
            // Unsynced requests at the end: a crash may tear them anywhere.
            for tail in 0..3 {
                let tag = format!("tail{tail}");
                let results = a.write(WriteRequest::new(WriteKind::Insert, batch(&tag), opts()));
                assert!(results.items.iter().all(Result::is_ok));
            }
            drop((a, b));
            let crashed = sim.crash(seed, seed % 2 == 0);
            drop(catalog);
            crashed
        };
        let catalog = open_sim(dir.path(), &crashed);
        let db = catalog.database("_system").unwrap();
        let (a, b) = (db.collection("a").unwrap(), db.collection("b").unwrap());
        let (in_a, in_b) = (tags(&*a), tags(&*b));
        for (tag, count) in &in_a {
            assert_eq!(*count, ITEMS, "seed {seed}: {tag} is partial in a");
        }
        for (tag, count) in &in_b {
            assert_eq!(*count, ITEMS, "seed {seed}: {tag} is partial in b");
        }
        // A multi-collection commit is durable when it returns: every one survived, whole.
        for tag in &committed {
            assert!(in_a.contains_key(tag), "seed {seed}: {tag} lost from a");
            assert!(in_b.contains_key(tag), "seed {seed}: {tag} lost from b");
        }
        // What survived of the plain requests is a prefix of them.
        let survived: Vec<usize> = (0..3)
            .filter(|r| in_a.contains_key(&format!("tail{r}")))
            .collect();
        assert_eq!(
            survived,
            (0..survived.len()).collect::<Vec<_>>(),
            "seed {seed}"
        );
        for round in 0..6 {
            let tag = format!("req{round}");
            assert!(
                in_a.contains_key(&tag),
                "seed {seed}: {tag} was synced by a commit"
            );
        }
        tails_seen.push(survived.len());
    }
    // The crashes must have cut the unsynced tail at different places, or the test proves
    // little.
    tails_seen.sort_unstable();
    tails_seen.dedup();
    assert!(
        tails_seen.len() > 1,
        "every crash kept the same tail: {tails_seen:?}"
    );
}

/// A commit over two collections whose fsyncs fail part-way: whatever the crash keeps, the
/// reopened database (which settles its collections) shows the transaction in both
/// collections or in neither, and a commit that answered Ok is there.
#[test]
fn a_commit_cut_short_is_settled_whole_or_absent_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let mut outcomes = BTreeMap::new();
    for seed in 0..48u64 {
        let sim = SimFileIo::new();
        let (crashed, committed) = {
            let catalog = open_sim(dir.path(), &sim);
            let db = catalog.database("_system").unwrap();
            collection(&catalog, "a");
            collection(&catalog, "b");
            let trx = insert_into_a_and_b(&*db, "t");
            // One of the commit's fsyncs fails (or none does).
            sim.fail_sync_after(seed % 12);
            let committed = trx.commit().is_ok();
            let crashed = sim.crash(seed, seed % 2 == 0);
            sim.clear_faults();
            drop((trx, db));
            drop(catalog);
            (crashed, committed)
        };
        let catalog = open_sim(dir.path(), &crashed);
        let db = catalog.database("_system").unwrap();
        let in_a = tags(&*db.collection("a").unwrap()).get("t").copied();
        let in_b = tags(&*db.collection("b").unwrap()).get("t").copied();
        assert_eq!(in_a, in_b, "seed {seed}: the transaction is partial");
        assert!(matches!(in_a, None | Some(ITEMS)), "seed {seed}: {in_a:?}");
        if committed {
            assert_eq!(
                in_a,
                Some(ITEMS),
                "seed {seed}: an acknowledged commit was lost"
            );
        }
        *outcomes.entry((committed, in_a.is_some())).or_insert(0) += 1;
        // The settled database takes writes again.
        let a = db.collection("a").unwrap();
        a.write(WriteRequest::new(WriteKind::Insert, batch("after"), opts()))
            .items
            .into_iter()
            .for_each(|r| assert!(r.is_ok(), "seed {seed}"));
    }
    // Failed commits must have ended both ways, or the settle path went untested.
    assert!(outcomes.contains_key(&(false, false)), "{outcomes:?}");
    assert!(outcomes.contains_key(&(false, true)), "{outcomes:?}");
}
