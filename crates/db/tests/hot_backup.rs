//! Hot backups of the local engine: a backup taken under concurrent writes to several
//! collections of several databases is one consistent cut holding every write acknowledged
//! before it was asked for; restoring brings back exactly the state a backup holds; compaction
//! racing backups breaks none of them; a backup or a restore cut short at any step leaves
//! either no backup or a restorable one, and either the old state or the new one; deleting
//! works; handles from before a restore answer errors, not data.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{create, open_os, opts};
use quince_db::{BackupRequest, Catalog, BACKUP_TIMEOUT_DEFAULT};
use serde_json::json;

/// Every document of every collection of every database: (database, collection) → key → the
/// stored JSON text (with `_rev`).
type Snapshot = BTreeMap<(String, String), BTreeMap<String, String>>;

fn snapshot(catalog: &Catalog) -> Snapshot {
    let mut all = Snapshot::new();
    for name in catalog.database_names() {
        let database = catalog.database(&name).unwrap();
        for collection in database.collections() {
            let mut docs = BTreeMap::new();
            collection
                .scan(&mut |doc| {
                    let value: serde_json::Value = serde_json::from_slice(&doc.json).unwrap();
                    let key = value["_key"].as_str().unwrap().to_owned();
                    docs.insert(key, String::from_utf8(doc.json).unwrap());
                    true
                })
                .unwrap();
            all.insert((name.clone(), collection.name()), docs);
        }
    }
    all
}

fn request(label: &str) -> BackupRequest {
    BackupRequest {
        label: Some(label.to_owned()),
        allow_inconsistent: false,
        force: false,
        timeout: BACKUP_TIMEOUT_DEFAULT,
    }
}

/// The four collections the load writes: two in `_system`, two in `shop`.
const TARGETS: [(&str, &str); 4] = [
    ("_system", "a"),
    ("_system", "b"),
    ("shop", "c"),
    ("shop", "d"),
];

fn make_targets(catalog: &Catalog) {
    catalog.create_database("shop").unwrap();
    for (db, name) in TARGETS {
        catalog
            .database(db)
            .unwrap()
            .create_collection(create(name))
            .unwrap();
    }
}

/// Each writer `t` inserts `t-<i>` into the four collections in order, round after round
/// (about 600 bytes each, so journals fill and seal), counting acknowledged writes.
fn run_writer(catalog: Arc<Catalog>, t: usize, acked: Arc<AtomicU64>, stop: Arc<AtomicBool>) {
    let collections: Vec<_> = TARGETS
        .iter()
        .map(|(db, name)| catalog.database(db).unwrap().collection(name).unwrap())
        .collect();
    let pad = "x".repeat(600);
    let mut i = 0u64;
    while !stop.load(Ordering::Acquire) {
        for collection in &collections {
            collection
                .insert(
                    json!({"_key": format!("{t}-{i}"), "i": i, "pad": pad}),
                    &opts(),
                )
                .unwrap();
            acked.fetch_add(1, Ordering::AcqRel);
        }
        i += 1;
    }
}

/// How many of writer `t`'s documents each target collection holds, checking that they are
/// a prefix `t-0 .. t-(n-1)` (no holes).
fn writer_counts(state: &Snapshot, t: usize) -> Vec<u64> {
    TARGETS
        .iter()
        .map(|(db, name)| {
            let docs = &state[&(db.to_string(), name.to_string())];
            let prefix = format!("{t}-");
            let n = docs.keys().filter(|k| k.starts_with(&prefix)).count() as u64;
            for i in 0..n {
                assert!(
                    docs.contains_key(&format!("{t}-{i}")),
                    "{db}/{name} misses {t}-{i} but holds {n} of writer {t}'s documents"
                );
            }
            n
        })
        .collect()
}

