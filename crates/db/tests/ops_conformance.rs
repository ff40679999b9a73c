//! Conformance of every implementation of the operations interface with ArangoDB's rules (§2
//! of the API reference): keys, `_rev` preconditions, overwrite modes, merge options, edges,
//! `versionAttribute`, multi-document requests (per-item results in order, selectors, bulk
//! reads) and the errors each one answers.
//!
//! Every scenario takes a [`Subject`] and runs once per implementation: the local engine on a
//! real temporary directory, and the in-memory fake. A new implementation is added with one
//! function that makes its `Subject` and its name in the `conformance!` line at the bottom.

use crate::common;

use std::sync::Arc;

use quince_db::fake::FakeEngine;
use quince_db::{
    Catalog, CollectionOps, CollectionType, CreateCollection, DatabaseOps, Engine, OverwriteMode,
    ReadRequest, WriteKind, WriteOptions, WriteOutcome, WriteRequest, WriteResults,
};
use quince_errors::Result;
use serde_json::{json, Map, Value};

use common::{create, open_os, opts};

/// One implementation under test, and what keeps it alive.
struct Subject {
    engine: Arc<dyn Engine>,
    catalog: Option<Arc<Catalog>>,
    _dir: Option<tempfile::TempDir>,
    _cluster: Option<quince_cluster::coordinator::testing::TestCluster>,
}

impl Drop for Subject {
    fn drop(&mut self) {
        if let Some(catalog) = &self.catalog {
            catalog.shutdown().unwrap();
        }
    }
}

/// The local engine on a fresh temporary directory.
fn local() -> Subject {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    Subject {
        engine: Arc::clone(&catalog) as Arc<dyn Engine>,
        catalog: Some(catalog),
        _dir: Some(dir),
        _cluster: None,
    }
}

/// The in-memory fake (computing values with AQL, as the local engine does).
fn fake() -> Subject {
    Subject {
        engine: FakeEngine::with_expressions(quince_aql::ComputedValueCompiler::shared()),
        catalog: None,
        _dir: None,
        _cluster: None,
    }
}

/// A cluster coordinator over three DB servers answered in process (each a fake engine) and a
/// metadata store in memory: every collection here has one shard, on its leader.
fn coordinator() -> Subject {
    let cluster = quince_cluster::coordinator::testing::TestCluster::start(
        &["PRMR-a", "PRMR-b", "PRMR-c"],
        quince_cluster::coordinator::Timeouts::default(),
    );
    Subject {
        engine: cluster.coordinator.engine(),
        catalog: None,
        _dir: None,
        _cluster: Some(cluster),
    }
}

impl Subject {
    /// `_system`.
    fn system(&self) -> Db {
        Db(self.engine.database("_system").unwrap())
    }

    /// A new document collection in `_system`.
    fn collection(&self, name: &str) -> Doc {
        self.system().create_collection(create(name)).unwrap()
    }
}

/// A database through the interface.
struct Db(Arc<dyn DatabaseOps>);

impl Db {
    fn create_collection(&self, request: CreateCollection) -> Result<Doc> {
        self.0.create_collection(request).map(Doc)
    }
}

/// A collection through the interface, with one-document helpers built on write requests.
struct Doc(Arc<dyn CollectionOps>);

impl Doc {
    fn write(&self, request: WriteRequest) -> WriteResults {
        self.0.write(request)
    }

    fn insert(&self, document: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        let request = WriteRequest::new(WriteKind::Insert, vec![document], options.clone());
        self.write(request).settle_one()
    }

    fn one(
        &self,
        kind: WriteKind,
        key: &str,
        body: Value,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let mut request = WriteRequest::new(kind, vec![body], options.clone());
        request.key = Some(key.to_owned());
        self.write(request).settle_one()
    }

    fn replace(&self, key: &str, body: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        self.one(WriteKind::Replace, key, body, options)
    }

    fn update(&self, key: &str, body: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        self.one(WriteKind::Update, key, body, options)
    }

    fn remove(&self, key: &str, rev: Option<&str>, options: &WriteOptions) -> Result<WriteOutcome> {
        let mut selector = Map::new();
        if let Some(rev) = rev {
            selector.insert("_rev".into(), Value::String(rev.to_owned()));
        }
        self.one(WriteKind::Remove, key, Value::Object(selector), options)
    }
}

impl std::ops::Deref for Doc {
    type Target = dyn CollectionOps;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

/// The document `key` as JSON.
fn read(collection: &Doc, key: &str) -> Value {
    serde_json::from_slice(&collection.read(key).expect("document exists").json).unwrap()
}

/// Each item's errorNum, or `None` for a success.
fn error_nums(results: &[Result<WriteOutcome>]) -> Vec<Option<u32>> {
    results
        .iter()
        .map(|r| r.as_ref().err().map(|e| e.num()))
        .collect()
}

fn multi_insert_answers_one_result_per_item_in_order(subject: &Subject) {
    let c = subject.collection("c");
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![
            json!({"_key": "a"}),
            json!(5),
            json!({"_key": "a"}),
            json!({"_key": "bad key"}),
            json!({}),
        ],
        opts(),
    ));
    assert!(!results.synced);
    assert!(results.durability.is_none());
    let items = results.settle().unwrap();
    assert_eq!(
        error_nums(&items),
        vec![None, Some(1227), Some(1210), Some(1221), None]
    );
    assert_eq!(items[0].as_ref().unwrap().key, "a");
    assert_eq!(c.count(), 2);
}

