//! The request pipeline: [`Api::serve`], in the order of ArangoDB's HTTP API documentation
//! ("General request handling").
//!
//! What it is: one `async fn` per request that checks, in order, whether the server is
//! stopping (503/30), the URL length (414), the size of the headers (431), the credentials,
//! the database of the `/_db/{name}/` prefix (404/1228 for root, 401 for anyone else), the
//! path's access rule (401/11), the client's queue-time limit (412/21004), the bound on
//! requests in flight and queued jobs (503/21003), whether any route serves the path (404,
//! before the body is read) and the body's size and encoding (413, 415), then either queues
//! the request as an asynchronous job (`x-arango-async`, see `crate::async_exec`) or calls
//! the route's handler, compresses the reply when `--http.compress-response-threshold` is on
//! and the client accepts gzip or deflate (`crate::compression`), and adds the headers every
//! reply carries. Paths under the static mount
//! (`--http.static-dir`) leave after the header checks, without credentials.
//! [`Api::execute`] is the post-check half on its own, for jobs and batch parts.
//!
//! What it reads from the router, at fixed points of that order: whether the path needs
//! credentials, whether it is in the fast lane outside the queue bound, whether a route serves
//! it, and whether its body streams to the route (with the route's own bound) or is read
//! whole; the route applies its own permission policy when called. The pipeline names no
//! endpoint family.
//!
//! What it is not: a listener. The `quince` binary owns sockets and hyper connections and
//! passes what it knows about them in request extensions ([`Received`], [`Peer`]). Nor the
//! shared state: [`Api`] and what it holds are defined in `crate::state`; this module adds the
//! methods that serve requests.
//!
//! Invariants: every reply, error or not, leaves through [`Api::serve`] and so carries
//! `server`, `x-content-type-options`, `x-arango-queue-time-seconds` and a whole body (hence a
//! Content-Length); the in-flight count is released on every path out (a guard drops it).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, CONNECTION, WWW_AUTHENTICATE};
use http::{Extensions, HeaderName, Method, Request, Response, Version};
use http_body_util::{BodyExt, Full};
use hyper::body::Body;
use quince_errors::{
    ArangoError, FORBIDDEN, HTTP_BAD_PARAMETER, HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
    HTTP_REQUEST_URI_TOO_LONG, INTERNAL, QUEUE_TIME_REQUIREMENT_VIOLATED, SHUTTING_DOWN,
};

use crate::error::{error_response, unauthorized, unknown_path};
use crate::metrics::RequestRecord;
use crate::path::{parse_target, Target};
use crate::permission::{self, Caller};
use crate::request::ApiRequest;
use crate::response::ApiResponse;
use crate::state::{Api, ConnectionTrust, Peer, Received, Routed};
use crate::{async_exec, auth, body, compression, forwarding, limits, router};

/// What the pipeline learned about a request, for the reply's headers.
struct Timing {
    /// When the request was received.
    received: Instant,
    /// How long it waited before its handler started (set when the handler starts).
    queued: Option<Duration>,
    /// How long reading its body took (when the pipeline read it whole).
    body_read: Duration,
    /// Its head's bytes (in HTTP/1.1 form).
    head_bytes: u64,
    /// Its body's bytes as they came (its declared length when the route streams it).
    body_bytes: u64,
    /// It was queued as an asynchronous job.
    asynchronous: bool,
    /// The request's framing cannot be trusted (its body could not be read, or it declared
    /// both Content-Length and Transfer-Encoding): the reply closes the connection, since where
    /// the next request starts is unknown.
    close_connection: bool,
}

impl Api {
    /// Shutdown's last step for asynchronous work: runs the queued jobs to their end within
    /// `timeout`, then drops (and logs, with their ids) the ones that never started and waits
    /// for the running ones. Call after [`Api::begin_shutdown`], before the runtime stops.
    pub async fn finish_jobs(&self, timeout: Duration) {
        async_exec::drain(self, timeout).await;
    }