#[test]
fn a_backup_under_write_load_is_one_consistent_cut_and_restores_exactly() {
    const WRITERS: usize = 3;
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    make_targets(&catalog);
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Vec<_> = (0..WRITERS).map(|_| Arc::new(AtomicU64::new(0))).collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let (catalog, acked, stop) = (catalog.clone(), acked[t].clone(), stop.clone());
            std::thread::spawn(move || run_writer(catalog, t, acked, stop))
        })
        .collect();
    // Let the load fill a few journals (1 MiB each) first.
    let deadline = Instant::now() + Duration::from_secs(20);
    while acked.iter().map(|a| a.load(Ordering::Acquire)).sum::<u64>() < 16_000 {
        assert!(Instant::now() < deadline, "the load made no progress");
        std::thread::yield_now();
    }
    let mut backups = Vec::new();
    for round in 0..3 {
        let before: Vec<u64> = acked.iter().map(|a| a.load(Ordering::Acquire)).collect();
        let info = catalog
            .create_backup(&request(&format!("load{round}")))
            .unwrap();
        let after: Vec<u64> = acked.iter().map(|a| a.load(Ordering::Acquire)).collect();
        assert!(!info.potentially_inconsistent);
        assert!(info.nr_files > 0 && info.size_in_bytes > 0);
        backups.push((info.id, before, after));
    }
    stop.store(true, Ordering::Release);
    for writer in writers {
        writer.join().unwrap();
    }
    // A quiet backup, compared exactly after more writes.
    let quiet = snapshot(&catalog);
    let quiet_id = catalog.create_backup(&request("quiet")).unwrap().id;
    let a = catalog
        .database("_system")
        .unwrap()
        .collection("a")
        .unwrap();
    a.insert(json!({"_key": "later"}), &opts()).unwrap();
    a.remove("0-0", None, &opts()).unwrap();
    catalog
        .database("shop")
        .unwrap()
        .drop_collection("c", false)
        .unwrap();
    catalog.create_database("newer").unwrap();
    assert_ne!(snapshot(&catalog), quiet);

    for (id, before, after) in &backups {
        catalog.restore_backup(id).unwrap();
        let state = snapshot(&catalog);
        assert!(catalog.database("newer").is_none());
        for t in 0..WRITERS {
            let counts = writer_counts(&state, t);
            // One consistent cut of writer t's sequence a0 b0 c0 d0 a1 b1 ...: the counts
            // never increase along the order, and differ by at most one round.
            assert!(
                counts.windows(2).all(|w| w[0] >= w[1]) && counts[0] - counts[3] <= 1,
                "backup {id}: writer {t}'s documents {counts:?} are not one cut"
            );
            let total: u64 = counts.iter().sum();
            assert!(
                total >= before[t],
                "backup {id}: writer {t} had {} writes acknowledged before the backup was \
                 asked for, the backup holds {total}",
                before[t]
            );
            assert!(
                total <= after[t] + 1,
                "backup {id}: holds writes of writer {t} made after it returned"
            );
        }
    }
    let previous = catalog.restore_backup(&quiet_id).unwrap();
    assert_eq!(snapshot(&catalog), quiet);
    // The state the restore replaced is kept as a backup of its own.
    assert!(catalog
        .list_backups(None)
        .unwrap()
        .iter()
        .any(|b| b.id == previous));
    // Writes go on in the restored state, and survive a restart.
    let a = catalog
        .database("_system")
        .unwrap()
        .collection("a")
        .unwrap();
    a.insert(json!({"_key": "after-restore"}), &opts()).unwrap();
    let mut expected = snapshot(&catalog);
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = open_os(dir.path());
    assert_eq!(snapshot(&catalog), std::mem::take(&mut expected));
}

#[test]
fn compaction_racing_backups_breaks_none_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = common::collection(&catalog, "churn");
    let pad = "y".repeat(2000);
    // Overwrite a small key set many times: many sealed datafiles, mostly dead.
    for round in 0..12 {
        for k in 0..200 {
            c.insert(
                json!({"_key": format!("k{k}"), "round": round, "pad": pad}),
                &quince_db::WriteOptions {
                    overwrite_mode: quince_db::OverwriteMode::Replace,
                    ..opts()
                },
            )
            .unwrap();
        }
    }
    let expected = snapshot(&catalog);
    let stop = Arc::new(AtomicBool::new(false));
    let compactions = Arc::new(AtomicU64::new(0));
    let compactor = {
        let (c, stop, compactions) = (c.clone(), stop.clone(), compactions.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                c.compact().unwrap();
                compactions.fetch_add(1, Ordering::AcqRel);
            }
        })
    };
    let mut ids = Vec::new();
    for round in 0..6 {
        ids.push(
            catalog
                .create_backup(&request(&format!("race{round}")))
                .unwrap()
                .id,
        );
    }
    stop.store(true, Ordering::Release);
    compactor.join().unwrap();
    assert!(compactions.load(Ordering::Acquire) > 0);
    assert!(catalog.stats().compactions > 0, "no compaction ran");
    for id in &ids {
        catalog.restore_backup(id).unwrap();
        assert_eq!(snapshot(&catalog), expected, "backup {id}");
    }
}

