//! `/_api/document`: single and multi-document operations (`reference/arangodb-http-api.md` §2).

use crate::request::ApiRequest;
use crate::response::ApiResult;

/// Handles every request under `/_api/document`.
#[allow(dead_code)]
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    let _ = req;
    todo!("api: document family")
}
