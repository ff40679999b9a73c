//! The coordinator's implementation of the operations interface at its two upper levels:
//! [`CoordinatorEngine`] (databases) and [`CoordinatorDatabase`] (a database's collections);
//! the collections themselves are `collection.rs`'s.
//!
//! What it is: thin handles over the shared [`Context`]: catalog reads come from the Plan
//! cache, DDL from `ddl.rs`.
//!
//! What it is not: stream transactions themselves (`transaction.rs`; these handles begin and
//! find them).
//!
//! Invariants: every call may block on the network ([`Engine::blocks_on_network`] and
//! [`DatabaseOps::blocks_on_network`] are true); handles hold the context, never a catalog
//! view, so they always see the current Plan.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND};
use quince_ops::{
    CatalogStats, CollectionOps, CreateCollection, DatabaseOps, Engine, TransactionOps,
    TransactionOptions,
};
use serde_json::{json, Value};

use super::catalog::CollectionEntry;
use super::collection::CoordinatorCollection;
use super::context::Context;
use super::{ddl, transaction};

/// The databases of the cluster.
pub struct CoordinatorEngine {
    pub(super) ctx: Arc<Context>,
}

impl Engine for CoordinatorEngine {
    fn database(&self, name: &str) -> Option<Arc<dyn DatabaseOps>> {
        let catalog = self.ctx.cache.catalog();
        let plan = catalog.databases.get(name)?;
        Some(Arc::new(CoordinatorDatabase {
            ctx: self.ctx.clone(),
            name: name.to_string(),
            id: plan.id,
        }))
    }

    fn database_names(&self) -> Vec<String> {
        self.ctx.cache.catalog().databases.keys().cloned().collect()
    }

    fn create_database(&self, name: &str) -> Result<Arc<dyn DatabaseOps>> {
        self.create_database_with(name, &json!({}))
    }

    fn create_database_with(&self, name: &str, options: &Value) -> Result<Arc<dyn DatabaseOps>> {
        let plan = ddl::create_database(&self.ctx, name, options)?;
        Ok(Arc::new(CoordinatorDatabase {
            ctx: self.ctx.clone(),
            name: plan.name,
            id: plan.id,
        }))
    }

    fn drop_database(&self, name: &str) -> Result<()> {
        ddl::drop_database(&self.ctx, name)
    }

    fn stats(&self) -> CatalogStats {
        let catalog = self.ctx.cache.catalog();
        CatalogStats {
            databases: catalog.databases.len() as u64,
            collections: catalog.collections.values().map(|c| c.len() as u64).sum(),
            ..CatalogStats::default()
        }
    }

    fn blocks_on_network(&self) -> bool {
        true
    }
}

/// One database of the cluster.
pub struct CoordinatorDatabase {
    ctx: Arc<Context>,
    name: String,
    id: u64,
}

impl CoordinatorDatabase {
    fn handle(&self, entry: Arc<CollectionEntry>) -> Arc<dyn CollectionOps> {
        Arc::new(CoordinatorCollection::new(self.ctx.clone(), entry))
    }
}

impl DatabaseOps for CoordinatorDatabase {
    fn name(&self) -> &str {
        &self.name
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        let catalog = self.ctx.cache.catalog();
        catalog
            .collections_of(&self.name)
            .into_iter()
            .map(|entry| self.handle(entry))
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        let catalog = self.ctx.cache.catalog();
        catalog
            .collection(&self.name, name_or_id)
            .map(|entry| self.handle(entry))
            .ok_or_else(|| ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))
    }

    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        self.create_collection_with(request, &json!({}))
    }

    fn create_collection_with(
        &self,
        request: CreateCollection,
        body: &Value,
    ) -> Result<Arc<dyn CollectionOps>> {
        let plan = ddl::create_collection(&self.ctx, &self.name, &request, body)?;
        Ok(self.handle(Arc::new(CollectionEntry {
            db: self.name.clone(),
            plan,
        })))
    }

    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        ddl::drop_collection(&self.ctx, &self.name, name, is_system)
    }

    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        let plan = ddl::rename_collection(&self.ctx, &self.name, name, new_name)?;
        Ok(self.handle(Arc::new(CollectionEntry {
            db: self.name.clone(),
            plan,
        })))
    }

    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        transaction::begin(&self.ctx, &self.name, options).map(|t| t as Arc<dyn TransactionOps>)
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        transaction::find(&self.ctx, &self.name, id).map(|t| t as Arc<dyn TransactionOps>)
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        transaction::running(&self.ctx, &self.name)
            .into_iter()
            .map(|t| t as Arc<dyn TransactionOps>)
            .collect()
    }

    fn blocks_on_network(&self) -> bool {
        true
    }

    fn cluster_properties(&self) -> Option<Value> {
        let catalog = self.ctx.cache.catalog();
        let plan = catalog.databases.get(&self.name)?;
        Some(json!({
            "sharding": plan.sharding,
            "replicationFactor": plan.replication_factor,
            "writeConcern": plan.write_concern,
        }))
    }
}
