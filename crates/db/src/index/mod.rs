//! A collection's secondary indexes in the local engine: persistent (with its aliases `hash`
//! and `skiplist`), ttl, geo and fulltext indexes, their definitions, their entries and the
//! lookups the executor makes; and the automatic edge index of an edge collection (`edge.rs`).
//!
//! What it is: the `impl Collection` block of index operations: [`Collection::indexes`],
//! [`Collection::create_index`], [`Collection::drop_index`], [`Collection::index_lookup`]; the
//! index itself ([`SortedIndex`], `hook.rs`: a `DocumentHook` the one write path keeps),
//! its sorted entries (`sorted.rs`), the expiry of ttl indexes (`ttl.rs`), the lookups of
//! geo (`geo.rs`) and fulltext (`fulltext.rs`) indexes, whose entries (a cell and a location,
//! or a word: `quince_ops::geo`, `quince_ops::fulltext`) live in the same sorted map and are
//! read by ranges of it, and the edge index ([`EdgeIndex`], `edge.rs`: listed, looked up and
//! counted here, never created or dropped).
//!
//! What it is not: persistent entries. Only the definitions are stored (in the collection's
//! `parameter.json`, `docs/storage-format.md`); the entries are rebuilt from the documents by
//! the recovery hook on every open, which also means compaction (which moves records but never
//! changes a key, revision or bytes) never touches an index.
//!
//! Invariants: an index's entries are those of the committed documents whenever no write run
//! holds the collection's hook lock; a definition is durable (in `parameter.json`) before its
//! index is offered to readers or writers, and a dropped one is gone from the file before its
//! index stops being maintained; index changes are serialised by `index_ddl` and take the hook
//! lock, so no write runs while an index is built or dropped.

mod edge;
mod fulltext;
mod geo;
mod hook;
mod sorted;
mod ttl;

use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, ARANGO_DUPLICATE_NAME, ARANGO_INDEX_NOT_FOUND, BAD_PARAMETER, FORBIDDEN,
};
use quince_ops::{
    IndexDefinition, IndexDescription, IndexFigures, IndexHit, IndexLookup, IndexSpec,
    EDGE_INDEX_ID, EDGE_INDEX_NAME,
};
use serde_json::Value;

use crate::collection::Collection;
use crate::hooks::DocumentHook;

pub(crate) use edge::EdgeIndex;
pub(crate) use hook::SortedIndex;

use sorted::{probes, IndexKey, LOOKUP_CHUNK};

/// Hands the entries of `index` that the sorted `lookup` selects to `visit`, in index order.
/// Entries are copied out in chunks of [`LOOKUP_CHUNK`] under the index's read lock, and
/// `visit` runs with no lock held.
pub(crate) fn scan_sorted(
    index: &SortedIndex,
    lookup: &IndexLookup,
    visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
) {
    let (low, high) = probes(lookup);
    let reverse = lookup.reverse();
    let mut after: Option<IndexKey> = None;
    loop {
        let chunk = index
            .entries()
            .range(&low, &high, after.as_ref(), reverse, LOOKUP_CHUNK);
        let full = chunk.len() == LOOKUP_CHUNK;
        for (entry, count) in &chunk {
            for _ in 0..*count {
                let hit = IndexHit {
                    key: entry.key(),
                    values: &entry.values,
                    document: None,
                };
                if !visit(hit) {
                    return;
                }
            }
        }
        if !full {
            return;
        }
        after = chunk.into_iter().last().map(|(entry, _)| entry);
    }
}

/// The opened indexes of stored definitions (built later, by the recovery scan).
pub(crate) fn open_indexes(stored: &[Value]) -> Result<Vec<Arc<SortedIndex>>> {
    stored
        .iter()
        .map(|value| {
            let spec = IndexSpec::new(IndexDefinition::from_stored(value)?)?;
            Ok(Arc::new(SortedIndex::new(spec, false)))
        })
        .collect()
}

fn not_found() -> ArangoError {
    ArangoError::new(ARANGO_INDEX_NOT_FOUND)
}

impl Collection {
    /// The secondary indexes, in creation order.
    pub(crate) fn secondary_indexes(&self) -> Vec<Arc<SortedIndex>> {
        self.indexes.read().clone()
    }

    /// Every index: the primary first, then the secondary ones in creation order.
    pub fn indexes(&self) -> Vec<IndexDescription> {
        let name = self.name();
        let mut all = vec![IndexDescription::primary(&name)];
        if let Some(edge) = &self.edge_index {
            all.push(IndexDescription::edge(&name, edge.selectivity()));
        }
        for index in self.indexes.read().iter() {
            let selectivity = index.entries().selectivity();
            all.push(index.definition().describe(&name, selectivity));
        }
        all
    }

