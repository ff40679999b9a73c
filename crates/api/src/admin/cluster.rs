//! The cluster's endpoints on its members: `GET /_admin/cluster/health`,
//! `GET /_api/cluster/endpoints` and `PUT /_admin/cluster/maintenance`.
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

/// `PUT /_admin/cluster/maintenance` with `"on"`, `"off"` or `"<seconds>"`.
pub(crate) async fn maintenance(api: &Api, req: &ApiRequest) -> ApiResult {
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
