//! Small helpers shared by the function families: argument access and the type warning.
//!
//! What it is: [`arg`] (a missing optional argument reads as `null`), [`invalid`] (warning
//! 1542 and `null`), typed readers that return `None` on a type mismatch, and
//! [`GROWTH_MAX`], the bound on what a numeric argument may make a function build.
//!
//! What it is not: a cast: readers here accept exactly the documented type; the families
//! cast where ArangoDB does.

use quince_errors::Result;
use serde_json::Value;

use super::FunctionContext;
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