fn multi_modify_and_remove_parse_keys_and_selectors_per_item(subject: &Subject) {
    let c = subject.collection("c");
    let a = c.insert(json!({"_key": "a", "v": 1}), &opts()).unwrap();
    c.insert(json!({"_key": "b", "v": 1}), &opts()).unwrap();
    c.insert(json!({"_key": "d", "v": 1}), &opts()).unwrap();
    let strict = WriteOptions {
        ignore_revs: false,
        ..opts()
    };
    let results = c.write(WriteRequest::new(
        WriteKind::Update,
        vec![
            json!({"_key": "a", "_rev": a.rev, "v": 2}),
            json!({"v": 3}),
            json!({"_key": 7}),
            json!({"_key": "b", "_rev": "_stale____", "v": 4}),
            json!("b"),
            json!({"_key": "zz"}),
        ],
        strict.clone(),
    ));
    let items = results.settle().unwrap();
    assert_eq!(
        error_nums(&items),
        vec![
            None,
            Some(1205),
            Some(1221),
            Some(1200),
            Some(1227),
            Some(1202)
        ]
    );
    assert_eq!(items[3].as_ref().unwrap_err().status, 412);
    assert_eq!(read(&c, "a")["v"], json!(2));
    assert_eq!(read(&c, "b")["v"], json!(1));

    let b_rev = c.read_rev("b").unwrap();
    let results = c.write(WriteRequest::new(
        WriteKind::Remove,
        vec![
            json!("a"),
            json!("c/b"),
            json!("other/d"),
            json!({"_id": "c/d", "_rev": "_stale____"}),
            json!(""),
            json!(3),
            json!("a"),
        ],
        strict,
    ));
    let items = results.settle().unwrap();
    assert_eq!(
        error_nums(&items),
        vec![
            None,
            None,
            Some(1202),
            Some(1200),
            Some(1205),
            Some(1205),
            Some(1202)
        ]
    );
    assert_eq!(items[1].as_ref().unwrap().rev, b_rev);
    assert_eq!(c.count(), 1);
}

fn bulk_reads_answer_each_selector_in_order(subject: &Subject) {
    let c = subject.collection("c");
    let a = c.insert(json!({"_key": "a", "v": 1}), &opts()).unwrap();
    let request = ReadRequest {
        selectors: vec![
            json!("a"),
            json!("missing"),
            json!({"_key": "a", "_rev": "_x"}),
            json!(1),
        ],
        ignore_revs: false,
    };
    let mut seen = Vec::new();
    c.0.read_many(&request, &mut |item| {
        seen.push(item.map(|d| d.rev).map_err(|e| e.num()));
        true
    })
    .unwrap();
    assert_eq!(
        seen,
        vec![Ok(a.rev.clone()), Err(1202), Err(1200), Err(1205)]
    );
    // The visitor can stop early.
    let mut visits = 0;
    c.0.read_many(&request, &mut |_| {
        visits += 1;
        false
    })
    .unwrap();
    assert_eq!(visits, 1);
}

fn synced_requests_carry_one_durability_that_resolves(subject: &Subject) {
    let c = subject.collection("c");
    let sync = WriteOptions {
        wait_for_sync: true,
        ..opts()
    };
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![json!({"_key": "a"}), json!({"_key": "b"})],
        sync.clone(),
    ));
    assert!(results.synced);
    let durability = results.durability.expect("a synced write has a durability");
    durability.wait().unwrap();
    // Nothing written: no durability, but still the synced status.
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![json!({"_key": "a"})],
        sync,
    ));
    assert!(results.synced && results.durability.is_none());
    assert_eq!(error_nums(&results.items), vec![Some(1210)]);
}

fn catalog_operations_answer_arangodb_errors(subject: &Subject) {
    let db = subject.system();
    db.create_collection(create("x")).unwrap();
    assert_eq!(db.create_collection(create("x")).err().unwrap().num(), 1207);
    assert_eq!(
        db.create_collection(create("a/b")).err().unwrap().num(),
        1208
    );
    assert_eq!(db.0.collection("nope").err().unwrap().num(), 1203);
    let renamed = db.0.rename_collection("x", "y").unwrap();
    assert_eq!(renamed.name(), "y");
    assert_eq!(db.0.collection("x").err().unwrap().num(), 1203);
    let id = renamed.id();
    assert_eq!(db.0.collection(&id.to_string()).unwrap().name(), "y");
    assert_eq!(db.0.drop_collection("y", false).unwrap(), id);
    let names: Vec<String> = db.0.collections().iter().map(|c| c.name()).collect();
    assert!(!names.contains(&"y".to_owned()));
    let engine = &subject.engine;
    engine.create_database("other").unwrap();
    assert_eq!(engine.create_database("other").err().unwrap().num(), 1207);
    assert!(engine.database_names().contains(&"other".to_owned()));
    engine.drop_database("other").unwrap();
    assert_eq!(engine.drop_database("other").unwrap_err().num(), 1228);
    assert_eq!(engine.drop_database("_system").unwrap_err().num(), 1230);
}

fn truncate_and_scan_see_every_document(subject: &Subject) {
    let c = subject.collection("c");
    for i in 0..10 {
        c.insert(json!({"_key": format!("k{i}")}), &opts()).unwrap();
    }
    let mut seen = 0;
    c.0.scan(&mut |document| {
        let value: Value = serde_json::from_slice(&document.json).unwrap();
        assert!(value["_id"].as_str().unwrap().starts_with("c/k"));
        seen += 1;
        true
    })
    .unwrap();
    assert_eq!(seen, 10);
    // Revisions compare as numbers: their text alphabet is not in ASCII order.
    let revision = |text: String| quince_model::rev::RevisionId::decode(&text).unwrap();
    let before = revision(c.0.revision());
    c.0.truncate(false).unwrap();
    assert_eq!(c.count(), 0);
    assert!(revision(c.0.revision()) > before);
}

fn insert_then_read_renders_key_id_rev_first(subject: &Subject) {
    let users = subject.collection("users");
    let out = users
        .insert(json!({"name": "a", "_id": "x/y", "_rev": "bogus"}), &opts())
        .unwrap();
    assert_eq!(out.id, format!("users/{}", out.key));
    assert_eq!(out.rev.len(), 11);
    assert_eq!(
        (out.old_rev, out.new, out.old, out.synced),
        (None, None, None, false)
    );

    let stored = users.read(&out.key).unwrap();
    assert_eq!(stored.rev, out.rev);
    let text = String::from_utf8(stored.json).unwrap();
    let expected = format!(
        r#"{{"_key":"{}","_id":"users/{}","_rev":"{}","name":"a"}}"#,
        out.key, out.key, out.rev
    );
    assert_eq!(text, expected);
    assert_eq!(users.read_rev(&out.key).unwrap(), out.rev);
    assert_eq!(users.count(), 1);
}

