//! Property test: transactions over random subsets of several stores on one `SimFileIo`, with
//! plain writes, maintenance passes, rotations, compactions and failed fsyncs in between, and a
//! power cut at a random mutating call (`common::crashing`), which may fall inside a commit:
//! between a part's append and its fsync, between the parts, inside a seal.
//!
//! The oracle keeps each store's history as a list of *units*: a plain write, or one
//! transaction's part in that store (a part always stages a put of the store's key `t` with the
//! transaction's revision, so every unit changes the store's state). After the crash every
//! store is opened, `settle`d (the stores it cut are opened again, and settled again), and
//! checked:
//! - per store, what survives is the state after a prefix of its history (so a part is whole
//!   or absent in its store), and that prefix includes every unit acknowledged before the
//!   crash: a plain write or a one-store transaction whose ticket was waited, a transaction of
//!   several stores whose commit returned `Ok`;
//! - across stores, every transaction is whole or absent: there is a choice of those prefixes
//!   in which each transaction of several stores is included in all of its stores or in none,
//!   and in which each store's `newest_commit` is the transaction of the last commit point
//!   it keeps (so compaction kept the newest commit record).
//!
//! A write or commit that failed after reaching a journal poisons its stores; its units join
//! the history (they may or may not have survived), and nothing follows them in those stores.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use proptest::prelude::*;
use quince_storage::io::SimFileIo;
use quince_storage::{commit, settle, Mutation, StorageError, Store};

use common::crashing::CrashPlan;

const STORES: usize = 3;
const JOURNAL: u64 = 2048;

type State = BTreeMap<Vec<u8>, (u64, Vec<u8>)>;

/// A put (`Some(len)`) or a removal (`None`) of key `k<n>`.
type Item = (u8, Option<usize>);

#[derive(Clone, Debug)]
enum Op {
    /// Stores whose bit is set in `mask` take part with `items[store]` (plus their `t` key);
    /// stores in `idle` but not in `mask` take a part that stages nothing.
    Trx {
        mask: u8,
        idle: u8,
        items: Vec<Vec<Item>>,
        wait: bool,
    },
    Write {
        store: usize,
        item: Item,
        sync: bool,
    },
    Maintain {
        store: usize,
    },
    Rotate {
        store: usize,
    },
    Compact {
        store: usize,
    },
    FailSync {
        after: u64,
    },
}

fn item() -> impl Strategy<Value = Item> {
    (0u8..6, proptest::option::weighted(0.8, 0usize..120))
}

fn op() -> impl Strategy<Value = Op> {
    let store = 0..STORES;
    prop_oneof![
        8 => (1u8..(1 << STORES), 0u8..(1 << STORES),
              proptest::collection::vec(proptest::collection::vec(item(), 0..5), STORES),
              any::<bool>())
            .prop_map(|(mask, idle, items, wait)| Op::Trx { mask, idle, items, wait }),
        4 => (store.clone(), item(), any::<bool>())
            .prop_map(|(store, item, sync)| Op::Write { store, item, sync }),
        1 => store.clone().prop_map(|store| Op::Maintain { store }),
        1 => store.clone().prop_map(|store| Op::Rotate { store }),
        1 => store.prop_map(|store| Op::Compact { store }),
        1 => (0u64..6).prop_map(|after| Op::FailSync { after }),
    ]
}

/// One change of a store's state.
#[derive(Clone, Debug)]
enum Change {
    Put(Vec<u8>, u64, Vec<u8>),
    Remove(Vec<u8>),
}

/// A unit of a store's history: a plain write, or a transaction's part.
#[derive(Clone, Debug)]
struct Unit {
    changes: Vec<Change>,
    /// The transaction, when it spans several stores.
    trx: Option<u64>,
    /// The part is its transaction's commit point (it holds the commit record).
    commit_point: bool,
}

fn apply(state: &mut State, unit: &Unit) {
    for change in &unit.changes {
        match change {
            Change::Put(k, rev, v) => {
                state.insert(k.clone(), (*rev, v.clone()));
            }
            Change::Remove(k) => {
                state.remove(k);
            }
        }
    }
}

fn dir(store: usize) -> PathBuf {
    PathBuf::from(format!("/data/s{store}"))
}

fn value_of(rev: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u64 + rev) as u8).collect()
}

