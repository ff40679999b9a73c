//! One benchmark connection ("lane"): its closed loop of request, reply, record.
//!
//! What it is: the state arangob keeps per thread, kept here per connection: the workload's
//! per-thread state and key offset (the connection index is the workload's `thread`), the
//! reusable request buffers, the open-loop schedule, the non-blocking socket with its receive
//! buffer, and the figures it measured. [`crate::runner`]'s event loop drives many lanes on one
//! OS thread by calling [`Lane::advance`] and [`Lane::on_ready`].
//!
//! A chained operation (a stream transaction: begin, writes, commit) is one operation of
//! several requests: after each successful reply the workload builds the next request from it
//! ([`Workload::follow`]) and the lane sends it at once ([`Phase::Follow`]); the operation's
//! latency runs from its first request (or its intended time) to its last reply, and it
//! counts once, as one success or one failure. A step that fails ends the operation (a
//! failure) and, when the workload says so ([`Workload::abandon`]), one more request aborts
//! the transaction; its reply is not judged.
//!
//! What it is not: pipelined. A lane sends its next request only after the whole reply to the
//! previous one (or its failure), exactly as a blocking arangob thread would.
//!
//! Over TLS (an `ssl://` endpoint) the lane keeps a rustls client session beside its socket:
//! the handshake is done, blocking and bounded by `--connection-timeout`, when connecting; a
//! request is queued whole into the session and its records written as the socket takes them
//! (`write_tls`); replies are read as records (`read_tls`, `process_new_packets`) and their
//! plaintext appended to the receive buffer. The plain path is the same code as before TLS,
//! behind one branch per write and read.
//!
//! Invariants: a lane is in exactly one [`Phase`]; while a request is in flight it has a
//! deadline (`--request-timeout` since the last progress); the receive buffer holds at most one
//! response, bounded by [`quince_client::response`]; connecting is blocking but bounded by
//! `--connection-timeout`; every operation is recorded exactly once, when its last request
//! ended.

use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Interest, Registry, Token};
use quince_client::response::{self, Response};
use quince_client::{Method, RequestHead, Target, Timeouts, TransportError};
use rustls::ClientConnection;

use crate::batch;
use crate::cases::{thread_offset, Next, Op, Position, ThreadState, Unusable, Workload};
use crate::options::{BatchMode, Settings};
use crate::runner::{Counter, ErrorKey, Totals};

/// What every lane of a run shares.
pub(crate) struct Shared<'a> {
    /// The run's settings.
    pub settings: &'a Settings,
    /// The test case.
    pub workload: &'a Workload,
    /// The common request head.
    pub head: &'a RequestHead,
    /// The operation tickets.
    pub counter: &'a Counter,
    /// Connect and request timeouts.
    pub timeouts: Timeouts,
}

/// Where a lane is in its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No request built; the next step takes tickets.
    Idle,
    /// A request is built and waits for its intended send time (open loop).
    Scheduled(Instant),
    /// A refused connection: wait before taking the next tickets.
    Backoff(Instant),
    /// The next request of a chained operation is built: send it now.
    Follow,
    /// Writing the request.
    Sending,
    /// Reading the reply.
    Receiving,
    /// No more work: the run is over for this lane.
    Done,
}

/// How many bytes one read asks for.
pub(crate) const READ_CHUNK: usize = 64 * 1024;

/// How long a lane waits after a refused connection, so that a server that refuses
/// connections is not hammered in a tight loop until the run ends.
const REFUSED_BACKOFF: Duration = Duration::from_millis(10);

/// One connection and its closed loop.
pub(crate) struct Lane {
    index: u64,
    token: Token,
    target: Target,
    phase: Phase,
    // The workload's state, as arangob keeps it per thread.
    state: ThreadState,
    op: Op,
    request: Vec<u8>,
    body: Vec<u8>,
    batch_methods: Vec<Method>,
    ops: u64,
    // The step of the chained operation in flight (0: its first request), and whether the
    // request in flight abandons a failed one.
    step: u64,
    abandoning: bool,
    offset: u64,
    thread_counter: u64,
    // The open-loop schedule.
    start: Instant,
    scheduled: u64,
    intended: Option<Instant>,
    // The transport.
    stream: Option<TcpStream>,
    /// The TLS session of the open socket, for an `ssl://` endpoint.
    tls: Option<Box<ClientConnection>>,
    wants_write: bool,
    written: usize,
    received: Vec<u8>,
    sent: Instant,
    // When the operation's first request was sent.
    began: Instant,
    expires: Instant,
    connects: u64,
    /// What this lane measured.
    pub totals: Totals,
}