    /// Runs a request that passed the pipeline's checks through the router, as a synchronous
    /// request would be run; errors and panics become replies.
    pub(crate) async fn execute(&self, routed: Routed) -> ApiResponse {
        let Routed {
            request,
            segments,
            uri,
            extensions,
        } = routed;
        let method = request.method.clone();
        let outcome = {
            let running =
                std::pin::pin!(router::dispatch(self, request, segments, &uri, &extensions));
            CatchPanic { inner: running }.await
        };
        match outcome {
            Ok(Ok(reply)) => reply,
            Ok(Err(err)) => render_error(&err, true),
            Err(message) => {
                tracing::error!(event = "api.handler_panicked", %method, %message);
                error_response(&ArangoError::with_message(
                    INTERNAL,
                    "internal error while processing the request",
                ))
            }
        }
    }

    /// Answers one request.
    pub async fn serve<B>(&self, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: std::fmt::Display,
    {
        let received = req
            .extensions()
            .get::<Received>()
            .map_or_else(Instant::now, |r| r.0);
        let method = req.method().clone();
        let version = req.version();
        let http10_keep_alive = req.version() == Version::HTTP_10 && wants_keep_alive(&req);
        let omit_www_authenticate = req.headers().contains_key("x-omit-www-authenticate");
        let compress_threshold = self.config().compress_response_threshold;
        let coding = match compress_threshold {
            0 => None,
            _ => compression::negotiate(req.headers()),
        };
        let mut timing = Timing {
            received,
            queued: None,
            body_read: Duration::ZERO,
            head_bytes: 0,
            body_bytes: 0,
            asynchronous: false,
            close_connection: false,
        };
        let outcome = {
            let processing = std::pin::pin!(self.process(req, &mut timing));
            CatchPanic { inner: processing }.await
        };
        let reply = match outcome {
            Ok(Ok(reply)) => reply,
            Ok(Err(err)) => render_error(&err, omit_www_authenticate),
            Err(message) => {
                tracing::error!(event = "api.handler_panicked", %method, %message);
                error_response(&ArangoError::with_message(
                    INTERNAL,
                    "internal error while processing the request",
                ))
            }
        };
        let reply = match compress_threshold {
            0 => reply,
            threshold => compress_reply(reply, &method, threshold, coding).await,
        };
        self.finish(reply, &method, version, &timing, http10_keep_alive)
    }

    async fn process<B>(
        &self,
        req: Request<B>,
        timing: &mut Timing,
    ) -> Result<ApiResponse, ArangoError>
    where
        B: Body<Data = Bytes> + Send,
        B::Error: std::fmt::Display,
    {
        if self.is_stopping() {
            return Err(ArangoError::new(SHUTTING_DOWN));
        }
        let (parts, body) = req.into_parts();
        if parts.headers.contains_key(http::header::CONTENT_LENGTH)
            && parts.headers.contains_key(http::header::TRANSFER_ENCODING)
        {
            // RFC 9112 6.1: such a message "ought to be handled as an error" (request smuggling).
            timing.close_connection = true;
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "a request may not carry both Content-Length and Transfer-Encoding",
            ));
        }
        let raw_target = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
        if raw_target.len() > limits::URL_LENGTH_MAX {
            return Err(ArangoError::new(HTTP_REQUEST_URI_TOO_LONG));
        }
        let header_bytes: usize = parts
            .headers
            .iter()
            .map(|(name, value)| name.as_str().len() + value.len())
            .sum();
        // Request line, each header's `name: value\r\n`, the empty line.
        timing.head_bytes = (parts.method.as_str().len()
            + raw_target.len()
            + 12
            + header_bytes
            + 4 * parts.headers.len()
            + 2) as u64;
        if header_bytes > limits::HEADER_BYTES_MAX {
            return Err(ArangoError::new(HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE));
        }
        if let Some(files) = self.static_files() {
            if let Some(rest) = files.mounted_path(parts.uri.path()) {
                // Static files need no credentials, like ArangoDB's web interface assets.
                let _admission = self.admit()?;
                timing.queued = Some(timing.received.elapsed());
                return files.serve(&parts.method, rest, &parts.headers).await;
            }
        }
        let Target {
            database,
            path,
            segments,
            query,
        } = parse_target(raw_target)?;
        let route = router::resolve(&segments);
        let open = route.is_open()
            || (self.config().authentication_system_only
                && !segments.first().is_some_and(|s| s.starts_with('_')));
        let fast_lane = route.in_fast_lane();
        let identity = auth::identify(self, &parts.headers);
        // A password check costs tens of milliseconds of CPU: only a request that holds its
        // unit of the queue bound gets one.
        let mut admission = match identity.needs_password_check() && !fast_lane {
            true => Some(self.admit()?),
            false => None,
        };
        let caller = match auth::resolve(self, identity, &parts.extensions).await? {
            Some(caller) => caller,
            None if open => Caller::nobody(),
            None => return Err(unauthorized()),
        };
        if caller.is_authenticated() {
            if let Some(trust) = parts.extensions.get::<ConnectionTrust>() {
                trust.0.store(true, Ordering::Release);
            }
        }
        let caller = caller.in_read_only_mode(self.server_mode().is_read_only());
        let database =
            permission::admit_database(&**self.engine(), &caller, &database, &segments, open)?;
        check_queue_time(&parts.headers, timing.received.elapsed())?;
        let async_mode = async_exec::mode(&parts.headers);
        if admission.is_none() && !fast_lane {
            admission = Some(self.admit()?);
        }
        // The route is known before the body is read: a path nobody serves costs no body.
        let Some(route) = route.matched() else {
            return Err(unknown_path(&path));
        };
        self.api_calls()
            .record(parts.method.as_str(), &path, database.name(), caller.name());
        if let (None, Some(streaming)) = (async_mode, route.streaming()) {
            // The route reads its own body as it streams in, within its own bound.
            let limit = (streaming.limit)(self.config());
            body::check_declared_length(&parts.headers, limit)?;
            timing.body_bytes = declared_length(&parts.headers);
            let mut request = ApiRequest {
                method: parts.method,
                database,
                path,
                suffix: route.suffix(segments),
                query,
                headers: parts.headers,
                body: Bytes::new(),
                user: caller.clone(),
                json_depth_max: self.config().json_depth_max,
                replies: self.replies().clone(),
            };
            // Refused before its body was read: the body is still on the wire, so the
            // connection cannot carry another request.
            let admitted = route
                .enter_transaction(&mut request)
                .and_then(|()| route.check_permissions(&request));
            if admitted.is_err() {
                timing.close_connection = true;
            }
            admitted?;
            timing.queued = Some(timing.received.elapsed());
            let body = body.map_err(|err| err.to_string());
            let mut body = std::pin::pin!(body);
            let reply = (streaming.handler)(request, body.as_mut(), limit).await;
            drop(admission);
            return reply;
        }
        // A caller who did not authenticate (on an open path: a login, say) needs little body;
        // a small bound keeps unauthenticated clients from holding memory or time with one.
        let body_limit = match caller.is_authenticated() {
            true => self.config().body_size_max,
            false => self
                .config()
                .body_size_max
                .min(limits::UNAUTHENTICATED_BODY_MAX),
        };
        body::check_declared_length(&parts.headers, body_limit)?;
        let reading = Instant::now();
        let raw_body = body::read_bounded(body, body_limit)
            .await
            .inspect_err(|_| timing.close_connection = true)?;
        timing.body_read = reading.elapsed();
        timing.body_bytes = raw_body.len() as u64;
        let body = body::decode_content(&parts.headers, raw_body, body_limit)?;
        let request = ApiRequest {
            method: parts.method,
            database,
            path,
            suffix: Vec::new(),
            query,
            headers: parts.headers,
            body,
            user: caller,
            json_depth_max: self.config().json_depth_max,
            replies: self.replies().clone(),
        };
        timing.queued = Some(timing.received.elapsed());
        if let Some(mode) = async_mode {
            timing.asynchronous = true;
            let mut extensions = Extensions::new();
            if let Some(peer) = parts.extensions.get::<Peer>() {
                extensions.insert(*peer);
            }
            let routed = Routed {
                request,
                segments,
                uri: parts.uri,
                extensions,
            };
            return async_exec::submit(self, routed, mode, admission);
        }
        let forwardable = forwarding::candidate(self, &request, &parts.uri);
        let reply = route
            .dispatch(self, request, segments, &parts.uri, &parts.extensions)
            .await;
        let reply = match (reply, forwardable) {
            (Err(error), Some(request)) if forwarding::held_elsewhere(&error) => {
                forwarding::forward(self, request)
                    .await
                    .unwrap_or(Err(error))
            }
            (reply, _) => reply,
        };
        drop(admission);
        reply
    }

    /// Adds the headers every reply carries, counts the reply, and builds the hyper response.
    fn finish(
        &self,
        reply: ApiResponse,
        method: &Method,
        version: Version,
        timing: &Timing,
        http10_keep_alive: bool,
    ) -> Response<Full<Bytes>> {
        let ApiResponse {
            status,
            mut headers,
            body,
        } = reply;
        headers.insert(http::header::SERVER, HeaderValue::from_static("ArangoDB"));
        headers.insert(
            HeaderName::from_static("x-content-type-options"),
            HeaderValue::from_static("nosniff"),
        );
        let queued = timing.queued.unwrap_or_else(|| timing.received.elapsed());
        headers.insert(
            HeaderName::from_static("x-arango-queue-time-seconds"),
            seconds_header(queued),
        );
        if timing.close_connection {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        } else if http10_keep_alive {
            // `ab -k` (HTTP/1.0) keeps a connection only when the reply says keep-alive.
            headers.insert(CONNECTION, HeaderValue::from_static("keep-alive"));
        }
        // Status line, each header's `name: value\r\n`, the empty line, the body (hyper adds
        // `date` and `content-length`, which are not counted).
        let head_bytes = 15
            + status.canonical_reason().map_or(0, str::len)
            + headers
                .iter()
                .map(|(name, value)| name.as_str().len() + value.len() + 4)
                .sum::<usize>()
            + 2;
        self.metrics().record(&RequestRecord {
            method,
            version,
            status: status.as_u16(),
            total: timing.received.elapsed(),
            before_handler: queued,
            body_read: timing.body_read,
            bytes_received: timing.head_bytes + timing.body_bytes,
            body_received: timing.body_bytes,
            bytes_sent: (head_bytes + body.len()) as u64,
            asynchronous: timing.asynchronous,
        });
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    }
}

