//! `/_api/replication/...`: the cluster-internal requests between a shard's leader and its
//! followers on DB servers (apply a batch, list keys, fetch documents, join), handed to the
//! installed [`quince_ops::ClusterOps::internal`].
//!
//! What it is: the HTTP side only: the caller must be a superuser (the cluster's members send a
//! superuser JWT with their `server_id`; with authentication off everybody is one), the body
//! was read whole within `--http.max-body-size` by the pipeline, and the call runs on the
//! blocking pool (it writes shards and waits for peers), unless the cluster says it is quick
//! (`ClusterOps::internal_is_quick`: a small apply batch), when it runs on the connection's
//! task. The reply's status and JSON body are
//! answered as they come. The paths, parameters and bodies are the cluster crate's
//! (`crates/cluster/src/dbserver/`; `docs/cluster.md`).
//!
//! What it is not: ArangoDB's public replication API (`/_api/replication/logger-state` and
//! friends are not served): a single server, or a server without a cluster installed, answers
//! 404 here.
//!
//! Invariants: nobody but a superuser reaches the cluster code (403/11 otherwise); no reply
//! is built here beyond the error of a refused or failed call.

use quince_errors::{ArangoError, FORBIDDEN};
use quince_ops::InternalRequest;

use crate::blocking::blocking_unless;
use crate::error::unknown_path;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// Serves one internal request (see the module documentation).
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let Some(cluster) = api.cluster().cloned() else {
        return Err(unknown_path(&req.path));
    };
    if !req.user.is_superuser() {
        return Err(ArangoError::new(FORBIDDEN));
    }
    let request = InternalRequest {
        method: req.method.as_str().to_owned(),
        database: req.database.name().to_owned(),
        path: req.suffix.clone(),
        query: req.query.clone(),
        body: req.body.to_vec(),
    };
    let quick = cluster.internal_is_quick(&request);
    let reply = blocking_unless(quick, move || cluster.internal(request)).await?;
    Ok(ApiResponse::json_bytes(reply.status, reply.body))
}
