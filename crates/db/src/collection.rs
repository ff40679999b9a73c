//! [`Collection`]: one collection's properties, its lifecycle (create, open, rename, drop) and
//! its collection-level operations (count, figures, revision, checksum, compact; truncate is
//! the write path's).
//!
//! What it is not: the document operations; they live in `documents.rs` as a second `impl`
//! block, and their rules (keys, revisions, merges) come from `quince-model`.
//!
//! Invariants: a collection's directory holds its `parameter.json` and its storage `Store`;
//! the parameters on disk are rewritten (atomically) whenever a property or the name changes
//! and, best effort, at shutdown (for the key generator's `lastValue`, which the next open
//! also derives from the keys and the store's metadata), and never after the collection was
//! marked dropped, so a drop cannot be undone by a late property write.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use quince_errors::{ArangoError, Result};
use quince_model::document::{id_prefix, stored_data};
use quince_model::keygen::KeyGenerator;
use quince_model::names::is_system_name;
use quince_model::rev::RevisionId;
use quince_storage::io::FileIo;
use quince_storage::Store;
use serde_json::Value;

use quince_aql::ComputedValueCompiler;
use quince_ops::{
    check_journal_size, CollectionProperties, CollectionType, CreateCollection, FiguresReport,
    PropertiesUpdate, WriteRules,
};

use crate::debris::dropped_path;
use crate::hooks::DocumentHook;
use crate::index::{open_indexes, EdgeIndex, SortedIndex};
use crate::params::{
    collection_dir, io_error, sync_parent, write_atomic, CollectionParams, PARAMETER_FILE,
};
use crate::shared::Shared;
use crate::transaction::locks::TrxLocks;

/// One collection.
pub struct Collection {
    /// The numeric id (fixed for life).
    id: u64,
    /// Document or edge (fixed for life).
    kind: CollectionType,
    /// `globallyUniqueId` (fixed for life).
    globally_unique_id: String,
    /// `<database dir>/collection-<id>`: parameters and the store's files.
    dir: PathBuf,
    /// The catalog's shared context (file system, clock).
    pub(crate) shared: Arc<Shared>,
    /// The documents.
    pub(crate) store: Store,
    /// `keyOptions` and `lastValue`.
    pub(crate) keygen: KeyGenerator,
    /// `waitForSync`, readable without a lock on the write path.
    wait_for_sync: AtomicBool,
    /// The mutable properties.
    pub(crate) meta: RwLock<Meta>,
    /// The highest `_rev` written to this collection (the collection's revision).
    revision: AtomicU64,
    /// The key generator's `lastValue` as the store's metadata last recorded it: a removal
    /// or truncate first records a higher one, so a generated key cannot come back after a
    /// crash even when the document that held it is gone.
    keygen_persisted: AtomicU64,
    /// Serialises rewrites of `parameter.json` and the drop mark.
    params_lock: Mutex<()>,
    /// Set (under `params_lock`) once the drop mark is durable.
    dropped: AtomicBool,
    /// The hooks of derived state; the lock is the hook lock every write call holds
    /// (`write_path.rs`).
    pub(crate) hooks: Mutex<Vec<Arc<dyn DocumentHook>>>,
    /// The keys stream transactions reserved, and their collection lock.
    pub(crate) trx_locks: TrxLocks,
    /// The secondary indexes in creation order (each also among `hooks`, once recovered).
    pub(crate) indexes: RwLock<Vec<Arc<SortedIndex>>>,
    /// The edge index, in an edge collection (also among `hooks`, once recovered).
    pub(crate) edge_index: Option<Arc<EdgeIndex>>,
    /// Serialises the collection's schema changes: index creation and drop, and property
    /// updates (a hot-backup restore holds it while it replaces the state).
    pub(crate) index_ddl: Mutex<()>,
}

/// The properties that can change after creation.
pub(crate) struct Meta {
    /// The current name.
    pub name: String,
    /// The JSON text every `_id` of this collection starts with (from the name).
    pub id_prefix: String,
    /// `journalSize`.
    pub journal_size: u64,
    /// `schema` and `computedValues`, compiled: what every insert, update and replace applies
    /// (`WriteRules::apply`, from `documents.rs`); swapped whole by a property change. The
    /// properties are reported and persisted from them.
    pub rules: Arc<WriteRules>,
    /// `cacheEnabled`.
    pub cache_enabled: bool,
}

