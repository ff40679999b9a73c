//! The benchmark engine: one OS thread and one connection per `--concurrency`.
//!
//! What it is: arangob's closed loop (each thread takes the next operations from a shared
//! counter, sends them, waits for the reply, records the time) and wrk2's open loop
//! (`--rate`: each thread follows a fixed schedule and each latency is measured from the
//! request's intended send time, so a stalled server cannot hide behind fewer samples). Each
//! thread records into its own histogram and error table; [`Totals`] merges them at the end.
//!
//! What it is not: the setup (see [`crate::setup`]) or the printing ([`crate::report`]).
//!
//! Invariants: operations are handed out by one atomic counter, so a count-bounded run
//! performs exactly `--requests` operations (a last batch may be shorter); a thread's keys
//! come from its own offset; threads start together after all have connected.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use crate::batch;
use crate::cases::{thread_offset, Op, Position, ThreadState, Workload};
use crate::endpoint;
use crate::http::connection::{Connection, Timeouts, TransportError};
use crate::http::request::{Method, RequestHead};
use crate::latency::Latencies;
use crate::options::{BatchMode, Settings};

/// What went wrong with a request or a part of a batch.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKey {
    /// An HTTP error status (status 0: a batch part that could not be read), with the
    /// errorNum of the body when it had one.
    Http {
        /// Status.
        status: u16,
        /// errorNum.
        error_num: Option<i64>,
    },
    /// No response: the transport failed.
    Transport(String),
    /// A setup request failed (the run went on without it).
    Setup(String),
}

/// What one thread measured (or, merged, the whole run).
#[derive(Clone, Default)]
pub struct Totals {
    /// Response time: from the intended send time in open-loop mode, else as `service`.
    pub latencies: Latencies,
    /// Service time: from the actual send to the whole reply.
    pub service: Latencies,
    /// Operations performed (requests times batch sizes).
    pub operations: u64,
    /// HTTP requests sent.
    pub requests: u64,
    /// Operations that failed (HTTP errors, failed batch parts, setup failures).
    pub failures: u64,
    /// Requests that got no whole reply.
    pub incomplete: u64,
    /// Errors by kind, counted per request or per batch part.
    pub errors: BTreeMap<ErrorKey, u64>,
    /// Operations by HTTP method (docs1m's reads and writes).
    pub by_method: BTreeMap<Method, u64>,
    /// TCP connections opened.
    pub connects: u64,
    /// When the thread's last reply arrived.
    pub finished: Option<Instant>,
}

impl Totals {
    /// Adds another thread's figures.
    pub fn merge(&mut self, other: &Totals) {
        self.latencies.merge(&other.latencies);
        self.service.merge(&other.service);
        self.operations += other.operations;
        self.requests += other.requests;
        self.failures += other.failures;
        self.incomplete += other.incomplete;
        for (key, count) in &other.errors {
            *self.errors.entry(key.clone()).or_default() += count;
        }
        for (method, count) in &other.by_method {
            *self.by_method.entry(*method).or_default() += count;
        }
        self.connects += other.connects;
        self.finished = self.finished.max(other.finished);
    }

    fn error(&mut self, key: ErrorKey) {
        *self.errors.entry(key).or_default() += 1;
    }
}

/// A finished run.
pub struct Outcome {
    /// Per thread.
    pub threads: Vec<Totals>,
    /// All threads merged.
    pub totals: Totals,
    /// From the start signal until the last thread finished.
    pub elapsed: Duration,
}

/// Hands out operations as numbered tickets: at most `want` per call, none once the run is
/// over. Ticket numbers are unique across threads (the `seq-*` cases use them as keys).
struct Counter {
    issued: AtomicU64,
    limit: u64,
    done: AtomicU64,
    stop: AtomicBool,
}

impl Counter {
    /// The first ticket and how many were taken (0 when the run is over).
    fn take(&self, want: u64) -> (u64, u64) {
        if self.stop.load(Ordering::Relaxed) {
            return (0, 0);
        }
        let mut taken = 0;
        let first = self
            .issued
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |issued| {
                taken = self.limit.saturating_sub(issued).min(want);
                (taken > 0).then(|| issued + taken)
            })
            .unwrap_or(0);
        (first, taken)
    }
}

