//! TEMPORARY stand-in for the function library being written on the `aql-values` branch; the
//! merge replaces this file. The agreed interface and a handful of functions.

use quince_errors::Result;
use quince_ops::DatabaseOps;
use serde_json::Value;

use crate::value::{number, Warning};

/// What a function may ask of the query running it.
pub trait FunctionContext {
    /// Adds a warning.
    fn warn(&mut self, warning: Warning);
    /// The database the query runs in.
    fn database(&self) -> &dyn DatabaseOps;
    /// Err(1500) once killed or past maxRuntime.
    fn check_alive(&self) -> Result<()>;
    /// The user running the query.
    fn user(&self) -> Option<&str>;
}

/// One function.
pub struct Function {
    /// Upper-case name.
    pub name: &'static str,
    /// Fewest arguments.
    pub min_args: usize,
    /// Most arguments.
    pub max_args: usize,
    /// Same arguments, same result.
    pub deterministic: bool,
    /// The implementation.
    pub call: fn(&mut dyn FunctionContext, &[Value]) -> Result<Value>,
}

static FUNCTIONS: &[Function] = &[
    Function { name: "LENGTH", min_args: 1, max_args: 1, deterministic: true, call: length },
    Function { name: "COUNT", min_args: 1, max_args: 1, deterministic: true, call: length },
    Function { name: "SUM", min_args: 1, max_args: 1, deterministic: true, call: sum },
    Function { name: "RAND", min_args: 0, max_args: 0, deterministic: false, call: rand },
    Function { name: "SLEEP", min_args: 1, max_args: 1, deterministic: false, call: sleep },
];

fn length(_: &mut dyn FunctionContext, args: &[Value]) -> Result<Value> {
    Ok(match &args[0] {
        Value::Array(a) => Value::from(a.len()),
        Value::Object(o) => Value::from(o.len()),
        Value::String(s) => Value::from(s.chars().count()),
        Value::Null => Value::from(0),
        _ => Value::from(1),
    })
}

fn sum(_: &mut dyn FunctionContext, args: &[Value]) -> Result<Value> {
    let total: f64 = args[0].as_array().map(|a| a.iter().filter_map(Value::as_f64).sum()).unwrap_or(0.0);
    Ok(number(total))
}

fn rand(_: &mut dyn FunctionContext, _: &[Value]) -> Result<Value> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    Ok(number(f64::from(nanos % 1000) / 1000.0))
}

fn sleep(ctx: &mut dyn FunctionContext, args: &[Value]) -> Result<Value> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs_f64(args[0].as_f64().unwrap_or(0.0).max(0.0));
    while std::time::Instant::now() < until {
        ctx.check_alive()?;
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    Ok(Value::Null)
}

/// The function of that (upper-case) name.
pub fn lookup(name: &str) -> Option<&'static Function> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// Every function.
pub fn all() -> impl Iterator<Item = &'static Function> {
    FUNCTIONS.iter()
}
