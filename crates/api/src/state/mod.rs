//! The API's shared state: [`Api`], which every connection of the server shares, and the
//! types it holds.
//!
//! What it is: the server-wide state (the engine, the settings ([`ApiConfig`]), the
//! authenticator, the user accounts, the operation mode, the metrics, the count of requests in
//! flight and the queue bound over it ([`Api::admit`], [`Admission`]), the asynchronous jobs
//! ([`Jobs`], `job_store`), the static file mount, the reply limits, the slots of password
//! checks, the start time, the recent API calls, the hooks the binary installs for the
//! admin endpoints ([`AdminHooks`]) and the listener's TLS control ([`TlsControl`]) once
//! installed), its constructor [`Api::open`], its accessors, the request
//! extensions the listener sets ([`Received`], [`ConnectionTrust`], [`Peer`]) and [`Routed`],
//! a checked request as jobs and batch parts carry it.
//!
//! What it is not: the request pipeline (`crate::pipeline` adds [`Api::serve`] and
//! `Api::execute` to this type) or any endpoint. It is the bottom of the crate: it imports no
//! endpoint family, not the router and not the pipeline, so every layer above can import it
//! without a circle.
//!
//! Invariants: an `Api` always lives in an `Arc` (it holds a weak reference to itself for the
//! job runners); a unit of the queue bound is given back however the request or job that held
//! it ends ([`Admission`] is a guard); the settings never change after [`Api::open`] (the token
//! secrets, which `POST /_admin/server/jwt` reloads, live in the authenticator, not here).

pub(crate) mod admin_hooks;
pub(crate) mod api_calls;
pub(crate) mod api_policy;
pub(crate) mod config;
pub(crate) mod extensions;
pub(crate) mod job_store;
pub(crate) mod server_mode;
pub(crate) mod tls_control;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use http::{Extensions, Uri};
use quince_auth::Users;
use quince_errors::{ArangoError, QUEUE_FULL};
use quince_ops::Engine;
use tokio::sync::Semaphore;

use crate::credentials::Authenticator;
use crate::limits;
use crate::metrics::{Metrics, OpenConnection, ProcessFigures, Snapshot, SnapshotInputs};
use crate::reply_budget::ReplyLimits;
use crate::request::ApiRequest;
use crate::static_files::StaticFiles;

pub use admin_hooks::{AdminHooks, LogControl, LogLine, SecretSource, ServerOptions};
use api_calls::ApiCallLog;
pub use api_policy::ApiPolicy;
pub use config::ApiConfig;
pub use extensions::{ConnectionTrust, Peer, Received};
use job_store::JobStore;
use server_mode::ServerMode;
pub use tls_control::TlsControl;

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
    /// Running queries, the results cache and the open cursors.
    queries: quince_aql::QueryService,
    /// What the binary lends the admin endpoints (logging, token secrets, options).
    hooks: AdminHooks,
    /// The recent API calls (`--server.api-call-recording`).
    api_calls: ApiCallLog,
    /// The listener's TLS configuration, once the binary installs it (only for an ssl://
    /// endpoint).
    tls: OnceLock<Arc<dyn TlsControl>>,
    /// The server's part in a cluster, once the binary installs it (coordinators and DB
    /// servers; a single server has none).
    cluster: OnceLock<Arc<dyn quince_ops::ClusterOps>>,
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

/// The job table of the API: queued jobs carry [`Work`].
pub(crate) type Jobs = JobStore<Work>;

