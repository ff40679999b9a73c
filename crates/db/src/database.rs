//! [`Database`]: one database and its collections.

use std::sync::Arc;

use quince_errors::Result;
use serde_json::Value;

use crate::collection::{Collection, CollectionType};

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
    /// `schema` (object or null), kept and reported back.
    pub schema: Option<Value>,
    /// `computedValues` (array or null), kept and reported back.
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
    /// New `schema`.
    pub schema: Option<Value>,
    /// New `computedValues`.
    pub computed_values: Option<Value>,
    /// New `cacheEnabled`.
    pub cache_enabled: Option<bool>,
}

/// One database.
pub struct Database {
    _private: (),
}

impl Database {
    /// The name.
    pub fn name(&self) -> &str {
        todo!("db: Database::name")
    }

    /// The numeric id (reported as a decimal string).
    pub fn id(&self) -> u64 {
        todo!("db: Database::id")
    }

    /// True for `_system`.
    pub fn is_system(&self) -> bool {
        self.name() == "_system"
    }

    /// Every collection, sorted by name.
    pub fn collections(&self) -> Vec<Arc<Collection>> {
        todo!("db: Database::collections")
    }

    /// The collection with that name, or with that numeric id. 1203 if none.
    pub fn collection(&self, name_or_id: &str) -> Result<Arc<Collection>> {
        let _ = name_or_id;
        todo!("db: Database::collection")
    }

    /// Creates a collection. 1208 bad name, 1207 duplicate, 400 bad options.
    pub fn create_collection(&self, request: CreateCollection) -> Result<Arc<Collection>> {
        let _ = request;
        todo!("db: Database::create_collection")
    }

    /// Drops a collection and its files; a system collection needs `is_system` (else 403/1004...
    /// as ArangoDB: 403 forbidden). Returns the dropped collection's id.
    pub fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        let _ = (name, is_system);
        todo!("db: Database::drop_collection")
    }

    /// Renames a collection (renaming to its own name succeeds). 1207 if the new name is taken.
    pub fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<Collection>> {
        let _ = (name, new_name);
        todo!("db: Database::rename_collection")
    }
}
