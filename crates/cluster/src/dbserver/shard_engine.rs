//! [`ShardEngine`]: the engine the api serves on a DB server: the local engine, with every
//! shard collection (`s<id>`) wrapped so that its writes go through the shard's replication.
//!
//! What it is: thin wrappers of [`Engine`], [`DatabaseOps`] and [`CollectionOps`] that delegate
//! everything to the local engine, except the writes of a shard collection (document writes,
//! object-text inserts, truncate): those go to the [`super::leader::LeaderShard`] when this
//! server leads the shard at the Plan's epoch, and are refused with 1496 otherwise (followers
//! serve reads, never client writes). Stream transactions that write a shard are
//! [`ShardTransaction`]s (`transaction.rs`): their commits are replicated too.
//!
//! What it is not: the coordinator's engine (which routes clients to shards), or a filter on
//! anything that is not a shard: other collections behave as on a single server.
//!
//! Invariants: no write reaches a shard collection through this engine without the leader's
//! checks and replication; reads are never refused; the engine and its databases say their
//! calls may wait on the network (`blocks_on_network`) exactly while a shard's order lock is
//! held across requests to other servers, so that the api then keeps document requests, whose
//! writes would wait for that lock, off its runtime workers.

use std::sync::{Arc, Weak};

use quince_errors::{ArangoError, Result, CLUSTER_NOT_LEADER};
use quince_ops::{
    BackupInfo, BackupRequest, CatalogStats, CollectionOps, CreateCollection, DatabaseOps, Engine,
    TransactionOps, TransactionOptions, WriteRequest, WriteResults,
};

use super::forward::forward_to_local;
use super::leader::{refuse_all, LeaderShard};
use super::plan::is_shard_name;
use super::transaction::ShardTransaction;
use super::DbServer;
use crate::layout::ReplicationMode;

/// The DB server's engine (see the module documentation).
pub struct ShardEngine {
    local: Arc<dyn Engine>,
    server: Weak<DbServer>,
}

impl ShardEngine {
    /// Wraps `local` for `server`.
    pub fn new(local: Arc<dyn Engine>, server: Weak<DbServer>) -> ShardEngine {
        ShardEngine { local, server }
    }

    fn wrap(&self, database: Arc<dyn DatabaseOps>) -> Arc<dyn DatabaseOps> {
        Arc::new(ShardDatabase {
            local: database,
            server: self.server.clone(),
        })
    }
}

impl Engine for ShardEngine {
    fn database(&self, name: &str) -> Option<Arc<dyn DatabaseOps>> {
        self.local.database(name).map(|d| self.wrap(d))
    }

    fn database_names(&self) -> Vec<String> {
        self.local.database_names()
    }

    fn create_database(&self, name: &str) -> Result<Arc<dyn DatabaseOps>> {
        self.local.create_database(name).map(|d| self.wrap(d))
    }

    fn drop_database(&self, name: &str) -> Result<()> {
        self.local.drop_database(name)
    }

    fn stats(&self) -> CatalogStats {
        self.local.stats()
    }

    fn create_backup(&self, request: &BackupRequest) -> Result<BackupInfo> {
        self.local.create_backup(request)
    }

    fn list_backups(&self, id: Option<&str>) -> Result<Vec<BackupInfo>> {
        self.local.list_backups(id)
    }

    fn restore_backup(&self, id: &str) -> Result<String> {
        self.local.restore_backup(id)
    }

    fn delete_backup(&self, id: &str) -> Result<()> {
        self.local.delete_backup(id)
    }

    fn blocks_on_network(&self) -> bool {
        holds_order_on_network(&self.server)
    }
}

/// True while `server` holds a shard's order lock across requests to other servers
/// ([`DbServer::holds_order_on_network`]).
fn holds_order_on_network(server: &Weak<DbServer>) -> bool {
    server
        .upgrade()
        .is_some_and(|server| server.holds_order_on_network())
}

