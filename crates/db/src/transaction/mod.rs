//! Stream transactions of the local engine (`docs/transactions.md`): begin, operations that
//! join a transaction, commit, abort, the idle timeout.
//!
//! What it is: [`Transactions`], a database's registry of running and recently finished
//! transactions, and [`Transaction`], one of them. A transaction declares the collections it
//! writes; its begin takes their collection locks (`locks.rs`: shared *write*, or
//! *exclusive*), waiting at most `lockTimeout`. Its writes are decided when they are made
//! (against the committed version, or its own earlier write) and kept in memory
//! (`buffer.rs`), each key reserved against every other writer; reads inside it see its own
//! writes over the committed data (`view.rs` gives the api a database and collections that
//! work this way). Commit writes every buffered change through the storage engine's
//! transaction groups (`commit.rs`), so the writes become visible together and, after any
//! crash, are whole or absent.
//!
//! What it is not: snapshot isolation. A read inside a transaction sees the latest committed
//! version of a key the transaction has not written (read committed, with the transaction's
//! own writes, and write-write conflicts refused at once with 1200: see
//! `docs/transactions.md`). Nor is it the storage protocol, which is `quince-storage`'s.
//!
//! Invariants: one operation at a time per transaction (its state lock), so a transaction's
//! operations are ordered; no caller's code runs under that lock (scans and index lookups copy
//! what they need and release it before they visit), so a visitor that waits (a streaming
//! cursor between batches) blocks no other request of the transaction; its status is read
//! without the lock; a finished transaction never changes status again and holds no
//! reservation or collection lock; a database's client stream transactions share its
//! [`Slots`] ([`quince_ops::RUNNING_MAX`] in all, a user's share, the read-only bound, the
//! administrators' reserve), each holding its slot from before its locks are taken until it
//! leaves the running ones (a begin that fails gives it back), while those a request opens for
//! itself hold none; each transaction records who began it, which the api checks against the
//! caller; the registry remembers at most [`FINISHED_KEPT`] finished ones (for their
//! status); a transaction idle for longer than the idle timeout is aborted by the maintenance
//! thread, never while one of its operations runs.

mod buffer;
mod commit;
pub(crate) mod locks;
mod view;
mod write;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, TRANSACTION_ABORTED,
    TRANSACTION_DISALLOWED_OPERATION, TRANSACTION_UNREGISTERED_COLLECTION,
};
use quince_ops::{
    transaction_not_found, Beginner, DatabaseOps, Durability, Slots, TransactionOps,
    TransactionOptions, TransactionStatus,
};

use crate::collection::Collection;
use crate::database::Database;
use crate::shared::Shared;

use buffer::Buffer;

/// How many finished transactions a database remembers for their status.
pub(crate) const FINISHED_KEPT: usize = 256;

/// The default of `--transaction.streaming-idle-timeout`.
pub const IDLE_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);

/// A database's stream transactions.
pub(crate) struct Transactions {
    running: Mutex<BTreeMap<u64, Arc<Transaction>>>,
    finished: Mutex<VecDeque<Arc<Transaction>>>,
    /// The slots of the client stream transactions among `running` (and of begins waiting for
    /// their locks).
    slots: Mutex<Slots>,
    idle_timeout: Duration,
}

impl Transactions {
    pub(crate) fn new(idle_timeout: Duration) -> Transactions {
        Transactions {
            running: Mutex::new(BTreeMap::new()),
            finished: Mutex::new(VecDeque::new()),
            slots: Mutex::new(Slots::default()),
            idle_timeout,
        }
    }

    /// Begins a transaction of `database`: every declared collection must exist (1203), a
    /// client stream transaction takes a slot (32 when none is left for its beginner), the
    /// written collections are locked (18 after `lockTimeout`, and the slot is given back).
    pub(crate) fn begin(
        &self,
        database: &Arc<Database>,
        options: TransactionOptions,
    ) -> Result<Arc<Transaction>> {
        for name in options.read.iter() {
            database.collection(name)?;
        }
        let mut written: BTreeMap<u64, (Arc<Collection>, bool)> = BTreeMap::new();
        for name in &options.write {
            let collection = database.collection(name)?;
            written
                .entry(collection.id())
                .or_insert((collection, false));
        }
        for name in &options.exclusive {
            let collection = database.collection(name)?;
            written.insert(collection.id(), (collection, true));
        }
        let read_only = options.read_only();
        self.slots.lock().take(&options.begun_by, read_only)?;
        let id = database.shared().hlc.next().0;
        let deadline = options.lock_wait().map(|wait| Instant::now() + wait);
        // Locks are taken in collection id order, so two begins never wait on each other
        // in a cycle.
        let mut locked: Vec<(Arc<Collection>, bool)> = Vec::with_capacity(written.len());
        for (collection, exclusive) in written.into_values() {
            let name = collection.name();
            if let Err(error) = collection.trx_locks.lock(id, exclusive, deadline, &name) {
                for (taken, exclusive) in &locked {
                    taken.trx_locks.unlock(id, *exclusive);
                }
                self.slots.lock().give_back(&options.begun_by, read_only);
                return Err(error);
            }
            locked.push((collection, exclusive));
        }
        let transaction = Arc::new_cyclic(|me| Transaction {
            id,
            me: me.clone(),
            database: Arc::downgrade(database),
            shared: Arc::clone(database.shared()),
            options,
            locked,
            state: Mutex::new(State {
                buffers: BTreeMap::new(),
            }),
            status: AtomicU8::new(status_code(TransactionStatus::Running)),
            last_used: Mutex::new(Instant::now()),
        });
        self.running.lock().insert(id, Arc::clone(&transaction));
        database.shared().counters.transaction_started();
        Ok(transaction)
    }

