//! The router: one table ([`ROUTES`]) from path prefixes to endpoint families, each row
//! carrying everything the pipeline needs to know about its family.
//!
//! What it is: the table, [`resolve`] (the row of a path and whether the path needs
//! credentials), and the call of a row's handler ([`Matched::dispatch`]): it fills
//! [`ApiRequest::suffix`] with the segments after the row's prefix, applies the row's
//! permission policy and calls the handler. A row ([`Route`]) holds:
//!
//! - the prefix segments, and whether more segments may follow ([`family`]) or not
//!   ([`exact`]);
//! - the handler, a plain fn pointer over a [`Ctx`] (the state, the request, its target and
//!   extensions) that boxes the family's future (the `handler!` macro writes it from
//!   `|ctx| expr`);
//! - the permission policy ([`Permissions`]): the family checks the caller's levels itself, or
//!   the router applies the coarse check of [`permission::require_for_method`] (the default:
//!   deny by default);
//! - the body policy ([`BodyPolicy`]): the pipeline reads the whole body within
//!   `--http.max-body-size` (the default), or hands the unread body to the row's streaming
//!   handler within the row's own bound (`/_api/import` and `--http.max-import-size`);
//! - whether the path needs credentials ([`Credentials`]) and whether it is in the fast lane
//!   outside the queue bound ([`Lane`]: job management, so a full queue can still be inspected
//!   and cancelled).
//!
//! The pipeline asks [`resolve`] for these policies and calls the row; it names no family.
//! **Adding an endpoint family (say `/_api/cursor`) takes one module and one row here**: the
//! module's handler, and a line such as
//! `family(&["_api", "cursor"], handler!(|c| cursor::handle(c.api, c.req).await)).own_permissions()`.
//!
//! What it is not: method matching. Each handler answers 405 for methods it does not serve,
//! because only it knows which methods its sub-paths take. Nor the pipeline's order of checks
//! (`crate::pipeline`), which reads the policies here at fixed points.
//!
//! Invariants: an unknown path is 404 with errorNum 404 and `unknown path '<path>'`; a row
//! marked exact never sees a suffix (extra segments make the path unknown); rows do not shadow
//! each other (a longer prefix is listed before a shorter one it extends); every path under
//! `/_open/`, known or not, needs no credentials, and so does every row marked open; a row with
//! a streamed body still has a whole-body handler, for the same request arriving as an
//! asynchronous job or a batch part (its body read already).

use std::future::Future;
use std::pin::Pin;

use http::{Extensions, Uri};
use quince_errors::ArangoError;

use crate::body::BodyStream;
use crate::error::unknown_path;
use crate::permission;
use crate::request::ApiRequest;
use crate::response::ApiResult;
use crate::state::{Api, ApiConfig};
use crate::{
    admin, batch, collection, database, document, edges, gharial, import, index, job, open_auth,
    query, replication, server_mode, tasks, token, transaction, user,
};

/// What a handler gets.
pub(crate) struct Ctx<'a> {
    /// The server-wide state.
    pub api: &'a Api,
    /// The request, its suffix filled in.
    pub req: ApiRequest,
    /// The original request target (`/_admin/echo` answers with it).
    pub uri: &'a Uri,
    /// What the listener knew about the connection (`crate::Peer`), when there was one.
    pub extensions: &'a Extensions,
}

/// A handler's future, boxed so that every row's handler has one type: one allocation per
/// request buys a table of plain fn pointers.
pub(crate) type Reply<'a> = Pin<Box<dyn Future<Output = ApiResult> + Send + 'a>>;

/// A family's handler.
pub(crate) type Handler = for<'a> fn(Ctx<'a>) -> Reply<'a>;

/// A family's handler for a body the pipeline did not read: the request (its body empty), the
/// body, and the bound on its bytes (raw and decoded).
pub(crate) type StreamHandler = for<'a> fn(ApiRequest, BodyStream<'a>, usize) -> Reply<'a>;

