//! The local engine behind the operations interface: [`Catalog`], [`Database`] and
//! [`Collection`] implement [`Engine`], [`DatabaseOps`] and [`CollectionOps`].
//!
//! What it is: delegation to the types' own methods, nothing more; the work is theirs (the
//! catalog's files, the write path of `write_path.rs`, the store's reads).
//!
//! What it is not: a second set of rules. Anything an implementation must share with others
//! lives in `ops::request`.
//!
//! Invariants: the single-document reads and writes of a collection never fsync and never
//! block on another thread's fsync (a synced write returns a durability handle); everything
//! else may touch files and block.

use std::sync::Arc;

use quince_errors::Result;
use quince_model::object_text::ObjectText;

use quince_ops::{
    BackupInfo, BackupRequest, CatalogStats, CollectionOps, CollectionProperties, CollectionType,
    CreateCollection, DatabaseOps, Engine, FiguresReport, IndexDescription, IndexHit, IndexLookup,
    PropertiesUpdate, ReplicatedOp, StoredDocument, TransactionOps, TransactionOptions,
    WriteOptions, WriteRequest, WriteResults,
};
use serde_json::Value;

use crate::catalog::Catalog;
use crate::collection::Collection;
use crate::database::Database;

impl Engine for Catalog {
    fn database(&self, name: &str) -> Option<Arc<dyn DatabaseOps>> {
        Catalog::database(self, name).map(|d| d as Arc<dyn DatabaseOps>)
    }

    fn database_names(&self) -> Vec<String> {
        Catalog::database_names(self)
    }

    fn create_database(&self, name: &str) -> Result<Arc<dyn DatabaseOps>> {
        Ok(Catalog::create_database(self, name)?)
    }

    fn drop_database(&self, name: &str) -> Result<()> {
        Catalog::drop_database(self, name)
    }

    fn stats(&self) -> CatalogStats {
        Catalog::stats(self)
    }

    fn create_backup(&self, request: &BackupRequest) -> Result<BackupInfo> {
        Catalog::create_backup(self, request)
    }

    fn list_backups(&self, id: Option<&str>) -> Result<Vec<BackupInfo>> {
        Catalog::list_backups(self, id)
    }

    fn restore_backup(&self, id: &str) -> Result<String> {
        Catalog::restore_backup(self, id)
    }

    fn delete_backup(&self, id: &str) -> Result<()> {
        Catalog::delete_backup(self, id)
    }
}

impl DatabaseOps for Database {
    fn name(&self) -> &str {
        Database::name(self)
    }

    fn id(&self) -> u64 {
        Database::id(self)
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        Database::collections(self)
            .into_iter()
            .map(|c| c as Arc<dyn CollectionOps>)
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        Ok(Database::collection(self, name_or_id)?)
    }

    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Ok(Database::create_collection(self, request)?)
    }

    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        Database::drop_collection(self, name, is_system)
    }

    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        Ok(Database::rename_collection(self, name, new_name)?)
    }

    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Database::begin_transaction(self, options)
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        Ok(self.transactions().get(id)?)
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        self.transactions()
            .running()
            .into_iter()
            .map(|t| t as Arc<dyn TransactionOps>)
            .collect()
    }
}

impl CollectionOps for Collection {
    fn name(&self) -> String {
        Collection::name(self)
    }

    fn id(&self) -> u64 {
        Collection::id(self)
    }

    fn kind(&self) -> CollectionType {
        Collection::kind(self)
    }

    fn wait_for_sync(&self) -> bool {
        Collection::wait_for_sync(self)
    }

    fn is_system(&self) -> bool {
        Collection::is_system(self)
    }

    fn properties(&self) -> CollectionProperties {
        Collection::properties(self)
    }

    fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties> {
        Collection::update_properties(self, update)
    }

    fn count(&self) -> u64 {
        Collection::count(self)
    }

    fn figures(&self) -> FiguresReport {
        Collection::figures(self)
    }

    fn revision(&self) -> String {
        Collection::revision(self)
    }

    fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        Collection::checksum(self, with_revisions, with_data)
    }

    fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        Collection::truncate(self, wait_for_sync)
    }

    fn compact(&self) -> Result<()> {
        Collection::compact(self)
    }

    fn apply_replicated(&self, ops: &[ReplicatedOp], wait_for_sync: bool) -> Result<()> {
        Collection::apply_replicated(self, ops, wait_for_sync)
    }

    fn read(&self, key: &str) -> Result<StoredDocument> {
        Collection::read(self, key)
    }

    fn read_rev(&self, key: &str) -> Result<String> {
        Collection::read_rev(self, key)
    }

    fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()> {
        Collection::scan(self, visit)
    }

    fn write(&self, request: WriteRequest) -> WriteResults {
        Collection::write(self, request)
    }

    fn insert_texts(&self, documents: Vec<ObjectText>, options: WriteOptions) -> WriteResults {
        Collection::insert_texts(self, documents, options)
    }

    fn indexes(&self) -> Vec<IndexDescription> {
        Collection::indexes(self)
    }

    fn create_index(&self, definition: &Value) -> Result<(IndexDescription, bool)> {
        Collection::create_index(self, definition)
    }

    fn drop_index(&self, id_or_name: &str) -> Result<IndexDescription> {
        Collection::drop_index(self, id_or_name)
    }

    fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        Collection::index_lookup(self, index_id, lookup, visit)
    }
}
