//! Batched mutations (`Store::mutate_batch_deferred`): a batch writes exactly the files the same
//! mutations made one by one write, with one write per journal it lands in; its items see each
//! other's writes; a torn batch keeps a prefix after a crash; a failed append leaves none of its
//! records visible and poisons the store.

mod common;

use common::{dir, files_named, put, reopen, sim_store, value};
use proptest::prelude::*;
use quince_storage::io::SimFileIo;
use quince_storage::{Existing, Mutation, StorageError, Store};

/// One item of a generated batch.
#[derive(Clone, Debug)]
enum Item {
    /// Write a value of `len` bytes.
    Put { key: u8, len: usize },
    /// Remove the key (writes nothing when it is missing).
    Remove { key: u8 },
    /// Write the current value plus one byte (reads the current version).
    Append { key: u8 },
    /// The decision fails: nothing is written for this item.
    Fail { key: u8 },
    /// Write nothing.
    Keep { key: u8 },
}

impl Item {
    fn key(&self) -> Vec<u8> {
        let key = match self {
            Item::Put { key, .. }
            | Item::Remove { key }
            | Item::Append { key }
            | Item::Fail { key }
            | Item::Keep { key } => *key,
        };
        vec![b'k', key]
    }
}

fn item() -> impl Strategy<Value = Item> {
    prop_oneof![
        6 => (0u8..8, 0usize..300).prop_map(|(key, len)| Item::Put { key, len }),
        2 => (0u8..8).prop_map(|key| Item::Remove { key }),
        2 => (0u8..8).prop_map(|key| Item::Append { key }),
        1 => (0u8..8).prop_map(|key| Item::Fail { key }),
        1 => (0u8..8).prop_map(|key| Item::Keep { key }),
    ]
}

/// What the store decides for `item` at revision `rev`, given the current version.
fn decision(item: &Item, rev: u64, existing: Option<Existing<'_>>) -> Result<Mutation, String> {
    Ok(match item {
        Item::Put { len, .. } => Mutation::Put {
            rev,
            value: (0..*len).map(|i| (i as u64 + rev) as u8).collect(),
        },
        Item::Remove { .. } => Mutation::Remove { rev },
        Item::Append { .. } => {
            let mut value = match existing {
                Some(existing) => existing.value().map_err(|e| e.to_string())?,
                None => Vec::new(),
            };
            value.push(rev as u8);
            Mutation::Put { rev, value }
        }
        Item::Fail { .. } => return Err("refused".to_owned()),
        Item::Keep { .. } => Mutation::Keep,
    })
}

/// Error type of the test decisions: text, or the store's error.
#[derive(Debug, PartialEq)]
enum Failure {
    Refused(String),
    Storage(String),
}

impl From<StorageError> for Failure {
    fn from(e: StorageError) -> Failure {
        Failure::Storage(e.to_string())
    }
}

/// Runs `items` as one batch with revisions `first_rev..`; returns the outcomes (the revision
/// each item saw, if any) and the ticket.
fn run_batch(
    store: &Store,
    items: &[Item],
    first_rev: u64,
) -> (
    Vec<Result<Option<u64>, Failure>>,
    Option<quince_storage::WriteTicket>,
) {
    let keys: Vec<Vec<u8>> = items.iter().map(Item::key).collect();
    store.mutate_batch_deferred(&keys, |i, existing| {
        let seen = existing.as_ref().map(|e| e.rev);
        let mutation =
            decision(&items[i], first_rev + i as u64, existing).map_err(Failure::Refused)?;
        Ok((mutation, seen))
    })
}

/// Runs `items` one `mutate_deferred` each, with the same revisions.
fn run_singles(store: &Store, items: &[Item], first_rev: u64) -> Vec<Result<Option<u64>, Failure>> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            store
                .mutate_deferred(&item.key(), |existing| {
                    let seen = existing.as_ref().map(|e| e.rev);
                    let mutation =
                        decision(item, first_rev + i as u64, existing).map_err(Failure::Refused)?;
                    Ok((mutation, seen))
                })
                .map(|(seen, _ticket)| seen)
        })
        .collect()
}

/// Every file of the simulated file system, by path, with its bytes.
fn files(io: &SimFileIo) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut paths = io.paths();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| io.read_file(&p).map(|bytes| (p, bytes)))
        .collect()
}

fn contents(store: &Store) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let mut all = Vec::new();
    store
        .scan(&mut |k, rev, v| {
            all.push((k.to_vec(), rev, v.to_vec()));
            true
        })
        .unwrap();
    all.sort();
    all
}

