//! Stream transactions as the operations interface sees them: the options of a begin, the
//! status of a transaction, and [`TransactionOps`], the handle every engine gives back.
//!
//! What it is: engine-neutral values and one trait. A transaction hands out a view of its
//! database ([`TransactionOps::database`]) whose collections read and write inside the
//! transaction, so every api that takes a collection (documents, multi-document, import,
//! count, truncate, and later cursors) honours `x-arango-trx-id` by resolving its collection
//! through that view instead of the plain database.
//!
//! What it is not: the isolation or the commit protocol: those are the engine's (the local
//! engine's are in `quince-db`'s `transaction` module and `docs/transactions.md`). Nor is it
//! HTTP: the status line and body shapes are the api's.
//!
//! Invariants (every implementation): a transaction's writes become visible to others only
//! when it commits, all together; a finished transaction (committed or aborted) never changes
//! state again; commit and abort are idempotent (committing a committed transaction, or
//! aborting an aborted one, answers its status again), and the other way round is refused
//! with 1653; a transaction that idles past the idle timeout is aborted.

use std::sync::Arc;
use std::time::Duration;

use quince_errors::{ArangoError, Result};
use serde_json::Value;

use crate::durability::Durability;
use crate::interface::DatabaseOps;

/// ArangoDB's default bound on a stream transaction's size (`maxTransactionSize` absent):
/// `--transaction.streaming-max-transaction-size`'s default, 128 MiB.
pub const MAX_TRANSACTION_SIZE_DEFAULT: u64 = 128 << 20;

/// The default `lockTimeout` in seconds when a begin names none.
pub const LOCK_TIMEOUT_DEFAULT: f64 = 900.0;

/// What a transaction declares at its begin.
#[derive(Clone, Debug, PartialEq)]
pub struct TransactionOptions {
    /// Collections only read (names).
    pub read: Vec<String>,
    /// Collections written.
    pub write: Vec<String>,
    /// Collections written with no other writer meanwhile.
    pub exclusive: Vec<String>,
    /// Commit durably (fsync before the commit answers).
    pub wait_for_sync: bool,
    /// Reads of collections not declared are allowed (writes never are).
    pub allow_implicit: bool,
    /// How long a begin waits for an exclusive collection, in seconds (0: no bound).
    pub lock_timeout: f64,
    /// The bound on the bytes the transaction may write.
    pub max_transaction_size: u64,
    /// Accepted and ignored (a cluster lock-ordering hint).
    pub skip_fast_lock_round: bool,
}

impl Default for TransactionOptions {
    fn default() -> Self {
        TransactionOptions {
            read: Vec::new(),
            write: Vec::new(),
            exclusive: Vec::new(),
            wait_for_sync: false,
            allow_implicit: true,
            lock_timeout: LOCK_TIMEOUT_DEFAULT,
            max_transaction_size: MAX_TRANSACTION_SIZE_DEFAULT,
            skip_fast_lock_round: false,
        }
    }
}

