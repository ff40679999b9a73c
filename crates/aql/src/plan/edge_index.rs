//! The edge index in plans: `FOR e IN edges FILTER e._from == x` (or `e._to == x`, or
//! `e._from IN [..]`) reads the edge index instead of the whole collection.
//!
//! What it is: [`match_edge`], called by `indexes.rs`'s choice of index for each edge index a
//! collection lists: it picks one conjunct on `_from` or `_to` (equality before `IN`, `_from`
//! before `_to`) and makes an [`IndexAccess`] whose index is the edge index narrowed to that
//! attribute: its `fields` (and the description's `fields`) are `["_from"]` or `["_to"]`, as
//! ArangoDB's explain names the half of the edge index it reads. The executor reads the
//! direction back with [`direction_of`] and asks for `IndexLookup::Edge`.
//!
//! What it is not: a traversal, nor the removal of the filter it serves (the filters stay and
//! are checked again on every edge the index yields).
//!
//! Invariants: an edge access has exactly one prefix value (a vertex id, or under `in_last` a
//! list of them), no range and no order; a value that is not a string finds nothing (`_from`
//! and `_to` are always strings), which the executor honours by making no lookup for it.

use quince_ops::{EdgeDirection, IndexDescription, IndexType};
use serde_json::Value;

use super::indexes::{try_clone, Condition};
use super::IndexAccess;

/// The score of an edge access: as a persistent index matching one field by equality, so a
/// persistent index that matches more fields (`["_from", "x"]`) wins, and ties go to the edge
/// index, which the collection lists first.
const EDGE_SCORE: u32 = 2;

/// The access to edge index `index` that `conditions` allow, and its score; `None` when no
/// conjunct is on `_from` or `_to`.
pub(super) fn match_edge(
    index: &IndexDescription,
    conditions: &[(String, Condition)],
) -> Option<(IndexAccess, u32)> {
    debug_assert_eq!(index.kind, IndexType::Edge);
    let find = |in_list: bool, attribute: &str| {
        conditions
            .iter()
            .find_map(|(path, condition)| match condition {
                Condition::Eq(value) if !in_list && path == attribute => Some(value),
                Condition::In(value) if in_list && path == attribute => Some(value),
                _ => None,
            })
    };
    let (in_last, attribute, value) = [
        (false, "_from"),
        (false, "_to"),
        (true, "_from"),
        (true, "_to"),
    ]
    .into_iter()
    .find_map(|(in_list, attribute)| Some((in_list, attribute, find(in_list, attribute)?)))?;
    let mut narrowed = index.clone();
    narrowed.fields = vec![attribute.to_owned()];
    narrowed.json["fields"] = Value::from(vec![attribute]);
    let access = IndexAccess {
        index: narrowed,
        prefix: vec![try_clone(value)?],
        in_last,
        low: None,
        high: None,
        reverse: false,
        projection: None,
    };
    Some((access, EDGE_SCORE))
}

/// The direction an access reads when its index is the edge index (narrowed by
/// [`match_edge`]); `None` for any other index.
pub fn direction_of(access: &IndexAccess) -> Option<EdgeDirection> {
    if access.index.kind != IndexType::Edge {
        return None;
    }
    let direction = access
        .index
        .fields
        .first()
        .and_then(|field| EdgeDirection::of_attribute(field));
    debug_assert!(
        direction.is_some(),
        "an edge access not narrowed to one end"
    );
    direction
}
