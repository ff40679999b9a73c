//! [`EdgeIndex`]: the automatic edge index of an edge collection in the local engine, kept by
//! the write path as a [`DocumentHook`].
//!
//! What it is: two ordered maps from (vertex, edge key) to the edge's other end, one by
//! `_from` (outbound lookups) and one by `_to` (inbound), so a lookup's hits carry both ends
//! (`[vertex, other end]`) and a graph search that needs no edge data reads no edge
//! document; the number of distinct vertices of each for the selectivity estimate; the hook methods (`applied` moves an edge's entries from its old ends to its new
//! ones, `truncated` clears, `recovered` fills on open); and the lookup
//! ([`EdgeIndex::lookup`]), which copies hits out in chunks so no lock is held while the
//! caller visits them.
//!
//! What it is not: persistent. Nothing of it is on disk; it is rebuilt from the documents by
//! the recovery hook on every open (`docs/storage-format.md`), so compaction, which never
//! changes a key or a document's bytes, never touches it. Nor a constraint: it refuses no
//! write (`check` accepts everything; the `_from`/`_to` rules are the write path's), so it
//! keeps no pending state between `check` and `applied`.
//!
//! Invariants: once no write run is in progress, the maps hold exactly one entry per live
//! edge and direction, whose other end is the edge's current other end; `distinct` counts the
//! distinct vertices of each map; hits of one lookup come in key order (bytes).

use std::collections::BTreeMap;
use std::ops::Bound;

use parking_lot::RwLock;
use quince_errors::Result;
use quince_ops::{edge_selectivity, stored_edge_ends, EdgeDirection, IndexHit};
use serde_json::Value;

use crate::hooks::{Change, DocumentHook, Version};

use super::sorted::LOOKUP_CHUNK;

/// The entries of one direction: (vertex, edge key) to the edge's other end, ordered by
/// bytes.
#[derive(Default)]
struct Side {
    entries: BTreeMap<(Box<str>, Box<str>), Box<str>>,
    /// The number of distinct vertices among the entries.
    distinct: u64,
}

impl Side {
    /// True when some entry has `vertex`.
    fn has_vertex(&self, vertex: &str) -> bool {
        let start: (Box<str>, Box<str>) = (vertex.into(), "".into());
        self.entries
            .range(start..)
            .next()
            .is_some_and(|((v, _), _)| &**v == vertex)
    }

    fn insert(&mut self, vertex: &str, key: &str, other: &str) {
        let fresh = !self.has_vertex(vertex);
        if self
            .entries
            .insert((vertex.into(), key.into()), other.into())
            .is_none()
        {
            self.distinct += u64::from(fresh);
        }
    }

    fn remove(&mut self, vertex: &str, key: &str) {
        let entry: (Box<str>, Box<str>) = (vertex.into(), key.into());
        if self.entries.remove(&entry).is_none() {
            debug_assert!(false, "removing an absent edge index entry");
            return;
        }
        if !self.has_vertex(vertex) {
            self.distinct -= 1;
        }
    }

    /// Up to `limit` (key, other end) of `vertex`'s entries after key `after`.
    fn keys(&self, vertex: &str, after: Option<&str>, limit: usize) -> Vec<(Box<str>, Box<str>)> {
        let start: (Box<str>, Box<str>) = (vertex.into(), after.unwrap_or("").into());
        let start = match after {
            Some(_) => Bound::Excluded(start),
            None => Bound::Included(start),
        };
        self.entries
            .range((start, Bound::Unbounded))
            .take_while(|((v, _), _)| &**v == vertex)
            .take(limit)
            .map(|((_, key), other)| (key.clone(), other.clone()))
            .collect()
    }
}

/// Both directions.
#[derive(Default)]
struct Sides {
    out: Side,
    inbound: Side,
}

impl Sides {
    fn side(&self, direction: EdgeDirection) -> &Side {
        match direction {
            EdgeDirection::Out => &self.out,
            EdgeDirection::In => &self.inbound,
        }
    }

    fn add(&mut self, key: &str, (from, to): &(String, String)) {
        self.out.insert(from, key, to);
        self.inbound.insert(to, key, from);
    }

    fn take(&mut self, key: &str, (from, to): &(String, String)) {
        self.out.remove(from, key);
        self.inbound.remove(to, key);
    }
}

