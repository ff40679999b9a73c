//! [`Api`]: the request pipeline, in the order of `reference/arangodb-http-api.md` §1.1.
//!
//! What it is: one `async fn` per request that checks, in order, whether the server is
//! stopping (503/30), the URL length (414), the size of the headers (431), the credentials, the database of the
//! `/_db/{name}/` prefix (404/1228 for root, 401 for anyone else), the path's access rule
//! (401/11), the client's queue-time limit (412/21004), the bound on requests in flight and
//! queued jobs (503/21003) and the body's size and encoding (413, 415), then either queues the
//! request as an asynchronous job (`x-arango-async`, see `crate::async_exec`) or hands an
//! [`ApiRequest`] to the router, and adds the headers every reply carries. Paths under the
//! static mount (`--http.static-dir`) leave after the header checks, without credentials.
//! [`Api::execute`] is the post-check half on its own, for jobs and batch parts.
//!
//! What it is not: a listener. The `quince` binary owns sockets and hyper connections and
//! passes what it knows about them in request extensions ([`Received`], [`Peer`]).
//!
//! Invariants: every reply, error or not, leaves through [`Api::serve`] and so carries
//! `server`, `x-content-type-options`, `x-arango-queue-time-seconds` and a whole body (hence a
//! Content-Length); the in-flight count is released on every path out (a guard drops it).

use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{HeaderValue, CONNECTION, WWW_AUTHENTICATE};
use http::{Extensions, HeaderName, Method, Request, Response, Uri, Version};
use http_body_util::Full;
use hyper::body::Body;
use quince_auth::Users;
use quince_db::Engine;
use quince_errors::{
    ArangoError, FORBIDDEN, HTTP_BAD_PARAMETER, HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
    HTTP_REQUEST_URI_TOO_LONG, INTERNAL, QUEUE_FULL, QUEUE_TIME_REQUIREMENT_VIOLATED,
    SHUTTING_DOWN,
};
use tokio::sync::Semaphore;

use crate::async_exec::{self, Jobs};
use crate::auth::{self, Authenticator};
use crate::error::{error_response, unauthorized, unknown_path};
use crate::metrics::Metrics;
use crate::path::{parse_target, Target};
use crate::permission::{self, Caller};
use crate::reply_budget::ReplyLimits;
use crate::request::ApiRequest;
use crate::response::ApiResponse;
use crate::server_mode::ServerMode;
use crate::static_files::StaticFiles;
use crate::{body, job, limits, router};

/// The server's settings that the API needs.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// `--server.authentication`: when false every request runs as root.
    pub authentication: bool,
    /// Root's password.
    pub root_password: String,
    /// The HS256 secret that signs tokens (`--server.jwt-secret-keyfile`, the first file of
    /// `--server.jwt-secret-folder`, or random when empty).
    pub jwt_secret: Vec<u8>,
    /// Further secrets that verify tokens but do not sign them (the other files of
    /// `--server.jwt-secret-folder`), for rotation.
    pub jwt_passive_secrets: Vec<Vec<u8>>,
    /// `--server.authentication-system-only`: when true, only paths starting with `/_` need
    /// credentials.
    pub authentication_system_only: bool,
    /// `--http.max-body-size`, applied before and after decompression.
    pub body_size_max: usize,
    /// `--http.max-import-size`: the bound on a `POST /_api/import` body (which streams, so
    /// it may be far larger than `body_size_max`), before and after decompression.
    pub import_size_max: usize,
    /// `--http.max-json-depth`.
    pub json_depth_max: usize,
    /// `--http.max-reply-size`: the most bytes one reply may have (and, times
    /// [`crate::reply_budget::SHARED_REPLIES`], all large replies being built at once).
    pub reply_size_max: usize,
    /// `--server.maximal-queue-size`: requests in flight at once.
    pub queue_size_max: usize,
    /// The most asynchronous jobs one user may have queued or running (a share of
    /// `queue_size_max`: [`limits::jobs_per_user_max`]).
    pub jobs_per_user_max: usize,
    /// The endpoint the server listens on (`http://127.0.0.1:8529`), for `/_admin/echo`
    /// and status replies.
    pub endpoint: String,
    /// `--http.static-dir`: the directory served as static files (none when absent).
    pub static_dir: Option<std::path::PathBuf>,
    /// `--http.static-prefix`: where the static directory is mounted (`/_static`).
    pub static_prefix: String,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            authentication: true,
            jwt_passive_secrets: Vec::new(),
            authentication_system_only: true,
            root_password: String::new(),
            jwt_secret: Vec::new(),
            body_size_max: limits::BODY_SIZE_MAX_DEFAULT,
            import_size_max: limits::IMPORT_SIZE_MAX_DEFAULT,
            json_depth_max: limits::JSON_DEPTH_MAX_DEFAULT,
            reply_size_max: limits::REPLY_SIZE_MAX_DEFAULT,
            queue_size_max: limits::QUEUE_SIZE_MAX_DEFAULT,
            jobs_per_user_max: limits::jobs_per_user_max(limits::QUEUE_SIZE_MAX_DEFAULT),
            endpoint: "http://127.0.0.1:8529".to_string(),
            static_dir: None,
            static_prefix: crate::static_files::PREFIX_DEFAULT.to_string(),
        }
    }
}

