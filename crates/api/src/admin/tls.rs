//! `GET` and `POST /_admin/server/tls`: the TLS data in use, and reloading it from its files.
//!
//! What it is: the handler. `GET` answers ArangoDB 3.12's shape (`result` with `keyfile`,
//! `clientCA` and, when host names have keyfiles of their own, `SNI`) to any authenticated
//! caller; `POST` re-reads the files and answers the same shape, for superusers only (a
//! superuser token, or authentication off), as arangod does: 403/11 "only superusers may
//! reload TLS data" for anyone else. A reload that fails answers 400 with errorNum 34
//! ("cannot read file", arangod's code) and keeps the configuration in use. Other methods get
//! 403/11, arangod's answer.
//!
//! What it is not: TLS. The listener's configuration sits behind [`TlsControl`]; without an
//! ssl:// endpoint there is none, and both methods answer an empty `result`, as arangod does
//! when it has no TLS data.
//!
//! Invariants: private keys never appear in a reply (only their SHA-256); a reload runs off
//! the async workers.

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, CANNOT_READ_FILE, FORBIDDEN};
use serde_json::{json, Value};

use crate::blocking::blocking;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::{Api, TlsControl};

/// `/_admin/server/tls`.
pub(crate) async fn handle(api: &Api, req: &ApiRequest) -> ApiResult {
    let control = api.tls().cloned();
    let result = match req.method {
        Method::GET => control.map_or_else(|| json!({}), |tls| tls.describe()),
        Method::POST => {
            if !req.user.is_superuser() {
                return Err(ArangoError::with_message(
                    FORBIDDEN,
                    "only superusers may reload TLS data",
                ));
            }
            match control {
                Some(tls) => reload(tls).await?,
                None => json!({}),
            }
        }
        _ => return Err(ArangoError::new(FORBIDDEN)),
    };
    Ok(ApiResponse::json(
        200,
        &json!({"error": false, "code": 200, "result": result}),
    ))
}

/// Reloads on the blocking pool; a failure is 400/34 with the reason.
async fn reload(tls: Arc<dyn TlsControl>) -> Result<Value, ArangoError> {
    blocking(move || {
        tls.reload().map_err(|reason| {
            tracing::warn!(event = "tls.reload_failed", %reason);
            ArangoError::with_message(
                CANNOT_READ_FILE,
                format!("could not reload the TLS data: {reason}"),
            )
        })
    })
    .await
}
