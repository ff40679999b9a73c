//! Stream transactions as the operations interface sees them: the options of a begin (who
//! begins it among them, [`Beginner`]), the status of a transaction, [`TransactionOps`], the
//! handle every engine gives back, and [`Slots`], the one rule of how many client stream
//! transactions may run and who may hold them, which every engine's registry applies.
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
//! Nor is it the owner check: an engine finds a transaction by id for anyone; the api answers
//! one that the caller may not use exactly as an unknown one ([`transaction_not_found`]).
//!
//! Invariants (every implementation): a transaction's writes become visible to others only
//! when it commits, all together; a finished transaction (committed or aborted) never changes
//! state again; commit and abort are idempotent (committing a committed transaction, or
//! aborting an aborted one, answers its status again), and the other way round is refused
//! with 1653; a transaction that idles past the idle timeout is aborted; a client stream
//! transaction holds one of its registry's [`Slots`] from its begin until it is no longer
//! running, and a transaction that one request opens and closes itself holds none.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use quince_errors::{ArangoError, Result, RESOURCE_LIMIT, TRANSACTION_NOT_FOUND};
use serde_json::Value;

use crate::durability::Durability;
use crate::interface::DatabaseOps;

/// ArangoDB's default bound on a stream transaction's size (`maxTransactionSize` absent):
/// `--transaction.streaming-max-transaction-size`'s default, 128 MiB.
pub const MAX_TRANSACTION_SIZE_DEFAULT: u64 = 128 << 20;

/// The default `lockTimeout` in seconds when a begin names none.
pub const LOCK_TIMEOUT_DEFAULT: f64 = 900.0;

/// The most client stream transactions running at once in one registry (a database of the
/// local engine; a coordinator); a begin beyond it answers 400/32.
pub const RUNNING_MAX: usize = 1024;

/// The most client stream transactions one user may hold at once: a quarter of
/// [`RUNNING_MAX`], as a user's share of the async job queue.
pub const RUNNING_PER_USER_MAX: usize = RUNNING_MAX / 4;

/// The most read-only client stream transactions (declaring no written collection) running at
/// once, all users together: half of [`RUNNING_MAX`], so that transactions that write always
/// find room.
pub const RUNNING_READ_ONLY_MAX: usize = RUNNING_MAX / 2;

/// The slots only administrators and superusers may take: the last sixteenth of
/// [`RUNNING_MAX`].
pub const RUNNING_ADMIN_RESERVE: usize = RUNNING_MAX / 16;

/// What the caller of a begin may claim of the [`Slots`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// A user: at most [`RUNNING_PER_USER_MAX`], read-only ones within
    /// [`RUNNING_READ_ONLY_MAX`], never the last [`RUNNING_ADMIN_RESERVE`].
    User,
    /// An administrator (`rw` on `_system`): as a user, and the reserve too.
    Admin,
    /// A superuser (a superuser JWT, authentication switched off, the server's and the
    /// cluster's own requests): bounded by [`RUNNING_MAX`] only.
    Superuser,
}

/// Who begins a transaction (its owner), and whether it is a client's stream transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Beginner {
    /// The owner: the user who began it. Empty for a superuser's transaction and for one a
    /// request opens for itself; only superusers may use those by id.
    pub user: String,
    /// What the beginner may claim of the slots.
    pub rank: Rank,
    /// A client's stream transaction (`POST /_api/transaction/begin`): it holds a slot while it
    /// runs and is listed by `GET /_api/transaction`. False for a transaction that one request
    /// opens and closes itself (an AQL write query, a `complete=true` import, a graph vertex
    /// removal): it holds no slot and is never refused for want of one (the request queue
    /// bounds those requests), and it is not listed.
    pub stream: bool,
}

impl Beginner {
    /// A superuser's stream transaction (the default of [`TransactionOptions`]).
    pub fn superuser() -> Beginner {
        Beginner {
            user: String::new(),
            rank: Rank::Superuser,
            stream: true,
        }
    }

    /// A client's stream transaction, begun by `user` of `rank`.
    pub fn client(user: &str, rank: Rank) -> Beginner {
        Beginner {
            user: user.to_owned(),
            rank,
            stream: true,
        }
    }

