//! [`IndexLookup`]: what the executor asks an index for, and [`IndexHit`]: what it gets back,
//! one document at a time, in index order.
//!
//! What it is: the lookup forms ([`IndexLookup::Sorted`]: equality on leading fields and a
//! range on the next, for persistent and ttl indexes; [`IndexLookup::Edge`]: the edges of one
//! vertex in one direction, for the edge index), the rule that says whether an entry matches
//! ([`IndexLookup::matches`]) and the order of entries ([`compare_entries`]). Engines that
//! keep no ordered structure (the fake, a transaction's own writes) filter and sort with these.
//!
//! What it is not: a planner. Which index to use and which lookup to ask is the executor's.
//!
//! Invariants: matching and ordering use `compare_values` only, so a lookup returns exactly
//! the entries a brute-force filter over the same documents would, in the order a sort by the
//! indexed values (then `_key`) would give. An edge lookup's entries are `[vertex]` (all
//! equal), so that order is the keys' order.

use std::cmp::Ordering;
use std::ops::Bound;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use quince_model::order::compare_values;
use serde_json::Value;

use super::field::equal;
use super::EdgeDirection;

/// A lookup in one index. More forms come with more index types (geo, fulltext).
///
/// **Sparse indexes:** a sparse index has no entry for a document whose indexed attribute is
/// null or missing, so a lookup that could match null (an equality on `null`, or a range whose
/// low end is unbounded or at most null) would miss documents. The planner must not use a
/// sparse index for such a condition (ArangoDB's rule too).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum IndexLookup {
    /// Equality on the first `prefix.len()` fields, then an optional range on the next field
    /// (`low`..`high`, each bound inclusive, exclusive or open). An empty prefix with both
    /// bounds open is the whole index in order. `reverse` hands hits out in descending order.
    Sorted {
        /// Values the leading fields must equal, in field order.
        prefix: Vec<Value>,
        /// The lower bound on field `prefix.len()` (open when that field does not exist).
        low: Bound<Value>,
        /// The upper bound on field `prefix.len()`.
        high: Bound<Value>,
        /// Descending order when true.
        reverse: bool,
    },
    /// The edges of `vertex` in one direction, in the order of their keys (edge index only;
    /// each hit's values are `[vertex]`).
    Edge {
        /// `Out`: `_from` is the vertex; `In`: `_to` is.
        direction: EdgeDirection,
        /// The vertex's `_id` (matched by exact string equality).
        vertex: String,
    },
}

/// One entry of an index: a document's key and the values it is indexed under.
#[derive(Clone, Copy, Debug)]
pub struct IndexHit<'a> {
    /// The document's `_key`.
    pub key: &'a str,
    /// The indexed values, one per field in field order (for an array field, the element), so
    /// a query that needs only these attributes need not read the document. A ttl index's
    /// value is the date in seconds since the epoch.
    pub values: &'a [Value],
}

impl IndexLookup {
    /// The whole index, in ascending order.
    pub fn all() -> IndexLookup {
        IndexLookup::Sorted {
            prefix: Vec::new(),
            low: Bound::Unbounded,
            high: Bound::Unbounded,
            reverse: false,
        }
    }

    /// Equality on the leading fields.
    pub fn equal(prefix: Vec<Value>) -> IndexLookup {
        IndexLookup::Sorted {
            prefix,
            low: Bound::Unbounded,
            high: Bound::Unbounded,
            reverse: false,
        }
    }

    /// 400/10 when the lookup names more fields than the sorted index has (`fields` of them),
    /// and for an edge lookup (which only the edge index takes).
    pub fn check(&self, fields: usize) -> Result<()> {
        let IndexLookup::Sorted {
            prefix, low, high, ..
        } = self
        else {
            return Err(ArangoError::with_message(
                BAD_PARAMETER,
                "an edge lookup on an index that is not an edge index",
            ));
        };
        let ranged = !matches!((low, high), (Bound::Unbounded, Bound::Unbounded));
        let named = prefix.len() + usize::from(ranged);
        if named > fields {
            return Err(ArangoError::with_message(
                BAD_PARAMETER,
                format!("an index lookup on {named} fields of an index with {fields}"),
            ));
        }
        Ok(())
    }

    /// True when the entry `values` matches (for an edge lookup: `values` is `[the end]`).
    pub fn matches(&self, values: &[Value]) -> bool {
        let (prefix, low, high) = match self {
            IndexLookup::Sorted {
                prefix, low, high, ..
            } => (prefix, low, high),
            IndexLookup::Edge { vertex, .. } => {
                return matches!(values, [Value::String(end)] if end == vertex)
            }
        };
        if prefix.len() > values.len() {
            return false;
        }
        if !prefix.iter().zip(values).all(|(p, v)| equal(p, v)) {
            return false;
        }
        let Some(next) = values.get(prefix.len()) else {
            return matches!((low, high), (Bound::Unbounded, Bound::Unbounded));
        };
        let above = match low {
            Bound::Unbounded => true,
            Bound::Included(low) => compare_values(next, low) != Ordering::Less,
            Bound::Excluded(low) => compare_values(next, low) == Ordering::Greater,
        };
        let below = match high {
            Bound::Unbounded => true,
            Bound::Included(high) => compare_values(next, high) != Ordering::Greater,
            Bound::Excluded(high) => compare_values(next, high) == Ordering::Less,
        };
        above && below
    }

    /// True when hits come in descending order.
    pub fn reverse(&self) -> bool {
        match self {
            IndexLookup::Sorted { reverse, .. } => *reverse,
            IndexLookup::Edge { .. } => false,
        }
    }
}

/// The order of index entries: field by field with `compare_values` (a shorter tuple that is
/// a prefix of a longer one comes first).
pub fn compare_entries(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let order = compare_values(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}
