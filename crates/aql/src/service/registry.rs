//! The running queries and the slow-query log (`/_api/query/current`, `/_api/query/slow`,
//! `/_api/query/properties`, `DELETE /_api/query/{id}`).
//!
//! What it is: [`Registry`]: each query registers on start (its id, database, user, text,
//! bind parameters, start time and [`Control`]) and leaves on end; a query that ran longer
//! than the threshold is kept in the slow log (at most `maxSlowQueries`, newest last). It also
//! counts, for metrics ([`QueryCounters`]), the queries finished and running, their total run
//! time and the slow ones, whether or not tracking is enabled. Listing, clearing and killing
//! take a [`Scope`]: one database or all, one user's queries or every user's.
//!
//! What it is not: execution, or the decision of who may see what (the api crate makes the
//! scope from the caller). Killing only sets the query's kill switch; the query stops at its
//! next check.
//!
//! Invariants: ids are unique for the server's life; a query is listed as current from
//! registration to its guard's drop; the slow log never holds more than `max_slow_queries`;
//! the counters only grow, except `running`, which is the registrations not yet dropped; a
//! listing shows, a clearing removes and a kill reaches only entries of its scope (a kill of
//! another user's query in the scope's database is [`Kill::Forbidden`], not a kill).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use parking_lot::Mutex;
use serde_json::{json, Map, Value};

use crate::exec::Control;

/// `/_api/query/properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackingProperties {
    /// Track queries at all.
    pub enabled: bool,
    /// Keep slow queries.
    pub track_slow_queries: bool,
    /// Show bind parameters.
    pub track_bind_vars: bool,
    /// The slow log's length.
    pub max_slow_queries: usize,
    /// Seconds after which a query is slow.
    pub slow_query_threshold: f64,
    /// The same for streaming queries.
    pub slow_streaming_query_threshold: f64,
    /// Query texts are cut to this length in listings.
    pub max_query_string_length: usize,
}

impl Default for TrackingProperties {
    fn default() -> Self {
        TrackingProperties {
            enabled: true,
            track_slow_queries: true,
            track_bind_vars: true,
            max_slow_queries: 64,
            slow_query_threshold: 10.0,
            slow_streaming_query_threshold: 10.0,
            max_query_string_length: 4096,
        }
    }
}

impl TrackingProperties {
    /// The JSON of `GET /_api/query/properties`.
    pub fn to_json(&self) -> Value {
        json!({
            "enabled": self.enabled,
            "trackSlowQueries": self.track_slow_queries,
            "trackBindVars": self.track_bind_vars,
            "maxSlowQueries": self.max_slow_queries,
            "slowQueryThreshold": self.slow_query_threshold,
            "slowStreamingQueryThreshold": self.slow_streaming_query_threshold,
            "maxQueryStringLength": self.max_query_string_length,
        })
    }

    /// Applies a `PUT` body (unknown attributes are ignored, wrong types are 400).
    pub fn update(&mut self, body: &Map<String, Value>) -> quince_errors::Result<()> {
        let mut next = self.clone();
        for (name, value) in body {
            let bad = || crate::query::bad_request(&format!("invalid value for '{name}'"));
            match name.as_str() {
                "enabled" => next.enabled = value.as_bool().ok_or_else(bad)?,
                "trackSlowQueries" => next.track_slow_queries = value.as_bool().ok_or_else(bad)?,
                "trackBindVars" => next.track_bind_vars = value.as_bool().ok_or_else(bad)?,
                "maxSlowQueries" => {
                    next.max_slow_queries = value.as_u64().ok_or_else(bad)? as usize
                }
                "slowQueryThreshold" => {
                    next.slow_query_threshold = value.as_f64().ok_or_else(bad)?
                }
                "slowStreamingQueryThreshold" => {
                    next.slow_streaming_query_threshold = value.as_f64().ok_or_else(bad)?
                }
                "maxQueryStringLength" => {
                    next.max_query_string_length = value.as_u64().ok_or_else(bad)? as usize
                }
                _ => {}
            }
        }
        *self = next;
        Ok(())
    }
}

