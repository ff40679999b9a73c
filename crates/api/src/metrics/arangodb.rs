//! The `arangodb_*` families: ArangoDB 3.12's metric names for the quantities Quince has, so
//! that dashboards and alerts written for ArangoDB find them.
//!
//! What it is: [`render`], which writes each family from a [`Snapshot`] with ArangoDB's name,
//! type, label (`role="SINGLE"`, a single server's) and, for histograms, ArangoDB's bucket
//! bounds (written with six decimals, as ArangoDB writes them).
//!
//! What it is not: every ArangoDB metric. Families whose quantity Quince does not have
//! (RocksDB, cluster, V8, superuser/user request splits) are absent rather than reported as 0;
//! `docs/operations.md` lists what is emitted and where a meaning differs.
//!
//! Invariants: a family is written once, with its `# HELP` and `# TYPE` lines, whatever its
//! value; counters are the `_total` names ArangoDB 3.12 uses in `/_admin/metrics/v2`.

use quince_aql::service::registry::QUERY_TIME_BOUNDS;

use super::connections::CONNECTION_TIME_CUTS;
use super::requests::{
    BytesKind, Histogram, TimeKind, ARANGODB_REQUEST_TIME_CUTS, BODY_SIZE_BOUNDS, BYTES_CUTS,
    METHODS,
};
use super::text::{BoundStyle, Family};
use super::Snapshot;

/// The label ArangoDB puts on every sample of a single server.
const ROLE: &str = "role=\"SINGLE\"";

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    Family::new(out, name, "counter", help, ROLE).sample(value);
}

fn gauge(out: &mut String, name: &str, help: &str, value: f64) {
    Family::new(out, name, "gauge", help, ROLE).sample(value);
}

fn histogram(out: &mut String, name: &str, help: &str, h: &Histogram, bounds: &[f64]) {
    Family::new(out, name, "histogram", help, ROLE).histogram(h, bounds, BoundStyle::Fixed6);
}

/// Writes every `arangodb_*` family.
pub(super) fn render(s: &Snapshot, out: &mut String) {
    render_http(s, out);
    render_connections(s, out);
    render_data(s, out);
    render_process(s, out);
}

fn render_http(s: &Snapshot, out: &mut String) {
    let r = &s.requests;
    counter(
        out,
        "arangodb_http_request_statistics_total_requests_total",
        "HTTP requests answered.",
        r.total(),
    );
    counter(
        out,
        "arangodb_http_request_statistics_async_requests_total",
        "HTTP requests run as asynchronous jobs (x-arango-async).",
        r.asynchronous,
    );
    for (index, method) in METHODS.iter().enumerate() {
        let name = match *method {
            "OTHER" => "arangodb_http_request_statistics_other_http_requests_total".to_string(),
            m => format!(
                "arangodb_http_request_statistics_http_{}_requests_total",
                m.to_ascii_lowercase()
            ),
        };
        let help = match *method {
            "OTHER" => "HTTP requests with any other method.".to_string(),
            m => format!("HTTP {m} requests."),
        };
        counter(out, &name, &help, r.by_method(index));
    }
    for (protocol, label, h) in [
        ("http1", "HTTP/1.x", &r.body_sizes[0]),
        ("http2", "HTTP/2", &r.body_sizes[1]),
    ] {
        histogram(
            out,
            &format!("arangodb_request_body_size_{protocol}"),
            &format!("Body sizes of {label} requests, in bytes."),
            h,
            &BODY_SIZE_BOUNDS,
        );
    }
}