impl Lane {
    /// Lane `index` (the workload's thread number) to `target`, polled under `token`.
    pub fn new(shared: &Shared<'_>, index: u64, token: Token, target: Target) -> Lane {
        let settings = shared.settings;
        let now = Instant::now();
        Lane {
            index,
            token,
            target,
            phase: Phase::Idle,
            state: ThreadState::default(),
            op: Op::default(),
            request: Vec::with_capacity(4096),
            body: Vec::with_capacity(4096),
            batch_methods: Vec::new(),
            ops: 0,
            step: 0,
            abandoning: false,
            offset: thread_offset(index, settings.requests, settings.concurrency),
            thread_counter: 0,
            start: now,
            scheduled: 0,
            intended: None,
            stream: None,
            tls: None,
            wants_write: false,
            written: 0,
            received: Vec::with_capacity(READ_CHUNK),
            sent: now,
            began: now,
            expires: now,
            connects: 0,
            totals: Totals::default(),
        }
    }

    /// Marks the start of the measured run (the origin of the open-loop schedule).
    pub fn start_at(&mut self, start: Instant) {
        self.start = start;
    }

    /// The connection index (the workload's thread number).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// Whether the lane has finished.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Opens the TCP connection (and does the TLS handshake) if it is not open.
    pub fn connect(
        &mut self,
        shared: &Shared<'_>,
        registry: &Registry,
    ) -> Result<(), TransportError> {
        if self.stream.is_some() {
            return Ok(());
        }
        let stream =
            std::net::TcpStream::connect_timeout(&self.target.addr, shared.timeouts.connect)
                .map_err(|e| TransportError::Connect(e.kind()))?;
        // Latency, not throughput per packet, is what a request/reply benchmark measures.
        let _ = stream.set_nodelay(true);
        let tls = match &self.target.tls {
            None => None,
            Some(client) => Some(handshake(client, &stream, shared.timeouts.connect)?),
        };
        stream
            .set_nonblocking(true)
            .map_err(|e| TransportError::Connect(e.kind()))?;
        let mut stream = TcpStream::from_std(stream);
        registry
            .register(&mut stream, self.token, Interest::READABLE)
            .map_err(|e| TransportError::Connect(e.kind()))?;
        self.stream = Some(stream);
        self.tls = tls;
        self.wants_write = false;
        self.received.clear();
        self.connects += 1;
        Ok(())
    }

    /// Moves the lane on as far as time allows without waiting for its socket: takes tickets
    /// and sends, or expires a request. Returns when the lane next needs waking by time.
    pub fn advance(
        &mut self,
        shared: &Shared<'_>,
        registry: &Registry,
        scratch: &mut [u8],
        stopping: bool,
    ) -> Option<Instant> {
        loop {
            let now = Instant::now();
            match self.phase {
                Phase::Done => return None,
                Phase::Idle => {
                    if stopping || !self.build(shared) {
                        self.finish_lane(registry);
                        return None;
                    }
                    match self.schedule(shared) {
                        Some(at) if at > now => self.phase = Phase::Scheduled(at),
                        _ => self.send(shared, registry, scratch),
                    }
                }
                Phase::Scheduled(at) | Phase::Backoff(at) if at > now => return Some(at),
                Phase::Scheduled(_) => self.send(shared, registry, scratch),
                Phase::Backoff(_) => self.phase = Phase::Idle,
                Phase::Follow => self.send(shared, registry, scratch),
                Phase::Sending | Phase::Receiving if now >= self.expires => {
                    self.complete(shared, registry, Err(TransportError::Timeout));
                }
                Phase::Sending | Phase::Receiving => return Some(self.expires),
            }
        }
    }

    /// The socket is ready: writes or reads what it can.
    pub fn on_ready(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        match self.phase {
            Phase::Sending => self.write(shared, registry, scratch),
            Phase::Receiving => self.read(shared, registry, scratch),
            // A stale readiness (a close after the last reply) is seen by the next exchange.
            _ => {}
        }
    }