/// A query as the listings show it.
#[derive(Clone, Debug)]
struct Entry {
    database: String,
    user: String,
    query: String,
    bind_vars: Value,
    started: SystemTime,
    started_at: Instant,
    stream: bool,
    /// The running query's control; `None` once it finished (a slow-log entry keeps only its
    /// figures, so a finished query's memory account is not kept alive by the log).
    control: Option<Arc<Control>>,
    /// The peak of the query's memory account, once it finished.
    peak_memory: u64,
    run_time: Option<f64>,
}

/// The bounds of the query run time histogram, in seconds: ArangoDB's
/// (`arangodb_aql_query_time`), doubling from 50/2^19 s to 50 s.
pub const QUERY_TIME_BOUNDS: [f64; 20] = [
    9.5367431640625e-05,
    0.00019073486328125,
    0.0003814697265625,
    0.000762939453125,
    0.00152587890625,
    0.0030517578125,
    0.006103515625,
    0.01220703125,
    0.0244140625,
    0.048828125,
    0.09765625,
    0.1953125,
    0.390625,
    0.78125,
    1.5625,
    3.125,
    6.25,
    12.5,
    25.0,
    50.0,
];

/// Running queries and the slow log.
#[derive(Default)]
pub struct Registry {
    next_id: AtomicU64,
    state: Mutex<State>,
    /// Registrations dropped so far.
    finished: AtomicU64,
    /// Registrations not yet dropped.
    running: AtomicU64,
    /// The summed run time of finished queries, in microseconds.
    run_time_micros: AtomicU64,
    /// Finished queries that ran at least their slow threshold.
    slow_finished: AtomicU64,
    /// Finished queries by run time (bounds [`QUERY_TIME_BOUNDS`], then `+Inf`).
    run_times: [AtomicU64; QUERY_TIME_BOUNDS.len() + 1],
}

/// The query counters of metrics (`arangodb_aql_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCounters {
    /// Queries finished.
    pub finished: u64,
    /// Queries running now.
    pub running: u64,
    /// The summed run time of finished queries, in microseconds.
    pub run_time_micros: u64,
    /// Finished queries that were slow.
    pub slow: u64,
    /// Finished queries by run time (bounds [`QUERY_TIME_BOUNDS`], then `+Inf`; not
    /// cumulative).
    pub run_times: [u64; QUERY_TIME_BOUNDS.len() + 1],
    /// Bytes the running queries (and the results their cursors keep) hold now.
    pub memory_used: u64,
    /// `--query.global-memory-limit` (0: none).
    pub memory_limit: u64,
    /// Queries stopped by their own memory limit.
    pub memory_refused_own: u64,
    /// Queries stopped by the global memory limit.
    pub memory_refused_global: u64,
}

#[derive(Default)]
struct State {
    properties: TrackingProperties,
    running: BTreeMap<u64, Entry>,
    slow: VecDeque<(u64, Entry)>,
}

/// A registered query: dropping it ends its registration.
pub struct Registration {
    registry: Arc<Registry>,
    id: u64,
    started_at: Instant,
    stream: bool,
}

impl Registration {
    /// The query's id.
    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.registry.finish(
            self.id,
            self.started_at.elapsed().as_secs_f64(),
            self.stream,
        );
    }
}

impl Registry {
    /// Registers a starting query.
    pub fn register(
        self: &Arc<Self>,
        database: &str,
        user: &str,
        query: &str,
        bind_vars: &Map<String, Value>,
        stream: bool,
        control: Arc<Control>,
    ) -> Registration {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        self.running.fetch_add(1, Ordering::Relaxed);
        let mut state = self.state.lock();
        if state.properties.enabled {
            let bind_vars = if state.properties.track_bind_vars {
                Value::Object(bind_vars.clone())
            } else {
                json!({})
            };
            let limit = state.properties.max_query_string_length;
            state.running.insert(
                id,
                Entry {
                    database: database.to_owned(),
                    user: user.to_owned(),
                    query: query.chars().take(limit).collect(),
                    bind_vars,
                    started: SystemTime::now(),
                    started_at: Instant::now(),
                    stream,
                    control: Some(control),
                    peak_memory: 0,
                    run_time: None,
                },
            );
        }
        Registration {
            registry: Arc::clone(self),
            id,
            started_at: Instant::now(),
            stream,
        }
    }

