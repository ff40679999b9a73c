//! [`Catalog`]: every database of the server, persisted in the data directory.
//!
//! What it is: opening a data directory (lock, recovery of every database and collection,
//! `_system` when missing), the list of databases with create and drop, metrics counters, the
//! maintenance thread, and shutdown; and the restart in place a restore needs: the state (the
//! shared context and the databases) is closed and opened again inside the same `Catalog`,
//! which keeps the directory's lock (`close_state`, `reopen_state`; `crate::backup`).
//!
//! What it is not: collections' or documents' rules (see [`Database`] and
//! [`crate::Collection`]).
//!
//! Layout: `<data>/LOCK` (an exclusive OS lock while a catalog is open; taken on the real file
//! system even when `DbConfig::io` is simulated, because only the OS can keep a second process
//! out), `<data>/catalog.json` (the id counter), `<data>/databases/database-<id>/parameter.json`
//! and `<data>/databases/database-<id>/collection-<id>/{parameter.json, store files}`;
//! `<data>/backups/` and a restore's `<data>/restore-*` are `crate::backup`'s (never opened as
//! databases).
//!
//! Invariants: one open catalog per data directory; before `open` returns, the clock has
//! observed every stored revision, so new revisions exceed all of them; after `shutdown`
//! (idempotent, also run on drop) no store is written and the lock is released; handles of a
//! closed state (a restore replaced it) answer 503/30, never its data.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATADIR_LOCKED,
    ARANGO_DATADIR_NOT_WRITABLE, ARANGO_DUPLICATE_NAME, ARANGO_USE_SYSTEM_DATABASE,
};
use quince_model::names::{validate_database_name, SYSTEM_DATABASE};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};

use quince_storage::io::{CachedFileIo, FileIo, DIR_MODE, FILE_MODE};

use quince_ops::CatalogStats;

use crate::database::Database;
use crate::debris::{self, Classified};
use crate::hooks::HookFactory;
use crate::maintenance::Maintenance;
use crate::params::{
    catalog_file, databases_dir, id_from_dir_name, io_error, read_json, CatalogParams,
    DatabaseParams,
};
use crate::shared::Shared;

/// How the catalog is opened (from the server's options).
#[derive(Clone)]
pub struct DbConfig {
    /// The data directory (`--database.directory`).
    pub data_dir: PathBuf,
    /// Default maximal journal size of new collections (`--database.maximal-journal-size`).
    pub default_journal_size: u64,
    /// Default `waitForSync` of new collections (`--database.wait-for-sync`).
    pub default_wait_for_sync: bool,
    /// How long unsynced writes may wait for the background fsync.
    pub sync_interval: Duration,
    /// The file system (the real one, or a simulated one in tests).
    pub io: Arc<dyn FileIo>,
    /// Open stores whose files are damaged by salvaging what still verifies, instead of
    /// refusing to start (`--database.ignore-datafile-errors`; see `docs/safety.md`).
    pub ignore_datafile_errors: bool,
    /// The most files the engine keeps open at once, over every collection (journals,
    /// datafiles, hints being written, parameter files); beyond it the least recently used are
    /// closed and reopened when needed.
    pub open_files_max: usize,
    /// Gives each collection its hooks of derived state when it is created or opened (none:
    /// no derived state). On open, every live document is handed to the hooks before the
    /// collection serves a request.
    pub hooks: Option<Arc<dyn HookFactory>>,
    /// How long a stream transaction may idle before it is aborted
    /// (`--transaction.streaming-idle-timeout`).
    pub transaction_idle_timeout: Duration,
    /// How often the maintenance thread removes the documents ttl indexes say expired
    /// (`--ttl.frequency`).
    pub ttl_frequency: Duration,
}

/// The default of [`DbConfig::ttl_frequency`] (ArangoDB's `--ttl.frequency`, 30,000 ms).
pub const TTL_FREQUENCY_DEFAULT: Duration = Duration::from_secs(30);

