//! The write path's hooks: a hook refuses a change before anything is appended, the recovery
//! hook rebuilds derived state on open, compaction never invalidates derived state keyed by key
//! and revision (the relocation rule), and every change reaches the hooks exactly once.
//!
//! The derived state under test is a small unique index on one attribute, written here the way
//! the index issue's unique indexes will use the hooks.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use quince_db::{
    Catalog, Change, CollectionProperties, DocumentHook, HookFactory, Version, WriteKind,
    WriteOptions, WriteRequest,
};
use quince_errors::{ArangoError, Result, ARANGO_UNIQUE_CONSTRAINT_VIOLATED};
use quince_storage::io::{FileIo, OsFileIo, SimFileIo};
use serde_json::{json, Value};

use common::{collection, config, opts};

/// A unique index on attribute `u`, plus the (key, revision) of every document it knows.
#[derive(Default)]
struct UniqueU {
    state: Mutex<State>,
    /// What the hook was told, in order: "check k", "applied k", "aborted k", "truncated".
    log: Mutex<Vec<String>>,
    /// Refuse every change (to test a second hook's refusal).
    refuse_all: bool,
}

#[derive(Default)]
struct State {
    /// `u` value to the key holding it (applied or pending).
    owners: HashMap<String, String>,
    /// Every document's revision, by key.
    docs: BTreeMap<String, u64>,
}

fn u_of(version: Option<Version<'_>>) -> Option<String> {
    let version = version?;
    let value: Value = serde_json::from_slice(version.document).unwrap();
    value.get("u").map(Value::to_string)
}

impl DocumentHook for UniqueU {
    fn name(&self) -> &str {
        "unique u"
    }

    fn check(&self, change: &Change<'_>) -> Result<()> {
        self.log.lock().push(format!("check {}", change.key));
        if self.refuse_all {
            return Err(ArangoError::with_message(
                ARANGO_UNIQUE_CONSTRAINT_VIOLATED,
                "refused",
            ));
        }
        let mut state = self.state.lock();
        if let Some(u) = u_of(change.new) {
            match state.owners.get(&u) {
                Some(owner) if owner != change.key => {
                    return Err(ArangoError::new(ARANGO_UNIQUE_CONSTRAINT_VIOLATED))
                }
                _ => {
                    state.owners.insert(u, change.key.to_owned());
                }
            }
        }
        Ok(())
    }

    fn applied(&self, change: &Change<'_>) {
        self.log.lock().push(format!("applied {}", change.key));
        let mut state = self.state.lock();
        let (old, new) = (u_of(change.old), u_of(change.new));
        if let Some(old) = old.filter(|old| Some(old) != new.as_ref()) {
            state.owners.remove(&old);
        }
        match change.new {
            Some(version) => state.docs.insert(change.key.to_owned(), version.rev.0),
            None => state.docs.remove(change.key),
        };
    }

    fn aborted(&self, change: &Change<'_>) {
        self.log.lock().push(format!("aborted {}", change.key));
        let (old, new) = (u_of(change.old), u_of(change.new));
        if let Some(new) = new.filter(|new| Some(new) != old.as_ref()) {
            let mut state = self.state.lock();
            if state.owners.get(&new).map(String::as_str) == Some(change.key) {
                state.owners.remove(&new);
            }
        }
    }

    fn truncated(&self) {
        self.log.lock().push("truncated".to_owned());
        let mut state = self.state.lock();
        state.owners.clear();
        state.docs.clear();
    }

    fn recovered(&self, key: &str, version: Version<'_>) -> Result<()> {
        let mut state = self.state.lock();
        if let Some(u) = u_of(Some(version)) {
            if state.owners.insert(u, key.to_owned()).is_some() {
                return Err(ArangoError::new(ARANGO_UNIQUE_CONSTRAINT_VIOLATED));
            }
        }
        state.docs.insert(key.to_owned(), version.rev.0);
        Ok(())
    }
}

/// Gives collection `c` a [`UniqueU`] (and, with `refusing`, a second hook that refuses
/// everything), and keeps what it made for the test to inspect.
#[derive(Default)]
struct Factory {
    made: Mutex<Vec<Arc<UniqueU>>>,
    refusing: bool,
}

