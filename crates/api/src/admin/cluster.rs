//! The cluster's endpoints on its members: `GET /_admin/cluster/health`,
//! `GET /_api/cluster/endpoints`, `PUT /_admin/cluster/maintenance` (and one DB server's
//! under `/_admin/cluster/maintenance/<id>`), `/_admin/cluster/numberOfServers`, and
//! `/_admin/cluster/nodeVersion`, `nodeEngine` and `nodeStatistics` of one server.
//!
//! What it is: thin handlers over the installed [`quince_ops::ClusterOps`] (the cluster crate
//! reads the answers from the metadata store), run on the blocking pool because they wait for
//! the store.
//!
//! What it is not: the health judgement or the maintenance mode's effect (supervision, in the
//! cluster crate).
//!
//! Invariants: a single server (no cluster installed) answers 501 with errorNum 1471, as these
//! are a coordinator's; the maintenance switch is for administrators (403/11 otherwise) and
//! takes ArangoDB's bodies only: the JSON strings `"on"`, `"off"` or a number of seconds
//! (400/10 for anything else).

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, CLUSTER_ONLY_ON_COORDINATOR, HTTP_BAD_PARAMETER};
use quince_ops::ClusterOps;
use serde_json::{json, Value};

use crate::blocking::blocking;
use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// The most seconds the maintenance mode may be asked for (one week).
const MAINTENANCE_SECONDS_MAX: u64 = 7 * 24 * 3600;

fn cluster(api: &Api) -> Result<Arc<dyn ClusterOps>, ArangoError> {
    api.cluster()
        .cloned()
        .ok_or_else(|| ArangoError::new(CLUSTER_ONLY_ON_COORDINATOR))
}

/// `GET /_admin/cluster/health`.
pub(crate) async fn health(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    req.require_admin()?;
    let cluster = cluster(api)?;
    let mut body = blocking(move || cluster.health()).await?;
    body["error"] = json!(false);
    body["code"] = json!(200);
    Ok(ApiResponse::json(200, &body))
}

/// `GET /_api/cluster/endpoints`: the coordinators' endpoints (drivers balance over them).
pub(crate) async fn endpoints(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    let cluster = cluster(api)?;
    let endpoints = blocking(move || cluster.coordinator_endpoints()).await?;
    let listed: Vec<Value> = endpoints
        .into_iter()
        .map(|e| json!({"endpoint": e}))
        .collect();
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "endpoints": listed}),
    ))
}

/// `PUT /_admin/cluster/maintenance` with `"on"`, `"off"` or `"<seconds>"`; one DB server's
/// under `/_admin/cluster/maintenance/<id>`.
pub(crate) async fn maintenance(api: &Api, req: &ApiRequest) -> ApiResult {
    match req.suffix.as_slice() {
        [] => {}
        [server] => return server_maintenance(api, req, server.clone()).await,
        _ => return Err(crate::error::unknown_path(&req.path)),
    }
    if req.method != Method::PUT {
        return Err(method_not_allowed());
    }
    req.require_admin()?;
    let cluster = cluster(api)?;
    let seconds = match req.required_json_body()? {
        Value::String(mode) if mode == "on" => Some(3600),
        Value::String(mode) if mode == "off" => None,
        Value::String(mode) => match mode.parse::<u64>() {
            Ok(n) if (1..=MAINTENANCE_SECONDS_MAX).contains(&n) => Some(n),
            _ => return Err(bad_mode()),
        },
        _ => return Err(bad_mode()),
    };
    let warning = blocking(move || cluster.set_maintenance(seconds)).await?;
    let mut body = json!({"error": false, "code": 200});
    if let Some(warning) = warning {
        body["warning"] = json!(warning);
    }
    Ok(ApiResponse::json(200, &body))
}

fn bad_mode() -> ArangoError {
    ArangoError::with_message(
        HTTP_BAD_PARAMETER,
        "expecting the string \"on\", \"off\" or a number of seconds",
    )
}

/// `GET` (the entry, under `result`, while in maintenance) and `PUT` (`{"mode":
/// "maintenance", "timeout": seconds}` or `{"mode": "normal"}`) of
/// `/_admin/cluster/maintenance/<DB server id>`.
async fn server_maintenance(api: &Api, req: &ApiRequest, server: String) -> ApiResult {
    req.require_admin()?;
    let cluster = cluster(api)?;
    match req.method {
        Method::GET => {
            let entry = blocking(move || cluster.server_maintenance(&server)).await?;
            let mut body = json!({"error": false, "code": 200});
            if let Some(entry) = entry {
                body["result"] = entry;
            }
            Ok(ApiResponse::json(200, &body))
        }
        Method::PUT => {
            let body = req.required_json_body()?;
            let seconds = match body.get("mode").and_then(Value::as_str) {
                Some("maintenance") => match body.get("timeout") {
                    None | Some(Value::Null) => Some(3600),
                    Some(value) => Some(
                        value
                            .as_u64()
                            .filter(|n| (1..=MAINTENANCE_SECONDS_MAX).contains(n))
                            .ok_or_else(|| {
                                ArangoError::with_message(
                                    HTTP_BAD_PARAMETER,
                                    "timeout must be a number of seconds",
                                )
                            })?,
                    ),
                },
                Some("normal") => None,
                _ => {
                    return Err(ArangoError::with_message(
                        HTTP_BAD_PARAMETER,
                        "mode must be \"maintenance\" or \"normal\"",
                    ))
                }
            };
            blocking(move || cluster.set_server_maintenance(&server, seconds)).await?;
            Ok(ApiResponse::json(
                200,
                &json!({"error": false, "code": 200}),
            ))
        }
        _ => Err(method_not_allowed()),
    }
}

/// `GET` and `PUT /_admin/cluster/numberOfServers`.
pub(crate) async fn number_of_servers(api: &Api, req: &ApiRequest) -> ApiResult {
    let cluster = cluster(api)?;
    match req.method {
        Method::GET => {
            let mut body = blocking(move || cluster.number_of_servers()).await?;
            body["error"] = json!(false);
            body["code"] = json!(200);
            Ok(ApiResponse::json(200, &body))
        }
        Method::PUT => {
            req.require_admin()?;
            let body = req.required_json_body()?;
            blocking(move || cluster.set_number_of_servers(&body)).await?;
            Ok(ApiResponse::json(
                200,
                &json!({"error": false, "code": 200}),
            ))
        }
        _ => Err(method_not_allowed()),
    }
}

/// `GET /_admin/cluster/nodeVersion|nodeEngine|nodeStatistics?ServerID=<id>`: `path` on that
/// server, its reply as it comes.
pub(crate) async fn node_info(api: &Api, req: &ApiRequest, path: &'static str) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    req.require_admin()?;
    let cluster = cluster(api)?;
    let Some(server) = req.param("ServerID").map(str::to_owned) else {
        return Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "missing the ServerID parameter",
        ));
    };
    let reply = blocking(move || cluster.server_get(&server, path)).await?;
    Ok(ApiResponse::json_bytes(reply.status, reply.body))
}