/// `duration` in seconds with six decimals (microseconds, rounded), as a header value; written
/// with integer arithmetic, since float formatting costs more than the rest of the header.
fn seconds_header(duration: Duration) -> HeaderValue {
    let micros = (duration.as_nanos() + 500) / 1000;
    let mut text = [0u8; 48];
    let mut end = text.len();
    let mut push = |digit: u8| {
        end -= 1;
        text[end] = digit;
    };
    let mut fraction = micros % 1_000_000;
    for _ in 0..6 {
        push(b'0' + (fraction % 10) as u8);
        fraction /= 10;
    }
    push(b'.');
    let mut whole = micros / 1_000_000;
    loop {
        push(b'0' + (whole % 10) as u8);
        whole /= 10;
        if whole == 0 {
            break;
        }
    }
    HeaderValue::from_bytes(&text[end..]).expect("digits and a dot are a valid header")
}

/// The reply compressed as `crate::compression` decides; a large body is compressed on the
/// blocking pool, so no runtime worker spends long on it.
async fn compress_reply(
    reply: ApiResponse,
    method: &Method,
    threshold: u64,
    coding: Option<compression::Coding>,
) -> ApiResponse {
    let ApiResponse {
        status,
        mut headers,
        body,
    } = reply;
    let plan = compression::plan(threshold, coding, method, status, &mut headers, body.len());
    let compression::Plan::Compress(coding) = plan else {
        return ApiResponse {
            status,
            headers,
            body,
        };
    };
    let compressed = if body.len() >= compression::BLOCKING_FROM {
        let input = body.clone();
        tokio::task::spawn_blocking(move || compression::compress(coding, &input))
            .await
            .ok()
            .flatten()
    } else {
        compression::compress(coding, &body)
    };
    let body = match compressed {
        Some(compressed) => {
            compression::mark(&mut headers, coding);
            Bytes::from(compressed)
        }
        None => body,
    };
    ApiResponse {
        status,
        headers,
        body,
    }
}