fn render_connections(s: &Snapshot, out: &mut String) {
    let r = &s.requests;
    gauge(
        out,
        "arangodb_client_connection_statistics_client_connections",
        "Client connections open now.",
        s.connections_open as f64,
    );
    histogram(
        out,
        "arangodb_client_connection_statistics_connection_time",
        "How long closed client connections were open, in seconds.",
        &s.connection_times,
        &CONNECTION_TIME_CUTS,
    );
    for (kind, name, help) in [
        (
            TimeKind::Total,
            "total_time",
            "Time from a request's arrival to its reply, in seconds.",
        ),
        (
            TimeKind::Request,
            "request_time",
            "Time a request's handler ran, in seconds.",
        ),
        (
            TimeKind::Queue,
            "queue_time",
            "Time a request waited before its handler ran (not counting reading its body), in seconds.",
        ),
        (
            TimeKind::Io,
            "io_time",
            "Time spent reading a request's body, in seconds.",
        ),
    ] {
        histogram(
            out,
            &format!("arangodb_client_connection_statistics_{name}"),
            help,
            r.time(kind),
            &ARANGODB_REQUEST_TIME_CUTS,
        );
    }
    for (kind, name, help) in [
        (
            BytesKind::Sent,
            "bytes_sent",
            "Reply bytes per request (status line, headers, body).",
        ),
        (
            BytesKind::Received,
            "bytes_received",
            "Request bytes per request (request line, headers, body as sent).",
        ),
    ] {
        histogram(
            out,
            &format!("arangodb_client_connection_statistics_{name}"),
            help,
            r.bytes(kind),
            &BYTES_CUTS,
        );
    }
}

fn render_data(s: &Snapshot, out: &mut String) {
    let c = &s.catalog;
    counter(
        out,
        "arangodb_document_writes_total",
        "Document inserts, replaces, updates and removes written.",
        c.document_writes,
    );
    counter(
        out,
        "arangodb_collection_truncates_total",
        "Collection truncates.",
        c.truncates,
    );
    counter(
        out,
        "arangodb_transactions_started_total",
        "Stream transactions begun.",
        c.transactions_started,
    );
    counter(
        out,
        "arangodb_transactions_committed_total",
        "Stream transactions committed.",
        c.transactions_committed,
    );
    counter(
        out,
        "arangodb_transactions_aborted_total",
        "Stream transactions aborted.",
        c.transactions_aborted,
    );
    let q = &s.queries;
    counter(
        out,
        "arangodb_aql_all_query_total",
        "AQL queries finished.",
        q.finished,
    );
    counter(
        out,
        "arangodb_aql_slow_query_total",
        "AQL queries finished that ran at least the slow-query threshold.",
        q.slow,
    );
    counter(
        out,
        "arangodb_aql_total_query_time_msec_total",
        "Run time of all finished AQL queries, in milliseconds.",
        q.run_time_micros / 1000,
    );
    let run_times = Histogram {
        bounds: &QUERY_TIME_BOUNDS,
        buckets: q.run_times.to_vec(),
        sum: q.run_time_micros as f64 / 1e6,
    };
    histogram(
        out,
        "arangodb_aql_query_time",
        "Run times of finished AQL queries, in seconds.",
        &run_times,
        &QUERY_TIME_BOUNDS,
    );
    gauge(
        out,
        "arangodb_aql_current_query",
        "AQL queries running now.",
        q.running as f64,
    );
    gauge(
        out,
        "arangodb_aql_global_memory_usage",
        "Bytes the running AQL queries and their cursors' results hold.",
        q.memory_used as f64,
    );
    gauge(
        out,
        "arangodb_aql_global_memory_limit",
        "The limit on the bytes all AQL queries may hold together (0: none).",
        q.memory_limit as f64,
    );
    counter(
        out,
        "arangodb_aql_global_query_memory_limit_reached_total",
        "AQL queries stopped by the global memory limit.",
        q.memory_refused_global,
    );
    counter(
        out,
        "arangodb_aql_local_query_memory_limit_reached_total",
        "AQL queries stopped by their own memory limit.",
        q.memory_refused_own,
    );
    gauge(
        out,
        "arangodb_metadata_number_of_databases",
        "Databases.",
        c.databases as f64,
    );
    gauge(
        out,
        "arangodb_metadata_number_of_collections",
        "Collections in all databases.",
        c.collections as f64,
    );
}