/// Runs the benchmark threads. `addresses` are the resolved endpoints.
pub fn run(
    settings: &Settings,
    workload: &Workload,
    head: &RequestHead,
    addresses: &[std::net::SocketAddr],
    status: &dyn Fn(&str),
) -> Outcome {
    let threads = settings.concurrency;
    let counter = Counter {
        issued: AtomicU64::new(0),
        limit: if settings.duration.is_some() {
            u64::MAX
        } else {
            settings.requests
        },
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    };
    let ready = Barrier::new(threads as usize + 1);
    let go = Barrier::new(threads as usize + 1);
    let timeouts = Timeouts {
        connect: settings.connection_timeout,
        request: settings.request_timeout,
    };
    status("starting threads...");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let addr = addresses[endpoint::for_thread(thread, addresses.len())];
                let (counter, ready, go) = (&counter, &ready, &go);
                std::thread::Builder::new()
                    .name(format!("bench-{thread}"))
                    .spawn_scoped(scope, move || {
                        let mut connection = Connection::new(addr, timeouts);
                        // Connecting before the start signal keeps connection setup out of
                        // the measured time, as arangob's threads do.
                        let _ = connection.connect();
                        ready.wait();
                        go.wait();
                        let worker = Worker {
                            settings,
                            workload,
                            head,
                            counter,
                            thread,
                        };
                        worker.run(&mut connection)
                    })
                    .expect("spawning a benchmark thread")
            })
            .collect();
        ready.wait();
        if settings.delay {
            status("sleeping (startup delay)...");
            std::thread::sleep(Duration::from_secs(10));
        }
        status("executing tests...");
        let start = Instant::now();
        go.wait();
        let progress = Progress::new(settings);
        while handles.iter().any(|h| !h.is_finished()) {
            // Polling here only refreshes the progress bar and enforces the duration; the
            // threads are joined below.
            std::thread::sleep(Duration::from_millis(50));
            progress.update(counter.done.load(Ordering::Relaxed), start.elapsed());
            if settings.duration.is_some_and(|d| start.elapsed() >= d) {
                counter.stop.store(true, Ordering::Relaxed);
            }
        }
        let per_thread: Vec<Totals> = handles
            .into_iter()
            .map(|h| h.join().expect("a benchmark thread panicked"))
            .collect();
        progress.finish();
        let mut totals = Totals::default();
        for t in &per_thread {
            totals.merge(t);
        }
        // From the start signal to the last reply: the polling above does not stretch it.
        let elapsed = totals
            .finished
            .map_or(Duration::ZERO, |end| end.saturating_duration_since(start));
        Outcome {
            threads: per_thread,
            totals,
            elapsed,
        }
    })
}

/// One benchmark thread.
struct Worker<'a> {
    settings: &'a Settings,
    workload: &'a Workload,
    head: &'a RequestHead,
    counter: &'a Counter,
    thread: u64,
}

