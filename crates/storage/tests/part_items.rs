//! The items of a one-store transaction group (`Store::part`, `commit`: how the database layer
//! writes a multi-document request) are decided exactly as the same mutations made one by one:
//! the same outcomes, the same contents, before and after a reopen; a record too large fails
//! alone; a failed append leaves none of the group visible and poisons the store. (Atomicity
//! across a crash, staged versions and oversized groups: `group_single.rs`.)

use crate::common;

use common::{put, reopen, sim_store, value};
use proptest::prelude::*;
use quince_storage::{Existing, Mutation, StorageError, Store};

/// One item of a generated part.
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

/// Runs `items` as one part with revisions `first_rev..`; returns the outcomes (the revision
/// each item saw, if any) and the ticket.
fn run_part(
    store: &Store,
    items: &[Item],
    first_rev: u64,
) -> (
    Vec<Result<Option<u64>, Failure>>,
    Option<quince_storage::WriteTicket>,
) {
    let keys: Vec<Vec<u8>> = items.iter().map(Item::key).collect();
    common::commit_part(store, &keys, |i, existing| {
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

    /// Parts (of any sizes, across journal boundaries, with repeated keys) leave the same
    /// outcomes and the same contents as the same mutations one by one, also after a reopen.
    #[test]
    fn parts_equal_single_mutations(
        items in proptest::collection::vec(item(), 0..120),
        cuts in proptest::collection::vec(1usize..40, 1..10),
    ) {
        let (io_part, parted) = sim_store(JOURNAL);
        let (io_single, single) = sim_store(JOURNAL);
        let mut outcomes = Vec::new();
        let mut at = 0;
        for cut in cuts.iter().cycle() {
            if at >= items.len() {
                break;
            }
            let end = (at + cut).min(items.len());
            let (results, _ticket) = run_part(&parted, &items[at..end], at as u64 + 1);
            outcomes.extend(results);
            at = end;
        }
        prop_assert_eq!(&outcomes, &run_singles(&single, &items, 1));
        prop_assert_eq!(contents(&parted), contents(&single));
        prop_assert_eq!(parted.len(), single.len());
        // And both recover to the same state (the groups are whole: nothing unsynced is lost
        // when every unsynced byte is kept).
        drop(parted);
        drop(single);
        let parted = reopen(&io_part.crash(7, true), JOURNAL).unwrap();
        let single = reopen(&io_single.crash(7, true), JOURNAL).unwrap();
        prop_assert_eq!(contents(&parted), contents(&single));
    }
}

fn puts(keys: std::ops::Range<u32>, len: usize) -> (Vec<Vec<u8>>, Vec<u8>) {
    (
        keys.map(|i| format!("key{i:03}").into_bytes()).collect(),
        vec![b'v'; len],
    )
}

fn put_all(store: &Store, keys: &[Vec<u8>], value: &[u8]) -> Vec<Result<(), StorageError>> {
    let (results, ticket) = common::commit_part(store, keys, |i, _| {
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
    // Later parts are refused up front, item by item.
    let results = put_all(&store, &keys[..3], &body);
    assert!(results
        .iter()
        .all(|r| matches!(r, Err(StorageError::Poisoned { .. }))));
}

#[test]
fn a_record_too_large_fails_alone() {
    let (_io, store) = sim_store(1 << 20);
    let keys: Vec<Vec<u8>> = vec![b"ok1".to_vec(), vec![b'x'; 70 * 1024], b"ok2".to_vec()];
    let (results, ticket) = common::commit_part(&store, &keys, |i, _| {
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
