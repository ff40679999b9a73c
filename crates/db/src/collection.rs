//! [`Collection`]: one collection's properties and its document operations.

use quince_errors::Result;
use serde_json::Value;

use crate::options::{WriteOptions, WriteOutcome};

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
    /// `schema` (null when none).
    pub schema: Value,
    /// `computedValues` (null when none).
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
    pub storage: quince_storage::Figures,
    /// Number of indexes (the primary index, plus the edge index for edge collections).
    pub index_count: u64,
}

/// One collection.
pub struct Collection {
    _private: (),
}

impl Collection {
    /// The current name.
    pub fn name(&self) -> String {
        todo!("db: Collection::name")
    }

    /// The numeric id.
    pub fn id(&self) -> u64 {
        todo!("db: Collection::id")
    }

    /// Document or edge.
    pub fn kind(&self) -> CollectionType {
        todo!("db: Collection::kind")
    }

    /// The collection's `waitForSync` property (cheap; the api uses it to decide whether a write
    /// may block on an fsync and must leave the async worker threads).
    pub fn wait_for_sync(&self) -> bool {
        todo!("db: Collection::wait_for_sync")
    }

    /// All properties.
    pub fn properties(&self) -> CollectionProperties {
        todo!("db: Collection::properties")
    }

    /// Changes properties (persisted). 400 for a journal size under 1 MiB.
    pub fn update_properties(
        &self,
        update: crate::database::PropertiesUpdate,
    ) -> Result<CollectionProperties> {
        let _ = update;
        todo!("db: Collection::update_properties")
    }

    /// Number of documents.
    pub fn count(&self) -> u64 {
        todo!("db: Collection::count")
    }

    /// What the engine holds.
    pub fn figures(&self) -> FiguresReport {
        todo!("db: Collection::figures")
    }

    /// The collection's revision: the highest `_rev` written (as a `_rev` string; "0" if none).
    pub fn revision(&self) -> String {
        todo!("db: Collection::revision")
    }

    /// The checksum as a decimal string ("0" when empty), over keys, and with the flags also
    /// over revisions and document data; and the revision.
    pub fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        let _ = (with_revisions, with_data);
        todo!("db: Collection::checksum")
    }

    /// Removes every document.
    pub fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        let _ = wait_for_sync;
        todo!("db: Collection::truncate")
    }

    /// Compacts the datafiles now.
    pub fn compact(&self) -> Result<()> {
        todo!("db: Collection::compact")
    }

    /// Reads a document. 1202 if missing, 1221 for a syntactically bad key... (ArangoDB answers
    /// 404/1202 for any key it cannot find, including illegal ones).
    pub fn read(&self, key: &str) -> Result<StoredDocument> {
        let _ = key;
        todo!("db: Collection::read")
    }

    /// The current `_rev` of a document without reading it (for HEAD and If-None-Match).
    pub fn read_rev(&self, key: &str) -> Result<String> {
        let _ = key;
        todo!("db: Collection::read_rev")
    }

    /// Inserts one document (an object; 1227 otherwise).
    pub fn insert(&self, document: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        let _ = (document, options);
        todo!("db: Collection::insert")
    }

    /// Replaces the document `key` with `document`.
    pub fn replace(
        &self,
        key: &str,
        document: Value,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let _ = (key, document, options);
        todo!("db: Collection::replace")
    }

    /// Updates (merges into) the document `key`.
    pub fn update(&self, key: &str, patch: Value, options: &WriteOptions) -> Result<WriteOutcome> {
        let _ = (key, patch, options);
        todo!("db: Collection::update")
    }

    /// Removes the document `key`; `expected_rev` is a `_rev` precondition from the selector
    /// (checked when `ignore_revs` is false) — `if_match` in the options is always checked.
    pub fn remove(
        &self,
        key: &str,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<WriteOutcome> {
        let _ = (key, expected_rev, options);
        todo!("db: Collection::remove")
    }
}
