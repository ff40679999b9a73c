//! The traits of the operations interface.
//!
//! What it is: three object-safe traits, one per level of ArangoDB's URL space: [`Engine`]
//! (databases), [`DatabaseOps`] (a database's collections) and [`CollectionOps`] (a
//! collection's properties and documents). Document writes take a [`WriteRequest`] (options
//! in; inserts may also come as checked object text, [`CollectionOps::insert_texts`]) and give
//! [`WriteResults`] (one result per item out, and an engine-neutral
//! [`crate::Durability`] future); bulk reads take a [`ReadRequest`] and hand each item's result
//! to a visitor. Implementations: the local engine (`quince-db`), the in-memory fake
//! ([`crate::fake`], for api tests and the conformance suite), and later a cluster
//! coordinator.
//!
//! What it is not: HTTP. No status line or header is chosen here; the api maps results onto
//! them. Nor is it the place of any per-document rule: those are shared (`request.rs`) or the
//! engine's own (the local engine's write path).
//!
//! Invariants (every implementation; `tests/ops_conformance.rs` checks them on each):
//! - a write request answers one result per item, in input order, and never fails as a whole;
//!   items are independent;
//! - the durability handle is present when the effective `waitForSync` is true and something
//!   was written, and resolving it means every write of the request is durable; an engine that
//!   must wait for more than the local disk before a write may be acknowledged (a DB server's
//!   shard leader waits for its in-sync followers) also hands one out when `waitForSync` is
//!   false: resolving it then means the write is acknowledged (replicated), while
//!   [`WriteResults::synced`] still says whether it was fsynced (201 or 202);
//! - calls may block (they touch files or the network): async callers run them on a blocking
//!   pool, except the single-document reads and writes that an engine documents as cheap.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, NOT_IMPLEMENTED};
use quince_model::object_text::ObjectText;
use serde_json::Value;

use crate::backup::{BackupInfo, BackupRequest};
use crate::catalog::{
    CatalogStats, CollectionProperties, CollectionType, CreateCollection, FiguresReport,
    PropertiesUpdate, StoredDocument,
};
use crate::index::{IndexDescription, IndexHit, IndexLookup};
use crate::options::WriteOptions;
use crate::replicated::ReplicatedOp;
use crate::request::{read_conflict, selector, ReadRequest, WriteKind, WriteRequest, WriteResults};
use crate::scan::{ScanCounts, ScanHints};
use crate::transaction::{TransactionOps, TransactionOptions};

/// The databases of a server.
pub trait Engine: Send + Sync {
    /// The database of that name, if it exists.
    fn database(&self, name: &str) -> Option<Arc<dyn DatabaseOps>>;

    /// Every database's name, sorted.
    fn database_names(&self) -> Vec<String>;

    /// Creates a database (1207 duplicate, 1229 bad name). Blocks on file system work.
    fn create_database(&self, name: &str) -> Result<Arc<dyn DatabaseOps>>;

    /// Drops a database and every collection in it (1228 missing, 1230 `_system`). Blocks.
    fn drop_database(&self, name: &str) -> Result<()>;

    /// Counters for metrics.
    fn stats(&self) -> CatalogStats;

    /// Takes a hot backup of every database (`crate::BackupRequest`). Blocks. Engines
    /// without backups answer 501 (errorNum 9).
    fn create_backup(&self, request: &BackupRequest) -> Result<BackupInfo> {
        let _ = request;
        Err(ArangoError::new(NOT_IMPLEMENTED))
    }

    /// Every complete backup, sorted by id; only `id` when given (404/7007 if none). Blocks.
    fn list_backups(&self, id: Option<&str>) -> Result<Vec<BackupInfo>> {
        let _ = id;
        Err(ArangoError::new(NOT_IMPLEMENTED))
    }

    /// Replaces every database by the backup's state and restarts the engine in place;
    /// answers the id of the backup that now holds the state before (404/7007 if none).
    /// Handles taken before it answer errors afterwards. Blocks.
    fn restore_backup(&self, id: &str) -> Result<String> {
        let _ = id;
        Err(ArangoError::new(NOT_IMPLEMENTED))
    }

