//! The connection governor: who may hold a connection, and for how long.
//!
//! What it is: [`Governor`], shared by the accept loop and every connection task. It bounds
//! open connections (a semaphore of `max_connections` permits, which the descriptor budget
//! sized), keeps a registry of them, and closes the ones that hold a place without earning it:
//! - a connection is *untrusted* until a request on it authenticates (with authentication off,
//!   until it sends one); untrusted connections from one address are bounded
//!   ([`Limits::untrusted_per_peer_max`]): past it, that address's least valuable untrusted
//!   connection is closed;
//! - when every place is taken, a new connection is let in by closing the least valuable
//!   untrusted connection anywhere (idle ones first, oldest first; then the slowest body), so
//!   untrusted connections can never hold the whole budget: an administrator (or any client
//!   that authenticates at once) always gets in, and once authenticated is never evicted;
//! - a sweeper closes, about once a second: a connection whose request head has been arriving
//!   for longer than [`Limits::head_timeout`] (slowloris), an idle connection past its
//!   keep-alive time (shorter for untrusted ones), and cuts a request body that arrives slower
//!   than [`Limits::body_min_rate`] once the server has waited [`Limits::body_grace`] for it
//!   (the reader gets an error, the request answers it, the connection closes).
//!
//! What it is not: the request queue (`--server.maximal-queue-size`, in the API) or the
//! request semantics: it never looks inside a request.
//!
//! Invariants: at most `max_connections` connections are open (a permit lives as long as each
//! connection task); a trusted connection is never closed by the governor except after its
//! keep-alive time; a running handler is never dropped (a body is cut through its reader and
//! the close waits for the reply); the sweeper's work is O(connections) per pass, one pass a
//! second.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::connection::{Clock, Close, Connection};

/// How often the sweeper looks at every connection.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// The governor's bounds.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Open connections at once.
    pub max_connections: usize,
    /// Untrusted connections one address may hold.
    pub untrusted_per_peer_max: usize,
    /// How long a trusted connection may stay idle (`--http.keep-alive-timeout`).
    pub keep_alive: Duration,
    /// How long an untrusted connection may stay idle.
    pub untrusted_idle: Duration,
    /// How long a request head may take to arrive, from its first byte.
    pub head_timeout: Duration,
    /// How long the server waits for a body before its rate is judged.
    pub body_grace: Duration,
    /// The slowest a body may arrive, in bytes per second of waiting for it.
    pub body_min_rate: u64,
}

impl Limits {
    /// The defaults for `max_connections` connections and a keep-alive time of `keep_alive`.
    pub fn new(max_connections: usize, keep_alive: Duration) -> Limits {
        Limits {
            max_connections,
            untrusted_per_peer_max: (max_connections / 4).max(16),
            keep_alive,
            untrusted_idle: keep_alive.min(Duration::from_secs(30)),
            head_timeout: Duration::from_secs(10),
            body_grace: Duration::from_secs(10),
            body_min_rate: 1024,
        }
    }
}

/// The connections of the server and the rules they live by.
pub struct Governor {
    clock: Clock,
    limits: Limits,
    /// One permit per open connection.
    permits: Arc<Semaphore>,
    /// Every open connection by id.
    connections: Mutex<HashMap<u64, Arc<Connection>>>,
    next_id: AtomicU64,
}

/// Why a connection was closed, for the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Its head took too long.
    SlowHead,
    /// Its body arrived too slowly.
    SlowBody,
    /// It was idle too long.
    Idle,
    /// Its place went to a newer connection.
    Evicted,
}

impl Governor {
    /// A governor with these bounds.
    pub fn new(limits: Limits) -> Arc<Governor> {
        Arc::new(Governor {
            clock: Clock::new(),
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            limits,
            connections: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        })
    }

    /// The clock connections' times are read from.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The permits of open connections (shutdown waits for all of them).
    pub fn permits(&self) -> &Arc<Semaphore> {
        &self.permits
    }

    /// A place for a new connection: at once when one is free; else the least valuable
    /// untrusted connection is closed to make one, and this waits for it (or, when every
    /// connection is trusted, for any connection to close).
    pub async fn place(&self) -> OwnedSemaphorePermit {
        if let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() {
            return permit;
        }
        if let Some(victim) = self.least_valuable(None) {
            self.close(&victim, Reason::Evicted);
        }
        Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .expect("the connection semaphore is never closed")
    }