    /// Takes the next tickets and builds the request; false when the run is over.
    fn build(&mut self, shared: &Shared<'_>) -> bool {
        let settings = shared.settings;
        let (mut ticket, ops) = shared.counter.take(settings.batch_size.max(1));
        if ops == 0 {
            return false;
        }
        self.ops = ops;
        self.request.clear();
        self.batch_methods.clear();
        if settings.batch_size == 0 {
            shared
                .workload
                .op(self.position(ticket), &mut self.state, &mut self.op);
            self.thread_counter += 1;
            self.batch_methods
                .push(self.op.method.expect("an operation has a method"));
            self.step = 0;
            self.write_op(shared);
            return true;
        }
        self.body.clear();
        let mut path = String::new();
        for i in 0..ops {
            shared
                .workload
                .op(self.position(ticket), &mut self.state, &mut self.op);
            self.thread_counter += 1;
            ticket += 1;
            self.batch_methods
                .push(self.op.method.expect("an operation has a method"));
            match settings.batch_mode {
                BatchMode::Multipart => batch::append_part(&mut self.body, &self.op),
                BatchMode::Array => {
                    assert!(
                        self.op.is_insert(),
                        "array batches hold inserts only (checked by the options)"
                    );
                    if i == 0 {
                        path.clone_from(&self.op.path);
                    }
                    batch::append_array_element(&mut self.body, &self.op, i == 0);
                }
            }
        }
        match settings.batch_mode {
            BatchMode::Multipart => {
                batch::finish_multipart(&mut self.body);
                let content_type = batch::multipart_content_type();
                shared.head.write(
                    &mut self.request,
                    Method::Post,
                    "/_api/batch",
                    &content_type,
                    Some(&self.body),
                );
            }
            BatchMode::Array => {
                batch::finish_array(&mut self.body);
                shared.head.write(
                    &mut self.request,
                    Method::Post,
                    &path,
                    "application/json",
                    Some(&self.body),
                );
            }
        }
        true
    }

    /// The request of `self.op` alone, into the request buffer.
    fn write_op(&mut self, shared: &Shared<'_>) {
        let method = self.op.method.expect("an operation has a method");
        let payload = self.op.has_body.then_some(&self.op.body[..]);
        self.request.clear();
        shared.head.write_with_headers(
            &mut self.request,
            method,
            &self.op.path,
            &self.op.headers,
            self.op.content_type,
            payload,
        );
    }

    fn position(&self, ticket: u64) -> Position {
        Position {
            thread: self.index,
            thread_counter: self.thread_counter,
            global: self.offset + self.thread_counter,
            ticket,
        }
    }

    /// Open loop: the intended send time of the request just built. This connection's
    /// share of the rate, staggered against the other connections by a fraction of the
    /// interval.
    fn schedule(&mut self, shared: &Shared<'_>) -> Option<Instant> {
        let settings = shared.settings;
        let concurrency = settings.concurrency as f64;
        self.intended = settings.rate.map(|rate| {
            let interval = Duration::from_secs_f64(concurrency / rate);
            let stagger = interval.mul_f64(self.index as f64 / concurrency);
            let at = self.start + stagger + interval.mul_f64(self.scheduled as f64);
            self.scheduled += 1;
            at
        });
        self.intended
    }

    fn send(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        let connected = self.connect(shared, registry);
        self.sent = Instant::now();
        if self.step == 0 && !self.abandoning {
            self.began = self.sent;
        }
        if let Err(error) = connected {
            self.complete(shared, registry, Err(error));
            return;
        }
        self.expires = self.sent + shared.timeouts.request;
        self.written = 0;
        self.received.clear();
        self.phase = Phase::Sending;
        self.write(shared, registry, scratch);
    }

    fn write(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        if self.tls.is_some() {
            return self.write_tls(shared, registry, scratch);
        }
        let stream = self.stream.as_mut().expect("a sending lane is connected");
        while self.written < self.request.len() {
            match stream.write(&self.request[self.written..]) {
                Ok(0) => {
                    let error = TransportError::Send(ErrorKind::WriteZero);
                    return self.complete(shared, registry, Err(error));
                }
                Ok(n) => {
                    self.written += n;
                    self.expires = Instant::now() + shared.timeouts.request;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return self.wait_writable(shared, registry);
                }
                Err(e) => {
                    return self.complete(shared, registry, Err(TransportError::Send(e.kind())))
                }
            }
        }
        self.sent(shared, registry, scratch);
    }

    /// The socket took no more of the request: asks for writable readiness (once), so the
    /// loop calls [`Lane::write`] again when it drains.
    fn wait_writable(&mut self, shared: &Shared<'_>, registry: &Registry) {
        if self.wants_write {
            return;
        }
        let stream = self.stream.as_mut().expect("a sending lane is connected");
        let interest = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = registry.reregister(stream, self.token, interest) {
            return self.complete(shared, registry, Err(TransportError::Send(e.kind())));
        }
        self.wants_write = true;
    }

