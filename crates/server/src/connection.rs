//! What the server knows about one open connection, as the governor (`crate::governor`) sees
//! it: when it was opened and by whom, whether it proved who it is, what it is doing (idle
//! between requests, receiving a request head, running a request, waiting for a request body)
//! and since when, and the channel to tell it to close.
//!
//! What it is: [`Connection`] (shared state, all atomics, updated by the connection's own task
//! and read by the governor's sweeper), [`ActivityIo`] (the stream wrapper that notes reads),
//! [`TrackedBody`] (the request-body wrapper that notes waits and bytes, and can be cut), and
//! [`RequestGuard`] (marks a request running for as long as its service future lives).
//!
//! What it is not: policy. Which connection to close, and when, is the governor's.
//!
//! Invariants: times are milliseconds since the governor's start and only move forward; a
//! connection is "in a request" exactly while a service future for it exists; a head counts as
//! started only by bytes read while no request runs, and never on a connection that spoke
//! HTTP/2 (its reads between requests are frames); once cut, a tracked body yields an error,
//! never more data.

use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// How a connection is asked to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Close {
    /// Not asked.
    No = 0,
    /// Finish the request in flight (if any), then close.
    Graceful = 1,
    /// Close now, dropping whatever it was doing (only for connections not running a handler,
    /// or whose body was cut first).
    Now = 2,
}

/// The clock every connection's times are read from.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    started: Instant,
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Clock {
        Clock {
            started: Instant::now(),
        }
    }

    /// Milliseconds since the clock started (never 0, so 0 can mean "unset").
    pub fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64 + 1
    }
}

/// One open connection.
pub struct Connection {
    /// A number unique among the governor's connections.
    pub id: u64,
    /// The client's address.
    pub peer: IpAddr,
    /// When it was opened.
    pub opened_ms: u64,
    clock: Clock,
    /// Set once a request on it authenticated (with authentication off: once it sent one).
    trusted: Arc<AtomicBool>,
    /// Requests whose service future is alive (0 or 1 without pipelining).
    requests: AtomicU64,
    /// When the last request ended (or the connection opened): idle since then.
    idle_since_ms: AtomicU64,
    /// The first read since the connection went idle: a request head started to arrive.
    head_started_ms: AtomicU64,
    /// Set once the client spoke HTTP/2 (its connection preface arrived): its reads between
    /// requests are frames (SETTINGS acknowledgements, PINGs, WINDOW_UPDATEs), not the start
    /// of a request head, so they never start the slow-head clock.
    multiplexed: AtomicBool,
    /// The last read of any bytes.
    last_read_ms: AtomicU64,
    /// The body of the running request, while it is being read.
    body: Mutex<Option<Arc<BodyState>>>,
    /// What the governor asked ([`Close`] as a byte).
    close: AtomicU8,
    /// Woken when `close` changes.
    close_notify: Notify,
}

impl Connection {
    /// A connection from `peer`, opened now.
    pub fn new(id: u64, peer: IpAddr, clock: Clock) -> Connection {
        let now = clock.now_ms();
        Connection {
            id,
            peer,
            opened_ms: now,
            clock,
            trusted: Arc::new(AtomicBool::new(false)),
            requests: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(now),
            head_started_ms: AtomicU64::new(0),
            multiplexed: AtomicBool::new(false),
            last_read_ms: AtomicU64::new(now),
            body: Mutex::new(None),
            close: AtomicU8::new(Close::No as u8),
            close_notify: Notify::new(),
        }
    }

