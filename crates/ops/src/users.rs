//! [`UserDocuments`]: the `_users` system collection of `_system`, where accounts are kept.
//!
//! What it is: a small keyed store of JSON objects over one ordinary collection of any engine
//! behind the operations interface: open (creating the collection on first start), load every document, put one
//! (insert or replace, always synced), remove one.
//!
//! What it is not: the meaning of an account (names, password hashes, permissions, tokens).
//! That is `quince-auth`'s; here a user is a JSON object under a key.
//!
//! Invariants: every write is fsynced before it returns (a changed password or a revoked
//! permission must survive a crash); the collection is a system collection, so it cannot be
//! dropped by accident through the collection API without `isSystem=true`.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, INTERNAL};
use serde_json::Value;

use crate::catalog::{CollectionType, CreateCollection};
use crate::interface::{CollectionOps, Engine};
use crate::options::{OverwriteMode, WriteOptions};
use crate::request::{WriteKind, WriteRequest};

/// The name of the accounts collection (in `_system`).
pub const USERS_COLLECTION: &str = "_users";

/// The database that holds the accounts.
const SYSTEM_DATABASE: &str = "_system";

/// The most documents [`UserDocuments::load`] accepts, so a damaged or hostile collection
/// cannot make start-up allocate without bound.
pub const USER_DOCUMENTS_MAX: usize = 100_000;

/// The `_users` collection, as a keyed store of JSON objects.
pub struct UserDocuments {
    collection: Arc<dyn CollectionOps>,
}

impl UserDocuments {
    /// Opens `_system/_users`, creating it (synced) when it does not exist yet.
    pub fn open(engine: &dyn Engine) -> Result<UserDocuments> {
        let system = engine
            .database(SYSTEM_DATABASE)
            .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))?;
        let collection = match system.collection(USERS_COLLECTION) {
            Ok(collection) => collection,
            Err(_) => system.create_collection(CreateCollection {
                name: USERS_COLLECTION.to_owned(),
                kind: CollectionType::Document,
                wait_for_sync: Some(true),
                is_system: true,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            })?,
        };
        Ok(UserDocuments { collection })
    }

    /// Every stored document, as JSON objects (with `_key`, `_rev` and `_id`).
    pub fn load(&self) -> Result<Vec<Value>> {
        let mut documents = Vec::new();
        let mut failure = None;
        self.collection.scan(&mut |document| {
            if documents.len() >= USER_DOCUMENTS_MAX {
                failure = Some(ArangoError::with_message(
                    INTERNAL,
                    format!("more than {USER_DOCUMENTS_MAX} documents in {USERS_COLLECTION}"),
                ));
                return false;
            }
            match serde_json::from_slice::<Value>(&document.json) {
                Ok(document) => documents.push(document),
                Err(e) => {
                    failure = Some(ArangoError::with_message(
                        INTERNAL,
                        format!("unreadable document in {USERS_COLLECTION}: {e}"),
                    ));
                    return false;
                }
            }
            true
        })?;
        match failure {
            Some(error) => Err(error),
            None => Ok(documents),
        }
    }

    /// Stores `document` under `key` (inserting or replacing), synced before returning.
    pub fn put(&self, key: &str, document: Value) -> Result<()> {
        let Value::Object(mut object) = document else {
            panic!("a user document is a JSON object");
        };
        object.insert("_key".to_owned(), Value::String(key.to_owned()));
        object.remove("_rev");
        object.remove("_id");
        let options = WriteOptions {
            wait_for_sync: true,
            overwrite_mode: OverwriteMode::Replace,
            ..WriteOptions::default()
        };
        let request = WriteRequest::new(WriteKind::Insert, vec![Value::Object(object)], options);
        self.collection.write(request).settle_one()?;
        Ok(())
    }

    /// Removes the document under `key`, synced; a missing key is not an error.
    pub fn remove(&self, key: &str) -> Result<()> {
        let options = WriteOptions {
            wait_for_sync: true,
            ..WriteOptions::default()
        };
        let request = WriteRequest::one(WriteKind::Remove, key, Default::default(), options);
        match self.collection.write(request).settle_one() {
            Ok(_) => Ok(()),
            Err(e) if e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::fake::FakeEngine;

    #[test]
    fn documents_are_put_replaced_and_removed() {
        let engine = FakeEngine::new();
        let users = UserDocuments::open(&*engine).unwrap();
        assert!(users.load().unwrap().is_empty());
        users.put("ua", json!({"user": "a", "n": 1})).unwrap();
        users.put("ub", json!({"user": "b"})).unwrap();
        users.put("ua", json!({"user": "a", "n": 2})).unwrap();
        users.remove("ub").unwrap();
        users.remove("missing").unwrap();
        let loaded = UserDocuments::open(&*engine).unwrap().load().unwrap();
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0]["user"], "a");
        assert_eq!(loaded[0]["n"], 2);
        assert_eq!(loaded[0]["_key"], "ua");
        let system = engine.database("_system").unwrap();
        assert!(system.collection(USERS_COLLECTION).unwrap().is_system());
    }
}
