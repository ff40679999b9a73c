//! Small helpers shared by the function families: argument access and the type warning.
//!
//! What it is: [`arg`] (a missing optional argument reads as `null`), [`invalid`] (warning
//! 1542 and `null`), typed readers that return `None` on a type mismatch, [`GROWTH_MAX`], the
//! bound on what a numeric argument may make a function build, and the bounds every function
//! that may work long or build much shares: [`Steps`] (a loop checks the query every
//! [`STEPS_PER_CHECK`] steps), [`admit_elements`] (an array of a size its arguments tell is
//! admitted against the memory limits before it is built) and [`TextOut`] (a string whose
//! buffer grows only by admitted amounts).
//!
//! What it is not: a cast: readers here accept exactly the documented type; the families
//! cast where ArangoDB does.

use quince_errors::Result;
use serde_json::Value;

use super::{FunctionContext, STEPS_PER_CHECK};
use crate::value::{to_number, Warning};

static NULL: Value = Value::Null;

/// The most elements (or characters) a numeric argument may make a function add to its
/// result (`RANGE`'s bound, also `REPLACE_NTH`'s padding and `RANDOM_TOKEN`'s length): past
/// it the call answers `null` with warning 1542, so one call cannot allocate without bound.
pub const GROWTH_MAX: i64 = 10_000_000;

/// The `i`-th argument, or `null` when it was not passed.
pub fn arg(args: &[Value], i: usize) -> &Value {
    args.get(i).unwrap_or(&NULL)
}

/// Warning 1542 for `name` and a `null` result.
pub fn invalid(ctx: &mut dyn FunctionContext, name: &str) -> Result<Value> {
    ctx.warn(Warning::invalid_argument(name));
    Ok(Value::Null)
}

/// The `i`-th argument as a boolean flag: absent or `null` is `default`, otherwise truthy.
pub fn flag(args: &[Value], i: usize, default: bool) -> bool {
    match args.get(i) {
        None | Some(Value::Null) => default,
        Some(value) => crate::value::truthy(value),
    }
}

/// The argument as a number, cast with `TO_NUMBER`.
pub fn num(value: &Value) -> f64 {
    to_number(value)
}

/// The argument as an integer (truncated towards zero after `TO_NUMBER`).
pub fn int(value: &Value) -> i64 {
    let f = to_number(value);
    if f >= i64::MAX as f64 {
        i64::MAX
    } else if f <= i64::MIN as f64 {
        i64::MIN
    } else {
        f.trunc() as i64
    }
}

/// A loop's steps: every [`STEPS_PER_CHECK`]th one checks the query (kill switch, deadline,
/// memory: [`FunctionContext::check_alive`]).
#[derive(Default)]
pub struct Steps(usize);

impl Steps {
    /// One more step.
    #[inline]
    pub fn step(&mut self, ctx: &dyn FunctionContext) -> Result<()> {
        self.0 += 1;
        if self.0.is_multiple_of(STEPS_PER_CHECK) {
            ctx.check_alive()?;
        }
        Ok(())
    }
}

/// Admits an array of `count` elements (their slots) before it is built.
pub fn admit_elements(ctx: &dyn FunctionContext, count: u64) -> Result<()> {
    ctx.admit(count.saturating_mul(std::mem::size_of::<Value>() as u64))
}

/// A string built piece by piece whose buffer grows only by amounts the query's memory
/// limits admitted first, so a function whose output may be far larger than its input
/// (`SUBSTITUTE`, `CONCAT_SEPARATOR`) stops before it builds too much.
pub struct TextOut {
    out: String,
}

impl TextOut {
    /// An empty string with room for `capacity` bytes (admitted).
    pub fn with_capacity(ctx: &dyn FunctionContext, capacity: usize) -> Result<TextOut> {
        ctx.admit(capacity as u64)?;
        Ok(TextOut {
            out: String::with_capacity(capacity),
        })
    }

    /// Appends `piece`, admitting the buffer's growth first.
    pub fn push_str(&mut self, ctx: &dyn FunctionContext, piece: &str) -> Result<()> {
        let needed = self.out.len().saturating_add(piece.len());
        let capacity = self.out.capacity();
        if needed > capacity {
            let grown = needed.max(capacity.saturating_mul(2));
            ctx.admit((grown - capacity) as u64)?;
            self.out.reserve_exact(grown - self.out.len());
        }
        self.out.push_str(piece);
        Ok(())
    }

    /// The string.
    pub fn finish(self) -> String {
        self.out
    }
}