    /// The flag the API sets once a request on this connection authenticated.
    pub fn trust_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.trusted)
    }

    /// True once a request on it authenticated.
    pub fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    /// True while a request runs on it.
    pub fn in_request(&self) -> bool {
        self.requests.load(Ordering::Acquire) > 0
    }

    /// Since when it has been idle (no request running), if it is.
    pub fn idle_since(&self) -> Option<u64> {
        (!self.in_request()).then(|| self.idle_since_ms.load(Ordering::Acquire))
    }

    /// Since when a request head has been arriving without becoming a request, if one is.
    pub fn head_started(&self) -> Option<u64> {
        match self.head_started_ms.load(Ordering::Acquire) {
            0 => None,
            at => (!self.in_request()).then_some(at),
        }
    }

    /// When bytes last arrived.
    pub fn last_read(&self) -> u64 {
        self.last_read_ms.load(Ordering::Acquire)
    }

    /// The body of the running request, while it is read.
    pub fn body(&self) -> Option<Arc<BodyState>> {
        self.body.lock().clone()
    }

    /// Records a read of some bytes.
    fn note_read(&self, bytes: &[u8]) {
        let now = self.clock.now_ms();
        self.last_read_ms.fetch_max(now, Ordering::AcqRel);
        if self.multiplexed.load(Ordering::Acquire) {
            return;
        }
        if !self.in_request() && bytes.starts_with(HTTP2_PREFACE_START) {
            // HTTP/2 by prior knowledge, after ALPN h2, or after a 101 to `Upgrade: h2c`: the
            // preface starts the connection's HTTP/2 life. (No HTTP/1.1 head starts so: `PRI`
            // is the preface's own method.)
            self.multiplexed.store(true, Ordering::Release);
            return;
        }
        if !self.in_request() {
            // The first bytes since the connection went idle start a head.
            let _ =
                self.head_started_ms
                    .compare_exchange(0, now, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// Marks a request running until the guard is dropped; `body` tracks its body.
    pub fn request_started(self: &Arc<Self>, body: Arc<BodyState>) -> RequestGuard {
        self.requests.fetch_add(1, Ordering::AcqRel);
        self.head_started_ms.store(0, Ordering::Release);
        *self.body.lock() = Some(body);
        RequestGuard {
            connection: Arc::clone(self),
        }
    }

    /// Asks the connection to close (a stronger request wins).
    pub fn request_close(&self, how: Close) {
        let before = self.close.fetch_max(how as u8, Ordering::AcqRel);
        if before < how as u8 {
            self.close_notify.notify_waiters();
        }
    }

    /// What was asked so far.
    pub fn close_requested(&self) -> Close {
        match self.close.load(Ordering::Acquire) {
            0 => Close::No,
            1 => Close::Graceful,
            _ => Close::Now,
        }
    }

    /// Completes when a close stronger than `seen` is asked; returns it.
    pub async fn closed(&self, seen: Close) -> Close {
        loop {
            let notified = self.close_notify.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            let now = self.close_requested();
            if now as u8 > seen as u8 {
                return now;
            }
            notified.await;
        }
    }
}

/// Marks a request running on its connection for as long as it lives.
pub struct RequestGuard {
    connection: Arc<Connection>,
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let connection = &self.connection;
        *connection.body.lock() = None;
        connection
            .idle_since_ms
            .store(connection.clock.now_ms(), Ordering::Release);
        connection.requests.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A stream that notes on its [`Connection`] when bytes arrive.
pub struct ActivityIo<S> {
    inner: S,
    connection: Arc<Connection>,
}

impl<S> ActivityIo<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, connection: Arc<Connection>) -> Self {
        ActivityIo { inner, connection }
    }
}

/// The start of HTTP/2's client connection preface (RFC 9113 section 3.4).
const HTTP2_PREFACE_START: &[u8] = b"PRI * HTTP/2.0";

impl<S: AsyncRead + Unpin> AsyncRead for ActivityIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.connection.note_read(&buf.filled()[before..]);
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ActivityIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// What is known about a request body while it is read.
#[derive(Default)]
pub struct BodyState {
    /// Bytes received so far.
    bytes: AtomicU64,
    /// Milliseconds spent waiting for the client so far (finished waits).
    waited_ms: AtomicU64,
    /// When the current wait for the client began (0: not waiting).
    waiting_since_ms: AtomicU64,
    /// Set by the governor: the body is too slow and is cut.
    cut: AtomicBool,
    /// The task waiting for the body, to wake when it is cut.
    waker: Mutex<Option<Waker>>,
}

impl BodyState {
    /// Bytes received so far, and milliseconds the server has waited for them (the current
    /// wait included).
    pub fn progress(&self, now_ms: u64) -> (u64, u64) {
        let since = self.waiting_since_ms.load(Ordering::Acquire);
        let current = if since == 0 {
            0
        } else {
            now_ms.saturating_sub(since)
        };
        (
            self.bytes.load(Ordering::Acquire),
            self.waited_ms.load(Ordering::Acquire) + current,
        )
    }

    /// Cuts the body: the reader gets an error instead of more bytes.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        if let Some(waker) = self.waker.lock().take() {
            waker.wake();
        }
    }
}

/// The error of a body the governor cut.
#[derive(Debug)]
pub enum TrackedBodyError {
    /// The underlying body failed.
    Inner(hyper::Error),
    /// The client sent it too slowly.
    TooSlow,
}

impl std::fmt::Display for TrackedBodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrackedBodyError::Inner(e) => e.fmt(f),
            TrackedBodyError::TooSlow => f.write_str("the request body arrives too slowly"),
        }
    }
}

/// A request body that notes its progress in a [`BodyState`] and stops when cut.
pub struct TrackedBody<B> {
    inner: B,
    state: Arc<BodyState>,
    clock: Clock,
}

impl<B> TrackedBody<B> {
    /// Wraps `inner`, reporting to `state`.
    pub fn new(inner: B, state: Arc<BodyState>, clock: Clock) -> Self {
        TrackedBody {
            inner,
            state,
            clock,
        }
    }
}

impl<B> Body for TrackedBody<B>
where
    B: Body<Data = Bytes, Error = hyper::Error> + Unpin,
{
    type Data = Bytes;
    type Error = TrackedBodyError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, TrackedBodyError>>> {
        if self.state.cut.load(Ordering::Acquire) {
            return Poll::Ready(Some(Err(TrackedBodyError::TooSlow)));
        }
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        let state = Arc::clone(&self.state);
        let since = state.waiting_since_ms.load(Ordering::Acquire);
        match &polled {
            Poll::Pending => {
                *state.waker.lock() = Some(cx.waker().clone());
                if since == 0 {
                    state
                        .waiting_since_ms
                        .store(self.clock.now_ms(), Ordering::Release);
                }
                // Cut between the check above and registering the waker: report it now.
                if state.cut.load(Ordering::Acquire) {
                    return Poll::Ready(Some(Err(TrackedBodyError::TooSlow)));
                }
            }
            Poll::Ready(frame) => {
                if since != 0 {
                    let waited = self.clock.now_ms().saturating_sub(since);
                    state.waited_ms.fetch_add(waited, Ordering::AcqRel);
                    state.waiting_since_ms.store(0, Ordering::Release);
                }
                if let Some(Ok(frame)) = frame {
                    if let Some(data) = frame.data_ref() {
                        state.bytes.fetch_add(data.len() as u64, Ordering::AcqRel);
                    }
                }
            }
        }
        polled.map(|frame| frame.map(|f| f.map_err(TrackedBodyError::Inner)))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
