//! A query from text to results: parse, compile, optimize, run, inside a transaction when it
//! writes.
//!
//! What it is: [`QueryOptions`] (the cursor API's options that shape execution), [`prepare`]
//! (text and bind parameters to a [`Prepared`] query, every error of the compile stage
//! raised here), and [`Prepared::run`], which hands each result to a sink and answers the
//! statistics and warnings.
//!
//! What it is not: a cursor. Batching, ids and expiry are the api's; this module runs one
//! query to its end (or until the sink stops it).
//!
//! Invariants: a query that writes runs in one transaction: the request's stream transaction
//! when it came with one (the database handed in is then the transaction's view, which
//! refuses to begin another), or its own, committed when the query ends and aborted when it
//! fails, so its writes are all or nothing. `waitForSync` writes are durable before `run`
//! returns. The thread that runs a query charges its memory account for the whole run.

use std::sync::Arc;
use std::time::Instant;

use quince_errors::{ArangoError, Result};
use quince_memory::{Account, Pool};
use quince_ops::{Beginner, DatabaseOps, TransactionOptions};
use serde_json::{Map, Value};

use crate::ast;
use crate::exec::{Context, Control, Executor, Stats};
use crate::plan::{self, Plan};
use crate::value::Warning;

/// Options that shape a query's execution.
#[derive(Clone, Debug)]
pub struct QueryOptions {
    /// Count the rows before the last top-level LIMIT.
    pub full_count: bool,
    /// Bytes the query's buffers may hold (0: no limit).
    pub memory_limit: u64,
    /// Seconds before the query is killed (0: no limit).
    pub max_runtime: f64,
    /// The first warning fails the query.
    pub fail_on_warning: bool,
    /// Warnings kept.
    pub max_warning_count: u64,
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            full_count: false,
            memory_limit: 0,
            max_runtime: 0.0,
            fail_on_warning: false,
            max_warning_count: 10,
        }
    }
}

/// What a run reports besides its results.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// `extra.stats`.
    pub stats: Stats,
    /// `extra.warnings`.
    pub warnings: Vec<Warning>,
}

/// A parsed and compiled query, ready to run.
pub struct Prepared {
    query: ast::Query,
    binds: Map<String, Value>,
    database: Arc<dyn DatabaseOps>,
    options: QueryOptions,
    plan: Plan,
    /// Seconds spent parsing and planning.
    pub prepare_time: f64,
}

/// Parses and compiles `text` with `binds` against `database`.
pub fn prepare(
    database: Arc<dyn DatabaseOps>,
    text: &str,
    binds: Map<String, Value>,
    options: QueryOptions,
) -> Result<Prepared> {
    let started = Instant::now();
    let query = crate::syntax::parse(text)?;
    let plan = build(&query, &database, &binds, &options)?;
    Ok(Prepared {
        query,
        binds,
        database,
        options,
        plan,
        prepare_time: started.elapsed().as_secs_f64(),
    })
}

fn build(
    query: &ast::Query,
    database: &Arc<dyn DatabaseOps>,
    binds: &Map<String, Value>,
    options: &QueryOptions,
) -> Result<Plan> {
    let mut plan = plan::compile(query, database, binds, options.full_count)?;
    plan::optimize(&mut plan);
    Ok(plan)
}

impl Prepared {
    /// The plan (for explain).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// True when the query writes.
    pub fn modifies(&self) -> bool {
        self.plan.modifies
    }

