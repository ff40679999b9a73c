//! [`IndexLookup`]: what the executor asks an index for, and [`IndexHit`]: what it gets back,
//! one document at a time, in index order.
//!
//! What it is: the lookup forms ([`IndexLookup::Sorted`]: equality on leading fields and a
//! range on the next; [`IndexLookup::Near`] and [`IndexLookup::WithinRectangle`] in a geo
//! index; [`IndexLookup::Fulltext`]; [`IndexLookup::Edge`]: the edges of one vertex in one
//! direction, for the edge index), the rule that says whether an entry matches a sorted
//! lookup ([`IndexLookup::matches`]), the hits one document gives any lookup
//! ([`IndexLookup::document_hits`]) and the order and limit of hits ([`compare_entries`],
//! [`IndexLookup::finish`]). Engines that keep no ordered structure (the fake, a
//! transaction's own writes) filter and sort with these.
//!
//! What it is not: a planner. Which index to use and which lookup to ask is the executor's.
//!
//! Invariants: matching and ordering use `compare_values` only, so a sorted lookup returns
//! exactly the entries a brute-force filter over the same documents would, in the order a
//! sort by the indexed values (then `_key`) would give; the other forms are decided per
//! document by [`IndexLookup::document_hits`] in every engine and ordered by
//! [`IndexLookup::finish`] (distance then key for `Near`, key otherwise). An edge lookup's
//! entries are `[vertex]` (all equal), so its order is the keys' order.

use std::cmp::Ordering;
use std::ops::Bound;

use std::collections::BTreeSet;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use quince_model::order::compare_values;
use serde_json::{Map, Value};

use super::definition::{IndexDefinition, IndexType};
use super::field::{equal, IndexSpec};
use super::fulltext::{decode_word, FulltextQuery};
use super::geo::{distance_m, entry_location, Rectangle};
use super::EdgeDirection;

