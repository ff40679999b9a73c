//! [`Database`]: one database and its collections.
//!
//! What it is: the registry of a database's collections by name, and the collection-level
//! catalog changes (create, drop, rename) with ArangoDB's rules and errors.
//!
//! What it is not: document operations (those are on [`Collection`]) or the list of databases
//! (the catalog's).
//!
//! Invariants: names are unique within a database; catalog changes of one database are
//! serialised by one lock, and each is durable (its `parameter.json` written) before it is
//! visible; a drop commits by renaming the directory as dropped (`crate::debris`), then
//! deletes it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::{Mutex, RwLock};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATA_SOURCE_NOT_FOUND,
    ARANGO_DUPLICATE_NAME, FORBIDDEN,
};
use quince_model::keygen::{KeyGenerator, KeyOptions};
use quince_model::names::validate_collection_name;
use serde_json::Value;

use quince_ops::{check_journal_size, CreateCollection, TransactionOps, TransactionOptions};

use crate::collection::{remove_dir, Collection};
use crate::debris::{self, dropped_path, Classified};
use crate::params::{
    database_dir, id_from_dir_name, io_error, sync_parent, write_atomic, CollectionParams,
    DatabaseParams, PARAMETER_FILE,
};
use crate::shared::Shared;
use crate::transaction::Transactions;

/// How many times an open settles its collections' transactions (each round after the first
/// only confirms: see `Database::open`).
const SETTLE_ROUNDS_MAX: usize = 3;

/// One database.
pub struct Database {
    /// The name (databases cannot be renamed).
    name: String,
    /// The numeric id.
    id: u64,
    /// `<data>/databases/database-<id>`.
    dir: PathBuf,
    /// The catalog's shared context.
    shared: Arc<Shared>,
    /// The collections by name.
    collections: RwLock<BTreeMap<String, Arc<Collection>>>,
    /// Serialises create, drop and rename of collections.
    ddl: Mutex<()>,
    /// Set (under `ddl`) once the database's directory was renamed as dropped.
    dropped: AtomicBool,
    /// The stream transactions.
    transactions: Transactions,
    /// This database, for the transactions it hands out (set by [`Database::into_shared`]).
    me: Weak<Database>,
}

impl Database {
    /// Creates the directory and parameters of a new database.
    pub(crate) fn create(shared: &Arc<Shared>, id: u64, name: &str) -> Result<Database> {
        let io = &*shared.io;
        let dir = database_dir(&shared.data_dir, id);
        io.create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        sync_parent(io, &dir)?;
        let params = DatabaseParams {
            id,
            name: name.to_owned(),
        };
        write_atomic(io, &dir.join(PARAMETER_FILE), &params)?;
        Ok(Database::assemble(shared, dir, params))
    }

    /// Opens an existing database and recovers its collections, deleting only what
    /// `crate::debris` proves is debris (interrupted drops and creates).
    pub(crate) fn open(
        shared: &Arc<Shared>,
        dir: PathBuf,
        params: DatabaseParams,
    ) -> Result<Database> {
        let io = &*shared.io;
        let database = Database::assemble(shared, dir, params);
        let mut entries = io
            .list_dir(&database.dir)
            .map_err(|e| io_error(&database.dir, e))?;
        entries.sort();
        let mut opened: Vec<(PathBuf, CollectionParams, Collection)> = Vec::new();
        for entry in entries {
            if let Some(id) = id_from_dir_name(&entry, "collection-") {
                shared.observe_id(id);
            }
            match debris::classify::<CollectionParams>(io, &database.dir, &entry, "collection-")? {
                Some(Classified::Live { dir, params }) => {
                    let collection = Collection::open(shared, dir.clone(), params.clone())?;
                    opened.push((dir, params, collection));
                }
                Some(Classified::Debris { dir, why }) => {
                    tracing::info!(event = "collection.debris_removed", dir = %dir.display(), why);
                    remove_dir(io, &dir)?;
                }
                None => {}
            }
        }
        // A transaction that a crash cut short across collections is cut from every log it
        // reached (`quince_storage::settle`); those collections are opened again, and settled
        // again with the others (a second round only finds committed parts: it cuts nothing).
        for _round in 0..SETTLE_ROUNDS_MAX {
            let stores: Vec<(u64, &quince_storage::Store)> =
                opened.iter().map(|(_, _, c)| (c.id(), &c.store)).collect();
            let cut = quince_storage::settle(&stores);
            if cut.is_empty() {
                break;
            }
            let mut settled = Vec::with_capacity(opened.len());
            for (dir, params, collection) in opened {
                let collection = if cut.contains(&collection.id()) {
                    // The cut store is closed; its files are opened afresh.
                    drop(collection);
                    Collection::open(shared, dir.clone(), params.clone())?
                } else {
                    collection
                };
                settled.push((dir, params, collection));
            }
            opened = settled;
        }
        let mut collections = BTreeMap::new();
        for (_, _, collection) in opened {
            collection.attach_hooks(&database.name)?;
            collections.insert(collection.name(), Arc::new(collection));
        }
        *database.collections.write() = collections;
        Ok(database)
    }

