//! The TCP listener: accepts connections within the governor's bounds and serves each with
//! hyper.
//!
//! What it is: [`serve_connections`], the accept loop. Each connection is served by hyper
//! (HTTP/1.1 with keep-alive and pipelining, HTTP/1.0 keep-alive, h2c by prior knowledge or
//! by `Upgrade: h2c`, see `crate::h2c`) and
//! every request is handed to [`quince_api::Api::serve`] with its arrival time, the
//! connection's addresses and its trust flag as request extensions, and its body wrapped so the
//! governor can see (and cut) a body that arrives too slowly. On an ssl:// endpoint the
//! connection's own task first completes the TLS handshake ([`crate::tls`]), with the
//! configuration in use when the connection was accepted, and then serves it the same way.
//!
//! What it is not: request semantics (the API decides every status code; a head hyper cannot
//! parse is answered 400 by hyper and the connection closed; one beyond [`HEAD_SIZE_MAX`] ends
//! the connection), or who may keep a connection (`crate::governor`).
//!
//! Invariants: every connection holds one of the governor's permits for as long as its task
//! lives, and is registered with it (and counted in the API's client connection metrics) for
//! as long; a place is made only for a connection already
//! accepted (at most one accepted socket waits for its place, which the descriptor budget's
//! reserve covers), so the governor never evicts anyone for a connection that has not come; once the stop signal is seen no new
//! connection is accepted, and each open one is told to finish its in-flight request and
//! close; a connection the governor closes "now" runs no handler (a running one gets its body
//! cut and closes after its reply).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use quince_api::{Api, ConnectionTrust, OpenConnection, Peer, Received};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit};
use tokio_rustls::TlsAcceptor;

use crate::connection::{ActivityIo, BodyState, Close, Connection, TrackedBody};
use crate::governor::Governor;
use crate::h2c;
use crate::tls::{self, TlsServer};

/// The largest request head (request line and headers) hyper buffers. It is well above the
/// API's own limits (16 KiB of URL, 64 KiB of headers), so that clients going somewhat over
/// them get the API's 414 or 431 with an ArangoDB error body; heads beyond this bound make
/// hyper close the connection. It bounds each connection's read buffer.
pub const HEAD_SIZE_MAX: usize = 256 * 1024;

/// The most header lines in one request (beyond it hyper closes the connection).
pub const HEADER_COUNT_MAX: usize = 512;

/// The pause after a failed accept (out of file descriptors, say) before trying again, so a
/// persistent error does not spin a core.
const ACCEPT_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Accepts connections until `stop` turns true. Every connection holds a permit of the
/// governor; the caller waits for all permits to learn that every connection closed. With
/// `tls`, each connection's task first completes the TLS handshake ([`crate::tls`]).
pub async fn serve_connections(
    listener: TcpListener,
    api: Arc<Api>,
    governor: Arc<Governor>,
    tls: Option<Arc<TlsServer>>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(http_builder());
    loop {
        // Accept first, then make a place: a place made ahead of a connection that has not
        // arrived would evict the newest idle connection (an administrator's, before its first
        // request was read) for nobody.
        let (stream, client) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(pair) => pair,
                Err(error) => {
                    tracing::warn!(event = "listener.accept_failed", %error);
                    tokio::time::sleep(ACCEPT_RETRY_PAUSE).await;
                    continue;
                }
            },
            _ = stopped(&mut stop) => break,
        };
        let permit = tokio::select! {
            permit = governor.place() => permit,
            _ = stopped(&mut stop) => break,
        };
        let connection = governor.register(client.ip());
        let counted = api.connection_opened();
        let served = Served {
            api: api.clone(),
            builder: builder.clone(),
            governor: governor.clone(),
            connection,
            _permit: permit,
            _counted: counted,
        };
        let acceptor = tls.as_ref().map(|tls| tls.acceptor());
        tokio::spawn(served.run(stream, client, acceptor, stop.clone()));
    }
    tracing::info!(
        event = "listener.stopped",
        "no longer accepting connections"
    );
}

/// hyper's settings: keep-alive, bounded heads. Pipelined replies are not aggregated into one
/// flush (`pipeline_flush`): with it, hyper never sends the 400 it writes for a request it
/// cannot parse. hyper's own head timer is off: it also runs while a keep-alive connection
/// waits for its next request, and would close every idle connection after its 30 s default
/// whatever `--http.keep-alive-timeout` says; the governor times heads (from their first
/// byte) and idleness itself.
fn http_builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        .pipeline_flush(false)
        .max_buf_size(HEAD_SIZE_MAX)
        .max_headers(HEADER_COUNT_MAX)
        .header_read_timeout(None)
        .timer(TokioTimer::new());
    builder
}

