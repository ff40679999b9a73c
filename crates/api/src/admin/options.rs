//! `GET /_admin/options` and `GET /_admin/options-description`: the server's effective startup
//! options and what each means (ArangoDB 3.12).
//!
//! What it is: the two replies over the [`ServerOptions`](crate::ServerOptions) the binary
//! installed: option name → value (without the options that hold passwords or secrets, which
//! the binary leaves out, as arangod does), and option name → description.
//!
//! What it is not: option parsing; the API does not know which options exist.
//!
//! Invariants: only in `_system` (403/1230 elsewhere) and only for whom `--server.options-api`
//! lets through (403/11 otherwise; the default, as in arangod, is `jwt`: the superuser only);
//! without an installed report the reply is 501/9.

use http::Method;
use quince_errors::{ArangoError, ARANGO_USE_SYSTEM_DATABASE, NOT_IMPLEMENTED};

use crate::error::method_not_allowed;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::{Api, ServerOptions};

/// `GET /_admin/options`.
pub(crate) fn options(api: &Api, req: &ApiRequest) -> ApiResult {
    let report = checked(api, req)?;
    Ok(ApiResponse::json(200, &report.values))
}

/// `GET /_admin/options-description`.
pub(crate) fn descriptions(api: &Api, req: &ApiRequest) -> ApiResult {
    let report = checked(api, req)?;
    Ok(ApiResponse::json(200, &report.descriptions))
}

fn checked<'a>(api: &'a Api, req: &ApiRequest) -> Result<&'a ServerOptions, ArangoError> {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    if req.database.name() != crate::path::SYSTEM_DATABASE {
        return Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE));
    }
    api.config().options_api.check(&req.user)?;
    api.hooks().options().ok_or_else(|| {
        ArangoError::with_message(NOT_IMPLEMENTED, "this server reports no startup options")
    })
}
