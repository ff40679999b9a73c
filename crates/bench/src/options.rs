//! The options of `quince bench`, with arangob/arangobench's names and defaults.
//!
//! What it is: the clap definition ([`BenchArgs`]: `--opt value` and `--opt=value`, ArangoDB's
//! boolean spellings, a bare boolean meaning true, `--server.endpoint` repeatable) and its
//! validation into [`Settings`], the checked form the runner uses.
//!
//! What it is not: the defaults' meaning (see `bench-tools.md` §2): the test cases live in
//! [`crate::cases`], the endpoint and boolean syntax in [`quince_client`].
//!
//! Invariants: every number is bounded here (threads, requests, batch size, complexity, rate),
//! so later stages only see valid values; a usage error exits with status 2.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Parser};
use quince_client::{parse_bool, Endpoint};

use crate::cases::TestCase;

/// The most benchmark connections (arangob's "threads"; each is one keep-alive connection).
pub const THREADS_MAX: u64 = 4096;
/// The largest `--batch-size`.
pub const BATCH_MAX: u64 = 100_000;
/// The largest `--complexity`.
pub const COMPLEXITY_MAX: u64 = 100_000;

/// `quince bench`: an arangob/arangobench-compatible load generator that speaks only HTTP.
#[derive(Parser, Debug, Clone)]
#[command(name = "quince bench", args_override_self = true)]
pub struct BenchArgs {
    /// Threads, each with one connection (arangob's default 1).
    #[arg(long = "concurrency", visible_alias = "threads", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=THREADS_MAX))]
    pub concurrency: u64,

    /// Total operations (not HTTP requests when batching, nor in the transaction cases, where
    /// one operation is one transaction of several requests); ignored with --duration.
    #[arg(long = "requests", value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    pub requests: u64,

    /// Seconds to run; when above 0 the operation count is unbounded.
    #[arg(long = "duration", value_name = "SECONDS", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub duration: u64,

    /// Case-specific size: attributes per document, documents per import, ... (default 1;
    /// docs1m defaults to 20).
    #[arg(long = "complexity", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..=COMPLEXITY_MAX))]
    pub complexity: Option<u64>,

