//! AQL's type and value order: how any two JSON values compare, for `SORT`, the comparison
//! operators and the order of secondary indexes.
//!
//! What it is: [`compare_values`], a total order over JSON values: first by type (null <
//! boolean < number < string < array < object), then by value: false < true, numbers
//! numerically, strings by [`compare_strings`], arrays element by element (a missing element
//! is null), objects by their sorted attribute names, attribute by attribute.
//!
//! Strings compare as ArangoDB compares them with its default server language: ICU's root
//! collation (CLDR, the order of English) with upper case first and identical strength, so
//! `"A" < "a" < "B" < "b"`, `"a" < "á" < "b"` and digits before letters. Two strings the
//! collation calls equal (canonically equivalent ones, such as a precomposed `é` and `e`
//! plus a combining acute) are then ordered by their UTF-8 bytes, so that only identical
//! strings compare `Equal`. ICU4X's collator is cached in a `static`; strings that are both
//! ASCII skip it and compare through a precomputed table of primary, secondary and tertiary
//! weights that agrees with the collator on every ASCII pair (a test checks all of them).
//!
//! What it is not: AQL's equality of `==` on its own: that is `compare_values(..) == Equal`.
//! Nor is it locale-configurable: ArangoDB's `--default-language` has no counterpart yet.
//!
//! Invariants: the order is total and consistent (antisymmetric, transitive), and the same
//! everywhere it is used, so an index scan returns documents in the order `SORT` would.

use std::cmp::Ordering;
use std::sync::OnceLock;

use icu_collator::options::{CollatorOptions, Strength};
use icu_collator::preferences::CollationCaseFirst;
use icu_collator::{CollatorBorrowed, CollatorPreferences};
use serde_json::Value;

/// The rank of a value's type in AQL's type order.
pub fn type_rank(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// Compares two values in AQL's type and value order.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    let (ra, rb) = (type_rank(a), type_rank(b));
    if ra != rb {
        return ra.cmp(&rb);
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => compare_numbers(x, y),
        (Value::String(x), Value::String(y)) => compare_strings(x, y),
        (Value::Array(x), Value::Array(y)) => {
            let null = Value::Null;
            for i in 0..x.len().max(y.len()) {
                let order = compare_values(x.get(i).unwrap_or(&null), y.get(i).unwrap_or(&null));
                if order != Ordering::Equal {
                    return order;
                }
            }
            Ordering::Equal
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
            names.sort();
            names.dedup();
            let null = Value::Null;
            for name in names {
                let order =
                    compare_values(x.get(name).unwrap_or(&null), y.get(name).unwrap_or(&null));
                if order != Ordering::Equal {
                    return order;
                }
            }
            Ordering::Equal
        }
        _ => Ordering::Equal,
    }
}

/// Compares two numbers by value (integers exactly, otherwise as doubles).
pub fn compare_numbers(a: &serde_json::Number, b: &serde_json::Number) -> Ordering {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x.cmp(&y);
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x.cmp(&y);
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

/// Compares two strings in ArangoDB's default collation, tie-broken by bytes (see the module
/// doc).
pub fn compare_strings(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    let order = if a.is_ascii() && b.is_ascii() {
        compare_ascii(a.as_bytes(), b.as_bytes())
    } else {
        collator().compare(a, b)
    };
    order.then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// The collator: ICU root, upper case first, identical strength. Built once.
fn collator() -> &'static CollatorBorrowed<'static> {
    static COLLATOR: OnceLock<CollatorBorrowed<'static>> = OnceLock::new();
    COLLATOR.get_or_init(|| {
        let mut preferences = CollatorPreferences::default();
        preferences.case_first = Some(CollationCaseFirst::Upper);
        let mut options = CollatorOptions::default();
        options.strength = Some(Strength::Identical);
        CollatorBorrowed::try_new(preferences, options)
            .expect("ICU4X's compiled data holds the root collation")
    })
}

/// The collation weights of one ASCII byte: `(primary, secondary-or-case, tertiary)`.
///
/// Built once from the collator itself, so it cannot drift from it: the bytes are sorted by
/// the collator, equal-at-primary runs (a letter and its capital) share a primary rank, and
/// the case decides inside a run.
fn ascii_weights() -> &'static [(u8, u8); 128] {
    static WEIGHTS: OnceLock<[(u8, u8); 128]> = OnceLock::new();
    WEIGHTS.get_or_init(|| {
        let mut primary_options = CollatorOptions::default();
        primary_options.strength = Some(Strength::Primary);
        let primary = CollatorBorrowed::try_new(CollatorPreferences::default(), primary_options)
            .expect("ICU4X's compiled data holds the root collation");
        let full = collator();
        let text = |byte: u8| char::from(byte).to_string();
        let mut bytes: Vec<u8> = (0..128u8).collect();
        bytes.sort_by(|x, y| full.compare(&text(*x), &text(*y)).then(x.cmp(y)));
        let mut weights = [(0u8, 0u8); 128];
        let (mut rank, mut tie) = (0u8, 0u8);
        for (index, byte) in bytes.iter().enumerate() {
            if index > 0 {
                let previous = bytes[index - 1];
                if primary.compare(&text(previous), &text(*byte)) == Ordering::Equal {
                    tie += 1;
                } else {
                    rank += 1;
                    tie = 0;
                }
            }
            weights[usize::from(*byte)] = (rank, tie);
        }
        weights
    })
}

/// Compares two ASCII strings as the collator would: first by the primary weights of the
/// whole strings (letters ignoring case, completely ignorable control characters skipped),
/// then by the case weights of the whole strings. Allocates nothing.
fn compare_ascii(a: &[u8], b: &[u8]) -> Ordering {
    let weights = ascii_weights();
    significant(weights, a)
        .map(|w| w.0)
        .cmp(significant(weights, b).map(|w| w.0))
        .then_with(|| {
            significant(weights, a)
                .map(|w| w.1)
                .cmp(significant(weights, b).map(|w| w.1))
        })
}

/// The weights of the bytes that are not completely ignorable.
fn significant<'a>(
    weights: &'a [(u8, u8); 128],
    bytes: &'a [u8],
) -> impl Iterator<Item = (u8, u8)> + 'a {
    bytes
        .iter()
        .map(|byte| weights[usize::from(*byte)])
        .filter(|w| w.0 != 0)
}