fn keys_are_validated_and_generated(subject: &Subject) {
    let c = subject.collection("c");
    assert_eq!(
        c.insert(json!({"_key": "a b"}), &opts()).unwrap_err().num(),
        1221
    );
    assert_eq!(
        c.insert(json!({"_key": 5}), &opts()).unwrap_err().num(),
        1221
    );
    assert_eq!(
        c.insert(json!({"_key": "k".repeat(255)}), &opts())
            .unwrap_err()
            .num(),
        1221
    );
    assert_eq!(c.insert(json!([1]), &opts()).unwrap_err().num(), 1227);
    assert_eq!(c.insert(json!("x"), &opts()).unwrap_err().num(), 1227);
    assert_eq!(c.insert(json!({"_key": "42"}), &opts()).unwrap().key, "42");
    // Generated keys pass every numeric user key seen so far.
    assert_eq!(c.insert(json!({}), &opts()).unwrap().key, "43");

    let db = subject.system();
    let mut request = create("closed");
    request.key_options = Some(json!({"type": "padded", "allowUserKeys": false}));
    let closed = db.create_collection(request).unwrap();
    assert_eq!(
        closed
            .insert(json!({"_key": "mine"}), &opts())
            .unwrap_err()
            .num(),
        1222
    );
    assert_eq!(
        closed.insert(json!({}), &opts()).unwrap().key,
        "0000000000000001"
    );
    assert_eq!(
        closed.properties().key_options,
        json!({"type": "padded", "allowUserKeys": false, "lastValue": 1})
    );
}

fn a_missing_document_is_1202_for_every_operation(subject: &Subject) {
    let c = subject.collection("c");
    for key in ["nope", "illegal key", ""] {
        assert_eq!(c.read(key).unwrap_err().num(), 1202);
        assert_eq!(c.read(key).unwrap_err().status, 404);
        assert_eq!(c.read_rev(key).unwrap_err().num(), 1202);
        assert_eq!(c.replace(key, json!({}), &opts()).unwrap_err().num(), 1202);
        assert_eq!(c.update(key, json!({}), &opts()).unwrap_err().num(), 1202);
        assert_eq!(c.remove(key, None, &opts()).unwrap_err().num(), 1202);
    }
    assert_eq!(c.update("x", json!(3), &opts()).unwrap_err().num(), 1227);
}

fn overwrite_modes(subject: &Subject) {
    let c = subject.collection("c");
    let first = c
        .insert(json!({"_key": "k", "a": 1, "o": {"x": 1}}), &opts())
        .unwrap();

    let err = c.insert(json!({"_key": "k"}), &opts()).unwrap_err();
    assert_eq!((err.num(), err.status), (1210, 409));
    assert!(err.extra.is_empty());

    let ignore = WriteOptions {
        overwrite_mode: OverwriteMode::Ignore,
        return_new: true,
        return_old: true,
        ..opts()
    };
    let out = c.insert(json!({"_key": "k", "a": 2}), &ignore).unwrap();
    assert_eq!(out.rev, first.rev);
    assert_eq!((out.old_rev, out.new, out.old), (None, None, None));
    assert_eq!(read(&c, "k")["a"], json!(1));

    let update = WriteOptions {
        overwrite_mode: OverwriteMode::Update,
        return_old: true,
        ..opts()
    };
    let out = c
        .insert(json!({"_key": "k", "o": {"y": 2}}), &update)
        .unwrap();
    assert_eq!(out.old_rev.as_deref(), Some(first.rev.as_str()));
    assert_eq!(out.old.unwrap()["o"], json!({"x": 1}));
    assert_eq!(read(&c, "k")["o"], json!({"x": 1, "y": 2}));

    let replace = WriteOptions {
        overwrite_mode: OverwriteMode::Replace,
        return_new: true,
        ..opts()
    };
    let out = c.insert(json!({"_key": "k", "b": true}), &replace).unwrap();
    assert!(out.old_rev.is_some());
    let new = out.new.unwrap();
    assert_eq!(
        new,
        json!({"_key": "k", "_id": "c/k", "_rev": out.rev, "b": true})
    );
    assert_eq!(read(&c, "k"), new);

    // On a fresh key an overwrite mode is a plain insert.
    let out = c.insert(json!({"_key": "fresh"}), &replace).unwrap();
    assert_eq!(out.old_rev, None);
}

fn replace_and_update_report_old_rev_and_keep_key(subject: &Subject) {
    let c = subject.collection("c");
    let first = c
        .insert(json!({"_key": "k", "a": 1, "b": 2}), &opts())
        .unwrap();
    let out = c
        .replace(
            "k",
            json!({"_key": "other", "c": 3}),
            &WriteOptions {
                return_old: true,
                ..opts()
            },
        )
        .unwrap();
    assert_eq!(out.key, "k");
    assert_eq!(out.old_rev.as_deref(), Some(first.rev.as_str()));
    assert_ne!(out.rev, first.rev);
    assert_eq!(out.old.unwrap()["a"], json!(1));
    assert_eq!(
        read(&c, "k"),
        json!({"_key": "k", "_id": "c/k", "_rev": out.rev, "c": 3})
    );

    let second = c
        .update("k", json!({"d": 4, "_rev": "ignored"}), &opts())
        .unwrap();
    assert_eq!(second.old_rev.as_deref(), Some(out.rev.as_str()));
    assert_eq!(read(&c, "k")["d"], json!(4));
    assert_eq!(read(&c, "k")["c"], json!(3));
}

fn keep_null_and_merge_objects(subject: &Subject) {
    let c = subject.collection("c");
    c.insert(json!({"_key": "k", "a": 1, "o": {"x": 1, "y": 1}}), &opts())
        .unwrap();
    c.update("k", json!({"a": null, "o": {"x": null}}), &opts())
        .unwrap();
    assert_eq!(read(&c, "k")["a"], Value::Null);
    assert_eq!(read(&c, "k")["o"], json!({"x": null, "y": 1}));

    let drop_nulls = WriteOptions {
        keep_null: false,
        ..opts()
    };
    c.update("k", json!({"a": null, "o": {"x": null}}), &drop_nulls)
        .unwrap();
    let doc = read(&c, "k");
    assert!(doc.get("a").is_none());
    assert_eq!(doc["o"], json!({"y": 1}));

    let replace_objects = WriteOptions {
        merge_objects: false,
        ..opts()
    };
    c.update("k", json!({"o": {"z": 1}}), &replace_objects)
        .unwrap();
    assert_eq!(read(&c, "k")["o"], json!({"z": 1}));
}