    /// The base collection name.
    #[arg(
        long = "collection",
        value_name = "NAME",
        default_value = "ArangoBenchmark"
    )]
    pub collection: String,

    /// The test case (see --help for the list).
    #[arg(long = "test-case", value_name = "CASE", default_value = "version")]
    pub test_case: String,

    /// Operations per request: 0 sends one request per operation.
    #[arg(long = "batch-size", value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u64).range(0..=BATCH_MAX))]
    pub batch_size: u64,

    /// How batches travel: `multipart` (POST /_api/batch, as arangob) or `array` (one array
    /// body to POST /_api/document; insert-only cases).
    #[arg(long = "batch-mode", value_name = "MODE", default_value = "multipart")]
    pub batch_mode: String,

    /// Sends `x-arango-async: true` with every benchmark request.
    #[arg(long = "async", value_name = "BOOL", default_value = "false", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub r#async: bool,

    /// HTTP keep-alive on each thread's connection.
    #[arg(long = "keep-alive", value_name = "BOOL", default_value = "true", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub keep_alive: bool,

    /// Sleeps 10 s after the threads connected, before starting.
    #[arg(long = "delay", value_name = "BOOL", default_value = "false", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub delay: bool,

    /// Shows a progress bar (only when stderr is a terminal).
    #[arg(long = "progress", value_name = "BOOL", default_value = "true", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub progress: bool,

    /// Suppresses the status lines.
    #[arg(long = "quiet", value_name = "BOOL", default_value = "false", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub quiet: bool,

    /// Writes the JSON report to this file (which must not exist yet).
    #[arg(long = "json-report-file", value_name = "FILE")]
    pub json_report_file: Option<PathBuf>,

    /// Open-loop mode: sends at this many requests per second in total, and measures each
    /// latency from the request's intended send time (wrk2-style). 0 = closed loop.
    #[arg(long = "rate", value_name = "PER_SECOND", default_value_t = 0.0)]
    pub rate: f64,

    /// `replicationFactor` of the created collections.
    #[arg(long = "replication-factor", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=10))]
    pub replication_factor: u64,

    /// `numberOfShards` of the created collections.
    #[arg(long = "number-of-shards", value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub number_of_shards: u64,

    /// `waitForSync` of the created collections.
    #[arg(long = "wait-for-sync", value_name = "BOOL", default_value = "false", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub wait_for_sync: bool,

    /// Drops and creates the collections before the run; false benchmarks existing ones.
    #[arg(long = "create-collection", value_name = "BOOL", default_value = "true", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub create_collection: bool,

    /// Creates `--server.database` first (through `_system`).
    #[arg(long = "create-database", value_name = "BOOL", default_value = "false", value_parser = parse_bool,
          action = ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub create_database: bool,

    /// docs1m: the share of reads in percent (100 read, 0 write, 50 mixed).
    #[arg(long = "read-percent", value_name = "PERCENT", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(0..=100))]
    pub read_percent: u64,

    /// docs1m: documents preloaded (keys K0 ... K<n-1>) before the run.
    #[arg(long = "preload", value_name = "N", default_value_t = 100_000,
          value_parser = clap::value_parser!(u64).range(0..=100_000_000))]
    pub preload: u64,

    /// A server: tcp://HOST:PORT (also http+tcp://, http://), or over TLS ssl://HOST:PORT
    /// (also http+ssl://, https://); repeat it to spread the threads.
    #[arg(long = "server.endpoint", value_name = "URL", action = ArgAction::Append)]
    pub endpoints: Vec<String>,

    /// ssl:// endpoints: trust the CA certificates of this PEM file (default: the system's
    /// trusted roots).
    #[arg(long = "ssl.cafile", value_name = "FILE")]
    pub ssl_cafile: Option<std::path::PathBuf>,

    /// The user name for HTTP Basic authentication.
    #[arg(long = "server.username", value_name = "NAME", default_value = "root")]
    pub username: String,

    /// The password (default: $QUINCE_ROOT_PASSWORD, else $ARANGO_ROOT_PASSWORD, else empty).
    #[arg(long = "server.password", value_name = "PASSWORD")]
    pub password: Option<String>,

    /// The database every URL is rewritten to (`/_db/<name>/…`).
    #[arg(
        long = "server.database",
        value_name = "NAME",
        default_value = "_system"
    )]
    pub database: String,

    /// Seconds to wait for a TCP connection.
    #[arg(
        long = "server.connection-timeout",
        value_name = "SECONDS",
        default_value_t = 5.0
    )]
    pub connection_timeout: f64,

    /// Seconds one read or write may block before the request counts as failed.
    #[arg(
        long = "server.request-timeout",
        value_name = "SECONDS",
        default_value_t = 1200.0
    )]
    pub request_timeout: f64,
}

/// How batches travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchMode {
    /// Multipart `POST /_api/batch`, as arangob.
    Multipart,
    /// One array body to `POST /_api/document`.
    Array,
}