/// A lookup in one index.
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
    /// In a geo index: the documents whose location lies between `min_distance` and
    /// `max_distance` metres (both inclusive) of (`lat`, `lon`), nearest first (ties by key),
    /// at most `limit` of them. A hit's `values` are `[distance in metres]`.
    Near {
        /// The latitude of the centre.
        lat: f64,
        /// The longitude of the centre.
        lon: f64,
        /// The least distance, in metres (0 for none).
        min_distance: f64,
        /// The greatest distance, in metres (`None`: any).
        max_distance: Option<f64>,
        /// The most hits (`None`: all).
        limit: Option<usize>,
    },
    /// In a geo index: the documents whose location lies in the rectangle, by key. A hit's
    /// `values` are `[latitude, longitude]`.
    WithinRectangle {
        /// The rectangle (see [`Rectangle::from_corners`]).
        rectangle: Rectangle,
        /// The most hits (`None`: all).
        limit: Option<usize>,
    },
    /// In a fulltext index: the documents that match the query, by key. A hit's `values` are
    /// empty.
    Fulltext {
        /// The parsed query.
        query: FulltextQuery,
        /// The most hits (`None`: all).
        limit: Option<usize>,
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
    /// The document's stored JSON (as [`crate::CollectionOps::read`] renders it) when the
    /// engine had it at hand (a cluster coordinator's shards send it with the hit); `None`:
    /// read it by key when it is needed.
    pub document: Option<&'a [u8]>,
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

    /// 400/10 when the lookup does not fit index `definition`: a sorted lookup in a geo or
    /// fulltext index or on more fields than the index has, a geo lookup in an index that is
    /// not a geo index, a fulltext lookup in one that is not a fulltext index.
    pub fn check_for(&self, definition: &IndexDefinition) -> Result<()> {
        let wanted = match self {
            IndexLookup::Sorted { .. } => {
                if matches!(definition.kind, IndexType::Geo | IndexType::Fulltext) {
                    None
                } else {
                    return self.check(definition.fields.len());
                }
            }
            IndexLookup::Near { .. } | IndexLookup::WithinRectangle { .. } => Some(IndexType::Geo),
            IndexLookup::Fulltext { .. } => Some(IndexType::Fulltext),
            IndexLookup::Edge { .. } => Some(IndexType::Edge),
        };
        if wanted == Some(definition.kind) {
            return Ok(());
        }
        Err(ArangoError::with_message(
            BAD_PARAMETER,
            format!(
                "this lookup cannot be made in index '{}' of type {}",
                definition.name,
                definition.kind.name()
            ),
        ))
    }

    /// 400/10 when the lookup names more fields than the index has (`fields` of them).
    pub fn check(&self, fields: usize) -> Result<()> {
        let IndexLookup::Sorted {
            prefix, low, high, ..
        } = self
        else {
            if matches!(self, IndexLookup::Edge { .. }) {
                return Err(ArangoError::with_message(
                    BAD_PARAMETER,
                    "an edge lookup on an index that is not an edge index",
                ));
            }
            return Ok(());
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

    /// True when the entry `values` matches a sorted lookup, or (an edge lookup) when
    /// `values` starts with the vertex (`[the vertex, the other end]`); false for the other
    /// forms: they are decided per document, [`IndexLookup::document_hits`].
    pub fn matches(&self, values: &[Value]) -> bool {
        if let IndexLookup::Edge { vertex, .. } = self {
            return matches!(values.first(), Some(Value::String(end)) if end == vertex);
        }
        let IndexLookup::Sorted {
            prefix, low, high, ..
        } = self
        else {
            return false;
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
        matches!(self, IndexLookup::Sorted { reverse: true, .. })
    }

    /// The most hits the lookup gives (`None`: no limit).
    pub fn limit(&self) -> Option<usize> {
        match self {
            IndexLookup::Sorted { .. } | IndexLookup::Edge { .. } => None,
            IndexLookup::Near { limit, .. }
            | IndexLookup::WithinRectangle { limit, .. }
            | IndexLookup::Fulltext { limit, .. } => *limit,
        }
    }

    /// The same lookup with its limit raised by `extra` (a transaction asks the committed
    /// index for that many more hits than it may drop).
    pub fn widened(&self, extra: usize) -> IndexLookup {
        let mut wider = self.clone();
        if let IndexLookup::Near { limit, .. }
        | IndexLookup::WithinRectangle { limit, .. }
        | IndexLookup::Fulltext { limit, .. } = &mut wider
        {
            *limit = limit.map(|n| n.saturating_add(extra));
        }
        wider
    }

    /// The hits one document (a stored document's object) gives the lookup in index `spec`,
    /// decided from its entries: a sorted lookup's matching entries, a geo lookup's one hit
    /// when its location qualifies, a fulltext lookup's one hit when its words match.
    pub fn document_hits(
        &self,
        spec: &IndexSpec,
        document: &Map<String, Value>,
    ) -> Result<Vec<Box<[Value]>>> {
        let entries = spec.entries(document)?;
        Ok(self.entries_hits(&entries))
    }

    /// [`IndexLookup::document_hits`] from the document's entries.
    pub fn entries_hits(&self, entries: &[Box<[Value]>]) -> Vec<Box<[Value]>> {
        match self {
            IndexLookup::Sorted { .. } | IndexLookup::Edge { .. } => entries
                .iter()
                .filter(|entry| self.matches(entry))
                .cloned()
                .collect(),
            IndexLookup::Near { .. } | IndexLookup::WithinRectangle { .. } => entries
                .iter()
                .filter_map(|entry| entry_location(entry))
                .filter_map(|(lat, lon)| self.geo_hit(lat, lon))
                .take(1)
                .collect(),
            IndexLookup::Fulltext { query, .. } => {
                let words: BTreeSet<String> = entries
                    .iter()
                    .filter_map(|entry| decode_word(entry.first()?))
                    .collect();
                if query.matches(&words) {
                    vec![Box::default()]
                } else {
                    Vec::new()
                }
            }
        }
    }

    /// The hit a location gives a geo lookup (`None` for the other forms, or when it does not
    /// qualify).
    pub fn geo_hit(&self, lat: f64, lon: f64) -> Option<Box<[Value]>> {
        let number = |v: f64| serde_json::Number::from_f64(v).map(Value::Number);
        match self {
            IndexLookup::Near {
                lat: lat0,
                lon: lon0,
                min_distance,
                max_distance,
                ..
            } => {
                let distance = distance_m(*lat0, *lon0, lat, lon);
                let inside =
                    distance >= *min_distance && max_distance.is_none_or(|max| distance <= max);
                if !inside {
                    return None;
                }
                Some(vec![number(distance)?].into_boxed_slice())
            }
            IndexLookup::WithinRectangle { rectangle, .. } => {
                if !rectangle.contains(lat, lon) {
                    return None;
                }
                Some(vec![number(lat)?, number(lon)?].into_boxed_slice())
            }
            _ => None,
        }
    }

    /// Puts `hits` (values, key) in the lookup's order and cuts them to its limit: sorted
    /// lookups by entry then key (reversed when asked), `Near` by distance then key, the others
    /// by key.
    pub fn finish(&self, hits: &mut Vec<(Box<[Value]>, String)>) {
        match self {
            IndexLookup::Sorted { .. } => {
                hits.sort_by(|a, b| compare_entries(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
                if self.reverse() {
                    hits.reverse();
                }
            }
            IndexLookup::Near { .. } => hits.sort_by(|a, b| {
                let distance = |v: &[Value]| v.first().and_then(Value::as_f64).unwrap_or(0.0);
                distance(&a.0)
                    .total_cmp(&distance(&b.0))
                    .then_with(|| a.1.cmp(&b.1))
            }),
            IndexLookup::WithinRectangle { .. }
            | IndexLookup::Fulltext { .. }
            | IndexLookup::Edge { .. } => hits.sort_by(|a, b| a.1.cmp(&b.1)),
        }
        if let Some(limit) = self.limit() {
            hits.truncate(limit);
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