    /// The counters of metrics (the memory figures are the query service's:
    /// [`super::QueryService::counters`]).
    pub fn counters(&self) -> QueryCounters {
        QueryCounters {
            finished: self.finished.load(Ordering::Relaxed),
            running: self.running.load(Ordering::Relaxed),
            run_time_micros: self.run_time_micros.load(Ordering::Relaxed),
            slow: self.slow_finished.load(Ordering::Relaxed),
            run_times: std::array::from_fn(|i| self.run_times[i].load(Ordering::Relaxed)),
            ..QueryCounters::default()
        }
    }

    fn finish(&self, id: u64, run_time: f64, stream: bool) {
        self.running.fetch_sub(1, Ordering::Relaxed);
        self.finished.fetch_add(1, Ordering::Relaxed);
        let bucket = QUERY_TIME_BOUNDS
            .iter()
            .position(|bound| run_time <= *bound)
            .unwrap_or(QUERY_TIME_BOUNDS.len());
        self.run_times[bucket].fetch_add(1, Ordering::Relaxed);
        self.run_time_micros
            .fetch_add((run_time * 1e6) as u64, Ordering::Relaxed);
        let mut state = self.state.lock();
        let threshold = if stream {
            state.properties.slow_streaming_query_threshold
        } else {
            state.properties.slow_query_threshold
        };
        if run_time >= threshold {
            self.slow_finished.fetch_add(1, Ordering::Relaxed);
        }
        let Some(mut entry) = state.running.remove(&id) else {
            return;
        };
        if let Some(control) = entry.control.take() {
            entry.peak_memory = control.memory().peak();
        }
        if state.properties.track_slow_queries && run_time >= threshold {
            entry.run_time = Some(run_time);
            state.slow.push_back((id, entry));
            while state.slow.len() > state.properties.max_slow_queries {
                state.slow.pop_front();
            }
        }
    }

    /// The properties.
    pub fn properties(&self) -> TrackingProperties {
        self.state.lock().properties.clone()
    }

    /// Changes the properties.
    pub fn update_properties(
        &self,
        body: &Map<String, Value>,
    ) -> quince_errors::Result<TrackingProperties> {
        let mut state = self.state.lock();
        state.properties.update(body)?;
        let max = state.properties.max_slow_queries;
        while state.slow.len() > max {
            state.slow.pop_front();
        }
        Ok(state.properties.clone())
    }

    /// The running queries `scope` may see.
    pub fn current(&self, scope: &Scope<'_>) -> Vec<Value> {
        let state = self.state.lock();
        state
            .running
            .iter()
            .filter(|(_, e)| scope.covers(e))
            .map(|(id, e)| render(*id, e, "executing"))
            .collect()
    }

    /// The slow queries `scope` may see.
    pub fn slow(&self, scope: &Scope<'_>) -> Vec<Value> {
        let state = self.state.lock();
        state
            .slow
            .iter()
            .filter(|(_, e)| scope.covers(e))
            .map(|(id, e)| render(*id, e, "finished"))
            .collect()
    }

    /// Removes from the slow log the entries `scope` may see (the others stay).
    pub fn clear_slow(&self, scope: &Scope<'_>) {
        self.state.lock().slow.retain(|(_, e)| !scope.covers(e));
    }

    /// Kills running query `id` of `scope`'s databases, when `scope` may see it.
    pub fn kill(&self, scope: &Scope<'_>, id: u64) -> Kill {
        let state = self.state.lock();
        match state.running.get(&id) {
            Some(entry) if scope.in_database(entry) => {
                if !scope.of_user(entry) {
                    return Kill::Forbidden;
                }
                match &entry.control {
                    Some(control) => {
                        control.kill();
                        Kill::Killed
                    }
                    None => Kill::NotFound,
                }
            }
            _ => Kill::NotFound,
        }
    }
}

/// Which queries a listing, a clearing or a kill covers: those of one database or of all,
/// and of one user or of every user.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// The database, or `None` for every database (`?all=true`).
    pub database: Option<&'a str>,
    /// The user whose queries are covered, or `None` for every user's (an administrator).
    pub user: Option<&'a str>,
}

