//! Request counters and the Prometheus text of `/_admin/metrics` (and `/v2`).
//!
//! What it is: [`Metrics`], lock-free counters the pipeline bumps once per reply
//! (`requests`: by method and status class, time and size histograms, kept per thread by
//! `shards`, so counting takes no atomic read-modify-write), the
//! client connection figures the listener moves (`connections`), the failed authentications;
//! [`Snapshot`], every figure at one moment (these counters, the catalog's counters, the query
//! counters, the process figures from `/proc`, uptime), and its rendering: Quince's own
//! families (`quince_` prefix, [`Snapshot::render`]) followed by the families of ArangoDB
//! 3.12 that have the same meaning (`arangodb_` prefix, `arangodb`). `/_admin/statistics`
//! (`crate::admin::statistics`) reads the same snapshot.
//!
//! What it is not: a metrics library. The text follows the Prometheus exposition format 0.0.4.
//! The list of families, with their ArangoDB counterparts, is in `docs/operations.md`
//! ("Metrics"); a test keeps the two in step.
//!
//! Invariants: counters only grow; histogram buckets are rendered cumulatively, with `+Inf`
//! equal to `_count`; every family has `# HELP` and `# TYPE` lines, even with no samples.

mod arangodb;
mod connections;
mod process;
pub(crate) mod requests;
mod shards;
mod text;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use quince_aql::service::registry::QueryCounters;
use quince_ops::CatalogStats;

pub(crate) use connections::CONNECTION_TIME_CUTS;
pub use connections::{ClientConnections, OpenConnection};
pub(crate) use process::ProcessFigures;
pub(crate) use requests::{RequestRecord, RequestSnapshot, TimeKind};
use requests::{RequestStats, METHODS, QUINCE_LATENCY_BOUNDS, STATUS_CLASSES};
use text::{BoundStyle, Family};

/// The server's request and connection counters.
#[derive(Default)]
pub struct Metrics {
    requests: RequestStats,
    connections: Arc<ClientConnections>,
    /// Credentials that did not check out (Basic, tokens, `/_open/auth`).
    auth_failures: AtomicU64,
}

impl Metrics {
    /// Counts one reply.
    pub(crate) fn record(&self, record: &RequestRecord<'_>) {
        self.requests.record(record);
    }

    /// Counts one failed authentication.
    pub fn record_auth_failure(&self) {
        self.auth_failures.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a client connection opened; the guard counts it closed.
    pub(crate) fn connection_opened(&self) -> OpenConnection {
        self.connections.opened()
    }

    /// The figures these counters hold, with the rest of a [`Snapshot`] filled in by the
    /// caller.
    pub(crate) fn snapshot(&self, rest: SnapshotInputs) -> Snapshot {
        Snapshot {
            requests: self.requests.snapshot(),
            connections_open: self.connections.open(),
            connection_times: self.connections.lifetimes(),
            auth_failures: self.auth_failures.load(Ordering::Relaxed),
            catalog: rest.catalog,
            queries: rest.queries,
            process: rest.process,
            uptime: rest.uptime,
            worker_threads: rest.worker_threads,
            in_flight: rest.in_flight,
        }
    }
}

/// The figures of a [`Snapshot`] that do not come from [`Metrics`].
#[derive(Clone, Debug, Default)]
pub(crate) struct SnapshotInputs {
    pub catalog: CatalogStats,
    pub queries: QueryCounters,
    pub process: ProcessFigures,
    pub uptime: Duration,
    /// The runtime's worker threads.
    pub worker_threads: u64,
    /// Requests past the access checks and not yet answered, and queued or running jobs.
    pub in_flight: u64,
}

/// Every figure at one moment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    pub requests: RequestSnapshot,
    pub connections_open: u64,
    pub connection_times: requests::Histogram,
    pub auth_failures: u64,
    pub catalog: CatalogStats,
    pub queries: QueryCounters,
    pub process: ProcessFigures,
    pub uptime: Duration,
    pub worker_threads: u64,
    pub in_flight: u64,
}

impl Snapshot {
    /// The Prometheus text of every metric: Quince's families, then ArangoDB's.
    pub(crate) fn render(&self) -> String {
        let mut out = String::with_capacity(32 * 1024);
        self.render_quince(&mut out);
        arangodb::render(self, &mut out);
        out
    }

