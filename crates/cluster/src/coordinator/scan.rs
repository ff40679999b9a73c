//! Reading a shard through its leader's cursor API: the queries a coordinator sends for a scan
//! (with the query's filter, projection and limit: [`ScanHints`]) and for the candidates of an
//! index lookup, and the loop that reads a cursor to its end.
//!
//! What it is: [`shard_query`] and [`lookup_query`] (the query text and bind parameters) and
//! [`run`] (`POST /_api/cursor`, then `PUT /_api/cursor/<id>` while `hasMore`, through the
//! router, so a stream transaction's requests carry its id), handing each document over and
//! adding up the shard's `scannedFull` and `filtered`.
//!
//! What it is not: the choice of what to push (the AQL planner's, `quince_aql::plan::
//! distribute`), nor the final word: the caller still applies every filter and limit, and an
//! index lookup's hits are selected and ordered by the coordinator (`collection.rs`) from the
//! candidates a shard sends, so a shard's query only has to keep every document that matches.
//!
//! Invariants: the shard's collection is bound as `@@shardCollection`, the scan's own
//! parameters keep their names (`q<N>`), and the coordinator's are `shard*`, so none clash; a
//! document is handed over as the shard's cursor returns it (`_id` in the shard's name: the
//! caller renames it).

use std::ops::Bound;

use quince_client::request::{encode_segment, Method};
use quince_errors::{ArangoError, Result, INTERNAL};
use quince_ops::{FieldPath, IndexLookup, ScanCounts, ScanHints, SCAN_VARIABLE};
use serde_json::{json, Map, Value};

use super::shard_requests::{error_from_body, Router, ShardCall};

/// Documents per cursor batch.
const BATCH_SIZE: u64 = 1000;

/// What reading one shard gave.
pub struct ShardScan {
    /// The shard's statistics.
    pub counts: ScanCounts,
    /// True when `visit` asked to stop.
    pub stopped: bool,
}

/// The query that reads `shard` as `hints` allow, and its bind parameters.
pub fn shard_query(shard: &str, hints: &ScanHints) -> (String, Map<String, Value>) {
    let v = SCAN_VARIABLE;
    let mut binds = Map::new();
    binds.insert("@shardCollection".into(), json!(shard));
    let mut query = format!("FOR {v} IN @@shardCollection");
    binds.extend(hints.bind_vars.clone());
    if let Some(filter) = &hints.filter {
        query.push_str(&format!(" FILTER {filter}"));
    }
    if let Some(limit) = hints.limit {
        if !hints.sort.is_empty() {
            let keys: Vec<String> = hints
                .sort
                .iter()
                .map(|(key, ascending)| {
                    format!("{key} {}", if *ascending { "ASC" } else { "DESC" })
                })
                .collect();
            query.push_str(&format!(" SORT {}", keys.join(", ")));
        }
        query.push_str(" LIMIT @shardLimit");
        binds.insert("shardLimit".into(), json!(limit));
    }
    match &hints.attributes {
        Some(names) => {
            query.push_str(&format!(" RETURN KEEP({v}, @shardAttributes)"));
            binds.insert("shardAttributes".into(), json!(names));
        }
        None => query.push_str(&format!(" RETURN {v}")),
    }
    (query, binds)
}

