//! `/_api/explain`, `/_api/query` (parse), `/_api/query/{properties,current,slow,id}` and
//! `/_api/query-cache/{properties,entries}`.
//!
//! What it is: thin endpoints over the query service: explain and parse prepare a query
//! without running it; the registry lists, logs and kills queries; the results cache shows
//! and changes its properties and entries.
//!
//! What it is not: the registry or the cache themselves (`quince_aql::service`).
//!
//! Invariants: listings, clearing the slow log and kills cover the request's database (or,
//! with `?all=true`, every database: a superuser in `_system` only) and only the caller's own
//! queries unless the caller administers the server (`rw` on `_system`), so nobody else sees
//! a query's text or bind parameters; each needs read access to the database. Changing the
//! tracking or the cache properties (server-wide in Quince) needs `rw` on `_system` (403/11);
//! clearing the cache needs write access to the database; explaining and parsing need read
//! access, and explain also read access to the query's collections.

use http::Method;
use quince_aql::service::registry::{Kill, Scope};
use quince_errors::{ArangoError, Result};
use serde_json::{json, Map, Value};

use crate::blocking::blocking;
use crate::error::{method_not_allowed, unknown_path};
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// The name of the system database.
const SYSTEM_DATABASE: &str = "_system";

fn ok(mut body: Value) -> ApiResponse {
    body["error"] = json!(false);
    body["code"] = json!(200);
    ApiResponse::json(200, &body)
}

fn object(req: &ApiRequest) -> Result<Map<String, Value>> {
    match req.required_json_body()? {
        Value::Object(map) => Ok(map),
        _ => Err(quince_aql::query::bad_request(
            "the body must be a JSON object",
        )),
    }
}

