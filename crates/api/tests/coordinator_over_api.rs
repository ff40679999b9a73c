//! A coordinator whose DB servers answer with Quince's own api, each over a local engine on a
//! temporary directory: the requests the coordinator sends (multi-document writes and reads,
//! cursors, counts, checksums, truncates, indexes on shard collections) are ones the real api
//! understands, and the coordinator reads its answers right. The Plan is followed for the DB
//! servers by `coordinator::testing` (shard collections created, leaders reported); the
//! requests travel as HTTP requests into `Api::serve`, without sockets (the harness in
//! `coordinator_support/`, shared with `coordinator_transactions.rs`).

use crate::coordinator_support;

use quince_ops::{IndexLookup, ReadRequest, WriteKind, WriteOptions, WriteRequest};
use serde_json::{json, Value};

use coordinator_support::{create, CoordinatorOverApi};

#[test]
fn the_real_api_answers_what_the_coordinator_asks() {
    let cluster = CoordinatorOverApi::start();
    let catalogs = &cluster.catalogs;
    let engine = cluster.coordinator.engine();
    let system = engine.database("_system").unwrap();

    let collection = system
        .create_collection_with(create("c"), &json!({"numberOfShards": 3}))
        .unwrap();
    // More documents per shard than one cursor batch (1000), so scans continue cursors.
    let items: Vec<Value> = (0..3300).map(|n| json!({"n": n, "tag": n % 7})).collect();
    let results = collection
        .write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    let keys: Vec<String> = results
        .iter()
        .map(|r| r.as_ref().unwrap().key.clone())
        .collect();
    assert_eq!(collection.count(), 3300);
    let largest = catalogs
        .iter()
        .flat_map(|catalog| catalog.database("_system").unwrap().collections())
        .filter(|shard| shard.name().starts_with('s'))
        .map(|shard| shard.count())
        .max()
        .unwrap();
    assert!(
        largest > 1000,
        "a shard holds more than one cursor batch: {largest}"
    );
    let mut scanned = 0;
    collection
        .scan(&mut |document| {
            let value: Value = serde_json::from_slice(&document.json).unwrap();
            assert!(value["_id"].as_str().unwrap().starts_with("c/"));
            scanned += 1;
            true
        })
        .unwrap();
    assert_eq!(scanned, 3300);

    // Reads in order, with a revision precondition that fails.
    let first = collection.read(&keys[0]).unwrap();
    let selectors = vec![
        json!(keys[1]),
        json!({"_key": keys[0], "_rev": first.rev}),
        json!({"_key": keys[2], "_rev": "_aaaaaaaaaa"}),
        json!("missing"),
    ];
    let mut seen = Vec::new();
    collection
        .read_many(
            &ReadRequest {
                selectors,
                ignore_revs: false,
            },
            &mut |result| {
                seen.push(result.map(|d| d.rev).map_err(|e| e.num()));
                true
            },
        )
        .unwrap();
    assert!(seen[0].is_ok() && seen[1].as_ref().unwrap() == &first.rev);
    assert_eq!(seen[2], Err(1200));
    assert_eq!(seen[3], Err(1202));

    // Replace with If-Match, update, removals.
    let options = WriteOptions {
        return_old: true,
        return_new: true,
        if_match: Some("_aaaaaaaaaa".into()),
        ignore_revs: false,
        ..WriteOptions::default()
    };
    let stale = collection
        .write(WriteRequest::one(
            WriteKind::Replace,
            &keys[0],
            json!({"x": 1}).as_object().unwrap().clone(),
            options.clone(),
        ))
        .settle_one();
    assert_eq!(stale.unwrap_err().num(), 1200);
    let options = WriteOptions {
        if_match: Some(first.rev.clone()),
        ..options
    };
    let replaced = collection
        .write(WriteRequest::one(
            WriteKind::Replace,
            &keys[0],
            json!({"x": 1}).as_object().unwrap().clone(),
            options,
        ))
        .settle_one()
        .unwrap();
    assert_eq!(
        replaced.old.unwrap()["_id"],
        json!(format!("c/{}", keys[0]))
    );
    assert_eq!(replaced.new.unwrap()["x"], 1);
    let removals: Vec<Value> = keys[..500].iter().map(|k| json!(k)).collect();
    let removed = collection
        .write(WriteRequest::new(
            WriteKind::Remove,
            removals,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    assert!(removed.iter().all(Result::is_ok));
    assert_eq!(collection.count(), 2800);
    assert_eq!(collection.figures().storage.alive_count, 2800);
    let (checksum, revision) = collection.checksum(true, false).unwrap();
    assert_ne!(checksum, "0");
    assert_eq!(revision, collection.revision());

    // Indexes through the real index API of each shard, and lookups.
    let (index, new) = collection
        .create_index(&json!({"type": "persistent", "fields": ["tag"]}))
        .unwrap();
    assert!(new);
    let estimate = collection.indexes()[1].json["selectivityEstimate"]
        .as_f64()
        .unwrap();
    assert!(estimate > 0.0 && estimate < 0.1, "{estimate}");
    let lookup = IndexLookup::Sorted {
        prefix: vec![json!(3)],
        low: std::ops::Bound::Unbounded,
        high: std::ops::Bound::Unbounded,
        reverse: false,
    };
    let mut hits = 0;
    collection
        .index_lookup(index.id, &lookup, &mut |_| {
            hits += 1;
            true
        })
        .unwrap();
    let expected = (500..3300).filter(|n| n % 7 == 3).count();
    assert_eq!(hits, expected);
    collection.drop_index(&index.name).unwrap();
    for catalog in catalogs {
        let local = catalog.database("_system").unwrap();
        for shard in local.collections() {
            if shard.name().starts_with('s') {
                assert_eq!(shard.indexes().len(), 1, "dropped on {}", shard.name());
            }
        }
    }
    collection.truncate(true).unwrap();
    assert_eq!(collection.count(), 0);

    cluster.stop();
}