impl HookFactory for Factory {
    fn hooks_for(
        &self,
        _database: &str,
        properties: &CollectionProperties,
    ) -> Vec<Arc<dyn DocumentHook>> {
        if properties.name != "c" {
            return Vec::new();
        }
        let hook = Arc::new(UniqueU::default());
        self.made.lock().push(Arc::clone(&hook));
        let mut hooks: Vec<Arc<dyn DocumentHook>> = vec![hook];
        if self.refusing {
            hooks.push(Arc::new(UniqueU {
                refuse_all: true,
                ..UniqueU::default()
            }));
        }
        hooks
    }
}

impl Factory {
    fn last(&self) -> Arc<UniqueU> {
        Arc::clone(self.made.lock().last().expect("a hook was made"))
    }
}

fn open(dir: &std::path::Path, io: Arc<dyn FileIo>, factory: &Arc<Factory>) -> Arc<Catalog> {
    Catalog::open(quince_db::DbConfig {
        hooks: Some(Arc::clone(factory) as Arc<dyn HookFactory>),
        ..config(dir, io)
    })
    .unwrap()
}

fn insert_many(c: &quince_db::Collection, docs: Vec<Value>) -> Vec<Option<u32>> {
    let request = WriteRequest::new(WriteKind::Insert, docs, opts());
    c.write(request)
        .settle()
        .unwrap()
        .iter()
        .map(|r| r.as_ref().err().map(|e| e.num()))
        .collect()
}

/// The hook's (key, rev) pairs against the collection's own documents.
fn assert_derived_state_true(c: &quince_db::Collection, hook: &UniqueU) {
    let mut live = BTreeMap::new();
    c.scan(&mut |document| {
        let value: Value = serde_json::from_slice(&document.json).unwrap();
        let key = value["_key"].as_str().unwrap().to_owned();
        live.insert(key, document.rev);
        true
    })
    .unwrap();
    let derived: BTreeMap<String, String> = hook
        .state
        .lock()
        .docs
        .iter()
        .map(|(k, rev)| (k.clone(), quince_model::rev::RevisionId(*rev).encode()))
        .collect();
    assert_eq!(derived, live);
    for (key, rev) in &derived {
        assert_eq!(
            &c.read(key).unwrap().rev,
            rev,
            "the hook's revision of {key} is readable"
        );
    }
}

#[test]
fn a_hook_refuses_a_violation_before_anything_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(Factory::default());
    let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
    let c = collection(&catalog, "c");
    let hook = factory.last();

    c.insert(json!({"_key": "a", "u": 1}), &opts()).unwrap();
    let written = catalog.stats().journal_bytes_written;
    let err = c.insert(json!({"_key": "b", "u": 1}), &opts()).unwrap_err();
    assert_eq!(err.num(), 1210);
    assert_eq!(
        catalog.stats().journal_bytes_written,
        written,
        "a refused write appends nothing"
    );
    assert_eq!(c.count(), 1);

    // Within one request, the second claim of a value is refused: the first is pending.
    let nums = insert_many(&c, vec![json!({"u": 2}), json!({"u": 2}), json!({"u": 3})]);
    assert_eq!(nums, vec![None, Some(1210), None]);
    // A new version may keep its own value, not take another's; a freed value is free.
    c.update("a", json!({"u": 1, "x": true}), &opts()).unwrap();
    assert_eq!(
        c.update("a", json!({"u": 3}), &opts()).unwrap_err().num(),
        1210
    );
    c.update("a", json!({"u": 9}), &opts()).unwrap();
    c.insert(json!({"_key": "b", "u": 1}), &opts()).unwrap();
    c.remove("b", None, &opts()).unwrap();
    c.insert(json!({"_key": "b2", "u": 1}), &opts()).unwrap();
    assert_derived_state_true(&c, &hook);
    catalog.shutdown().unwrap();
}