/// Copies a tree (plain copies).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file under `root`, sorted.
fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A data directory whose state `A` is held by backup `id`, and whose live state is `B`.
struct TwoStates {
    dir: tempfile::TempDir,
    id: String,
    a: Snapshot,
    b: Snapshot,
}

fn two_states() -> TwoStates {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    make_targets(&catalog);
    let a_coll = catalog
        .database("_system")
        .unwrap()
        .collection("a")
        .unwrap();
    for i in 0..50 {
        a_coll
            .insert(json!({"_key": format!("k{i}")}), &opts())
            .unwrap();
    }
    let a = snapshot(&catalog);
    let id = catalog.create_backup(&request("two")).unwrap().id;
    for i in 50..80 {
        a_coll
            .insert(json!({"_key": format!("k{i}")}), &opts())
            .unwrap();
    }
    catalog.drop_database("shop").unwrap();
    let b = snapshot(&catalog);
    assert_ne!(a, b);
    catalog.shutdown().unwrap();
    TwoStates { dir, id, a, b }
}

#[test]
fn a_backup_cut_short_at_any_file_is_removed_and_the_others_stay_restorable() {
    let states = two_states();
    let backups = states.dir.path().join("backups");
    let complete = backups.join(&states.id);
    let files = files_under(&complete);
    assert!(files.len() > 5);
    for cut in [0, 1, files.len() / 2, files.len() - 1, files.len()] {
        let work = tempfile::tempdir().unwrap();
        copy_tree(states.dir.path(), work.path());
        // What a create cut short leaves: its temporary directory with some of the files.
        let temp = work
            .path()
            .join("backups")
            .join(format!("tmp-{}x", states.id));
        std::fs::create_dir_all(&temp).unwrap();
        for file in &files[..cut] {
            let target = temp.join(file.strip_prefix(&complete).unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(file, target).unwrap();
        }
        let catalog = open_os(work.path());
        assert!(
            !temp.exists(),
            "the unfinished backup was not removed (cut {cut})"
        );
        let listed = catalog.list_backups(None).unwrap();
        assert_eq!(listed.len(), 1, "cut {cut}: {listed:?}");
        assert_eq!(snapshot(&catalog), states.b);
        catalog.restore_backup(&states.id).unwrap();
        assert_eq!(snapshot(&catalog), states.a, "cut {cut}");
    }
}

/// The restore protocol's files (`docs/storage-format.md`, "Hot backups").
const ENTRIES: [&str; 2] = ["databases", "catalog.json"];

#[test]
fn a_restore_cut_short_at_any_step_leaves_the_old_state_or_the_new_one() {
    let states = two_states();
    // Each crash point: how far the restore got; true when the new state must win.
    let steps: [(&str, bool); 6] = [
        ("staging half-cloned", false),
        ("staging complete", false),
        ("committed", true),
        ("databases swapped", true),
        ("both swapped", true),
        ("ready removed", true),
    ];
    for (step, new_wins) in steps {
        let work = tempfile::tempdir().unwrap();
        let data = work.path();
        copy_tree(states.dir.path(), data);
        let backup = data.join("backups").join(&states.id);
        let staging = data.join("restore-staging");
        let ready = data.join("restore-ready");
        let old = data.join("restore-old");
        std::fs::create_dir(&staging).unwrap();
        copy_tree(&backup.join("databases"), &staging.join("databases"));
        if step == "staging half-cloned" {
            // Half of the files are missing.
            let files = files_under(&staging);
            for file in files.iter().step_by(2) {
                std::fs::remove_file(file).unwrap();
            }
        } else {
            std::fs::copy(backup.join("catalog.json"), staging.join("catalog.json")).unwrap();
        }
        if new_wins {
            std::fs::rename(&staging, &ready).unwrap();
            std::fs::create_dir(&old).unwrap();
            let swapped: &[&str] = match step {
                "committed" => &[],
                "databases swapped" => &ENTRIES[..1],
                _ => &ENTRIES,
            };
            for entry in swapped {
                std::fs::rename(data.join(entry), old.join(entry)).unwrap();
                std::fs::rename(ready.join(entry), data.join(entry)).unwrap();
            }
            if step == "ready removed" {
                std::fs::remove_dir(&ready).unwrap();
            }
        }
        let catalog = open_os(data);
        let expected = if new_wins { &states.a } else { &states.b };
        assert_eq!(&snapshot(&catalog), expected, "crash at: {step}");
        for leftover in [&staging, &ready, &old] {
            assert!(
                !leftover.exists(),
                "{} left after {step}",
                leftover.display()
            );
        }
        let listed = catalog.list_backups(None).unwrap();
        // After the commit point the replaced state is kept as a backup, restorable.
        assert_eq!(listed.len(), if new_wins { 2 } else { 1 }, "after {step}");
        if new_wins {
            let previous = listed.iter().find(|b| b.id != states.id).unwrap();
            catalog.restore_backup(&previous.id).unwrap();
            assert_eq!(
                snapshot(&catalog),
                states.b,
                "the replaced state after {step}"
            );
        }
    }
}

#[test]
fn backups_are_listed_deleted_and_unknown_ids_are_404_7007() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    common::collection(&catalog, "c")
        .insert(json!({"_key": "k"}), &opts())
        .unwrap();
    let first = catalog.create_backup(&request("first")).unwrap();
    let second = catalog
        .create_backup(&BackupRequest {
            label: None,
            ..request("x")
        })
        .unwrap();
    assert!(first.id.ends_with("_first"), "{}", first.id);
    assert_eq!(first.datetime.len(), 20);
    assert_eq!(first.nr_db_servers, 1);
    let listed = catalog.list_backups(None).unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        catalog.list_backups(Some(&first.id)).unwrap(),
        vec![first.clone()]
    );
    // The same label within the same second is a conflict, not an overwrite.
    let again = catalog.create_backup(&request("first"));
    if let Err(e) = again {
        assert_eq!(e.num(), 7011);
    }
    catalog.delete_backup(&second.id).unwrap();
    for unknown in [second.id.as_str(), "nope", "../databases", ""] {
        assert_eq!(catalog.delete_backup(unknown).unwrap_err().num(), 7007);
        assert_eq!(catalog.restore_backup(unknown).unwrap_err().num(), 7007);
        assert_eq!(catalog.list_backups(Some(unknown)).unwrap_err().num(), 7007);
    }
    let bad = catalog.create_backup(&request("a/b")).unwrap_err();
    assert_eq!(bad.num(), 10);
    assert!(dir.path().join("databases").exists());
    assert!(catalog.list_backups(Some(&first.id)).is_ok());
}

