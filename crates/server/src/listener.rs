//! The TCP listener: accepts connections within a bound and serves each with hyper.
//!
//! What it is: [`serve_connections`], the accept loop. Each connection is served by hyper
//! (HTTP/1.1 with keep-alive and pipelining, HTTP/1.0 keep-alive, h2c by prior knowledge) and
//! every request is handed to [`quince_api::Api::serve`] with its arrival time and the
//! connection's addresses as request extensions.
//!
//! What it is not: request semantics (the API decides every status code; a head hyper
//! cannot parse, or one beyond [`HEAD_SIZE_MAX`], ends the connection).
//!
//! Invariants: at most `max_connections` connections are open (a semaphore permit lives as
//! long as each connection task); once the stop signal is seen no new connection is
//! accepted, and each open one is told to finish its in-flight request and close.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper::Request;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use quince_api::{Api, Peer, Received};

use crate::idle;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};

/// The largest request head (request line and headers) hyper buffers. It is well above the
/// API's own limits (16 KiB of URL, 64 KiB of headers), so that clients going somewhat over
/// them get the API's 414 or 431 with an ArangoDB error body; heads beyond this bound make
/// hyper close the connection. It bounds each connection's read buffer.
pub const HEAD_SIZE_MAX: usize = 256 * 1024;

/// The most header lines in one request (beyond it hyper closes the connection).
pub const HEADER_COUNT_MAX: usize = 512;

/// How long a connection may go without receiving a byte before it is closed (gracefully: an
/// in-flight request still gets its reply): 300 s, ArangoDB's default
/// `--http.keep-alive-timeout`. It bounds how long an idle client holds a connection permit.
///
/// It is enforced by one coarse watchdog per connection ([`idle::watch`]) rather than by
/// hyper's per-request header timer: arming a timer for every request head cost about a tenth
/// of the throughput of small requests (measured with wrk on `/_api/version`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// The pause after a failed accept (out of file descriptors, say) before trying again, so a
/// persistent error does not spin a core.
const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(50);

/// Accepts connections until `stop` turns true. Every connection holds a permit of
/// `connections`; the caller waits for all permits to learn that every connection closed.
pub async fn serve_connections(
    listener: TcpListener,
    api: Arc<Api>,
    connections: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
) {
    let builder = Arc::new(http_builder());
    loop {
        let permit = tokio::select! {
            permit = connections.clone().acquire_owned() => {
                permit.expect("the connection semaphore is never closed")
            }
            _ = stopped(&mut stop) => break,
        };
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
        let api = api.clone();
        let builder = builder.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            serve_connection(stream, client, api, &builder, stop).await;
            drop(permit);
        });
    }
    tracing::info!(
        event = "listener.stopped",
        "no longer accepting connections"
    );
}

/// hyper's settings: keep-alive, pipelined replies flushed together, bounded heads.
fn http_builder() -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        .pipeline_flush(true)
        .max_buf_size(HEAD_SIZE_MAX)
        .max_headers(HEADER_COUNT_MAX)
        .timer(TokioTimer::new());
    builder
}

async fn serve_connection(
    stream: TcpStream,
    client: SocketAddr,
    api: Arc<Api>,
    builder: &auto::Builder<TokioExecutor>,
    mut stop: watch::Receiver<bool>,
) {
    // Replies are whole and small; Nagle's delay would only add latency to each of them.
    let _ = stream.set_nodelay(true);
    let server = stream.local_addr().unwrap_or(client);
    let peer = Peer { client, server };
    let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
        let api = api.clone();
        async move {
            req.extensions_mut().insert(Received(Instant::now()));
            req.extensions_mut().insert(peer);
            Ok::<_, Infallible>(api.serve(req).await)
        }
    });
    let (stream, activity) = idle::ActivityIo::new(stream);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    let mut connection = std::pin::pin!(connection);
    let outcome = tokio::select! {
        outcome = connection.as_mut() => outcome,
        _ = stopped(&mut stop) => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
        _ = idle::watch(&activity, IDLE_TIMEOUT) => {
            tracing::debug!(event = "connection.idle_timeout", %client);
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = outcome {
        tracing::debug!(event = "connection.error", %client, %error);
    }
}

/// Completes once the stop flag is true (or its sender is gone, which also means stop).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // The guard `wait_for` returns is dropped here, so no lock is held across an await.
    let _ = stop.wait_for(|stopping| *stopping).await.map(|_| ());
}
