//! The router: from path segments to the handler of an endpoint family.
//!
//! What it is: a table of path prefixes ([`ROUTES`]), the rule for which paths are open
//! without credentials ([`is_open_path`]), and [`dispatch`], which fills
//! [`ApiRequest::suffix`] with the segments after the family's prefix and calls the handler.
//!
//! What it is not: method matching. Each handler answers 405 for methods it does not serve,
//! because only it knows which methods its sub-paths take.
//!
//! Invariants: an unknown path is 404 with errorNum 404 and `unknown path '<path>'`; a route
//! marked exact never sees a suffix (extra segments make the path unknown).

use http::{Extensions, Uri};

use crate::error::unknown_path;
use crate::pipeline::Api;
use crate::request::ApiRequest;
use crate::response::ApiResult;
use crate::{admin, database, open_auth};

/// The endpoint families and single endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    Document,
    Collection,
    KeyGenerators,
    Database,
    Version,
    Engine,
    ServerRole,
    Availability,
    Status,
    Time,
    Echo,
    License,
    Metrics,
    OpenAuth,
    OpenAuthRenew,
    User,
    Token,
    ServerMode,
    Job,
    Batch,
    Sleep,
    Import,
}

/// One row of the routing table.
struct Entry {
    /// The leading path segments.
    prefix: &'static [&'static str],
    /// Where they lead.
    route: Route,
    /// True when more segments may follow (they become the suffix).
    takes_suffix: bool,
}

const fn family(prefix: &'static [&'static str], route: Route) -> Entry {
    Entry {
        prefix,
        route,
        takes_suffix: true,
    }
}

const fn exact(prefix: &'static [&'static str], route: Route) -> Entry {
    Entry {
        prefix,
        route,
        takes_suffix: false,
    }
}

/// Every route. Prefixes do not overlap except where the longer one is exact and listed
/// first.
const ROUTES: &[Entry] = &[
    family(&["_api", "document"], Route::Document),
    family(&["_api", "collection"], Route::Collection),
    exact(&["_api", "key-generators"], Route::KeyGenerators),
    family(&["_api", "database"], Route::Database),
    exact(&["_api", "version"], Route::Version),
    exact(&["_api", "engine"], Route::Engine),
    exact(&["_admin", "server", "role"], Route::ServerRole),
    exact(&["_admin", "server", "availability"], Route::Availability),
    exact(&["_admin", "status"], Route::Status),
    exact(&["_admin", "time"], Route::Time),
    family(&["_admin", "echo"], Route::Echo),
    exact(&["_admin", "license"], Route::License),
    exact(&["_admin", "metrics", "v2"], Route::Metrics),
    exact(&["_admin", "metrics"], Route::Metrics),
    exact(&["_open", "auth", "renew"], Route::OpenAuthRenew),
    exact(&["_open", "auth"], Route::OpenAuth),
    family(&["_api", "user"], Route::User),
    family(&["_api", "token"], Route::Token),
    exact(&["_admin", "server", "mode"], Route::ServerMode),
    family(&["_api", "job"], Route::Job),
    family(&["_admin", "job"], Route::Job),
    exact(&["_api", "batch"], Route::Batch),
    exact(&["_admin", "sleep"], Route::Sleep),
    exact(&["_api", "import"], Route::Import),
];

impl Route {
    /// True for the families that check the caller's levels themselves, per collection or
    /// per account (`crate::permission`); every other family gets the coarse check of
    /// [`crate::permission::require_for_method`].
    fn checks_permissions(self) -> bool {
        matches!(
            self,
            Route::Document
                | Route::Collection
                | Route::Database
                | Route::OpenAuth
                | Route::OpenAuthRenew
                | Route::User
                | Route::Token
                | Route::ServerMode
                | Route::Echo
                // Every job call acts only on the caller's own jobs (a read-only user fetches,
                // cancels and deletes the jobs they queued).
                | Route::Job
        )
    }
}

/// The route of a path and the length of its prefix, if any.
pub(crate) fn resolve(segments: &[String]) -> Option<(Route, usize)> {
    ROUTES.iter().find_map(|entry| {
        let n = entry.prefix.len();
        let fits = if entry.takes_suffix {
            segments.len() >= n
        } else {
            segments.len() == n
        };
        (fits && entry.prefix.iter().zip(segments).all(|(p, s)| p == s)).then_some((entry.route, n))
    })
}

