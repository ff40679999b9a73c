//! Concurrent writers on one key never lose an update: each of N threads merges its own
//! attributes into the same document many times, and at the end every attribute of every
//! thread is present with its last value.

use crate::common;

use std::sync::Arc;

use common::{collection, open_os, opts, read};
use serde_json::json;

#[test]
fn concurrent_merges_into_one_document_lose_nothing() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "hot");
    c.insert(json!({"_key": "k"}), &opts()).unwrap();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                for round in 0..ROUNDS {
                    let patch =
                        json!({ format!("t{t}"): round, format!("seen{t}_{}", round % 4): true });
                    c.update("k", patch, &opts()).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let doc = read(&c, "k");
    for t in 0..THREADS {
        assert_eq!(doc[format!("t{t}")], json!(ROUNDS - 1), "thread {t}");
        for m in 0..4 {
            assert_eq!(doc[format!("seen{t}_{m}")], json!(true));
        }
    }
    assert_eq!(c.count(), 1);
}

#[test]
fn concurrent_inserts_of_generated_keys_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "many");
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                (0..250)
                    .map(|_| c.insert(json!({}), &opts()).unwrap().key)
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut keys: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 1000);
    assert_eq!(c.count(), 1000);
}
