//! A timing, not a test of behaviour (ignored by default; machines differ, so nothing is
//! asserted about speed): one-document inserts through the write path, and batches of 1,000,
//! with ten string attributes on 32 MiB journals, best of five rounds. Run by hand, before and
//! after a change to the write path, on the same machine:
//! `cargo test --release -p quince-db --test write_path_timing -- --ignored --nocapture`

use crate::common;

use std::sync::Arc;
use std::time::Instant;

use common::{create, opts};
use quince_db::{Catalog, DbConfig};
use quince_storage::io::OsFileIo;
use serde_json::{json, Value};

#[test]
#[ignore = "a timing: run by hand with --ignored --nocapture"]
fn inserts_through_the_write_path() {
    let dir = tempfile::tempdir().unwrap();
    let config = DbConfig::new(dir.path().to_path_buf(), Arc::new(OsFileIo::new()));
    let catalog = Catalog::open(config).unwrap();
    let c = catalog
        .database("_system")
        .unwrap()
        .create_collection(create("m"))
        .unwrap();
    let doc: Value = json!({
        "test1": "some test value", "test2": "some test value", "test3": "some test value",
        "test4": "some test value", "test5": "some test value", "test6": "some test value",
        "test7": "some test value", "test8": "some test value", "test9": "some test value",
        "test10": "some test value"
    });
    let (mut single, mut many) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..100_000 {
            c.insert_deferred(doc.clone(), &opts()).unwrap();
        }
        single = single.min(t.elapsed().as_secs_f64() / 100_000.0);
        let t = Instant::now();
        for _ in 0..200 {
            let (results, _) = c.insert_many_deferred(vec![doc.clone(); 1000], &opts());
            assert!(results.iter().all(Result::is_ok));
        }
        many = many.min(t.elapsed().as_secs_f64() / 200_000.0);
    }
    println!(
        "one-document inserts: {:.0} ns each; batches of 1,000: {:.0} ns per document",
        single * 1e9,
        many * 1e9
    );
    catalog.shutdown().unwrap();
}