    /// The collections read or written, by name.
    pub fn collections(&self) -> Vec<String> {
        self.plan
            .collections
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    /// True when the query's result depends only on its text, its bind parameters and the
    /// collections' contents (the results cache may keep it).
    pub fn cacheable(&self) -> bool {
        self.plan.deterministic
    }

    /// Runs the query, handing each result to `sink` until it returns false.
    pub fn run(
        &self,
        control: Arc<Control>,
        user: Option<String>,
        sink: &mut dyn FnMut(Value) -> Result<bool>,
    ) -> Result<Outcome> {
        // Everything the run allocates on this thread (rows, values, buffers, a write's
        // transaction buffer, what the sink keeps, the patterns it compiles) is charged to
        // the query's account.
        let _charging = control.memory().charge_this_thread();
        let outcome = self.run_charged(control, user, sink);
        crate::value::clear_thread_cache();
        outcome
    }

    fn run_charged(
        &self,
        control: Arc<Control>,
        user: Option<String>,
        sink: &mut dyn FnMut(Value) -> Result<bool>,
    ) -> Result<Outcome> {
        if !self.plan.modifies {
            return self.execute(&self.plan, &self.database, control, user, sink);
        }
        let transaction = match self.database.begin_transaction(self.transaction_options()) {
            Ok(t) => t,
            // Already inside a stream transaction (nested), or an engine without
            // transactions (the fake): the writes go where the database sends them.
            Err(e)
                if e.is(quince_errors::TRANSACTION_NESTED)
                    || e.is(quince_errors::TRANSACTION_DISALLOWED_OPERATION) =>
            {
                return self.execute(&self.plan, &self.database, control, user, sink);
            }
            Err(e) => return Err(e),
        };
        let view = transaction.database();
        let result = build(&self.query, &view, &self.binds, &self.options)
            .and_then(|plan| self.execute(&plan, &view, control, user, sink));
        match result {
            Ok(outcome) => {
                if let Some(durability) = transaction.commit()? {
                    durability.wait()?;
                }
                Ok(outcome)
            }
            Err(e) => {
                let _ = transaction.abort();
                Err(e)
            }
        }
    }

    fn transaction_options(&self) -> TransactionOptions {
        let mut options = TransactionOptions::default();
        for used in &self.plan.collections {
            if used.exclusive {
                options.exclusive.push(used.name.clone());
            } else if used.write {
                options.write.push(used.name.clone());
            } else {
                options.read.push(used.name.clone());
            }
        }
        options.allow_implicit = true;
        options.wait_for_sync = self.plan.wait_for_sync;
        // Opened and closed by this query: it takes none of the clients' slots.
        options.begun_by = Beginner::request();
        // The writes a query buffers until its commit are bounded by its memory limit, not by
        // a stream transaction's default size.
        options.max_transaction_size = match self.options.memory_limit {
            0 => u64::MAX,
            limit => limit.max(options.max_transaction_size),
        };
        options
    }

    fn execute(
        &self,
        plan: &Plan,
        database: &Arc<dyn DatabaseOps>,
        control: Arc<Control>,
        user: Option<String>,
        sink: &mut dyn FnMut(Value) -> Result<bool>,
    ) -> Result<Outcome> {
        let context = Context::new(Arc::clone(database), control, user, &self.options);
        let mut executor = Executor::new(plan, context);
        executor.run_plan(&mut |_, value| sink(value))?;
        executor.ctx.take_failure()?;
        executor.ctx.note_peak();
        for durability in std::mem::take(&mut executor.ctx.durabilities) {
            durability.wait()?;
        }
        Ok(Outcome {
            stats: executor.ctx.stats.clone(),
            warnings: std::mem::take(&mut executor.ctx.warnings),
        })
    }
}

/// The control for a query with these options: its deadline from `maxRuntime`, its memory
/// account with `memoryLimit` in `pool` (the server's queries together).
pub fn control_for(options: &QueryOptions, pool: &Arc<Pool>) -> Arc<Control> {
    // A run time too long to add to the clock (`1e300`) is no deadline at all.
    let deadline = (options.max_runtime > 0.0)
        .then(|| std::time::Duration::try_from_secs_f64(options.max_runtime).ok())
        .flatten()
        .and_then(|run_time| Instant::now().checked_add(run_time));
    Control::with_memory(
        deadline,
        Account::new(options.memory_limit, Arc::clone(pool)),
    )
}

/// An error for a malformed request of the cursor API (400/10).
pub fn bad_request(message: &str) -> ArangoError {
    ArangoError::with_message(quince_errors::BAD_PARAMETER, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_max_runtime_past_what_the_clock_holds_sets_no_deadline() {
        for max_runtime in [1e300, f64::MAX, 1.8e19, 1e17] {
            let options = QueryOptions {
                max_runtime,
                ..QueryOptions::default()
            };
            assert!(
                control_for(&options, &Pool::new(0)).check().is_ok(),
                "{max_runtime}"
            );
        }
        let control = control_for(
            &QueryOptions {
                max_runtime: 1e-6,
                ..QueryOptions::default()
            },
            &Pool::new(0),
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(control.check().is_err());
    }
}
