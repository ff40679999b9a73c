//! The query service of a server: what the cursor and query endpoints call.
//!
//! What it is: [`QueryService`], which holds the running-query registry ([`registry`]), the
//! results cache ([`cache`]) and the open cursors ([`cursors`]), and runs a cursor request
//! from its parsed body ([`CursorRequest`]) to the first answer: prepare, authorize the
//! collections, answer from the cache when it may, else run the query to its end (or, with
//! `stream`, on its own thread) and hand out the first batch.
//!
//! What it is not: HTTP (the api crate parses requests, checks callers and renders these
//! bodies) or execution (`crate::query`).
//!
//! Invariants: every query is registered while it runs, so it can be listed and killed; a
//! query runs with a memory account in the server's pool ([`QueryService::memory`]), which
//! holds the results it keeps for its cursor too, until they are handed out; the cache is
//! asked only outside transactions, for read-only deterministic queries.

pub mod cache;
pub mod cursors;
pub mod registry;

use std::collections::VecDeque;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::Instant;

use quince_errors::{ArangoError, Result};
use quince_memory::{Account, Pool};
use quince_ops::DatabaseOps;
use serde_json::{json, Map, Value};

use crate::plan::UsedCollection;
use crate::query::{bad_request, control_for, prepare, Outcome, Prepared, QueryOptions};

use cache::ResultsCache;
use cursors::{extra_json, to_text, Batches, Cursor, Cursors, Message, Text, STREAM_AHEAD_MAX};
use registry::Registry;

/// The cursor API's defaults.
pub const BATCH_SIZE_DEFAULT: usize = 1000;
/// Seconds a cursor lives after its last use, by default.
pub const TTL_DEFAULT: f64 = 30.0;

/// A parsed `POST /_api/cursor` body.
#[derive(Clone, Debug)]
pub struct CursorRequest {
    /// The query text.
    pub query: String,
    /// `bindVars`.
    pub bind_vars: Map<String, Value>,
    /// `count`.
    pub count: bool,
    /// `batchSize`.
    pub batch_size: usize,
    /// `ttl` in seconds.
    pub ttl: f64,
    /// `cache`, when given.
    pub cache: Option<bool>,
    /// `options.stream`.
    pub stream: bool,
    /// `options.allowRetry`.
    pub allow_retry: bool,
    /// `options.profile` (0, 1 or 2).
    pub profile: u8,
    /// What shapes execution.
    pub options: QueryOptions,
}

impl CursorRequest {
    /// Parses a body; `memory_limit` is the server's default (and ceiling, when non-zero).
    pub fn parse(body: &Value, memory_limit: u64) -> Result<CursorRequest> {
        let Value::Object(body) = body else {
            return Err(bad_request("the body must be a JSON object"));
        };
        let query = match body.get("query") {
            Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(ArangoError::with_message(
                    quince_errors::QUERY_EMPTY,
                    "query is empty".to_owned(),
                ))
            }
            Some(_) => return Err(bad_request("expecting 'query' to be a string")),
        };
        let bind_vars = match body.get("bindVars") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(ArangoError::with_message(
                    quince_errors::QUERY_BIND_PARAMETERS_INVALID,
                    "invalid structure of bind parameters".to_owned(),
                ))
            }
        };
        let flag = |v: Option<&Value>, name: &str| -> Result<Option<bool>> {
            match v {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Bool(b)) => Ok(Some(*b)),
                Some(_) => Err(bad_request(&format!("expecting '{name}' to be a boolean"))),
            }
        };
        let number = |v: Option<&Value>, name: &str| -> Result<Option<f64>> {
            match v {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => Ok(n.as_f64()),
                Some(_) => Err(bad_request(&format!("expecting '{name}' to be a number"))),
            }
        };
        let batch_size = match number(body.get("batchSize"), "batchSize")? {
            None => BATCH_SIZE_DEFAULT,
            Some(n) if n >= 1.0 => n as usize,
            Some(_) => return Err(bad_request("batchSize must be a positive number")),
        };
        let ttl = match number(body.get("ttl"), "ttl")? {
            Some(t) if t > 0.0 && t.is_finite() => t.min(86_400.0),
            _ => TTL_DEFAULT,
        };
        let empty = Map::new();
        let options = match body.get("options") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(o)) => o,
            Some(_) => return Err(bad_request("expecting 'options' to be an object")),
        };
        let requested_limit = number(body.get("memoryLimit"), "memoryLimit")?
            .or(number(options.get("memoryLimit"), "memoryLimit")?)
            .map(|m| m.max(0.0) as u64)
            .unwrap_or(0);
        let memory_limit = match (requested_limit, memory_limit) {
            (0, server) => server,
            (asked, 0) => asked,
            (asked, server) => asked.min(server),
        };
        let profile = match options.get("profile") {
            Some(Value::Bool(true)) => 1,
            Some(Value::Number(n)) => n.as_u64().unwrap_or(0).min(2) as u8,
            _ => 0,
        };
        Ok(CursorRequest {
            query,
            bind_vars,
            count: flag(body.get("count"), "count")?.unwrap_or(false),
            batch_size,
            ttl,
            cache: flag(body.get("cache"), "cache")?,
            stream: flag(options.get("stream"), "stream")?.unwrap_or(false),
            allow_retry: flag(options.get("allowRetry"), "allowRetry")?.unwrap_or(false),
            profile,
            options: QueryOptions {
                full_count: flag(options.get("fullCount"), "fullCount")?.unwrap_or(false),
                memory_limit,
                max_runtime: number(options.get("maxRuntime"), "maxRuntime")?
                    .unwrap_or(0.0)
                    .max(0.0),
                fail_on_warning: flag(options.get("failOnWarning"), "failOnWarning")?
                    .unwrap_or(false),
                max_warning_count: number(options.get("maxWarningCount"), "maxWarningCount")?
                    .map(|n| n.max(0.0) as u64)
                    .unwrap_or(10),
            },
        })
    }
}

