//! [`Link`]: one simulated process's connection to the shared metadata store, which a
//! partition can cut.
//!
//! Not a second store: every call goes to the one `MemoryStore` (a store outage is
//! `MemoryStore::set_available`, which cuts every link at once).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quince_meta::{
    Entry, LeaseId, MemoryStore, MetaError, MetaStore, Revision, Snapshot, Txn, TxnResult, Watch,
};

/// A process's store connection; clones share the cut switch.
#[derive(Clone)]
pub struct Link {
    store: MemoryStore,
    cut: Arc<AtomicBool>,
}

impl Link {
    pub fn new(store: MemoryStore) -> Link {
        Link {
            store,
            cut: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Cuts (true) or restores (false) this process's connection.
    pub fn set_cut(&self, cut: bool) {
        self.cut.store(cut, Ordering::SeqCst);
    }

    pub fn is_cut(&self) -> bool {
        self.cut.load(Ordering::SeqCst)
    }

    fn check(&self) -> Result<(), MetaError> {
        if self.is_cut() {
            Err(MetaError::Unavailable("partitioned from the store".into()))
        } else {
            Ok(())
        }
    }
}

impl MetaStore for Link {
    fn get(&self, key: &str) -> Result<Option<Entry>, MetaError> {
        self.check()?;
        self.store.get(key)
    }

    fn range(&self, prefix: &str) -> Result<Snapshot, MetaError> {
        self.check()?;
        self.store.range(prefix)
    }

    fn txn(&self, txn: Txn) -> Result<TxnResult, MetaError> {
        self.check()?;
        self.store.txn(txn)
    }

    fn watch(&self, prefix: &str, from_revision: Revision) -> Result<Watch, MetaError> {
        self.check()?;
        self.store.watch(prefix, from_revision)
    }

    fn grant_lease(&self, ttl: Duration) -> Result<LeaseId, MetaError> {
        self.check()?;
        self.store.grant_lease(ttl)
    }

    fn keep_alive(&self, lease: LeaseId) -> Result<(), MetaError> {
        self.check()?;
        self.store.keep_alive(lease)
    }

    fn revoke_lease(&self, lease: LeaseId) -> Result<(), MetaError> {
        self.check()?;
        self.store.revoke_lease(lease)
    }
}