const JOURNAL: u64 = 1024;

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Batches (of any sizes, across journal boundaries, with repeated keys) leave the same
    /// outcomes, the same index and byte-identical files as the same mutations one by one.
    #[test]
    fn batches_equal_single_mutations(
        items in proptest::collection::vec(item(), 0..120),
        cuts in proptest::collection::vec(1usize..40, 1..10),
    ) {
        let (io_batch, batched) = sim_store(JOURNAL);
        let (io_single, single) = sim_store(JOURNAL);
        let mut outcomes = Vec::new();
        let mut at = 0;
        for cut in cuts.iter().cycle() {
            if at >= items.len() {
                break;
            }
            let end = (at + cut).min(items.len());
            let (results, _ticket) = run_batch(&batched, &items[at..end], at as u64 + 1);
            outcomes.extend(results);
            at = end;
        }
        prop_assert_eq!(&outcomes, &run_singles(&single, &items, 1));
        prop_assert_eq!(contents(&batched), contents(&single));
        // The index's memory depends on its hash seed, which differs per store.
        let figures = |s: &Store| quince_storage::Figures { index_size: 0, ..s.figures() };
        prop_assert_eq!(figures(&batched), figures(&single));
        prop_assert_eq!(files(&io_batch), files(&io_single));
        // And both recover to the same state.
        drop(batched);
        drop(single);
        let batched = reopen(&io_batch.crash(7, true), JOURNAL).unwrap();
        let single = reopen(&io_single.crash(7, true), JOURNAL).unwrap();
        prop_assert_eq!(contents(&batched), contents(&single));
    }
}

fn puts(keys: std::ops::Range<u32>, len: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
    (
        keys.map(|i| format!("key{i:03}").into_bytes()).collect(),
        vec![b'v'; len],
    )
}

fn put_all(store: &Store, keys: &[Vec<u8>], value: &[u8]) -> Vec<Result<(), StorageError>> {
    let (results, ticket) = store.mutate_batch_deferred(keys, |i, _| {
        Ok::<_, StorageError>((
            Mutation::Put {
                rev: 100 + i as u64,
                value: value.to_vec(),
            },
            (),
        ))
    });
    if let Some(ticket) = ticket {
        let _ = ticket.wait();
    }
    results
}

#[test]
fn a_batch_is_one_write_per_journal_it_lands_in() {
    let (io, store) = sim_store(1 << 20);
    let (keys, body) = puts(0..500, 40);
    let before = io.stats().writes;
    let (results, ticket) = store.mutate_batch_deferred(&keys, |i, existing| {
        assert!(existing.is_none());
        Ok::<_, StorageError>((
            Mutation::Put {
                rev: 1 + i as u64,
                value: body.clone(),
            },
            (),
        ))
    });
    // A new store has no journal (and no spare yet): the first write starts it (its header,
    // in the page cache; the manifest names it later, off the write path), then the whole
    // batch is one append.
    assert_eq!(
        io.stats().writes - before,
        2,
        "the journal's header, one append for the whole batch"
    );
    assert!(results.iter().all(Result::is_ok));
    assert_eq!(store.len(), 500);
    // The ticket of the newest record covers all of them.
    ticket.unwrap().wait().unwrap();
    let store = {
        drop(store);
        reopen(&io.crash(3, false), 1 << 20).unwrap()
    };
    assert_eq!(store.len(), 500);
    assert_eq!(value(&store, b"key499"), Some(body));
}

#[test]
fn a_batch_larger_than_a_journal_spans_journals_with_one_write_each() {
    let (io, store) = sim_store(4096);
    // Records of 80 bytes (32 prefix + 6 key + 40 value, padded): about 50 per journal.
    let (keys, body) = puts(0..200, 40);
    let before = io.stats();
    let results = put_all(&store, &keys, &body);
    assert!(results.iter().all(Result::is_ok));
    let writes = io.stats().writes - before.writes;
    // The seals handed off by the writer finish in the maintenance pass.
    store.maintain().unwrap();
    let seals = store.stats().seals;
    assert!(
        seals >= 3,
        "200 records of 80 bytes fill more than 3 journals of 4 KiB"
    );
    // Per journal: its header, one append; per seal: a footer; and the manifest the ticket's
    // round wrote to name them. (No spare was ready: the writer created each journal in the
    // page cache; the round made them durable and named them before it answered the ticket.)
    assert_eq!(writes, 2 * (seals + 1) + seals + 1);
    assert_eq!(store.len(), 200);
    // The active journal and the spare `maintain` prepared.
    assert_eq!(files_named(&io, &dir(), "journal-").len(), 2);
    store.check_consistency().unwrap();
    for key in &keys {
        assert_eq!(value(&store, key).as_deref(), Some(&body[..]));
    }
    drop(store);
    let store = reopen(&io.crash(1, false), 4096).unwrap();
    assert_eq!(store.len(), 200);
}