    /// Creates an index, or finds the one the body asks for (see
    /// [`quince_ops::CollectionOps::create_index`]). The index is built over the existing
    /// documents under the hook lock (writers wait), its definition persisted, and only then
    /// added to the write path.
    pub fn create_index(&self, body: &Value) -> Result<(IndexDescription, bool)> {
        self.shared.check_open()?;
        let mut definition = IndexDefinition::parse(body)?;
        let _ddl = self.index_ddl.lock();
        // Again under the lock: a restore that ran while this waited closed this state.
        self.shared.check_open()?;
        let name = self.name();
        if let Some(existing) = self
            .indexes
            .read()
            .iter()
            .find(|index| index.definition().same_index(&definition))
        {
            let selectivity = existing.entries().selectivity();
            return Ok((existing.definition().describe(&name, selectivity), false));
        }
        definition.id = self.shared.allocate_id()?;
        if definition.name.is_empty() {
            definition.name = format!("idx_{}", definition.id);
        }
        let taken = definition.name == "primary"
            || (self.edge_index.is_some() && definition.name == EDGE_INDEX_NAME)
            || self
                .indexes
                .read()
                .iter()
                .any(|index| index.definition().name == definition.name);
        if taken {
            return Err(ArangoError::with_message(
                ARANGO_DUPLICATE_NAME,
                format!("duplicate value for index name '{}'", definition.name),
            ));
        }
        let index = Arc::new(SortedIndex::new(IndexSpec::new(definition)?, true));
        let mut hooks = self.hooks.lock();
        self.recover_hooks(&[Arc::clone(&index) as Arc<dyn DocumentHook>])?;
        self.indexes.write().push(Arc::clone(&index));
        if let Err(error) = self.persist() {
            self.indexes.write().pop();
            return Err(error);
        }
        hooks.push(Arc::clone(&index) as Arc<dyn DocumentHook>);
        drop(hooks);
        let selectivity = index.entries().selectivity();
        Ok((index.definition().describe(&name, selectivity), true))
    }

    /// Drops the index of that id or name: 1212 when there is none (the primary index is
    /// never among them), 403/11 for the edge index. The definition leaves `parameter.json`
    /// first.
    pub fn drop_index(&self, id_or_name: &str) -> Result<IndexDescription> {
        self.shared.check_open()?;
        let id = id_or_name.parse::<u64>().ok();
        if self.is_edge_index(id, id_or_name) {
            return Err(ArangoError::with_message(
                FORBIDDEN,
                "the edge index cannot be dropped",
            ));
        }
        let _ddl = self.index_ddl.lock();
        self.shared.check_open()?;
        let mut hooks = self.hooks.lock();
        let (at, index) = {
            let indexes = self.indexes.read();
            let at = indexes
                .iter()
                .position(|i| Some(i.definition().id) == id || i.definition().name == id_or_name)
                .ok_or_else(not_found)?;
            (at, Arc::clone(&indexes[at]))
        };
        self.indexes.write().remove(at);
        if let Err(error) = self.persist() {
            self.indexes.write().insert(at, Arc::clone(&index));
            return Err(error);
        }
        let target = Arc::as_ptr(&index) as *const ();
        hooks.retain(|hook| Arc::as_ptr(hook) as *const () != target);
        drop(hooks);
        let selectivity = index.entries().selectivity();
        Ok(index.definition().describe(&self.name(), selectivity))
    }

    /// Hands the entries `lookup` selects to `visit` in index order (see
    /// [`quince_ops::CollectionOps::index_lookup`]): sorted lookups here, geo lookups in
    /// `geo.rs`, fulltext lookups in `fulltext.rs`.
    pub fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        self.shared.check_open()?;
        if let (Some(edge), EDGE_INDEX_ID) = (&self.edge_index, index_id) {
            let IndexLookup::Edge { direction, vertex } = lookup else {
                return Err(ArangoError::with_message(
                    BAD_PARAMETER,
                    "the edge index takes edge lookups only",
                ));
            };
            edge.lookup(*direction, vertex, visit);
            return Ok(());
        }
        let index = self
            .indexes
            .read()
            .iter()
            .find(|index| index.definition().id == index_id)
            .cloned()
            .ok_or_else(not_found)?;
        lookup.check_for(index.definition())?;
        match lookup {
            IndexLookup::Near { .. } | IndexLookup::WithinRectangle { .. } => {
                geo::lookup(&index, lookup, visit)
            }
            IndexLookup::Fulltext { .. } => fulltext::lookup(&index, lookup, visit),
            _ => {
                scan_sorted(&index, lookup, visit);
                Ok(())
            }
        }
    }

    /// True when `id` or `name` names the edge index of this (edge) collection.
    pub(crate) fn is_edge_index(&self, id: Option<u64>, name: &str) -> bool {
        self.edge_index.is_some() && (id == Some(EDGE_INDEX_ID) || name == EDGE_INDEX_NAME)
    }

    /// The definition and paths of index `index_id` (1212 when there is none).
    pub(crate) fn index_spec(&self, index_id: u64) -> Result<IndexSpec> {
        self.indexes
            .read()
            .iter()
            .find(|index| index.definition().id == index_id)
            .map(|index| index.spec.clone())
            .ok_or_else(not_found)
    }

    /// The figures of the secondary indexes (entries, and an estimate of their memory).
    pub(crate) fn index_figures(&self) -> Vec<IndexFigures> {
        self.indexes
            .read()
            .iter()
            .map(|index| {
                let entries = index.entries();
                IndexFigures {
                    id: index.definition().id,
                    kind: index.definition().kind.name(),
                    count: entries.total(),
                    memory: entries.memory_estimate(),
                }
            })
            .collect()
    }

    /// The stored forms of the secondary indexes' definitions, for `parameter.json`.
    pub(crate) fn stored_indexes(&self) -> Vec<Value> {
        self.indexes
            .read()
            .iter()
            .map(|index| index.definition().to_stored())
            .collect()
    }
}
