//! Accounts, the pool they share, and the thread-local state that says which account a thread
//! charges.
//!
//! What it is: [`Account`] (live bytes, peak, limit), [`Pool`] (the sum of its accounts and
//! the server-wide limit, with counters of refusals for metrics), [`Charging`] (binds the
//! current thread to an account until dropped) and `charge`, which [`crate::Counting`] calls.
//!
//! What it is not: a decision to stop work: [`Account::check`] and [`Account::admit`] only
//! answer whether a limit is passed; the caller stops itself.
//!
//! Invariants: a thread charges at most one account at a time (a nested [`Charging`] takes
//! over and gives the outer one back when dropped, in reverse order); charges are batched per
//! thread and reach the account (and its pool) in steps of at least [`CHUNK`] bytes, and
//! always when the guard is dropped; an account adds to its pool exactly what it adds to
//! itself, and gives its remainder back when dropped.
//!
//! `unsafe` here: the thread-local pointer to the charged account is dereferenced; a
//! [`Charging`] guard keeps the account alive for as long as the pointer names it.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::marker::PhantomData;
use std::ptr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// The step in which a thread's charges reach its account (bytes).
pub const CHUNK: i64 = 32 * 1024;

/// What a thread charges: the account (null: none), the bytes not yet added to it, and the
/// bytes it freed (in whole chunks) since its allocator last gave freed pages back.
struct ThreadState {
    account: Cell<*const Account>,
    pending: Cell<i64>,
    freed: Cell<u64>,
}

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates, so the
    // allocator may use it.
    static THREAD: ThreadState = const {
        ThreadState {
            account: Cell::new(ptr::null()),
            pending: Cell::new(0),
            freed: Cell::new(0),
        }
    };
}

/// Charges `delta` bytes (negative: frees) to the current thread's account, if it has one.
#[inline]
pub(crate) fn charge(delta: i64) {
    let _ = THREAD.try_with(|thread| {
        let account = thread.account.get();
        if account.is_null() {
            return;
        }
        let pending = thread.pending.get() + delta;
        if pending.abs() >= CHUNK {
            thread.pending.set(0);
            if pending < 0 {
                thread
                    .freed
                    .set(thread.freed.get() + pending.unsigned_abs());
            }
            // SAFETY: the pointer is set only by a live `Charging`, which holds an `Arc` of the
            // account until it resets the pointer (`Charging`'s invariants).
            unsafe { &*account }.add(pending);
        } else {
            thread.pending.set(pending);
        }
    });
}

/// Adds the current thread's pending charges to its account now.
fn flush() {
    let _ = THREAD.try_with(|thread| {
        let account = thread.account.get();
        let pending = thread.pending.replace(0);
        if !account.is_null() && pending != 0 {
            // SAFETY: as in `charge`.
            unsafe { &*account }.add(pending);
        }
    });
}

/// The bytes not yet added to `account` by the current thread (0 when it charges another).
fn pending_for(account: &Account) -> i64 {
    THREAD
        .try_with(|thread| {
            if ptr::eq(thread.account.get(), account) {
                thread.pending.get()
            } else {
                0
            }
        })
        .unwrap_or(0)
}

/// Why work must stop: a limit its memory passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// The account's own limit (bytes).
    Own {
        /// The limit.
        limit: u64,
    },
    /// The pool's limit (bytes), while this account was growing.
    Pool {
        /// The limit.
        limit: u64,
    },
}

/// The bytes a kind of work holds together (every AQL query of a server), and its limit.
#[derive(Debug, Default)]
pub struct Pool {
    live: AtomicI64,
    limit: AtomicU64,
    refused_own: AtomicU64,
    refused_pool: AtomicU64,
}

impl Pool {
    /// A pool with a limit in bytes (0: none).
    pub fn new(limit: u64) -> Arc<Pool> {
        let pool = Pool::default();
        pool.limit.store(limit, Ordering::Relaxed);
        Arc::new(pool)
    }

    /// The bytes its accounts hold now (never negative).
    pub fn used(&self) -> u64 {
        self.live.load(Ordering::Relaxed).max(0) as u64
    }

    /// The limit (0: none).
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Changes the limit (0: none).
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// How often an account of this pool was refused for its own limit.
    pub fn refused_own(&self) -> u64 {
        self.refused_own.load(Ordering::Relaxed)
    }

    /// How often an account of this pool was refused for the pool's limit.
    pub fn refused_pool(&self) -> u64 {
        self.refused_pool.load(Ordering::Relaxed)
    }

    fn over(&self, more: u64) -> Option<u64> {
        let limit = self.limit();
        (limit > 0 && self.used().saturating_add(more) > limit).then_some(limit)
    }
}

/// The memory one piece of work holds.
#[derive(Debug)]
pub struct Account {
    live: AtomicI64,
    peak: AtomicI64,
    /// `live` at the last [`Account::check`]: whether the account grew since.
    checked: AtomicI64,
    limit: u64,
    pool: Arc<Pool>,
}

impl Account {
    /// An account with a limit in bytes (0: none) in `pool`.
    pub fn new(limit: u64, pool: Arc<Pool>) -> Arc<Account> {
        Arc::new(Account {
            live: AtomicI64::new(0),
            peak: AtomicI64::new(0),
            checked: AtomicI64::new(0),
            limit,
            pool,
        })
    }

    /// An account without a limit in a pool of its own (folding constants, tests).
    pub fn unlimited() -> Arc<Account> {
        Account::new(0, Pool::new(0))
    }

    /// Makes the current thread charge this account until the guard is dropped.
    pub fn charge_this_thread(self: &Arc<Self>) -> Charging {
        flush();
        let previous = THREAD
            .try_with(|thread| thread.account.replace(Arc::as_ptr(self)))
            .unwrap_or(ptr::null());
        Charging {
            account: Arc::clone(self),
            previous,
            not_send: PhantomData,
        }
    }

