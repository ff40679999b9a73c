//! A ttl index's documents expire: the maintenance thread removes every document whose date
//! (a number of seconds since the epoch, or an ISO 8601 string) lies more than `expireAfter`
//! seconds in the past, through the write path, so the collection's other indexes see the
//! removals; documents with a later date, or with no date at all, stay.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use quince_db::{Catalog, CollectionOps, IndexLookup, WriteKind, WriteOptions, WriteRequest};
use quince_storage::io::OsFileIo;
use serde_json::json;

use common::{config, create};

#[test]
fn expired_documents_are_removed_by_maintenance() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(quince_db::DbConfig {
        ttl_frequency: Duration::from_millis(50),
        ..config(dir.path(), Arc::new(OsFileIo::new()))
    })
    .unwrap();
    let c: Arc<dyn CollectionOps> = catalog
        .database("_system")
        .unwrap()
        .create_collection(create("sessions"))
        .unwrap();
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    c.create_index(&json!({"type": "ttl", "fields": ["at"], "expireAfter": 60}))
        .unwrap();
    let (by_user, _) = c
        .create_index(&json!({"type": "persistent", "fields": ["user"]}))
        .unwrap();
    let docs = vec![
        json!({"_key": "old_number", "at": now - 120.0, "user": 1}),
        json!({"_key": "old_string", "at": "2001-02-03T04:05:06Z", "user": 1}),
        json!({"_key": "recent", "at": now - 1.0, "user": 1}),
        json!({"_key": "future", "at": "2999-01-01T00:00:00+02:00", "user": 1}),
        json!({"_key": "no_date", "at": "whenever", "user": 1}),
        json!({"_key": "missing", "user": 1}),
    ];
    let written = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs,
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
    let deadline = Instant::now() + Duration::from_secs(10);
    while c.count() > 4 {
        assert!(
            Instant::now() < deadline,
            "nothing expired: {} documents",
            c.count()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(c.read("old_number").is_err() && c.read("old_string").is_err());
    let mut left = Vec::new();
    c.index_lookup(
        by_user.id,
        &IndexLookup::equal(vec![json!(1)]),
        &mut |hit| {
            left.push(hit.key.to_owned());
            true
        },
    )
    .unwrap();
    assert_eq!(left, ["future", "missing", "no_date", "recent"]);
    catalog.shutdown().unwrap();
}
