//! The simulated stores `journal_recovery` opens: two fixed directories on [`SimFileIo`] whose
//! files the target replaces with fuzz input, and the checks run on a store that opened.
//!
//! What it is: [`Fixtures`] — a *fresh* store (its manifest and a journal with one record) and
//! a *sealed* store (a datafile with its hint, plus a journal and a manifest naming both), each
//! built once by the engine itself (the names of their files are the engine's) and
//! copied per input with [`SimFileIo::crash`] (which keeps exactly the durable state);
//! [`replace_file`]; [`written`], every version the files of a store hold; and [`exercise`],
//! which reads every key of an opened store, writes once, closes and reopens it.
//!
//! What it is not: a crash test. The simulated disk injects no faults here; the fuzz input is
//! the damage.
//!
//! Invariants: the fixtures are built by the public `Store` API only, so they are what the
//! engine really writes; a copy never shares state with the fixture it came from.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use quince_storage::fuzzing::{decode, RecordType};
use quince_storage::io::{FileIo, SimFileIo};
use quince_storage::{CompactionPolicy, Mutation, StorageError, Store, StoreOptions};

/// The directory of every fuzzed store.
pub const DIR: &str = "/data/store";

/// The maximal journal size of the fixtures (small, so writes after opening can seal).
pub const JOURNAL_SIZE: u64 = 64 << 10;

/// The path of `name` in [`DIR`].
pub fn path(name: &str) -> PathBuf {
    Path::new(DIR).join(name)
}

/// The options every fuzzed store opens with; compaction never runs (no `maintain` calls).
pub fn options(salvage: bool) -> StoreOptions {
    StoreOptions {
        journal_size: JOURNAL_SIZE,
        sync_interval: Duration::from_millis(100),
        compaction: CompactionPolicy {
            dead_share_min: 0.5,
            dead_bytes_min: 1 << 30,
            interval: Duration::from_secs(3600),
        },
        salvage,
    }
}

/// Writes `value` at `rev` (synced).
pub fn put(store: &Store, key: &[u8], rev: u64, value: &[u8]) -> Result<(), StorageError> {
    store.mutate(key, true, |_| {
        Ok::<_, StorageError>((
            Mutation::Put {
                rev,
                value: value.to_vec(),
            },
            (),
        ))
    })
}

/// Removes `key` at `rev` (synced).
pub fn remove(store: &Store, key: &[u8], rev: u64) -> Result<(), StorageError> {
    store.mutate(key, true, |_| {
        Ok::<_, StorageError>((Mutation::Remove { rev }, ()))
    })
}

/// The two fixtures, built once per process, with the names the engine gave their files.
pub struct Fixtures {
    /// A store that took one write and was closed: manifest and a journal.
    pub fresh: SimFileIo,
    /// The fresh store's journal (`journal-<fid>.db`).
    pub fresh_journal: String,
    /// A store with one sealed datafile (with its hint) and a journal holding records.
    pub sealed: SimFileIo,
    /// The sealed store's datafile (`datafile-<fid>.db`).
    pub sealed_datafile: String,
    /// The sealed datafile's hint (`datafile-<fid>.hint`).
    pub sealed_hint: String,
    /// The sealed store's journal.
    pub sealed_journal: String,
}

/// The fixtures of this process.
pub fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Fixtures> = OnceLock::new();
    FIXTURES.get_or_init(|| {
        let fresh = build_fresh();
        let sealed = build_sealed();
        Fixtures {
            fresh_journal: only_file(&fresh, "journal-", ".db"),
            sealed_datafile: only_file(&sealed, "datafile-", ".db"),
            sealed_hint: only_file(&sealed, "datafile-", ".hint"),
            sealed_journal: only_file(&sealed, "journal-", ".db"),
            fresh,
            sealed,
        }
    })
}

/// The one file of [`DIR`] named `<prefix>…<suffix>`.
fn only_file(io: &SimFileIo, prefix: &str, suffix: &str) -> String {
    let names: Vec<String> = io
        .list_dir(Path::new(DIR))
        .expect("the fixture's directory")
        .into_iter()
        .filter_map(|n| n.to_str().map(str::to_owned))
        .filter(|n| n.starts_with(prefix) && n.ends_with(suffix))
        .collect();
    match names.as_slice() {
        [name] => name.clone(),
        _ => panic!("one {prefix}*{suffix} in the fixture, found {names:?}"),
    }
}

fn create() -> (SimFileIo, Store) {
    let io = SimFileIo::new();
    let store = Store::create(Arc::new(io.clone()), Path::new(DIR), options(false))
        .expect("a store is created on an empty simulated disk");
    (io, store)
}

fn build_fresh() -> SimFileIo {
    let (io, store) = create();
    // A write, so that the store has a journal (journals start with the first write).
    put(&store, b"first", 1, b"{}").expect("put");
    store.close().expect("a fresh store closes");
    drop(store);
    io.crash(0, false)
}

fn build_sealed() -> SimFileIo {
    let (io, store) = create();
    put(&store, b"alpha", 1, b"{\"a\":1}").expect("put");
    put(&store, b"beta", 2, b"{\"b\":2}").expect("put");
    remove(&store, b"alpha", 3).expect("remove");
    store
        .write_meta(b"meta")
        .expect("meta")
        .wait()
        .expect("meta synced");
    store.rotate().expect("the journal seals");
    put(&store, b"gamma", 4, b"{\"c\":3}").expect("put");
    put(&store, b"beta", 5, b"{\"b\":5}").expect("put");
    store.close().expect("the sealed fixture closes");
    drop(store);
    io.crash(0, false)
}