    fn add(&self, delta: i64) {
        let live = self.live.fetch_add(delta, Ordering::Relaxed) + delta;
        self.peak.fetch_max(live, Ordering::Relaxed);
        self.pool.live.fetch_add(delta, Ordering::Relaxed);
    }

    /// The bytes held now, with what the current thread has not yet added (never negative).
    pub fn used(&self) -> u64 {
        (self.live.load(Ordering::Relaxed) + pending_for(self)).max(0) as u64
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> u64 {
        self.peak
            .load(Ordering::Relaxed)
            .max(self.used() as i64)
            .max(0) as u64
    }

    /// The limit (0: none).
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<Pool> {
        &self.pool
    }

    /// Whether the work may go on: not when the account holds more than its limit, nor when
    /// the pool holds more than its limit and this account grew since its last check (work
    /// that holds steady is not stopped for others' growth).
    pub fn check(&self) -> Result<(), Exceeded> {
        trim_churn();
        let used = self.used();
        if self.limit > 0 && used > self.limit {
            self.pool.refused_own.fetch_add(1, Ordering::Relaxed);
            return Err(Exceeded::Own { limit: self.limit });
        }
        let grew = used as i64 > self.checked.swap(used as i64, Ordering::Relaxed);
        if let Some(limit) = self.pool.over(0) {
            if grew {
                self.pool.refused_pool.fetch_add(1, Ordering::Relaxed);
                return Err(Exceeded::Pool { limit });
            }
        }
        Ok(())
    }

    /// Whether `bytes` more may be allocated (asked before an allocation whose size is known
    /// in advance, so that it is never made when it would pass a limit).
    pub fn admit(&self, bytes: u64) -> Result<(), Exceeded> {
        if self.limit > 0 && self.used().saturating_add(bytes) > self.limit {
            self.pool.refused_own.fetch_add(1, Ordering::Relaxed);
            return Err(Exceeded::Own { limit: self.limit });
        }
        if let Some(limit) = self.pool.over(bytes) {
            self.pool.refused_pool.fetch_add(1, Ordering::Relaxed);
            return Err(Exceeded::Pool { limit });
        }
        Ok(())
    }

    /// Takes `bytes` off the account: memory it was charged for now belongs to someone else
    /// (a result handed to a cursor), who will free it on a thread that charges nothing.
    pub fn release(&self, bytes: u64) {
        let bytes = bytes.min(i64::MAX as u64) as i64;
        self.live.fetch_sub(bytes, Ordering::Relaxed);
        self.pool.live.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl Drop for Account {
    fn drop(&mut self) {
        let live = *self.live.get_mut();
        self.pool.live.fetch_sub(live, Ordering::Relaxed);
        if *self.peak.get_mut() >= TRIM_AFTER {
            if let Some(trim) = TRIM.get() {
                trim();
            }
        }
    }
}

/// An account that held at least this much (bytes) gives its memory back to the operating
/// system when it goes ([`set_trim`]).
pub const TRIM_AFTER: i64 = 16 << 20;

/// A thread that freed this much (bytes) for its account since it last did has its allocator's
/// freed pages given back at its next check ([`set_trim_thread`]).
pub const TRIM_CHURN: u64 = 32 << 20;

/// What gives the freed pages of the current thread's allocator arena back.
static TRIM_THREAD: OnceLock<fn()> = OnceLock::new();

/// Installs `trim`, which returns the freed pages the allocator keeps for the current thread
/// to the operating system. It runs at an account's check once the thread freed
/// [`TRIM_CHURN`] bytes since it last ran: work that allocates and frees much (a subquery
/// rebuilt per row) would otherwise leave the process holding several times its live memory
/// until the allocator's own decay, seconds later. The first call wins.
pub fn set_trim_thread(trim: fn()) {
    let _ = TRIM_THREAD.set(trim);
}

/// Runs the thread trim when the current thread freed [`TRIM_CHURN`] bytes since it last did.
fn trim_churn() {
    let churned = THREAD
        .try_with(|thread| {
            let churned = thread.freed.get() >= TRIM_CHURN;
            if churned {
                thread.freed.set(0);
            }
            churned
        })
        .unwrap_or(false);
    if churned {
        if let Some(trim) = TRIM_THREAD.get() {
            trim();
        }
    }
}

/// What gives freed memory back to the operating system.
static TRIM: OnceLock<fn()> = OnceLock::new();

/// Installs `trim`, which returns the memory the allocator keeps for reuse to the operating
/// system; it runs when an account that held at least [`TRIM_AFTER`] bytes is dropped, so the
/// memory a large piece of work freed does not stay in the process (an allocator keeps freed
/// pages for a while, per thread's arena, and the process's resident memory would then grow
/// with the number of threads that ran large work, beyond any limit). The first call wins.
pub fn set_trim(trim: fn()) {
    let _ = TRIM.set(trim);
}

/// The current thread charges an account while this lives.
///
/// Invariants: it holds the account alive while the thread's pointer names it; it is not
/// `Send` and guards nest, so they are dropped in reverse order on the thread that made them;
/// it must be dropped, never forgotten.
#[must_use = "the thread charges the account only while the guard lives"]
pub struct Charging {
    account: Arc<Account>,
    previous: *const Account,
    not_send: PhantomData<*const ()>,
}

impl Charging {
    /// The account charged.
    pub fn account(&self) -> &Arc<Account> {
        &self.account
    }
}

impl Drop for Charging {
    fn drop(&mut self) {
        flush();
        let _ = THREAD.try_with(|thread| thread.account.set(self.previous));
    }
}