/// Who checks the caller's permission levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Permissions {
    /// The family checks them itself, per collection, per account or per job.
    Own,
    /// The router checks them by method before the handler runs
    /// ([`permission::require_for_method`]): writes need `rw` on the database.
    ByMethod,
}

/// How the request body reaches the family.
#[derive(Clone, Copy)]
pub(crate) enum BodyPolicy {
    /// The pipeline reads it whole, within `--http.max-body-size`, and decodes it.
    Whole,
    /// A synchronous request's body is handed to this handler unread.
    Streamed(Streaming),
}

/// The streaming half of a row whose body streams.
#[derive(Clone, Copy)]
pub(crate) struct Streaming {
    /// Reads the body as it arrives.
    pub handler: StreamHandler,
    /// The bound on the body's bytes (raw and decoded), from the settings.
    pub limit: fn(&ApiConfig) -> usize,
}

/// Whether the path needs credentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Credentials {
    /// A caller without valid credentials gets 401.
    Required,
    /// Anyone may call it (the handler sees an unauthenticated caller as nobody).
    Open,
}

/// Which bound a request counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// The queue bound (`--server.maximal-queue-size`).
    Queued,
    /// Outside it: job management must work while the queue is full.
    Fast,
}

/// One row of the table: an endpoint family or a single endpoint.
#[derive(Clone, Copy)]
pub(crate) struct Route {
    /// The leading path segments.
    prefix: &'static [&'static str],
    /// True when more segments may follow (they become the suffix).
    takes_suffix: bool,
    /// The family's handler (for a streamed row: when the body was read already).
    handler: Handler,
    /// Who checks permission levels.
    permissions: Permissions,
    /// How the body arrives.
    body: BodyPolicy,
    /// Whether the path needs credentials.
    credentials: Credentials,
    /// Which bound the request counts against.
    lane: Lane,
    /// Whether `x-arango-trx-id` makes the request run inside that stream transaction.
    transactional: bool,
}

/// A row whose prefix may be followed by more segments, with the default policies: the
/// router's check by method, a whole body, credentials required, the queue bound.
const fn family(prefix: &'static [&'static str], handler: Handler) -> Route {
    Route {
        prefix,
        takes_suffix: true,
        handler,
        permissions: Permissions::ByMethod,
        body: BodyPolicy::Whole,
        credentials: Credentials::Required,
        lane: Lane::Queued,
        transactional: false,
    }
}

/// A row that matches its prefix exactly, with the default policies of [`family`].
const fn exact(prefix: &'static [&'static str], handler: Handler) -> Route {
    Route {
        takes_suffix: false,
        ..family(prefix, handler)
    }
}

impl Route {
    /// The family checks permission levels itself.
    const fn own_permissions(self) -> Route {
        Route {
            permissions: Permissions::Own,
            ..self
        }
    }

    /// The path needs no credentials.
    const fn open(self) -> Route {
        Route {
            credentials: Credentials::Open,
            ..self
        }
    }

    /// The request is outside the queue bound.
    const fn fast_lane(self) -> Route {
        Route {
            lane: Lane::Fast,
            ..self
        }
    }

    /// `x-arango-trx-id` makes the request run inside that stream transaction: its
    /// collections are the transaction's ([`transaction::in_transaction`]).
    const fn in_transactions(self) -> Route {
        Route {
            transactional: true,
            ..self
        }
    }

    /// A synchronous request's body streams to `handler`, within `limit` bytes.
    const fn streams(self, handler: StreamHandler, limit: fn(&ApiConfig) -> usize) -> Route {
        Route {
            body: BodyPolicy::Streamed(Streaming { handler, limit }),
            ..self
        }
    }
}

/// Turns `|ctx| expr` into a [`Handler`]: `expr` runs inside an `async` block (it may
/// `.await`) with `ctx` a [`Ctx`], and evaluates to the [`ApiResult`].
macro_rules! handler {
    (|$ctx:ident| $body:expr) => {{
        fn handle<'a>($ctx: Ctx<'a>) -> Reply<'a> {
            Box::pin(async move { $body })
        }
        handle
    }};
}