/// The default of [`DbConfig::open_files_max`]; the server derives its own from the process's
/// descriptor limit.
pub const OPEN_FILES_MAX_DEFAULT: usize = 1024;

impl DbConfig {
    /// The defaults (the server's, except where its options say otherwise) for `data_dir`
    /// on `io`.
    pub fn new(data_dir: PathBuf, io: Arc<dyn FileIo>) -> DbConfig {
        DbConfig {
            data_dir,
            default_journal_size: 32 << 20,
            default_wait_for_sync: false,
            sync_interval: Duration::from_millis(100),
            io,
            ignore_datafile_errors: false,
            open_files_max: OPEN_FILES_MAX_DEFAULT,
            hooks: None,
            transaction_idle_timeout: crate::transaction::IDLE_TIMEOUT_DEFAULT,
            ttl_frequency: TTL_FREQUENCY_DEFAULT,
        }
    }
}

/// The server's databases. Opening it recovers every collection; a maintenance thread syncs
/// and compacts in the background until [`Catalog::shutdown`].
pub struct Catalog {
    /// How the catalog was opened (a restore reopens it the same way).
    config: DbConfig,
    /// What databases and collections share; replaced when a restore reopens the catalog.
    shared: RwLock<Arc<Shared>>,
    /// The databases by name (shared with the maintenance thread).
    databases: Arc<RwLock<BTreeMap<String, Arc<Database>>>>,
    /// Serialises create and drop of databases.
    ddl: Mutex<()>,
    /// The maintenance thread, until shutdown.
    maintenance: Mutex<Option<Maintenance>>,
    /// The open `LOCK` file holding the directory's exclusive lock, until shutdown.
    lock: Mutex<Option<File>>,
    /// Serialises backup operations (create, delete, restore) and shutdown: taken before
    /// `ddl`.
    backups: Mutex<()>,
}

impl Catalog {
    /// Opens (or initialises) the data directory: creates `_system` if missing, takes an
    /// exclusive lock on the directory, recovers every collection, starts maintenance.
    pub fn open(config: DbConfig) -> Result<Arc<Catalog>> {
        let lock = lock_data_dir(&config.data_dir)?;
        // A restore interrupted past its commit point is finished, one before it undone;
        // backups a crash left half-written are removed (`crate::backup`).
        crate::backup::swap::recover(&config.data_dir)?;
        crate::backup::remove_unfinished(&config.data_dir)?;
        let (shared, databases) = open_state(&config)?;
        let catalog = Catalog {
            config,
            shared: RwLock::new(shared),
            databases: Arc::new(RwLock::new(databases)),
            ddl: Mutex::new(()),
            maintenance: Mutex::new(None),
            lock: Mutex::new(Some(lock)),
            backups: Mutex::new(()),
        };
        catalog.start()?;
        tracing::info!(
            event = "catalog.opened",
            dir = %catalog.config.data_dir.display(),
            databases = catalog.databases.read().len()
        );
        Ok(Arc::new(catalog))
    }

    /// Starts maintenance (after an open or a reopen).
    fn start(&self) -> Result<()> {
        *self.maintenance.lock() = Some(Maintenance::start(
            Arc::clone(&self.databases),
            self.config.ttl_frequency,
        )?);
        Ok(())
    }

    /// The shared context of the state open now.
    pub(crate) fn shared(&self) -> Arc<Shared> {
        Arc::clone(&self.shared.read())
    }

