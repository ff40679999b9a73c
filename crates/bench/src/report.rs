//! The results of a run: arangob's text, the latency table, the errors, the JSON report.
//!
//! What it is: the arangob/arangobench summary lines with their fixed labels (so scripts that
//! grep `Operations per second rate:` or `Time needed per operation:` keep working), then the
//! merged percentiles, then the errors by HTTP status and errorNum; and the JSON report with
//! arangobench's keys (`bench-tools.md` §5.4) plus the merged percentiles, the per-thread view
//! and the errors.
//!
//! What it is not: the measurement. Definitions follow arangobench: request time is the sum of
//! every request's service time over all threads, operations per second is operations divided
//! by the elapsed time.
//!
//! Invariants: the text goes to stdout and the failure warnings to stderr; the JSON report is
//! written once, to a file that did not exist.

use std::io::Write;

use serde_json::{json, Value};

use crate::latency::Summary;
use crate::options::{BatchMode, Settings};
use crate::runner::{ErrorKey, Outcome};

/// The figures arangobench derives from a run.
pub struct Figures {
    /// Operations.
    pub operations: u64,
    /// Sum of service times, seconds.
    pub request_time: f64,
    /// Per thread.
    pub per_thread: f64,
    /// Elapsed / operations.
    pub per_operation: f64,
    /// Elapsed × threads / operations.
    pub per_operation_per_thread: f64,
    /// Operations / elapsed.
    pub rate: f64,
    /// Seconds from start to end.
    pub elapsed: f64,
}

/// Derives arangobench's figures.
pub fn figures(settings: &Settings, outcome: &Outcome) -> Figures {
    let operations = outcome.totals.operations;
    let elapsed = outcome.elapsed.as_secs_f64();
    let request_time = outcome.totals.service.total().as_secs_f64();
    let ops = operations.max(1) as f64;
    Figures {
        operations,
        request_time,
        per_thread: request_time / settings.concurrency as f64,
        per_operation: elapsed / ops,
        per_operation_per_thread: elapsed * settings.concurrency as f64 / ops,
        rate: if elapsed > 0.0 {
            operations as f64 / elapsed
        } else {
            0.0
        },
        elapsed,
    }
}

fn yes_no(flag: bool) -> &'static str {
    if flag {
        "yes"
    } else {
        "no"
    }
}

/// Writes the text report.
pub fn write_text(
    out: &mut dyn Write,
    settings: &Settings,
    outcome: &Outcome,
) -> std::io::Result<()> {
    let f = figures(settings, outcome);
    let t = &outcome.totals;
    writeln!(
        out,
        "Total number of operations: {}, runs: 1, keep alive: {}, async: {}, batch size: {}, \
         replication factor: {}, number of shards: {}, wait for sync: {}, concurrency level (threads): {}",
        f.operations,
        yes_no(settings.keep_alive),
        yes_no(settings.async_requests),
        settings.batch_size,
        settings.replication_factor,
        settings.number_of_shards,
        settings.wait_for_sync,
        settings.concurrency
    )?;
    writeln!(
        out,
        "Test case: {}, complexity: {}, database: '{}', collection: '{}'",
        settings.case.name(),
        settings.complexity,
        settings.database,
        settings.collection
    )?;
    writeln!(
        out,
        "Total request/response duration (sum of all threads): {:.6} s",
        f.request_time
    )?;
    writeln!(
        out,
        "Request/response duration (per thread): {:.6} s",
        f.per_thread
    )?;
    writeln!(out, "Time needed per operation: {:.6} s", f.per_operation)?;
    writeln!(
        out,
        "Time needed per operation per thread: {:.6} s",
        f.per_operation_per_thread
    )?;
    writeln!(out, "Operations per second rate: {:.6}", f.rate)?;
    writeln!(out, "Elapsed time since start: {:.6} s", f.elapsed)?;
    writeln!(out)?;
    let service = t.service.summary();
    writeln!(out, "Min request time: {:.4}ms", service.min_ms)?;
    writeln!(out, "Avg request time: {:.4}ms", service.mean_ms)?;
    writeln!(out, "Max request time: {:.4}ms", service.max_ms)?;
    writeln!(out)?;
    writeln!(
        out,
        "Latency per request in ms, all threads merged ({} requests, {} operations):",
        t.requests, t.operations
    )?;
    writeln!(
        out,
        "  {:<44} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "", "median", "p95", "p99", "p99.9", "max"
    )?;
    let row = |out: &mut dyn Write, label: &str, s: &Summary| {
        writeln!(
            out,
            "  {:<44} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            label, s.p50_ms, s.p95_ms, s.p99_ms, s.p999_ms, s.max_ms
        )
    };
    match settings.rate {
        Some(rate) => {
            row(
                out,
                &format!("response time (from intended send, {rate}/s)"),
                &t.latencies.summary(),
            )?;
            row(out, "service time (from actual send)", &service)?;
        }
        None => row(out, "service time (closed loop)", &service)?,
    }
    writeln!(out)?;
    if t.errors.is_empty() {
        writeln!(out, "Errors: none")?;
    } else {
        writeln!(
            out,
            "Errors: {} failed operation(s), {} request(s) without a whole reply",
            t.failures, t.incomplete
        )?;
        for (key, count) in &t.errors {
            writeln!(out, "  {:<60} {count}", describe(key))?;
        }
    }
    Ok(())
}