/// The workload: runs `ops` until the crash point passed; returns each store's history.
fn workload(plan: &Arc<CrashPlan>, ops: &[Op]) -> Vec<Vec<Unit>> {
    let stores: Vec<Store> = (0..STORES)
        .map(|s| common::store_at(plan.io(), &dir(s), JOURNAL, true).unwrap())
        .collect();
    plan.arm();
    let mut history: Vec<Vec<Unit>> = vec![Vec::new(); STORES];
    let mut rev = 0u64;
    for op in ops {
        if plan.caught() {
            break;
        }
        rev += 1;
        match op {
            Op::Trx {
                mask,
                idle,
                items,
                wait,
            } => {
                let trx = rev;
                let members: Vec<usize> = (0..STORES).filter(|s| mask & (1 << s) != 0).collect();
                let mut parts = Vec::new();
                let mut units = Vec::new();
                for s in 0..STORES {
                    let busy = members.contains(&s);
                    if !busy && idle & (1 << s) == 0 {
                        continue;
                    }
                    let mut part = stores[s].part(s as u64 + 1);
                    let mut changes = Vec::new();
                    if busy {
                        for (i, (key, len)) in items[s].iter().enumerate() {
                            let key = vec![b'k', *key];
                            let item_rev = rev * 100 + i as u64;
                            let mut change = None;
                            let staged = part.mutate(&key, |existing| {
                                let mutation = match len {
                                    Some(len) => {
                                        let value = value_of(item_rev, *len);
                                        change =
                                            Some(Change::Put(key.clone(), item_rev, value.clone()));
                                        Mutation::Put {
                                            rev: item_rev,
                                            value,
                                        }
                                    }
                                    None => {
                                        if existing.is_some() {
                                            change = Some(Change::Remove(key.clone()));
                                        }
                                        Mutation::Remove { rev: item_rev }
                                    }
                                };
                                Ok::<_, StorageError>((mutation, ()))
                            });
                            if let (Ok(()), Some(change)) = (staged, change) {
                                changes.push(change);
                            }
                        }
                        let t_rev = rev * 100 + 99;
                        let value = trx.to_le_bytes().to_vec();
                        if part
                            .mutate(b"t", |_| {
                                Ok::<_, StorageError>((
                                    Mutation::Put {
                                        rev: t_rev,
                                        value: value.clone(),
                                    },
                                    (),
                                ))
                            })
                            .is_ok()
                        {
                            changes.push(Change::Put(b"t".to_vec(), t_rev, value));
                        }
                    } else {
                        part.mutate(b"t", |_| Ok::<_, StorageError>((Mutation::Keep, ())))
                            .unwrap_or(());
                    }
                    if !part.is_empty() {
                        units.push((s, changes));
                    }
                    parts.push(part);
                }
                let several = units.len() > 1;
                let commit_point = units.last().map(|(s, _)| *s);
                let unit = |s: usize, changes: Vec<Change>| Unit {
                    changes,
                    trx: several.then_some(trx),
                    commit_point: several && Some(s) == commit_point,
                };
                match commit(trx, parts) {
                    Ok(tickets) => {
                        let mut waited = Vec::new();
                        for (s, changes) in units {
                            history[s].push(unit(s, changes));
                            waited.push((s, history[s].len()));
                        }
                        // Several stores: durable on return. One: when its ticket is.
                        let durable = several
                            || (*wait
                                && tickets
                                    .into_iter()
                                    .flatten()
                                    .all(|ticket| ticket.wait().is_ok()));
                        if durable {
                            for (s, upto) in waited {
                                plan.ack(s, upto);
                            }
                        }
                    }
                    Err(_) => {
                        // Reached a journal only if it poisoned the store.
                        for (s, changes) in units {
                            if stores[s].poisoned().is_some() {
                                history[s].push(unit(s, changes));
                            }
                        }
                    }
                }
            }
            Op::Write { store, item, sync } => {
                let s = *store;
                let key = vec![b'k', item.0];
                let (mutation, change) = match item.1 {
                    Some(len) => {
                        let value = value_of(rev * 100, len);
                        (
                            Mutation::Put {
                                rev: rev * 100,
                                value: value.clone(),
                            },
                            Change::Put(key.clone(), rev * 100, value),
                        )
                    }
                    None if stores[s].rev_of(&key).is_some() => (
                        Mutation::Remove { rev: rev * 100 },
                        Change::Remove(key.clone()),
                    ),
                    None => continue,
                };
                let written =
                    stores[s].mutate_deferred(&key, |_| Ok::<_, StorageError>((mutation, ())));
                match written {
                    Ok(((), Some(ticket))) => {
                        history[s].push(Unit {
                            changes: vec![change],
                            trx: None,
                            commit_point: false,
                        });
                        if *sync && ticket.wait().is_ok() {
                            plan.ack(s, history[s].len());
                        }
                    }
                    Ok(((), None)) => unreachable!("a put or a removal of a live key writes"),
                    Err(_) if stores[s].poisoned().is_some() => history[s].push(Unit {
                        changes: vec![change],
                        trx: None,
                        commit_point: false,
                    }),
                    Err(_) => {}
                }
            }
            Op::Maintain { store } => {
                let _ = stores[*store].maintain();
            }
            Op::Rotate { store } => {
                if stores[*store].rotate().is_ok() {
                    plan.ack(*store, history[*store].len());
                }
            }
            Op::Compact { store } => {
                let _ = stores[*store].compact();
            }
            Op::FailSync { after } => plan.sim().fail_sync_after(*after),
        }
    }
    history
}