    fn render_quince(&self, out: &mut String) {
        let mut f = Family::new(
            out,
            "quince_http_requests_total",
            "counter",
            "HTTP requests answered, by method and status class.",
            "",
        );
        for (m, method) in METHODS.iter().enumerate() {
            for (c, class) in STATUS_CLASSES.iter().enumerate() {
                let n = self.requests.requests[m][c];
                if n > 0 {
                    let labels = format!("method=\"{method}\",status=\"{class}\"");
                    f.sample_with("", &labels, n);
                }
            }
        }
        Family::new(
            out,
            "quince_http_request_duration_seconds",
            "histogram",
            "Time from receiving a request to its reply.",
            "",
        )
        .histogram(
            self.requests.time(TimeKind::Total),
            &QUINCE_LATENCY_BOUNDS,
            BoundStyle::Shortest,
        );
        let stats = &self.catalog;
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
                self.auth_failures,
            ),
        ];
        for (name, help, value) in counters {
            Family::new(out, name, "counter", help, "").sample(value);
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
                self.uptime.as_secs_f64(),
            ),
            (
                "quince_process_resident_memory_bytes",
                "Resident memory of the server process.",
                self.process.resident_size as f64,
            ),
        ];
        for (name, help, value) in gauges {
            Family::new(out, name, "gauge", help, "").sample(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Method, Version};

    /// The value of the sample `series` (name and labels exactly as written).
    pub(super) fn value_of(text: &str, series: &str) -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(series).and_then(|r| r.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("{series} missing in\n{text}"))
            .parse()
            .unwrap()
    }

    pub(super) fn reply(m: &Metrics, method: Method, status: u16, latency: Duration) {
        m.record(&RequestRecord {
            method: &method,
            version: Version::HTTP_11,
            status,
            total: latency,
            before_handler: Duration::ZERO,
            body_read: Duration::ZERO,
            bytes_received: 0,
            body_received: 0,
            bytes_sent: 10,
            asynchronous: false,
        });
    }

    pub(super) fn render(m: &Metrics, catalog: CatalogStats, uptime: Duration) -> String {
        m.snapshot(SnapshotInputs {
            catalog,
            process: ProcessFigures::read(),
            uptime,
            ..SnapshotInputs::default()
        })
        .render()
    }

    #[test]
    fn requests_are_counted_by_method_and_class() {
        let m = Metrics::default();
        reply(&m, Method::GET, 200, Duration::from_micros(50));
        reply(&m, Method::GET, 201, Duration::from_micros(50));
        reply(&m, Method::POST, 404, Duration::from_millis(3));
        reply(
            &m,
            Method::from_bytes(b"PROPFIND").unwrap(),
            405,
            Duration::from_secs(20),
        );
        let text = render(&m, CatalogStats::default(), Duration::from_secs(1));
        let series = |labels: &str| format!("quince_http_requests_total{{{labels}}}");
        assert_eq!(
            value_of(&text, &series(r#"method="GET",status="2xx""#)),
            2.0
        );
        assert_eq!(
            value_of(&text, &series(r#"method="POST",status="4xx""#)),
            1.0
        );
        assert_eq!(
            value_of(&text, &series(r#"method="OTHER",status="4xx""#)),
            1.0
        );
    }

    #[test]
    fn latency_histogram_is_cumulative() {
        let m = Metrics::default();
        reply(&m, Method::GET, 200, Duration::from_micros(50));
        reply(&m, Method::GET, 200, Duration::from_millis(3));
        reply(&m, Method::GET, 200, Duration::from_secs(20));
        let text = render(&m, CatalogStats::default(), Duration::ZERO);
        let name = "quince_http_request_duration_seconds";
        let bucket = |le: &str| value_of(&text, &format!("{name}_bucket{{le=\"{le}\"}}"));
        assert_eq!(bucket("0.0001"), 1.0);
        assert_eq!(bucket("0.005"), 2.0);
        assert_eq!(bucket("10"), 2.0);
        assert_eq!(bucket("+Inf"), 3.0);
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
            ..CatalogStats::default()
        };
        let text = render(&Metrics::default(), stats, Duration::from_secs(7));
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

    #[test]
    fn every_family_has_help_and_type_and_every_sample_a_family() {
        let m = Metrics::default();
        reply(&m, Method::GET, 200, Duration::from_micros(50));
        let text = render(&m, CatalogStats::default(), Duration::ZERO);
        let mut families: Vec<(String, String)> = Vec::new();
        let mut helped = std::collections::HashSet::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                helped.insert(rest.split(' ').next().unwrap().to_string());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap();
                assert!(helped.contains(name), "{name} has no HELP");
                assert!(["counter", "gauge", "histogram"].contains(&kind));
                families.push((name.to_string(), kind.to_string()));
            } else {
                let name = line.split(['{', ' ']).next().unwrap();
                let (family, kind) = families.last().expect("a sample after a TYPE line");
                let ok = match kind.as_str() {
                    "histogram" => [
                        format!("{family}_bucket"),
                        format!("{family}_sum"),
                        format!("{family}_count"),
                    ]
                    .contains(&name.to_string()),
                    _ => name == family,
                };
                assert!(ok, "{name} under {family}");
            }
        }
        let mut names: Vec<&String> = families.iter().map(|(n, _)| n).collect();
        let all = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all, "a family is written twice");
    }
}