fn render_process(s: &Snapshot, out: &mut String) {
    let p = &s.process;
    counter(
        out,
        "arangodb_process_statistics_minor_page_faults_total",
        "Page faults of the server process that needed no disk read.",
        p.minor_page_faults,
    );
    counter(
        out,
        "arangodb_process_statistics_major_page_faults_total",
        "Page faults of the server process that read a page from disk.",
        p.major_page_faults,
    );
    let gauges = [
        (
            "arangodb_process_statistics_user_time",
            "CPU time of the server process in user mode, in seconds.",
            p.user_time,
        ),
        (
            "arangodb_process_statistics_system_time",
            "CPU time of the server process in kernel mode, in seconds.",
            p.system_time,
        ),
        (
            "arangodb_process_statistics_number_of_threads",
            "Threads of the server process.",
            p.threads as f64,
        ),
        (
            "arangodb_process_statistics_resident_set_size",
            "Resident memory of the server process, in bytes.",
            p.resident_size as f64,
        ),
        (
            "arangodb_process_statistics_resident_set_size_percent",
            "Resident memory of the server process as a share of physical memory (0 to 1).",
            p.resident_share(),
        ),
        (
            "arangodb_process_statistics_virtual_memory_size",
            "Virtual memory of the server process, in bytes.",
            p.virtual_size as f64,
        ),
    ];
    for (name, help, value) in gauges {
        gauge(out, name, help, value);
    }
    counter(
        out,
        "arangodb_server_statistics_server_uptime_total",
        "Seconds since the server started.",
        s.uptime.as_secs(),
    );
    gauge(
        out,
        "arangodb_server_statistics_physical_memory",
        "Physical memory of the machine, in bytes.",
        p.physical_memory as f64,
    );
    gauge(
        out,
        "arangodb_server_statistics_cpu_cores",
        "CPU cores the server process may use.",
        p.cores as f64,
    );
    gauge(
        out,
        "arangodb_scheduler_num_worker_threads",
        "Worker threads of the request scheduler (the async runtime).",
        s.worker_threads as f64,
    );
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use http::Method;
    use quince_ops::CatalogStats;

    use super::super::tests::{render, reply, value_of};
    use super::super::Metrics;

    #[test]
    fn requests_by_method_carry_the_role_label() {
        let m = Metrics::default();
        reply(&m, Method::GET, 200, Duration::from_millis(2));
        reply(&m, Method::GET, 404, Duration::from_millis(70));
        reply(&m, Method::PATCH, 200, Duration::from_millis(2));
        let text = render(&m, CatalogStats::default(), Duration::from_secs(9));
        let v = |s: &str| value_of(&text, &format!("{s}{{role=\"SINGLE\"}}"));
        assert_eq!(
            v("arangodb_http_request_statistics_total_requests_total"),
            3.0
        );
        assert_eq!(
            v("arangodb_http_request_statistics_http_get_requests_total"),
            2.0
        );
        assert_eq!(
            v("arangodb_http_request_statistics_http_patch_requests_total"),
            1.0
        );
        assert_eq!(
            v("arangodb_http_request_statistics_other_http_requests_total"),
            0.0
        );
        assert_eq!(v("arangodb_server_statistics_server_uptime_total"), 9.0);
        let total = "arangodb_client_connection_statistics_total_time";
        let bucket = |le: &str| {
            value_of(
                &text,
                &format!("{total}_bucket{{role=\"SINGLE\",le=\"{le}\"}}"),
            )
        };
        assert_eq!(bucket("0.010000"), 2.0);
        assert_eq!(bucket("0.050000"), 2.0);
        assert_eq!(bucket("0.100000"), 3.0);
        assert_eq!(bucket("+Inf"), 3.0);
        assert_eq!(v(&format!("{total}_count")), 3.0);
        assert!(text.contains("# TYPE arangodb_client_connection_statistics_total_time histogram"));
        assert!(text.contains("# TYPE arangodb_document_writes_total counter"));
    }

    #[test]
    fn catalog_counters_become_arangodb_families() {
        let stats = CatalogStats {
            databases: 2,
            collections: 5,
            document_writes: 17,
            truncates: 1,
            transactions_started: 4,
            transactions_committed: 3,
            transactions_aborted: 1,
            ..CatalogStats::default()
        };
        let text = render(&Metrics::default(), stats, Duration::ZERO);
        let v = |s: &str| value_of(&text, &format!("{s}{{role=\"SINGLE\"}}"));
        assert_eq!(v("arangodb_document_writes_total"), 17.0);
        assert_eq!(v("arangodb_collection_truncates_total"), 1.0);
        assert_eq!(v("arangodb_transactions_started_total"), 4.0);
        assert_eq!(v("arangodb_transactions_committed_total"), 3.0);
        assert_eq!(v("arangodb_transactions_aborted_total"), 1.0);
        assert_eq!(v("arangodb_metadata_number_of_collections"), 5.0);
        assert_eq!(v("arangodb_metadata_number_of_databases"), 2.0);
        assert!(v("arangodb_process_statistics_resident_set_size") > 0.0);
    }
}