    /// The data directory.
    pub(crate) fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Serialises backup operations.
    pub(crate) fn backups_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.backups.lock()
    }

    /// Serialises create and drop of databases.
    pub(crate) fn ddl_lock(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.ddl.lock()
    }

    /// Every database now, sorted by name.
    pub(crate) fn databases_now(&self) -> Vec<Arc<Database>> {
        self.databases.read().values().cloned().collect()
    }

    /// Closes the state open now: marks it closed, stops maintenance, closes every database
    /// (aborting their transactions; collections synced and closed). `None` when it was
    /// closed already; else the first error, after every database was tried. The databases
    /// stay listed, answering 503/30, until [`Catalog::reopen_state`] replaces them.
    pub(crate) fn close_state(&self) -> Option<Result<()>> {
        if !self.shared().close() {
            return None;
        }
        if let Some(maintenance) = self.maintenance.lock().take() {
            maintenance.stop();
        }
        let mut first_error = None;
        for database in self.databases_now() {
            if let Err(e) = database.close() {
                first_error.get_or_insert(e);
            }
        }
        Some(first_error.map_or(Ok(()), Err))
    }

    /// Opens the data directory's state again (after a restore swapped it) and serves it:
    /// lookups find the new databases from now on.
    pub(crate) fn reopen_state(&self) -> Result<()> {
        let (shared, databases) = open_state(&self.config)?;
        // Revisions stay unique for the process's life: none handed out before the restore
        // (in the state it replaced) comes again.
        let old = self.shared();
        shared.hlc.observe(old.hlc.last());
        // The metrics' counters count since the process started, across restores.
        shared.counters.add(&old.counters.snapshot());
        *self.shared.write() = shared;
        *self.databases.write() = databases;
        self.start()
    }

    /// The database of that name, if it exists.
    pub fn database(&self, name: &str) -> Option<Arc<Database>> {
        self.databases.read().get(name).cloned()
    }

    /// The names of all databases, sorted.
    pub fn database_names(&self) -> Vec<String> {
        self.databases.read().keys().cloned().collect()
    }

    /// Creates a database. 1229 for a bad name, 1207 if it exists.
    pub fn create_database(&self, name: &str) -> Result<Arc<Database>> {
        self.shared().check_open()?;
        validate_database_name(name)?;
        let _ddl = self.ddl.lock();
        // Read under the lock: a restore that ran while this waited swapped the state.
        let shared = self.shared();
        shared.check_open()?;
        if self.databases.read().contains_key(name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        let id = shared.allocate_id()?;
        let database = Database::create(&shared, id, name)?.into_shared();
        self.databases
            .write()
            .insert(name.to_owned(), Arc::clone(&database));
        Ok(database)
    }

    /// Drops a database and its files. 1228 if missing; `_system` cannot be dropped (1230).
    pub fn drop_database(&self, name: &str) -> Result<()> {
        self.shared().check_open()?;
        if name == SYSTEM_DATABASE {
            return Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE));
        }
        let _ddl = self.ddl.lock();
        self.shared().check_open()?;
        let database = self
            .database(name)
            .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))?;
        let dropped = database.drop_files();
        if database.is_dropped() {
            // Committed (its directory was renamed), even if a later step failed.
            self.databases.write().remove(name);
        }
        dropped
    }

    /// Counters for metrics.
    pub fn stats(&self) -> CatalogStats {
        let databases = self.databases.read().values().cloned().collect::<Vec<_>>();
        let counters = self.shared().counters.snapshot();
        let mut stats = CatalogStats {
            databases: databases.len() as u64,
            document_writes: counters.document_writes,
            truncates: counters.truncates,
            transactions_started: counters.transactions_started,
            transactions_committed: counters.transactions_committed,
            transactions_aborted: counters.transactions_aborted,
            ..CatalogStats::default()
        };
        for database in databases {
            for collection in database.collections() {
                let store = collection.store.stats();
                stats.collections += 1;
                stats.documents += collection.count();
                stats.journal_bytes_written += store.bytes_written;
                stats.syncs += store.syncs;
                stats.journal_seals += store.seals;
                stats.compactions += store.compactions;
            }
        }
        stats
    }

    /// Stops maintenance and closes every collection (sync, write restart hints), then
    /// releases the directory's lock. Idempotent; waits for a backup operation in progress.
    pub fn shutdown(&self) -> Result<()> {
        let _backups = self.backups.lock();
        let closed = self.close_state();
        // Every store is closed: another catalog may now open the directory.
        if self.lock.lock().take().is_some() {
            tracing::info!(event = "catalog.closed");
        }
        closed.unwrap_or(Ok(()))
    }
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("data_dir", &self.config.data_dir)
            .field("databases", &self.database_names())
            .finish_non_exhaustive()
    }
}

