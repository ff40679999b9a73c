//! The catalog operations: databases (create, drop, names) and collections (create with its
//! validations, lookup by name and id, drop, rename, properties, count, figures, revision,
//! checksum, truncate, compact), with ArangoDB's errors.

use crate::common;

use common::{collection, create, open_os, opts};
use quince_db::{CollectionType, PropertiesUpdate};
use serde_json::json;

#[test]
fn databases_are_created_listed_and_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    assert_eq!(catalog.database_names(), ["_system"]);
    assert!(catalog.database("_system").unwrap().is_system());

    let db = catalog.create_database("shop 🛒").unwrap();
    assert_eq!(db.name(), "shop 🛒");
    assert!(!db.is_system());
    assert_ne!(db.id(), catalog.database("_system").unwrap().id());
    assert_eq!(catalog.database_names(), ["_system", "shop 🛒"]);
    assert_eq!(catalog.create_database("shop 🛒").unwrap_err().num(), 1207);
    for bad in ["", "_x", "a/b", "1a", " pad"] {
        assert_eq!(
            catalog.create_database(bad).unwrap_err().num(),
            1229,
            "{bad:?}"
        );
    }
    let c = db.create_collection(create("items")).unwrap();
    c.insert(json!({"_key": "x"}), &opts()).unwrap();

    assert_eq!(catalog.drop_database("_system").unwrap_err().num(), 1230);
    assert_eq!(catalog.drop_database("nope").unwrap_err().num(), 1228);
    catalog.drop_database("shop 🛒").unwrap();
    assert!(catalog.database("shop 🛒").is_none());
    assert_eq!(catalog.database_names(), ["_system"]);
    // The name is free again, and the new database starts empty.
    let again = catalog.create_database("shop 🛒").unwrap();
    assert!(again.collections().is_empty());
}

#[test]
fn collection_creation_validates_its_request() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    for bad in ["", "a/b", "1x", "_sys", "with:colon"] {
        assert_eq!(
            db.create_collection(create(bad)).unwrap_err().num(),
            1208,
            "{bad:?}"
        );
    }
    let mut system = create("_sys");
    system.is_system = true;
    assert!(db.create_collection(system).unwrap().properties().is_system);

    collection(&catalog, "dup");
    assert_eq!(db.create_collection(create("dup")).unwrap_err().num(), 1207);

    let mut small = create("small");
    small.journal_size = Some(1024 * 1024 - 1);
    let err = db.create_collection(small).unwrap_err();
    assert_eq!(
        (err.num(), err.status, err.message.as_ref()),
        (400, 400, "journalSize is too small")
    );

    let mut keys = create("keys");
    keys.key_options = Some(json!({"type": "bogus"}));
    assert_eq!(db.create_collection(keys).unwrap_err().num(), 1232);
    let mut keys = create("keys");
    keys.key_options = Some(json!({"type": "traditional", "increment": 2}));
    assert_eq!(db.create_collection(keys).unwrap_err().num(), 1232);
    assert!(db.collection("keys").is_err());
}

#[test]
fn properties_are_reported_and_changed() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    let mut request = create("props");
    request.kind = CollectionType::Edge;
    request.journal_size = Some(4 * 1024 * 1024);
    request.key_options = Some(json!({"type": "autoincrement", "increment": 3, "offset": 7}));
    request.cache_enabled = Some(true);
    let c = db.create_collection(request).unwrap();
    let p = c.properties();
    assert_eq!(
        (p.name.as_str(), p.kind, p.is_system),
        ("props", CollectionType::Edge, false)
    );
    assert_eq!(p.id, c.id());
    assert!(!p.globally_unique_id.is_empty());
    assert_eq!(p.journal_size, 4 * 1024 * 1024);
    assert!(!p.wait_for_sync);
    assert!(p.cache_enabled);
    assert_eq!(p.schema, serde_json::Value::Null);
    assert_eq!(p.computed_values, serde_json::Value::Null);
    assert_eq!(
        p.key_options,
        json!({"type": "autoincrement", "allowUserKeys": true, "increment": 3, "offset": 7,
               "lastValue": 0})
    );
    assert_eq!(db.collection(&c.id().to_string()).unwrap().name(), "props");
    assert_eq!(db.collection("missing").unwrap_err().num(), 1203);

    let err = c
        .update_properties(PropertiesUpdate {
            journal_size: Some(1000),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.num(), 400);
    let p = c
        .update_properties(PropertiesUpdate {
            wait_for_sync: Some(true),
            journal_size: Some(2 * 1024 * 1024),
            schema: Some(serde_json::Value::Null),
            computed_values: Some(json!([])),
            cache_enabled: Some(false),
        })
        .unwrap();
    assert!(p.wait_for_sync && c.wait_for_sync());
    assert_eq!(p.journal_size, 2 * 1024 * 1024);
    assert_eq!(c.figures().storage.journal_size, 2 * 1024 * 1024);
    assert_eq!(
        (p.schema, p.computed_values, p.cache_enabled),
        // `[]` asks for no computed values: reported as none.
        (serde_json::Value::Null, serde_json::Value::Null, false)
    );
}

