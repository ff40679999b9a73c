//! Cursors: a query's results handed out in batches (`/_api/cursor`).
//!
//! What it is: [`Cursors`], the open cursors of a server, and [`Batches`], where a cursor's
//! values come from: a buffer (a query that ran to its end before the first answer) or a
//! stream (`stream: true`: the query runs on its own thread and waits, through a channel
//! bounded to two batches (at most [`STREAM_AHEAD_MAX`] values), until the client asks for
//! more). Each cursor belongs to one
//! (database, user); it expires `ttl` seconds after its last use; the number of open cursors,
//! and of streaming ones among them, is bounded (32 beyond).
//!
//! What it is not: HTTP. The api parses requests and renders these answers.
//!
//! Invariants: a batch is handed out once, except that with `allowRetry` the latest batch may
//! be asked for again by its id; a streaming query stops (its thread ends) when its cursor is
//! deleted, expires or is dropped, because its channel's receiving end is gone; a cursor is
//! used by one request at a time (a concurrent request gets 1601 busy); results travel as JSON
//! texts ([`Text`]), and the results a buffered cursor keeps stay charged to the account of
//! the query that made them (so the server-wide memory limit counts them) until they are
//! handed out or the cursor goes.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use quince_errors::{ArangoError, Result};
use quince_memory::Account;
use serde_json::{json, Map, Value};

use crate::exec::Control;
use crate::query::Outcome;

/// The most values a streaming query makes ahead of its client (its channel's bound), and
/// the most a batch reserves room for before its values arrive, whatever `batchSize` says.
pub const STREAM_AHEAD_MAX: usize = 4096;

/// Cursors open at once, per server.
pub const CURSORS_MAX: usize = 1024;
/// Streaming cursors open at once, per server (each holds a thread).
pub const STREAMS_MAX: usize = 128;

/// One result as its JSON text: what a query hands to its cursor. A text's size is exactly
/// what its allocation took, so handing one over is accounted exactly
/// (`quince_memory::Account::release`).
pub type Text = Box<str>;

/// The JSON text of `value`.
pub fn to_text(value: &Value) -> Text {
    value.to_string().into_boxed_str()
}

/// What a streaming query's thread sends.
pub enum Message {
    /// One result.
    Value(Text),
    /// The end: the statistics, or the error that ended the query.
    Done(Result<Outcome>),
}

/// Where a cursor's values come from.
pub enum Batches {
    /// Every value, computed before the first answer; `memory` is the account of the query
    /// that made them (they were charged to it), given back as they are handed out.
    Buffered {
        /// The values not yet handed out.
        values: VecDeque<Text>,
        /// The query's account (none for results from the cache).
        memory: Option<Arc<Account>>,
    },
    /// A query still running on its own thread.
    Stream {
        /// The values as the query makes them.
        receiver: Receiver<Message>,
        /// The query's kill switch.
        control: Arc<Control>,
        /// A value received but not yet handed out (the look-ahead that tells `hasMore`).
        peeked: Option<Text>,
        /// The outcome, once the query ended.
        done: Option<Outcome>,
    },
}

/// One batch of a cursor: its results and the other attributes of its answer.
#[derive(Clone, Debug)]
pub struct Batch {
    /// The results, as JSON texts.
    pub results: Vec<Text>,
    /// `hasMore`, `cached`, `count`, `extra`, `nextBatchId` as they apply.
    pub fields: Map<String, Value>,
}

impl Batch {
    /// The whole answer body: the batch with the cursor's `id` (when it has more, or may be
    /// asked again), `error: false` and `code`.
    pub fn render(&self, id: Option<u64>, code: u16) -> Vec<u8> {
        let texts: usize = self.results.iter().map(|t| t.len() + 1).sum();
        let mut out = Vec::with_capacity(texts + 256);
        out.extend_from_slice(b"{\"result\":[");
        for (i, text) in self.results.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(text.as_bytes());
        }
        out.push(b']');
        let mut rest = self.fields.clone();
        if let Some(id) = id {
            rest.insert("id".into(), json!(id.to_string()));
        }
        rest.insert("error".into(), json!(false));
        rest.insert("code".into(), json!(code));
        for (name, value) in &rest {
            out.push(b',');
            out.extend_from_slice(Value::String(name.clone()).to_string().as_bytes());
            out.push(b':');
            out.extend_from_slice(value.to_string().as_bytes());
        }
        out.push(b'}');
        out
    }
}