    /// A running or recently finished transaction (1655 if none).
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Transaction>> {
        let not_found = || transaction_not_found(id);
        let id: u64 = id.trim().parse().map_err(|_| not_found())?;
        if let Some(transaction) = self.running.lock().get(&id) {
            return Ok(Arc::clone(transaction));
        }
        self.finished
            .lock()
            .iter()
            .find(|t| t.id == id)
            .cloned()
            .ok_or_else(not_found)
    }

    /// The running transactions, in begin order.
    pub(crate) fn running(&self) -> Vec<Arc<Transaction>> {
        self.running.lock().values().cloned().collect()
    }

    /// Aborts every transaction idle for longer than the idle timeout (skipping one whose
    /// operation runs right now: it is not idle).
    pub(crate) fn expire_idle(&self) {
        let now = Instant::now();
        let idle: Vec<Arc<Transaction>> = self
            .running
            .lock()
            .values()
            .filter(|t| now.duration_since(*t.last_used.lock()) > self.idle_timeout)
            .cloned()
            .collect();
        for transaction in idle {
            if let Some(mut state) = transaction.state.try_lock() {
                if transaction.status() == TransactionStatus::Running {
                    tracing::info!(event = "transaction.expired", id = transaction.id);
                    transaction.finish(&mut state, TransactionStatus::Aborted);
                }
            }
        }
    }

    /// Aborts every running transaction (the database is dropped or closed).
    pub(crate) fn abort_all(&self) {
        let running: Vec<Arc<Transaction>> = self.running.lock().values().cloned().collect();
        for transaction in running {
            let mut state = transaction.state.lock();
            if transaction.status() == TransactionStatus::Running {
                transaction.finish(&mut state, TransactionStatus::Aborted);
            }
        }
    }

    /// Moves a finished transaction from the running ones to the remembered ones, and gives
    /// back its slot.
    fn retire(&self, id: u64) {
        // The finished list is locked before the transaction leaves the running ones, so a
        // lookup in between (which reads the running ones, then the finished ones) waits for
        // it to arrive there instead of finding it nowhere.
        let mut finished = self.finished.lock();
        let Some(transaction) = self.running.lock().remove(&id) else {
            return;
        };
        let options = &transaction.options;
        self.slots
            .lock()
            .give_back(&options.begun_by, options.read_only());
        if finished.len() == FINISHED_KEPT {
            finished.pop_front();
        }
        finished.push_back(transaction);
    }
}

/// One stream transaction.
pub(crate) struct Transaction {
    id: u64,
    me: Weak<Transaction>,
    database: Weak<Database>,
    /// The catalog's shared context (its counters count the transaction's end even after its
    /// database was dropped).
    shared: Arc<Shared>,
    options: TransactionOptions,
    /// The collections it declared for writing, with their lock mode (exclusive or not).
    locked: Vec<(Arc<Collection>, bool)>,
    state: Mutex<State>,
    /// Where it is in its life ([`status_code`]). Written only under `state` (by `finish`), so
    /// it is stable while the lock is held; read without the lock too, since a request naming
    /// the transaction asks for it on a runtime worker ([`TransactionOps::status`]) and must
    /// not wait for an operation in progress.
    status: AtomicU8,
    /// When its last operation ended (or its begin).
    last_used: Mutex<Instant>,
}

/// [`TransactionStatus`] as stored in [`Transaction::status`].
fn status_code(status: TransactionStatus) -> u8 {
    match status {
        TransactionStatus::Running => 0,
        TransactionStatus::Committed => 1,
        TransactionStatus::Aborted => 2,
    }
}

/// The inverse of [`status_code`].
fn status_of(code: u8) -> TransactionStatus {
    match code {
        0 => TransactionStatus::Running,
        1 => TransactionStatus::Committed,
        _ => TransactionStatus::Aborted,
    }
}

/// What changes while a transaction runs.
pub(crate) struct State {
    /// The changes, per collection id (commit takes the collections in this order).
    buffers: BTreeMap<u64, Buffer>,
}

