//! Quince's local engine: the catalog, its collections and their one write path, behind the
//! operations interface.
//!
//! What it is: the local engine behind the operations interface of `quince-ops` ([`Engine`],
//! [`DatabaseOps`], [`CollectionOps`]): [`Catalog`] (every database, persisted in the data
//! directory), [`Database`] (its collections), [`Collection`] (properties, counts, figures, and
//! the one write path with its hooks, [`DocumentHook`]). Document semantics (keys, `_rev`, key
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

mod backup;
mod catalog;
mod collection;
mod counters;
mod current;
mod database;
mod debris;
mod documents;
mod hooks;
mod index;
mod insert_text;
mod local;
mod maintenance;
mod params;
mod replicated;
mod shared;
mod transaction;
mod write_path;

pub use catalog::{Catalog, DbConfig, OPEN_FILES_MAX_DEFAULT, TTL_FREQUENCY_DEFAULT};
pub use collection::Collection;
pub use database::Database;
pub use documents::Deferred;
pub use hooks::{Change, DocumentHook, HookFactory, Version};
/// The operations interface and its values, which this crate implements (re-exported so the
/// engine's users name one crate).
pub use quince_ops::{
    check_journal_size, fake, BackupInfo, BackupRequest, CatalogStats, Checksum, CollectionOps,
    CollectionProperties, CollectionType, Completer, CreateCollection, DatabaseOps, Durability,
    Engine, Figures, FiguresReport, IndexDefinition, IndexDescription, IndexHit, IndexLookup,
    IndexType, OverwriteMode, PropertiesUpdate, ReadRequest, ReplicatedOp, StoredDocument,
    UserDocuments, WriteKind, WriteOptions, WriteOutcome, WriteRequest, WriteResults,
    BACKUP_TIMEOUT_DEFAULT, JOURNAL_SIZE_MIN, USERS_COLLECTION, USER_DOCUMENTS_MAX,
};
pub use transaction::IDLE_TIMEOUT_DEFAULT as TRANSACTION_IDLE_TIMEOUT_DEFAULT;