/// The query service of a server.
#[derive(Default)]
pub struct QueryService {
    /// Running queries and the slow log.
    pub registry: Arc<Registry>,
    /// The results cache.
    pub cache: ResultsCache,
    /// Open cursors.
    pub cursors: Cursors,
    /// The memory of every query running, and of the results their cursors keep, with
    /// `--query.global-memory-limit`.
    pub memory: Arc<Pool>,
}

impl QueryService {
    /// The counters of metrics: the registry's, with the memory of the queries.
    pub fn counters(&self) -> registry::QueryCounters {
        registry::QueryCounters {
            memory_used: self.memory.used(),
            memory_limit: self.memory.limit(),
            memory_refused_own: self.memory.refused_own(),
            memory_refused_global: self.memory.refused_pool(),
            ..self.registry.counters()
        }
    }

    /// Runs a cursor request and answers its first batch (the whole `201` body, as JSON
    /// text). `authorize` checks the caller may write the collections the query writes (the
    /// database it is handed checks every read). Blocks.
    pub fn create_cursor(
        &self,
        database: Arc<dyn DatabaseOps>,
        user: &str,
        in_transaction: bool,
        request: CursorRequest,
        authorize: &dyn Fn(&[UsedCollection]) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let started = Instant::now();
        let prepared = prepare(
            Arc::clone(&database),
            &request.query,
            request.bind_vars.clone(),
            request.options.clone(),
        )?;
        authorize(&prepared.plan().collections)?;
        let database_name = database.name().to_owned();
        let use_cache = !in_transaction
            && !request.stream
            && prepared.cacheable()
            && self.cache.wanted(request.cache);
        let bind_json = Value::Object(request.bind_vars.clone());
        if use_cache {
            let revision = |name: &str| database.collection(name).ok().map(|c| c.revision());
            if let Some(results) =
                self.cache
                    .lookup(&database_name, &request.query, &bind_json, &revision)
            {
                let extra = json!({"warnings": [], "stats": extra_json(&Outcome::default(), 0.0, false)["stats"]});
                return self.first_batch(
                    &database_name,
                    user,
                    &request,
                    results,
                    None,
                    extra,
                    true,
                );
            }
        }
        let sources: Vec<(String, String)> = if use_cache {
            prepared
                .collections()
                .into_iter()
                .filter_map(|name| {
                    let rev = database.collection(&name).ok()?.revision();
                    Some((name, rev))
                })
                .collect()
        } else {
            Vec::new()
        };
        if request.stream {
            return self.stream(prepared, &database_name, user, &request);
        }
        let control = control_for(&request.options, &self.memory);
        let registration = self.registry.register(
            &database_name,
            user,
            &request.query,
            &request.bind_vars,
            false,
            Arc::clone(&control),
        );
        // The results are made into texts on the query's thread, so its account holds them
        // (and keeps holding them in the cursor until they are handed out).
        let mut results: Vec<Text> = Vec::new();
        let memory = Arc::clone(control.memory());
        let outcome = prepared.run(control, Some(user.to_owned()), &mut |value| {
            results.push(to_text(&value));
            Ok(true)
        })?;
        drop(registration);
        let execution_time = started.elapsed().as_secs_f64();
        let mut extra = extra_json(&outcome, execution_time, request.options.full_count);
        if request.profile > 0 {
            extra["profile"] = json!({
                "initializing": 0.0,
                "parsing": prepared.prepare_time,
                "optimizing ast": 0.0,
                "loading collections": 0.0,
                "instantiating plan": 0.0,
                "optimizing plan": 0.0,
                "executing": (execution_time - prepared.prepare_time).max(0.0),
                "finalizing": 0.0,
            });
            if request.profile > 1 {
                extra["plan"] = crate::explain::plan_json(prepared.plan());
            }
        }
        if use_cache && outcome.warnings.is_empty() {
            self.cache.store(
                &database_name,
                &request.query,
                bind_json,
                sources,
                &results,
                execution_time,
                started,
            );
        }
        self.first_batch(
            &database_name,
            user,
            &request,
            results,
            Some(memory),
            extra,
            false,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn first_batch(
        &self,
        database: &str,
        user: &str,
        request: &CursorRequest,
        results: Vec<Text>,
        memory: Option<Arc<Account>>,
        extra: Value,
        cached: bool,
    ) -> Result<Vec<u8>> {
        let count = request.count.then_some(results.len());
        let mut cursor = Cursor::new(
            database,
            user,
            Batches::Buffered {
                values: VecDeque::from(results),
                memory,
            },
            request.batch_size,
            request.ttl,
            count,
            Some(extra),
            cached,
            request.allow_retry,
        );
        let (batch, has_more) = cursor.next_batch()?;
        let id = if has_more {
            Some(self.cursors.insert(cursor)?)
        } else {
            None
        };
        Ok(batch.render(id, 201))
    }

    /// Starts a streaming query on its own thread and answers its first batch.
    fn stream(
        &self,
        prepared: Prepared,
        database: &str,
        user: &str,
        request: &CursorRequest,
    ) -> Result<Vec<u8>> {
        let control = control_for(&request.options, &self.memory);
        let registration = self.registry.register(
            database,
            user,
            &request.query,
            &request.bind_vars,
            true,
            Arc::clone(&control),
        );
        let (sender, receiver) = sync_channel::<Message>(
            request
                .batch_size
                .saturating_mul(2)
                .clamp(2, STREAM_AHEAD_MAX),
        );
        let query_control = Arc::clone(&control);
        let query_user = user.to_owned();
        std::thread::Builder::new()
            .name("quince-aql-stream".into())
            .stack_size(8 << 20)
            .spawn(move || {
                let _registration = registration;
                let memory = Arc::clone(query_control.memory());
                let result = prepared.run(query_control, Some(query_user), &mut |value| {
                    // The text leaves the query: its bytes are the cursor's from now on.
                    let text = to_text(&value);
                    drop(value);
                    let bytes = text.len() as u64;
                    let sent = sender.send(Message::Value(text)).is_ok();
                    if sent {
                        memory.release(bytes);
                    }
                    Ok(sent)
                });
                let _ = sender.send(Message::Done(result));
            })
            .map_err(|e| {
                ArangoError::with_message(
                    quince_errors::INTERNAL,
                    format!("cannot start a streaming query: {e}"),
                )
            })?;
        let mut cursor = Cursor::new(
            database,
            user,
            Batches::Stream {
                receiver,
                control,
                peeked: None,
                done: None,
            },
            request.batch_size,
            request.ttl,
            None,
            None,
            false,
            request.allow_retry,
        );
        let (batch, has_more) = cursor.next_batch()?;
        let id = if has_more {
            Some(self.cursors.insert(cursor)?)
        } else {
            None
        };
        Ok(batch.render(id, 201))
    }

    /// The next batch of cursor `id` (`POST /_api/cursor/{id}`), or with `batch_id` the
    /// latest batch again or the next one (`POST /_api/cursor/{id}/{batchId}`). Blocks.
    pub fn next_batch(
        &self,
        id: u64,
        database: &str,
        user: &str,
        batch_id: Option<u64>,
    ) -> Result<Vec<u8>> {
        let answer = self.cursors.with(id, database, user, |cursor| {
            if let Some(wanted) = batch_id {
                if !cursor.allow_retry {
                    return Err(bad_request("batch retries need the allowRetry option"));
                }
                if let Some((last_id, batch)) = &cursor.last {
                    if *last_id == wanted {
                        return Ok((batch.render(Some(id), 200), true));
                    }
                }
                if wanted != cursor.next_batch_id {
                    return Err(bad_request(&format!("batch {wanted} is not available")));
                }
            }
            let (batch, has_more) = cursor.next_batch()?;
            Ok((batch.render(Some(id), 200), has_more || cursor.allow_retry))
        });
        // `keep`: more batches follow, or the latest may be asked for again.
        let (body, keep) = match answer {
            Ok(a) => a,
            Err(e) => {
                if !e.is(quince_errors::CURSOR_BUSY) && !e.is(quince_errors::CURSOR_NOT_FOUND) {
                    self.cursors.remove(id);
                }
                return Err(e);
            }
        };
        if !keep {
            self.cursors.remove(id);
        }
        Ok(body)
    }
}