/// A database of the DB server's engine.
struct ShardDatabase {
    local: Arc<dyn DatabaseOps>,
    server: Weak<DbServer>,
}

impl ShardDatabase {
    fn wrap(&self, collection: Arc<dyn CollectionOps>) -> Arc<dyn CollectionOps> {
        if is_shard_name(&collection.name()) {
            Arc::new(ShardCollection {
                local: collection,
                database: self.local.name().to_owned(),
                server: self.server.clone(),
            })
        } else {
            collection
        }
    }
}

impl DatabaseOps for ShardDatabase {
    fn name(&self) -> &str {
        self.local.name()
    }

    fn id(&self) -> u64 {
        self.local.id()
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        self.local
            .collections()
            .into_iter()
            .map(|c| self.wrap(c))
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        self.local.collection(name_or_id).map(|c| self.wrap(c))
    }

    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        self.local.create_collection(request).map(|c| self.wrap(c))
    }

    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        self.local.drop_collection(name, is_system)
    }

    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        self.local
            .rename_collection(name, new_name)
            .map(|c| self.wrap(c))
    }

    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        let writes_a_shard = options
            .write
            .iter()
            .chain(&options.exclusive)
            .any(|name| is_shard_name(name));
        if !writes_a_shard {
            return self.local.begin_transaction(options);
        }
        let server = self.server.upgrade().ok_or_else(|| {
            ArangoError::with_message(CLUSTER_NOT_LEADER, "this DB server is shutting down")
        })?;
        let transaction = ShardTransaction::begin(&server, &self.local, options)?;
        server.register_transaction(&transaction);
        Ok(transaction)
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        let replicated = self
            .server
            .upgrade()
            .and_then(|server| server.replicated_transaction(self.local.name(), id));
        match replicated {
            Some(transaction) => Ok(transaction),
            None => self.local.transaction(id),
        }
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        self.local.running_transactions()
    }

    fn blocks_on_network(&self) -> bool {
        holds_order_on_network(&self.server)
    }
}

/// A shard collection of the DB server's engine.
struct ShardCollection {
    local: Arc<dyn CollectionOps>,
    database: String,
    server: Weak<DbServer>,
}

/// 1496: this server does not lead `shard` (at the Plan's epoch).
pub(super) fn not_leader(shard: &str) -> ArangoError {
    ArangoError::with_message(
        CLUSTER_NOT_LEADER,
        format!("this server does not lead shard {shard}"),
    )
}

impl ShardCollection {
    /// The shard's leader role on this server, with the collection's replication mode and
    /// write concern, while this server leads it (`None` otherwise, or once it stopped).
    fn leading(&self) -> Option<(Arc<LeaderShard>, ReplicationMode, u32)> {
        let server = self.server.upgrade()?;
        server.leading(&self.database, &self.local.name())
    }
}

impl CollectionOps for ShardCollection {
    forward_to_local!();

    fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        let (leader, mode, write_concern) = self
            .leading()
            .ok_or_else(|| not_leader(&self.local.name()))?;
        leader.truncate(&*self.local, wait_for_sync, mode, write_concern)
    }

    fn write(&self, request: WriteRequest) -> WriteResults {
        let sync = request.options.wait_for_sync || self.local.wait_for_sync();
        match self.leading() {
            Some((leader, mode, write_concern)) => {
                leader.write(&*self.local, request, mode, write_concern)
            }
            None => refuse_all(request.items.len(), not_leader(&self.local.name()), sync),
        }
    }
    fn insert_texts(
        &self,
        documents: Vec<quince_model::object_text::ObjectText>,
        options: quince_ops::WriteOptions,
    ) -> WriteResults {
        let sync = options.wait_for_sync || self.local.wait_for_sync();
        match self.leading() {
            Some((leader, mode, write_concern)) => {
                leader.insert_texts(&*self.local, documents, options, mode, write_concern)
            }
            None => refuse_all(documents.len(), not_leader(&self.local.name()), sync),
        }
    }
}