/// One error's label.
pub fn describe(key: &ErrorKey) -> String {
    match key {
        ErrorKey::Http { status: 0, .. } => "batch part that could not be read".to_string(),
        ErrorKey::Http {
            status,
            error_num: Some(num),
        } => format!("HTTP {status}, errorNum {num}"),
        ErrorKey::Http {
            status,
            error_num: None,
        } => format!("HTTP {status}"),
        ErrorKey::Transport(message) => format!("transport: {message}"),
        ErrorKey::Reply(message) => format!("reply: {message}"),
        ErrorKey::Setup(message) => format!("setup: {message}"),
    }
}

/// The JSON report.
pub fn json_report(settings: &Settings, outcome: &Outcome) -> Value {
    let f = figures(settings, outcome);
    let t = &outcome.totals;
    let service = t.service.summary();
    let histogram: serde_json::Map<String, Value> = outcome
        .threads
        .iter()
        .enumerate()
        .map(|(i, thread)| {
            let s = thread.service.summary();
            (
                i.to_string(),
                json!({
                    "count": s.count, "50": s.p50_ms / 1e3, "80": thread.service.quantile_ns(0.80) as f64 / 1e9,
                    "85": thread.service.quantile_ns(0.85) as f64 / 1e9,
                    "90": thread.service.quantile_ns(0.90) as f64 / 1e9, "95": s.p95_ms / 1e3,
                    "99": s.p99_ms / 1e3, "99.99": s.p9999_ms / 1e3,
                }),
            )
        })
        .collect();
    let per_thread: Vec<Summary> = outcome
        .threads
        .iter()
        .filter(|t| t.service.count() > 0)
        .map(|t| t.service.summary())
        .collect();
    let mean = |pick: fn(&Summary) -> f64| {
        if per_thread.is_empty() {
            0.0
        } else {
            per_thread.iter().map(pick).sum::<f64>() / per_thread.len() as f64
        }
    };
    let errors: Vec<Value> = t
        .errors
        .iter()
        .map(|(key, count)| match key {
            ErrorKey::Http { status, error_num } => {
                json!({"kind": "http", "status": status, "errorNum": error_num, "count": count})
            }
            ErrorKey::Transport(message) => {
                json!({"kind": "transport", "message": message, "count": count})
            }
            ErrorKey::Reply(message) => {
                json!({"kind": "reply", "message": message, "count": count})
            }
            ErrorKey::Setup(message) => {
                json!({"kind": "setup", "message": message, "count": count})
            }
        })
        .collect();
    let by_method: serde_json::Map<String, Value> = t
        .by_method
        .iter()
        .map(|(m, n)| (m.as_str().to_string(), json!(n)))
        .collect();
    json!({
        "histogram": histogram,
        "totalNumberOfOperations": f.operations,
        "runs": 1,
        "keepAlive": settings.keep_alive,
        "async": settings.async_requests,
        "batchSize": settings.batch_size,
        "batchMode": match settings.batch_mode { BatchMode::Multipart => "multipart", BatchMode::Array => "array" },
        "replicationFactor": settings.replication_factor,
        "numberOfShards": settings.number_of_shards,
        "waitForSync": settings.wait_for_sync,
        "concurrencyLevel": settings.concurrency,
        "testCase": settings.case.name(),
        "complexity": settings.complexity,
        "database": settings.database,
        "collection": settings.collection,
        "endpoints": settings.endpoints.iter().map(|e| e.text.clone()).collect::<Vec<_>>(),
        "duration": settings.duration.map(|d| d.as_secs()),
        "rate": settings.rate,
        "coordinatedOmissionCorrected": settings.rate.is_some(),
        "results": {
            "requestTime": f.request_time,
            "requestResponseDurationPerThread": f.per_thread,
            "timeNeededPerOperation": f.per_operation,
            "timeNeededPerOperationPerThread": f.per_operation_per_thread,
            "operationsPerSecondRate": f.rate,
            "timeSinceStart": f.elapsed,
            "failures": t.failures,
            "incompleteResults": t.incomplete,
        },
        "min": service.min_ms / 1e3,
        "avg": service.mean_ms / 1e3,
        "max": service.max_ms / 1e3,
        "requests": t.requests,
        "connectionsOpened": t.connects,
        "operationsByMethod": by_method,
        "serviceTime": service,
        "responseTime": t.latencies.summary(),
        "perThreadMeanMedianMs": mean(|s| s.p50_ms),
        "perThreadMeanP95Ms": mean(|s| s.p95_ms),
        "errors": errors,
    })
}
