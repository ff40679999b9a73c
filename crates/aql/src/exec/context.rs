//! What a running query carries besides its rows: the database, the kill switch, deadline and
//! memory account, warnings and statistics.
//!
//! What it is: [`Control`] (shared with the query registry, so a kill or `maxRuntime` stops
//! the query at its next check; it holds the query's `quince_memory::Account`, which the
//! thread running the query charges with every allocation), [`Stats`] (ArangoDB's
//! `extra.stats`), and [`Context`], which the executor and the functions use
//! ([`FunctionContext`]).
//!
//! What it is not: the rows or the nodes, or an estimate of sizes: memory is what the
//! allocator handed out while the query's thread charged its account.
//!
//! Invariants: every loop that may run long calls [`Context::tick`] once per step (or
//! [`Control::check`] directly), so a killed query and one past its memory limit stop at
//! their next step, and one past its deadline within 8 steps; a value whose size is known
//! before it is built (a range, a padded string) is admitted first ([`Control::admit`]), so
//! it is never built when it would pass a limit; the warnings kept are at most `max_warning_count`, and with
//! `failOnWarning` the first warning becomes the query's error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quince_errors::{self as codes, ArangoError, Result};
use quince_memory::{Account, Exceeded};
use quince_ops::{DatabaseOps, Durability};

use crate::functions::FunctionContext;
use crate::value::Warning;

/// How many [`Context::tick`]s pass between two readings of the clock (the kill switch and
/// the memory account are read at every tick).
const TICKS_PER_CLOCK: u32 = 8;

/// The kill switch, the deadline and the memory account of one query.
#[derive(Debug)]
pub struct Control {
    killed: AtomicBool,
    deadline: Option<Instant>,
    memory: Arc<Account>,
}

impl Control {
    /// A control with an optional deadline (`maxRuntime`) and a memory account without a
    /// limit of its own (folding, computed values, tests).
    pub fn new(deadline: Option<Instant>) -> Arc<Control> {
        Control::with_memory(deadline, Account::unlimited())
    }

    /// A control whose query charges `memory` (see [`Control::check`]).
    pub fn with_memory(deadline: Option<Instant>, memory: Arc<Account>) -> Arc<Control> {
        Arc::new(Control {
            killed: AtomicBool::new(false),
            deadline,
            memory,
        })
    }

    /// The query's memory account: the thread that runs the query charges it
    /// (`quince_memory::Account::charge_this_thread`).
    pub fn memory(&self) -> &Arc<Account> {
        &self.memory
    }

    /// Kills the query: it fails with 1500 at its next check.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Release);
    }

    /// True once killed.
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Err(1500) once killed or past the deadline; Err(32) once the query holds more memory
    /// than its limit, or grows while all queries together hold more than theirs.
    pub fn check(&self) -> Result<()> {
        if self.is_killed() {
            return Err(killed());
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ArangoError::with_message(
                codes::QUERY_KILLED,
                "query killed: maxRuntime exceeded".to_owned(),
            ));
        }
        self.check_memory()
    }

    /// Err(32) once the query holds more memory than its limit, or grows while all queries
    /// together hold more than theirs (the memory part of [`Control::check`], cheap enough
    /// for every step).
    pub fn check_memory(&self) -> Result<()> {
        self.memory.check().map_err(memory_error)
    }

    /// [`Control::check`] without reading the clock: the kill switch and the memory account.
    pub fn check_without_clock(&self) -> Result<()> {
        if self.is_killed() {
            return Err(killed());
        }
        self.check_memory()
    }

    /// Err(32) when `bytes` more would pass the query's memory limit or the server's: asked
    /// before building a value whose size is known in advance (a range, a repeated string).
    pub fn admit(&self, bytes: u64) -> Result<()> {
        self.memory.admit(bytes).map_err(memory_error)
    }
}

/// The error of a killed query (1500).
fn killed() -> ArangoError {
    ArangoError::with_message(codes::QUERY_KILLED, "query killed".to_owned())
}