impl Transaction {
    /// The state of a running transaction, for one operation (1654 once aborted, 1653 once
    /// committed). The idle clock restarts when the operation ends.
    fn running(&self) -> Result<Operation<'_>> {
        let state = self.state.lock();
        match self.status() {
            TransactionStatus::Running => Ok(Operation {
                transaction: self,
                state,
            }),
            TransactionStatus::Aborted => Err(ArangoError::with_message(
                TRANSACTION_ABORTED,
                format!("transaction {} aborted", self.id),
            )),
            TransactionStatus::Committed => Err(ArangoError::with_message(
                TRANSACTION_DISALLOWED_OPERATION,
                format!("transaction {} is already committed", self.id),
            )),
        }
    }

    fn database(&self) -> Result<Arc<Database>> {
        self.database
            .upgrade()
            .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))
    }

    /// Checks that the transaction may write `collection` (1652 otherwise).
    fn check_writable(&self, collection: &Collection) -> Result<()> {
        if self.locked.iter().any(|(c, _)| c.id() == collection.id()) {
            return Ok(());
        }
        Err(ArangoError::with_message(
            TRANSACTION_UNREGISTERED_COLLECTION,
            format!(
                "collection '{}' is not registered for writing in transaction {}",
                collection.name(),
                self.id
            ),
        ))
    }

    /// Checks that the transaction may read `collection` (1652 for an undeclared one without
    /// `allowImplicit`).
    fn check_readable(&self, collection: &Collection) -> Result<()> {
        if self.options.allow_implicit || self.options.declares(&collection.name()) {
            return Ok(());
        }
        if self.locked.iter().any(|(c, _)| c.id() == collection.id()) {
            return Ok(());
        }
        Err(ArangoError::with_message(
            TRANSACTION_UNREGISTERED_COLLECTION,
            format!(
                "collection '{}' is not registered in transaction {} and allowImplicit is false",
                collection.name(),
                self.id
            ),
        ))
    }

    /// Ends the transaction: drops what it buffered, gives back its reservations and locks,
    /// and retires it from the registry.
    fn finish(&self, state: &mut State, status: TransactionStatus) {
        for buffer in state.buffers.values() {
            let keys = buffer.order.iter().map(String::as_str);
            buffer.collection.trx_locks.release(self.id, keys);
        }
        state.buffers.clear();
        for (collection, exclusive) in &self.locked {
            collection.trx_locks.unlock(self.id, *exclusive);
        }
        self.status.store(status_code(status), Ordering::Release);
        let committed = status == TransactionStatus::Committed;
        self.shared.counters.transaction_finished(committed);
        if let Some(database) = self.database.upgrade() {
            database.transactions().retire(self.id);
        }
    }

    fn me(&self) -> Arc<Transaction> {
        self.me
            .upgrade()
            .expect("a transaction in use is referenced")
    }
}

/// One operation's hold on a running transaction: its state, locked.
struct Operation<'t> {
    transaction: &'t Transaction,
    state: MutexGuard<'t, State>,
}

impl Drop for Operation<'_> {
    fn drop(&mut self) {
        *self.transaction.last_used.lock() = Instant::now();
    }
}

impl TransactionOps for Transaction {
    fn id(&self) -> String {
        self.id.to_string()
    }

    fn status(&self) -> TransactionStatus {
        status_of(self.status.load(Ordering::Acquire))
    }

    fn begun_by(&self) -> &Beginner {
        &self.options.begun_by
    }

    fn database(&self) -> Arc<dyn DatabaseOps> {
        match Transaction::database(self) {
            Ok(database) => Arc::new(view::TrxDatabase::new(self.me(), database)),
            // The database was dropped: its collections are gone, and so is every answer.
            Err(_) => Arc::new(view::Gone::new(self.me())),
        }
    }

    fn commit(&self) -> Result<Option<Durability>> {
        let mut state = self.state.lock();
        match self.status() {
            TransactionStatus::Committed => return Ok(None),
            TransactionStatus::Aborted => {
                return Err(ArangoError::with_message(
                    TRANSACTION_DISALLOWED_OPERATION,
                    format!("transaction {} was already aborted", self.id),
                ))
            }
            TransactionStatus::Running => {}
        }
        let result = self.commit_buffers(&mut state);
        let status = match result {
            Ok(_) => TransactionStatus::Committed,
            Err(_) => TransactionStatus::Aborted,
        };
        self.finish(&mut state, status);
        result.map(|()| None)
    }

    fn abort(&self) -> Result<()> {
        let mut state = self.state.lock();
        match self.status() {
            TransactionStatus::Aborted => Ok(()),
            TransactionStatus::Committed => Err(ArangoError::with_message(
                TRANSACTION_DISALLOWED_OPERATION,
                format!("transaction {} was already committed", self.id),
            )),
            TransactionStatus::Running => {
                self.finish(&mut state, TransactionStatus::Aborted);
                Ok(())
            }
        }
    }
}