#[test]
fn handles_from_before_a_restore_answer_errors_not_data() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = common::collection(&catalog, "c");
    c.insert(json!({"_key": "k", "v": 1}), &opts()).unwrap();
    let id = catalog.create_backup(&request("h")).unwrap().id;
    let discarded = c.update("k", json!({"v": 2}), &opts()).unwrap().rev;
    let system = catalog.database("_system").unwrap();
    catalog.restore_backup(&id).unwrap();
    assert_eq!(c.read("k").unwrap_err().num(), 30);
    assert_eq!(c.insert(json!({}), &opts()).unwrap_err().num(), 30);
    assert!(system.create_collection(create("z")).is_err());
    let fresh = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(common::read(&fresh, "k")["v"], 1);
    // No revision handed out before the restore comes again.
    let decode = |rev: &str| quince_model::rev::RevisionId::decode(rev).unwrap();
    let next = fresh.update("k", json!({"v": 3}), &opts()).unwrap().rev;
    assert!(decode(&next) > decode(&discarded));
}

#[test]
fn a_backup_that_does_not_open_leaves_the_state_before() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = common::collection(&catalog, "c");
    c.insert(json!({"_key": "k", "v": 1}), &opts()).unwrap();
    let id = catalog.create_backup(&request("damaged")).unwrap().id;
    c.update("k", json!({"v": 2}), &opts()).unwrap();
    let before = snapshot(&catalog);
    // Damage a parameter file of the backup (a copy: no live file shares it).
    let backup = dir.path().join("backups").join(&id).join("databases");
    let params = files_under(&backup)
        .into_iter()
        .find(|p| p.ends_with("parameter.json") && p.parent().unwrap() != backup)
        .unwrap();
    let mut bytes = std::fs::read(&params).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    std::fs::write(&params, bytes).unwrap();

    let failure = catalog.restore_backup(&id).unwrap_err();
    assert_eq!(failure.num(), 7002, "{failure:?}");
    assert_eq!(snapshot(&catalog), before);
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    c.insert(json!({"_key": "after"}), &opts()).unwrap();
    // Nothing was deleted: the backup, the state before (restored) and the damaged state.
    assert_eq!(catalog.list_backups(None).unwrap().len(), 3);
    catalog.shutdown().unwrap();
    drop(catalog);
    let catalog = open_os(dir.path());
    let c = catalog
        .database("_system")
        .unwrap()
        .collection("c")
        .unwrap();
    assert_eq!(common::read(&c, "k")["v"], 2);
    assert!(c.read("after").is_ok());
}

