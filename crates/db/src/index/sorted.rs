//! [`Entries`]: the in-memory sorted structure of one secondary index: an ordered map from
//! (indexed values, document key) to the number of times the document gives that entry.
//!
//! What it is: the map, ordered by `compare_values` field by field and then by the key's bytes
//! ([`IndexKey`]); range reads for lookups ([`Entries::range`], in chunks so no lock is held
//! while the caller looks at the hits); the count of distinct value tuples, kept as entries
//! come and go, for the selectivity estimate; a bulk build from a sorted run (the recovery).
//!
//! What it is not: persistent. It is rebuilt from the documents on every open (`hook.rs`), so
//! it never needs to agree with bytes on disk, and a change of the string collation behind
//! `compare_values` only needs a restart.
//!
//! Invariants: every count is at least 1; `distinct` is the number of distinct value tuples
//! among the keys; probes (`Tail::Low`/`Tail::High`) are never stored.
//!
//! Memory: one entry is a map slot (the [`IndexKey`]: a boxed slice of values and a boxed key,
//! 40 bytes, plus its 4-byte count) and two heap blocks (the values, 32 bytes per serde_json
//! value, and the key's bytes), plus each value's own heap block when it is a string, an array
//! or an object. `docs/storage-format.md` gives the measured figure.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

use quince_model::order::compare_values;
use quince_ops::IndexLookup;
use serde_json::Value;

/// How many entries a lookup copies out under the read lock at a time.
pub(crate) const LOOKUP_CHUNK: usize = 512;

/// What follows the values of an [`IndexKey`]: a document's key (stored entries), or a probe
/// that sorts before or after every entry that starts with the values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    Low,
    Key(Box<str>),
    High,
}

/// An entry of the map, or a probe for a range read.
#[derive(Clone, Debug)]
pub(crate) struct IndexKey {
    pub values: Box<[Value]>,
    pub tail: Tail,
}

impl IndexKey {
    pub(crate) fn entry(values: Box<[Value]>, key: &str) -> IndexKey {
        IndexKey {
            values,
            tail: Tail::Key(key.into()),
        }
    }

    fn probe(values: Vec<Value>, tail: Tail) -> IndexKey {
        IndexKey {
            values: values.into_boxed_slice(),
            tail,
        }
    }

    /// The document key of a stored entry.
    pub(crate) fn key(&self) -> &str {
        match &self.tail {
            Tail::Key(key) => key,
            Tail::Low | Tail::High => unreachable!("probes are never stored"),
        }
    }
}

impl Ord for IndexKey {
    /// Lexicographic over the values (`compare_values`), the tail acting as one more element:
    /// `Low` below anything, `High` above anything, keys by their bytes.
    fn cmp(&self, other: &IndexKey) -> Ordering {
        for (a, b) in self.values.iter().zip(other.values.iter()) {
            let order = compare_values(a, b);
            if order != Ordering::Equal {
                return order;
            }
        }
        let rank = |tail: &Tail| match tail {
            Tail::Low => 0,
            Tail::Key(_) => 1,
            Tail::High => 2,
        };
        match self.values.len().cmp(&other.values.len()) {
            // `self` is a prefix of `other`: its tail is compared with `other`'s next value.
            Ordering::Less => match self.tail {
                Tail::High => Ordering::Greater,
                _ => Ordering::Less,
            },
            Ordering::Greater => match other.tail {
                Tail::High => Ordering::Less,
                _ => Ordering::Greater,
            },
            Ordering::Equal => match (&self.tail, &other.tail) {
                (Tail::Key(a), Tail::Key(b)) => a.as_bytes().cmp(b.as_bytes()),
                (a, b) => rank(a).cmp(&rank(b)),
            },
        }
    }
}