impl Drop for Catalog {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            tracing::error!(event = "catalog.shutdown_failed", error = %e);
        }
    }
}

/// The databases by name.
type Databases = BTreeMap<String, Arc<Database>>;

/// Opens the databases of `config`'s data directory with a fresh shared context.
fn open_state(config: &DbConfig) -> Result<(Arc<Shared>, Databases)> {
    let io: Arc<dyn FileIo> = Arc::new(CachedFileIo::new(
        Arc::clone(&config.io),
        config.open_files_max,
    ));
    let shared = Arc::new(Shared::new(config, io));
    let io = &*shared.io;
    let root = databases_dir(&config.data_dir);
    if !io.exists(&root) {
        io.create_dir_all(&root).map_err(|e| io_error(&root, e))?;
        crate::params::sync_parent(io, &root)?;
    }
    if let Some(params) = read_json::<CatalogParams>(io, &catalog_file(&config.data_dir))? {
        shared.observe_id(params.id_last);
    }
    let mut databases = open_databases(&shared, &root)?;
    if !databases.contains_key(SYSTEM_DATABASE) {
        let id = shared.allocate_id()?;
        let system = Database::create(&shared, id, SYSTEM_DATABASE)?.into_shared();
        databases.insert(SYSTEM_DATABASE.to_owned(), system);
    }
    Ok((shared, databases))
}

/// Takes the exclusive lock of the data directory (creating the directory if needed).
fn lock_data_dir(data_dir: &Path) -> Result<File> {
    let not_writable = |e: std::io::Error| {
        ArangoError::with_message(
            ARANGO_DATADIR_NOT_WRITABLE,
            format!(
                "database directory {} is not writable: {e}",
                data_dir.display()
            ),
        )
    };
    create_dir_durably(data_dir).map_err(not_writable)?;
    let path = data_dir.join("LOCK");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(&path)
        .map_err(not_writable)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(ArangoError::with_message(
            ARANGO_DATADIR_LOCKED,
            format!(
                "database directory {} is locked by another process (is another server running on it?)",
                data_dir.display()
            ),
        )),
        Err(TryLockError::Error(e)) => Err(not_writable(e)),
    }
}

/// Creates `dir` and its missing ancestors, fsyncing the parent of each one created, so that a
/// power cut cannot take a new data directory away with everything written into it.
fn create_dir_durably(dir: &Path) -> std::io::Result<()> {
    // A relative path's last ancestor is "" (the working directory): never one to create.
    let missing: Vec<&Path> = dir
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .collect();
    for path in missing.into_iter().rev() {
        match std::fs::DirBuilder::new().mode(DIR_MODE).create(path) {
            Ok(()) => {}
            // Created meanwhile by someone else: fine, it exists.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
        let parent = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

/// Opens every database under `<data>/databases`, deleting only what `crate::debris` proves is
/// debris (interrupted drops and creates).
fn open_databases(shared: &Arc<Shared>, root: &Path) -> Result<BTreeMap<String, Arc<Database>>> {
    let io = &*shared.io;
    let mut entries = io.list_dir(root).map_err(|e| io_error(root, e))?;
    entries.sort();
    let mut databases = BTreeMap::new();
    for entry in entries {
        if let Some(id) = id_from_dir_name(&entry, "database-") {
            shared.observe_id(id);
        }
        match debris::classify::<DatabaseParams>(io, root, &entry, "database-")? {
            Some(Classified::Live { dir, params }) => {
                shared.observe_id(params.id);
                let database = Database::open(shared, dir, params)?;
                databases.insert(database.name().to_owned(), database.into_shared());
            }
            Some(Classified::Debris { dir, why }) => {
                tracing::info!(event = "database.debris_removed", dir = %dir.display(), why);
                crate::collection::remove_dir(io, &dir)?;
            }
            None => {}
        }
    }
    Ok(databases)
}
