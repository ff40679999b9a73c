//! What a running query carries besides its rows: the database, the kill switch and deadline,
//! warnings, statistics and the memory account.
//!
//! What it is: [`Control`] (shared with the query registry, so a kill or `maxRuntime` stops
//! the query at its next check), [`Stats`] (ArangoDB's `extra.stats`), and [`Context`], which
//! the executor and the functions use ([`FunctionContext`]).
//!
//! What it is not: the rows or the nodes.
//!
//! Invariants: memory reserved is released when the buffer holding it is drained, and the
//! account never exceeds `memory_limit` (the reservation that would is refused with 32); the
//! warnings kept are at most `max_warning_count`, and with `failOnWarning` the first warning
//! becomes the query's error.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use quince_errors::{self as codes, ArangoError, Result};
use quince_ops::{DatabaseOps, Durability};
use serde_json::Value;

use crate::functions::FunctionContext;
use crate::value::Warning;

/// The kill switch and the deadline of one query.
#[derive(Debug)]
pub struct Control {
    killed: AtomicBool,
    deadline: Option<Instant>,
}

impl Control {
    /// A control with an optional deadline (`maxRuntime`).
    pub fn new(deadline: Option<Instant>) -> Arc<Control> {
        Arc::new(Control {
            killed: AtomicBool::new(false),
            deadline,
        })
    }

    /// Kills the query: it fails with 1500 at its next check.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Release);
    }

    /// True once killed.
    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Err(1500) once killed or past the deadline.
    pub fn check(&self) -> Result<()> {
        if self.is_killed() {
            return Err(ArangoError::with_message(
                codes::QUERY_KILLED,
                "query killed".to_owned(),
            ));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(ArangoError::with_message(
                codes::QUERY_KILLED,
                "query killed: maxRuntime exceeded".to_owned(),
            ));
        }
        Ok(())
    }
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
    /// The kill switch.
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
    memory: u64,
    memory_limit: u64,
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
            memory: 0,
            memory_limit: limits.memory_limit,
        }
    }

    /// Reserves `bytes` of the memory account (32 beyond the limit).
    pub fn reserve(&mut self, bytes: u64) -> Result<()> {
        self.memory += bytes;
        self.stats.peak_memory = self.stats.peak_memory.max(self.memory);
        if self.memory_limit > 0 && self.memory > self.memory_limit {
            return Err(ArangoError::with_message(
                codes::RESOURCE_LIMIT,
                format!(
                    "AQL: query would use more memory than allowed ({} bytes) (while executing)",
                    self.memory_limit
                ),
            ));
        }
        Ok(())
    }

    /// How many more bytes the account may hold before the limit (`u64::MAX` without one).
    pub fn memory_headroom(&self) -> u64 {
        match self.memory_limit {
            0 => u64::MAX,
            limit => limit.saturating_sub(self.memory),
        }
    }

    /// Records that `bytes` more were held for a while (by a graph search, which accounts
    /// them itself against [`Context::memory_headroom`]), for the peak.
    pub fn note_held(&mut self, bytes: u64) {
        self.stats.peak_memory = self
            .stats
            .peak_memory
            .max(self.memory.saturating_add(bytes));
    }

    /// Gives `bytes` back to the account.
    pub fn release(&mut self, bytes: u64) {
        self.memory = self.memory.saturating_sub(bytes);
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

    fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }
}

/// A rough size of a value in memory, for the account.
pub fn value_size(value: &Value) -> u64 {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 16,
        Value::String(s) => 32 + s.len() as u64,
        Value::Array(items) => 32 + items.iter().map(value_size).sum::<u64>(),
        Value::Object(map) => {
            48 + map
                .iter()
                .map(|(k, v)| 40 + k.len() as u64 + value_size(v))
                .sum::<u64>()
        }
    }
}

/// The size of a row.
pub fn row_size(row: &[Value]) -> u64 {
    row.iter().map(value_size).sum()
}