/// Schema changes racing a restore: each either lands in the state before the restore (kept
/// as the `previous` backup) or is refused, and never writes into the restored state. An
/// index build that checked "open" before the restore used to finish after the swap and
/// rewrite the restored collection's parameter file (its name and indexes, seen after a
/// restart), and a database create waiting for the catalog's lock took an id from the state
/// before and wrote into the restored one.
#[test]
fn schema_changes_racing_a_restore_never_write_into_the_restored_state() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = common::collection(&catalog, "c");
    let docs: Vec<_> = (0..20_000)
        .map(|i| json!({"v": i, "s": "x".repeat(20)}))
        .collect();
    for chunk in docs.chunks(2_000) {
        for doc in chunk {
            c.insert(doc.clone(), &opts()).unwrap();
        }
    }
    let id = catalog.create_backup(&request("race")).unwrap().id;
    for round in 0..4u64 {
        let system = catalog.database("_system").unwrap();
        let renamed = format!("renamed{round}");
        let c = system.rename_collection("c", &renamed).unwrap();
        let indexer = {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                c.create_index(&json!({"type": "persistent", "fields": ["v"]}))
                    .map(|_| ())
            })
        };
        let creator = {
            let catalog = Arc::clone(&catalog);
            std::thread::spawn(move || catalog.create_database(&format!("db{round}")).map(|_| ()))
        };
        std::thread::sleep(Duration::from_millis(round * 5));
        catalog.restore_backup(&id).unwrap();
        let (indexed, created) = (indexer.join().unwrap(), creator.join().unwrap());
        if let Err(e) = &indexed {
            assert_eq!(e.num(), 30, "{e}");
        }
        // A database created before the restore is gone with that state; one created after
        // it is a working database of the restored state.
        let name = format!("db{round}");
        if let Some(database) = catalog.database(&name) {
            assert!(created.is_ok());
            database.create_collection(create("x")).unwrap();
            catalog.drop_database(&name).unwrap();
        } else if let Err(e) = &created {
            assert_eq!(e.num(), 30, "{e}");
        }
    }
    // What a restart reads from disk is exactly the backup's collection.
    let data = dir.path().to_path_buf();
    catalog.shutdown().unwrap();
    drop(catalog);
    let reopened = open_os(&data);
    let system = reopened.database("_system").unwrap();
    let names: Vec<String> = system.collections().iter().map(|c| c.name()).collect();
    assert_eq!(names, vec!["c".to_owned()]);
    let c = system.collection("c").unwrap();
    assert_eq!(c.count(), 20_000);
    assert_eq!(
        c.indexes().len(),
        1,
        "only the primary index, as in the backup"
    );
    let mut databases = reopened.database_names();
    databases.sort();
    assert_eq!(databases, vec!["_system".to_owned()]);
}
