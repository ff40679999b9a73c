//! [`ScanHints`]: what the caller of a scan will do with the documents, for an engine that
//! can do it where the documents are (a cluster coordinator sends it to the shards), and
//! [`ScanCounts`]: what such an engine reports of the work done there.
//!
//! What it is: plain data. The filter and the sort keys are AQL text over one variable,
//! [`SCAN_VARIABLE`], with their bind parameters, so that an engine that forwards them runs
//! exactly what the query's executor evaluates.
//!
//! What it is not: a contract to apply the hints. An engine may ignore any part of them (the
//! default [`crate::CollectionOps::scan_hinted`] ignores all of them); the caller still
//! applies the filter, the projection, the sort and the limit to what it is handed.
//!
//! Invariants: a document the filter would keep is never left out unless the limit allows
//! it; a document handed with only [`ScanHints::attributes`] holds each of them that the
//! stored document holds, with the same value (`_id` in the collection's own name); at most
//! [`ScanHints::limit`] documents are needed of those the filter keeps (the first ones in
//! [`ScanHints::sort`]'s order when it has keys), so an engine may stop after that many.

use serde_json::{Map, Value};

/// The name the loop variable has in the hints' AQL text.
pub const SCAN_VARIABLE: &str = "doc";

/// What the caller of a scan will do with the documents (see the module documentation).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScanHints {
    /// An AQL condition over [`SCAN_VARIABLE`]: only documents it keeps are needed. It reads
    /// the variable only as `doc.name` (never `_id`, which names the collection differently
    /// where the engine sends it), calls only deterministic functions, and has no subquery.
    pub filter: Option<String>,
    /// AQL sort keys over [`SCAN_VARIABLE`] (text, ascending), of the same forms as the
    /// filter: with a limit, the documents needed are the first ones in this order (ties in
    /// any order). Empty: any order.
    pub sort: Vec<(String, bool)>,
    /// The values of the bind parameters (`@name`) of the filter and the sort keys.
    pub bind_vars: Map<String, Value>,
    /// Only these top-level attributes of each document are read.
    pub attributes: Option<Vec<String>>,
    /// Only this many documents (of those the filter keeps) are read.
    pub limit: Option<u64>,
}

/// The work an engine did where the documents are, for the query's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanCounts {
    /// Documents read there.
    pub scanned: u64,
    /// Documents the filter left out there.
    pub filtered: u64,
}
