//! Request counters and the Prometheus text of `/_admin/metrics` (and `/v2`).
//!
//! What it is: [`Metrics`], lock-free counters the pipeline bumps once per reply (requests by
//! method and status class, a latency histogram), and [`Metrics::render`], which adds the
//! catalog's counters (documents, journal bytes, syncs, seals, compactions, collections,
//! databases), uptime and the process's resident memory.
//!
//! What it is not: a metrics library. The names are Quince's own (`quince_` prefix); the
//! text follows the Prometheus exposition format 0.0.4.
//!
//! Invariants: counters only grow; histogram buckets are rendered cumulatively, with `+Inf`
//! equal to `_count`.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use http::Method;
use quince_ops::CatalogStats;

/// The methods counted separately; anything else is counted as `OTHER`.
const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER",
];

/// Status classes `1xx` to `5xx`.
const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// Upper bounds of the latency buckets, in seconds (the last bucket, `+Inf`, is implicit).
const LATENCY_BOUNDS_SECS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// The server's request counters.
pub struct Metrics {
    /// Requests by method (index into [`METHODS`]) and status class.
    requests: [[AtomicU64; STATUS_CLASSES.len()]; METHODS.len()],
    /// Replies per latency bucket (not cumulative; the last one is `+Inf`).
    latency_buckets: [AtomicU64; LATENCY_BOUNDS_SECS.len() + 1],
    /// Sum of all latencies, in microseconds.
    latency_sum_micros: AtomicU64,
    /// Credentials that did not check out (Basic, tokens, `/_open/auth`).
    auth_failures: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            latency_buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            latency_sum_micros: AtomicU64::new(0),
            auth_failures: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    /// Counts one reply.
    pub fn record(&self, method: &Method, status: u16, latency: Duration) {
        let m = method_index(method);
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        self.requests[m][class].fetch_add(1, Ordering::Relaxed);
        let secs = latency.as_secs_f64();
        let bucket = LATENCY_BOUNDS_SECS
            .iter()
            .position(|bound| secs <= *bound)
            .unwrap_or(LATENCY_BOUNDS_SECS.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.latency_sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Counts one failed authentication.
    pub fn record_auth_failure(&self) {
        self.auth_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text of every metric.
    pub fn render(&self, stats: &CatalogStats, uptime: Duration) -> String {
        let mut out = String::with_capacity(8 * 1024);
        header(
            &mut out,
            "quince_http_requests_total",
            "counter",
            "HTTP requests answered, by method and status class.",
        );
        for (m, method) in METHODS.iter().enumerate() {
            for (c, class) in STATUS_CLASSES.iter().enumerate() {
                let n = self.requests[m][c].load(Ordering::Relaxed);
                if n > 0 {
                    let _ = writeln!(
                        out,
                        "quince_http_requests_total{{method=\"{method}\",status=\"{class}\"}} {n}"
                    );
                }
            }
        }
        self.render_latency(&mut out);
        let counters = [
            (
                "quince_journal_bytes_written_total",
                "Bytes appended to journals since start.",
                stats.journal_bytes_written,
            ),
            (
                "quince_journal_syncs_total",
                "fsyncs of journals since start.",
                stats.syncs,
            ),
            (
                "quince_journal_seals_total",
                "Journals sealed into datafiles since start.",
                stats.journal_seals,
            ),
            (
                "quince_compactions_total",
                "Datafile compactions since start.",
                stats.compactions,
            ),
            (
                "quince_auth_failures_total",
                "Failed authentications (wrong password, bad token, unknown user) since start.",
                self.auth_failures.load(Ordering::Relaxed),
            ),
        ];
        for (name, help, value) in counters {
            header(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {value}");
        }
        let gauges = [
            (
                "quince_documents",
                "Live documents in all collections.",
                stats.documents as f64,
            ),
            (
                "quince_collections",
                "Collections in all databases.",
                stats.collections as f64,
            ),
            ("quince_databases", "Databases.", stats.databases as f64),
            (
                "quince_uptime_seconds",
                "Seconds since the server started.",
                uptime.as_secs_f64(),
            ),
            (
                "quince_process_resident_memory_bytes",
                "Resident memory of the server process.",
                resident_memory_bytes() as f64,
            ),
        ];
        for (name, help, value) in gauges {
            header(&mut out, name, "gauge", help);
            let _ = writeln!(out, "{name} {value}");
        }
        out
    }

    fn render_latency(&self, out: &mut String) {
        let name = "quince_http_request_duration_seconds";
        header(
            out,
            name,
            "histogram",
            "Time from receiving a request to its reply.",
        );
        let mut cumulative = 0u64;
        for (i, bound) in LATENCY_BOUNDS_SECS.iter().enumerate() {
            cumulative += self.latency_buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        cumulative += self.latency_buckets[LATENCY_BOUNDS_SECS.len()].load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
        let sum = self.latency_sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}");
        let _ = writeln!(out, "{name}_count {cumulative}");
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn method_index(method: &Method) -> usize {
    METHODS
        .iter()
        .position(|m| *m == method.as_str())
        .unwrap_or(METHODS.len() - 1)
}

/// The process's resident set size, from `/proc/self/status` (0 where that is unavailable).
fn resident_memory_bytes() -> u64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_of(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|r| r.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("{series} missing in\n{text}"))
            .parse()
            .unwrap()
    }

    #[test]
    fn requests_are_counted_by_method_and_class() {
        let m = Metrics::default();
        m.record(&Method::GET, 200, Duration::from_micros(50));
        m.record(&Method::GET, 201, Duration::from_micros(50));
        m.record(&Method::POST, 404, Duration::from_millis(3));
        m.record(
            &Method::from_bytes(b"PROPFIND").unwrap(),
            405,
            Duration::from_secs(20),
        );
        let text = m.render(&CatalogStats::default(), Duration::from_secs(1));
        assert_eq!(
            value_of(
                &text,
                r#"quince_http_requests_total{method="GET",status="2xx"}"#
            ),
            2.0
        );
        assert_eq!(
            value_of(
                &text,
                r#"quince_http_requests_total{method="POST",status="4xx"}"#
            ),
            1.0
        );
        assert_eq!(
            value_of(
                &text,
                r#"quince_http_requests_total{method="OTHER",status="4xx"}"#
            ),
            1.0
        );
    }

    #[test]
    fn latency_histogram_is_cumulative() {
        let m = Metrics::default();
        m.record(&Method::GET, 200, Duration::from_micros(50));
        m.record(&Method::GET, 200, Duration::from_millis(3));
        m.record(&Method::GET, 200, Duration::from_secs(20));
        let text = m.render(&CatalogStats::default(), Duration::ZERO);
        let name = "quince_http_request_duration_seconds";
        assert_eq!(
            value_of(&text, &format!("{name}_bucket{{le=\"0.0001\"}}")),
            1.0
        );
        assert_eq!(
            value_of(&text, &format!("{name}_bucket{{le=\"0.005\"}}")),
            2.0
        );
        assert_eq!(value_of(&text, &format!("{name}_bucket{{le=\"10\"}}")), 2.0);
        assert_eq!(
            value_of(&text, &format!("{name}_bucket{{le=\"+Inf\"}}")),
            3.0
        );
        assert_eq!(value_of(&text, &format!("{name}_count")), 3.0);
        assert!((value_of(&text, &format!("{name}_sum")) - 20.00305).abs() < 1e-9);
    }

    #[test]
    fn catalog_counters_are_rendered() {
        let stats = CatalogStats {
            databases: 2,
            collections: 3,
            documents: 40,
            journal_bytes_written: 5000,
            syncs: 6,
            journal_seals: 1,
            compactions: 0,
        };
        let text = Metrics::default().render(&stats, Duration::from_secs(7));
        assert_eq!(value_of(&text, "quince_documents"), 40.0);
        assert_eq!(
            value_of(&text, "quince_journal_bytes_written_total"),
            5000.0
        );
        assert_eq!(value_of(&text, "quince_journal_syncs_total"), 6.0);
        assert_eq!(value_of(&text, "quince_databases"), 2.0);
        assert_eq!(value_of(&text, "quince_uptime_seconds"), 7.0);
        assert!(value_of(&text, "quince_process_resident_memory_bytes") > 0.0);
        assert!(text.contains("# TYPE quince_journal_syncs_total counter"));
    }
}