/// The checked options of one run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Threads.
    pub concurrency: u64,
    /// Operations (ignored when `duration` is set).
    pub requests: u64,
    /// Time bound of the run.
    pub duration: Option<Duration>,
    /// Case-specific size.
    pub complexity: u64,
    /// Base collection name.
    pub collection: String,
    /// The workload.
    pub case: TestCase,
    /// Operations per request (0 = one request each).
    pub batch_size: u64,
    /// How batches travel.
    pub batch_mode: BatchMode,
    /// `x-arango-async: true` on benchmark requests.
    pub async_requests: bool,
    /// Keep-alive.
    pub keep_alive: bool,
    /// 10 s start delay.
    pub delay: bool,
    /// Progress bar.
    pub progress: bool,
    /// No status lines.
    pub quiet: bool,
    /// Where the JSON report goes.
    pub json_report_file: Option<PathBuf>,
    /// Open-loop rate (requests per second in total), if any.
    pub rate: Option<f64>,
    /// Collection properties.
    pub replication_factor: u64,
    /// Collection properties.
    pub number_of_shards: u64,
    /// Collection properties.
    pub wait_for_sync: bool,
    /// Whether setup drops and creates collections.
    pub create_collection: bool,
    /// Whether setup creates the database.
    pub create_database: bool,
    /// docs1m: share of reads.
    pub read_percent: u64,
    /// docs1m: preloaded documents.
    pub preload: u64,
    /// The servers.
    pub endpoints: Vec<Endpoint>,
    /// The CA file trusted for ssl:// endpoints (none: the system's roots).
    pub ssl_cafile: Option<std::path::PathBuf>,
    /// Credentials.
    pub username: String,
    /// Credentials.
    pub password: String,
    /// Database.
    pub database: String,
    /// Connect timeout.
    pub connection_timeout: Duration,
    /// Per read/write timeout.
    pub request_timeout: Duration,
}

