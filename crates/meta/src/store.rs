//! The [`MetaStore`] interface and its values.
//!
//! What it is: the calls a cluster makes on its metadata store, in etcd's terms (ranges by
//! prefix, transactions of compares then operations, watches, leases), as blocking calls
//! returning plain values.
//!
//! What it is not: an implementation (`memory.rs`, `etcd.rs`), or a client-side cache.
//!
//! Invariants: see the crate documentation; values are opaque bytes here (the cluster crate
//! stores JSON).

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// A store-wide revision: the count of changes so far. 0 stands for "absent" in compares.
pub type Revision = i64;

/// A lease's id (never 0; 0 means "no lease").
pub type LeaseId = i64;

/// Why a call failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MetaError {
    /// The store cannot be reached, or did not answer in time. The call may or may not have
    /// taken effect.
    #[error("metadata store unavailable: {0}")]
    Unavailable(String),
    /// A watch asked for a revision the store no longer keeps history for.
    #[error("metadata store history compacted past revision {0}")]
    Compacted(Revision),
    /// The lease does not exist (expired or revoked).
    #[error("lease {0} not found")]
    LeaseNotFound(LeaseId),
    /// The watch or store was closed.
    #[error("metadata store closed")]
    Closed,
}

/// One member of the store's own replicated cluster (an etcd member), as
/// `/_admin/cluster/health` lists ArangoDB's agents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreMember {
    /// The member's id (hex).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Where clients reach it (its first client URL; empty when it has not started).
    pub endpoint: String,
    /// It answered a status request just now.
    pub reachable: bool,
    /// It leads the store's cluster (as the members that answered say).
    pub leader: bool,
    /// Its version (empty when it did not answer).
    pub version: String,
}

/// One key as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The path.
    pub key: String,
    /// The value (empty for a delete event).
    pub value: Vec<u8>,
    /// The revision that created the key (its current incarnation).
    pub create_revision: Revision,
    /// The revision of the key's last change (of the delete, in a delete event).
    pub mod_revision: Revision,
    /// Changes since creation, 1 for a new key.
    pub version: i64,
    /// The lease the key is bound to, 0 if none.
    pub lease: LeaseId,
}

/// A consistent read of a prefix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The keys under the prefix, sorted by key.
    pub entries: Vec<Entry>,
    /// The store's revision when read: a watch from `revision + 1` misses nothing after it.
    pub revision: Revision,
}

/// A precondition of a transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Compare {
    /// The key's `mod_revision` equals this (0: the key is absent).
    ModRevision(String, Revision),
    /// The key exists and its value equals this.
    Value(String, Vec<u8>),
    /// The key exists.
    Exists(String),
    /// The key does not exist.
    Absent(String),
}

/// A change a transaction makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Sets a key, bound to a lease when given (the lease must exist).
    Put {
        /// The path.
        key: String,
        /// The value.
        value: Vec<u8>,
        /// The lease, if any.
        lease: Option<LeaseId>,
    },
    /// Deletes a key if present.
    Delete(String),
    /// Deletes every key under a prefix.
    DeletePrefix(String),
}

impl Op {
    /// A put without a lease.
    pub fn put(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Op {
        Op::Put {
            key: key.into(),
            value: value.into(),
            lease: None,
        }
    }

    /// A delete of one key.
    pub fn delete(key: impl Into<String>) -> Op {
        Op::Delete(key.into())
    }
}

/// A transaction: when every compare holds, `then` is applied, otherwise `otherwise`; all in
/// one revision.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Txn {
    /// The preconditions.
    pub compares: Vec<Compare>,
    /// Applied when they hold.
    pub then: Vec<Op>,
    /// Applied when they do not.
    pub otherwise: Vec<Op>,
}

impl Txn {
    /// A transaction with these preconditions and changes, and nothing otherwise.
    pub fn when(compares: Vec<Compare>, then: Vec<Op>) -> Txn {
        Txn {
            compares,
            then,
            otherwise: Vec::new(),
        }
    }
}

/// What a transaction did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxnResult {
    /// True when the compares held and `then` was applied.
    pub succeeded: bool,
    /// The store's revision after the transaction.
    pub revision: Revision,
}

/// Put or delete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// The key was set.
    Put,
    /// The key was deleted (or its lease expired).
    Delete,
}

/// One change seen by a watch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The key after the change (for a delete: the key, an empty value, the delete's revision).
    pub entry: Entry,
}

/// The changes under a prefix, in revision order, batched as the store delivers them.
pub struct Watch {
    receiver: Receiver<Result<Vec<Event>, MetaError>>,
    /// Dropped with the watch: cancels it in the store.
    _cancel: Box<dyn Send>,
}

impl Watch {
    /// A watch over a channel the implementation feeds; `cancel` is dropped with the watch.
    pub fn new(receiver: Receiver<Result<Vec<Event>, MetaError>>, cancel: Box<dyn Send>) -> Watch {
        Watch {
            receiver,
            _cancel: cancel,
        }
    }

    /// The next batch of events, waiting at most `timeout` (`Ok(None)` when none came). An
    /// error ends the watch: start a new one from the last revision seen plus one.
    pub fn next_timeout(&self, timeout: Duration) -> Result<Option<Vec<Event>>, MetaError> {
        match self.receiver.recv_timeout(timeout) {
            Ok(batch) => batch.map(Some),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(MetaError::Closed),
        }
    }

    /// Every batch already delivered, without waiting.
    pub fn drain(&self) -> Result<Vec<Event>, MetaError> {
        let mut events = Vec::new();
        while let Ok(batch) = self.receiver.try_recv() {
            events.extend(batch?);
        }
        Ok(events)
    }
}

/// A cluster's metadata store (see the crate documentation for the invariants).
pub trait MetaStore: Send + Sync {
    /// One key.
    fn get(&self, key: &str) -> Result<Option<Entry>, MetaError>;

    /// Every key starting with `prefix` (all keys for ""), in one consistent read.
    fn range(&self, prefix: &str) -> Result<Snapshot, MetaError>;

    /// Applies a transaction atomically.
    fn txn(&self, txn: Txn) -> Result<TxnResult, MetaError>;

    /// Watches every key starting with `prefix`, from `from_revision` (inclusive) on.
    fn watch(&self, prefix: &str, from_revision: Revision) -> Result<Watch, MetaError>;

    /// A new lease that expires `ttl` after its last keep-alive.
    fn grant_lease(&self, ttl: Duration) -> Result<LeaseId, MetaError>;

    /// Renews a lease; [`MetaError::LeaseNotFound`] once it expired or was revoked.
    fn keep_alive(&self, lease: LeaseId) -> Result<(), MetaError>;

    /// Ends a lease now, deleting its keys.
    fn revoke_lease(&self, lease: LeaseId) -> Result<(), MetaError>;

    /// The members of the store's own cluster, each probed now; none for a store that is not
    /// replicated (the default, and the in-memory store's).
    fn members(&self) -> Result<Vec<StoreMember>, MetaError> {
        Ok(Vec::new())
    }

    /// Sets one key unconditionally; the new revision.
    fn put(&self, key: &str, value: &[u8]) -> Result<Revision, MetaError> {
        self.txn(Txn::when(Vec::new(), vec![Op::put(key, value)]))
            .map(|result| result.revision)
    }
}
