//! Fuzz target: every AQL function (`quince_aql::functions::all()`) called with arguments
//! built from fuzz bytes, leaning on extreme values (`1e300`, `-1e300`, the i64 and u64
//! extremes, the largest double, long strings, deep arrays, odd dates, durations, units and
//! timezones); optionally the same call through a whole query (`RETURN F(@a0, ...)`: parse,
//! plan, constant folding, execution) and a cursor request whose numeric options
//! (`batchSize`, `ttl`, `maxRuntime`, `memoryLimit`, `maxWarningCount`) come from the same
//! generator.
//!
//! What it is: input `[mode][function][flags][arguments...][options...]`. `mode` bit 7 set:
//! `function` is `[len: u8][name]`, looked up by name (an unknown name falls back to index
//! 0); else it is a little-endian u16, taken modulo the number of functions. `flags` bits 0-2
//! add to the function's fewest arguments (capped at its most and at 8); bit 3 also runs
//! the call as a query on the fake engine; bit 4 also runs it as a cursor request through
//! `CursorRequest::parse` and `QueryService::create_cursor` (bit 5: `stream: true`). Each
//! argument is `[tag][payload]` (see [`value`]); options are five more generated values.
//!
//! What it is not: a check of the results (the function tables in `crates/aql/tests` do
//! that) or of the query language (`request_pipeline` sends queries through the server).
//!
//! Invariants checked: no panic on any input (an overflow panics: the fuzz build keeps
//! overflow checks on); a call answers a value or an error with an HTTP status below 500
//! (never errorNum 4, "internal": the 500 a panic becomes in the server); the same for the
//! query and for the cursor request, which run only when the direct result is not big
//! (more than [`BIG_RESULT`] values: building it twice more would only measure memory).
//! Calls are stopped 20 ms after they began, queries by a `maxRuntime` of 50 ms; calls and
//! queries hold at most 256 MiB (the allocator charges them, as in the server), so a value a
//! function would build past that is refused with 32 by the function's own admission.

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use quince_aql::functions::{all, lookup, Function, FunctionContext};
use quince_aql::exec::context::memory_error;
use quince_aql::query::control_for;
use quince_aql::{prepare, CursorRequest, QueryOptions, QueryService, Warning};
use quince_errors::{ArangoError, Result};
use quince_memory::{Account, Counting, Pool};
use quince_fuzz::Input;
use quince_ops::fake::FakeEngine;
use quince_ops::{
    CollectionType, CreateCollection, DatabaseOps, Engine, WriteKind, WriteOptions, WriteRequest,
};
use serde_json::{json, Map, Value};

/// Numbers that find overflows: huge, tiny, negative, at the integer limits, and the
/// boundaries the functions check (bit widths, array lengths, the date range).
const NUMBERS: [f64; 32] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    31.0,
    32.0,
    33.0,
    64.0,
    65.0,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN,
    f64::MIN_POSITIVE,
    5e-324,
    1e20,
    -1e20,
    1e15,
    1e9,
    1e7,
    10_000_001.0,
    9.223372036854776e18,
    -9.223372036854776e18,
    1.8446744073709552e19,
    4294967295.0,
    4294967296.0,
    9007199254740993.0,
    253402300799999.0,
    -62167219200000.0,
    86400000.0,
];

/// Strings the functions read specially: dates, durations, units, zones, patterns.
const STRINGS: [&str; 32] = [
    "",
    "a",
    "-1",
    "1e300",
    "NaN",
    "2019-07-01T12:34:56.789Z",
    "9999-12-31T23:59:59.999Z",
    "0000-01-01T00:00:00Z",
    "-000001-01-01",
    "+275760-09-13",
    "2019-02-29",
    "P1Y2M3W4DT5H6M7.5S",
    "P99999999999999999999Y",
    "PT1e300S",
    "years",
    "months",
    "weeks",
    "days",
    "f",
    "Europe/Berlin",
    "America/New_York",
    "Nowhere/Else",
    "%",
    "(a+)+$",
    "[*",
    "%Y-%m-%d %q",
    "255.255.255.255",
    "1.2.3",
    "1010101",
    "\u{1F600}é",
    "_key",
    "persons/alice",
];

/// The generator's bounds: nesting, and the lengths a byte may ask for.
const DEPTH_MAX: usize = 4;