/// The edge index of one edge collection.
#[derive(Default)]
pub(crate) struct EdgeIndex {
    sides: RwLock<Sides>,
}

/// A version's ends; a stored edge always has both (see the module doc of `quince_ops`'s
/// `edge.rs`), so a version without them gives no entries rather than an error.
fn ends(version: Option<Version<'_>>) -> Option<(String, String)> {
    let ends = stored_edge_ends(version?.document);
    debug_assert!(ends.is_some(), "a stored edge without _from and _to");
    ends
}

impl EdgeIndex {
    /// The number of edges indexed.
    pub(crate) fn count(&self) -> u64 {
        self.sides.read().out.entries.len() as u64
    }

    /// The selectivity estimate (see [`edge_selectivity`]).
    pub(crate) fn selectivity(&self) -> f64 {
        let sides = self.sides.read();
        edge_selectivity(
            sides.out.entries.len() as u64,
            sides.out.distinct,
            sides.inbound.distinct,
        )
    }

    /// A rough estimate of the bytes the entries take: per edge and direction a map slot
    /// (three boxed strings, 48 bytes) and the three strings' heap blocks (counted as 32 bytes
    /// each).
    pub(crate) fn memory_estimate(&self) -> u64 {
        const ENTRY_BYTES: u64 = 48 + 96;
        2 * self.count() * ENTRY_BYTES
    }

    /// Hands the edges of `vertex` in `direction` to `visit` in key order until it returns
    /// false, each hit's values `[vertex, the other end]`; entries are copied out
    /// [`LOOKUP_CHUNK`] at a time and `visit` runs with no lock held.
    pub(crate) fn lookup(
        &self,
        direction: EdgeDirection,
        vertex: &str,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) {
        let mut values = [Value::String(vertex.to_owned()), Value::Null];
        let mut after: Option<Box<str>> = None;
        loop {
            let chunk =
                self.sides
                    .read()
                    .side(direction)
                    .keys(vertex, after.as_deref(), LOOKUP_CHUNK);
            for (key, other) in &chunk {
                values[1] = Value::String(other.to_string());
                if !visit(IndexHit {
                    key,
                    values: &values,
                    document: None,
                }) {
                    return;
                }
            }
            if chunk.len() < LOOKUP_CHUNK {
                return;
            }
            after = chunk.into_iter().last().map(|(key, _)| key);
        }
    }
}

impl DocumentHook for EdgeIndex {
    fn name(&self) -> &str {
        quince_ops::EDGE_INDEX_NAME
    }

    fn check(&self, _change: &Change<'_>) -> Result<()> {
        Ok(())
    }

    fn applied(&self, change: &Change<'_>) {
        let old = ends(change.old);
        let new = ends(change.new);
        if old == new {
            return;
        }
        let mut sides = self.sides.write();
        if let Some(old) = &old {
            sides.take(change.key, old);
        }
        if let Some(new) = &new {
            sides.add(change.key, new);
        }
    }

    fn aborted(&self, _change: &Change<'_>) {}

    fn truncated(&self) {
        *self.sides.write() = Sides::default();
    }

    fn recovered(&self, key: &str, version: Version<'_>) -> Result<()> {
        if let Some(ends) = ends(Some(version)) {
            self.sides.write().add(key, &ends);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_vertices_follow_inserts_and_removes() {
        let mut side = Side::default();
        side.insert("v/1", "a", "w/1");
        side.insert("v/1", "b", "w/2");
        side.insert("v/10", "c", "w/3");
        assert_eq!((side.entries.len(), side.distinct), (3, 2));
        assert_eq!(
            side.keys("v/1", None, 10),
            vec![("a".into(), "w/1".into()), ("b".into(), "w/2".into())]
        );
        assert_eq!(
            side.keys("v/1", Some("a"), 10),
            vec![("b".into(), "w/2".into())]
        );
        assert_eq!(side.keys("v/", None, 10), Vec::new());
        side.remove("v/1", "a");
        assert_eq!(side.distinct, 2);
        side.remove("v/1", "b");
        assert_eq!(side.distinct, 1);
        assert!(!side.has_vertex("v/1") && side.has_vertex("v/10"));
    }
}