    /// Registers a connection from `peer`; closes that address's least valuable untrusted
    /// connection when it now holds too many.
    pub fn register(&self, peer: IpAddr) -> Arc<Connection> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let connection = Arc::new(Connection::new(id, peer, self.clock));
        let untrusted_of_peer = {
            let mut connections = self.connections.lock();
            connections.insert(id, Arc::clone(&connection));
            connections
                .values()
                .filter(|c| c.peer == peer && !c.is_trusted())
                .count()
        };
        if untrusted_of_peer > self.limits.untrusted_per_peer_max {
            if let Some(victim) = self.least_valuable(Some((peer, id))) {
                self.close(&victim, Reason::Evicted);
            }
        }
        connection
    }

    /// Forgets a connection that ended.
    pub fn deregister(&self, id: u64) {
        self.connections.lock().remove(&id);
    }

    /// The untrusted connection whose loss costs least (of `peer` only, and not `except`, when
    /// given): an idle one (oldest first), else the one whose body arrives slowest. Trusted
    /// connections, and requests whose handler runs with its body read, are never chosen.
    fn least_valuable(&self, only: Option<(IpAddr, u64)>) -> Option<Arc<Connection>> {
        let now = self.clock.now_ms();
        let connections = self.connections.lock();
        let candidates = connections.values().filter(|c| {
            !c.is_trusted()
                && c.close_requested() == Close::No
                && only.is_none_or(|(peer, except)| c.peer == peer && c.id != except)
        });
        let mut idle: Option<&Arc<Connection>> = None;
        let mut slow: Option<(&Arc<Connection>, f64)> = None;
        for c in candidates {
            if c.idle_since().is_some() {
                if idle.is_none_or(|best| (c.opened_ms, c.id) < (best.opened_ms, best.id)) {
                    idle = Some(c);
                }
            } else if let Some(body) = c.body() {
                let (bytes, waited) = body.progress(now);
                let rate = bytes as f64 / (waited.max(1) as f64);
                if slow.is_none_or(|(_, best)| rate < best) {
                    slow = Some((c, rate));
                }
            }
        }
        idle.or(slow.map(|(c, _)| c)).cloned()
    }

    /// Closes `connection`: at once when it runs no request; else its body is cut and it closes
    /// after answering.
    fn close(&self, connection: &Connection, reason: Reason) {
        tracing::debug!(
            event = "connection.closed_by_governor",
            id = connection.id,
            peer = %connection.peer,
            ?reason
        );
        match connection.body() {
            Some(body) if connection.in_request() => {
                body.cut();
                connection.request_close(Close::Graceful);
            }
            _ if connection.in_request() => connection.request_close(Close::Graceful),
            _ => connection.request_close(Close::Now),
        }
    }

    /// One pass of the sweeper over every connection.
    pub fn sweep(&self) {
        let now = self.clock.now_ms();
        let ms = |d: Duration| d.as_millis() as u64;
        let connections: Vec<Arc<Connection>> = self.connections.lock().values().cloned().collect();
        for c in connections {
            if c.close_requested() != Close::No {
                continue;
            }
            if let Some(started) = c.head_started() {
                if now.saturating_sub(started) > ms(self.limits.head_timeout) {
                    self.close(&c, Reason::SlowHead);
                }
                continue;
            }
            if let Some(idle_since) = c.idle_since() {
                let quiet = now.saturating_sub(idle_since.max(c.last_read()));
                let limit = if c.is_trusted() {
                    self.limits.keep_alive
                } else {
                    self.limits.untrusted_idle
                };
                if quiet > ms(limit) {
                    self.close(&c, Reason::Idle);
                }
                continue;
            }
            if let Some(body) = c.body() {
                let (bytes, waited) = body.progress(now);
                let too_slow = waited > ms(self.limits.body_grace)
                    && bytes.saturating_mul(1000) < self.limits.body_min_rate * waited;
                if too_slow {
                    self.close(&c, Reason::SlowBody);
                }
            }
        }
    }

    /// Sweeps every [`SWEEP_INTERVAL`] until `stop` turns true.
    pub async fn run_sweeper(self: Arc<Self>, mut stop: tokio::sync::watch::Receiver<bool>) {
        let mut ticks = tokio::time::interval(SWEEP_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => self.sweep(),
                _ = stop.wait_for(|stopping| *stopping) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::BodyState;

    fn limits() -> Limits {
        Limits {
            max_connections: 4,
            untrusted_per_peer_max: 2,
            keep_alive: Duration::from_secs(300),
            untrusted_idle: Duration::from_secs(30),
            head_timeout: Duration::from_secs(10),
            body_grace: Duration::from_secs(10),
            body_min_rate: 1024,
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[tokio::test(start_paused = true)]
    async fn untrusted_connections_of_one_address_are_bounded() {
        let g = Governor::new(limits());
        let trusted = g.register(ip(1));
        trusted.trust_flag().store(true, Ordering::Release);
        let first = g.register(ip(1));
        let second = g.register(ip(1));
        assert_eq!(first.close_requested(), Close::No);
        let _third = g.register(ip(1));
        // Two untrusted allowed per address: the oldest idle one goes, the trusted one stays.
        assert_eq!(first.close_requested(), Close::Now);
        assert_eq!(second.close_requested(), Close::No);
        assert_eq!(trusted.close_requested(), Close::No);
        // Another address is not affected.
        let other = g.register(ip(2));
        assert_eq!(other.close_requested(), Close::No);
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_server_lets_a_new_connection_in_by_closing_an_untrusted_one() {
        let g = Governor::new(limits());
        let mut held = Vec::new();
        let mut conns = Vec::new();
        for last in 0..4 {
            held.push(g.place().await);
            let c = g.register(ip(10 + last));
            if last < 3 {
                c.trust_flag().store(true, Ordering::Release);
            }
            conns.push(c);
        }
        // Full: the next place closes the one untrusted connection and waits for its permit.
        let waiting = {
            let g = Arc::clone(&g);
            tokio::spawn(async move { g.place().await })
        };
        tokio::task::yield_now().await;
        assert_eq!(conns[3].close_requested(), Close::Now);
        assert!(conns[..3].iter().all(|c| c.close_requested() == Close::No));
        drop(held.pop());
        let _placed = waiting.await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn the_sweeper_closes_slow_heads_idle_connections_and_slow_bodies() {
        let g = Governor::new(limits());
        let idle = g.register(ip(1));
        let trusted_idle = g.register(ip(2));
        trusted_idle.trust_flag().store(true, Ordering::Release);
        tokio::time::advance(Duration::from_secs(31)).await;
        g.sweep();
        assert_eq!(idle.close_requested(), Close::Now);
        assert_eq!(trusted_idle.close_requested(), Close::No);

        let slow_body = g.register(ip(3));
        let body = Arc::new(BodyState::default());
        let _request = slow_body.request_started(Arc::clone(&body));
        // A body reader that has waited 11 s for nothing.
        let mut tracked = crate::connection::TrackedBody::new(Never, body, g.clock());
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let mut poll = || hyper::body::Body::poll_frame(std::pin::Pin::new(&mut tracked), &mut cx);
        assert!(poll().is_pending());
        tokio::time::advance(Duration::from_secs(11)).await;
        g.sweep();
        assert_eq!(slow_body.close_requested(), Close::Graceful);
        assert!(matches!(poll(), std::task::Poll::Ready(Some(Err(_)))));
    }

    /// Reads `bytes` through an [`ActivityIo`] of `connection`, as the listener does.
    async fn arrive(connection: &Arc<crate::connection::Connection>, bytes: &[u8]) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut client, server) = tokio::io::duplex(1024);
        client.write_all(bytes).await.unwrap();
        let mut io = crate::connection::ActivityIo::new(server, Arc::clone(connection));
        let mut buf = vec![0u8; bytes.len()];
        io.read_exact(&mut buf).await.unwrap();
    }

    /// An HTTP/2 client's frames between requests (a SETTINGS acknowledgement, a PING) are
    /// not a slow request head: such a connection used to be closed 10 s after its last
    /// request, while an HTTP/1.1 head that stalls still is.
    #[tokio::test(start_paused = true)]
    async fn frames_between_http2_requests_are_not_a_slow_head() {
        let g = Governor::new(limits());
        let h2 = g.register(ip(1));
        h2.trust_flag().store(true, Ordering::Release);
        arrive(&h2, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0").await;
        drop(h2.request_started(Arc::new(BodyState::default())));
        // A SETTINGS acknowledgement after the request.
        arrive(&h2, b"\0\0\0\x04\x01\0\0\0\0").await;
        let h1 = g.register(ip(2));
        h1.trust_flag().store(true, Ordering::Release);
        arrive(&h1, b"GET /_api/version HT").await;
        tokio::time::advance(Duration::from_secs(11)).await;
        g.sweep();
        assert_eq!(h2.close_requested(), Close::No);
        assert_eq!(h1.close_requested(), Close::Now);
    }

    /// A request body whose bytes never come.
    struct Never;

    impl hyper::body::Body for Never {
        type Data = bytes::Bytes;
        type Error = hyper::Error;
        fn poll_frame(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, hyper::Error>>>
        {
            std::task::Poll::Pending
        }
    }
}