impl BenchArgs {
    /// Checks the options and resolves the endpoints. The message says what is wrong.
    pub fn into_settings(self) -> Result<Settings, String> {
        let case = TestCase::from_name(&self.test_case)?;
        let batch_mode = match self.batch_mode.as_str() {
            "multipart" => BatchMode::Multipart,
            "array" => BatchMode::Array,
            other => {
                return Err(format!(
                    "unknown --batch-mode '{other}' (use multipart or array)"
                ))
            }
        };
        if batch_mode == BatchMode::Array
            && self.batch_size > 0
            && !case.inserts_only(self.read_percent)
        {
            return Err(format!(
                "--batch-mode array sends insert arrays; test case '{}' does more than insert",
                case.name()
            ));
        }
        if case.chained() && (self.batch_size > 0 || self.r#async) {
            return Err(format!(
                "test case '{}' chains requests (each step of its transaction needs the reply \
                 to the one before): it cannot be batched or sent with --async",
                case.name()
            ));
        }
        if !(self.rate >= 0.0 && self.rate.is_finite() && self.rate <= 10_000_000.0) {
            return Err("--rate must be between 0 and 10000000 requests per second".into());
        }
        let seconds = |value: f64, name: &str| {
            if value > 0.0 && value <= 86_400.0 {
                Ok(Duration::from_secs_f64(value))
            } else {
                Err(format!("{name} must be between 0 and 86400 seconds"))
            }
        };
        let connection_timeout = seconds(self.connection_timeout, "--server.connection-timeout")?;
        let request_timeout = seconds(self.request_timeout, "--server.request-timeout")?;
        if self.collection.is_empty() || self.collection.len() > 200 {
            return Err("--collection must be a name of 1 to 200 characters".into());
        }
        let texts = if self.endpoints.is_empty() {
            vec!["tcp://127.0.0.1:8529".to_string()]
        } else {
            self.endpoints
        };
        if texts.len() > 1024 {
            return Err("at most 1024 --server.endpoint values".into());
        }
        let endpoints = texts
            .iter()
            .map(|text| Endpoint::parse(text))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(path) = &self.json_report_file {
            if path.exists() {
                return Err(format!(
                    "--json-report-file {} already exists",
                    path.display()
                ));
            }
        }
        let password = quince_client::password(self.password).unwrap_or_default();
        Ok(Settings {
            concurrency: self.concurrency,
            requests: self.requests,
            duration: (self.duration > 0).then(|| Duration::from_secs(self.duration)),
            complexity: self.complexity.unwrap_or(case.default_complexity()),
            collection: self.collection,
            case,
            batch_size: self.batch_size,
            batch_mode,
            async_requests: self.r#async,
            keep_alive: self.keep_alive,
            delay: self.delay,
            progress: self.progress,
            quiet: self.quiet,
            json_report_file: self.json_report_file,
            rate: (self.rate > 0.0).then_some(self.rate),
            replication_factor: self.replication_factor,
            number_of_shards: self.number_of_shards,
            wait_for_sync: self.wait_for_sync,
            create_collection: self.create_collection,
            create_database: self.create_database,
            read_percent: self.read_percent,
            preload: self.preload,
            endpoints,
            ssl_cafile: self.ssl_cafile,
            username: self.username,
            password,
            database: self.database,
            connection_timeout,
            request_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Settings, String> {
        let mut full = vec!["quince bench"];
        full.extend_from_slice(args);
        BenchArgs::try_parse_from(full)
            .map_err(|e| e.to_string())?
            .into_settings()
    }

    #[test]
    fn defaults_are_arangobs() {
        let s = parse(&[]).unwrap();
        assert_eq!(s.concurrency, 1);
        assert_eq!(s.requests, 1000);
        assert_eq!(s.complexity, 1);
        assert_eq!(s.collection, "ArangoBenchmark");
        assert_eq!(s.case.name(), "version");
        assert_eq!(s.batch_size, 0);
        assert!(!s.async_requests && s.keep_alive && s.progress && !s.quiet && !s.delay);
        assert_eq!(s.duration, None);
        assert_eq!(s.rate, None);
        assert_eq!(s.database, "_system");
        assert_eq!(s.username, "root");
        assert_eq!(s.endpoints.len(), 1);
        assert_eq!(s.endpoints[0].host_port, "127.0.0.1:8529");
    }

    #[test]
    fn both_forms_booleans_aliases_and_repeated_endpoints() {
        let s = parse(&[
            "--threads=8",
            "--async",
            "true",
            "--keep-alive=no",
            "--quiet",
            "--test-case",
            "crud",
            "--complexity=10",
            "--server.endpoint",
            "tcp://127.0.0.1:1",
            "--server.endpoint=http+tcp://localhost:2",
        ])
        .unwrap();
        assert_eq!(s.concurrency, 8);
        assert!(s.async_requests && !s.keep_alive && s.quiet);
        assert_eq!(s.case.name(), "crud");
        assert_eq!(s.complexity, 10);
        assert_eq!(s.endpoints.len(), 2);
        assert_eq!(parse(&["--test-case", "docs1m"]).unwrap().complexity, 20);
        let tls = parse(&[
            "--server.endpoint",
            "ssl://127.0.0.1:1",
            "--ssl.cafile",
            "/ca.pem",
        ])
        .unwrap();
        assert!(tls.endpoints[0].tls);
        assert_eq!(
            tls.ssl_cafile.as_deref(),
            Some(std::path::Path::new("/ca.pem"))
        );
    }

    #[test]
    fn bad_options_say_what_is_wrong() {
        assert!(parse(&["--test-case", "nope"])
            .unwrap_err()
            .contains("nope"));
        assert!(parse(&["--concurrency", "0"]).is_err());
        assert!(parse(&["--async", "maybe"]).unwrap_err().contains("maybe"));
        assert!(parse(&["--server.endpoint", "unix:///x"])
            .unwrap_err()
            .contains("unix"));
        assert!(parse(&[
            "--batch-mode",
            "array",
            "--batch-size",
            "4",
            "--test-case",
            "crud"
        ])
        .unwrap_err()
        .contains("crud"));
        assert!(parse(&[
            "--batch-mode",
            "array",
            "--batch-size",
            "4",
            "--test-case",
            "document"
        ])
        .is_ok());
        for chained in ["multi-collection", "stream-trx"] {
            assert!(parse(&["--test-case", chained, "--batch-size", "2"])
                .unwrap_err()
                .contains("chains requests"));
            assert!(parse(&["--test-case", chained, "--async", "true"])
                .unwrap_err()
                .contains(chained));
        }
        assert!(parse(&["--rate", "-1"]).is_err());
        assert!(parse(&["--no-such-option", "1"]).is_err());
    }
}