/// One accepted connection and what it holds until it ends.
struct Served {
    api: Arc<Api>,
    builder: Arc<auto::Builder<TokioExecutor>>,
    governor: Arc<Governor>,
    connection: Arc<Connection>,
    /// Its place among the open connections.
    _permit: OwnedSemaphorePermit,
    /// Its count in the client connection metrics, for as long as it lives.
    _counted: OpenConnection,
}

impl Served {
    async fn run(
        self,
        stream: TcpStream,
        client: SocketAddr,
        tls: Option<TlsAcceptor>,
        mut stop: watch::Receiver<bool>,
    ) {
        // Replies are whole and small; Nagle's delay would only add latency to each of them.
        let _ = stream.set_nodelay(true);
        let server = stream.local_addr().unwrap_or(client);
        let peer = Peer { client, server };
        match tls {
            None => self.serve(stream, peer, Upgrades::H2c, &mut stop).await,
            Some(acceptor) => {
                // The handshake runs here, in the connection's own task, holding its place;
                // a stop or an eviction meanwhile just drops it.
                let handshake = tokio::select! {
                    handshake = tls::handshake(acceptor, stream) => handshake,
                    _ = stopped(&mut stop) => None,
                    _ = self.connection.closed(Close::No) => None,
                };
                if let Some(stream) = handshake {
                    self.serve(stream, peer, Upgrades::None, &mut stop).await;
                }
            }
        }
        self.governor.deregister(self.connection.id);
    }

    /// Serves HTTP on `stream` (plain TCP, or TLS after its handshake) until it closes.
    async fn serve<S>(
        &self,
        stream: S,
        peer: Peer,
        upgrades: Upgrades,
        stop: &mut watch::Receiver<bool>,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let client = peer.client;
        let trust = ConnectionTrust(self.connection.trust_flag());
        let (api, connection, clock) = (
            self.api.clone(),
            self.connection.clone(),
            self.governor.clock(),
        );
        let upgrade = h2c::Slot::default();
        let slot = upgrade.clone();
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            let (api, connection, trust) = (api.clone(), connection.clone(), trust.clone());
            let switching = match upgrades {
                Upgrades::H2c => h2c::switch(&slot, &mut req),
                Upgrades::None => None,
            };
            async move {
                if let Some(reply) = switching {
                    return Ok(reply);
                }
                let body = Arc::new(BodyState::default());
                let _running = connection.request_started(Arc::clone(&body));
                req.extensions_mut().insert(Received(Instant::now()));
                req.extensions_mut().insert(peer);
                req.extensions_mut().insert(trust);
                let req = req.map(|incoming| TrackedBody::new(incoming, body, clock));
                Ok::<_, Infallible>(api.serve(req).await)
            }
        });
        let io = ActivityIo::new(stream, self.connection.clone());
        let http = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(io), service.clone());
        let mut http = std::pin::pin!(http);
        let outcome = tokio::select! {
            outcome = http.as_mut() => outcome,
            _ = stopped(stop) => {
                http.as_mut().graceful_shutdown();
                http.await
            }
            how = self.connection.closed(Close::No) => match how {
                // Nothing runs on it (the governor only closes such connections now).
                Close::Now => Ok(()),
                _ => {
                    http.as_mut().graceful_shutdown();
                    http.await
                }
            }
        };
        if let Err(error) = outcome {
            tracing::debug!(event = "connection.error", %client, %error);
        }
        if let Some(upgrading) = upgrade.take() {
            let served = h2c::serve(upgrading, service, stop, &self.connection).await;
            if let Err(error) = served {
                tracing::debug!(event = "connection.error", %client, %error);
            }
        }
    }
}

/// Which protocol switches a connection offers on an HTTP/1.1 request.
#[derive(Clone, Copy)]
enum Upgrades {
    /// `Upgrade: h2c` (plain TCP: RFC 7540 section 3.2).
    H2c,
    /// None: over TLS, HTTP/2 is chosen by ALPN in the handshake, never by an upgrade.
    None,
}

/// Completes once the stop flag is true (or its sender is gone, which also means stop).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, so no lock is held across an await.
    let _ = stop.wait_for(|stopping| *stopping).await.map(|_| ());
}
