//! The catalog's values as the operations interface passes them: collection types and
//! properties, what create and property changes ask for, documents as read, figures, counters,
//! and the rules every engine applies to them alike (the smallest `journalSize`; `schema` and
//! `computedValues` are compiled by [`crate::WriteRules`]).
//!
//! What it is not: a catalog. Engines keep their databases and collections their own way.
//!
//! Invariants: plain values (no handles into an engine), so the api can hold them after a call.

use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER};
use serde_json::Value;

/// The smallest `journalSize` a collection may have.
pub const JOURNAL_SIZE_MIN: u64 = 1024 * 1024;

/// The type of a collection: 2 document, 3 edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectionType {
    /// A document collection (type 2).
    Document,
    /// An edge collection (type 3): documents need `_from` and `_to`.
    Edge,
}

impl CollectionType {
    /// The number ArangoDB uses.
    pub fn as_number(self) -> u64 {
        match self {
            CollectionType::Document => 2,
            CollectionType::Edge => 3,
        }
    }
}

/// The properties reported by `GET /_api/collection/{name}/properties` and friends.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionProperties {
    /// Numeric id.
    pub id: u64,
    /// Name.
    pub name: String,
    /// Type.
    pub kind: CollectionType,
    /// True for collections whose name starts with `_`.
    pub is_system: bool,
    /// `globallyUniqueId`.
    pub globally_unique_id: String,
    /// `waitForSync`.
    pub wait_for_sync: bool,
    /// `journalSize` in bytes.
    pub journal_size: u64,
    /// `keyOptions` as ArangoDB reports them (`type`, `allowUserKeys`, `lastValue`, ...).
    pub key_options: Value,
    /// `schema` as reported: `{message, level, type, rule}` (null when none).
    pub schema: Value,
    /// `computedValues` as reported, every option spelled out (null when none).
    pub computed_values: Value,
    /// `cacheEnabled`.
    pub cache_enabled: bool,
}

/// A document as read: its revision and its JSON text, `_id` included.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredDocument {
    /// `_rev` as a string (the ETag value).
    pub rev: String,
    /// The whole document as JSON text, with `_key`, `_id` and `_rev`.
    pub json: Vec<u8>,
}

/// `figures` as reported, in MMFiles's shape (the api layer renders it as JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FiguresReport {
    /// The engine's figures.
    pub storage: Figures,
    /// Number of indexes, the primary index included.
    pub index_count: u64,
    /// Each index (the primary index first) with its entries and memory, for
    /// `figures?details=true`.
    pub indexes: Vec<IndexFigures>,
}

/// One index's figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexFigures {
    /// The index id (0: primary).
    pub id: u64,
    /// The type's name (`primary`, `persistent`, `ttl`).
    pub kind: &'static str,
    /// Its entries (for the primary index: the documents).
    pub count: u64,
    /// An estimate of the memory its entries take, in bytes.
    pub memory: u64,
}

/// What an engine holds, in MMFiles's `figures` shape (the local engine's journal engine fills
/// every field; another engine fills what it has and leaves the rest 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Figures {
    /// Live records (current versions) and their bytes.
    pub alive_count: u64,
    /// Bytes of live records.
    pub alive_size: u64,
    /// Superseded or removed versions and their bytes.
    pub dead_count: u64,
    /// Bytes of dead records.
    pub dead_size: u64,
    /// Tombstones (deletion markers) still on disk.
    pub dead_deletion: u64,
    /// Sealed datafiles.
    pub datafiles_count: u64,
    /// Total bytes of sealed datafiles.
    pub datafiles_file_size: u64,
    /// Active journals.
    pub journals_count: u64,
    /// Bytes of the active journals.
    pub journals_file_size: u64,
    /// Compaction files in progress.
    pub compactors_count: u64,
    /// Bytes of compaction files in progress.
    pub compactors_file_size: u64,
    /// Bytes of the in-memory primary index (estimate).
    pub index_size: u64,
    /// Bytes of all live values (documents) on disk.
    pub documents_size: u64,
    /// The highest revision on disk (0 when empty).
    pub last_tick: u64,
    /// The maximal journal size in force.
    pub journal_size: u64,
}

/// Counters for metrics, summed over every collection.
#[derive(Clone, Debug, Default)]
pub struct CatalogStats {
    /// Databases.
    pub databases: u64,
    /// Collections.
    pub collections: u64,
    /// Live documents.
    pub documents: u64,
    /// Bytes appended to journals since start.
    pub journal_bytes_written: u64,
    /// fsyncs since start.
    pub syncs: u64,
    /// Journals sealed since start.
    pub journal_seals: u64,
    /// Compactions since start.
    pub compactions: u64,
    /// Document changes published since start (inserts, replaces, updates, removes, by any
    /// path: single, batch, import, AQL, stream transaction commit).
    pub document_writes: u64,
    /// Collection truncates since start.
    pub truncates: u64,
    /// Stream transactions begun since start.
    pub transactions_started: u64,
    /// Stream transactions committed since start.
    pub transactions_committed: u64,
    /// Stream transactions aborted since start (by the client, a failed commit, the idle
    /// timeout or a dropped database).
    pub transactions_aborted: u64,
}

/// What `POST /_api/collection` asks for, after the api layer picked it out of the body.
#[derive(Clone, Debug)]
pub struct CreateCollection {
    /// The name (validated here: 1208 when illegal).
    pub name: String,
    /// Document (2) or edge (3).
    pub kind: CollectionType,
    /// `waitForSync`; the server default when absent.
    pub wait_for_sync: Option<bool>,
    /// `isSystem`: a name starting with `_` requires it.
    pub is_system: bool,
    /// `keyOptions` as sent (validated here: 1232 / 400 on bad values).
    pub key_options: Option<Value>,
    /// `journalSize` in bytes; at least 1 MiB (400 "journalSize is too small").
    pub journal_size: Option<u64>,
    /// `schema` as sent (checked and compiled by the engine: 400/1621 when bad; `null` and
    /// `{}` are none).
    pub schema: Option<Value>,
    /// `computedValues` as sent (checked and compiled by the engine: 400/10 when bad; `null`
    /// and `[]` are none).
    pub computed_values: Option<Value>,
    /// `cacheEnabled`, kept and reported back.
    pub cache_enabled: Option<bool>,
}

/// What `PUT /_api/collection/{name}/properties` may change.
#[derive(Clone, Debug, Default)]
pub struct PropertiesUpdate {
    /// New `waitForSync`.
    pub wait_for_sync: Option<bool>,
    /// New `journalSize` (at least 1 MiB); applies to journals started from now on.
    pub journal_size: Option<u64>,
    /// New `schema` (`null` or `{}` removes it).
    pub schema: Option<Value>,
    /// New `computedValues` (`null` or `[]` removes them).
    pub computed_values: Option<Value>,
    /// New `cacheEnabled`.
    pub cache_enabled: Option<bool>,
}

/// 400/400 "journalSize is too small" under 1 MiB.
pub fn check_journal_size(size: u64) -> Result<()> {
    if size < JOURNAL_SIZE_MIN {
        Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "journalSize is too small",
        ))
    } else {
        Ok(())
    }
}