    fn assemble(shared: &Arc<Shared>, dir: PathBuf, params: DatabaseParams) -> Database {
        Database {
            name: params.name,
            id: params.id,
            dir,
            shared: Arc::clone(shared),
            collections: RwLock::new(BTreeMap::new()),
            ddl: Mutex::new(()),
            dropped: AtomicBool::new(false),
            transactions: Transactions::new(shared.transaction_idle_timeout),
            me: Weak::new(),
        }
    }

    /// Shares the database, knowing itself (for the transactions it begins).
    pub(crate) fn into_shared(mut self) -> Arc<Database> {
        Arc::new_cyclic(|me| {
            self.me = me.clone();
            self
        })
    }

    /// `<data>/databases/database-<id>`.
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Serialises create, drop and rename of the database's collections.
    pub(crate) fn ddl_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.ddl.lock()
    }

    /// The catalog's shared context.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The stream transactions.
    pub(crate) fn transactions(&self) -> &Transactions {
        &self.transactions
    }

    /// Begins a stream transaction (see [`Transactions::begin`]).
    pub fn begin_transaction(
        &self,
        options: TransactionOptions,
    ) -> Result<Arc<dyn TransactionOps>> {
        self.check_not_dropped()?;
        let me = self
            .me
            .upgrade()
            .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))?;
        Ok(self.transactions.begin(&me, options)?)
    }

    /// Drops the database. Its commit point is the rename of its directory to
    /// `database-<id>.dropped` (durable, and possible on a full disk: no file is written);
    /// then its collections' stores are abandoned and the directory is deleted (a crash before
    /// that is finished by the next open). Errors before the rename change nothing.
    pub(crate) fn drop_files(&self) -> Result<()> {
        let _ddl = self.ddl.lock();
        let io = &*self.shared.io;
        let marked = dropped_path(&self.dir);
        // Stop every store first (waiting out upkeep in progress), so nothing writes into the
        // directory while it moves.
        let collections = self.collections();
        for collection in &collections {
            collection.forget_files();
        }
        if let Err(e) = io.rename(&self.dir, &marked) {
            for collection in &collections {
                collection.keep_files();
            }
            return Err(io_error(&self.dir, e));
        }
        self.dropped.store(true, Ordering::Release);
        self.transactions.abort_all();
        let synced = sync_parent(io, &self.dir);
        self.collections.write().clear();
        if let Err(e) = remove_dir(io, &marked) {
            tracing::warn!(event = "database.drop_cleanup_failed", dir = %marked.display(), error = %e);
        }
        synced
    }

    /// Closes every collection (parameters written, stores closed). The first error is
    /// returned after all were tried.
    pub(crate) fn close(&self) -> Result<()> {
        self.transactions.abort_all();
        let mut first_error = None;
        for collection in self.collections() {
            if let Err(e) = collection.close() {
                tracing::warn!(event = "collection.close_failed", id = collection.id(), error = %e);
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// True once a drop committed (the directory was renamed as dropped).
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// 1228 once the database was dropped (checked under `ddl`).
    fn check_not_dropped(&self) -> Result<()> {
        if self.is_dropped() {
            Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
        } else {
            Ok(())
        }
    }

    /// The numeric id (reported as a decimal string).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// True for `_system`.
    pub fn is_system(&self) -> bool {
        self.name() == "_system"
    }

    /// Every collection, sorted by name.
    pub fn collections(&self) -> Vec<Arc<Collection>> {
        self.collections.read().values().cloned().collect()
    }

    /// The collection with that name, or with that numeric id. 1203 if none.
    pub fn collection(&self, name_or_id: &str) -> Result<Arc<Collection>> {
        let collections = self.collections.read();
        if let Some(collection) = collections.get(name_or_id) {
            return Ok(Arc::clone(collection));
        }
        if let Ok(id) = name_or_id.parse::<u64>() {
            if let Some(collection) = collections.values().find(|c| c.id() == id) {
                return Ok(Arc::clone(collection));
            }
        }
        Err(ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))
    }

    /// Creates a collection. 1208 bad name, 1207 duplicate, 400 bad options.
    pub fn create_collection(&self, request: CreateCollection) -> Result<Arc<Collection>> {
        self.shared.check_open()?;
        validate_collection_name(&request.name, request.is_system)?;
        // Checked and compiled before anything is created: a bad schema or expression is 400.
        let rules = crate::collection::rules_of(
            request.schema.as_ref().unwrap_or(&Value::Null),
            request.computed_values.as_ref().unwrap_or(&Value::Null),
        )?;
        let key_options = KeyOptions::parse(request.key_options.as_ref())?;
        let journal_size = request
            .journal_size
            .unwrap_or(self.shared.default_journal_size);
        check_journal_size(journal_size)?;
        let _ddl = self.ddl.lock();
        // Again under the lock: a restore that ran while this waited closed this state.
        self.shared.check_open()?;
        self.check_not_dropped()?;
        if self.collections.read().contains_key(&request.name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        let id = self.shared.allocate_id()?;
        let keygen = KeyGenerator::new(key_options, 0);
        let collection = Collection::create(
            &self.shared,
            &self.dir,
            id,
            &request,
            keygen,
            journal_size,
            rules,
        )
        .inspect_err(|_| {
            // Whatever part was created is debris; the next open would remove it too.
            let dir = crate::params::collection_dir(&self.dir, id);
            let _ = remove_dir(&*self.shared.io, &dir);
        })?;
        collection.attach_hooks(&self.name)?;
        let collection = Arc::new(collection);
        self.collections
            .write()
            .insert(request.name.clone(), Arc::clone(&collection));
        Ok(collection)
    }

    /// Drops a collection and its files; a system collection needs `is_system` (else, as
    /// ArangoDB, 403 with errorNum 11 forbidden). 1203 if missing. Returns the dropped
    /// collection's id.
    pub fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        self.shared.check_open()?;
        let _ddl = self.ddl.lock();
        // Again under the lock: a restore that ran while this waited closed this state.
        self.shared.check_open()?;
        self.check_not_dropped()?;
        let collection = self.collection(name)?;
        if collection.is_system() && !is_system {
            return Err(ArangoError::new(FORBIDDEN));
        }
        let dropped = collection.drop_files();
        if collection.is_dropped() {
            // Committed (its directory was renamed), even if a later step failed.
            self.collections.write().remove(&collection.name());
        }
        dropped?;
        Ok(collection.id())
    }

    /// Renames a collection (renaming to its own name succeeds). 1207 if the new name is taken.
    pub fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<Collection>> {
        self.shared.check_open()?;
        let _ddl = self.ddl.lock();
        // Again under the lock: a restore that ran while this waited closed this state.
        self.shared.check_open()?;
        self.check_not_dropped()?;
        let collection = self.collection(name)?;
        let old_name = collection.name();
        if old_name == new_name {
            return Ok(collection);
        }
        if collection.is_system() {
            return Err(ArangoError::with_message(
                FORBIDDEN,
                "system collections cannot be renamed",
            ));
        }
        validate_collection_name(new_name, false)?;
        if self.collections.read().contains_key(new_name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        collection.set_name(new_name)?;
        let mut collections = self.collections.write();
        collections.remove(&old_name);
        collections.insert(new_name.to_owned(), Arc::clone(&collection));
        Ok(collection)
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("id", &self.id)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