    /// Deletes a backup (404/7007 if none). Blocks.
    fn delete_backup(&self, id: &str) -> Result<()> {
        let _ = id;
        Err(ArangoError::new(NOT_IMPLEMENTED))
    }

    /// True when every call may wait on the network (a cluster coordinator): the api then runs
    /// even the single-document reads and writes on its blocking pool. False by default (the
    /// local engine's single-document calls are cheap).
    fn blocks_on_network(&self) -> bool {
        false
    }

    /// Creates a database with the create body's `options` (a JSON object: in a cluster
    /// `sharding`, `replicationFactor`, `writeConcern`). By default the options are ignored,
    /// as a single ArangoDB server ignores them.
    fn create_database_with(&self, name: &str, options: &Value) -> Result<Arc<dyn DatabaseOps>> {
        let _ = options;
        self.create_database(name)
    }
}

/// One database: its collections.
pub trait DatabaseOps: Send + Sync {
    /// The name.
    fn name(&self) -> &str;

    /// The numeric id.
    fn id(&self) -> u64;

    /// True for `_system`.
    fn is_system(&self) -> bool {
        self.name() == "_system"
    }

    /// Every collection, sorted by name.
    fn collections(&self) -> Vec<Arc<dyn CollectionOps>>;

    /// The collection with that name or numeric id (1203 if none).
    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>>;

    /// Creates a collection (1208 bad name, 1207 duplicate, 400 bad options). Blocks.
    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>>;

    /// Drops a collection (a system one only with `is_system`: 403/11); its id. Blocks.
    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64>;

    /// Renames a collection (1207 when the new name is taken). Blocks.
    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>>;

    /// Begins a stream transaction (1203 for a collection that does not exist, 18 when a lock
    /// is not granted within `lockTimeout`, 32 when a client stream transaction finds no slot
    /// left for its beginner: [`crate::Slots`]). Blocks while it waits for locks.
    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>>;

    /// A transaction of this database by id, running or recently finished, whoever began it
    /// (1655 if none: [`crate::transaction_not_found`]). Who may use it is the api's check.
    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>>;

    /// The running transactions, whoever began them.
    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>>;

    /// True when this database's calls may wait on the network (a cluster coordinator's):
    /// the api then runs even its single-document reads and writes on the blocking pool. The
    /// same as [`Engine::blocks_on_network`] of the engine that gave it out; false by default.
    fn blocks_on_network(&self) -> bool {
        false
    }

    /// The database's cluster options as `GET /_api/database/current` reports them
    /// (`sharding`, `replicationFactor`, `writeConcern`); `None` (the default) outside a
    /// cluster, where they are not reported.
    fn cluster_properties(&self) -> Option<Value> {
        None
    }

    /// Creates a collection with the create body's cluster options (`body`: the whole create
    /// body as sent; an engine in a cluster reads `numberOfShards`, `shardKeys`,
    /// `replicationFactor`, ...). By default they are ignored, as a single ArangoDB server
    /// ignores them.
    fn create_collection_with(
        &self,
        request: CreateCollection,
        body: &Value,
    ) -> Result<Arc<dyn CollectionOps>> {
        let _ = body;
        self.create_collection(request)
    }
}

/// One collection: its properties and its documents.
pub trait CollectionOps: Send + Sync {
    /// The current name.
    fn name(&self) -> String;

    /// The numeric id.
    fn id(&self) -> u64;

    /// Document or edge.
    fn kind(&self) -> CollectionType;

    /// The collection's `waitForSync` property.
    fn wait_for_sync(&self) -> bool;

    /// True for a system collection.
    fn is_system(&self) -> bool;

    /// Every property.
    fn properties(&self) -> CollectionProperties;

    /// Changes properties (persisted). Blocks.
    fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties>;

    /// Number of documents.
    fn count(&self) -> u64;

    /// What the engine holds.
    fn figures(&self) -> FiguresReport;

    /// The highest `_rev` written ("0" if none).
    fn revision(&self) -> String;