/// Runs a future, turning a panic inside it into an `Err` with the panic's message, so that a
/// bug in one handler answers 500 (and is logged) instead of dropping the connection.
struct CatchPanic<'a, F> {
    inner: Pin<&'a mut F>,
}

impl<F: Future> Future for CatchPanic<'_, F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().inner.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".to_string());
                Poll::Ready(Err(message))
            }
        }
    }
}

/// The request's declared Content-Length (0 when absent or not a number).
fn declared_length(headers: &http::HeaderMap) -> u64 {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// 412/21004 when the client allows less queue time than the request already spent.
fn check_queue_time(headers: &http::HeaderMap, queued: Duration) -> Result<(), ArangoError> {
    let limit = headers
        .get("x-arango-queue-time-seconds")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok());
    match limit {
        Some(max) if max > 0.0 && queued.as_secs_f64() > max => {
            Err(ArangoError::new(QUEUE_TIME_REQUIREMENT_VIOLATED))
        }
        _ => Ok(()),
    }
}

/// Renders an error; a 401 for missing credentials invites Basic authentication unless the
/// client asked not to be invited.
fn render_error(err: &ArangoError, omit_www_authenticate: bool) -> ApiResponse {
    let mut reply = error_response(err);
    if err.status == 401 && err.is(FORBIDDEN) && !omit_www_authenticate {
        reply.headers.insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic, realm=\"ArangoDB\""),
        );
    }
    reply
}