/// The error of a passed memory limit (32, ArangoDB's "resource limit exceeded").
pub fn memory_error(exceeded: Exceeded) -> ArangoError {
    let message = match exceeded {
        Exceeded::Own { limit } => format!(
            "AQL: query would use more memory than allowed ({limit} bytes) (while executing)"
        ),
        Exceeded::Pool { limit } => format!(
            "AQL: the queries running together would use more memory than allowed \
             (--query.global-memory-limit, {limit} bytes) (while executing)"
        ),
    };
    ArangoError::with_message(codes::RESOURCE_LIMIT, message)
}

/// ArangoDB's `extra.stats` of a query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Documents written.
    pub writes_executed: u64,
    /// Writes that failed under `ignoreErrors`.
    pub writes_ignored: u64,
    /// Documents read by full scans.
    pub scanned_full: u64,
    /// Documents read through an index.
    pub scanned_index: u64,
    /// Rows dropped by filters.
    pub filtered: u64,
    /// With `fullCount`: the rows before the last top-level LIMIT.
    pub full_count: Option<u64>,
    /// The most memory the query's buffers held at once, in bytes (estimated).
    pub peak_memory: u64,
}

/// The state of a running query that is not its rows.
pub struct Context {
    /// The database the query runs in (a transaction's view when it runs in one).
    pub database: Arc<dyn DatabaseOps>,
    /// The kill switch, deadline and memory account.
    pub control: Arc<Control>,
    /// The statistics so far.
    pub stats: Stats,
    /// The warnings kept.
    pub warnings: Vec<Warning>,
    /// The user running the query.
    pub user: Option<String>,
    /// Durability handles of `waitForSync` writes, awaited before the query answers.
    pub durabilities: Vec<Durability>,
    max_warnings: usize,
    fail_on_warning: bool,
    failed: Option<ArangoError>,
    ticks: u32,
}

impl Context {
    /// A context for one run.
    pub fn new(
        database: Arc<dyn DatabaseOps>,
        control: Arc<Control>,
        user: Option<String>,
        limits: &crate::QueryOptions,
    ) -> Context {
        Context {
            database,
            control,
            stats: Stats::default(),
            warnings: Vec::new(),
            user,
            durabilities: Vec::new(),
            max_warnings: limits.max_warning_count as usize,
            fail_on_warning: limits.fail_on_warning,
            failed: None,
            ticks: 0,
        }
    }

    /// Called once per step of every loop that may run long (an element of a `FOR`, a row
    /// a breaker takes or gives out, a path a search finds): checks the kill switch and the
    /// memory account, and every 8th call the deadline too ([`Control::check`]).
    #[inline]
    pub fn tick(&mut self) -> Result<()> {
        self.ticks = self.ticks.wrapping_add(1);
        if self.ticks.is_multiple_of(TICKS_PER_CLOCK) {
            self.control.check()
        } else {
            self.control.check_without_clock()
        }
    }

    /// Err(32) when `bytes` more would pass a memory limit ([`Control::admit`]).
    pub fn admit(&self, bytes: u64) -> Result<()> {
        self.control.admit(bytes)
    }

    /// Records the account's peak in the statistics.
    pub fn note_peak(&mut self) {
        self.stats.peak_memory = self.control.memory().peak();
    }

    /// The error a warning became under `failOnWarning`, once.
    pub fn take_failure(&mut self) -> Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl FunctionContext for Context {
    fn warn(&mut self, warning: Warning) {
        if self.fail_on_warning && self.failed.is_none() {
            let code = quince_errors::code_by_num(warning.code).unwrap_or(codes::QUERY_USER_WARN);
            self.failed = Some(ArangoError::with_message(code, warning.message.clone()));
        }
        if self.warnings.len() < self.max_warnings {
            self.warnings.push(warning);
        }
    }

    fn database(&self) -> &dyn DatabaseOps {
        &*self.database
    }

    fn check_alive(&self) -> Result<()> {
        self.control.check()
    }

    fn admit(&self, bytes: u64) -> Result<()> {
        self.control.admit(bytes)
    }

    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
}
