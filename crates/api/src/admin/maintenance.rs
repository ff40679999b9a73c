//! `PUT /_admin/compact`, `POST /_admin/routing/reload` and `GET
//! /_admin/database/target-version`: server-wide maintenance calls.
//!
//! What it is: the compaction of every collection of every database through the operations
//! interface (`CollectionOps::compact`, the engine's own compaction: the journal engine
//! rewrites its sealed datafiles without dead records), one collection after the other on the
//! blocking pool; the routing reload, which has nothing to reload (Quince's routes are compiled
//! into the binary and there are no Foxx services) and says so by succeeding as arangod does;
//! and the database format version this server expects.
//!
//! What it is not: background compaction (the engine schedules that itself).
//!
//! Invariants: compaction is for administrators only (403/11 otherwise, as arangod's superuser
//! rule reads with Basic credentials: `rw` on `_system`); `changeLevel` and
//! `compactBottomMostLevel` are accepted and have no further meaning for the journal engine,
//! which always rewrites every sealed datafile; a collection dropped while compaction runs is
//! skipped, any other failure is the reply.

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, ARANGO_DATA_SOURCE_NOT_FOUND, HTTP_BAD_PARAMETER};
use serde_json::{json, Value};

use crate::blocking::blocking;
use crate::error::method_not_allowed;
use crate::limits::ARANGODB_VERSION;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `PUT /_admin/compact` with optional `{changeLevel, compactBottomMostLevel}`.
pub(crate) async fn compact(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::PUT {
        return Err(method_not_allowed());
    }
    req.require_admin()?;
    let body = match req.body.iter().all(u8::is_ascii_whitespace) {
        true => Value::Null,
        false => req.json_body()?,
    };
    match &body {
        Value::Null => {}
        Value::Object(options) => {
            for name in ["changeLevel", "compactBottomMostLevel"] {
                if options.get(name).is_some_and(|v| !v.is_boolean()) {
                    return Err(ArangoError::with_message(
                        HTTP_BAD_PARAMETER,
                        format!("{name} must be a boolean"),
                    ));
                }
            }
        }
        _ => {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "expecting an object of compaction options",
            ))
        }
    }
    let engine = Arc::clone(api.engine());
    let started = std::time::Instant::now();
    let compacted = blocking(move || {
        let mut compacted = 0u64;
        for name in engine.database_names() {
            let Some(database) = engine.database(&name) else {
                continue;
            };
            for collection in database.collections() {
                match collection.compact() {
                    Ok(()) => compacted += 1,
                    Err(e) if e.code == ARANGO_DATA_SOURCE_NOT_FOUND => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(compacted)
    })
    .await?;
    tracing::info!(
        event = "compact.all",
        collections = compacted,
        millis = started.elapsed().as_millis() as u64,
        by = req.user.name(),
        "compacted every collection"
    );
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200}),
    ))
}

/// `POST /_admin/routing/reload`: 204, nothing to reload (routes are compiled in).
pub(crate) fn routing_reload(req: &ApiRequest) -> ApiResult {
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    Ok(ApiResponse::empty(204))
}

/// `GET /_admin/database/target-version`: the database format version this server expects
/// (`major * 10000 + minor * 100`, as a string, as arangod reports it).
pub(crate) fn target_version(req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "version": format_version(ARANGODB_VERSION)}),
    ))
}

/// `3.12.4` → `31200`.
fn format_version(version: &str) -> String {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major * 10_000 + minor * 100).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_target_version_is_major_and_minor() {
        assert_eq!(super::format_version("3.12.4"), "31200");
        assert_eq!(super::format_version("3.9.0"), "30900");
    }
}