impl PartialOrd for IndexKey {
    fn partial_cmp(&self, other: &IndexKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for IndexKey {
    fn eq(&self, other: &IndexKey) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for IndexKey {}

/// The probes that bound the entries a lookup selects (both inclusive: probes equal no entry).
pub(crate) fn probes(lookup: &IndexLookup) -> (IndexKey, IndexKey) {
    let IndexLookup::Sorted {
        prefix, low, high, ..
    } = lookup
    else {
        unreachable!("only sorted lookups read ranges of the map")
    };
    let with = |value: &Value| {
        let mut values = prefix.clone();
        values.push(value.clone());
        values
    };
    let low = match low {
        Bound::Unbounded => IndexKey::probe(prefix.clone(), Tail::Low),
        Bound::Included(v) => IndexKey::probe(with(v), Tail::Low),
        Bound::Excluded(v) => IndexKey::probe(with(v), Tail::High),
    };
    let high = match high {
        Bound::Unbounded => IndexKey::probe(prefix.clone(), Tail::High),
        Bound::Included(v) => IndexKey::probe(with(v), Tail::High),
        Bound::Excluded(v) => IndexKey::probe(with(v), Tail::Low),
    };
    (low, high)
}

/// The probes around every entry with exactly `values`.
pub(crate) fn around(values: &[Value]) -> (IndexKey, IndexKey) {
    (
        IndexKey::probe(values.to_vec(), Tail::Low),
        IndexKey::probe(values.to_vec(), Tail::High),
    )
}

/// The entries of one index.
#[derive(Default)]
pub(crate) struct Entries {
    map: BTreeMap<IndexKey, u32>,
    /// The sum of the counts.
    total: u64,
    /// The number of distinct value tuples.
    distinct: u64,
}

impl Entries {
    /// Builds from entries sorted by [`IndexKey`]'s order (equal ones adjacent).
    pub(crate) fn from_sorted(sorted: Vec<IndexKey>) -> Entries {
        let total = sorted.len() as u64;
        let mut distinct = 0;
        let mut counted: Vec<(IndexKey, u32)> = Vec::with_capacity(sorted.len());
        for entry in sorted {
            match counted.last_mut() {
                Some((last, n)) if *last == entry => *n += 1,
                last => {
                    let new_tuple = last.is_none_or(|(last, _)| {
                        quince_ops::compare_entries(&last.values, &entry.values) != Ordering::Equal
                    });
                    distinct += u64::from(new_tuple);
                    counted.push((entry, 1));
                }
            }
        }
        Entries {
            map: counted.into_iter().collect(),
            total,
            distinct,
        }
    }

    /// True when some entry has exactly `values`.
    fn has_tuple(&self, values: &[Value]) -> bool {
        let (low, high) = around(values);
        self.map.range(low..=high).next().is_some()
    }

    /// Adds one entry.
    pub(crate) fn insert(&mut self, entry: IndexKey) {
        if !self.has_tuple(&entry.values) {
            self.distinct += 1;
        }
        *self.map.entry(entry).or_insert(0) += 1;
        self.total += 1;
    }

    /// Removes one entry (a no-op for one that is absent).
    pub(crate) fn remove(&mut self, entry: &IndexKey) {
        let Some(n) = self.map.get_mut(entry) else {
            debug_assert!(false, "removing an absent index entry");
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.map.remove(entry);
        }
        self.total -= 1;
        if !self.has_tuple(&entry.values) {
            self.distinct -= 1;
        }
    }

    /// Every (entry, count) with exactly `values`.
    pub(crate) fn with_tuple(&self, values: &[Value]) -> impl Iterator<Item = (&IndexKey, u32)> {
        let (low, high) = around(values);
        self.map.range(low..=high).map(|(k, n)| (k, *n))
    }

    /// The count of `entry` (0 when absent).
    pub(crate) fn count(&self, entry: &IndexKey) -> u32 {
        self.map.get(entry).copied().unwrap_or(0)
    }

    /// Up to `limit` entries between `low` and `high` (in descending order when `reverse`),
    /// starting after `after` when given.
    pub(crate) fn range(
        &self,
        low: &IndexKey,
        high: &IndexKey,
        after: Option<&IndexKey>,
        reverse: bool,
        limit: usize,
    ) -> Vec<(IndexKey, u32)> {
        let (mut start, mut end) = (Bound::Included(low), Bound::Included(high));
        if let Some(after) = after {
            if reverse {
                end = Bound::Excluded(after);
            } else {
                start = Bound::Excluded(after);
            }
        }
        let empty = match (start, end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Included(e) | Bound::Excluded(e)) => {
                s >= e
            }
            _ => false,
        };
        if empty {
            return Vec::new();
        }
        let range = self.map.range::<IndexKey, _>((start, end));
        let copy = |(k, n): (&IndexKey, &u32)| (k.clone(), *n);
        if reverse {
            range.rev().take(limit).map(copy).collect()
        } else {
            range.take(limit).map(copy).collect()
        }
    }

    /// The sum of the counts.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// Distinct value tuples over entries (1 when empty).
    pub(crate) fn selectivity(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            self.distinct as f64 / self.total as f64
        }
    }

    /// A rough estimate of the bytes the entries take (see the module doc), from the entry
    /// count: a map slot and the two heap blocks of each, the values' own blocks not counted.
    pub(crate) fn memory_estimate(&self) -> u64 {
        const ENTRY_BYTES: u64 = 48 + 48 + 32;
        self.map.len() as u64 * ENTRY_BYTES
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        *self = Entries::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(values: Vec<Value>, key: &str) -> IndexKey {
        IndexKey::entry(values.into_boxed_slice(), key)
    }

    #[test]
    fn probes_bracket_prefixes() {
        let e = entry(vec![json!(1), json!("b")], "k");
        let (low, high) = around(&[json!(1)]);
        assert!(low < e && e < high);
        let (low2, high2) = around(&[json!(1), json!("b")]);
        assert!(low2 < e && e < high2);
        assert!(high2 < high && low < low2);
        assert!(entry(vec![json!(1), json!("b")], "a") < e);
        assert!(entry(vec![json!(null), json!("z")], "z") < low);
    }

    #[test]
    fn distinct_counts_follow_inserts_and_removes() {
        let mut entries = Entries::default();
        entries.insert(entry(vec![json!(1)], "a"));
        entries.insert(entry(vec![json!(1.0)], "b"));
        entries.insert(entry(vec![json!(2)], "c"));
        assert_eq!((entries.total(), entries.distinct), (3, 2));
        entries.remove(&entry(vec![json!(1)], "a"));
        assert_eq!((entries.total(), entries.distinct), (2, 2));
        entries.remove(&entry(vec![json!(1)], "b"));
        assert_eq!((entries.total(), entries.distinct), (1, 1));
        let built = Entries::from_sorted(vec![
            entry(vec![json!(1)], "a"),
            entry(vec![json!(1)], "a"),
            entry(vec![json!(1)], "b"),
            entry(vec![json!(3)], "b"),
        ]);
        assert_eq!((built.total(), built.distinct, built.map.len()), (4, 2, 3));
    }
}
