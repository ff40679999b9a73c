//! [`Catalog`]: every database of the server, persisted in the data directory.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use quince_errors::Result;
use quince_storage::io::FileIo;

use crate::database::Database;

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
}

/// Counters for metrics, summed over every collection.
#[derive(Clone, Debug, Default)]
pub struct CatalogStats {
    /// Databases.
    pub databases: u64,
    /// Collections.
    pub collections: u64,
    /// Live documents.
    pub documents: u64,
    /// Bytes appended to journals since start.
    pub journal_bytes_written: u64,
    /// fsyncs since start.
    pub syncs: u64,
    /// Journals sealed since start.
    pub journal_seals: u64,
    /// Compactions since start.
    pub compactions: u64,
}

/// The server's databases. Opening it recovers every collection; a maintenance thread syncs
/// and compacts in the background until [`Catalog::shutdown`].
pub struct Catalog {
    _private: (),
}

impl Catalog {
    /// Opens (or initialises) the data directory: creates `_system` if missing, takes an
    /// exclusive lock on the directory, recovers every collection, starts maintenance.
    pub fn open(config: DbConfig) -> Result<Arc<Catalog>> {
        let _ = config;
        todo!("db: Catalog::open")
    }

    /// The database of that name, if it exists.
    pub fn database(&self, name: &str) -> Option<Arc<Database>> {
        let _ = name;
        todo!("db: Catalog::database")
    }

    /// The names of all databases, sorted.
    pub fn database_names(&self) -> Vec<String> {
        todo!("db: Catalog::database_names")
    }

    /// Creates a database. 1229 for a bad name, 1207 if it exists.
    pub fn create_database(&self, name: &str) -> Result<Arc<Database>> {
        let _ = name;
        todo!("db: Catalog::create_database")
    }

    /// Drops a database and its files. 1228 if missing; `_system` cannot be dropped (1230).
    pub fn drop_database(&self, name: &str) -> Result<()> {
        let _ = name;
        todo!("db: Catalog::drop_database")
    }

    /// Counters for metrics.
    pub fn stats(&self) -> CatalogStats {
        todo!("db: Catalog::stats")
    }

    /// Stops maintenance and closes every collection (sync, write restart hints). Idempotent.
    pub fn shutdown(&self) -> Result<()> {
        todo!("db: Catalog::shutdown")
    }
}