/// Request extension: when the listener received the request (its queue time starts here).
#[derive(Clone, Copy, Debug)]
pub struct Received(pub Instant);

/// Request extension: the trust flag of the connection the request came on. The pipeline sets
/// it once a request on the connection authenticated, so the listener knows which connections
/// proved who they are (those it never closes to make room for others).
#[derive(Clone, Debug)]
pub struct ConnectionTrust(pub Arc<std::sync::atomic::AtomicBool>);

/// Request extension: the two ends of the connection the request came on.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    /// The client's address.
    pub client: SocketAddr,
    /// The server's address.
    pub server: SocketAddr,
}

/// The API: shared by every connection of the server.
pub struct Api {
    /// Every database, through the operations interface.
    engine: Arc<dyn Engine>,
    /// The settings.
    config: ApiConfig,
    /// Checks credentials, issues tokens.
    auth: Authenticator,
    /// Every user account.
    users: Arc<Users>,
    /// `default` or `readonly` (`/_admin/server/mode`).
    mode: ServerMode,
    /// Request counters for `/_admin/metrics`.
    metrics: Metrics,
    /// Set once shutdown begins: new requests get 503.
    stopping: AtomicBool,
    /// Requests past the access checks and not yet answered, plus asynchronous jobs queued
    /// or running: the one count `--server.maximal-queue-size` bounds.
    in_flight: Arc<AtomicUsize>,
    /// Asynchronous jobs (`x-arango-async`) and their stored results.
    jobs: Arc<Jobs>,
    /// Set once the job slots are opened (on the first asynchronous request).
    job_workers: OnceLock<usize>,
    /// The API itself, for the job runners (a weak reference, so they do not keep it alive).
    me: Weak<Api>,
    /// The static file mount (`--http.static-dir`), if any.
    static_files: Option<StaticFiles>,
    /// The bounds on the memory of replies.
    replies: ReplyLimits,
    /// One permit per password check waiting or running (`limits::PASSWORD_CHECKS_MAX`).
    password_checks: Semaphore,
    /// When the API was created, for uptime.
    started: Instant,
}