/// The compiled rules of `schema` and `computedValues` property values, with the AQL
/// compiler of computed values. 400/1621 for a bad schema, 400/10 for bad computed values.
pub(crate) fn rules_of(schema: &Value, computed_values: &Value) -> Result<WriteRules> {
    WriteRules::parse(schema, computed_values, Some(&ComputedValueCompiler))
}

impl Collection {
    /// Creates the directory, the store and the parameters of a new collection.
    pub(crate) fn create(
        shared: &Arc<Shared>,
        database_dir: &Path,
        id: u64,
        request: &CreateCollection,
        keygen: KeyGenerator,
        journal_size: u64,
        rules: WriteRules,
    ) -> Result<Collection> {
        let io = &shared.io;
        let dir = collection_dir(database_dir, id);
        io.create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
        sync_parent(&**io, &dir)?;
        let params = CollectionParams {
            id,
            name: request.name.clone(),
            kind: request.kind.as_number(),
            wait_for_sync: request
                .wait_for_sync
                .unwrap_or(shared.default_wait_for_sync),
            journal_size,
            key_options: keygen.report(),
            schema: rules.schema_json(),
            computed_values: rules.computed_values_json(),
            cache_enabled: request.cache_enabled.unwrap_or(false),
            is_system: is_system_name(&request.name),
            globally_unique_id: format!("c{id}"),
            indexes: Vec::new(),
        };
        // The parameters come first: a directory that holds data always has them, so a
        // directory without them is provably an interrupted create (`crate::debris`).
        write_atomic(&**io, &dir.join(PARAMETER_FILE), &params)?;
        let store = Store::create(io.clone(), &dir, shared.store_options(journal_size))?;
        Ok(Collection::assemble(
            shared,
            dir,
            params,
            keygen,
            store,
            Vec::new(),
            rules,
        ))
    }

    /// Opens (recovers) an existing collection from its parameters and store.
    pub(crate) fn open(
        shared: &Arc<Shared>,
        dir: PathBuf,
        params: CollectionParams,
    ) -> Result<Collection> {
        let keygen = KeyGenerator::from_stored(&params.key_options)?;
        let indexes = open_indexes(&params.indexes)?;
        // Rules that compiled when they were set compile again; if they no longer do (a
        // validator that changed its mind), the collection is refused rather than opened
        // without the rules its documents were promised.
        let rules = rules_of(&params.schema, &params.computed_values).map_err(|e| {
            ArangoError::with_message(
                quince_errors::ARANGO_ILLEGAL_PARAMETER_FILE,
                format!(
                    "the schema or computed values of {} no longer compile: {}",
                    dir.display(),
                    e.message
                ),
            )
        })?;
        let store = Store::open(
            shared.io.clone(),
            &dir,
            shared.store_options(params.journal_size),
        )?;
        let mut rev_max = store.figures().last_tick;
        store.for_each_key(&mut |key, rev| {
            // Keys were checked when written; one that is not UTF-8 cannot be a generated key.
            if let Ok(key) = std::str::from_utf8(key) {
                keygen.track(key);
            }
            rev_max = rev_max.max(rev);
            true
        });
        let persisted = store
            .meta()
            .map_or(Ok(0), |meta| key_generator_mark(&meta, &dir))?;
        keygen.observe(persisted);
        let collection = Collection::assemble(shared, dir, params, keygen, store, indexes, rules);
        collection
            .keygen_persisted
            .store(persisted, Ordering::Release);
        collection.revision.fetch_max(rev_max, Ordering::AcqRel);
        shared.hlc.observe(RevisionId(rev_max));
        // Transaction ids come from the same clock and must keep growing past a restart.
        shared
            .hlc
            .observe(RevisionId(collection.store.newest_commit()));
        Ok(collection)
    }

