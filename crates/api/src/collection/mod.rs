//! `/_api/collection` and `/_api/key-generators` (`reference/arangodb-http-api.md` §3).

use crate::request::ApiRequest;
use crate::response::ApiResult;

/// Handles every request under `/_api/collection`.
#[allow(dead_code)]
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    let _ = req;
    todo!("api: collection family")
}