/// One unit of the queue bound: a request in flight or an asynchronous job queued or
/// running. Dropping it (however the request or job ends) gives the unit back.
pub(crate) struct Admission(Arc<AtomicUsize>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A request past every pipeline check, owned, ready for the router: what an asynchronous
/// job or a part of a batch request runs.
pub(crate) struct Routed {
    /// The request as handlers see it.
    pub request: ApiRequest,
    /// Its decoded path segments (after the database prefix).
    pub segments: Vec<String>,
    /// The original request target.
    pub uri: Uri,
    /// What the listener knew about the connection ([`Peer`]), when there was one.
    pub extensions: Extensions,
}

/// What the pipeline learned about a request, for the reply's headers.
struct Timing {
    /// When the request was received.
    received: Instant,
    /// How long it waited before its handler started (set when the handler starts).
    queued: Option<Duration>,
    /// The request's framing cannot be trusted (its body could not be read, or it declared
    /// both Content-Length and Transfer-Encoding): the reply closes the connection, since where
    /// the next request starts is unknown.
    close_connection: bool,
}

impl Api {
    /// An API over this engine; panics when the user accounts cannot be opened (tests; the
    /// server uses [`Api::open`]).
    pub fn new(engine: Arc<dyn Engine>, config: ApiConfig) -> Arc<Api> {
        Api::open(engine, config).expect("the user accounts open")
    }

    /// An API over this engine: opens the user accounts in `_system/_users`, creating root
    /// with `config.root_password` on first start.
    pub fn open(engine: Arc<dyn Engine>, config: ApiConfig) -> Result<Arc<Api>, ArangoError> {
        assert!(
            config.queue_size_max > 0,
            "the request queue must hold at least one request"
        );
        assert!(
            config.json_depth_max <= quince_model::json::JSON_DEPTH_LIMIT,
            "the JSON depth bound is at most {}",
            quince_model::json::JSON_DEPTH_LIMIT
        );
        let users = Arc::new(Users::open(&*engine, &config.root_password)?);
        // A crash between a drop and the removal of its grants leaves grants on something
        // that no longer exists; a new database or collection of that name must not inherit
        // them. (Grants can only be made on what exists, so nothing else is removed.)
        users.prune_grants(|db, collection| grant_target_exists(&*engine, db, collection))?;
        let mut secrets = vec![config.jwt_secret.clone()];
        if secrets[0].is_empty() {
            let mut random = vec![0u8; 32];
            rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut random);
            secrets[0] = random;
        }
        secrets.extend(config.jwt_passive_secrets.iter().cloned());
        let auth = Authenticator::new(&secrets);
        let static_files = config
            .static_dir
            .as_ref()
            .map(|dir| StaticFiles::new(dir, &config.static_prefix));
        let jobs = Arc::new(Jobs::new(config.jobs_per_user_max));
        let replies = ReplyLimits::new(config.reply_size_max);
        Ok(Arc::new_cyclic(|me| Api {
            engine,
            config,
            auth,
            users,
            mode: ServerMode::default(),
            metrics: Metrics::default(),
            stopping: AtomicBool::new(false),
            in_flight: Arc::new(AtomicUsize::new(0)),
            jobs,
            job_workers: OnceLock::new(),
            me: me.clone(),
            static_files,
            replies,
            password_checks: Semaphore::new(limits::PASSWORD_CHECKS_MAX),
            started: Instant::now(),
        }))
    }

    /// Marks the server as stopping: from now on requests get 503 (errorNum 30).
    pub fn begin_shutdown(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    /// True once [`Api::begin_shutdown`] was called.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Every database, through the operations interface.
    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// The settings.
    pub fn config(&self) -> &ApiConfig {
        &self.config
    }

    pub(crate) fn authenticator(&self) -> &Authenticator {
        &self.auth
    }

    /// Every user account.
    pub fn users(&self) -> &Users {
        &self.users
    }

    pub(crate) fn users_handle(&self) -> &Arc<Users> {
        &self.users
    }

    pub(crate) fn server_mode(&self) -> &ServerMode {
        &self.mode
    }

    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    pub(crate) fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// The slots of password checks waiting or running.
    pub(crate) fn password_checks(&self) -> &Semaphore {
        &self.password_checks
    }

    /// The bounds on the memory of replies.
    #[cfg(test)]
    pub(crate) fn replies(&self) -> &ReplyLimits {
        &self.replies
    }

    /// A weak reference to the API (it always lives in an `Arc`; see [`Api::new`]).
    pub(crate) fn weak(&self) -> Weak<Api> {
        self.me.clone()
    }

    /// Opens the job slots once; returns how many there are.
    pub(crate) fn job_workers(&self, start: impl FnOnce() -> usize) -> usize {
        *self.job_workers.get_or_init(start)
    }

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

    /// [`Api::execute`] behind a box, for handlers that run requests themselves (batch parts),
    /// so the future's type does not contain itself.
    pub(crate) fn execute_boxed(
        &self,
        routed: Routed,
    ) -> Pin<Box<dyn Future<Output = ApiResponse> + Send + '_>> {
        Box::pin(self.execute(routed))
    }

    /// Answers one request.
    pub async fn serve<B>(&self, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: Body<Data = Bytes>,
        B::Error: std::fmt::Display,
    {
        let received = req
            .extensions()
            .get::<Received>()
            .map_or_else(Instant::now, |r| r.0);
        let method = req.method().clone();
        let http10_keep_alive = req.version() == Version::HTTP_10 && wants_keep_alive(&req);
        let omit_www_authenticate = req.headers().contains_key("x-omit-www-authenticate");
        let mut timing = Timing {
            received,
            queued: None,
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
        self.finish(reply, &method, &timing, http10_keep_alive)
    }

    async fn process<B>(
        &self,
        req: Request<B>,
        timing: &mut Timing,
    ) -> Result<ApiResponse, ArangoError>
    where
        B: Body<Data = Bytes>,
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
        if header_bytes > limits::HEADER_BYTES_MAX {
            return Err(ArangoError::new(HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE));
        }
        if let Some(files) = &self.static_files {
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
        let open = router::is_open_path(&segments)
            || (self.config.authentication_system_only
                && !segments.first().is_some_and(|s| s.starts_with('_')));
        // Job management is the fast lane: it must work while the queue is full, or a full
        // queue could not be inspected or cancelled.
        let fast_lane = job::is_job_path(&segments);
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
        let caller = caller.in_read_only_mode(self.mode.is_read_only());
        let database =
            permission::admit_database(&*self.engine, &caller, &database, &segments, open)?;
        check_queue_time(&parts.headers, timing.received.elapsed())?;
        let async_mode = async_exec::mode(&parts.headers);
        if admission.is_none() && !fast_lane {
            admission = Some(self.admit()?);
        }
        // The route is known before the body is read: a path nobody serves costs no body.
        if router::resolve(&segments).is_none() {
            return Err(unknown_path(&path));
        }
        if async_mode.is_none() && router::streams_body(&segments) {
            // An import reads its own body as it streams in, within its own bound.
            body::check_declared_length(&parts.headers, self.config.import_size_max)?;
            let request = ApiRequest {
                method: parts.method,
                database,
                path,
                suffix: Vec::new(),
                query,
                headers: parts.headers,
                body: Bytes::new(),
                user: caller.clone(),
                json_depth_max: self.config.json_depth_max,
                replies: self.replies.clone(),
            };
            // Imports stream past the router, so the router's coarse check is made here.
            permission::require_for_method(&request)?;
            timing.queued = Some(timing.received.elapsed());
            let limit = self.config.import_size_max;
            let reply = crate::import::handle_stream(request, body, limit).await;
            drop(admission);
            return reply;
        }
        // A caller who did not authenticate (on an open path: a login, say) needs little body;
        // a small bound keeps unauthenticated clients from holding memory or time with one.
        let body_limit = match caller.is_authenticated() {
            true => self.config.body_size_max,
            false => self
                .config
                .body_size_max
                .min(limits::UNAUTHENTICATED_BODY_MAX),
        };
        body::check_declared_length(&parts.headers, body_limit)?;
        let raw_body = body::read_bounded(body, body_limit)
            .await
            .inspect_err(|_| timing.close_connection = true)?;
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
            json_depth_max: self.config.json_depth_max,
            replies: self.replies.clone(),
        };
        timing.queued = Some(timing.received.elapsed());
        if let Some(mode) = async_mode {
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
        let reply = router::dispatch(self, request, segments, &parts.uri, &parts.extensions).await;
        drop(admission);
        reply
    }

    /// Counts the request (or job) against the queue bound, or refuses it when the bound is
    /// reached (503, errorNum 21003).
    pub(crate) fn admit(&self) -> Result<Admission, ArangoError> {
        let before = self.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = Admission(self.in_flight.clone());
        if before >= self.config.queue_size_max {
            return Err(ArangoError::new(QUEUE_FULL));
        }
        Ok(guard)
    }

    /// Adds the headers every reply carries, counts the reply, and builds the hyper response.
    fn finish(
        &self,
        reply: ApiResponse,
        method: &Method,
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
        let queued_text = format!("{:.6}", queued.as_secs_f64());
        headers.insert(
            HeaderName::from_static("x-arango-queue-time-seconds"),
            HeaderValue::from_str(&queued_text).expect("a decimal number is a valid header"),
        );
        if timing.close_connection {
            headers.insert(CONNECTION, HeaderValue::from_static("close"));
        } else if http10_keep_alive {
            // `ab -k` (HTTP/1.0) keeps a connection only when the reply says keep-alive.
            headers.insert(CONNECTION, HeaderValue::from_static("keep-alive"));
        }
        self.metrics
            .record(method, status.as_u16(), timing.received.elapsed());
        let mut response = Response::new(Full::new(body));
        *response.status_mut() = status;
        *response.headers_mut() = headers;
        response
    }
}

/// True when a grant on `db` (and `collection`) names something that exists (or `*`).
fn grant_target_exists(engine: &dyn Engine, db: &str, collection: Option<&str>) -> bool {
    if db == quince_auth::ANY {
        return true;
    }
    let Some(database) = engine.database(db) else {
        return false;
    };
    collection.is_none_or(|c| c == quince_auth::ANY || database.collection(c).is_ok())
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