    /// The whole request is on the socket: the lane waits for the reply.
    fn sent(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        self.phase = Phase::Receiving;
        if self.wants_write {
            let stream = self.stream.as_mut().expect("a sending lane is connected");
            // Writable readiness would wake the loop on every acknowledgement from now on.
            if let Err(e) = registry.reregister(stream, self.token, Interest::READABLE) {
                return self.complete(shared, registry, Err(TransportError::Send(e.kind())));
            }
            self.wants_write = false;
            // The readable edge may have come with the writable one that got us here: read
            // now rather than wait for an edge that already passed.
            self.read(shared, registry, scratch);
        }
        // Otherwise the reply's arrival raises a fresh readable edge (the socket's last read
        // ended in WouldBlock, or it had nothing more to read), so no read is tried here.
    }

    fn read(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        if self.tls.is_some() {
            return self.read_tls(shared, registry, scratch);
        }
        let stream = self.stream.as_mut().expect("a receiving lane is connected");
        loop {
            let (n, eof) = match stream.read(scratch) {
                Ok(0) => (0, true),
                Ok(n) => (n, false),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    let error = TransportError::Receive(e.kind());
                    return self.complete(shared, registry, Err(error));
                }
            };
            self.received.extend_from_slice(&scratch[..n]);
            self.expires = Instant::now() + shared.timeouts.request;
            match response::parse(&self.received, eof) {
                Ok(Some(reply)) => return self.complete(shared, registry, Ok(reply)),
                Ok(None) if eof => {
                    return self.complete(shared, registry, Err(TransportError::Closed))
                }
                Ok(None) => {}
                Err(bad) => {
                    let error = TransportError::Malformed(bad.0);
                    return self.complete(shared, registry, Err(error));
                }
            }
        }
    }

    /// [`Lane::write`] over TLS: queues the whole request into the session, then writes its
    /// records as the socket takes them.
    fn write_tls(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        let stream = self.stream.as_mut().expect("a sending lane is connected");
        let tls = self.tls.as_mut().expect("a TLS lane has a session");
        if self.written < self.request.len() {
            // The session's buffer limit is off: this takes the whole request.
            if let Err(e) = tls.writer().write_all(&self.request[self.written..]) {
                return self.complete(shared, registry, Err(TransportError::Send(e.kind())));
            }
            self.written = self.request.len();
        }
        while tls.wants_write() {
            match tls.write_tls(stream) {
                Ok(0) => {
                    let error = TransportError::Send(ErrorKind::WriteZero);
                    return self.complete(shared, registry, Err(error));
                }
                Ok(_) => self.expires = Instant::now() + shared.timeouts.request,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    return self.wait_writable(shared, registry);
                }
                Err(e) => {
                    return self.complete(shared, registry, Err(TransportError::Send(e.kind())))
                }
            }
        }
        self.sent(shared, registry, scratch);
    }

    /// [`Lane::read`] over TLS: reads records until the socket has no more, appending their
    /// plaintext to the receive buffer, until a whole reply is there.
    fn read_tls(&mut self, shared: &Shared<'_>, registry: &Registry, scratch: &mut [u8]) {
        loop {
            let stream = self.stream.as_mut().expect("a receiving lane is connected");
            let tls = self.tls.as_mut().expect("a TLS lane has a session");
            let mut eof = match tls.read_tls(stream) {
                Ok(0) => true,
                Ok(_) => false,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    let error = TransportError::Receive(e.kind());
                    return self.complete(shared, registry, Err(error));
                }
            };
            if let Err(e) = tls.process_new_packets() {
                // The alert that says why goes out if the socket takes it.
                let _ = tls.write_tls(stream);
                let error = TransportError::Tls(e.to_string());
                return self.complete(shared, registry, Err(error));
            }
            // Anything the session must answer by itself (a key update): best effort, the
            // socket has room for a few bytes.
            while tls.wants_write() && tls.write_tls(stream).is_ok_and(|n| n > 0) {}
            loop {
                match tls.reader().read(scratch) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => self.received.extend_from_slice(&scratch[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    // Closed without close_notify: the reply's framing decides.
                    Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                        eof = true;
                        break;
                    }
                    Err(e) => {
                        let error = TransportError::Receive(e.kind());
                        return self.complete(shared, registry, Err(error));
                    }
                }
            }
            self.expires = Instant::now() + shared.timeouts.request;
            match response::parse(&self.received, eof) {
                Ok(Some(reply)) => return self.complete(shared, registry, Ok(reply)),
                Ok(None) if eof => {
                    return self.complete(shared, registry, Err(TransportError::Closed))
                }
                Ok(None) => {}
                Err(bad) => {
                    let error = TransportError::Malformed(bad.0);
                    return self.complete(shared, registry, Err(error));
                }
            }
        }
    }

    /// Records the exchange that just ended: goes on with a chained operation, or records the
    /// operation and returns the lane to taking tickets.
    fn complete(
        &mut self,
        shared: &Shared<'_>,
        registry: &Registry,
        result: Result<Response, TransportError>,
    ) {
        let replied = Instant::now();
        self.totals.requests += 1;
        self.phase = Phase::Idle;
        let reply = match result {
            Ok(reply) => reply,
            Err(error) => {
                if self.abandoning {
                    self.abandoning = false;
                } else {
                    self.totals.incomplete += 1;
                    self.totals.failures += self.ops;
                    self.totals.error(ErrorKey::Transport(error.to_string()));
                    self.record(shared, replied);
                }
                if matches!(error, TransportError::Connect(_) | TransportError::Tls(_)) {
                    self.phase = Phase::Backoff(replied + REFUSED_BACKOFF);
                }
                self.disconnect(registry);
                return;
            }
        };
        if reply.close {
            // The next request, of this operation or another, reconnects.
            self.disconnect(registry);
        }
        if self.abandoning {
            // The operation was recorded when its step failed; this reply is not judged.
            self.abandoning = false;
            return;
        }
        if !shared.workload.case.chained() {
            judge(
                shared.settings,
                &mut self.totals,
                &self.received,
                &reply,
                self.ops,
            );
            self.record(shared, replied);
            return;
        }
        let step = self.step;
        let failure = if reply.status >= 400 {
            Some(ErrorKey::Http {
                status: reply.status,
                error_num: batch::error_num(reply.body(&self.received)),
            })
        } else {
            let body = reply.body(&self.received);
            match shared
                .workload
                .follow(step, body, &mut self.state, &mut self.op)
            {
                Ok(Next::Send) => {
                    self.step += 1;
                    self.write_op(shared);
                    self.phase = Phase::Follow;
                    return;
                }
                Ok(Next::Done) => None,
                Err(Unusable(message)) => Some(ErrorKey::Reply(message)),
            }
        };
        if let Some(key) = failure {
            self.totals.failures += self.ops;
            self.totals.error(key);
            if shared.workload.abandon(step, &mut self.state, &mut self.op) {
                self.abandoning = true;
                self.write_op(shared);
                self.phase = Phase::Follow;
            }
        }
        self.record(shared, replied);
    }

    /// Records the operation that just ended (its last reply came at `replied`).
    fn record(&mut self, shared: &Shared<'_>, replied: Instant) {
        let ops = self.ops;
        let totals = &mut self.totals;
        totals.service.record(replied - self.began);
        totals
            .latencies
            .record(replied - self.intended.unwrap_or(self.began));
        totals.operations += ops;
        for method in &self.batch_methods {
            *totals.by_method.entry(*method).or_default() += 1;
        }
        self.step = 0;
        shared.counter.done.fetch_add(ops, Ordering::Relaxed);
    }

    fn disconnect(&mut self, registry: &Registry) {
        if let Some(mut stream) = self.stream.take() {
            if let Some(mut tls) = self.tls.take() {
                // Best effort: the socket is dropped whatever the peer makes of it.
                tls.send_close_notify();
                let _ = tls.write_tls(&mut stream);
            }
            let _ = registry.deregister(&mut stream);
            let _ = stream.shutdown(Shutdown::Both);
        }
        self.wants_write = false;
    }

    fn finish_lane(&mut self, registry: &Registry) {
        self.phase = Phase::Done;
        self.disconnect(registry);
        self.totals.connects = self.connects;
        self.totals.finished = Some(Instant::now());
    }
}

/// The TLS handshake on a freshly connected (still blocking) socket, each read and write
/// bounded by `timeout`.
fn handshake(
    client: &quince_client::TlsClient,
    stream: &std::net::TcpStream,
    timeout: Duration,
) -> Result<Box<ClientConnection>, TransportError> {
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|e| TransportError::Connect(e.kind()))?;
    let mut session = client
        .session()
        .map_err(|e| TransportError::Tls(e.to_string()))?;
    let mut io = stream;
    while session.is_handshaking() {
        session
            .complete_io(&mut io)
            .map_err(|e| TransportError::from_io(e, TransportError::Connect))?;
    }
    Ok(Box::new(session))
}

/// Counts the failures a reply reports.
fn judge(settings: &Settings, totals: &mut Totals, buffer: &[u8], reply: &Response, ops: u64) {
    let body = reply.body(buffer);
    if reply.status >= 400 {
        totals.failures += ops;
        totals.error(ErrorKey::Http {
            status: reply.status,
            error_num: batch::error_num(body),
        });
        return;
    }
    if settings.batch_size == 0 {
        return;
    }
    let parts = match settings.batch_mode {
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
