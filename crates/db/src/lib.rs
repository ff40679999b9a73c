//! Quince's database layer: the catalog of databases and collections, and document operations.
//!
//! What it is: [`Catalog`] (every database, persisted in the data directory), [`Database`]
//! (its collections), and [`Collection`] (properties, counts, figures, and the document
//! operations insert, read, replace, update and remove with ArangoDB's options). Document
//! semantics (keys, `_rev`, key generators, merge rules, preconditions, edge attributes) are
//! decided here with the rules of `quince-model`; bytes are kept by `quince-storage`.
//!
//! What it is not: HTTP. It never sees a header or a status line; it returns
//! [`quince_errors::ArangoError`]s and the api layer renders them. Multi-document requests are
//! loops over the single-document operations in the api layer (inserts: one batched call,
//! [`Collection::insert_many_deferred`]): each item is independent.
//!
//! Invariants: a collection's documents live in one storage `Store` under
//! `<data>/databases/database-<id>/collection-<id>/`; a document's stored bytes are the JSON
//! object text with `_key` and `_rev` first and without `_id` (which depends on the collection's
//! name and is added when the document is read, so a rename never rewrites data); every
//! `_rev` comes from the catalog's one hybrid logical clock, so revisions are unique and
//! increasing across the server.

mod catalog;
mod checksum;
mod collection;
mod database;
mod debris;
mod documents;
mod documents_many;
mod durability;
mod maintenance;
mod options;
mod params;
mod shared;
mod users;

pub use catalog::{Catalog, CatalogStats, DbConfig, OPEN_FILES_MAX_DEFAULT};
pub use collection::{
    Collection, CollectionProperties, CollectionType, FiguresReport, StoredDocument,
};
pub use database::{CreateCollection, Database, PropertiesUpdate};
pub use documents::Deferred;
pub use durability::Durability;
pub use options::{OverwriteMode, WriteOptions, WriteOutcome};
pub use shared::JOURNAL_SIZE_MIN;
pub use users::{UserDocuments, USERS_COLLECTION, USER_DOCUMENTS_MAX};
