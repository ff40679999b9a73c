//! Small server-information endpoints: version, engine, role, availability, time, license
//! and metrics.
//!
//! What it is: one function per endpoint, each answering 405 for methods it does not take.
//!
//! What it is not: `/_admin/status` and `/_admin/echo`, which have modules of their own.
//!
//! Invariants: `/_api/engine` names the engine `rocksdb`, the name every ArangoDB 3.12 client
//! expects (drivers and tools branch on it, and 3.12 has no other engine), and says what the
//! engine really is under its own attribute: `quince: {engine: "journal", version}` (Quince's
//! journal engine: append-only journals and sealed datafiles, compacted in the background).
//! `supports` advertises only the index types that exist. `/_api/version?details=true` does
//! the same (`engine: rocksdb`, `quince-engine: journal`).

use std::time::{SystemTime, UNIX_EPOCH};

use http::Method;
use quince_errors::{ArangoError, ONLY_ENTERPRISE};
use serde_json::json;

use crate::error::method_not_allowed;
use crate::limits::ARANGODB_VERSION;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// The engine name ArangoDB 3.12 clients expect (`/_api/engine` `name`).
const ENGINE_WIRE_NAME: &str = "rocksdb";

/// What Quince's engine really is (`/_api/engine` `quince.engine`).
const QUINCE_ENGINE: &str = "journal";

/// The content type of the Prometheus text format.
const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4";

fn only_get(req: &ApiRequest) -> Result<(), ArangoError> {
    if req.method == Method::GET {
        Ok(())
    } else {
        Err(method_not_allowed())
    }
}

/// `GET /_api/version[?details=true]`.
pub(crate) fn version(req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let mut body = json!({
        "server": "arango",
        "license": "community",
        "version": ARANGODB_VERSION,
    });
    if req.bool_param("details", false) {
        body["details"] = json!({
            "architecture": "64bit",
            "mode": "server",
            "role": "SINGLE",
            "host": super::hostname(),
            "server-version": ARANGODB_VERSION,
            "platform": std::env::consts::OS,
            "engine": ENGINE_WIRE_NAME,
            "quince-engine": QUINCE_ENGINE,
            "quince-version": env!("CARGO_PKG_VERSION"),
            "quince": "Quince, an ArangoDB-compatible document server",
        });
    }
    Ok(ApiResponse::json(200, &body))
}

/// `GET /_api/engine`.
pub(crate) fn engine(req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    Ok(ApiResponse::json(
        200,
        &json!({
            "name": ENGINE_WIRE_NAME,
            "quince": {"engine": QUINCE_ENGINE, "version": env!("CARGO_PKG_VERSION")},
            "supports": {
                "indexes": [
                    "primary", "edge", "persistent", "hash", "skiplist", "ttl", "geo", "fulltext",
                ],
                "aliases": {"indexes": {
                    "hash": "persistent", "skiplist": "persistent", "geo1": "geo", "geo2": "geo",
                }},
            },
            "endianness": "little",
        }),
    ))
}

/// `GET /_admin/server/role`: `SINGLE`, or the cluster role (`COORDINATOR`, `PRIMARY`).
pub(crate) fn role(api: &Api, req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let mode = api.server_mode().name();
    let role = api
        .cluster()
        .map_or("SINGLE", |cluster| cluster.role().name());
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "role": role, "mode": mode}),
    ))
}

/// `GET /_admin/server/id`: the server's id in its cluster; a single server has none (500,
/// as ArangoDB answers).
pub(crate) fn id(api: &Api, req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    match api.cluster() {
        Some(cluster) => Ok(ApiResponse::json(
            200,
            &json!({"error": false, "code": 200, "id": cluster.server_id()}),
        )),
        None => Err(ArangoError::with_message(
            quince_errors::INTERNAL,
            "server is not part of a cluster",
        )),
    }
}

/// `GET /_admin/server/availability`: open to anyone; 503 once shutdown began (the pipeline
/// answers that before any handler runs).
pub(crate) fn availability(api: &Api, req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let mode = api.server_mode().name();
    Ok(ApiResponse::json(200, &json!({"mode": mode})))
}

/// `GET /_admin/time`.
pub(crate) fn time(req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "time": now}),
    ))
}

/// `GET /_admin/license`: the community edition has none; setting one is an enterprise
/// feature.
pub(crate) fn license(req: &ApiRequest) -> ApiResult {
    match req.method {
        Method::GET => Ok(ApiResponse::json(200, &json!({"license": "none"}))),
        Method::PUT => Err(ArangoError::new(ONLY_ENTERPRISE)),
        _ => Err(method_not_allowed()),
    }
}

/// `GET /_admin/metrics` and `/_admin/metrics/v2`: Prometheus text.
pub(crate) fn metrics(api: &Api, req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let text = api.metrics_snapshot().render();
    Ok(ApiResponse::with_content_type(
        200,
        PROMETHEUS_CONTENT_TYPE,
        text,
    ))
}