/// `POST /_api/explain`.
pub(crate) async fn explain(api: &Api, req: ApiRequest) -> ApiResult {
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    let (database, rule) = super::guarded(&req)?;
    let body = object(&req)?;
    let mut cursor_body = body.clone();
    cursor_body.remove("options");
    let request = quince_aql::CursorRequest::parse(
        &Value::Object(cursor_body),
        api.config().query_memory_limit,
    )?;
    let all_plans = body
        .get("options")
        .and_then(|o| o.get("allPlans"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let answer = blocking(move || {
        let name = database.name().to_owned();
        let prepared =
            quince_aql::prepare(database, &request.query, request.bind_vars, request.options)?;
        super::authorize(&rule, &name, &prepared.plan().collections)?;
        Ok(quince_aql::explain::explain(&prepared, all_plans))
    })
    .await?;
    Ok(ApiResponse::json(200, &answer))
}

/// `POST /_api/query`: parses only.
pub(crate) async fn parse(req: &ApiRequest) -> Result<ApiResponse> {
    req.require_database(Access::Read)?;
    let body = object(req)?;
    let text = match body.get("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q.clone(),
        _ => {
            return Err(ArangoError::with_message(
                quince_errors::QUERY_EMPTY,
                "query is empty",
            ))
        }
    };
    let query = quince_aql::syntax::parse(&text)?;
    Ok(ok(json!({
        "parsed": true,
        "collections": quince_aql::syntax::collections(&query),
        "bindVars": quince_aql::syntax::bind_parameters(&query),
        "ast": quince_aql::syntax::ast_json(&query),
    })))
}

/// The queries a listing, a clearing or a kill of this request covers (ArangoDB's
/// `methods::Queries` and `ExecContext::canAccessQuery`): `?all=true` asks for every
/// database, which only a superuser may, and only in `_system` (403/1230, then 403/11); a
/// caller who administers the server (`rw` on `_system`) covers every user's queries,
/// anyone else only their own.
fn scope(req: &ApiRequest) -> Result<Scope<'_>> {
    let all = req.bool_param("all", false);
    if all {
        if req.database.name() != SYSTEM_DATABASE {
            return Err(ArangoError::new(quince_errors::ARANGO_USE_SYSTEM_DATABASE));
        }
        if !req.user.is_superuser() {
            return Err(ArangoError::with_message(
                quince_errors::FORBIDDEN,
                "only superusers are allowed to perform actions on all queries",
            ));
        }
    }
    Ok(Scope {
        database: (!all).then(|| req.database.name()),
        user: (!req.user.is_admin()).then(|| req.user.name()),
    })
}

/// Every request under `/_api/query`.
pub(crate) async fn query(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<String> = req.suffix.clone();
    let suffix: Vec<&str> = suffix.iter().map(String::as_str).collect();
    let registry = &api.queries().registry;
    match (&req.method, suffix.as_slice()) {
        (&Method::POST, []) => parse(&req).await,
        (&Method::GET, ["properties"]) => {
            req.require_database(Access::Read)?;
            Ok(ok(registry.properties().to_json()))
        }
        (&Method::PUT, ["properties"]) => {
            // Quince's tracking properties are the server's, not one database's.
            req.require_database(Access::Read)?;
            req.require_admin()?;
            Ok(ok(registry.update_properties(&object(&req)?)?.to_json()))
        }
        (&Method::GET, ["rules"]) => {
            req.require_database(Access::Read)?;
            let rules: Vec<Value> = quince_aql::plan::RULES
                .iter()
                .map(|name| {
                    json!({"name": name, "flags": {
                        "hidden": false, "clusterOnly": false, "canBeDisabled": false,
                        "canCreateAdditionalPlans": false, "disabledByDefault": false,
                        "enterpriseOnly": false,
                    }})
                })
                .collect();
            Ok(ApiResponse::json(200, &Value::Array(rules)))
        }
        (&Method::GET, ["current"]) => {
            req.require_database(Access::Read)?;
            let scope = scope(&req)?;
            Ok(ApiResponse::json(
                200,
                &Value::Array(registry.current(&scope)),
            ))
        }
        (&Method::GET, ["slow"]) => {
            req.require_database(Access::Read)?;
            let scope = scope(&req)?;
            Ok(ApiResponse::json(200, &Value::Array(registry.slow(&scope))))
        }
        (&Method::DELETE, ["slow"]) => {
            req.require_database(Access::Read)?;
            registry.clear_slow(&scope(&req)?);
            Ok(ok(json!({})))
        }
        (&Method::DELETE, [id]) => {
            req.require_database(Access::Read)?;
            let scope = scope(&req)?;
            let outcome = id
                .parse::<u64>()
                .map_or(Kill::NotFound, |id| registry.kill(&scope, id));
            match outcome {
                Kill::Killed => Ok(ok(json!({}))),
                Kill::NotFound => Err(ArangoError::with_message(
                    quince_errors::QUERY_NOT_FOUND,
                    format!("cannot kill query '{id}': query ID not found"),
                )),
                Kill::Forbidden => Err(ArangoError::with_message(
                    quince_errors::FORBIDDEN,
                    format!(
                        "cannot kill query '{id}': only administrators may kill the queries \
                         of other users"
                    ),
                )),
            }
        }
        (_, [] | ["properties"] | ["current"] | ["slow"] | ["rules"] | [_]) => {
            Err(method_not_allowed())
        }
        _ => Err(unknown_path(&req.path)),
    }
}

/// Every request under `/_api/query-cache`.
pub(crate) async fn query_cache(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<String> = req.suffix.clone();
    let suffix: Vec<&str> = suffix.iter().map(String::as_str).collect();
    let cache = &api.queries().cache;
    let database = req.database.name().to_owned();
    match (&req.method, suffix.as_slice()) {
        (&Method::GET, ["properties"]) => {
            req.require_database(Access::Read)?;
            Ok(ok(cache.properties().to_json()))
        }
        (&Method::PUT, ["properties"]) => {
            // The results cache and its mode are the server's, not one database's.
            req.require_database(Access::Read)?;
            req.require_admin()?;
            Ok(ok(cache.update_properties(&object(&req)?)?.to_json()))
        }
        (&Method::GET, ["entries"]) => {
            req.require_database(Access::Read)?;
            Ok(ApiResponse::json(
                200,
                &Value::Array(cache.entries(&database)),
            ))
        }
        (&Method::DELETE, ["entries"] | []) => {
            req.require_database(Access::Write)?;
            cache.clear(&database);
            Ok(ok(json!({})))
        }
        (_, ["properties"] | ["entries"] | []) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// Every request under `/_api/query-plan-cache`: Quince keeps no plans between queries (a
/// plan is made per query in microseconds), so the list is empty and clearing is a no-op.
pub(crate) async fn query_plan_cache(req: ApiRequest) -> ApiResult {
    req.require_database(Access::Read)?;
    match (&req.method, req.suffix.len()) {
        (&Method::GET, 0) => Ok(ApiResponse::json(200, &json!([]))),
        (&Method::DELETE, 0) => {
            req.require_database(Access::Write)?;
            Ok(ok(json!({})))
        }
        (_, 0) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}