fn revision_preconditions_answer_412_with_the_current_meta(subject: &Subject) {
    let c = subject.collection("c");
    let first = c.insert(json!({"_key": "k"}), &opts()).unwrap();
    let second = c.update("k", json!({"v": 1}), &opts()).unwrap();

    let check = WriteOptions {
        ignore_revs: false,
        ..opts()
    };
    let stale = json!({"_rev": first.rev, "v": 2});
    let err = c.update("k", stale.clone(), &check).unwrap_err();
    assert_eq!((err.num(), err.status), (1200, 412));
    assert_eq!(err.message, "conflict, _rev values do not match");
    assert_eq!(
        err.extra,
        vec![
            ("_id", "c/k".to_owned()),
            ("_key", "k".to_owned()),
            ("_rev", second.rev.clone())
        ]
    );
    assert_eq!(
        c.replace("k", stale.clone(), &check).unwrap_err().status,
        412
    );
    // With ignoreRevs (the default) the body's `_rev` is no precondition.
    c.update("k", stale, &opts()).unwrap();
    let current = c.read_rev("k").unwrap();
    c.update("k", json!({"_rev": current, "v": 3}), &check)
        .unwrap();

    // If-Match is always checked; a malformed revision matches nothing.
    let current = c.read_rev("k").unwrap();
    for bad in [first.rev.clone(), format!("{current}0"), "!!".to_owned()] {
        let if_match = WriteOptions {
            if_match: Some(bad),
            ..opts()
        };
        assert_eq!(c.update("k", json!({}), &if_match).unwrap_err().status, 412);
        assert_eq!(c.remove("k", None, &if_match).unwrap_err().status, 412);
    }
    let if_match = WriteOptions {
        if_match: Some(current.clone()),
        ..opts()
    };
    c.update("k", json!({"w": 1}), &if_match).unwrap();

    // Removal preconditions come from the selector when ignoreRevs is false.
    let current = c.read_rev("k").unwrap();
    assert_eq!(
        c.remove("k", Some(&first.rev), &check).unwrap_err().num(),
        1200
    );
    let removed = c.remove("k", Some(&current), &check).unwrap();
    assert_eq!(removed.rev, current);
    assert_eq!(c.read("k").unwrap_err().num(), 1202);
}

fn remove_reports_the_removed_version(subject: &Subject) {
    let c = subject.collection("c");
    let first = c.insert(json!({"_key": "k", "a": 1}), &opts()).unwrap();
    // A stale selector revision is ignored while ignoreRevs is true.
    let out = c
        .remove(
            "k",
            Some("stale"),
            &WriteOptions {
                return_old: true,
                ..opts()
            },
        )
        .unwrap();
    assert_eq!(
        (out.id.as_str(), out.key.as_str(), out.rev.as_str()),
        ("c/k", "k", first.rev.as_str())
    );
    assert_eq!(
        out.old.unwrap(),
        json!({"_key": "k", "_id": "c/k", "_rev": first.rev, "a": 1})
    );
    assert_eq!(out.new, None);
    assert_eq!(c.count(), 0);
    assert_eq!(c.remove("k", None, &opts()).unwrap_err().num(), 1202);
}

fn edges_need_valid_from_and_to(subject: &Subject) {
    let db = subject.system();
    let mut request = create("knows");
    request.kind = CollectionType::Edge;
    let e = db.create_collection(request).unwrap();
    assert_eq!(e.kind(), CollectionType::Edge);
    for bad in [
        json!({}),
        json!({"_from": "a/1"}),
        json!({"_from": "a/1", "_to": 2}),
        json!({"_from": "nohandle", "_to": "b/1"}),
    ] {
        assert_eq!(e.insert(bad, &opts()).unwrap_err().num(), 1233);
    }
    let out = e
        .insert(
            json!({"w": 1, "_to": "b/1", "_from": "a/1", "_key": "e"}),
            &opts(),
        )
        .unwrap();
    let text = String::from_utf8(e.read("e").unwrap().json).unwrap();
    assert_eq!(
        text,
        format!(
            r#"{{"_key":"e","_id":"knows/e","_rev":"{}","_from":"a/1","_to":"b/1","w":1}}"#,
            out.rev
        )
    );
    assert_eq!(
        e.replace("e", json!({"w": 2}), &opts()).unwrap_err().num(),
        1233
    );
    e.update("e", json!({"_from": "a/2"}), &opts()).unwrap();
    assert_eq!(read(&e, "e")["_from"], json!("a/2"));
    assert_eq!(
        e.update("e", json!({"_to": "bad"}), &opts())
            .unwrap_err()
            .num(),
        1233
    );
    assert_eq!(read(&e, "e")["_to"], json!("b/1"));

    // In a document collection `_from` and `_to` are ordinary attributes.
    let docs = subject.collection("docs");
    docs.insert(json!({"_key": "d", "_from": 5}), &opts())
        .unwrap();
    assert_eq!(read(&docs, "d")["_from"], json!(5));
}

fn version_attribute_skips_older_versions_silently(subject: &Subject) {
    let c = subject.collection("c");
    c.insert(json!({"_key": "k", "v": 5, "x": "a"}), &opts())
        .unwrap();
    let versioned = WriteOptions {
        version_attribute: Some("v".into()),
        return_new: true,
        ..opts()
    };
    let skipped = c
        .replace("k", json!({"v": 4, "x": "b"}), &versioned)
        .unwrap();
    assert_eq!(skipped.old_rev.as_deref(), Some(skipped.rev.as_str()));
    assert_eq!(skipped.new.unwrap()["x"], json!("a"));
    assert_eq!(read(&c, "k")["x"], json!("a"));
    let skipped = c
        .update("k", json!({"v": 5, "x": "c"}), &versioned)
        .unwrap();
    assert_eq!(skipped.old_rev.as_deref(), Some(skipped.rev.as_str()));
    let written = c
        .update("k", json!({"v": 6, "x": "d"}), &versioned)
        .unwrap();
    assert_ne!(written.old_rev.as_deref(), Some(written.rev.as_str()));
    assert_eq!(read(&c, "k")["x"], json!("d"));
    // Without the attribute in the new version the write is unconditional.
    c.update("k", json!({"x": "e"}), &versioned).unwrap();
    assert_eq!(read(&c, "k")["x"], json!("e"));
    let upsert = WriteOptions {
        overwrite_mode: OverwriteMode::Update,
        ..versioned
    };
    c.insert(json!({"_key": "k", "v": 1, "x": "f"}), &upsert)
        .unwrap();
    assert_eq!(read(&c, "k")["x"], json!("e"));
}

