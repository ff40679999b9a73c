//! How long a restart takes when it rebuilds a persistent index over a million small
//! documents, and what the index costs in memory per entry. A timing, not a check of
//! behaviour: run by hand in release,
//! `cargo test --release -p quince-db --test index_restart_timing -- --ignored --nocapture`.
//! `docs/storage-format.md` records the figures.

use crate::common;

use std::time::Instant;

use quince_db::{WriteKind, WriteOptions, WriteRequest};
use serde_json::json;

use common::{create, open_os};

const DOCUMENTS: usize = 1_000_000;

/// The resident memory of this process, in bytes.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[test]
#[ignore = "a timing: run by hand in release with --ignored --nocapture"]
fn restart_rebuilds_a_persistent_index_over_a_million_documents() {
    let dir = tempfile::tempdir().unwrap();
    {
        let catalog = open_os(dir.path());
        let db = catalog.database("_system").unwrap();
        let c = db.create_collection(create("c")).unwrap();
        for start in (0..DOCUMENTS).step_by(1000) {
            let docs = (start..start + 1000)
                .map(|i| json!({"_key": format!("k{i}"), "n": i % 1000, "s": format!("v{i}")}))
                .collect();
            let written = c.write(WriteRequest::new(
                WriteKind::Insert,
                docs,
                WriteOptions::default(),
            ));
            assert!(written.items.iter().all(Result::is_ok));
        }
        catalog.shutdown().unwrap();
    }
    let started = Instant::now();
    let catalog = open_os(dir.path());
    let plain = started.elapsed();
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    let started = Instant::now();
    c.checksum(false, true).unwrap();
    let scan = started.elapsed();
    let before = resident_bytes();
    let started = Instant::now();
    c.create_index(&json!({"type": "persistent", "fields": ["s"]}))
        .unwrap();
    let build = started.elapsed();
    let per_entry = resident_bytes().saturating_sub(before) as f64 / DOCUMENTS as f64;
    catalog.shutdown().unwrap();
    let started = Instant::now();
    let catalog = open_os(dir.path());
    let indexed = started.elapsed();
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(c.count(), DOCUMENTS as u64);
    println!(
        "{DOCUMENTS} documents: open without index {plain:?}, a scan of every document \
         {scan:?}, index build {build:?}, open with a persistent index {indexed:?}, about \
         {per_entry:.0} bytes per entry"
    );
    catalog.shutdown().unwrap();
}