    fn assemble(
        shared: &Arc<Shared>,
        dir: PathBuf,
        params: CollectionParams,
        keygen: KeyGenerator,
        store: Store,
        indexes: Vec<Arc<SortedIndex>>,
        rules: WriteRules,
    ) -> Collection {
        let kind = if params.kind == CollectionType::Edge.as_number() {
            CollectionType::Edge
        } else {
            CollectionType::Document
        };
        Collection {
            id: params.id,
            kind,
            globally_unique_id: params.globally_unique_id,
            dir,
            shared: Arc::clone(shared),
            store,
            keygen,
            wait_for_sync: AtomicBool::new(params.wait_for_sync),
            meta: RwLock::new(Meta {
                id_prefix: id_prefix(&params.name),
                name: params.name,
                journal_size: params.journal_size,
                rules: Arc::new(rules),
                cache_enabled: params.cache_enabled,
            }),
            revision: AtomicU64::new(0),
            keygen_persisted: AtomicU64::new(0),
            params_lock: Mutex::new(()),
            dropped: AtomicBool::new(false),
            hooks: Mutex::new(Vec::new()),
            trx_locks: TrxLocks::default(),
            indexes: RwLock::new(indexes),
            edge_index: (kind == CollectionType::Edge).then(Arc::default),
            index_ddl: Mutex::new(()),
        }
    }

    /// The parameters as they are now.
    fn params(&self) -> CollectionParams {
        let meta = self.meta.read();
        CollectionParams {
            id: self.id,
            name: meta.name.clone(),
            kind: self.kind.as_number(),
            wait_for_sync: self.wait_for_sync(),
            journal_size: meta.journal_size,
            key_options: self.keygen.report(),
            schema: meta.rules.schema_json(),
            computed_values: meta.rules.computed_values_json(),
            cache_enabled: meta.cache_enabled,
            is_system: meta.name.starts_with('_'),
            globally_unique_id: self.globally_unique_id.clone(),
            indexes: self.stored_indexes(),
        }
    }

    /// Rewrites `parameter.json` from the current state (a no-op once dropped).
    pub(crate) fn persist(&self) -> Result<()> {
        let _guard = self.params_lock.lock();
        if self.dropped.load(Ordering::Acquire) {
            return Ok(());
        }
        write_atomic(
            &*self.shared.io,
            &self.dir.join(PARAMETER_FILE),
            &self.params(),
        )
    }

    /// Changes the name (the database checked that it is free) and persists it.
    pub(crate) fn set_name(&self, name: &str) -> Result<()> {
        let old = {
            let mut meta = self.meta.write();
            let old = std::mem::replace(&mut meta.name, name.to_owned());
            meta.id_prefix = id_prefix(name);
            old
        };
        self.persist().inspect_err(|_| {
            let mut meta = self.meta.write();
            meta.id_prefix = id_prefix(&old);
            meta.name = old;
        })
    }

    /// Drops the collection. Its commit point is the rename of its directory to
    /// `collection-<id>.dropped` (durable, and possible on a full disk: no file is written);
    /// then the store is abandoned (waiting out any upkeep in progress) and the directory is
    /// deleted (a crash before that is finished by the next open). Errors before the rename
    /// change nothing; after it the collection is dropped whatever follows.
    pub(crate) fn drop_files(&self) -> Result<()> {
        let io = &*self.shared.io;
        let marked = dropped_path(&self.dir);
        let synced = {
            let _guard = self.params_lock.lock();
            if self.dropped.load(Ordering::Acquire) {
                return Ok(());
            }
            // First stop the store (waiting out upkeep in progress), so nothing writes into the
            // directory while it moves; calls that race the drop answer 1203.
            self.store.abandon();
            if let Err(e) = io.rename(&self.dir, &marked) {
                self.store.restore();
                return Err(io_error(&self.dir, e));
            }
            self.dropped.store(true, Ordering::Release);
            sync_parent(io, &self.dir)
        };
        if let Err(e) = remove_dir(io, &marked) {
            tracing::warn!(event = "collection.drop_cleanup_failed", dir = %marked.display(), error = %e);
        }
        synced
    }

    /// Stops the store without touching its files, for a collection whose database is being
    /// dropped; [`Collection::keep_files`] undoes it if the drop could not start.
    pub(crate) fn forget_files(&self) {
        self.dropped.store(true, Ordering::Release);
        self.store.abandon();
    }