/// What a queued job carries: the request and its unit of the queue bound.
pub(crate) struct Work {
    /// The checked request the job runs.
    pub routed: Routed,
    /// None only for job-management requests, which are outside the bound.
    pub admission: Option<Admission>,
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
        let query_memory = quince_memory::Pool::new(config.query_global_memory_limit);
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
        let api_calls = ApiCallLog::new(config.api_call_recording);
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
            queries: quince_aql::QueryService {
                memory: query_memory,
                ..quince_aql::QueryService::default()
            },
            hooks: AdminHooks::default(),
            api_calls,
            tls: OnceLock::new(),
            cluster: OnceLock::new(),
        }))
    }

    /// Installs the server's part in a cluster (once, before the listener opens; later calls
    /// are ignored).
    pub fn install_cluster(self: &Arc<Self>, cluster: Arc<dyn quince_ops::ClusterOps>) {
        if self.cluster.set(cluster.clone()).is_err() {
            return;
        }
        // Accounts live in the cluster's `_system/_users`: a change here tells the others, and
        // a change elsewhere reloads them here.
        let told = cluster.clone();
        self.users.on_change(Box::new(move || told.users_changed()));
        let api = Arc::downgrade(self);
        cluster.watch_users(Box::new(move || {
            if let Some(api) = api.upgrade() {
                if let Err(error) = api.users.reload(&*api.engine) {
                    tracing::warn!(event = "auth.reload_failed", "{error}");
                }
            }
        }));
    }

    /// The server's part in a cluster; none on a single server.
    pub(crate) fn cluster(&self) -> Option<&Arc<dyn quince_ops::ClusterOps>> {
        self.cluster.get()
    }

    /// Installs the listener's TLS configuration (once; later calls are ignored), for
    /// `/_admin/server/tls`.
    pub fn install_tls(&self, control: Arc<dyn TlsControl>) {
        let _ = self.tls.set(control);
    }

    /// The listener's TLS configuration, when the server listens on an ssl:// endpoint.
    pub(crate) fn tls(&self) -> Option<&Arc<dyn TlsControl>> {
        self.tls.get()
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

    /// Checks credentials, issues tokens.
    pub(crate) fn authenticator(&self) -> &Authenticator {
        &self.auth
    }

    /// Every user account.
    pub fn users(&self) -> &Users {
        &self.users
    }

    /// Every user account, shared (for work on the blocking pool).
    pub(crate) fn users_handle(&self) -> &Arc<Users> {
        &self.users
    }

    /// `default` or `readonly`.
    pub(crate) fn server_mode(&self) -> &ServerMode {
        &self.mode
    }

    /// Request counters for `/_admin/metrics`.
    pub(crate) fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Every figure of metrics and statistics, now.
    pub(crate) fn metrics_snapshot(&self) -> Snapshot {
        let worker_threads = tokio::runtime::Handle::try_current()
            .map_or(0, |runtime| runtime.metrics().num_workers() as u64);
        self.metrics.snapshot(SnapshotInputs {
            catalog: self.engine.stats(),
            queries: self.queries.counters(),
            process: ProcessFigures::read(),
            uptime: self.uptime(),
            worker_threads,
            in_flight: self.in_flight.load(Ordering::Relaxed) as u64,
        })
    }

    /// Counts a client connection opened (the listener calls it for every accepted
    /// connection); dropping the guard counts it closed.
    pub fn connection_opened(&self) -> OpenConnection {
        self.metrics.connection_opened()
    }

    /// How long the API has existed.
    pub(crate) fn uptime(&self) -> Duration {
        self.started.elapsed()
    }

    /// Running queries, the results cache and the open cursors.
    pub(crate) fn queries(&self) -> &quince_aql::QueryService {
        &self.queries
    }

    /// Asynchronous jobs and their stored results.
    pub(crate) fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// The slots of password checks waiting or running.
    pub(crate) fn password_checks(&self) -> &Semaphore {
        &self.password_checks
    }

    /// What the binary lends the admin endpoints: install the log control, the token secret
    /// source and the options report here once the API is open.
    pub fn hooks(&self) -> &AdminHooks {
        &self.hooks
    }

    /// The recent API calls.
    pub(crate) fn api_calls(&self) -> &ApiCallLog {
        &self.api_calls
    }

    /// The bounds on the memory of replies.
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

    /// The static file mount (`--http.static-dir`), if any.
    pub(crate) fn static_files(&self) -> Option<&StaticFiles> {
        self.static_files.as_ref()
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