/// Turns `|req, body, limit| expr` into a [`StreamHandler`], as `handler!` does.
macro_rules! stream_handler {
    (|$req:ident, $body:ident, $limit:ident| $call:expr) => {{
        fn handle<'a>($req: ApiRequest, $body: BodyStream<'a>, $limit: usize) -> Reply<'a> {
            Box::pin(async move { $call })
        }
        handle
    }};
}

/// `/_admin/metrics` and `/_admin/metrics/v2`.
const METRICS: Handler = handler!(|c| admin::server::metrics(c.api, &c.req));

/// `/_api/job…` and `/_admin/job…`. Every job call acts only on the caller's own jobs (a
/// read-only user fetches, cancels and deletes the jobs they queued).
const JOBS: Handler = handler!(|c| job::handle(c.api, c.req).await);

/// Every route. Prefixes do not overlap except where the longer one is exact and listed
/// first.
#[rustfmt::skip]
static ROUTES: &[Route] = &[
    family(&["_api", "document"], handler!(|c| document::handle(c.req).await)).own_permissions().in_transactions(),
    family(&["_api", "collection"], handler!(|c| collection::handle(c.api, c.req).await)).own_permissions().in_transactions(),
    family(&["_api", "transaction"], handler!(|c| transaction::handle(c.req).await)).own_permissions(),
    family(&["_api", "cursor"], handler!(|c| query::cursor(c.api, c.req).await)).own_permissions().in_transactions(),
    exact(&["_api", "explain"], handler!(|c| query::explain(c.api, c.req).await)).own_permissions().in_transactions(),
    family(&["_api", "query-plan-cache"], handler!(|c| query::query_plan_cache(c.req).await)).own_permissions(),
    family(&["_api", "query-cache"], handler!(|c| query::query_cache(c.api, c.req).await)).own_permissions(),
    family(&["_api", "query"], handler!(|c| query::query(c.api, c.req).await)).own_permissions(),
    family(&["_api", "aqlfunction"], handler!(|c| query::aql_functions(c.req).await)).own_permissions(),
    exact(&["_api", "key-generators"], handler!(|c| collection::key_generators(c.req).await)),
    family(&["_api", "index"], handler!(|c| index::handle(c.req).await)).own_permissions(),
    family(&["_api", "gharial"], handler!(|c| gharial::handle(c.api, c.req).await)).own_permissions(),
    family(&["_api", "edges"], handler!(|c| edges::handle(c.req).await)).own_permissions().in_transactions(),
    family(&["_api", "database"], handler!(|c| database::handle(c.api, c.req).await)).own_permissions(),
    exact(&["_api", "version"], handler!(|c| admin::server::version(&c.req))),
    exact(&["_api", "engine"], handler!(|c| admin::server::engine(&c.req))),
    exact(&["_admin", "server", "role"], handler!(|c| admin::server::role(c.api, &c.req))),
    exact(&["_admin", "server", "id"], handler!(|c| admin::server::id(c.api, &c.req))),
    exact(&["_admin", "cluster", "health"], handler!(|c| admin::cluster::health(c.api, &c.req).await)).own_permissions(),
    family(&["_admin", "cluster", "maintenance"], handler!(|c| admin::cluster::maintenance(c.api, &c.req).await)).own_permissions(),
    exact(&["_admin", "cluster", "numberOfServers"], handler!(|c| admin::cluster::number_of_servers(c.api, &c.req).await)).own_permissions(),
    exact(&["_admin", "cluster", "nodeVersion"], handler!(|c| admin::cluster::node_info(c.api, &c.req, "/_api/version").await)).own_permissions(),
    exact(&["_admin", "cluster", "nodeEngine"], handler!(|c| admin::cluster::node_info(c.api, &c.req, "/_api/engine").await)).own_permissions(),
    exact(&["_admin", "cluster", "nodeStatistics"], handler!(|c| admin::cluster::node_info(c.api, &c.req, "/_admin/statistics").await)).own_permissions(),
    exact(&["_api", "cluster", "endpoints"], handler!(|c| admin::cluster::endpoints(c.api, &c.req).await)),
    exact(&["_admin", "server", "availability"], handler!(|c| admin::server::availability(c.api, &c.req))).open(),
    exact(&["_admin", "status"], handler!(|c| admin::status::status(c.api, &c.req))),
    exact(&["_admin", "time"], handler!(|c| admin::server::time(&c.req))),
    family(&["_admin", "echo"], handler!(|c| admin::echo::echo(c.api, &c.req, c.uri, c.extensions))).own_permissions(),
    exact(&["_admin", "license"], handler!(|c| admin::server::license(&c.req))),
    exact(&["_admin", "metrics", "v2"], METRICS),
    exact(&["_admin", "metrics"], METRICS),
    exact(&["_admin", "statistics"], handler!(|c| admin::statistics::statistics(c.api, &c.req))),
    exact(&["_admin", "statistics-description"], handler!(|c| admin::statistics::description(&c.req))),
    exact(&["_open", "auth", "renew"], handler!(|c| open_auth::renew(c.api, &c.req))).own_permissions().open(),
    exact(&["_open", "auth"], handler!(|c| open_auth::login(c.api, &c.req, c.extensions).await)).own_permissions().open(),
    family(&["_api", "user"], handler!(|c| user::handle(c.api, c.req).await)).own_permissions(),
    family(&["_api", "token"], handler!(|c| token::handle(c.api, c.req).await)).own_permissions(),
    exact(&["_admin", "server", "mode"], handler!(|c| server_mode::handle(c.api, &c.req))).own_permissions(),
    exact(&["_admin", "server", "tls"], handler!(|c| admin::tls::handle(c.api, &c.req).await)).own_permissions(),
    family(&["_api", "job"], JOBS).own_permissions().fast_lane(),
    family(&["_admin", "job"], JOBS).own_permissions().fast_lane(),
    exact(&["_api", "batch"], handler!(|c| batch::handle(c.api, c.req).await)),
    exact(&["_admin", "sleep"], handler!(|c| job::sleep::sleep(c.req).await)),
    exact(&["_api", "import"], handler!(|c| import::handle_whole(c.req).await)).in_transactions()
        .streams(stream_handler!(|req, body, limit| import::handle_stream(req, body, limit).await), |config| config.import_size_max),
    exact(&["_admin", "database", "target-version"], handler!(|c| admin::maintenance::target_version(&c.req))),
    family(&["_admin", "log"], handler!(|c| admin::log::handle(c.api, &c.req))).own_permissions(),
    exact(&["_admin", "routing", "reload"], handler!(|c| admin::maintenance::routing_reload(&c.req))).own_permissions(),
    exact(&["_admin", "server", "api-calls"], handler!(|c| admin::api_calls::api_calls(c.api, &c.req))).own_permissions(),
    exact(&["_admin", "support-info"], handler!(|c| admin::support_info::support_info(c.api, &c.req).await)).own_permissions(),
    exact(&["_admin", "compact"], handler!(|c| admin::maintenance::compact(c.api, &c.req).await)).own_permissions(),
    exact(&["_admin", "options"], handler!(|c| admin::options::options(c.api, &c.req))).own_permissions(),
    exact(&["_admin", "options-description"], handler!(|c| admin::options::descriptions(c.api, &c.req))).own_permissions(),
    exact(&["_admin", "server", "jwt"], handler!(|c| admin::jwt::handle(c.api, &c.req))).own_permissions(),
    family(&["_api", "tasks"], handler!(|c| tasks::handle(&c.req))),
    family(&["_admin", "backup"], handler!(|c| admin::backup::handle(c.api, c.req).await)).own_permissions(),
    family(&["_api", "replication"], handler!(|c| replication::handle(c.api, c.req).await)).own_permissions(),
];