impl Worker<'_> {
    fn run(&self, connection: &mut Connection) -> Totals {
        let settings = self.settings;
        let mut totals = Totals::default();
        let mut state = ThreadState::default();
        let mut op = Op::default();
        let mut request = Vec::with_capacity(4096);
        let mut body = Vec::with_capacity(4096);
        let offset = thread_offset(self.thread, settings.requests, settings.concurrency);
        let mut thread_counter = 0u64;
        let per_request = settings.batch_size.max(1);
        let start = Instant::now();
        let deadline = settings.duration.map(|d| start + d);
        // Open loop: this thread's share of the rate, its requests staggered against the
        // other threads' by a fraction of the interval.
        let interval = settings
            .rate
            .map(|rate| Duration::from_secs_f64(settings.concurrency as f64 / rate));
        let stagger = interval.map(|i| i.mul_f64(self.thread as f64 / settings.concurrency as f64));
        let mut scheduled = 0u64;
        let mut batch_methods = Vec::new();
        loop {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let (mut ticket, ops) = self.counter.take(per_request);
            if ops == 0 {
                break;
            }
            request.clear();
            batch_methods.clear();
            if settings.batch_size == 0 {
                self.workload.op(
                    Position {
                        thread: self.thread,
                        thread_counter,
                        global: offset + thread_counter,
                        ticket,
                    },
                    &mut state,
                    &mut op,
                );
                thread_counter += 1;
                let method = op.method.expect("an operation has a method");
                batch_methods.push(method);
                let payload = op.has_body.then_some(&op.body[..]);
                self.head
                    .write(&mut request, method, &op.path, op.content_type, payload);
            } else {
                body.clear();
                let mut path = String::new();
                for i in 0..ops {
                    self.workload.op(
                        Position {
                            thread: self.thread,
                            thread_counter,
                            global: offset + thread_counter,
                            ticket,
                        },
                        &mut state,
                        &mut op,
                    );
                    thread_counter += 1;
                    ticket += 1;
                    batch_methods.push(op.method.expect("an operation has a method"));
                    match settings.batch_mode {
                        BatchMode::Multipart => batch::append_part(&mut body, &op),
                        BatchMode::Array => {
                            assert!(
                                op.is_insert(),
                                "array batches hold inserts only (checked by the options)"
                            );
                            if i == 0 {
                                path.clone_from(&op.path);
                            }
                            batch::append_array_element(&mut body, &op, i == 0);
                        }
                    }
                }
                match settings.batch_mode {
                    BatchMode::Multipart => {
                        batch::finish_multipart(&mut body);
                        let content_type = batch::multipart_content_type();
                        self.head.write(
                            &mut request,
                            Method::Post,
                            "/_api/batch",
                            &content_type,
                            Some(&body),
                        );
                    }
                    BatchMode::Array => {
                        batch::finish_array(&mut body);
                        self.head.write(
                            &mut request,
                            Method::Post,
                            &path,
                            "application/json",
                            Some(&body),
                        );
                    }
                }
            }

            let intended = interval.map(|i| {
                let at = start + stagger.unwrap_or_default() + i.mul_f64(scheduled as f64);
                scheduled += 1;
                let now = Instant::now();
                if at > now {
                    std::thread::sleep(at - now);
                }
                at
            });
            let sent = Instant::now();
            let result = connection.exchange(&request);
            let replied = Instant::now();
            totals.service.record(replied - sent);
            totals.latencies.record(replied - intended.unwrap_or(sent));
            totals.requests += 1;
            totals.operations += ops;
            for method in &batch_methods {
                *totals.by_method.entry(*method).or_default() += 1;
            }
            match result {
                Ok(reply) => self.judge(&mut totals, connection, &reply, ops),
                Err(error) => {
                    totals.incomplete += 1;
                    totals.failures += ops;
                    let refused = matches!(error, TransportError::Connect(_));
                    totals.error(ErrorKey::Transport(error.to_string()));
                    if refused {
                        // A server that refuses connections would otherwise be hammered in
                        // a tight loop until the run ends.
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
            }
            self.counter.done.fetch_add(ops, Ordering::Relaxed);
        }
        totals.connects = connection.connects;
        totals.finished = Some(Instant::now());
        totals
    }

    /// Counts the failures a reply reports.
    fn judge(
        &self,
        totals: &mut Totals,
        connection: &Connection,
        reply: &crate::http::response::Response,
        ops: u64,
    ) {
        let buffer = connection.buffer();
        let body = reply.body(buffer);
        if reply.status >= 400 {
            totals.failures += ops;
            totals.error(ErrorKey::Http {
                status: reply.status,
                error_num: batch::error_num(body),
            });
            return;
        }
        if self.settings.batch_size == 0 {
            return;
        }
        let parts = match self.settings.batch_mode {
            BatchMode::Multipart => {
                let reported = reply.arango_errors.unwrap_or(0);
                if reported == 0 {
                    return;
                }
                let mut parts = batch::multipart_failures(reply.content_type(buffer), body);
                // The header is the server's count; parts it did not let us read still count.
                while (parts.len() as u64) < reported {
                    parts.push((0, None));
                }
                parts.truncate(reported as usize);
                parts
            }
            BatchMode::Array => batch::array_failures(reply.status, body),
        };
        totals.failures += parts.len() as u64;
        for (status, error_num) in parts {
            totals.error(ErrorKey::Http { status, error_num });
        }
    }
}

/// The progress bar: only when stderr is a terminal and `--progress` is on.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    duration: Option<Duration>,
}

impl Progress {
    fn new(settings: &Settings) -> Progress {
        let shown = settings.progress && !settings.quiet && std::io::stderr().is_terminal();
        let bar = shown.then(|| {
            let (length, template) = match settings.duration {
                Some(d) => (d.as_secs(), "{bar:40} {pos}/{len} s  {msg}"),
                None => (settings.requests, "{bar:40} {pos}/{len} operations  {msg}"),
            };
            let bar = indicatif::ProgressBar::new(length);
            if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Progress {
            bar,
            duration: settings.duration,
        }
    }

    fn update(&self, done: u64, elapsed: Duration) {
        if let Some(bar) = &self.bar {
            match self.duration {
                Some(_) => {
                    bar.set_position(elapsed.as_secs());
                    bar.set_message(format!("{done} operations"));
                }
                None => bar.set_position(done),
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
