//! The primary index against a `HashMap` model: every operation (insert, insert_if_newer,
//! remove, replace_if, retain, reserve, clear) answers as the model does, and get, len,
//! for_each and for_each_location agree with it afterwards. Keys range from empty to longer
//! than an arena entry holds, so free-list reuse, arena recopying and the long-key side map are
//! all exercised.

use std::collections::HashMap;

use proptest::prelude::*;
use quince_storage::index::{Location, PrimaryIndex};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

type Model = HashMap<Vec<u8>, Location>;

#[derive(Clone, Debug)]
enum Op {
    Insert(usize, Location),
    InsertIfNewer(usize, Location),
    Remove(usize),
    /// Compare-and-swap: `true` uses the model's current location as the expected one (the
    /// swap must happen), `false` a different one (it must not).
    ReplaceIf(usize, bool, Location),
    Get(usize),
    /// Keeps entries whose `seq` is not a multiple of the modulus.
    Retain(u64),
    Reserve(usize),
    Clear,
}

/// A pool of keys: lengths 0, 1, 8, 40, 254, 255 (the longest arena key), 256 and 1000 (the
/// side map), so equal-length keys share free lists.
fn key_pool(count: usize) -> Vec<Vec<u8>> {
    let lengths = [0usize, 1, 8, 8, 8, 40, 40, 254, 255, 256, 1000];
    let mut keys: Vec<Vec<u8>> = (0..count)
        .map(|i| {
            let len = lengths[i % lengths.len()];
            let mut key = format!("{i}-").into_bytes();
            key.resize(len.max(key.len()), b'k');
            key
        })
        .collect();
    // One genuinely empty key.
    keys[0].clear();
    keys.sort();
    keys.dedup();
    keys
}

fn location_strategy() -> impl Strategy<Value = Location> {
    (
        1u32..5,
        0u32..1 << 20,
        0u64..1 << 48,
        0u64..1_000,
        any::<u64>(),
    )
        .prop_map(|(fid, size, offset, seq, rev)| Location {
            fid,
            size,
            offset,
            seq,
            rev,
        })
}

fn op_strategy(keys: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..keys, location_strategy()).prop_map(|(k, l)| Op::Insert(k, l)),
        3 => (0..keys, location_strategy()).prop_map(|(k, l)| Op::InsertIfNewer(k, l)),
        5 => (0..keys).prop_map(Op::Remove),
        3 => (0..keys, any::<bool>(), location_strategy())
            .prop_map(|(k, hit, l)| Op::ReplaceIf(k, hit, l)),
        3 => (0..keys).prop_map(Op::Get),
        1 => (2u64..5).prop_map(Op::Retain),
        1 => (0usize..500).prop_map(Op::Reserve),
        1 => Just(Op::Clear),
    ]
}

/// Applies `op` to both and asserts they answer alike.
fn apply(index: &PrimaryIndex, model: &mut Model, keys: &[Vec<u8>], op: &Op) {
    match op {
        Op::Insert(k, l) => {
            let key = &keys[*k];
            assert_eq!(index.insert(key, *l), model.insert(key.clone(), *l));
        }
        Op::InsertIfNewer(k, l) => {
            let key = &keys[*k];
            index.insert_if_newer(key, *l);
            let slot = model.entry(key.clone()).or_insert(*l);
            if (l.seq, l.fid) > (slot.seq, slot.fid) {
                *slot = *l;
            }
        }
        Op::Remove(k) => {
            let key = &keys[*k];
            assert_eq!(index.remove(key), model.remove(key));
        }
        Op::ReplaceIf(k, hit, new) => {
            let key = &keys[*k];
            let current = model.get(key).copied();
            let expected = match (current, hit) {
                (Some(l), true) => l,
                (Some(l), false) => Location {
                    seq: l.seq + 1,
                    ..l
                },
                (None, _) => *new,
            };
            let mut calls = 0;
            let swapped = index.replace_if(key, expected, *new, &mut || calls += 1);
            let should = current == Some(expected);
            assert_eq!(swapped, should, "replace_if of {key:?}");
            assert_eq!(calls, usize::from(should));
            if should {
                model.insert(key.clone(), *new);
            }
        }
        Op::Get(k) => {
            let key = &keys[*k];
            assert_eq!(index.get(key), model.get(key).copied());
        }
        Op::Retain(modulus) => {
            let mut asked = 0;
            index.retain(&mut |key, l| {
                assert_eq!(
                    model.get(key),
                    Some(l),
                    "retain offered an entry the model lacks"
                );
                asked += 1;
                l.seq % modulus != 0
            });
            assert_eq!(asked, model.len());
            model.retain(|_, l| l.seq % modulus != 0);
        }
        Op::Reserve(n) => index.reserve(*n),
        Op::Clear => {
            index.clear();
            model.clear();
        }
    }
}

