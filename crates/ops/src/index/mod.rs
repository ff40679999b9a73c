//! Secondary indexes as the operations interface sees them: what an index is
//! ([`IndexDefinition`], [`IndexType`]), how a client asks for one (the create body, parsed and
//! validated by [`IndexDefinition::parse`]), how it is described (`GET /_api/index`'s JSON,
//! [`IndexDescription`]), which entries a document gives it ([`IndexSpec::entries`]) and how the
//! executor reads it ([`IndexLookup`], [`IndexHit`]); the edge index of edge collections
//! (`edge.rs`: its id, description and lookup direction).
//!
//! What it is not: an index structure. Engines keep their entries their own way (the local
//! engine in an ordered map kept by its write path's hooks, the fake by scanning); what they
//! share is here, so both answer alike: the definitions, the entries of a document, and the
//! order of hits.
//!
//! Invariants:
//! - every comparison of indexed values goes through `quince_model::order::compare_values`
//!   (AQL's order, with its string collation), never through bytes, so an index scan returns
//!   documents in the order `SORT` would, and equality in a unique index is AQL's `==`;
//! - hits come in index order: the indexed values compared field by field, then the document
//!   key by its bytes; reversed as a whole when asked;
//! - a sparse index holds no entry for a document whose indexed attribute (any of them) is null
//!   or missing; a non-sparse one indexes a missing attribute as null;
//! - an array field (`tags[*]`) gives one entry per element (equal elements once per document
//!   when `deduplicate` is on); a document whose attribute is not an array gives none;
//! - a geo index's one entry per document is `[cell, latitude, longitude]` (`geo.rs`), a
//!   fulltext index's entries are the document's distinct words (`fulltext.rs`); both are
//!   sparse: a document without a valid location or a word gives none.

mod definition;
mod edge;
mod field;
pub mod fulltext;
pub mod geo;
mod lookup;
mod time;

pub use definition::{IndexDefinition, IndexType, ENTRIES_PER_DOCUMENT_MAX};
pub use edge::{edge_selectivity, stored_edge_ends, EdgeDirection, EDGE_INDEX_ID, EDGE_INDEX_NAME};
pub use field::{FieldPath, IndexSpec};
pub use fulltext::FulltextQuery;
pub use geo::{GeoOptions, Rectangle};
pub use lookup::{compare_entries, IndexHit, IndexLookup};
pub use time::ttl_seconds;

use serde_json::{json, Value};

/// One index of a collection, as `GET /_api/index` describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDescription {
    /// The numeric id, unique within the collection (0 is the primary index, 1 the edge
    /// index of an edge collection).
    pub id: u64,
    /// The name (`primary`, or `idx_<id>` unless the client chose one).
    pub name: String,
    /// The type (aliases resolved: a `hash` index is `Persistent`).
    pub kind: IndexType,
    /// The attribute paths, as given (`a.b`, `tags[*]`).
    pub fields: Vec<String>,
    /// Whether two documents may share the indexed values.
    pub unique: bool,
    /// Whether documents with a null or missing indexed attribute are left out.
    pub sparse: bool,
    /// The full description as `GET /_api/index` renders it, `id` as `"<collection>/<id>"`,
    /// with `selectivityEstimate` where the type has one.
    pub json: Value,
}

impl IndexDescription {
    /// The primary index of collection `collection`: id 0, name `primary`, over `_key`.
    pub fn primary(collection: &str) -> IndexDescription {
        IndexDescription {
            id: 0,
            name: "primary".to_owned(),
            kind: IndexType::Primary,
            fields: vec!["_key".to_owned()],
            unique: true,
            sparse: false,
            json: json!({
                "fields": ["_key"],
                "id": format!("{collection}/0"),
                "name": "primary",
                "selectivityEstimate": 1,
                "sparse": false,
                "type": "primary",
                "unique": true,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
