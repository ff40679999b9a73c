//! The query results cache (`/_api/query-cache/...`, the cursor API's `cache` attribute).
//!
//! What it is: [`ResultsCache`]: results of deterministic, read-only queries kept per
//! (database, query text, bind parameters), each with the revisions of the collections it
//! read. A lookup whose collections moved on (any write changes a collection's revision)
//! drops the entry instead of answering it, so an entry is never served after a write to its
//! collections. Modes: `off`, `on` (every cacheable query unless it says `cache: false`),
//! `demand` (only queries that say `cache: true`).
//!
//! What it is not: a cache of plans, or of queries inside transactions (the cursor API never
//! asks it for those).
//!
//! Invariants: at most `maxResults` entries per database, each at most `maxEntrySize` bytes
//! and `maxResultsSize` bytes in all per database; the oldest entry goes first.

use std::collections::VecDeque;
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;
use quince_errors::Result;
use serde_json::{json, Map, Value};

use super::cursors::Text;

/// The cache's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Nothing is cached.
    Off,
    /// Every cacheable query, unless it opts out.
    On,
    /// Only queries that opt in.
    Demand,
}

impl CacheMode {
    fn as_str(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::On => "on",
            CacheMode::Demand => "demand",
        }
    }
}

/// `/_api/query-cache/properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheProperties {
    /// The mode.
    pub mode: CacheMode,
    /// Entries per database.
    pub max_results: usize,
    /// Bytes per database.
    pub max_results_size: u64,
    /// Bytes per entry.
    pub max_entry_size: u64,
    /// Cache queries over system collections too.
    pub include_system: bool,
}

impl Default for CacheProperties {
    fn default() -> Self {
        CacheProperties {
            mode: CacheMode::Off,
            max_results: 128,
            max_results_size: 256 << 20,
            max_entry_size: 16 << 20,
            include_system: false,
        }
    }
}

impl CacheProperties {
    /// The JSON of `GET /_api/query-cache/properties`.
    pub fn to_json(&self) -> Value {
        json!({
            "mode": self.mode.as_str(),
            "maxResults": self.max_results,
            "maxResultsSize": self.max_results_size,
            "maxEntrySize": self.max_entry_size,
            "includeSystem": self.include_system,
        })
    }
}

/// One cached result.
struct Entry {
    database: String,
    query: String,
    bind_vars: Value,
    /// Each collection read, with its revision when the result was made.
    sources: Vec<(String, String)>,
    results: Vec<Text>,
    size: u64,
    hits: u64,
    run_time: f64,
    started: SystemTime,
}

/// The results cache of a server.
#[derive(Default)]
pub struct ResultsCache {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    properties: CacheProperties,
    entries: VecDeque<Entry>,
}

impl ResultsCache {
    /// The properties.
    pub fn properties(&self) -> CacheProperties {
        self.state.lock().properties.clone()
    }

    /// Applies a `PUT` body (400 for a bad mode or type).
    pub fn update_properties(&self, body: &Map<String, Value>) -> Result<CacheProperties> {
        let mut state = self.state.lock();
        let mut next = state.properties.clone();
        for (name, value) in body {
            let bad = || crate::query::bad_request(&format!("invalid value for '{name}'"));
            match name.as_str() {
                "mode" => {
                    next.mode = match value.as_str() {
                        Some("off") => CacheMode::Off,
                        Some("on") => CacheMode::On,
                        Some("demand") => CacheMode::Demand,
                        _ => return Err(bad()),
                    }
                }
                "maxResults" => next.max_results = value.as_u64().ok_or_else(bad)? as usize,
                "maxResultsSize" => next.max_results_size = value.as_u64().ok_or_else(bad)?,
                "maxEntrySize" => next.max_entry_size = value.as_u64().ok_or_else(bad)?,
                "includeSystem" => next.include_system = value.as_bool().ok_or_else(bad)?,
                _ => {}
            }
        }
        if next.mode == CacheMode::Off {
            state.entries.clear();
        }
        state.properties = next;
        Ok(state.properties.clone())
    }