impl TransactionOptions {
    /// Parses the body of `POST /_api/transaction/begin`: `collections` {read, write,
    /// exclusive} (each a name or an array of names), `waitForSync`, `allowImplicit`,
    /// `lockTimeout`, `maxTransactionSize`, `skipFastLockRound`. A body that is not an object,
    /// or a field of the wrong type, is 400/10.
    pub fn parse(body: &Value) -> Result<TransactionOptions> {
        let Value::Object(body) = body else {
            return Err(bad("the body must be an object"));
        };
        let mut options = TransactionOptions::default();
        match body.get("collections") {
            None | Some(Value::Null) => {}
            Some(Value::Object(collections)) => {
                options.read = names(collections.get("read"), "read")?;
                options.write = names(collections.get("write"), "write")?;
                options.exclusive = names(collections.get("exclusive"), "exclusive")?;
            }
            Some(_) => return Err(bad("'collections' must be an object")),
        }
        if let Some(v) = body.get("waitForSync") {
            options.wait_for_sync = boolean(v, "waitForSync")?;
        }
        if let Some(v) = body.get("allowImplicit") {
            options.allow_implicit = boolean(v, "allowImplicit")?;
        }
        if let Some(v) = body.get("skipFastLockRound") {
            options.skip_fast_lock_round = boolean(v, "skipFastLockRound")?;
        }
        if let Some(v) = body.get("lockTimeout") {
            options.lock_timeout = match v.as_f64() {
                Some(t) if t >= 0.0 && t.is_finite() => t,
                _ => return Err(bad("'lockTimeout' must be a non-negative number")),
            };
        }
        if let Some(v) = body.get("maxTransactionSize") {
            options.max_transaction_size = match v.as_f64() {
                // 0 (or a tiny value) still admits nothing but reads; ArangoDB takes the
                // number as given.
                Some(n) if n >= 0.0 && n.is_finite() => n as u64,
                _ => return Err(bad("'maxTransactionSize' must be a non-negative number")),
            };
        }
        Ok(options)
    }

    /// The lock timeout as a duration (`None`: wait without bound).
    pub fn lock_wait(&self) -> Option<Duration> {
        (self.lock_timeout > 0.0).then(|| Duration::from_secs_f64(self.lock_timeout))
    }

    /// True when the transaction may write `name` (declared write or exclusive).
    pub fn writes(&self, name: &str) -> bool {
        self.write.iter().chain(&self.exclusive).any(|c| c == name)
    }

    /// True when `name` is declared at all.
    pub fn declares(&self, name: &str) -> bool {
        self.writes(name) || self.read.iter().any(|c| c == name)
    }
}

/// A collection list of a begin: a string, an array of strings, or absent.
fn names(value: Option<&Value>, field: &str) -> Result<Vec<String>> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(name)) => Ok(vec![name.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(name) => Ok(name.clone()),
                _ => Err(bad(&format!("'collections.{field}' must name collections"))),
            })
            .collect(),
        Some(_) => Err(bad(&format!("'collections.{field}' must name collections"))),
    }
}

fn boolean(value: &Value, field: &str) -> Result<bool> {
    value
        .as_bool()
        .ok_or_else(|| bad(&format!("'{field}' must be a boolean")))
}

fn bad(message: &str) -> ArangoError {
    ArangoError::with_message(quince_errors::BAD_PARAMETER, message.to_owned())
}

/// Where a transaction is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionStatus {
    /// Open: operations may join it.
    Running,
    /// Its writes are applied (and durable, when it asked for `waitForSync`).
    Committed,
    /// Its writes were dropped (by the client, an error, or the idle timeout).
    Aborted,
}

impl TransactionStatus {
    /// The word ArangoDB answers (`running`, `committed`, `aborted`).
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionStatus::Running => "running",
            TransactionStatus::Committed => "committed",
            TransactionStatus::Aborted => "aborted",
        }
    }
}

/// One stream transaction.
pub trait TransactionOps: Send + Sync {
    /// The id, as clients send it back in `x-arango-trx-id` (decimal).
    fn id(&self) -> String;

    /// Where it is in its life.
    fn status(&self) -> TransactionStatus;

    /// The database as seen from inside the transaction: its collections read the
    /// transaction's own writes and write into it (1652 for a collection the transaction did
    /// not declare for writing, or not at all without `allowImplicit`; 1654 once it is
    /// aborted; 1653 for an operation a transaction cannot run). Catalog changes through the
    /// view are refused with 1653.
    fn database(&self) -> Arc<dyn DatabaseOps>;

    /// Commits: every write becomes visible at once and, after a crash, is whole or absent.
    /// The handle resolves when the commit is durable (present when `waitForSync` asked for
    /// it and the engine does not wait itself). Idempotent; 1653 when already aborted.
    fn commit(&self) -> Result<Option<Durability>>;

    /// Aborts: every write is dropped. Idempotent; 1653 when already committed.
    fn abort(&self) -> Result<()>;
}