    /// Undoes [`Collection::forget_files`].
    pub(crate) fn keep_files(&self) {
        self.store.restore();
        self.dropped.store(false, Ordering::Release);
    }

    /// True once the collection was dropped.
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// Records the key generator's `lastValue` in the store's metadata when it passed what was
    /// recorded, before a write that may remove the document holding the highest key. The
    /// record goes to the journal before that write, so whenever the write survives a crash,
    /// so does the mark.
    pub(crate) fn persist_key_generator(&self) -> Result<()> {
        let last = self.keygen.last_value();
        if last <= self.keygen_persisted.load(Ordering::Acquire) {
            return Ok(());
        }
        let meta = serde_json::json!({ "keyGenerator": { "lastValue": last } });
        self.store
            .write_meta(&serde_json::to_vec(&meta).expect("JSON serialises"))?;
        self.keygen_persisted.fetch_max(last, Ordering::AcqRel);
        Ok(())
    }

    /// Closes the store after refreshing the parameters (the key generator's `lastValue`).
    ///
    /// The refresh is a courtesy, not a duty: every property change was written when it was
    /// made, and the next open derives `lastValue` from the keys and the store's metadata
    /// record, so a refresh that fails (a full disk) is logged and the close goes on. The
    /// store's own close decides the result: it fails when the store was poisoned.
    pub(crate) fn close(&self) -> Result<()> {
        if let Err(error) = self.persist() {
            tracing::warn!(event = "collection.parameters_not_refreshed", id = self.id, error = %error);
        }
        self.store.close()?;
        Ok(())
    }

    /// True for system collections (name starting with `_`).
    pub fn is_system(&self) -> bool {
        self.meta.read().name.starts_with('_')
    }

    /// The current name.
    pub fn name(&self) -> String {
        self.meta.read().name.clone()
    }

    /// The numeric id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// `<database dir>/collection-<id>`: parameters and the store's files.
    pub(crate) fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Document or edge.
    pub fn kind(&self) -> CollectionType {
        self.kind
    }

    /// The collection's `waitForSync` property (cheap, no lock: the api uses it to choose the
    /// status of a write, 201 synced or 202).
    pub fn wait_for_sync(&self) -> bool {
        self.wait_for_sync.load(Ordering::Acquire)
    }

    /// All properties.
    pub fn properties(&self) -> CollectionProperties {
        let meta = self.meta.read();
        CollectionProperties {
            id: self.id,
            name: meta.name.clone(),
            kind: self.kind,
            is_system: meta.name.starts_with('_'),
            globally_unique_id: self.globally_unique_id.clone(),
            wait_for_sync: self.wait_for_sync(),
            journal_size: meta.journal_size,
            key_options: self.keygen.report(),
            schema: meta.rules.schema_json(),
            computed_values: meta.rules.computed_values_json(),
            cache_enabled: meta.cache_enabled,
        }
    }

    /// Changes properties (persisted). 400 for a journal size under 1 MiB, 400/1621 for a bad
    /// schema, 400/10 for bad computed values (nothing changes then). New rules apply to the
    /// writes that start deciding after the swap; a write already deciding keeps the rules it
    /// read.
    pub fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties> {
        // The collection's schema lock (a restore takes it too): its parameter file is written
        // only while its state is open.
        let _ddl = self.index_ddl.lock();
        self.shared.check_open()?;
        if let Some(size) = update.journal_size {
            check_journal_size(size)?;
        }
        let rules = if update.schema.is_some() || update.computed_values.is_some() {
            let current = Arc::clone(&self.meta.read().rules);
            Some(current.updated(
                update.schema.as_ref(),
                update.computed_values.as_ref(),
                Some(&ComputedValueCompiler),
            )?)
        } else {
            None
        };
        if let Some(size) = update.journal_size {
            // Outside the meta lock: document writes take the store's lock, then the meta lock.
            self.store.set_journal_size(size);
        }
        {
            let mut meta = self.meta.write();
            if let Some(size) = update.journal_size {
                meta.journal_size = size;
            }
            if let Some(rules) = rules {
                meta.rules = rules;
            }
            if let Some(cache) = update.cache_enabled {
                meta.cache_enabled = cache;
            }
            if let Some(sync) = update.wait_for_sync {
                self.wait_for_sync.store(sync, Ordering::Release);
            }
        }
        self.persist()?;
        Ok(self.properties())
    }