    /// The collection's cluster properties as properties report them (`numberOfShards`,
    /// `shardKeys`, `replicationFactor`, `writeConcern`, `minReplicationFactor`,
    /// `shardingStrategy`, `distributeShardsLike`, ...); `None` (the default) outside a
    /// cluster, where they are not reported.
    fn cluster_properties(&self) -> Option<serde_json::Map<String, Value>> {
        None
    }

    /// Applies the cluster properties of a properties change (`PUT .../properties` body as
    /// sent: `replicationFactor`, `writeConcern`, `minReplicationFactor`). A single server
    /// ignores them, as ArangoDB's does (the default).
    fn update_cluster_properties(&self, body: &Value) -> Result<()> {
        let _ = body;
        Ok(())
    }

    /// `GET /_api/collection/{c}/shards`: the shard names (an array), or with `details` an
    /// object of each shard's servers, leader first. A single server answers 501 (the
    /// default: [`cluster_only`]).
    fn shards(&self, details: bool) -> Result<Value> {
        let _ = details;
        Err(cluster_only())
    }

    /// `PUT /_api/collection/{c}/responsibleShard`: the shard that holds (or would hold) a
    /// document with these attributes. A single server answers 501 (the default:
    /// [`cluster_only`]).
    fn responsible_shard(&self, document: &Value) -> Result<String> {
        let _ = document;
        Err(cluster_only())
    }

    /// The checksum and the revision. Blocks (reads every document with `with_data`).
    fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)>;

    /// Removes every document; durable on return when `wait_for_sync` or the collection's
    /// says so. Blocks.
    fn truncate(&self, wait_for_sync: bool) -> Result<()>;

    /// Compacts the files now. Blocks.
    fn compact(&self) -> Result<()>;

    /// Applies the changes a shard's leader shipped, in order, as they are
    /// ([`ReplicatedOp`]: documents stored whole with their `_key` and `_rev`, removals by key,
    /// truncates), with no key generation, schema or computed values; secondary indexes follow.
    /// Durable on return when `wait_for_sync` (or the collection's) says so. The first
    /// operation that cannot be applied stops the batch with its error (the operations before
    /// it stay applied). Engines that hold no shards answer 501 (errorNum 9). Blocks.
    fn apply_replicated(&self, ops: &[ReplicatedOp], wait_for_sync: bool) -> Result<()> {
        let _ = (ops, wait_for_sync);
        Err(ArangoError::new(NOT_IMPLEMENTED))
    }

    /// One document (404/1202 when missing).
    fn read(&self, key: &str) -> Result<StoredDocument>;

    /// The current `_rev` of a document (404/1202 when missing).
    fn read_rev(&self, key: &str) -> Result<String>;

    /// Reads each selected document, handing each item's result to `visit` in order until it
    /// returns false. By default item by item through [`CollectionOps::read`], with the shared
    /// rules of [`read_each`]; an engine overrides it when it can read many at once.
    fn read_many(
        &self,
        request: &ReadRequest,
        visit: &mut dyn FnMut(Result<StoredDocument>) -> bool,
    ) -> Result<()> {
        read_each(self, request, visit);
        Ok(())
    }

    /// Visits every document (as [`CollectionOps::read`] renders it), in no particular order,
    /// until `visit` returns false. Documents written during the visit may or may not be
    /// seen. Blocks (reads every document).
    fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()>;

    /// [`CollectionOps::scan`] with what the caller will do with the documents
    /// ([`ScanHints`]), for an engine that can do it where the documents are (a cluster
    /// coordinator sends it to the shards). What it did there is answered (`None`: nothing,
    /// every document was handed over as `scan` hands it). By default the hints are ignored.
    fn scan_hinted(
        &self,
        hints: &ScanHints,
        visit: &mut dyn FnMut(StoredDocument) -> bool,
    ) -> Result<Option<ScanCounts>> {
        let _ = hints;
        self.scan(visit).map(|()| None)
    }

    /// Writes each item of `request` (see [`WriteResults`]).
    fn write(&self, request: WriteRequest) -> WriteResults;

    /// Inserts each of `documents`, bodies checked as object text: the same as [`write`] of an
    /// insert request whose items are the documents' objects, which is what this default does.
    /// An engine overrides it to store the text without building a tree.
    ///
    /// [`write`]: CollectionOps::write
    fn insert_texts(&self, documents: Vec<ObjectText>, options: WriteOptions) -> WriteResults {
        let items = documents
            .iter()
            .map(|document| Value::Object(document.to_object()))
            .collect();
        self.write(WriteRequest::new(WriteKind::Insert, items, options))
    }

    /// Every index: the primary index first (id 0, name `primary`, over `_key`), in an edge
    /// collection the edge index next (id 1, name `edge`, over `_from` and `_to`:
    /// [`IndexDescription::edge`]), then the others in creation order, each with its current
    /// `selectivityEstimate`.
    fn indexes(&self) -> Vec<IndexDescription>;

    /// Creates an index from a create body (`POST /_api/index`, parsed by
    /// [`crate::IndexDefinition::parse`]), or finds the existing one that body asks for: the
    /// description and whether it is new. A new index is built over the existing documents
    /// before this returns (writers of the collection wait meanwhile); a unique index over
    /// documents that already share values is 1210 and leaves no index. 1207 when another
    /// index has the name (`edge` is the edge index's in an edge collection). Blocks.
    fn create_index(&self, definition: &Value) -> Result<(IndexDescription, bool)>;

    /// Drops the index of that id or name (the primary index cannot be: 1212, as it is never
    /// found among the droppable ones; a missing index is 1212 too; the edge index of an edge
    /// collection cannot be either: 403/11). Its description. Blocks.
    fn drop_index(&self, id_or_name: &str) -> Result<IndexDescription>;

    /// Hands the entries of index `index_id` that `lookup` selects to `visit`, in index order
    /// (reversed when asked), until it returns false. 1212 for an index that does not exist
    /// (or the primary index, which has no entries of this kind); 400/10 for a lookup on more
    /// fields than the index has, and for a lookup of the wrong form (the edge index takes
    /// [`IndexLookup::Edge`] only, and only the edge index takes it). `visit` runs with no lock of the collection held (it may
    /// read or write the collection); writes made during a visit may or may not be seen.
    fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()>;

    /// [`CollectionOps::index_lookup`] for a caller that reads only the hits' values and keys
    /// (`documents` false: an engine need not attach [`IndexHit::document`], and a coordinator
    /// then has its shards send only what the hits are made of). By default the same lookup.
    fn index_lookup_with(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        documents: bool,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        let _ = documents;
        self.index_lookup(index_id, lookup, visit)
    }
}