/// The first segment of the namespace whose every path, known or not, needs no credentials
/// (so an unknown `/_open/…` path answers 404 to anyone, as in ArangoDB).
const OPEN_NAMESPACE: &str = "_open";

/// What the table says about a path.
#[derive(Clone, Copy)]
pub(crate) struct Resolved {
    /// The row of the path, if any.
    matched: Option<Matched>,
    /// True when the path needs no credentials.
    open: bool,
}

/// A path's row and the number of segments its prefix took.
#[derive(Clone, Copy)]
pub(crate) struct Matched {
    /// The row.
    route: &'static Route,
    /// How many leading segments the row's prefix took; the rest are the suffix.
    prefix_len: usize,
}

/// The row of a path, and whether the path needs credentials.
pub(crate) fn resolve(segments: &[String]) -> Resolved {
    let matched = ROUTES.iter().find_map(|route| {
        let n = route.prefix.len();
        let fits = if route.takes_suffix {
            segments.len() >= n
        } else {
            segments.len() == n
        };
        (fits && route.prefix.iter().zip(segments).all(|(p, s)| p == s)).then_some(Matched {
            route,
            prefix_len: n,
        })
    });
    let open = matched.is_some_and(|m| m.route.credentials == Credentials::Open)
        || segments.first().is_some_and(|s| s == OPEN_NAMESPACE);
    Resolved { matched, open }
}