/// One value from the input: `tag % 15` picks the kind.
fn value(input: &mut Input, depth: usize) -> Value {
    let tag = input.u8();
    let leaf = depth >= DEPTH_MAX;
    match tag % 15 {
        0 => Value::Null,
        1 => Value::Bool(tag & 0x10 != 0),
        2 => Value::from(i64::from(input.u8() as i8)),
        3 => number(NUMBERS[usize::from(input.u8()) % NUMBERS.len()]),
        4 => number(f64::from_le_bytes(
            input.bytes(8).try_into().unwrap_or([0; 8]),
        )),
        5 => Value::from(i64::from_le_bytes(
            input.bytes(8).try_into().unwrap_or([0; 8]),
        )),
        6 => Value::from(u64::MAX - u64::from(input.u8())),
        7 => {
            let len = usize::from(input.u8() % 32);
            Value::String(String::from_utf8_lossy(input.bytes(len)).into_owned())
        }
        8 => Value::String(STRINGS[usize::from(input.u8()) % STRINGS.len()].to_owned()),
        9 => Value::String("x".repeat(usize::from(input.u8()) * 64)),
        10 if !leaf => {
            let len = usize::from(input.u8() % 6);
            Value::Array((0..len).map(|_| value(input, depth + 1)).collect())
        }
        11 => (0..input.u8()).fold(json!(1), |inner, _| json!([inner])),
        12 if !leaf => {
            let len = usize::from(input.u8() % 4);
            let mut object = Map::new();
            for _ in 0..len {
                let key = STRINGS[usize::from(input.u8()) % STRINGS.len()].to_owned();
                object.insert(key, value(input, depth + 1));
            }
            Value::Object(object)
        }
        13 => {
            let (x, y) = (
                number(NUMBERS[usize::from(input.u8()) % NUMBERS.len()]),
                number(NUMBERS[usize::from(input.u8()) % NUMBERS.len()]),
            );
            match input.u8() % 3 {
                0 => json!({"type": "Point", "coordinates": [x, y]}),
                1 => json!({"type": "LineString", "coordinates": [[0, 0], [x, y]]}),
                _ => json!({"type": "Polygon", "coordinates": [[[0, 0], [x, 0], [x, y], [0, 0]]]}),
            }
        }
        14 => {
            let len = usize::from(input.u8()) * 16;
            let step = NUMBERS[usize::from(input.u8()) % NUMBERS.len()];
            Value::Array((0..len).map(|i| number(i as f64 * step)).collect())
        }
        _ => Value::from(i64::from(tag)),
    }
}

/// A JSON number (a non-finite double, which JSON cannot hold, becomes 0).
fn number(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::from(0), Value::Number)
}

/// A context like a query's: warnings kept, a fake database, and a deadline 20 ms after the
/// call began (as `maxRuntime` would set), so `SLEEP(1e300)` and a long
/// `LEVENSHTEIN_DISTANCE` end soon with 1500, as a killed query's do.
struct Context {
    database: Arc<dyn DatabaseOps>,
    warnings: Vec<Warning>,
    deadline: Instant,
    /// The call's memory account, which this thread charges while it runs (as a query's
    /// thread charges the query's): admissions and checks answer 32 past [`MEMORY_LIMIT`].
    memory: Arc<Account>,
}

/// The memory one call (and one query) may hold: below the fuzzer's own limit, so what the
/// limits should stop is stopped by them, not by the fuzzer.
const MEMORY_LIMIT: u64 = 256 << 20;

/// Allocations are charged to the account of the call or query that makes them, as in the
/// server.
#[global_allocator]
static ALLOCATOR: Counting<std::alloc::System> = Counting(std::alloc::System);

impl FunctionContext for Context {
    fn warn(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    fn database(&self) -> &dyn DatabaseOps {
        self.database.as_ref()
    }

    fn check_alive(&self) -> Result<()> {
        if Instant::now() >= self.deadline {
            return Err(ArangoError::new(quince_errors::QUERY_KILLED));
        }
        self.memory.check().map_err(memory_error)
    }

    fn admit(&self, bytes: u64) -> Result<()> {
        self.memory.admit(bytes).map_err(memory_error)
    }

    fn user(&self) -> Option<&str> {
        Some("root")
    }
}

/// The fake engine's `_system` with a `persons` collection (for `DOCUMENT`, the index
/// functions and `COLLECTION_COUNT`), made once.
fn database() -> Arc<dyn DatabaseOps> {
    static DATABASE: OnceLock<Arc<dyn DatabaseOps>> = OnceLock::new();
    Arc::clone(DATABASE.get_or_init(|| {
        let engine = FakeEngine::new();
        let database = engine
            .database("_system")
            .expect("the fake engine has _system");
        let persons = database
            .create_collection(CreateCollection {
                name: "persons".into(),
                kind: CollectionType::Document,
                wait_for_sync: None,
                is_system: false,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            })
            .expect("persons is created");
        let items = vec![
            json!({"_key": "alice", "age": 42, "loc": [50.9, 6.9], "text": "hello world"}),
            json!({"_key": "bob", "age": 23, "loc": [1e300, -1e300]}),
        ];
        drop(persons.write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        )));
        database
    }))
}