/// One cursor.
pub struct Cursor {
    /// The database it was made in.
    pub database: String,
    /// Who made it.
    pub user: String,
    /// Its values.
    pub batches: Batches,
    /// Values per batch.
    pub batch_size: usize,
    /// Seconds it lives after each use.
    pub ttl: f64,
    /// `count`, when asked for (buffered cursors only).
    pub count: Option<usize>,
    /// The `extra` of a buffered query (stats and warnings), sent with every batch.
    pub extra: Option<Value>,
    /// The results came from the cache.
    pub cached: bool,
    /// `allowRetry`: the latest batch may be asked for again.
    pub allow_retry: bool,
    /// The id of the next batch (the first is 1).
    pub next_batch_id: u64,
    /// The latest batch and its id, for a retry.
    pub last: Option<(u64, Batch)>,
    expires: Instant,
}

impl Cursor {
    /// A cursor over `batches`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        database: &str,
        user: &str,
        batches: Batches,
        batch_size: usize,
        ttl: f64,
        count: Option<usize>,
        extra: Option<Value>,
        cached: bool,
        allow_retry: bool,
    ) -> Cursor {
        Cursor {
            database: database.to_owned(),
            user: user.to_owned(),
            batches,
            batch_size,
            ttl,
            count,
            extra,
            cached,
            allow_retry,
            next_batch_id: 1,
            last: None,
            expires: Instant::now() + Duration::from_secs_f64(ttl),
        }
    }

    fn is_stream(&self) -> bool {
        matches!(self.batches, Batches::Stream { .. })
    }

    /// The next batch, and whether more follow. Blocks while a streaming query makes the
    /// values.
    pub fn next_batch(&mut self) -> Result<(Batch, bool)> {
        let batch_size = self.batch_size;
        let (values, has_more, extra) = match &mut self.batches {
            Batches::Buffered { values, memory } => {
                let n = batch_size.min(values.len());
                let batch: Vec<Text> = values.drain(..n).collect();
                if let Some(memory) = memory {
                    memory.release(batch.iter().map(|t| t.len() as u64).sum());
                }
                (batch, !values.is_empty(), self.extra.clone())
            }
            Batches::Stream {
                receiver,
                control,
                peeked,
                done,
            } => {
                // A killed query's cursor answers 1500 from its next batch on, whatever it
                // made before the kill (its thread, parked on the full channel, ends when the
                // cursor goes).
                if control.is_killed() && done.is_none() {
                    control.check()?;
                }
                // `batchSize` is the client's number: reserve no more than a stream can hold.
                let mut batch = Vec::with_capacity(batch_size.min(STREAM_AHEAD_MAX));
                if let Some(v) = peeked.take() {
                    batch.push(v);
                }
                // Fill the batch, then look one value ahead to know whether more follow.
                while done.is_none() && batch.len() <= batch_size {
                    match receive(receiver, control)? {
                        Message::Value(v) if batch.len() < batch_size => batch.push(v),
                        Message::Value(v) => {
                            *peeked = Some(v);
                            break;
                        }
                        Message::Done(outcome) => *done = Some(outcome?),
                    }
                }
                let has_more = peeked.is_some();
                let extra = if has_more {
                    None
                } else {
                    done.as_ref().map(|o| extra_json(o, 0.0, false))
                };
                (batch, has_more, extra)
            }
        };
        let mut fields = Map::new();
        fields.insert("hasMore".into(), json!(has_more));
        fields.insert("cached".into(), json!(self.cached));
        if let Some(count) = self.count {
            fields.insert("count".into(), json!(count));
        }
        if let Some(extra) = extra {
            fields.insert("extra".into(), extra);
        }
        let batch_id = self.next_batch_id;
        self.next_batch_id += 1;
        if self.allow_retry && has_more {
            fields.insert("nextBatchId".into(), json!(self.next_batch_id.to_string()));
        }
        let batch = Batch {
            results: values,
            fields,
        };
        if self.allow_retry {
            self.last = Some((batch_id, batch.clone()));
        }
        Ok((batch, has_more))
    }
}

/// Waits for a streaming query's next message, giving up when the query was killed.
fn receive(receiver: &Receiver<Message>, control: &Control) -> Result<Message> {
    loop {
        match receiver.recv_timeout(Duration::from_millis(100)) {
            Ok(m) => return Ok(m),
            Err(RecvTimeoutError::Timeout) => control.check()?,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(ArangoError::with_message(
                    quince_errors::INTERNAL,
                    "a streaming query ended without its outcome".to_owned(),
                ))
            }
        }
    }
}

