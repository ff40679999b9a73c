//! AQL's standard function library.
//!
//! What it is: every built-in function Quince supports, each a [`Function`]: its name
//! (upper-case), its arity, whether it is deterministic, and a plain `fn` that computes its
//! value from evaluated arguments. [`lookup`] finds one by name (aliases included), [`all`]
//! lists them; `docs/aql.md` lists every function of ArangoDB 3.12 with its status, and a
//! test keeps that table and [`all`] in step. One family per file.
//!
//! What it is not: the planner's arity check (it uses `min_args`/`max_args` and reports
//! 1541), lazy evaluation (arguments arrive evaluated), user-defined functions or ArangoSearch
//! functions. The index-backed `NEAR`, `WITHIN`, `WITHIN_RECTANGLE` and `FULLTEXT` are
//! functions here (`indexed.rs`), reading the index through the database's collection.
//!
//! Invariants: as in ArangoDB, a wrong argument type answers `null` with warning 1542
//! ("invalid argument type in call to function 'NAME()'") rather than failing; only the
//! functions ArangoDB documents as failing return `Err` (`FAIL` 1569, `ASSERT` 1593, a killed
//! query 1500, an unknown timezone, `REPLACE_NTH` without padding, ...). Functions marked
//! not deterministic (`RAND`, `UUID`, `SLEEP`, `DATE_NOW`, `DOCUMENT`, ...) are never
//! constant-folded or cached.

mod args;
mod arrays;
mod bits;
mod dates;
mod dates_format;
mod dates_parse;
mod geo;
mod hashes;
mod indexed;
mod misc;
mod numeric;
mod objects;
mod registry;
mod sets;
mod statistics;
mod strings;
mod strings_regex;
mod types;
mod vectors;

use quince_errors::Result;
use serde_json::Value;

use crate::value::Warning;

pub use registry::{all, lookup};

/// What a function may ask of the query that calls it.
pub trait FunctionContext {
    /// Records a warning (collected into the cursor's `extra.warnings`).
    fn warn(&mut self, warning: Warning);

    /// The database the query runs in (for `DOCUMENT`, `COLLECTIONS`, `COLLECTION_COUNT`,
    /// `NEAR`, `WITHIN`, `WITHIN_RECTANGLE`, `FULLTEXT`).
    fn database(&self) -> &dyn quince_ops::DatabaseOps;

    /// `Err(1500 query killed)` once the query was killed or ran past `maxRuntime`, `Err(32)`
    /// once it holds more memory than allowed. A function whose work grows with its arguments
    /// (not only with the size of its input) calls it at least every [`STEPS_PER_CHECK`]
    /// steps; `SLEEP` polls it about every 10 ms so that a kill interrupts it.
    fn check_alive(&self) -> Result<()>;

    /// `Err(32 resource limit exceeded)` when `bytes` more would pass the query's memory
    /// limit or the server's: asked before building a value whose size the arguments tell in
    /// advance (a range, a padded or repeated string), so it is never built.
    fn admit(&self, bytes: u64) -> Result<()>;

    /// The authenticated user, if any (`CURRENT_USER()`).
    fn user(&self) -> Option<&str>;
}

/// The most steps a function takes between two [`FunctionContext::check_alive`] calls.
pub const STEPS_PER_CHECK: usize = 4096;

/// The signature of every function's implementation.
pub type Call = fn(&mut dyn FunctionContext, &[Value]) -> Result<Value>;

/// One built-in function.
#[derive(Clone, Copy)]
pub struct Function {
    /// The name, upper-case (an alias has its own entry with the same `call`).
    pub name: &'static str,
    /// The fewest arguments accepted.
    pub min_args: usize,
    /// The most arguments accepted (`usize::MAX` for variadic functions).
    pub max_args: usize,
    /// False for functions whose result may differ between calls with the same arguments
    /// (`RAND`, `UUID`, `SLEEP`, `DATE_NOW`, `DOCUMENT`, ...): the query cache and constant
    /// folding rely on this.
    pub deterministic: bool,
    /// Computes the value from evaluated arguments.
    pub call: Call,
}

impl std::fmt::Debug for Function {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Function")
            .field("name", &self.name)
            .field("min_args", &self.min_args)
            .field("max_args", &self.max_args)
            .field("deterministic", &self.deterministic)
            .finish()
    }
}