fn wait_for_sync_is_the_request_or_the_collection(subject: &Subject) {
    let db = subject.system();
    let lazy = subject.collection("lazy");
    assert!(!lazy.insert(json!({}), &opts()).unwrap().synced);
    let forced = WriteOptions {
        wait_for_sync: true,
        ..opts()
    };
    assert!(lazy.insert(json!({}), &forced).unwrap().synced);

    let mut request = create("eager");
    request.wait_for_sync = Some(true);
    let eager = db.create_collection(request).unwrap();
    assert!(eager.wait_for_sync());
    let out = eager.insert(json!({"_key": "k"}), &opts()).unwrap();
    assert!(out.synced);
    assert!(eager.update("k", json!({}), &opts()).unwrap().synced);
    assert!(eager.remove("k", None, &opts()).unwrap().synced);
}

fn revisions_increase_across_collections(subject: &Subject) {
    let a = subject.collection("a");
    let b = subject.collection("b");
    let mut last = quince_model::rev::RevisionId(0);
    for i in 0..200 {
        let c = if i % 2 == 0 { &a } else { &b };
        let out = c.insert(json!({}), &opts()).unwrap();
        let rev = quince_model::rev::RevisionId::decode(&out.rev).unwrap();
        assert!(rev > last);
        last = rev;
    }
    // The collection's revision is its newest document's; `b` got the last insert.
    assert_eq!(
        quince_model::rev::RevisionId::decode(&b.revision()),
        Some(last)
    );
    assert!(quince_model::rev::RevisionId::decode(&a.revision()).unwrap() < last);
}

/// The keys an index lookup hands out, in order.
fn lookup_keys(collection: &Doc, id: u64, lookup: &quince_db::IndexLookup) -> Vec<String> {
    let mut keys = Vec::new();
    collection
        .0
        .index_lookup(id, lookup, &mut |hit| {
            keys.push(hit.key.to_owned());
            true
        })
        .unwrap();
    keys
}

fn indexes_are_created_found_again_listed_and_dropped(subject: &Subject) {
    let c = subject.collection("c");
    let body = json!({"type": "skiplist", "fields": ["a.b", "c"], "sparse": true});
    let (made, new) = c.0.create_index(&body).unwrap();
    assert!(new);
    assert_eq!(made.kind, quince_db::IndexType::Persistent);
    assert_eq!(made.name, format!("idx_{}", made.id));
    assert_eq!(made.json["id"], format!("c/{}", made.id));
    let (again, new) = c.0.create_index(&body).unwrap();
    assert!(!new);
    assert_eq!(again, made);
    let listed = c.0.indexes();
    assert_eq!(listed.len(), 2);
    assert_eq!((listed[0].id, listed[0].name.as_str()), (0, "primary"));
    assert_eq!(listed[1], made);
    let bad =
        c.0.create_index(&json!({"type": "inverted", "fields": ["a"]}));
    assert_eq!(bad.unwrap_err().num(), 10);
    assert_eq!(c.0.drop_index("primary").unwrap_err().num(), 1212);
    assert_eq!(c.0.drop_index(&made.id.to_string()).unwrap().id, made.id);
    assert_eq!(c.0.indexes().len(), 1);
    assert_eq!(c.0.drop_index(&made.name).unwrap_err().num(), 1212);
}

fn unique_indexes_refuse_duplicates_per_item(subject: &Subject) {
    let c = subject.collection("c");
    let (unique, _) =
        c.0.create_index(&json!({"type": "persistent", "fields": ["u"], "unique": true}))
            .unwrap();
    c.insert(json!({"_key": "a", "u": 1}), &opts()).unwrap();
    let error = c
        .insert(json!({"_key": "b", "u": 1.0}), &opts())
        .unwrap_err();
    assert_eq!(error.num(), 1210);
    assert_eq!(
        error.message,
        format!(
            "unique constraint violated - in index {} of type persistent over 'u'; \
             conflicting key: a",
            unique.name
        )
    );
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![
            json!({"_key": "c", "u": 2}),
            json!({"_key": "d", "u": 2}),
            json!({"u": 3}),
        ],
        opts(),
    ));
    assert_eq!(error_nums(&results.items), [None, Some(1210), None]);
    // Updating a document to its own value is not a conflict.
    c.update("a", json!({"u": 1, "x": true}), &opts()).unwrap();
    assert_eq!(
        c.update("a", json!({"u": 2}), &opts()).unwrap_err().num(),
        1210
    );
    let clash = c.0.create_index(
        &json!({"type": "persistent", "fields": ["x"], "unique": true, "sparse": false}),
    );
    // One document has x (true), the others miss it (null, twice): a non-sparse unique index
    // cannot hold them.
    assert_eq!(clash.unwrap_err().num(), 1210);
    assert_eq!(c.0.indexes().len(), 2);
}

fn index_lookups_come_in_index_order(subject: &Subject) {
    use std::ops::Bound;
    let c = subject.collection("c");
    let (index, _) =
        c.0.create_index(&json!({"type": "persistent", "fields": ["n", "tags[*]"]}))
            .unwrap();
    let docs = vec![
        json!({"_key": "a", "n": 2, "tags": ["y", "x", "y"]}),
        json!({"_key": "b", "n": 1, "tags": ["z"]}),
        json!({"_key": "c", "n": "1", "tags": ["x"]}),
        json!({"_key": "d", "n": null, "tags": ["x"]}),
        json!({"_key": "e", "n": 1, "tags": "not an array"}),
    ];
    let written = c.write(WriteRequest::new(WriteKind::Insert, docs, opts()));
    assert!(written.items.iter().all(Result::is_ok));
    let all = quince_db::IndexLookup::all();
    assert_eq!(lookup_keys(&c, index.id, &all), ["d", "b", "a", "a", "c"]);
    let range = quince_db::IndexLookup::Sorted {
        prefix: vec![json!(2)],
        low: Bound::Excluded(json!("x")),
        high: Bound::Unbounded,
        reverse: false,
    };
    assert_eq!(lookup_keys(&c, index.id, &range), ["a"]);
    let numbers_desc = quince_db::IndexLookup::Sorted {
        prefix: vec![],
        low: Bound::Excluded(json!(null)),
        high: Bound::Excluded(json!("")),
        reverse: true,
    };
    assert_eq!(lookup_keys(&c, index.id, &numbers_desc), ["a", "a", "b"]);
    let mut values = Vec::new();
    c.0.index_lookup(
        index.id,
        &quince_db::IndexLookup::equal(vec![json!(1)]),
        &mut |hit| {
            values.push(hit.values.to_vec());
            true
        },
    )
    .unwrap();
    assert_eq!(values, [vec![json!(1), json!("z")]]);
    let too_long = quince_db::IndexLookup::equal(vec![json!(1), json!(2), json!(3)]);
    assert_eq!(
        c.0.index_lookup(index.id, &too_long, &mut |_| true)
            .unwrap_err()
            .num(),
        10
    );
    assert_eq!(
        c.0.index_lookup(999_999, &all, &mut |_| true)
            .unwrap_err()
            .num(),
        1212
    );
    c.truncate(false).unwrap();
    assert!(lookup_keys(&c, index.id, &all).is_empty());
}