#[test]
fn a_refusal_by_one_hook_releases_what_the_others_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(Factory {
        refusing: true,
        ..Factory::default()
    });
    let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
    let c = collection(&catalog, "c");
    let hook = factory.last();
    assert_eq!(
        c.insert(json!({"_key": "a", "u": 1}), &opts())
            .unwrap_err()
            .num(),
        1210
    );
    assert_eq!(*hook.log.lock(), vec!["check a", "aborted a"]);
    assert!(hook.state.lock().owners.is_empty());
    assert_eq!(c.count(), 0);
    catalog.shutdown().unwrap();
}

#[test]
fn the_recovery_hook_rebuilds_derived_state_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(Factory::default());
    let before = {
        let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
        let c = collection(&catalog, "c");
        let docs = (0..50)
            .map(|i| json!({"_key": format!("k{i}"), "u": i}))
            .collect();
        assert!(insert_many(&c, docs).iter().all(Option::is_none));
        for i in 0..10 {
            c.remove(&format!("k{i}"), None, &opts()).unwrap();
        }
        c.update("k20", json!({"u": 1000}), &opts()).unwrap();
        let hook = factory.last();
        assert_derived_state_true(&c, &hook);
        let state = hook.state.lock().docs.clone();
        catalog.shutdown().unwrap();
        state
    };
    let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    let hook = factory.last();
    assert_eq!(
        hook.state.lock().docs,
        before,
        "recovered from the documents on open"
    );
    assert!(hook.log.lock().is_empty(), "recovery is not a write");
    // The rebuilt index enforces what it learned.
    assert_eq!(
        c.insert(json!({"u": 1000}), &opts()).unwrap_err().num(),
        1210
    );
    assert_eq!(c.insert(json!({"u": 15}), &opts()).unwrap_err().num(), 1210);
    c.insert(json!({"u": 0}), &opts()).unwrap();
    catalog.shutdown().unwrap();
}

#[test]
fn compaction_never_invalidates_derived_state() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Arc::new(Factory::default());
    let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
    let c = collection(&catalog, "c");
    let hook = factory.last();
    let pad = "x".repeat(2000);
    // About 3 MiB over 1 MiB journals, then most of it superseded or removed.
    for round in 0..3 {
        let docs = (0..500)
            .map(|i| json!({"_key": format!("k{i}"), "u": i, "round": round, "pad": pad}))
            .collect::<Vec<_>>();
        let request = WriteRequest::new(
            WriteKind::Insert,
            docs,
            WriteOptions {
                overwrite_mode: quince_db::OverwriteMode::Replace,
                ..opts()
            },
        );
        assert!(c.write(request).settle().unwrap().iter().all(Result::is_ok));
    }
    for i in (0..500).step_by(3) {
        c.remove(&format!("k{i}"), None, &opts()).unwrap();
    }
    let compactions = catalog.stats().compactions;
    c.compact().unwrap();
    assert!(
        catalog.stats().compactions > compactions,
        "the test compacted something"
    );
    assert_derived_state_true(&c, &hook);
    let state = hook.state.lock().docs.clone();
    catalog.shutdown().unwrap();

    let catalog = open(dir.path(), Arc::new(OsFileIo::new()), &factory);
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(factory.last().state.lock().docs, state);
    assert_derived_state_true(&c, &factory.last());
    catalog.shutdown().unwrap();
}

#[test]
fn truncate_and_failed_appends_reach_the_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFileIo::new();
    let factory = Arc::new(Factory::default());
    let catalog = open(dir.path(), Arc::new(sim.clone()), &factory);
    let c = collection(&catalog, "c");
    let hook = factory.last();
    c.insert(json!({"_key": "a", "u": 1}), &opts()).unwrap();
    c.truncate(false).unwrap();
    assert!(hook.state.lock().owners.is_empty());
    c.insert(json!({"_key": "b", "u": 1}), &opts()).unwrap();
    hook.log.lock().clear();

    // The append of `c` fails halfway: the store is poisoned and the change is aborted.
    sim.tear_next_write(10);
    assert!(c.insert(json!({"_key": "c", "u": 2}), &opts()).is_err());
    assert_eq!(*hook.log.lock(), vec!["check c", "aborted c"]);
    assert_eq!(hook.state.lock().owners.get("2"), None);
    assert_eq!(
        hook.state.lock().owners.get("1").map(String::as_str),
        Some("b")
    );
    let _ = catalog.shutdown();
}