/// `extra` as the cursor API renders it.
pub fn extra_json(outcome: &Outcome, execution_time: f64, with_full_count: bool) -> Value {
    let stats = &outcome.stats;
    let mut stats_json = json!({
        "writesExecuted": stats.writes_executed,
        "writesIgnored": stats.writes_ignored,
        "documentLookups": 0,
        "seeks": 0,
        "scannedFull": stats.scanned_full,
        "scannedIndex": stats.scanned_index,
        "cursorsCreated": 0,
        "cursorsRearmed": 0,
        "cacheHits": 0,
        "cacheMisses": 0,
        "filtered": stats.filtered,
        "httpRequests": 0,
        "executionTime": execution_time,
        "peakMemoryUsage": stats.peak_memory,
        "intermediateCommits": 0,
    });
    if with_full_count || stats.full_count.is_some() {
        stats_json["fullCount"] = json!(stats.full_count.unwrap_or(0));
    }
    let warnings: Vec<Value> = outcome
        .warnings
        .iter()
        .map(|w| json!({"code": w.code, "message": w.message}))
        .collect();
    json!({"warnings": warnings, "stats": stats_json})
}

/// The open cursors of a server.
#[derive(Default)]
pub struct Cursors {
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Mutex<Cursor>>>>,
}

/// Forgets the expired cursors that no request uses (a streaming query's thread ends when
/// its cursor goes: its channel has no receiver any more).
fn purge(open: &mut HashMap<u64, Arc<Mutex<Cursor>>>) {
    let now = Instant::now();
    open.retain(|_, c| c.try_lock().is_none_or(|c| c.expires > now));
}

/// 1601.
fn busy() -> ArangoError {
    ArangoError::with_message(quince_errors::CURSOR_BUSY, "cursor is busy".to_owned())
}

/// 1600.
pub fn not_found() -> ArangoError {
    ArangoError::with_message(
        quince_errors::CURSOR_NOT_FOUND,
        "cursor not found".to_owned(),
    )
}

impl Cursors {
    /// Keeps `cursor`; its id. 32 when too many are open.
    pub fn insert(&self, cursor: Cursor) -> Result<u64> {
        let mut open = self.open.lock();
        purge(&mut open);
        let streams = open
            .values()
            .filter(|c| c.try_lock().is_some_and(|c| c.is_stream()))
            .count();
        if open.len() >= CURSORS_MAX || (cursor.is_stream() && streams >= STREAMS_MAX) {
            return Err(ArangoError::with_message(
                quince_errors::RESOURCE_LIMIT,
                "too many open cursors".to_owned(),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        open.insert(id, Arc::new(Mutex::new(cursor)));
        Ok(id)
    }

    /// Runs `call` on cursor `id` of (`database`, `user`), extending its life. 1600 for a
    /// cursor that is not there (or not theirs), 1601 when another request uses it.
    pub fn with<T>(
        &self,
        id: u64,
        database: &str,
        user: &str,
        call: impl FnOnce(&mut Cursor) -> Result<T>,
    ) -> Result<T> {
        let cursor = {
            let mut open = self.open.lock();
            purge(&mut open);
            open.get(&id).cloned().ok_or_else(not_found)?
        };
        let Some(mut guard) = cursor.try_lock() else {
            return Err(busy());
        };
        if guard.database != database || guard.user != user {
            return Err(not_found());
        }
        if guard.expires <= Instant::now() {
            drop(guard);
            self.open.lock().remove(&id);
            return Err(not_found());
        }
        let result = call(&mut guard);
        guard.expires = Instant::now() + Duration::from_secs_f64(guard.ttl);
        result
    }

    /// Forgets cursor `id` (after its last batch, or an error).
    pub fn remove(&self, id: u64) {
        self.open.lock().remove(&id);
    }

    /// Deletes cursor `id` of (`database`, `user`) (1600 when not there), stopping its query.
    pub fn delete(&self, id: u64, database: &str, user: &str) -> Result<()> {
        let mut open = self.open.lock();
        let Some(cursor) = open.get(&id) else {
            return Err(not_found());
        };
        let Some(guard) = cursor.try_lock() else {
            return Err(busy());
        };
        if guard.database != database || guard.user != user {
            return Err(not_found());
        }
        drop(guard);
        if let Some(cursor) = open.remove(&id) {
            if let Batches::Stream { control, .. } = &cursor.lock().batches {
                control.kill();
            }
        }
        Ok(())
    }

    /// Forgets every cursor, stopping streaming queries (a restore replaced the data they
    /// read): requests for them answer 1600 from now on.
    pub fn clear(&self) {
        let forgotten: Vec<_> = self.open.lock().drain().map(|(_, c)| c).collect();
        for cursor in forgotten {
            if let Some(guard) = cursor.try_lock() {
                if let Batches::Stream { control, .. } = &guard.batches {
                    control.kill();
                }
            }
        }
    }

    /// The number of open cursors.
    pub fn len(&self) -> usize {
        self.open.lock().len()
    }

    /// True when none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