fn edge_index_is_listed_kept_and_looked_up(subject: &Subject) {
    use quince_db::IndexLookup;
    use quince_ops::{EdgeDirection, EDGE_INDEX_ID};
    let db = subject.system();
    let mut request = create("e");
    request.kind = CollectionType::Edge;
    let e = db.create_collection(request).unwrap();
    let names: Vec<String> = e.0.indexes().iter().map(|i| i.name.clone()).collect();
    assert_eq!(names, ["primary", "edge"]);
    assert_eq!(e.0.indexes()[1].json["id"], "e/1");
    assert_eq!(e.0.drop_index("edge").unwrap_err().num(), 11);
    assert_eq!(e.0.drop_index("1").unwrap_err().num(), 11);
    let created =
        e.0.create_index(&json!({"type": "persistent", "fields": ["w"]}));
    assert!(created.unwrap().1);
    assert_eq!(e.0.indexes()[1].name, "edge");
    assert_eq!(e.figures().index_count, 3);
    // Multi-document writes check `_from` and `_to` per item.
    let docs = vec![
        json!({"_key": "a", "_from": "v/1", "_to": "v/2"}),
        json!({"_key": "bad", "_from": "v/1"}),
        json!({"_key": "b", "_from": "v/2", "_to": "v/1"}),
        json!({"_key": "c", "_from": "v/1", "_to": "v/1"}),
    ];
    let written = e.write(WriteRequest::new(WriteKind::Insert, docs, opts()));
    assert_eq!(error_nums(&written.items), [None, Some(1233), None, None]);
    let replaced = e.write(WriteRequest::new(
        WriteKind::Replace,
        vec![
            json!({"_key": "a", "w": 1}),
            json!({"_key": "b", "_from": "v/3", "_to": "v/1"}),
        ],
        opts(),
    ));
    assert_eq!(error_nums(&replaced.items), [Some(1233), None]);
    let edges_of = |direction, vertex: &str| {
        let lookup = IndexLookup::Edge {
            direction,
            vertex: vertex.to_owned(),
        };
        lookup_keys(&e, EDGE_INDEX_ID, &lookup)
    };
    assert_eq!(edges_of(EdgeDirection::Out, "v/1"), ["a", "c"]);
    assert_eq!(edges_of(EdgeDirection::In, "v/1"), ["b", "c"]);
    assert_eq!(edges_of(EdgeDirection::Out, "v/3"), ["b"]);
    assert!(edges_of(EdgeDirection::Out, "v/2").is_empty());
    let all = IndexLookup::all();
    let wrong = e.0.index_lookup(EDGE_INDEX_ID, &all, &mut |_| true);
    assert_eq!(wrong.unwrap_err().num(), 10);
    // (v/1, v/3 from; v/2, v/1 to) over 3 edges.
    let estimate = e.0.indexes()[1].json["selectivityEstimate"]
        .as_f64()
        .unwrap();
    assert!((estimate - 4.0 / 6.0).abs() < 1e-9, "{estimate}");
    e.truncate(false).unwrap();
    assert!(edges_of(EdgeDirection::Out, "v/1").is_empty());
    // A document collection has no edge index.
    assert_eq!(subject.collection("d").0.indexes().len(), 1);
}

fn schema_levels_and_messages(subject: &Subject) {
    let mut request = create("s");
    request.schema = Some(json!({"rule": {"properties": {"n": {"type": "number"}}},
                                 "level": "moderate", "message": "numbers only"}));
    let c = subject.system().create_collection(request).unwrap();
    assert_eq!(
        c.0.properties().schema,
        json!({"message": "numbers only", "level": "moderate", "type": "json",
               "rule": {"properties": {"n": {"type": "number"}}}})
    );
    let error = c
        .insert(json!({"_key": "a", "n": "x"}), &opts())
        .unwrap_err();
    assert_eq!(
        (error.num(), error.message.as_ref()),
        (1620, "numbers only")
    );
    let results = c
        .write(WriteRequest::new(
            WriteKind::Insert,
            vec![json!({"_key": "a", "n": 1}), json!({"_key": "b", "n": [1]})],
            opts(),
        ))
        .items;
    assert_eq!(error_nums(&results), [None, Some(1620)]);
    assert_eq!(
        c.update("a", json!({"n": "y"}), &opts()).unwrap_err().num(),
        1620
    );
    // An invalid document (written past the schema) may change and stay invalid.
    let skip = WriteOptions {
        skip_document_validation: true,
        ..opts()
    };
    c.insert(json!({"_key": "bad", "n": "x"}), &skip).unwrap();
    c.replace("bad", json!({"n": "z"}), &opts()).unwrap();
    assert!(c.remove("bad", None, &opts()).is_ok());
    // Bad schemas change nothing.
    let bad = quince_db::PropertiesUpdate {
        schema: Some(json!({"rule": {}, "level": "sometimes"})),
        ..Default::default()
    };
    assert_eq!(c.0.update_properties(bad).unwrap_err().num(), 1621);
    assert_eq!(c.0.properties().schema["level"], "moderate");
    let none = quince_db::PropertiesUpdate {
        schema: Some(json!({})),
        ..Default::default()
    };
    assert_eq!(c.0.update_properties(none).unwrap().schema, Value::Null);
    c.insert(json!({"n": "free"}), &opts()).unwrap();
}

