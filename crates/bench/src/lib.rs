//! `quince bench`: an arangob/arangobench-compatible HTTP load generator, and `quince
//! bench-chart`, the SVG chart tool of the benchmark scripts under `benches/`.
//!
//! What it is: a client that speaks only HTTP to any ArangoDB-compatible server: arangob's
//! options and test cases (same URLs, keys and bodies), its closed loop with one keep-alive
//! connection per `--concurrency` (driven by at most one OS thread per core), an open-loop constant-rate mode (`--rate`)
//! measuring from intended send times, HdrHistogram percentiles merged over all threads, and
//! arangob's output lines followed by the latency table and the errors.
//!
//! What it is not: linked to the server. It never uses quince-db, -storage or -api, so it
//! measures Quince and ArangoDB the same way.
//!
//! Invariants: every size is bounded by the options ([`options`]); the hot loop allocates
//! nothing per request in the steady state beyond what a test case's body needs.

pub mod batch;
pub mod cases;
pub mod chart;
pub mod cli;
mod lane;
pub mod latency;
pub mod options;
pub mod report;
pub mod runner;
pub mod setup;

pub use chart::chart_main;
pub use cli::bench_main;
