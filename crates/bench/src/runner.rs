//! The benchmark engine: `--concurrency` connections driven by at most one OS thread per core.
//!
//! What it is: arangob's closed loop (each connection takes the next operations from a shared
//! counter, sends them, waits for the reply, records the time) and wrk2's open loop
//! (`--rate`: each connection follows a fixed schedule and each latency is measured from the
//! request's intended send time, so a stalled server cannot hide behind fewer samples). Each
//! OS thread runs a readiness loop (mio) over its share of the connections ([`Lane`]s), so the
//! client needs no more threads than the machine has cores, as wrk does. Each connection
//! records into its own histogram and error table; [`Totals`] merges them at the end.
//!
//! What it is not: the setup (see [`crate::setup`]) or the printing ([`crate::report`]).
//!
//! Invariants: operations are handed out by one atomic counter, so a count-bounded run
//! performs exactly `--requests` operations (a last batch may be shorter); a connection's keys
//! come from its own offset (the connection index is the workload's `thread`); connections
//! are never pipelined; threads start together after all their connections have connected.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use quince_client::{Method, RequestHead, Target, Timeouts};

use crate::cases::Workload;
use crate::lane::{Lane, Shared, READ_CHUNK};
use crate::latency::Latencies;
use crate::options::Settings;

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
    /// A successful reply a chained operation could not go on from (a transaction begin
    /// without an id).
    Reply(String),
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
    /// Operations performed (requests times batch sizes; a chained operation, such as a
    /// stream transaction, counts once).
    pub operations: u64,
    /// HTTP requests sent (every step of a chained operation, and its abort).
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

    pub(crate) fn error(&mut self, key: ErrorKey) {
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
pub(crate) struct Counter {
    issued: AtomicU64,
    limit: u64,
    /// Operations finished (the progress bar's count).
    pub(crate) done: AtomicU64,
    stop: AtomicBool,
}

impl Counter {
    /// The first ticket and how many were taken (0 when the run is over).
    pub(crate) fn take(&self, want: u64) -> (u64, u64) {
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

/// The endpoint a connection uses: connection `i` of `k` endpoints uses endpoint `i mod k`, as
/// arangobench spreads its threads since 3.9.
pub fn endpoint_for(connection: u64, endpoints: usize) -> usize {
    assert!(endpoints > 0, "at least one endpoint");
    (connection % endpoints as u64) as usize
}

/// Runs the benchmark: `--concurrency` connections spread over
/// min(concurrency, available cores) OS threads. `targets` are the resolved endpoints (with
/// their TLS settings).
pub fn run(
    settings: &Settings,
    workload: &Workload,
    head: &RequestHead,
    targets: &[Target],
    status: &dyn Fn(&str),
) -> Outcome {
    let connections = settings.concurrency;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let threads = connections.min(cores).max(1);
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
    let shared = Shared {
        settings,
        workload,
        head,
        counter: &counter,
        timeouts: Timeouts {
            connect: settings.connection_timeout,
            request: settings.request_timeout,
        },
    };
    status("starting threads...");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                // Connection `c` runs on thread `c % threads`, so the lanes spread evenly.
                let indexes: Vec<u64> = (thread..connections).step_by(threads as usize).collect();
                let (shared, ready, go) = (&shared, &ready, &go);
                std::thread::Builder::new()
                    .name(format!("bench-{thread}"))
                    .spawn_scoped(scope, move || {
                        event_loop(shared, &indexes, targets, ready, go)
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
        // Per connection, in connection order (the JSON report lists them as arangob's
        // threads).
        let mut per_lane: Vec<(u64, Totals)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("a benchmark thread panicked"))
            .collect();
        per_lane.sort_by_key(|(index, _)| *index);
        let per_thread: Vec<Totals> = per_lane.into_iter().map(|(_, t)| t).collect();
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

/// The largest number of readiness events taken from one poll.
const EVENTS_MAX: usize = 1024;

/// One OS thread: drives its lanes (connections `indexes`) until all are done. Returns each
/// lane's figures with its connection index.
fn event_loop(
    shared: &Shared<'_>,
    indexes: &[u64],
    targets: &[Target],
    ready: &Barrier,
    go: &Barrier,
) -> Vec<(u64, Totals)> {
    let mut poll = mio::Poll::new().expect("creating a readiness poller");
    let mut lanes: Vec<Lane> = indexes
        .iter()
        .enumerate()
        .map(|(slot, &index)| {
            let target = &targets[endpoint_for(index, targets.len())];
            Lane::new(shared, index, mio::Token(slot), target.clone())
        })
        .collect();
    for lane in &mut lanes {
        // Connecting before the start signal keeps connection setup out of the measured
        // time, as arangob's threads do.
        let _ = lane.connect(shared, poll.registry());
    }
    ready.wait();
    go.wait();
    let start = Instant::now();
    for lane in &mut lanes {
        lane.start_at(start);
    }
    let deadline = shared.settings.duration.map(|d| start + d);
    let mut events = mio::Events::with_capacity(lanes.len().clamp(1, EVENTS_MAX));
    let mut scratch = vec![0u8; READ_CHUNK].into_boxed_slice();
    loop {
        let stopping = deadline.is_some_and(|d| Instant::now() >= d);
        let mut wake = if stopping { None } else { deadline };
        let mut running = false;
        for lane in &mut lanes {
            let at = lane.advance(shared, poll.registry(), &mut scratch, stopping);
            running |= !lane.is_done();
            wake = match (wake, at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        if !running {
            break;
        }
        let timeout = wake.map(|at| at.saturating_duration_since(Instant::now()));
        match poll.poll(&mut events, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("polling the benchmark sockets failed: {e}"),
        }
        for event in &events {
            let lane = &mut lanes[event.token().0];
            lane.on_ready(shared, poll.registry(), &mut scratch);
        }
    }
    lanes
        .into_iter()
        .map(|lane| (lane.index(), lane.totals))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpListener};
    use std::sync::atomic::AtomicUsize;
    use std::sync::{Arc, Mutex};

    /// What the test server saw.
    #[derive(Default)]
    struct Seen {
        requests: AtomicU64,
        pipelined: AtomicBool,
        connections: AtomicUsize,
    }

    /// A server that answers every request (no body expected) with a small JSON reply and
    /// notes whether a request ever arrived before the reply to the previous one was sent.
    fn serve(seen: Arc<Seen>) -> SocketAddr {
        serve_with(seen, None, 2, false)
    }

    /// [`serve`], over TLS when `tls` is given, with replies whose body is `body` bytes, each
    /// closing the connection when `close` is true.
    fn serve_with(
        seen: Arc<Seen>,
        tls: Option<Arc<rustls::ServerConfig>>,
        body: usize,
        close: bool,
    ) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let connection = if close { "Connection: close\r\n" } else { "" };
        let mut reply =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {body}\r\n{connection}\r\n").into_bytes();
        reply.extend(std::iter::repeat_n(b'x', body));
        let reply: Arc<[u8]> = reply.into();
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let socket = socket.unwrap();
                let seen = Arc::clone(&seen);
                seen.connections.fetch_add(1, Ordering::SeqCst);
                let reply = Arc::clone(&reply);
                let tls = tls.clone();
                std::thread::spawn(move || match tls {
                    None => answer(socket, &seen, &reply, close),
                    Some(config) => {
                        let session = rustls::ServerConnection::new(config).unwrap();
                        let mut stream = rustls::StreamOwned::new(session, socket);
                        answer(&mut stream, &seen, &reply, close);
                        stream.conn.send_close_notify();
                        let _ = stream.flush();
                    }
                });
            }
        });
        addr
    }

    /// Answers each request head read from `socket` with `reply` until the peer closes (or,
    /// with `close`, after the first reply).
    fn answer(mut socket: impl Read + Write, seen: &Seen, reply: &[u8], close: bool) {
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = match socket.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            buffer.extend_from_slice(&chunk[..n]);
            let Some(end) = quince_client::response::find(&buffer, b"\r\n\r\n") else {
                continue;
            };
            // The body, if the head announces one, belongs to the request.
            let head = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buffer.len() < end + 4 + length {
                continue;
            }
            if buffer.len() > end + 4 + length {
                seen.pipelined.store(true, Ordering::SeqCst);
            }
            buffer.clear();
            seen.requests.fetch_add(1, Ordering::SeqCst);
            if socket
                .write_all(reply)
                .and_then(|()| socket.flush())
                .is_err()
                || close
            {
                return;
            }
        }
    }

    /// A server configuration with a certificate for 127.0.0.1 signed by a CA made here, and
    /// a client configuration trusting that CA.
    fn test_pki() -> (Arc<rustls::ServerConfig>, Arc<rustls::ClientConfig>) {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let server = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key)
            .unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca.der().clone()).unwrap();
        let client = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        (Arc::new(server), Arc::new(client))
    }

    fn run_against_target(target: Target, settings: &Settings) -> Outcome {
        let workload = Workload::new(
            settings.case,
            &settings.collection,
            settings.complexity,
            settings.requests,
            settings.read_percent,
            settings.preload,
            1,
        );
        let head = RequestHead::new("_system", "x", true).with_basic_auth("root", "");
        run(settings, &workload, &head, &[target], &|_| {})
    }

    fn tls_target(addr: SocketAddr, client: Arc<rustls::ClientConfig>) -> Target {
        let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
        Target {
            addr,
            tls: Some(quince_client::TlsClient::new(client, name)),
        }
    }

    #[test]
    fn tls_lanes_do_exactly_the_requests_with_one_handshake_each() {
        let (server, client) = test_pki();
        let seen = Arc::new(Seen::default());
        // Replies of 100 kB: several TLS records per reply, more than one read per reply.
        let addr = serve_with(Arc::clone(&seen), Some(server), 100_000, false);
        let settings = settings(&["--concurrency", "5", "--requests", "501", "--quiet"]);
        let outcome = run_against_target(tls_target(addr, client), &settings);
        assert_eq!(outcome.totals.requests, 501);
        assert_eq!(outcome.totals.failures, 0, "{:?}", outcome.totals.errors);
        assert_eq!(outcome.totals.connects, 5);
        assert_eq!(seen.requests.load(Ordering::SeqCst), 501);
        assert!(!seen.pipelined.load(Ordering::SeqCst));
    }

    #[test]
    fn tls_lanes_send_requests_of_megabytes() {
        let (server, client) = test_pki();
        let seen = Arc::new(Seen::default());
        let addr = serve_with(Arc::clone(&seen), Some(server), 2, false);
        // Batches of 10 documents of about 3.5 MB each: requests of 35 MB, more than the
        // socket takes at once, so they go out in pieces as it becomes writable.
        let settings = settings(&[
            "--test-case",
            "document",
            "--complexity",
            "100000",
            "--batch-size",
            "10",
            "--concurrency",
            "2",
            "--requests",
            "40",
            "--quiet",
        ]);
        let outcome = run_against_target(tls_target(addr, client), &settings);
        assert_eq!(outcome.totals.requests, 4);
        assert_eq!(outcome.totals.operations, 40);
        assert_eq!(outcome.totals.failures, 0, "{:?}", outcome.totals.errors);
        assert_eq!(seen.requests.load(Ordering::SeqCst), 4);
        assert!(!seen.pipelined.load(Ordering::SeqCst));
    }

    #[test]
    fn tls_lanes_reconnect_with_a_handshake_after_each_close() {
        let (server, client) = test_pki();
        let seen = Arc::new(Seen::default());
        let addr = serve_with(Arc::clone(&seen), Some(server), 2, true);
        let settings = settings(&["--concurrency", "2", "--requests", "40", "--quiet"]);
        let outcome = run_against_target(tls_target(addr, client), &settings);
        assert_eq!(outcome.totals.requests, 40);
        assert_eq!(outcome.totals.failures, 0, "{:?}", outcome.totals.errors);
        assert_eq!(outcome.totals.connects, 40);
        assert_eq!(seen.connections.load(Ordering::SeqCst), 40);
    }

    #[test]
    fn an_untrusted_tls_server_is_a_tls_failure_per_request() {
        let (server, _) = test_pki();
        let (_, other_client) = test_pki();
        let seen = Arc::new(Seen::default());
        let addr = serve_with(Arc::clone(&seen), Some(server), 2, false);
        let settings = settings(&["--concurrency", "1", "--requests", "3", "--quiet"]);
        let outcome = run_against_target(tls_target(addr, other_client), &settings);
        assert_eq!(outcome.totals.failures, 3);
        assert_eq!(outcome.totals.connects, 0);
        assert!(outcome
            .totals
            .errors
            .keys()
            .all(|key| matches!(key, ErrorKey::Transport(m) if m.starts_with("TLS: "))));
        assert_eq!(seen.requests.load(Ordering::SeqCst), 0);
    }

    fn settings(args: &[&str]) -> Settings {
        crate::cli::parse_args(args)
            .unwrap()
            .into_settings()
            .unwrap()
    }

    fn run_against(addr: SocketAddr, settings: &Settings) -> Outcome {
        let workload = Workload::new(
            settings.case,
            &settings.collection,
            settings.complexity,
            settings.requests,
            settings.read_percent,
            settings.preload,
            1,
        );
        let head = RequestHead::new("_system", "x", true).with_basic_auth("root", "");
        run(settings, &workload, &head, &[Target::plain(addr)], &|_| {})
    }

    /// A server that speaks just enough of the stream-transaction API: a begin answers
    /// 201 with a new id, an insert 202 (409 when `refuse_into` names its collection), a
    /// commit or abort 200. It logs `METHOD path [trx id]` per request.
    fn serve_transactions(
        refuse_into: Option<&'static str>,
    ) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&log);
        let ids = Arc::new(AtomicU64::new(100));
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let mut socket = socket.unwrap();
                let (log, ids) = (Arc::clone(&seen), Arc::clone(&ids));
                std::thread::spawn(move || {
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Some(end) = quince_client::response::find(&buffer, b"\r\n\r\n") else {
                            match socket.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        };
                        let head = String::from_utf8(buffer[..end].to_vec()).unwrap();
                        let header = |name: &str| {
                            head.lines()
                                .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
                        };
                        let length: usize =
                            header("Content-Length:").map_or(0, |v| v.parse().unwrap());
                        while buffer.len() < end + 4 + length {
                            match socket.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buffer.drain(..end + 4 + length);
                        let mut words = head.split(' ');
                        let (method, path) = (words.next().unwrap(), words.next().unwrap());
                        let path = path.strip_prefix("/_db/_system").unwrap().to_string();
                        let trx = header("x-arango-trx-id:");
                        log.lock().unwrap().push(match &trx {
                            Some(id) => format!("{method} {path} [{id}]"),
                            None => format!("{method} {path}"),
                        });
                        let (status, body) = if path == "/_api/transaction/begin" {
                            let id = ids.fetch_add(1, Ordering::SeqCst);
                            (
                                201,
                                format!(r#"{{"result":{{"id":"{id}","status":"running"}}}}"#),
                            )
                        } else if refuse_into.is_some_and(|c| path.ends_with(c)) {
                            (409, r#"{"error":true,"errorNum":1200}"#.to_string())
                        } else if method == "POST" {
                            (202, "{}".to_string())
                        } else {
                            (200, "{}".to_string())
                        };
                        let reply = format!(
                            "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if socket.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, log)
    }

    #[test]
    fn a_transaction_is_one_operation_of_chained_requests() {
        let (addr, log) = serve_transactions(None);
        let args = [
            "--test-case",
            "multi-collection",
            "--collection",
            "x",
            "--concurrency",
            "2",
            "--requests",
            "6",
        ];
        let outcome = run_against(addr, &settings(&[&args[..], &["--quiet"]].concat()));
        assert_eq!(outcome.totals.operations, 6);
        assert_eq!(outcome.totals.requests, 24);
        assert_eq!(outcome.totals.failures, 0);
        assert_eq!(outcome.totals.service.count(), 6);
        assert_eq!(outcome.totals.by_method.get(&Method::Post), Some(&6));
        let log = log.lock().unwrap();
        assert_eq!(log.len(), 24);
        // Every begin's id is used by its two inserts and its commit, in that order.
        for (i, line) in log.iter().enumerate() {
            if line != "POST /_api/transaction/begin" {
                continue;
            }
            let begun: Vec<&String> = log[..i].iter().filter(|l| l.ends_with("/begin")).collect();
            let id = 100 + begun.len();
            let steps: Vec<&String> = log
                .iter()
                .filter(|l| l.contains(&format!("{id}")))
                .collect();
            assert_eq!(
                steps,
                [
                    &format!("POST /_api/document?collection=x1 [{id}]"),
                    &format!("POST /_api/document?collection=x2 [{id}]"),
                    &format!("PUT /_api/transaction/{id}"),
                ]
            );
        }
    }

    #[test]
    fn a_failed_step_fails_the_operation_once_and_aborts_the_transaction() {
        let (addr, log) = serve_transactions(Some("collection=x2"));
        let args = [
            "--test-case",
            "multi-collection",
            "--collection",
            "x",
            "--requests",
            "3",
            "--quiet",
        ];
        let outcome = run_against(addr, &settings(&args));
        assert_eq!(outcome.totals.operations, 3);
        assert_eq!(outcome.totals.failures, 3);
        // Begin, insert, refused insert, abort.
        assert_eq!(outcome.totals.requests, 12);
        let key = ErrorKey::Http {
            status: 409,
            error_num: Some(1200),
        };
        assert_eq!(outcome.totals.errors.get(&key), Some(&3));
        let log = log.lock().unwrap();
        assert_eq!(
            log[..4],
            [
                "POST /_api/transaction/begin",
                "POST /_api/document?collection=x1 [100]",
                "POST /_api/document?collection=x2 [100]",
                "DELETE /_api/transaction/100",
            ]
        );
    }

    #[test]
    fn connections_spread_round_robin_over_the_endpoints() {
        let spread: Vec<usize> = (0..5).map(|c| endpoint_for(c, 2)).collect();
        assert_eq!(spread, [0, 1, 0, 1, 0]);
    }

    #[test]
    fn many_connections_per_thread_do_exactly_the_requests_without_pipelining() {
        let seen = Arc::new(Seen::default());
        let addr = serve(Arc::clone(&seen));
        let settings = settings(&["--concurrency", "13", "--requests", "3001", "--quiet"]);
        let outcome = run_against(addr, &settings);
        assert_eq!(outcome.totals.requests, 3001);
        assert_eq!(outcome.totals.operations, 3001);
        assert_eq!(outcome.totals.failures, 0);
        assert_eq!(outcome.totals.connects, 13);
        assert_eq!(outcome.totals.service.count(), 3001);
        // One figure set per connection, as arangob reports one per thread.
        assert_eq!(outcome.threads.len(), 13);
        assert_eq!(seen.requests.load(Ordering::SeqCst), 3001);
        assert_eq!(seen.connections.load(Ordering::SeqCst), 13);
        assert!(
            !seen.pipelined.load(Ordering::SeqCst),
            "a request was pipelined"
        );
    }

    #[test]
    fn a_refused_endpoint_counts_transport_failures_and_still_ends() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let settings = settings(&["--concurrency", "3", "--requests", "9", "--quiet"]);
        let outcome = run_against(addr, &settings);
        assert_eq!(outcome.totals.requests, 9);
        assert_eq!(outcome.totals.incomplete, 9);
        assert_eq!(outcome.totals.failures, 9);
        assert_eq!(outcome.totals.connects, 0);
    }

    #[test]
    fn the_open_loop_keeps_its_schedule_across_connections() {
        let seen = Arc::new(Seen::default());
        let addr = serve(Arc::clone(&seen));
        // 200 requests at 2000/s over 4 connections: about 0.1 s of schedule.
        let settings = settings(&[
            "--concurrency",
            "4",
            "--requests",
            "200",
            "--rate",
            "2000",
            "--quiet",
        ]);
        let started = Instant::now();
        let outcome = run_against(addr, &settings);
        assert_eq!(outcome.totals.requests, 200);
        assert!(
            started.elapsed() >= Duration::from_millis(95),
            "the schedule was not kept: {:?}",
            started.elapsed()
        );
        assert!(
            !seen.pipelined.load(Ordering::SeqCst),
            "a request was pipelined"
        );
    }
}