impl Scope<'_> {
    fn in_database(&self, entry: &Entry) -> bool {
        self.database.is_none_or(|db| db == entry.database)
    }

    fn of_user(&self, entry: &Entry) -> bool {
        self.user.is_none_or(|user| user == entry.user)
    }

    fn covers(&self, entry: &Entry) -> bool {
        self.in_database(entry) && self.of_user(entry)
    }
}

/// What [`Registry::kill`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kill {
    /// The query's kill switch is set.
    Killed,
    /// No running query of that id in the scope's databases.
    NotFound,
    /// The query runs there, but belongs to a user the scope does not cover.
    Forbidden,
}

fn render(id: u64, entry: &Entry, state: &str) -> Value {
    let run_time = entry
        .run_time
        .unwrap_or_else(|| entry.started_at.elapsed().as_secs_f64());
    json!({
        "id": id.to_string(),
        "database": entry.database,
        "user": entry.user,
        "query": entry.query,
        "bindVars": entry.bind_vars,
        "started": iso8601(entry.started),
        "runTime": run_time,
        "peakMemoryUsage": entry
            .control
            .as_ref()
            .map_or(entry.peak_memory, |control| control.memory().peak()),
        "state": state,
        "stream": entry.stream,
    })
}

/// A time as ArangoDB prints it: `2026-11-25T16:05:01Z`.
pub fn iso8601(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn register(registry: &Arc<Registry>, db: &str, user: &str) -> Registration {
        let mut bind = Map::new();
        bind.insert("secret".into(), json!(user));
        registry.register(db, user, "RETURN @secret", &bind, false, Control::new(None))
    }

    fn users(list: &[Value]) -> Vec<&str> {
        list.iter().map(|q| q["user"].as_str().unwrap()).collect()
    }

    #[test]
    fn a_scope_covers_its_database_and_its_user() {
        let registry = Arc::new(Registry::default());
        let _a = register(&registry, "db", "alice");
        let _b = register(&registry, "db", "bob");
        let _c = register(&registry, "other", "alice");
        let alice = Scope {
            database: Some("db"),
            user: Some("alice"),
        };
        assert_eq!(users(&registry.current(&alice)), ["alice"]);
        let admin = Scope {
            database: Some("db"),
            user: None,
        };
        assert_eq!(users(&registry.current(&admin)), ["alice", "bob"]);
        let all = Scope {
            database: None,
            user: None,
        };
        assert_eq!(registry.current(&all).len(), 3);
    }

    #[test]
    fn a_kill_reaches_only_the_scope() {
        let registry = Arc::new(Registry::default());
        let bob = register(&registry, "db", "bob");
        let alice = Scope {
            database: Some("db"),
            user: Some("alice"),
        };
        assert_eq!(registry.kill(&alice, bob.id()), Kill::Forbidden);
        let elsewhere = Scope {
            database: Some("other"),
            user: None,
        };
        assert_eq!(registry.kill(&elsewhere, bob.id()), Kill::NotFound);
        assert_eq!(registry.kill(&alice, bob.id() + 1000), Kill::NotFound);
        let bobs = Scope {
            database: Some("db"),
            user: Some("bob"),
        };
        assert_eq!(registry.kill(&bobs, bob.id()), Kill::Killed);
        let all = Scope {
            database: None,
            user: None,
        };
        assert_eq!(registry.kill(&all, bob.id()), Kill::Killed);
    }

    #[test]
    fn clearing_the_slow_log_leaves_what_the_scope_does_not_cover() {
        let registry = Arc::new(Registry::default());
        let mut zero = Map::new();
        zero.insert("slowQueryThreshold".into(), json!(0));
        registry.update_properties(&zero).unwrap();
        drop(register(&registry, "db", "alice"));
        drop(register(&registry, "db", "bob"));
        let alice = Scope {
            database: Some("db"),
            user: Some("alice"),
        };
        assert_eq!(users(&registry.slow(&alice)), ["alice"]);
        registry.clear_slow(&alice);
        let admin = Scope {
            database: Some("db"),
            user: None,
        };
        assert_eq!(users(&registry.slow(&admin)), ["bob"]);
    }
}