/// The 501 a single server answers to the cluster-only collection resources (`shards`,
/// `responsibleShard`).
pub fn cluster_only() -> ArangoError {
    ArangoError::with_message(NOT_IMPLEMENTED, "shards API is only available in a cluster")
}

/// The stored JSON of an index hit's document: the one the hit carried
/// ([`IndexHit::document`], copied by the caller while visiting), else read by key; `None`
/// when the document was removed since the lookup (as if the lookup had come later).
pub fn hit_document<C: CollectionOps + ?Sized>(
    collection: &C,
    key: &str,
    carried: Option<Vec<u8>>,
) -> Result<Option<Vec<u8>>> {
    if let Some(json) = carried {
        return Ok(Some(json));
    }
    match collection.read(key) {
        Ok(document) => Ok(Some(document.json)),
        Err(error) if error.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Reads each selected document of `collection` with its own `read`, by the rules every
/// engine shares: selectors parsed, a `_rev` checked unless revisions are ignored.
pub fn read_each<C: CollectionOps + ?Sized>(
    collection: &C,
    request: &ReadRequest,
    visit: &mut dyn FnMut(Result<StoredDocument>) -> bool,
) {
    let own_name = collection.name();
    for item in &request.selectors {
        let document = selector(item, &own_name).and_then(|(key, rev)| {
            let document = collection.read(key)?;
            match rev {
                Some(expected) if !request.ignore_revs && expected != document.rev => {
                    Err(read_conflict())
                }
                _ => Ok(document),
            }
        });
        if !visit(document) {
            return;
        }
    }
}