impl Resolved {
    /// True when a caller without valid credentials may call the path.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// True when the request is outside the queue bound.
    pub(crate) fn in_fast_lane(&self) -> bool {
        self.matched.is_some_and(|m| m.route.lane == Lane::Fast)
    }

    /// The path's row; none for a path no row serves.
    pub(crate) fn matched(&self) -> Option<Matched> {
        self.matched
    }
}

impl Matched {
    /// The streaming half of the row, when a synchronous request's body streams to it.
    pub(crate) fn streaming(&self) -> Option<Streaming> {
        match self.route.body {
            BodyPolicy::Whole => None,
            BodyPolicy::Streamed(streaming) => Some(streaming),
        }
    }

    /// The segments after the row's prefix.
    pub(crate) fn suffix(&self, mut segments: Vec<String>) -> Vec<String> {
        segments.split_off(self.prefix_len)
    }

    /// Points the request at its stream transaction when the row honours `x-arango-trx-id`
    /// and the request names one (404/1655 for a transaction that does not exist or that the
    /// caller may not use).
    pub(crate) fn enter_transaction(&self, req: &mut ApiRequest) -> Result<(), ArangoError> {
        if !self.route.transactional {
            return Ok(());
        }
        let header = req.header(transaction::TRX_HEADER);
        if let Some(database) = transaction::in_transaction(&req.database, &req.user, header)? {
            req.database = database;
        }
        Ok(())
    }

    /// The row's permission policy: nothing when the family checks levels itself, else the
    /// coarse check by method.
    pub(crate) fn check_permissions(&self, req: &ApiRequest) -> Result<(), ArangoError> {
        match self.route.permissions {
            Permissions::Own => Ok(()),
            // Deny by default: a family that does not check levels itself may change the
            // database only with `rw` on it (reads passed the pipeline's `none` check).
            Permissions::ByMethod => permission::require_for_method(req),
        }
    }

    /// Fills the request's suffix, applies the permission policy and calls the handler.
    pub(crate) async fn dispatch(
        self,
        api: &Api,
        mut req: ApiRequest,
        segments: Vec<String>,
        uri: &Uri,
        extensions: &Extensions,
    ) -> ApiResult {
        req.suffix = self.suffix(segments);
        self.enter_transaction(&mut req)?;
        self.check_permissions(&req)?;
        (self.route.handler)(Ctx {
            api,
            req,
            uri,
            extensions,
        })
        .await
    }
}