    /// Number of documents.
    pub fn count(&self) -> u64 {
        self.store.len()
    }

    /// What the engine holds.
    pub fn figures(&self) -> FiguresReport {
        // An edge collection counts its edge index after the primary one.
        let storage = engine_figures(self.store.figures());
        let mut indexes = vec![quince_ops::IndexFigures {
            id: 0,
            kind: "primary",
            count: storage.alive_count,
            memory: storage.index_size,
        }];
        if let Some(edge) = &self.edge_index {
            indexes.push(quince_ops::IndexFigures {
                id: quince_ops::EDGE_INDEX_ID,
                kind: quince_ops::IndexType::Edge.name(),
                count: edge.count(),
                memory: edge.memory_estimate(),
            });
        }
        indexes.extend(self.index_figures());
        FiguresReport {
            storage,
            index_count: indexes.len() as u64,
            indexes,
        }
    }

    /// The collection's revision: the highest `_rev` written (as a `_rev` string; "0" if none).
    pub fn revision(&self) -> String {
        match self.revision.load(Ordering::Acquire) {
            0 => "0".to_owned(),
            rev => RevisionId(rev).encode(),
        }
    }

    /// Records that a write with `rev` happened.
    pub(crate) fn note_revision(&self, rev: RevisionId) {
        self.revision.fetch_max(rev.0, Ordering::AcqRel);
    }

    /// The checksum as a decimal string ("0" when empty), over keys, and with the flags also
    /// over revisions and document data; and the revision.
    pub fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        let mut sum = quince_ops::Checksum::default();
        if with_data {
            self.store.scan(&mut |key, rev, value| {
                sum.add(key, with_revisions.then_some(rev), Some(stored_data(value)));
                true
            })?;
        } else {
            self.store.for_each_key(&mut |key, rev| {
                sum.add(key, with_revisions.then_some(rev), None);
                true
            });
        }
        Ok((sum.value().to_string(), self.revision()))
    }

    /// Compacts the datafiles now.
    pub fn compact(&self) -> Result<()> {
        self.store.compact()?;
        Ok(())
    }
}

impl std::fmt::Debug for Collection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collection")
            .field("id", &self.id)
            .field("name", &self.meta.read().name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// The journal engine's figures as the operations interface reports them.
fn engine_figures(f: quince_storage::Figures) -> quince_ops::Figures {
    quince_ops::Figures {
        alive_count: f.alive_count,
        alive_size: f.alive_size,
        dead_count: f.dead_count,
        dead_size: f.dead_size,
        dead_deletion: f.dead_deletion,
        datafiles_count: f.datafiles_count,
        datafiles_file_size: f.datafiles_file_size,
        journals_count: f.journals_count,
        journals_file_size: f.journals_file_size,
        compactors_count: f.compactors_count,
        compactors_file_size: f.compactors_file_size,
        index_size: f.index_size,
        documents_size: f.documents_size,
        last_tick: f.last_tick,
        journal_size: f.journal_size,
    }
}

/// The key generator's `lastValue` recorded in a store's metadata (0 when it records none).
fn key_generator_mark(meta: &[u8], dir: &Path) -> Result<u64> {
    let value: Value = serde_json::from_slice(meta).map_err(|e| {
        ArangoError::with_message(
            quince_errors::ARANGO_CORRUPTED_DATAFILE,
            format!("unreadable metadata of {}: {e}", dir.display()),
        )
    })?;
    Ok(value
        .pointer("/keyGenerator/lastValue")
        .and_then(Value::as_u64)
        .unwrap_or(0))
}

/// Removes a directory and makes the removal durable.
pub(crate) fn remove_dir(io: &dyn FileIo, dir: &Path) -> Result<()> {
    if io.exists(dir) {
        io.remove_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    sync_parent(io, dir)
}