fn computed_values_on_each_event(subject: &Subject) {
    let mut request = create("cv");
    request.computed_values = Some(json!([
        {"name": "key", "expression": "RETURN @doc._key", "overwrite": true,
         "computeOn": ["insert"]},
        {"name": "n2", "expression": "RETURN @doc.n * 2", "overwrite": false},
    ]));
    let c = subject.system().create_collection(request).unwrap();
    let returning = WriteOptions {
        return_new: true,
        ..opts()
    };
    let new = c
        .insert(json!({"_key": "a", "n": 2}), &returning)
        .unwrap()
        .new
        .unwrap();
    assert_eq!((&new["key"], &new["n2"]), (&json!("a"), &json!(4)));
    let new = c
        .update("a", json!({"n": 5}), &returning)
        .unwrap()
        .new
        .unwrap();
    assert_eq!((&new["key"], &new["n2"]), (&json!("a"), &json!(10)));
    let new = c
        .replace("a", json!({"n": 1, "n2": "mine"}), &returning)
        .unwrap()
        .new
        .unwrap();
    assert_eq!((new.get("key"), &new["n2"]), (None, &json!("mine")));
    assert_eq!(read(&c, "a")["n2"], "mine");
    let bad = quince_db::PropertiesUpdate {
        computed_values: Some(
            json!([{"name": "x", "expression": "RETURN DOCUMENT('cv/a')",
                                      "overwrite": true}]),
        ),
        ..Default::default()
    };
    assert_eq!(c.0.update_properties(bad).unwrap_err().num(), 10);
    assert_eq!(c.0.properties().computed_values[1]["name"], "n2");
}

/// The hits of a lookup: key and values, in order.
fn lookup_hits(
    collection: &Doc,
    id: u64,
    lookup: &quince_db::IndexLookup,
) -> Vec<(String, Vec<Value>)> {
    let mut hits = Vec::new();
    collection
        .0
        .index_lookup(id, lookup, &mut |hit| {
            hits.push((hit.key.to_owned(), hit.values.to_vec()));
            true
        })
        .unwrap();
    hits
}