/// True when the request's `Connection` header asks for keep-alive.
fn wants_keep_alive<B>(req: &Request<B>) -> bool {
    req.headers().get_all(CONNECTION).iter().any(|v| {
        v.to_str()
            .map(|s| {
                s.split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case("keep-alive"))
            })
            .unwrap_or(false)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_headers_have_six_rounded_decimals() {
        for (nanos, text) in [
            (0, "0.000000"),
            (499, "0.000000"),
            (500, "0.000001"),
            (1_234_567, "0.001235"),
            (2_000_000_000, "2.000000"),
            (12_345_678_901, "12.345679"),
        ] {
            let value = seconds_header(Duration::from_nanos(nanos));
            assert_eq!(value.to_str().unwrap(), text, "{nanos} ns");
        }
        let longest = seconds_header(Duration::MAX);
        assert_eq!(longest.to_str().unwrap(), "18446744073709551616.000000");
    }

    #[tokio::test]
    async fn panics_become_errors_and_values_pass_through() {
        let fine = std::pin::pin!(async { 7 });
        assert_eq!(CatchPanic { inner: fine }.await, Ok(7));
        let broken = std::pin::pin!(async {
            tokio::task::yield_now().await;
            panic!("handler bug");
        });
        let outcome: Result<(), String> = CatchPanic { inner: broken }.await;
        assert_eq!(outcome, Err("handler bug".to_string()));
    }
}