#[test]
fn bad_schemas_and_computed_values_create_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    let mut request = create("validated");
    request.schema = Some(json!({"rule": {"type": "object"}, "level": "always"}));
    let err = db.create_collection(request).unwrap_err();
    assert_eq!((err.status, err.num()), (400, 1621));
    assert!(err.message.contains("validation levels"), "{}", err.message);
    let mut request = create("computed");
    request.computed_values = Some(json!([{"name": "x", "expression": "RETURN 1"}]));
    assert_eq!(db.create_collection(request).unwrap_err().num(), 10);
    assert_eq!(db.collection("validated").unwrap_err().num(), 1203);
    assert_eq!(db.collection("computed").unwrap_err().num(), 1203);

    let c = db.create_collection(create("plain")).unwrap();
    let err = c
        .update_properties(PropertiesUpdate {
            schema: Some(json!({"rule": []})),
            wait_for_sync: Some(true),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.num(), 1621);
    assert!(!c.wait_for_sync(), "a refused change changes nothing");
    assert_eq!(c.properties().schema, serde_json::Value::Null);
}

#[test]
fn drop_and_rename() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let db = catalog.database("_system").unwrap();
    let c = collection(&catalog, "old");
    c.insert(json!({"_key": "k"}), &opts()).unwrap();
    collection(&catalog, "taken");

    assert_eq!(
        db.rename_collection("old", "taken").unwrap_err().num(),
        1207
    );
    assert_eq!(
        db.rename_collection("old", "bad/name").unwrap_err().num(),
        1208
    );
    assert_eq!(db.rename_collection("nope", "x").unwrap_err().num(), 1203);
    assert_eq!(db.rename_collection("old", "old").unwrap().name(), "old");
    let renamed = db.rename_collection("old", "new").unwrap();
    assert_eq!(renamed.id(), c.id());
    assert!(db.collection("old").is_err());
    // `_id` follows the name without rewriting documents.
    let doc: serde_json::Value = serde_json::from_slice(&c.read("k").unwrap().json).unwrap();
    assert_eq!(doc["_id"], json!("new/k"));
    let names: Vec<_> = db.collections().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["new", "taken"]);

    let mut system = create("_sys");
    system.is_system = true;
    db.create_collection(system).unwrap();
    assert_eq!(
        db.rename_collection("_sys", "plain").unwrap_err().status,
        403
    );
    let err = db.drop_collection("_sys", false).unwrap_err();
    assert_eq!((err.num(), err.status), (11, 403));
    db.drop_collection("_sys", true).unwrap();

    assert_eq!(db.drop_collection("new", false).unwrap(), c.id());
    assert_eq!(db.collection("new").unwrap_err().num(), 1203);
    assert_eq!(db.drop_collection("new", false).unwrap_err().num(), 1203);
    // A new collection of the old name is a different, empty collection.
    let fresh = collection(&catalog, "new");
    assert_ne!(fresh.id(), c.id());
    assert_eq!(fresh.count(), 0);
}

#[test]
fn count_revision_checksum_truncate_compact() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    assert_eq!(c.revision(), "0");
    assert_eq!(
        c.checksum(true, true).unwrap(),
        ("0".to_owned(), "0".to_owned())
    );

    c.insert(json!({"_key": "a", "v": 1}), &opts()).unwrap();
    let last = c.insert(json!({"_key": "b", "v": 2}), &opts()).unwrap();
    assert_eq!(c.count(), 2);
    assert_eq!(c.revision(), last.rev);
    let (keys_only, revision) = c.checksum(false, false).unwrap();
    assert_eq!(revision, last.rev);
    keys_only.parse::<u64>().unwrap();
    assert_ne!(keys_only, "0");
    let with_revs = c.checksum(true, false).unwrap().0;
    let with_data = c.checksum(false, true).unwrap().0;

    // Rewriting a document with the same data changes revisions but not keys or data.
    c.replace("a", json!({"v": 1}), &opts()).unwrap();
    assert_eq!(c.checksum(false, false).unwrap().0, keys_only);
    assert_eq!(c.checksum(false, true).unwrap().0, with_data);
    assert_ne!(c.checksum(true, false).unwrap().0, with_revs);
    c.update("a", json!({"v": 9}), &opts()).unwrap();
    assert_ne!(c.checksum(false, true).unwrap().0, with_data);

    let figures = c.figures();
    assert_eq!(figures.storage.alive_count, 2);
    assert_eq!(figures.index_count, 1);

    let before = c.revision();
    c.truncate(false).unwrap();
    assert_eq!(c.count(), 0);
    assert!(c.read("a").is_err());
    assert_ne!(c.revision(), before);
    assert_eq!(c.checksum(false, false).unwrap().0, "0");
    c.compact().unwrap();
    c.insert(json!({"_key": "a"}), &opts()).unwrap();
    assert_eq!(c.count(), 1);
}

#[test]
fn stats_sum_over_collections() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let a = collection(&catalog, "a");
    let b = catalog
        .create_database("other")
        .unwrap()
        .create_collection(create("b"))
        .unwrap();
    a.insert(json!({}), &opts()).unwrap();
    b.insert(json!({}), &opts()).unwrap();
    b.insert(
        json!({}),
        &quince_db::WriteOptions {
            wait_for_sync: true,
            ..opts()
        },
    )
    .unwrap();
    let stats = catalog.stats();
    assert_eq!(
        (stats.databases, stats.collections, stats.documents),
        (2, 2, 3)
    );
    assert!(stats.journal_bytes_written > 0);
    assert!(stats.syncs >= 1);
}