/// Asserts the index holds exactly the model, through every reading interface.
fn assert_same(index: &PrimaryIndex, model: &Model, keys: &[Vec<u8>]) {
    assert_eq!(index.len(), model.len() as u64);
    for key in keys {
        assert_eq!(index.get(key), model.get(key).copied(), "get {key:?}");
    }
    let mut seen = Model::new();
    index.for_each(&mut |key, l| {
        assert!(seen.insert(key.to_vec(), *l).is_none(), "for_each twice");
        true
    });
    assert_eq!(&seen, model);
    let mut seen = Model::new();
    index.for_each_location(&mut |key, l| {
        assert!(
            seen.insert(key.to_vec(), *l).is_none(),
            "for_each_location twice"
        );
    });
    assert_eq!(&seen, model);
    if !model.is_empty() {
        let mut visits = 0;
        index.for_each(&mut |_, _| {
            visits += 1;
            false
        });
        assert_eq!(visits, 1, "for_each stops when told");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn index_behaves_as_a_map(ops in prop::collection::vec(op_strategy(40), 1..300)) {
        let keys = key_pool(40);
        let index = PrimaryIndex::new();
        let mut model = Model::new();
        for op in &ops {
            apply(&index, &mut model, &keys, op);
        }
        assert_same(&index, &model, &keys);
    }
}

/// A long seeded run with many keys, so shards pass the dead-bytes threshold again and again
/// (free-list reuse, arena recopying, table shrinking) between full comparisons.
#[test]
fn long_churn_matches_the_model() {
    let keys = key_pool(6_000);
    let mut rng = StdRng::seed_from_u64(0x5eed_1de8);
    let index = PrimaryIndex::new();
    let mut model = Model::new();
    for round in 0..120_000u32 {
        let k = rng.gen_range(0..keys.len());
        let seq = u64::from(round) + 1;
        let l = Location {
            fid: rng.gen_range(1..9),
            size: rng.gen_range(32..4096),
            offset: rng.gen_range(0..1u64 << 48),
            seq,
            rev: rng.gen(),
        };
        // Inserts outweigh removals early, removals later, so the index grows and then drains.
        let insert_weight = if round < 60_000 { 6 } else { 3 };
        let op = match rng.gen_range(0..10) {
            w if w < insert_weight => Op::Insert(k, l),
            6 => Op::ReplaceIf(k, rng.gen(), l),
            7 => Op::InsertIfNewer(k, l),
            _ => Op::Remove(k),
        };
        apply(&index, &mut model, &keys, &op);
        if round % 20_000 == 19_999 {
            assert_same(&index, &model, &keys);
        }
    }
    for k in 0..keys.len() {
        apply(&index, &mut model, &keys, &Op::Remove(k));
    }
    assert_same(&index, &model, &keys);
    assert!(
        index.memory_bytes() < 64 * 1024,
        "an emptied index holds {} bytes",
        index.memory_bytes()
    );
}
