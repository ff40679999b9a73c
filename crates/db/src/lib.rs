//! Quince's database layer: the operations interface and the local engine behind it.
//!
//! What it is: [`ops`], the operations interface the api depends on ([`Engine`],
//! [`DatabaseOps`], [`CollectionOps`]: options in, one result per item out, an engine-neutral
//! [`Durability`] future), and its implementations: the local engine ([`Catalog`] (every
//! database, persisted in the data directory), [`Database`] (its collections), [`Collection`]
//! (properties, counts, figures, and the one write path with its hooks, [`DocumentHook`])) and
//! [`fake`], an in-memory engine for api tests. Document semantics (keys, `_rev`, key
//! generators, merge rules, preconditions, edge attributes) are decided here with the rules of
//! `quince-model`; bytes are kept by `quince-storage`.
//!
//! What it is not: HTTP. It never sees a header or a status line; it returns
//! [`quince_errors::ArangoError`]s and the api layer renders them. Multi-document requests are
//! not atomic: each item is independent.
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
mod durability;
pub mod fake;
mod hooks;
mod local;
mod maintenance;
pub mod ops;
mod options;
mod params;
mod shared;
mod users;
mod write_path;

pub use catalog::{Catalog, CatalogStats, DbConfig, OPEN_FILES_MAX_DEFAULT};
pub use collection::{
    Collection, CollectionProperties, CollectionType, FiguresReport, StoredDocument,
};
pub use database::{check_not_enforced, CreateCollection, Database, PropertiesUpdate};
pub use documents::Deferred;
pub use durability::{Completer, Durability};
pub use hooks::{Change, DocumentHook, HookFactory, Version};
pub use ops::{
    CollectionOps, DatabaseOps, Engine, ReadRequest, WriteKind, WriteRequest, WriteResults,
};
pub use options::{OverwriteMode, WriteOptions, WriteOutcome};
pub use shared::JOURNAL_SIZE_MIN;
pub use users::{UserDocuments, USERS_COLLECTION, USER_DOCUMENTS_MAX};
