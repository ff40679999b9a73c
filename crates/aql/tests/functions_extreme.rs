//! Every registered function with extreme arguments (issue 34, item 7): huge, tiny and
//! negative numbers (`1e300`, `-1e300`, the i64 and u64 extremes, the largest double),
//! long strings, deep arrays, odd dates and durations, in every argument position.
//!
//! What it is: a sweep that calls each function with each extreme value in each position
//! (the other positions holding ordinary values), then a seeded random mix, and fails on a
//! panic, on an internal error (errorNum 4), or on a call that takes more than a few seconds
//! (a numeric argument used as a size or a count without a bound). A wrong argument answers
//! `null` with a warning, or the error ArangoDB documents for the function; which of the
//! two is each function's own test's business (`functions.rs`), not this file's.
//!
//! What it is not: the fuzz target (`fuzz/fuzz_targets/aql_functions.rs`), which goes on
//! from here with random inputs for as long as it is given.

use crate::support;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use quince_aql::functions::{all, Function};
use serde_json::{json, Value};
use support::TestContext;

/// The longest one call may take (debug build, shared machine).
const CALL_TIME_MAX: Duration = Duration::from_secs(5);

fn deep(levels: usize) -> Value {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

fn extremes() -> Vec<Value> {
    vec![
        json!(0),
        json!(-0.0),
        json!(1),
        json!(-1),
        json!(0.5),
        json!(-0.5),
        json!(2),
        json!(31),
        json!(32),
        json!(33),
        json!(63),
        json!(64),
        json!(65),
        json!(1e300),
        json!(-1e300),
        json!(f64::MAX),
        json!(f64::MIN),
        json!(f64::MIN_POSITIVE),
        json!(5e-324),
        json!(1e20),
        json!(-1e20),
        json!(1e15),
        json!(1e9),
        json!(1e7),
        json!(-1e7),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(9.223372036854776e18),
        json!(-9.223372036854776e18),
        json!(4294967295u64),
        json!(4294967296u64),
        json!(9007199254740993u64),
        json!(""),
        json!("a"),
        json!("-1"),
        json!("1e300"),
        json!("-1e300"),
        json!("NaN"),
        json!("x".repeat(3000)),
        json!("\u{1F600}é"),
        json!("2019-07-01T12:34:56.789Z"),
        json!("9999-12-31T23:59:59.999Z"),
        json!("0000-01-01T00:00:00Z"),
        json!("-000001-01-01"),
        json!("+275760-09-13"),
        json!("P1Y2M3W4DT5H6M7.5S"),
        json!("P99999999999999999999Y"),
        json!("PT1e300S"),
        json!("years"),
        json!("y"),
        json!("days"),
        json!("f"),
        json!("Europe/Berlin"),
        json!("Nowhere/Else"),
        json!("%"),
        json!("%0"),
        json!("(a+)+$"),
        json!("[*"),
        json!("255.255.255.255"),
        json!("1.2.3"),
        json!("1010101"),
        json!(null),
        json!(true),
        json!(false),
        json!([]),
        json!([1, 2, 3]),
        json!([1e300, -1e300, 0]),
        json!(["a", "b"]),
        json!([[1, 2], [3, 4]]),
        json!([null]),
        json!([-1, 64, 1e300]),
        deep(200),
        Value::Array((0..2000).map(Value::from).collect()),
        json!({}),
        json!({"a": 1, "b": [1, 2]}),
        json!({"type": "Point", "coordinates": [1e300, -1e300]}),
        json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}),
        json!({"type": "LineString", "coordinates": [[0, 0], [1e300, 1e300]]}),
    ]
}

/// The ordinary values the other positions hold.
fn ordinary() -> Vec<Value> {
    vec![
        json!(1),
        json!("2019-07-01T12:34:56.789Z"),
        json!([1, 2, 3]),
        json!("years"),
    ]
}

/// One call; `Some(reason)` when it panicked, failed internally or took too long.
fn smash(ctx: &mut TestContext, function: &Function, args: &[Value]) -> Option<String> {
    if std::env::var_os("QUINCE_SMASH_TRACE").is_some() {
        let text = Value::Array(args.to_vec()).to_string();
        eprintln!(
            "{}({})",
            function.name,
            text.chars().take(200).collect::<String>()
        );
    }
    ctx.warnings.clear();
    // SLEEP and friends stop at the kill check instead of sleeping for 1e300 seconds.
    ctx.alive_checks_left.set(1);
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| (function.call)(&mut *ctx, args)));
    let took = started.elapsed();
    let shown = || {
        let text = Value::Array(args.to_vec()).to_string();
        text.chars().take(300).collect::<String>()
    };
    match outcome {
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Some(format!(
                "{}({}) panicked: {message}",
                function.name,
                shown()
            ))
        }
        Ok(Err(e)) if e.num() == quince_errors::INTERNAL.num || e.status >= 500 => Some(format!(
            "{}({}) failed internally: {e}",
            function.name,
            shown()
        )),
        _ if took > CALL_TIME_MAX => Some(format!("{}({}) took {took:?}", function.name, shown())),
        _ => None,
    }
}

fn arities(function: &Function) -> std::ops::RangeInclusive<usize> {
    function.min_args..=function.max_args.min(function.min_args + 3).min(6)
}

#[test]
fn every_function_survives_every_extreme_in_every_position() {
    // Keep the hook from printing thousands of expected panics while the sweep runs.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let extremes = extremes();
    let ordinary = ordinary();
    let mut ctx = TestContext::new();
    let mut failures = Vec::new();
    for function in all() {
        for arity in arities(function) {
            // Two bases keep the sweep short; the random mixes use every ordinary value.
            for base in &ordinary[..2] {
                let mut args = vec![base.clone(); arity];
                for position in 0..arity {
                    for extreme in &extremes {
                        args[position] = extreme.clone();
                        failures.extend(smash(&mut ctx, function, &args));
                    }
                    args[position] = base.clone();
                }
            }
        }
    }
    std::panic::set_hook(hook);
    failures.dedup_by(|a, b| a.split('(').next() == b.split('(').next());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn every_function_survives_random_mixes_of_extremes() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut pool = extremes();
    pool.extend(ordinary());
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut ctx = TestContext::new();
    let mut failures = Vec::new();
    for function in all() {
        let arities: Vec<usize> = arities(function).collect();
        for _ in 0..200 {
            let arity = arities[rng.below(arities.len())];
            let args: Vec<Value> = (0..arity)
                .map(|_| pool[rng.below(pool.len())].clone())
                .collect();
            failures.extend(smash(&mut ctx, function, &args));
        }
    }
    std::panic::set_hook(hook);
    failures.dedup_by(|a, b| a.split('(').next() == b.split('(').next());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