/// Calls the handler of the request's path (404 for a path no row serves): the route of a
/// request that passed the pipeline's checks earlier (a job, a batch part).
pub(crate) async fn dispatch(
    api: &Api,
    req: ApiRequest,
    segments: Vec<String>,
    uri: &Uri,
    extensions: &Extensions,
) -> ApiResult {
    let Some(matched) = resolve(&segments).matched else {
        return Err(unknown_path(&req.path));
    };
    matched.dispatch(api, req, segments, uri, extensions).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(path: &str) -> Vec<String> {
        path.split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    /// The prefix and prefix length of a path's row.
    fn row(path: &str) -> Option<(&'static [&'static str], usize)> {
        resolve(&segs(path))
            .matched
            .map(|m| (m.route.prefix, m.prefix_len))
    }

    #[test]
    fn families_take_suffixes_and_exact_routes_do_not() {
        let document: &[&str] = &["_api", "document"];
        assert_eq!(row("/_api/document/c/k"), Some((document, 2)));
        assert_eq!(row("/_api/document"), Some((document, 2)));
        assert_eq!(
            row("/_api/collection/c/properties"),
            Some((&["_api", "collection"][..], 2))
        );
        assert_eq!(
            row("/_api/database/user"),
            Some((&["_api", "database"][..], 2))
        );
        assert_eq!(row("/_api/version"), Some((&["_api", "version"][..], 2)));
        assert_eq!(row("/_api/version/x"), None);
        assert_eq!(
            row("/_admin/metrics"),
            Some((&["_admin", "metrics"][..], 2))
        );
        assert_eq!(
            row("/_admin/metrics/v2"),
            Some((&["_admin", "metrics", "v2"][..], 3))
        );
        assert_eq!(row("/_open/auth"), Some((&["_open", "auth"][..], 2)));
        assert_eq!(
            row("/_open/auth/renew"),
            Some((&["_open", "auth", "renew"][..], 3))
        );
        assert_eq!(row("/_api/documents"), None);
        assert_eq!(row("/"), None);
    }

    #[test]
    fn every_row_is_reachable_by_its_own_prefix() {
        for route in ROUTES {
            let path: Vec<String> = route.prefix.iter().map(|s| s.to_string()).collect();
            let matched = resolve(&path).matched.expect("a row's own prefix resolves");
            assert!(
                std::ptr::eq(matched.route, route),
                "{:?} is shadowed by {:?}",
                route.prefix,
                matched.route.prefix
            );
        }
    }

    #[test]
    fn only_open_paths_skip_authentication() {
        assert!(resolve(&segs("/_open/auth")).is_open());
        assert!(resolve(&segs("/_open/auth/renew")).is_open());
        assert!(resolve(&segs("/_open/unknown/path")).is_open());
        assert!(resolve(&segs("/_open")).is_open());
        assert!(resolve(&segs("/_admin/server/availability")).is_open());
        assert!(!resolve(&segs("/_admin/server/availability/x")).is_open());
        assert!(!resolve(&segs("/_admin/server/role")).is_open());
        assert!(!resolve(&segs("/_admin")).is_open());
        assert!(!resolve(&segs("/_api/version")).is_open());
        assert!(!resolve(&segs("/")).is_open());
        for route in ROUTES.iter().filter(|r| r.prefix[0] == OPEN_NAMESPACE) {
            assert_eq!(route.credentials, Credentials::Open, "{:?}", route.prefix);
        }
    }

    #[test]
    fn only_job_management_is_in_the_fast_lane() {
        for path in [
            "/_api/job/123",
            "/_api/job",
            "/_admin/job/all",
            "/_admin/job",
        ] {
            assert!(resolve(&segs(path)).in_fast_lane(), "{path}");
        }
        for path in [
            "/_admin/sleep",
            "/_api/jobs",
            "/_api/document/c/k",
            "/_api",
            "/",
        ] {
            assert!(!resolve(&segs(path)).in_fast_lane(), "{path}");
        }
    }

    #[test]
    fn only_the_import_streams_its_body() {
        let streamed: Vec<_> = ROUTES
            .iter()
            .filter(|r| matches!(r.body, BodyPolicy::Streamed(_)))
            .map(|r| r.prefix)
            .collect();
        assert_eq!(streamed, [&["_api", "import"][..]]);
        let import = resolve(&segs("/_api/import")).matched.unwrap();
        let limit = import.streaming().expect("the import streams").limit;
        let config = ApiConfig {
            import_size_max: 12345,
            ..ApiConfig::default()
        };
        assert_eq!(limit(&config), 12345);
    }
}
