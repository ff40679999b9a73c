//! The database and collections as seen from inside a transaction: what the api resolves a
//! request's collection through when it carries `x-arango-trx-id`.
//!
//! What it is: [`TrxDatabase`] (a [`DatabaseOps`] whose collections are [`TrxCollection`]s)
//! and [`TrxCollection`] (a [`CollectionOps`] whose document reads, writes, count and
//! truncate run inside the transaction); [`Gone`] for a transaction whose database was
//! dropped.
//!
//! What it is not: a place of rules. Every call goes to the transaction (`write.rs`) or, for
//! what a transaction does not change (properties, figures, checksum), to the collection.
//!
//! Invariants: catalog changes through the view (collections and indexes) are refused (1653),
//! and so is a nested begin (1651); index lookups see the transaction's own writes; the collection-level answers a transaction does not change are the
//! committed collection's.

use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, TRANSACTION_DISALLOWED_OPERATION,
    TRANSACTION_NESTED,
};
use quince_ops::{
    CollectionOps, CollectionProperties, CollectionType, CreateCollection, DatabaseOps,
    FiguresReport, IndexDescription, IndexHit, IndexLookup, PropertiesUpdate, StoredDocument,
    TransactionOps, TransactionOptions, WriteRequest, WriteResults,
};
use serde_json::Value;

use crate::collection::Collection;
use crate::database::Database;

use super::Transaction;

fn disallowed(what: &str) -> ArangoError {
    ArangoError::with_message(
        TRANSACTION_DISALLOWED_OPERATION,
        format!("{what} is not allowed inside a stream transaction"),
    )
}

/// A database seen from inside a transaction.
pub(crate) struct TrxDatabase {
    transaction: Arc<Transaction>,
    database: Arc<Database>,
}

impl TrxDatabase {
    pub(crate) fn new(transaction: Arc<Transaction>, database: Arc<Database>) -> TrxDatabase {
        TrxDatabase {
            transaction,
            database,
        }
    }

    fn view(&self, collection: Arc<Collection>) -> Arc<dyn CollectionOps> {
        Arc::new(TrxCollection {
            transaction: Arc::clone(&self.transaction),
            collection,
        })
    }
}

impl DatabaseOps for TrxDatabase {
    fn name(&self) -> &str {
        self.database.name()
    }

    fn id(&self) -> u64 {
        self.database.id()
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        self.database
            .collections()
            .into_iter()
            .map(|c| self.view(c))
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        Ok(self.view(self.database.collection(name_or_id)?))
    }

    fn create_collection(&self, _request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Err(disallowed("creating a collection"))
    }

    fn drop_collection(&self, _name: &str, _is_system: bool) -> Result<u64> {
        Err(disallowed("dropping a collection"))
    }

    fn rename_collection(&self, _name: &str, _new: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(disallowed("renaming a collection"))
    }

    fn begin_transaction(&self, _options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Err(ArangoError::new(TRANSACTION_NESTED))
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        DatabaseOps::transaction(&*self.database, id)
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        DatabaseOps::running_transactions(&*self.database)
    }
}

/// A collection seen from inside a transaction.
pub(crate) struct TrxCollection {
    transaction: Arc<Transaction>,
    collection: Arc<Collection>,
}

impl CollectionOps for TrxCollection {
    fn name(&self) -> String {
        self.collection.name()
    }

    fn id(&self) -> u64 {
        self.collection.id()
    }

    fn kind(&self) -> CollectionType {
        self.collection.kind()
    }

    fn wait_for_sync(&self) -> bool {
        self.collection.wait_for_sync()
    }

    fn is_system(&self) -> bool {
        self.collection.is_system()
    }

    fn properties(&self) -> CollectionProperties {
        self.collection.properties()
    }

    fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties> {
        self.collection.update_properties(update)
    }

    fn count(&self) -> u64 {
        // The interface's count cannot fail; a finished transaction counts the committed data.
        self.transaction
            .count(&self.collection)
            .unwrap_or_else(|_| self.collection.count())
    }

    fn figures(&self) -> FiguresReport {
        self.collection.figures()
    }

    fn revision(&self) -> String {
        self.collection.revision()
    }

    fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        self.collection.checksum(with_revisions, with_data)
    }

    fn truncate(&self, _wait_for_sync: bool) -> Result<()> {
        self.transaction.truncate(&self.collection)
    }

    fn compact(&self) -> Result<()> {
        self.collection.compact()
    }

    fn read(&self, key: &str) -> Result<StoredDocument> {
        self.transaction.read(&self.collection, key)
    }

    fn read_rev(&self, key: &str) -> Result<String> {
        self.transaction.read_rev(&self.collection, key)
    }

    fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()> {
        self.transaction.scan(&self.collection, visit)
    }

    fn write(&self, request: WriteRequest) -> WriteResults {
        self.transaction.write(&self.collection, request)
    }

    fn indexes(&self) -> Vec<IndexDescription> {
        self.collection.indexes()
    }

    fn create_index(&self, _definition: &Value) -> Result<(IndexDescription, bool)> {
        Err(disallowed("creating an index"))
    }

    fn drop_index(&self, _id_or_name: &str) -> Result<IndexDescription> {
        Err(disallowed("dropping an index"))
    }

    fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        self.transaction
            .index_lookup(&self.collection, index_id, lookup, visit)
    }
}

/// The database of a transaction whose database was dropped: nothing is left to see.
pub(crate) struct Gone {
    transaction: Arc<Transaction>,
}

impl Gone {
    pub(crate) fn new(transaction: Arc<Transaction>) -> Gone {
        Gone { transaction }
    }
}

impl DatabaseOps for Gone {
    fn name(&self) -> &str {
        ""
    }

    fn id(&self) -> u64 {
        0
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        Vec::new()
    }

    fn collection(&self, _name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn create_collection(&self, _request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn drop_collection(&self, _name: &str, _is_system: bool) -> Result<u64> {
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn rename_collection(&self, _name: &str, _new: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn begin_transaction(&self, _options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        if id == self.transaction.id.to_string() {
            return Ok(Arc::clone(&self.transaction) as Arc<dyn TransactionOps>);
        }
        Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        Vec::new()
    }
}
