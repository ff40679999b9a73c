//! `quince import`: the bulk loader an arangoimport user expects, and the splitters it shares
//! with the server.
//!
//! What it is: [`split`] (incremental JSON Lines and JSON array splitters with bounded
//! buffers, used by the server's `POST /_api/import` and by the loader) and, with the `cli`
//! feature, the loader itself: options ([`cli::ImportArgs`]), input reading (files, stdin, gzip),
//! CSV/TSV conversion, batching, parallel HTTP requests (over quince-client's connection),
//! progress (in documents the server acknowledged) and the report (the first failed lines,
//! then the summary).
//!
//! What it is not: part of the server. The loader talks to a server only over HTTP, exactly as
//! arangoimport would, and never links the storage or database crates.
//!
//! Invariants: memory is bounded by the batch size times the number of requests in flight
//! (plus one record); every document of the input is counted exactly once in the summary.

pub mod split;

#[cfg(feature = "cli")]
pub mod batch;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "cli")]
pub mod csv;
#[cfg(feature = "cli")]
pub mod input;
#[cfg(feature = "cli")]
pub mod progress;
#[cfg(feature = "cli")]
pub mod report;

#[cfg(feature = "cli")]
pub use cli::{import_main, run, ImportArgs};
