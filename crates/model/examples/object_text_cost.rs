//! The cost of the insert fast route (`ObjectText`) against the parsing route, per body shape:
//! CPU time and peak memory of what the server does with a `POST /_api/document` body before
//! the store is asked.
//!
//! What it is: `cargo run --release -p quince-model --example object_text_cost -- <shape>
//! <route> [bytes] [rounds]` builds a body of about `bytes` (default 16 MiB) of one shape and
//! runs one route over it `rounds` times (default 5), printing the fastest round's wall and CPU
//! time (the thread's, from `/proc/thread-self/schedstat`) and the
//! process's peak resident memory above what it held before (`VmHWM` after a reset). Route `old` is `json::parse` and `encode_document`
//! of each object; route `new` is the handler's order: `ObjectText::scan`, else
//! `ObjectText::scan_array`, else the old route, then `encode_object_text` of each text.
//! `shapes` as the shape lists them. Run each route in its own process so the peaks compare.
//!
//! What it is not: a server benchmark (no HTTP, no store, no key generation).
//!
//! Invariants: both routes see the same bytes; the body's shape is its name's.

use std::time::{Duration, Instant};

use quince_model::document::{encode_document, encode_object_text};
use quince_model::json;
use quince_model::object_text::ObjectText;
use quince_model::rev::RevisionId;
use serde_json::Value;

const SHAPES: &[&str] = &[
    "members-many",
    "names-64-long",
    "string-plain",
    "string-escapes",
    "string-unicode-escapes",
    "many-escaped-strings",
    "floats",
    "ints",
    "big-ints",
    "deep",
    "array-empty-objects",
    "array-small-docs",
    "nested-objects-64",
    "trailing-garbage",
    "long-number",
];

/// `count` copies of `item` joined by commas.
fn repeat(item: &str, count: usize) -> String {
    let mut out = String::with_capacity((item.len() + 1) * count);
    for i in 0..count {
        if i > 0 {
            out.push(',');
        }
        out.push_str(item);
    }
    out
}

fn body(shape: &str, size: usize) -> Vec<u8> {
    let text = match shape {
        "members-many" => {
            let members: Vec<String> = (0..size / 12).map(|i| format!("\"a{i}\":1")).collect();
            format!("{{{}}}", members.join(","))
        }
        "names-64-long" => {
            let long = "n".repeat(size / 64);
            let members: Vec<String> = (0..64).map(|i| format!("\"{long}{i:02}\":1")).collect();
            format!("{{{}}}", members.join(","))
        }
        "string-plain" => format!("{{\"s\":\"{}\"}}", "a".repeat(size)),
        "string-escapes" => format!("{{\"s\":\"{}\"}}", "\\n".repeat(size / 2)),
        "string-unicode-escapes" => format!("{{\"s\":\"{}\"}}", "\\u00e9".repeat(size / 6)),
        "many-escaped-strings" => format!("{{\"a\":[{}]}}", repeat("\"\\n\"", size / 5)),
        "floats" => format!("{{\"a\":[{}]}}", repeat("0.1", size / 4)),
        "ints" => format!("{{\"a\":[{}]}}", repeat("123456", size / 7)),
        "big-ints" => format!("{{\"a\":[{}]}}", repeat("12345678901234567890", size / 21)),
        "deep" => {
            let nest = format!("{}1{}", "[".repeat(60), "]".repeat(60));
            format!("{{\"a\":[{}]}}", repeat(&nest, size / 122))
        }
        "array-empty-objects" => format!("[{}]", repeat("{}", size / 3)),
        "array-small-docs" => format!("[{}]", repeat(r#"{"a":1,"b":"x"}"#, size / 16)),
        "nested-objects-64" => {
            let members: Vec<String> = (0..64).map(|i| format!("\"m{i}\":{i}")).collect();
            let object = format!("{{{}}}", members.join(","));
            format!("{{\"o\":[{}]}}", repeat(&object, size / (object.len() + 1)))
        }
        "trailing-garbage" => format!("{{\"s\":\"{}\"}}x", "a".repeat(size)),
        "long-number" => format!("{{\"n\":1.{}}}", "0".repeat(size)),
        other => panic!("no shape {other}; shapes: {SHAPES:?}"),
    };
    text.into_bytes()
}

const DEPTH: usize = 64;

fn old_route(body: &[u8]) -> usize {
    let rev = RevisionId(1);
    match json::parse(body, DEPTH) {
        Ok(Value::Object(object)) => encode_document("k", rev, None, &object).len(),
        Ok(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .map(|o| encode_document("k", rev, None, o).len())
            .sum(),
        Ok(_) | Err(_) => 0,
    }
}

fn new_route(body: &[u8]) -> usize {
    let rev = RevisionId(1);
    if let Some(text) = ObjectText::scan(body, DEPTH) {
        return encode_object_text("k", rev, None, &text).len();
    }
    if let Some(texts) = ObjectText::scan_array(body, DEPTH) {
        return texts
            .iter()
            .map(|t| encode_object_text("k", rev, None, t).len())
            .sum();
    }
    old_route(body)
}

/// A line of `/proc/self/status` in KiB (`VmHWM`: the peak resident size, `VmRSS`: now).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Nanoseconds this thread has run on a CPU (`/proc/thread-self/schedstat`): unlike wall time,
/// not stretched by other processes on a shared machine.
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    stat.split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("shapes") {
        println!("{}", SHAPES.join(" "));
        return;
    }
    let shape = args.first().expect("a shape");
    let route = args.get(1).expect("a route: old or new");
    let size = args.get(2).map_or(16 << 20, |s| s.parse().expect("bytes"));
    let rounds: usize = args.get(3).map_or(5, |s| s.parse().expect("rounds"));
    let body = body(shape, size);
    // Forget the peak of building the body (Linux: 5 resets `VmHWM` to the current size).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let baseline = status_kib("VmRSS:");
    let mut best = Duration::MAX;
    let mut best_cpu = u64::MAX;
    let mut out = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let cpu = cpu_ns();
        out = match route.as_str() {
            "old" => old_route(&body),
            "new" => new_route(&body),
            other => panic!("no route {other}"),
        };
        best = best.min(start.elapsed());
        best_cpu = best_cpu.min(cpu_ns() - cpu);
    }
    println!(
        "{shape} {route} bytes={} ms={:.2} cpu_ms={:.2} stored={} peak_extra_mib={:.1}",
        body.len(),
        best.as_secs_f64() * 1e3,
        best_cpu as f64 / 1e6,
        out,
        status_kib("VmHWM:").saturating_sub(baseline) as f64 / 1024.0
    );
}