/// The query that finds, on a shard, every document `lookup` could hit in the edge index or
/// in a persistent index over `fields` (a superset where the condition cannot be exact: an
/// array field adds no condition), whole or with only `attributes`, and its bind parameters;
/// `None` for the other lookups (geo, fulltext, ttl), which read the shard whole.
pub fn lookup_query(
    shard: &str,
    lookup: &IndexLookup,
    fields: Option<&[String]>,
    attributes: Option<&[String]>,
) -> Option<(String, Map<String, Value>)> {
    let v = SCAN_VARIABLE;
    let mut binds = Map::new();
    binds.insert("@shardCollection".into(), json!(shard));
    let mut conditions = Vec::new();
    let bind = |value: Value, binds: &mut Map<String, Value>| {
        let name = format!("q{}", binds.len() - 1);
        binds.insert(name.clone(), value);
        format!("@{name}")
    };
    match lookup {
        IndexLookup::Edge { direction, vertex } => {
            let end = direction.attribute();
            let vertex = bind(json!(vertex), &mut binds);
            conditions.push(format!("{v}.{end} == {vertex}"));
        }
        IndexLookup::Sorted {
            prefix, low, high, ..
        } => {
            let fields = fields?;
            let path = |n: usize| -> Option<String> {
                let field = FieldPath::parse(fields.get(n)?).ok()?;
                let mut text = v.to_string();
                for name in field.attributes()? {
                    let quoted = name.replace('\\', "\\\\").replace('`', "\\`");
                    text.push_str(&format!(".`{quoted}`"));
                }
                Some(text)
            };
            for (n, value) in prefix.iter().enumerate() {
                let Some(path) = path(n) else { continue };
                let value = bind(value.clone(), &mut binds);
                conditions.push(format!("{path} == {value}"));
            }
            if let Some(path) = path(prefix.len()) {
                for (bound, op) in [(low, ">"), (high, "<")] {
                    let (value, op) = match bound {
                        Bound::Included(value) => (value, format!("{op}=")),
                        Bound::Excluded(value) => (value, op.to_string()),
                        Bound::Unbounded => continue,
                    };
                    let value = bind(value.clone(), &mut binds);
                    conditions.push(format!("{path} {op} {value}"));
                }
            }
        }
        _ => return None,
    }
    let mut query = format!("FOR {v} IN @@shardCollection");
    if !conditions.is_empty() {
        query.push_str(" FILTER ");
        query.push_str(&conditions.join(" AND "));
    }
    match attributes {
        Some(names) => {
            query.push_str(&format!(" RETURN KEEP({v}, @shardAttributes)"));
            binds.insert("shardAttributes".into(), json!(names));
        }
        None => query.push_str(&format!(" RETURN {v}")),
    }
    Some((query, binds))
}

/// Runs `query` on `shard`'s leader and hands each document to `visit` until it returns
/// false (see the module documentation).
pub fn run(
    router: &Router,
    db: &str,
    shard: &str,
    query: &str,
    bind_vars: Map<String, Value>,
    visit: &mut dyn FnMut(Value) -> bool,
) -> Result<ShardScan> {
    let body = json!({"query": query, "bindVars": bind_vars, "batchSize": BATCH_SIZE});
    let mut call = ShardCall {
        db: db.to_string(),
        shard: shard.to_string(),
        method: Method::Post,
        path: "/_api/cursor".to_string(),
        body: Some(serde_json::to_vec(&body).expect("a query serializes")),
        read_only: true,
    };
    let mut counts = ScanCounts::default();
    loop {
        let reply = router.to_leader(&call)?;
        if reply.status >= 400 {
            return Err(error_from_body(reply.status, &reply.body));
        }
        let mut batch: Value = serde_json::from_slice(&reply.body).map_err(|e| {
            ArangoError::with_message(INTERNAL, format!("a DB server's reply: {e}"))
        })?;
        if let Some(stats) = batch.pointer("/extra/stats") {
            let number = |name: &str| stats.get(name).and_then(Value::as_u64).unwrap_or(0);
            counts.scanned = number("scannedFull") + number("scannedIndex");
            counts.filtered = number("filtered");
        }
        let documents = match batch.get_mut("result").map(Value::take) {
            Some(Value::Array(documents)) => documents,
            _ => Vec::new(),
        };
        for document in documents {
            if !visit(document) {
                return Ok(ShardScan {
                    counts,
                    stopped: true,
                });
            }
        }
        let more = batch.get("hasMore").and_then(Value::as_bool) == Some(true);
        match (more, batch.get("id").and_then(Value::as_str)) {
            (true, Some(id)) => {
                call.method = Method::Put;
                call.path = format!("/_api/cursor/{}", encode_segment(id));
                call.body = None;
            }
            _ => break,
        }
    }
    Ok(ShardScan {
        counts,
        stopped: false,
    })
}