fn geo_lookups_answer_nearest_first(subject: &Subject) {
    use quince_db::IndexLookup;
    let c = subject.collection("c");
    let (index, new) =
        c.0.create_index(&json!({"type": "geo", "fields": ["loc"], "geoJson": true}))
            .unwrap();
    assert!(new);
    assert_eq!(index.json["geoJson"], true);
    assert_eq!(index.json["bestIndexedLevel"], 17);
    let docs = vec![
        json!({"_key": "berlin", "loc": [13.40, 52.52]}),
        json!({"_key": "potsdam", "loc": {"type": "Point", "coordinates": [13.06, 52.39]}}),
        json!({"_key": "paris", "loc": [2.35, 48.86]}),
        json!({"_key": "fiji", "loc": [179.9, -17.0]}),
        json!({"_key": "samoa", "loc": [-179.9, -17.0]}),
        json!({"_key": "nowhere", "loc": [500, 0]}),
        json!({"_key": "none"}),
    ];
    let written = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
    let near = |limit, max_distance| IndexLookup::Near {
        lat: 52.52,
        lon: 13.40,
        min_distance: 0.0,
        max_distance,
        limit,
    };
    let hits = lookup_hits(&c, index.id, &near(Some(3), None));
    let keys: Vec<&str> = hits.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["berlin", "potsdam", "paris"]);
    assert_eq!(hits[0].1, [json!(0.0)]);
    let potsdam = hits[1].1[0].as_f64().unwrap();
    assert!((potsdam - 26_700.0).abs() < 1_000.0, "{potsdam}");
    let within = lookup_hits(&c, index.id, &near(None, Some(100_000.0)));
    assert_eq!(within.len(), 2);
    let all = lookup_hits(&c, index.id, &near(None, None));
    assert_eq!(
        all.len(),
        5,
        "invalid and missing locations are not indexed"
    );
    // Across the antimeridian: the shorter arc, and a cap that wraps.
    let pacific = quince_ops::Rectangle::from_corners(-20.0, 179.0, -10.0, -179.0).unwrap();
    let boxed = IndexLookup::WithinRectangle {
        rectangle: pacific,
        limit: None,
    };
    let keys: Vec<String> = lookup_hits(&c, index.id, &boxed)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["fiji", "samoa"]);
    let fiji = IndexLookup::Near {
        lat: -17.0,
        lon: 179.95,
        min_distance: 0.0,
        max_distance: Some(50_000.0),
        limit: None,
    };
    assert_eq!(lookup_hits(&c, index.id, &fiji).len(), 2);
    let wrong =
        c.0.index_lookup(index.id, &IndexLookup::all(), &mut |_| true);
    assert_eq!(wrong.unwrap_err().num(), 10);
    let (two, _) =
        c.0.create_index(&json!({"type": "geo", "fields": ["lat", "lon"]}))
            .unwrap();
    let written = c.write(WriteRequest::new(
        WriteKind::Insert,
        vec![json!({"_key": "pair", "lat": 52.5, "lon": 13.4})],
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
    assert_eq!(lookup_hits(&c, two.id, &near(Some(10), None)).len(), 1);
}

fn fulltext_lookups_follow_the_query_syntax(subject: &Subject) {
    use quince_ops::{FulltextQuery, IndexLookup};
    let c = subject.collection("c");
    let (index, _) =
        c.0.create_index(&json!({"type": "fulltext", "fields": ["text"]}))
            .unwrap();
    assert_eq!(index.json["minLength"], 2);
    let docs = vec![
        json!({"_key": "a", "text": "The quick brown Fox"}),
        json!({"_key": "b", "text": ["a lazy dog", {"more": "the FOXES"}]}),
        json!({"_key": "c", "text": "Über größte Füchse"}),
        json!({"_key": "d", "text": 42}),
    ];
    let written = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
    let find = |query: &str, limit| {
        let lookup = IndexLookup::Fulltext {
            query: FulltextQuery::parse(query).unwrap(),
            limit,
        };
        lookup_keys(&c, index.id, &lookup)
    };
    assert_eq!(find("fox", None), ["a"]);
    assert_eq!(find("prefix:fox", None), ["a", "b"]);
    assert_eq!(find("prefix:fox,-lazy", None), ["a"]);
    assert_eq!(find("quick,|dog", None), ["a", "b"]);
    assert_eq!(find("prefix:FÜ", None), ["c"]);
    assert_eq!(find("complete:größte,+über", None), ["c"]);
    assert_eq!(find("the", Some(1)), ["a"]);
    assert!(find("a", None).is_empty(), "shorter than minLength");
    let written = c.0.write(WriteRequest::new(
        WriteKind::Remove,
        vec![json!("a")],
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
    assert_eq!(find("prefix:fox", None), ["b"]);
}

fn apply_replicated_stores_the_leaders_documents_as_they_are(subject: &Subject) {
    use quince_db::ReplicatedOp;
    use quince_model::rev::RevisionId;
    let leader = subject.collection("leader");
    let follower = subject.collection("follower");
    let unique = json!({"type": "persistent", "fields": ["u"], "unique": true});
    let (index, _) = follower.0.create_index(&unique).unwrap();
    let written = leader
        .insert(json!({"_key": "a", "u": 1, "x": [1, 2]}), &opts())
        .unwrap();
    let mut a = read(&leader, "a").as_object().unwrap().clone();
    a.remove("_id");
    // A revision far ahead of this server's clock: the follower's clock must move past it.
    let ahead = RevisionId(RevisionId::decode(&written.rev).unwrap().0 + (1 << 40)).encode();
    let b = json!({"_key": "b", "_rev": ahead, "u": 2})
        .as_object()
        .unwrap()
        .clone();
    let gone = json!({"_key": "gone", "_rev": written.rev, "u": 3});
    let ops = vec![
        ReplicatedOp::Put(gone.as_object().unwrap().clone()),
        ReplicatedOp::Put(a.clone()),
        ReplicatedOp::Put(b.clone()),
        ReplicatedOp::Remove("gone".into()),
        ReplicatedOp::Remove("never-there".into()),
    ];
    follower.0.apply_replicated(&ops, true).unwrap();
    assert_eq!(follower.count(), 2);
    let stored = read(&follower, "a");
    assert_eq!(
        stored["_rev"], written.rev,
        "stored with the leader's revision"
    );
    assert_eq!(stored["x"], json!([1, 2]));
    assert_eq!(read(&follower, "b")["_rev"], ahead);
    let all = lookup_keys(&follower, index.id, &quince_db::IndexLookup::all());
    assert_eq!(all, vec!["a", "b"], "secondary indexes follow");
    // A put replaces whatever version the key holds; a clash with another key's unique value
    // stops the batch with 1210.
    let mut b2 = b.clone();
    b2.insert("u".into(), json!(1));
    let clash = follower.0.apply_replicated(&[ReplicatedOp::Put(b2)], false);
    assert_eq!(clash.unwrap_err().num(), 1210);
    let no_rev = json!({"_key": "c"}).as_object().unwrap().clone();
    assert!(follower
        .0
        .apply_replicated(&[ReplicatedOp::Put(no_rev)], false)
        .is_err());
    let later = follower.insert(json!({"_key": "c"}), &opts()).unwrap();
    assert!(
        RevisionId::decode(&later.rev).unwrap() > RevisionId::decode(&ahead).unwrap(),
        "the revision clock moved past every stored revision"
    );
    let ops = [ReplicatedOp::Truncate, ReplicatedOp::Put(a)];
    follower.0.apply_replicated(&ops, false).unwrap();
    assert_eq!(follower.count(), 1);
    assert_eq!(read(&follower, "a")["_rev"], written.rev);
}

/// Runs every scenario against every implementation.
macro_rules! conformance {
    (engines: [$($engine:ident),* $(,)?], scenarios: $scenarios:tt) => {
        $( conformance!(@engine $engine $scenarios); )*
    };
    (@engine $engine:ident [$($scenario:ident),* $(,)?]) => {
        mod $engine {
            $(
                #[test]
                fn $scenario() {
                    super::$scenario(&super::$engine());
                }
            )*
        }
    };
}

conformance!(
    engines: [local, fake],
    scenarios: [
        schema_levels_and_messages,
        computed_values_on_each_event,
        multi_insert_answers_one_result_per_item_in_order,
        multi_modify_and_remove_parse_keys_and_selectors_per_item,
        bulk_reads_answer_each_selector_in_order,
        synced_requests_carry_one_durability_that_resolves,
        catalog_operations_answer_arangodb_errors,
        truncate_and_scan_see_every_document,
        insert_then_read_renders_key_id_rev_first,
        keys_are_validated_and_generated,
        a_missing_document_is_1202_for_every_operation,
        overwrite_modes,
        replace_and_update_report_old_rev_and_keep_key,
        keep_null_and_merge_objects,
        revision_preconditions_answer_412_with_the_current_meta,
        remove_reports_the_removed_version,
        edges_need_valid_from_and_to,
        version_attribute_skips_older_versions_silently,
        wait_for_sync_is_the_request_or_the_collection,
        revisions_increase_across_collections,
        indexes_are_created_found_again_listed_and_dropped,
        unique_indexes_refuse_duplicates_per_item,
        index_lookups_come_in_index_order,
        edge_index_is_listed_kept_and_looked_up,
        geo_lookups_answer_nearest_first,
        fulltext_lookups_follow_the_query_syntax,
        apply_replicated_stores_the_leaders_documents_as_they_are,
    ]
);

// The coordinator differs where ArangoDB's cluster does: generated keys come from cluster-wide
// id blocks and do not follow user keys (`keys_are_validated_and_generated`), and revisions
// are ordered per DB server, not across shards on different servers
// (`revisions_increase_across_collections`); a property change (`schema`) reaches the shards
// when their DB servers apply the Plan, after the change answered, as in ArangoDB
// (`schema_levels_and_messages` writes at once after one); computed values are not supported
// in a cluster yet.
conformance!(
    engines: [coordinator],
    scenarios: [
        multi_insert_answers_one_result_per_item_in_order,
        multi_modify_and_remove_parse_keys_and_selectors_per_item,
        bulk_reads_answer_each_selector_in_order,
        synced_requests_carry_one_durability_that_resolves,
        catalog_operations_answer_arangodb_errors,
        truncate_and_scan_see_every_document,
        insert_then_read_renders_key_id_rev_first,
        a_missing_document_is_1202_for_every_operation,
        overwrite_modes,
        replace_and_update_report_old_rev_and_keep_key,
        keep_null_and_merge_objects,
        revision_preconditions_answer_412_with_the_current_meta,
        remove_reports_the_removed_version,
        edges_need_valid_from_and_to,
        version_attribute_skips_older_versions_silently,
        wait_for_sync_is_the_request_or_the_collection,
        indexes_are_created_found_again_listed_and_dropped,
        unique_indexes_refuse_duplicates_per_item,
        index_lookups_come_in_index_order,
        edge_index_is_listed_kept_and_looked_up,
        geo_lookups_answer_nearest_first,
        fulltext_lookups_follow_the_query_syntax,
    ]
);
