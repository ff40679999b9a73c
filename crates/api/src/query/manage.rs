//! `/_api/explain`, `/_api/query` (parse), `/_api/query/{properties,current,slow,id}` and
//! `/_api/query-cache/{properties,entries}`.
//!
//! What it is: thin endpoints over the query service: explain and parse prepare a query
//! without running it; the registry lists, logs and kills queries; the results cache shows
//! and changes its properties and entries.
//!
//! What it is not: the registry or the cache themselves (`quince_aql::service`).
//!
//! Invariants: listings show only the request's database; changing properties or clearing
//! needs write access to the database (ArangoDB: admin rights on it); explaining and parsing
//! need read access, and explain also read access to the query's collections.

use http::Method;
use quince_errors::Result;
use serde_json::{json, Map, Value};

use crate::blocking::blocking;
use crate::error::{method_not_allowed, unknown_path};
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

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
            return Err(quince_errors::ArangoError::with_message(
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

/// Every request under `/_api/query`.
pub(crate) async fn query(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<String> = req.suffix.clone();
    let suffix: Vec<&str> = suffix.iter().map(String::as_str).collect();
    let registry = &api.queries().registry;
    let database = req.database.name().to_owned();
    match (&req.method, suffix.as_slice()) {
        (&Method::POST, []) => parse(&req).await,
        (&Method::GET, ["properties"]) => {
            req.require_database(Access::Read)?;
            Ok(ok(registry.properties().to_json()))
        }
        (&Method::PUT, ["properties"]) => {
            req.require_database(Access::Write)?;
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
            Ok(ApiResponse::json(
                200,
                &Value::Array(registry.current(&database)),
            ))
        }
        (&Method::GET, ["slow"]) => {
            req.require_database(Access::Read)?;
            Ok(ApiResponse::json(
                200,
                &Value::Array(registry.slow(&database)),
            ))
        }
        (&Method::DELETE, ["slow"]) => {
            req.require_database(Access::Write)?;
            registry.clear_slow(&database);
            Ok(ok(json!({})))
        }
        (&Method::DELETE, [id]) => {
            req.require_database(Access::Write)?;
            let killed = id
                .parse::<u64>()
                .is_ok_and(|id| registry.kill(&database, id));
            if !killed {
                return Err(quince_errors::ArangoError::with_message(
                    quince_errors::QUERY_NOT_FOUND,
                    format!("cannot kill query '{id}': query ID not found"),
                ));
            }
            Ok(ok(json!({})))
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
            req.require_database(Access::Write)?;
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