/// Opens every store of `image`, settles them until nothing is cut, and returns what each
/// holds, with its newest commit.
fn recover(image: &SimFileIo) -> Result<Vec<(State, u64)>, TestCaseError> {
    let open = |s: usize| {
        common::store_at(Arc::new(image.clone()), &dir(s), JOURNAL, false)
            .map_err(|e| TestCaseError::fail(format!("store {s}: {e}")))
    };
    let mut stores: Vec<Store> = (0..STORES).map(open).collect::<Result<_, _>>()?;
    for round in 0.. {
        let listed: Vec<(u64, &Store)> = stores
            .iter()
            .enumerate()
            .map(|(s, store)| (s as u64 + 1, store))
            .collect();
        let cut = settle(&listed);
        if cut.is_empty() {
            break;
        }
        prop_assert!(round < STORES, "settling does not end: {:?}", cut);
        for id in cut {
            let s = id as usize - 1;
            stores[s] = open(s)?;
        }
    }
    let mut states = Vec::new();
    for (s, store) in stores.iter().enumerate() {
        store
            .check_consistency()
            .map_err(|e| TestCaseError::fail(format!("store {s}: {e}")))?;
        states.push((common::contents(store), store.newest_commit()));
    }
    Ok(states)
}

/// The prefixes of `history` (at least `acked` units long) whose state is `state`.
fn prefixes(history: &[Unit], acked: usize, state: &State) -> Vec<usize> {
    let mut current = State::new();
    let mut found = Vec::new();
    for j in 0..=history.len() {
        if j > 0 {
            apply(&mut current, &history[j - 1]);
        }
        if j >= acked && current == *state {
            found.push(j);
        }
    }
    found
}

/// The transaction of the last commit point among the first `len` units (0: none).
fn newest_commit(history: &[Unit], len: usize) -> u64 {
    history[..len]
        .iter()
        .filter(|u| u.commit_point)
        .filter_map(|u| u.trx)
        .max()
        .unwrap_or(0)
}

/// True when, choosing one of `candidates[s]` per store, every transaction of several stores
/// is included in all of its stores or in none (and each store's newest commit is that of the
/// last commit point it keeps).
fn atomic(
    histories: &[Vec<Unit>],
    commits: &[u64],
    candidates: &[Vec<usize>],
    chosen: &mut Vec<usize>,
) -> bool {
    if chosen.len() == candidates.len() {
        let newest =
            (0..chosen.len()).all(|s| newest_commit(&histories[s], chosen[s]) == commits[s]);
        if !newest {
            return false;
        }
        let mut included: BTreeMap<u64, bool> = BTreeMap::new();
        for (s, history) in histories.iter().enumerate() {
            for (i, unit) in history.iter().enumerate() {
                let Some(trx) = unit.trx else { continue };
                let here = i < chosen[s];
                if *included.entry(trx).or_insert(here) != here {
                    return false;
                }
            }
        }
        return true;
    }
    for &j in &candidates[chosen.len()] {
        chosen.push(j);
        if atomic(histories, commits, candidates, chosen) {
            return true;
        }
        chosen.pop();
    }
    false
}

fn run(ops: Vec<Op>, at: u64, seed: u64, keep_unsynced: bool) -> Result<(), TestCaseError> {
    let sim = SimFileIo::new();
    let plan = CrashPlan::new(&sim, at, seed, keep_unsynced, STORES);
    let histories = workload(&plan, &ops);
    let (image, acked) = plan.take();
    let (states, commits): (Vec<State>, Vec<u64>) = recover(&image)?.into_iter().unzip();
    let mut candidates = Vec::new();
    for s in 0..STORES {
        let found = prefixes(&histories[s], acked[s], &states[s]);
        prop_assert!(
            !found.is_empty(),
            "store {}: {:?} is no prefix of at least {} units of {:?}",
            s,
            states[s],
            acked[s],
            histories[s]
        );
        candidates.push(found);
    }
    prop_assert!(
        atomic(&histories, &commits, &candidates, &mut Vec::new()),
        "a transaction is in some of its stores only, or a newest commit {:?} is wrong: \
         prefixes {:?} of {:?}",
        commits,
        candidates,
        histories
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn transactions_are_whole_or_absent_across_stores_after_a_crash(
        ops in proptest::collection::vec(op(), 1..40),
        at in 0u64..100,
        seed: u64,
        keep_unsynced: bool,
    ) {
        run(ops, at, seed, keep_unsynced)?;
    }
}