    /// Whether a query asking `cache` (the cursor attribute, if given) should use the cache.
    pub fn wanted(&self, cache: Option<bool>) -> bool {
        match self.state.lock().properties.mode {
            CacheMode::Off => false,
            CacheMode::On => cache != Some(false),
            CacheMode::Demand => cache == Some(true),
        }
    }

    /// The cached results of a query, if its collections did not change since.
    /// `revision` gives a collection's current revision (None when it is gone).
    pub fn lookup(
        &self,
        database: &str,
        query: &str,
        bind_vars: &Value,
        revision: &dyn Fn(&str) -> Option<String>,
    ) -> Option<Vec<Text>> {
        let mut state = self.state.lock();
        let index = state.entries.iter().position(|e| {
            e.database == database && e.query == query && &e.bind_vars == bind_vars
        })?;
        let fresh = state.entries[index]
            .sources
            .iter()
            .all(|(name, rev)| revision(name).as_deref() == Some(rev.as_str()));
        if !fresh {
            state.entries.remove(index);
            return None;
        }
        let entry = &mut state.entries[index];
        entry.hits += 1;
        Some(entry.results.clone())
    }

    /// Keeps a result (dropped when too large, or when a source is a system collection and
    /// system collections are not cached).
    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &self,
        database: &str,
        query: &str,
        bind_vars: Value,
        sources: Vec<(String, String)>,
        results: &[Text],
        run_time: f64,
        started: Instant,
    ) {
        let mut state = self.state.lock();
        let properties = state.properties.clone();
        if properties.mode == CacheMode::Off {
            return;
        }
        if !properties.include_system && sources.iter().any(|(name, _)| name.starts_with('_')) {
            return;
        }
        let size: u64 = results.iter().map(|text| text.len() as u64).sum();
        if size > properties.max_entry_size {
            return;
        }
        state
            .entries
            .retain(|e| !(e.database == database && e.query == query && e.bind_vars == bind_vars));
        let started = SystemTime::now() - started.elapsed();
        state.entries.push_back(Entry {
            database: database.to_owned(),
            query: query.to_owned(),
            bind_vars,
            sources,
            results: results.to_vec(),
            size,
            hits: 0,
            run_time,
            started,
        });
        loop {
            let (count, bytes) = state
                .entries
                .iter()
                .filter(|e| e.database == database)
                .fold((0usize, 0u64), |(n, b), e| (n + 1, b + e.size));
            if count <= properties.max_results && bytes <= properties.max_results_size {
                break;
            }
            let Some(oldest) = state.entries.iter().position(|e| e.database == database) else {
                break;
            };
            state.entries.remove(oldest);
        }
    }

    /// The entries of `database` (`GET /_api/query-cache/entries`).
    pub fn entries(&self, database: &str) -> Vec<Value> {
        let state = self.state.lock();
        state
            .entries
            .iter()
            .filter(|e| e.database == database)
            .map(|e| {
                json!({
                    "hash": format!("{:016x}", fingerprint(&e.query, &e.bind_vars)),
                    "query": e.query,
                    "bindVars": e.bind_vars,
                    "size": e.size,
                    "results": e.results.len(),
                    "hits": e.hits,
                    "runTime": e.run_time,
                    "started": super::registry::iso8601(e.started),
                    "dataSources": e.sources.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
                })
            })
            .collect()
    }

    /// Empties the cache of `database`.
    pub fn clear(&self, database: &str) {
        self.state.lock().entries.retain(|e| e.database != database);
    }
}

/// A stable 64-bit fingerprint of a query and its bind parameters (FNV-1a).
fn fingerprint(query: &str, bind_vars: &Value) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in query.bytes().chain(bind_vars.to_string().into_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
