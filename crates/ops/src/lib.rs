//! Quince's operations interface: the document and catalog operations every engine offers, as
//! the api sees them.
//!
//! What it is: three object-safe traits, one per level of ArangoDB's URL space: [`Engine`]
//! (databases), [`DatabaseOps`] (a database's collections) and [`CollectionOps`] (a
//! collection's properties and documents); their requests and results ([`WriteRequest`]:
//! options in; [`WriteResults`]: one result per item out, and an engine-neutral
//! [`Durability`] future); the rules every engine shares (selectors, `_key` of replace and
//! update items, revision preconditions, the smallest journal size, the checksum); the rules
//! a collection's `schema` and `computedValues` add to its writes ([`WriteRules`]: JSON Schema
//! levels, computed values over an [`ExpressionCompiler`] that `quince-aql` implements);
//! named graph definitions ([`graph`]: the `_graphs` documents gharial writes and AQL reads);
//! secondary indexes as every engine shares them
//! ([`IndexDefinition`]: create bodies and stored definitions; [`IndexSpec`]: a document's
//! entries; [`IndexLookup`]/[`IndexHit`]: what the executor asks and gets); [`UserDocuments`],
//! the `_users` store over any engine; [`guard`], a database as one caller may use it (every
//! collection it hands out passed an [`AccessRule`]); and [`fake`], an in-memory engine for
//! tests and the conformance suite.
//!
//! What it is not: an engine. The local engine (`quince-db`, over the journal engine of
//! `quince-storage`) and later a cluster coordinator implement these traits; this crate depends
//! on neither, so the api, which depends on this crate alone, cannot reach past the interface.
//! Nor is it HTTP: no status line or header is chosen here.
//!
//! Invariants (every implementation; `quince-db`'s `tests/ops_conformance.rs` checks them on
//! each): a write request answers one result per item, in input order, and never fails as a
//! whole; the durability handle is present exactly when the effective `waitForSync` is true and
//! something was written, and resolving it means every write of the request is durable.

mod access;
mod backup;
mod catalog;
mod checksum;
mod cluster;
mod computed;
mod durability;
pub mod fake;
pub mod graph;
mod index;
mod interface;
mod options;
mod replicated;
mod request;
mod rules;
mod scan;
mod schema;
mod transaction;
mod users;

pub use access::{guard, AccessKind, AccessRule};
pub use backup::{BackupInfo, BackupRequest, BACKUP_TIMEOUT_DEFAULT, BACKUP_TIMEOUT_MAX};
pub use catalog::{
    check_journal_size, CatalogStats, CollectionProperties, CollectionType, CreateCollection,
    Figures, FiguresReport, IndexFigures, PropertiesUpdate, StoredDocument, JOURNAL_SIZE_MIN,
};
pub use checksum::Checksum;
pub use cluster::{
    ClusterOps, ForwardedReply, ForwardedRequest, InternalReply, InternalRequest, ServerRole,
    FORWARDED, FORWARDED_FOR,
};
pub use computed::{ComputedExpression, ComputedValues, ExpressionCompiler};
pub use durability::{Completer, Durability};
pub use index::{
    compare_entries, edge_selectivity, fulltext, geo, stored_edge_ends, ttl_seconds, EdgeDirection,
    FieldPath, FulltextQuery, GeoOptions, IndexDefinition, IndexDescription, IndexHit, IndexLookup,
    IndexSpec, IndexType, Rectangle, EDGE_INDEX_ID, EDGE_INDEX_NAME, ENTRIES_PER_DOCUMENT_MAX,
};
pub use interface::{cluster_only, hit_document, read_each, CollectionOps, DatabaseOps, Engine};
pub use options::{OverwriteMode, WriteOptions, WriteOutcome};
pub use replicated::ReplicatedOp;
pub use request::{
    check_revisions, parse_item, parse_items, read_conflict, selector, DocumentOp, ReadRequest,
    WriteKind, WriteRequest, WriteResults,
};
pub use rules::{RuleInput, WriteRules};
pub use scan::{ScanCounts, ScanHints, SCAN_VARIABLE};
pub use schema::{Schema, SchemaLevel, WriteEvent};
pub use transaction::{
    transaction_not_found, Beginner, Rank, Slots, TransactionOps, TransactionOptions,
    TransactionStatus, LOCK_TIMEOUT_DEFAULT, MAX_TRANSACTION_SIZE_DEFAULT, RUNNING_ADMIN_RESERVE,
    RUNNING_MAX, RUNNING_PER_USER_MAX, RUNNING_READ_ONLY_MAX,
};
pub use users::{UserDocuments, USERS_COLLECTION, USER_DOCUMENTS_MAX};