/// Replaces the file `name` of [`DIR`] with `bytes`, durably.
pub fn replace_file(io: &SimFileIo, name: &str, bytes: &[u8]) {
    let path = path(name);
    if io.exists(&path) {
        io.remove_file(&path).expect("remove on the simulated disk");
    }
    let handle = io.create_new(&path).expect("create on the simulated disk");
    handle
        .write_all_at(bytes, 0)
        .expect("write on the simulated disk");
    handle.sync_data().expect("sync on the simulated disk");
    drop(handle);
    io.sync_dir(Path::new(DIR))
        .expect("sync_dir on the simulated disk");
}

/// Opens the store of `io` in [`DIR`].
pub fn open(io: &SimFileIo, salvage: bool) -> Result<Store, StorageError> {
    Store::open(Arc::new(io.clone()), Path::new(DIR), options(salvage))
}

/// The most keys [`exercise`] reads back.
const KEYS_READ_MAX: usize = 4096;

/// The key [`exercise`] writes.
pub const WRITTEN_KEY: &[u8] = b"fuzz-written";

/// The value [`exercise`] writes.
const WRITTEN_VALUE: &[u8] = b"{\"written\":true}";

/// A version of a key: key, revision, value.
pub type Version = (Vec<u8>, u64, Vec<u8>);

/// Every document record that decodes at any offset of any file in [`DIR`]: what a store
/// opened on these files may serve. Every offset, not only the 8-byte grid records are written
/// on, so that nothing a hint could point at is missed.
pub fn written(io: &SimFileIo) -> HashSet<Version> {
    let mut versions = HashSet::new();
    let names = io.list_dir(Path::new(DIR)).unwrap_or_default();
    for name in names {
        let Some(bytes) = io.read_file(&Path::new(DIR).join(name)) else {
            continue;
        };
        for at in 0..bytes.len() {
            match decode(&bytes[at..]) {
                Ok(r) if r.kind == RecordType::Document => {
                    versions.insert((r.key.to_vec(), r.rev, r.value.to_vec()));
                }
                _ => {}
            }
        }
    }
    versions
}

/// What a store that opened on files holding the versions `written` must survive: reading
/// every key (by key and by scan), its figures and metadata, one write, a close, and a reopen.
/// Every version it serves must be one of `written` (recovery invents nothing), and the reopened
/// store must serve every version it served before, and the new write.
///
/// Reads may fail with a `StorageError` (a hint may name records that are not there; the
/// engine reports it as corruption when the key is read), but must not panic.
pub fn exercise(io: &SimFileIo, store: Store, salvage: bool, written: &HashSet<Version>) {
    let readable = read_back(&store, written);
    let figures = store.figures();
    let _ = (store.meta(), store.len());
    let rev = figures.last_tick.saturating_add(1);
    let wrote = put(&store, WRITTEN_KEY, rev, WRITTEN_VALUE).is_ok();
    let closed = store.close().is_ok();
    drop(store);
    if !(wrote && closed) {
        return;
    }
    let store = match open(io, salvage) {
        Ok(store) => store,
        Err(e) => panic!("a store that opened, took a write and closed cleanly reopens: {e}"),
    };
    for (key, rev, value) in readable {
        if key == WRITTEN_KEY {
            continue;
        }
        let now = store.get(&key);
        assert!(
            matches!(&now, Ok(Some(r)) if r.rev == rev && r.value == value),
            "{key:?} (rev {rev}) read back before the reopen, after it: {now:?}"
        );
    }
    let now = store.get(WRITTEN_KEY);
    assert!(
        matches!(&now, Ok(Some(r)) if r.rev == rev && r.value == WRITTEN_VALUE),
        "the synced write is lost after a clean close: {now:?}"
    );
    let _ = store.close();
}

/// Reads every indexed key (up to [`KEYS_READ_MAX`]) and scans the store; checks that what it
/// serves agrees with the index and was written; returns the versions read.
fn read_back(store: &Store, written: &HashSet<Version>) -> Vec<Version> {
    let mut keys: Vec<(Vec<u8>, u64)> = Vec::new();
    store.for_each_key(&mut |key, rev| {
        keys.push((key.to_vec(), rev));
        keys.len() < KEYS_READ_MAX
    });
    let mut readable = Vec::new();
    for (key, rev) in keys {
        if let Ok(Some(record)) = store.get(&key) {
            assert_eq!(record.rev, rev, "get and the index disagree on {key:?}");
            let version = (key, rev, record.value);
            assert!(
                written.contains(&version),
                "get served a version never written: {}",
                show(&version)
            );
            readable.push(version);
        }
    }
    let _ = store.scan(&mut |key, rev, value| {
        let version = (key.to_vec(), rev, value.to_vec());
        assert!(
            written.contains(&version),
            "a scan served a version never written: {}",
            show(&version)
        );
        true
    });
    readable
}

/// A version for a failure message: key and value as text where they are text.
fn show((key, rev, value): &Version) -> String {
    let (key, value) = (String::from_utf8_lossy(key), String::from_utf8_lossy(value));
    format!("key {key:?}, rev {rev}, value {value:?}")
}