#[test]
fn a_torn_batch_keeps_a_prefix_after_a_crash() {
    for seed in 0..20u64 {
        let (io, store) = sim_store(1 << 20);
        put(&store, b"before", 1, b"synced", true).unwrap();
        let (keys, body) = puts(0..10, 100);
        // Tear the append in the middle of the sixth record (records are 144 bytes).
        io.tear_next_write(5 * 144 + 60);
        let results = put_all(&store, &keys, &body);
        assert!(
            results.iter().all(Result::is_err),
            "every item of the failed append fails"
        );
        assert!(store.poisoned().is_some());
        for key in &keys {
            assert_eq!(
                value(&store, key),
                None,
                "nothing of a failed append is visible"
            );
        }
        drop(store);
        let store = reopen(&io.crash(seed, true), 1 << 20).unwrap();
        assert_eq!(value(&store, b"before"), Some(b"synced".to_vec()));
        let survived: Vec<bool> = keys.iter().map(|k| value(&store, k).is_some()).collect();
        let prefix = survived.iter().take_while(|s| **s).count();
        assert!(prefix <= 5, "the torn sixth record never survives");
        assert!(
            survived[prefix..].iter().all(|s| !s),
            "seed {seed}: a prefix survives, not {survived:?}"
        );
    }
}

#[test]
fn a_failed_append_shows_nothing_and_poisons_the_store() {
    let (io, store) = sim_store(1 << 20);
    put(&store, b"key000", 1, b"old", false).unwrap();
    let (keys, body) = puts(0..20, 100);
    io.set_space_left(Some(500));
    let results = put_all(&store, &keys, &body);
    assert_eq!(results.len(), 20);
    for result in &results {
        assert!(
            matches!(result, Err(StorageError::Full { .. })),
            "{result:?}"
        );
    }
    assert!(store.poisoned().is_some());
    assert_eq!(value(&store, b"key000"), Some(b"old".to_vec()));
    assert_eq!(store.len(), 1);
    // Later batches are refused up front, item by item.
    let results = put_all(&store, &keys[..3], &body);
    assert!(results
        .iter()
        .all(|r| matches!(r, Err(StorageError::Poisoned { .. }))));
}

#[test]
fn items_see_earlier_items_of_their_batch() {
    let (_io, store) = sim_store(1 << 20);
    let keys: Vec<&[u8]> = vec![b"a", b"b", b"a", b"a", b"b"];
    let (results, _) = store.mutate_batch_deferred(&keys, |i, existing| {
        let seen = existing.map(|e| (e.rev, e.value().unwrap()));
        let rev = 10 + i as u64;
        Ok::<_, StorageError>((
            Mutation::Put {
                rev,
                value: vec![i as u8],
            },
            seen,
        ))
    });
    let seen: Vec<_> = results.into_iter().map(Result::unwrap).collect();
    assert_eq!(
        seen,
        vec![
            None,
            None,
            Some((10, vec![0])),
            Some((12, vec![2])),
            Some((11, vec![1]))
        ]
    );
    assert_eq!(value(&store, b"a"), Some(vec![3]));
    assert_eq!(store.rev_of(b"b"), Some(14));
}

#[test]
fn a_record_too_large_fails_alone() {
    let (_io, store) = sim_store(1 << 20);
    let keys: Vec<Vec<u8>> = vec![b"ok1".to_vec(), vec![b'x'; 70 * 1024], b"ok2".to_vec()];
    let (results, ticket) = store.mutate_batch_deferred(&keys, |i, _| {
        Ok::<_, StorageError>((
            Mutation::Put {
                rev: 1 + i as u64,
                value: b"v".to_vec(),
            },
            (),
        ))
    });
    assert!(results[0].is_ok() && results[2].is_ok());
    assert!(matches!(
        results[1],
        Err(StorageError::RecordTooLarge { .. })
    ));
    assert!(ticket.is_some());
    assert_eq!(store.len(), 2);
    assert!(store.poisoned().is_none());
}