    /// A transaction that one request opens and closes itself (see [`Beginner::stream`]).
    pub fn request() -> Beginner {
        Beginner {
            user: String::new(),
            rank: Rank::Superuser,
            stream: false,
        }
    }
}

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
    /// Who begins it (not part of the body: the api sets it from the caller; by default a
    /// superuser's stream transaction).
    pub begun_by: Beginner,
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
            begun_by: Beginner::superuser(),
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

    /// True when it declares no collection for writing (its slot counts against
    /// [`RUNNING_READ_ONLY_MAX`]).
    pub fn read_only(&self) -> bool {
        self.write.is_empty() && self.exclusive.is_empty()
    }
}

/// The error for a transaction id that names none the caller may use (404/1655): every engine
/// answers an unknown id with it, and the api answers another user's transaction with it, so
/// the two cannot be told apart.
pub fn transaction_not_found(id: &str) -> ArangoError {
    ArangoError::with_message(
        TRANSACTION_NOT_FOUND,
        format!("transaction '{id}' not found"),
    )
}

/// The client stream transactions of one registry, counted, and the rule of who may begin
/// another: [`RUNNING_MAX`] in all; a user at most [`RUNNING_PER_USER_MAX`]; read-only ones at
/// most [`RUNNING_READ_ONLY_MAX`] together; the last [`RUNNING_ADMIN_RESERVE`] for
/// administrators. A superuser is bounded by the total only (in a cluster the coordinators
/// begin their parts on the DB servers as superusers, having applied the shares themselves).
/// Transactions that are not client stream transactions are not counted.
///
/// The registry calls [`Slots::take`] before it begins a transaction and [`Slots::give_back`]
/// with the same beginner once the transaction is no longer running (or its begin failed).
#[derive(Debug, Default)]
pub struct Slots {
    /// Running client stream transactions.
    running: usize,
    /// Those of them that are read-only.
    read_only: usize,
    /// Per user (not superusers), how many they hold.
    per_user: HashMap<String, usize>,
}

impl Slots {
    /// Takes a slot for a transaction `begun_by` begins (read-only or not), or answers 400/32
    /// naming the bound it would pass. Takes nothing for a transaction that is not a client
    /// stream transaction.
    pub fn take(&mut self, begun_by: &Beginner, read_only: bool) -> Result<()> {
        if !begun_by.stream {
            return Ok(());
        }
        let refuse = |message: String| Err(ArangoError::with_message(RESOURCE_LIMIT, message));
        if self.running >= RUNNING_MAX {
            return refuse(format!(
                "too many running transactions (at most {RUNNING_MAX})"
            ));
        }
        if begun_by.rank != Rank::Superuser {
            let held = self.per_user.get(&begun_by.user).copied().unwrap_or(0);
            if held >= RUNNING_PER_USER_MAX {
                return refuse(format!(
                    "too many running transactions of user '{}' (at most {RUNNING_PER_USER_MAX} \
                     per user)",
                    begun_by.user
                ));
            }
            if read_only && self.read_only >= RUNNING_READ_ONLY_MAX {
                return refuse(format!(
                    "too many running read-only transactions (at most {RUNNING_READ_ONLY_MAX}; \
                     the other slots are kept for transactions that write)"
                ));
            }
        }
        if begun_by.rank == Rank::User && self.running >= RUNNING_MAX - RUNNING_ADMIN_RESERVE {
            return refuse(format!(
                "too many running transactions (at most {}; the last {RUNNING_ADMIN_RESERVE} of \
                 {RUNNING_MAX} are kept for administrators)",
                RUNNING_MAX - RUNNING_ADMIN_RESERVE
            ));
        }
        self.running += 1;
        if read_only {
            self.read_only += 1;
        }
        if begun_by.rank != Rank::Superuser {
            *self.per_user.entry(begun_by.user.clone()).or_insert(0) += 1;
        }
        Ok(())
    }

    /// Gives back the slot [`Slots::take`] took for the same beginner and read-only flag.
    pub fn give_back(&mut self, begun_by: &Beginner, read_only: bool) {
        if !begun_by.stream {
            return;
        }
        debug_assert!(
            self.running > 0,
            "a slot is given back that was never taken"
        );
        self.running = self.running.saturating_sub(1);
        if read_only {
            self.read_only = self.read_only.saturating_sub(1);
        }
        if begun_by.rank != Rank::Superuser {
            if let Some(held) = self.per_user.get_mut(&begun_by.user) {
                *held -= 1;
                if *held == 0 {
                    self.per_user.remove(&begun_by.user);
                }
            }
        }
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

    /// Who began it: its owner, and whether it is a client's stream transaction.
    fn begun_by(&self) -> &Beginner;

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