/// An error a function or query may answer: anything but a server error. `what` names the
/// call in the panic message (built only then: the arguments may be large).
fn check(what: impl FnOnce() -> String, outcome: &Result<impl std::fmt::Debug>) {
    if let Err(error) = outcome {
        assert!(
            error.status < 500 && error.num() != quince_errors::INTERNAL.num,
            "{} failed with a server error: {error:?}",
            what()
        );
    }
}

/// Results with more values than this are not run again as a query.
const BIG_RESULT: usize = 1_000_000;

/// The values in `value`, itself included, counted up to just past [`BIG_RESULT`].
fn values_in(value: &Value) -> usize {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        count += 1;
        if count > BIG_RESULT {
            break;
        }
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

fn function(input: &mut Input) -> &'static Function {
    let mode = input.u8();
    let functions: Vec<&'static Function> = all().collect();
    if mode & 0x80 != 0 {
        let len = usize::from(input.u8());
        let name = String::from_utf8_lossy(input.bytes(len)).to_ascii_uppercase();
        lookup(&name).unwrap_or(functions[0])
    } else {
        functions[usize::from(input.u16()) % functions.len()]
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let function = function(&mut input);
    let flags = input.u8();
    let most = function.max_args.min(function.min_args + 7).min(8);
    let arity = (function.min_args + usize::from(flags & 7)).min(most);
    let args: Vec<Value> = (0..arity).map(|_| value(&mut input, 0)).collect();
    let database = database();

    let pool = Pool::new(0);
    let mut context = Context {
        database: Arc::clone(&database),
        warnings: Vec::new(),
        deadline: Instant::now() + Duration::from_millis(20),
        memory: Account::new(MEMORY_LIMIT, Arc::clone(&pool)),
    };
    let charging = context.memory.charge_this_thread();
    let direct = (function.call)(&mut context, &args);
    drop(charging);
    check(|| format!("{}{args:?}", function.name), &direct);

    // A function may legitimately build a big value (`RANGE` up to 10,000,000 numbers);
    // the query would build it twice more (folded, then returned), which only measures the
    // size of a value in memory against the fuzzer's limit, so big results stop here.
    let big = direct.as_ref().is_ok_and(|v| values_in(v) > BIG_RESULT);
    if flags & 0x18 == 0 || big {
        return;
    }
    let placeholders: Vec<String> = (0..arity).map(|i| format!("@a{i}")).collect();
    let query = format!("RETURN {}({})", function.name, placeholders.join(", "));
    let binds: Map<String, Value> = args
        .iter()
        .enumerate()
        .map(|(i, v)| (format!("a{i}"), v.clone()))
        .collect();
    // A query would sleep for real; its kill switch is the deadline below.
    let options = QueryOptions {
        max_runtime: 0.05,
        memory_limit: MEMORY_LIMIT,
        ..QueryOptions::default()
    };
    if flags & 0x08 != 0 {
        let control = control_for(&options, &pool);
        let outcome = prepare(Arc::clone(&database), &query, binds.clone(), options)
            .and_then(|prepared| prepared.run(control, None, &mut |_| Ok(true)));
        check(|| format!("{query} with {binds:?}"), &outcome);
    }
    if flags & 0x10 != 0 {
        let option = |input: &mut Input| value(input, DEPTH_MAX);
        let body = json!({
            "query": query,
            "bindVars": binds,
            "batchSize": option(&mut input),
            "ttl": option(&mut input),
            "memoryLimit": option(&mut input),
            "options": {
                "stream": flags & 0x20 != 0,
                "maxRuntime": option(&mut input),
                "maxWarningCount": option(&mut input),
            },
        });
        let Ok(mut request) = CursorRequest::parse(&body, 0) else {
            return;
        };
        // Whatever `maxRuntime` the input asked for was parsed and turned into a control
        // (`control_for`); the query itself must not sleep past the fuzzer's timeout.
        drop(control_for(&request.options, &pool));
        if !(request.options.max_runtime > 0.0 && request.options.max_runtime <= 0.05) {
            request.options.max_runtime = 0.05;
        }
        if request.options.memory_limit == 0 || request.options.memory_limit > MEMORY_LIMIT {
            request.options.memory_limit = MEMORY_LIMIT;
        }
        let service = QueryService::default();
        let outcome = service.create_cursor(database, "root", false, request, &|_| Ok(()));
        check(|| format!("cursor {body}"), &outcome);
    }
});