/// True for `/_api/import`, whose body the pipeline hands to the handler unread (imports
/// stream; see `crate::import`).
pub(crate) fn streams_body(segments: &[String]) -> bool {
    matches!(resolve(segments), Some((Route::Import, _)))
}

/// Paths that need no credentials: `/_open/*` and `/_admin/server/availability`.
pub(crate) fn is_open_path(segments: &[String]) -> bool {
    match segments.first().map(String::as_str) {
        Some("_open") => true,
        Some("_admin") => segments[1..] == ["server", "availability"],
        _ => false,
    }
}

/// Calls the handler of the request's path.
pub(crate) async fn dispatch(
    api: &Api,
    mut req: ApiRequest,
    mut segments: Vec<String>,
    uri: &Uri,
    extensions: &Extensions,
) -> ApiResult {
    let Some((route, prefix_len)) = resolve(&segments) else {
        return Err(unknown_path(&req.path));
    };
    req.suffix = segments.split_off(prefix_len);
    if !route.checks_permissions() {
        // Deny by default: a family that does not check levels itself may change the
        // database only with `rw` on it (reads passed the pipeline's `none` check).
        crate::permission::require_for_method(&req)?;
    }
    match route {
        Route::Document => crate::document::handle(req).await,
        Route::Collection => crate::collection::handle(api, req).await,
        Route::KeyGenerators => crate::collection::key_generators(req).await,
        Route::Database => database::handle(api, req).await,
        Route::Version => admin::server::version(&req),
        Route::Engine => admin::server::engine(&req),
        Route::ServerRole => admin::server::role(api, &req),
        Route::Availability => admin::server::availability(api, &req),
        Route::Status => admin::status::status(api, &req),
        Route::Time => admin::server::time(&req),
        Route::Echo => admin::echo::echo(api, &req, uri, extensions),
        Route::License => admin::server::license(&req),
        Route::Metrics => admin::server::metrics(api, &req),
        Route::OpenAuth => open_auth::login(api, &req, extensions).await,
        Route::OpenAuthRenew => open_auth::renew(api, &req),
        Route::User => crate::user::handle(api, req).await,
        Route::Token => crate::token::handle(api, req).await,
        Route::ServerMode => crate::server_mode::handle(api, &req),
        Route::Job => crate::job::handle(api, req).await,
        Route::Batch => crate::batch::handle(api, req).await,
        Route::Sleep => crate::job::sleep::sleep(req).await,
        Route::Import => crate::import::handle_whole(req).await,
    }
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

    #[test]
    fn families_take_suffixes_and_exact_routes_do_not() {
        assert_eq!(
            resolve(&segs("/_api/document/c/k")),
            Some((Route::Document, 2))
        );
        assert_eq!(resolve(&segs("/_api/document")), Some((Route::Document, 2)));
        assert_eq!(
            resolve(&segs("/_api/collection/c/properties")),
            Some((Route::Collection, 2))
        );
        assert_eq!(
            resolve(&segs("/_api/database/user")),
            Some((Route::Database, 2))
        );
        assert_eq!(resolve(&segs("/_api/version")), Some((Route::Version, 2)));
        assert_eq!(resolve(&segs("/_api/version/x")), None);
        assert_eq!(resolve(&segs("/_admin/metrics")), Some((Route::Metrics, 2)));
        assert_eq!(
            resolve(&segs("/_admin/metrics/v2")),
            Some((Route::Metrics, 3))
        );
        assert_eq!(resolve(&segs("/_open/auth")), Some((Route::OpenAuth, 2)));
        assert_eq!(
            resolve(&segs("/_open/auth/renew")),
            Some((Route::OpenAuthRenew, 3))
        );
        assert_eq!(resolve(&segs("/_api/documents")), None);
        assert_eq!(resolve(&segs("/")), None);
    }

    #[test]
    fn only_open_paths_skip_authentication() {
        assert!(is_open_path(&segs("/_open/auth")));
        assert!(is_open_path(&segs("/_admin/server/availability")));
        assert!(!is_open_path(&segs("/_admin/server/role")));
        assert!(!is_open_path(&segs("/_admin")));
        assert!(!is_open_path(&segs("/_api/version")));
        assert!(!is_open_path(&segs("/")));
    }
}
