//! `GET /_admin/status`: the server's identity and state, in the keys drivers know.
//!
//! What it is: one handler. The keys are those python-arango's formatter knows
//! (`server`, `license`, `version`, `mode`, `operationMode`, `foxxApi`, `host`, `hostname`,
//! `pid`, `serverInfo`), so it warns about nothing.
//!
//! What it is not: a health check (`/_admin/server/availability` is that).

use serde_json::json;

use crate::error::method_not_allowed;
use crate::limits::ARANGODB_VERSION;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `GET /_admin/status`.
pub(crate) fn status(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != http::Method::GET {
        return Err(method_not_allowed());
    }
    let host = super::hostname();
    Ok(ApiResponse::json(
        200,
        &json!({
            "server": "arango",
            "version": ARANGODB_VERSION,
            "pid": std::process::id(),
            "license": "community",
            "mode": "server",
            "operationMode": "server",
            "foxxApi": false,
            "host": host,
            "hostname": host,
            "serverInfo": {
                "progress": {"phase": "in wait", "feature": "", "recoveryTick": 0},
                "role": "SINGLE",
                "maintenance": false,
                "writeOpsEnabled": !api.is_stopping(),
                "readOnly": api.server_mode().is_read_only(),
                "address": api.config().endpoint,
            },
        }),
    ))
}
