//! Conformance of the single-document operations with ArangoDB's rules (§2 of the API
//! reference): keys, `_rev` preconditions, overwrite modes, merge options, edges,
//! `versionAttribute` and the errors each one answers, on a real temporary directory.

mod common;

use common::{collection, create, open_os, opts, read};
use quince_db::{CollectionType, OverwriteMode, WriteOptions};
use serde_json::{json, Value};

#[test]
fn insert_then_read_renders_key_id_rev_first() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let users = collection(&catalog, "users");
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

#[test]
fn keys_are_validated_and_generated() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

    let db = catalog.database("_system").unwrap();
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

#[test]
fn a_missing_document_is_1202_for_every_operation() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn overwrite_modes() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn replace_and_update_report_old_rev_and_keep_key() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn keep_null_and_merge_objects() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn revision_preconditions_answer_412_with_the_current_meta() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn remove_reports_the_removed_version() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn edges_need_valid_from_and_to() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
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
    assert_eq!(e.figures().index_count, 2);

    // In a document collection `_from` and `_to` are ordinary attributes.
    let docs = collection(&catalog, "docs");
    docs.insert(json!({"_key": "d", "_from": 5}), &opts())
        .unwrap();
    assert_eq!(read(&docs, "d")["_from"], json!(5));
}

#[test]
fn version_attribute_skips_older_versions_silently() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
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

#[test]
fn wait_for_sync_is_the_request_or_the_collection() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    let lazy = collection(&catalog, "lazy");
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

#[test]
fn revisions_increase_across_collections() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let a = collection(&catalog, "a");
    let b = collection(&catalog, "b");
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
