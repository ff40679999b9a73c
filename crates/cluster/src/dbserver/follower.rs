//! A follower's endpoints: `apply` (a batch of replicated operations from the shard's leader),
//! and the read-only `keys` and `documents` a leader uses to compare and copy a shard.
//!
//! What it is: the fencing of replication (an `apply` is taken only from the Plan's leader at
//! the Plan's epoch, for a shard the Plan gives this server as a follower: an older epoch is
//! 1491, another sender or a shard this server does not follow 1490; a request that names a
//! newer epoch than this server's Plan view first re-reads that shard's Plan key), and the
//! listing of a shard's `(_key, _rev)` pairs in hash buckets ([`bucket_of`]), so that a leader
//! compares large shards a page at a time.
//!
//! What it is not: the decision of what to send (the leader's `sender.rs` and `catch_up.rs`).
//!
//! Invariants: nothing is applied that the fencing refused; a `keys` reply holds one bucket of
//! the shard, sorted by key; at most [`DOCUMENTS_MAX`] documents per `documents` request.

use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, CLUSTER_SHARD_FOLLOWER_REFUSES_OPERATION, CLUSTER_SHARD_LEADER_RESIGNED,
    HTTP_BAD_PARAMETER,
};
use quince_ops::{CollectionOps, InternalRequest, ReplicatedOp};
use serde::Deserialize;
use serde_json::{json, Value};

use super::plan::{PlanView, PlannedShard};
use super::wire::{decode_op, ApplyBody, DocumentsReply, KeysReply};
use super::DbServer;
use crate::in_sync::ShardId;
use crate::layout::{decode, ShardPlan};

/// The most keys one `documents` request may name.
pub const DOCUMENTS_MAX: usize = 10_000;

/// The most buckets a `keys` request may split a shard into.
pub const BUCKETS_MAX: u64 = 1 << 20;

fn bad(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, message.into())
}

fn refuses(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(CLUSTER_SHARD_FOLLOWER_REFUSES_OPERATION, message.into())
}

/// The bucket of `key` among `buckets` (FNV-1a: the same on every server).
pub fn bucket_of(key: &str, buckets: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash % buckets.max(1)
}

/// The local shard collection `shard` of `database` (unwrapped: the local engine's).
pub fn local_shard(
    server: &DbServer,
    database: &str,
    shard: &str,
) -> Result<Arc<dyn CollectionOps>> {
    let db = server
        .local()
        .database(database)
        .ok_or_else(|| ArangoError::new(quince_errors::ARANGO_DATABASE_NOT_FOUND))?;
    db.collection(shard)
}

/// Re-reads one shard's Plan key and puts it into the view when it is fresher.
fn refresh_shard(server: &DbServer, id: &ShardId) -> Result<Arc<PlanView>> {
    let ctx = &server.ctx;
    let key = ctx.layout.shard_plan(&id.db, id.cid, &id.shard);
    let entry = ctx.store.get(&key).map_err(|error| {
        ArangoError::with_message(
            quince_errors::CLUSTER_BACKEND_UNAVAILABLE,
            format!("cannot read the shard's Plan: {error}"),
        )
    })?;
    let fresh = entry.and_then(|entry| {
        decode::<ShardPlan>(&entry.value).map(|plan| PlannedShard {
            id: id.clone(),
            plan,
            revision: entry.mod_revision,
        })
    });
    let mut view = server.view.write();
    if let Some(fresh) = fresh {
        *view = Arc::new(view.with_shard(fresh));
    }
    Ok(Arc::clone(&view))
}

/// Checks that `leader` at `epoch` may send this server operations of `shard`.
pub fn check_sender(server: &DbServer, id: &ShardId, leader: &str, epoch: u64) -> Result<()> {
    let mut view = server.plan();
    let known = view.shard(&id.shard).map(|s| s.plan.epoch);
    if known.is_none_or(|known| epoch > known) {
        view = refresh_shard(server, id)?;
    }
    let planned = view
        .shard(&id.shard)
        .filter(|s| s.id.db == id.db)
        .ok_or_else(|| refuses(format!("shard {} is not planned here", id.shard)))?;
    if epoch < planned.plan.epoch {
        return Err(ArangoError::with_message(
            CLUSTER_SHARD_LEADER_RESIGNED,
            format!(
                "epoch {epoch} of shard {} is over: the Plan is at epoch {}",
                id.shard, planned.plan.epoch
            ),
        ));
    }
    if epoch != planned.plan.epoch || planned.plan.leader != leader {
        return Err(refuses(format!(
            "{leader} does not lead shard {} at epoch {epoch}",
            id.shard
        )));
    }
    if !planned.plan.followers.iter().any(|f| *f == server.ctx.me) {
        return Err(refuses(format!(
            "this server does not follow shard {}",
            id.shard
        )));
    }
    Ok(())
}

/// The most operations an apply batch may carry to run on the api's connection task.
pub const QUICK_APPLY_OPS: usize = 16;

/// True when an apply request is quick to serve (`ClusterOps::internal_is_quick`): its query
/// (a sender's `sender::apply_facts`) says it carries at most [`QUICK_APPLY_OPS`] operations,
/// is not synced, and names an epoch of the shard no newer than this server's Plan view (so
/// that no Plan key is read from the store). Requests without those facts are not quick.
pub fn apply_is_quick(server: &DbServer, request: &InternalRequest) -> bool {
    let number = |name: &str| request.param(name).and_then(|v| v.parse::<u64>().ok());
    let (Some(shard), Some(epoch), Some(ops)) =
        (request.param("shard"), number("epoch"), number("ops"))
    else {
        return false;
    };
    if request.param("waitForSync") != Some("false") || ops > QUICK_APPLY_OPS as u64 {
        return false;
    }
    server
        .plan()
        .shard(shard)
        .is_some_and(|planned| epoch <= planned.plan.epoch)
}

/// `POST apply`: `{shard, cid, epoch, leader, waitForSync, ops}`.
pub fn serve_apply(server: &DbServer, request: &InternalRequest) -> Result<Value> {
    let body: ApplyBody =
        serde_json::from_slice(&request.body).map_err(|e| bad(format!("bad apply body: {e}")))?;
    let id = ShardId::new(&request.database, body.cid, &body.shard);
    check_sender(server, &id, &body.leader, body.epoch)?;
    let count = body.ops.len();
    let ops: Vec<ReplicatedOp> = body.ops.into_iter().map(decode_op).collect::<Result<_>>()?;
    let shard = local_shard(server, &request.database, &body.shard)?;
    shard.apply_replicated(&ops, body.wait_for_sync)?;
    Ok(json!({"error": false, "applied": count}))
}

fn param<'a>(request: &'a InternalRequest, name: &str) -> Result<&'a str> {
    request
        .param(name)
        .ok_or_else(|| bad(format!("missing parameter '{name}'")))
}

fn number(request: &InternalRequest, name: &str) -> Result<u64> {
    param(request, name)?
        .parse()
        .map_err(|_| bad(format!("parameter '{name}' is not a number")))
}

#[derive(Deserialize)]
struct KeyOf {
    #[serde(rename = "_key")]
    key: String,
}

/// The `(key, rev)` pairs of `shard` in bucket `bucket` of `buckets`, sorted by key.
pub fn bucket_keys(
    shard: &dyn CollectionOps,
    bucket: u64,
    buckets: u64,
) -> Result<Vec<(String, String)>> {
    let mut keys = Vec::new();
    let mut failure = None;
    shard.scan(
        &mut |document| match serde_json::from_slice::<KeyOf>(&document.json) {
            Ok(KeyOf { key }) => {
                if bucket_of(&key, buckets) == bucket {
                    keys.push((key, document.rev));
                }
                true
            }
            Err(error) => {
                failure = Some(ArangoError::with_message(
                    quince_errors::INTERNAL,
                    format!("a stored document has no key: {error}"),
                ));
                false
            }
        },
    )?;
    if let Some(error) = failure {
        return Err(error);
    }
    keys.sort_unstable();
    Ok(keys)
}

/// `GET keys?shard=&bucket=&buckets=`: one bucket's `[key, rev]` pairs; with `countOnly=true`,
/// only `{count}`.
pub fn serve_keys(server: &DbServer, request: &InternalRequest) -> Result<Value> {
    let shard = local_shard(server, &request.database, param(request, "shard")?)?;
    if request.param("countOnly") == Some("true") {
        return Ok(json!({"count": shard.count()}));
    }
    let buckets = number(request, "buckets")?;
    let bucket = number(request, "bucket")?;
    if buckets == 0 || buckets > BUCKETS_MAX || bucket >= buckets {
        return Err(bad(format!(
            "bucket must be below buckets, and buckets between 1 and {BUCKETS_MAX}"
        )));
    }
    let keys = bucket_keys(&*shard, bucket, buckets)?;
    Ok(serde_json::to_value(KeysReply { keys }).expect("keys serialize"))
}

/// `PUT documents?shard=` with a body of keys: each key's document, `null` when absent.
pub fn serve_documents(server: &DbServer, request: &InternalRequest) -> Result<Value> {
    let shard = local_shard(server, &request.database, param(request, "shard")?)?;
    let keys: Vec<String> = serde_json::from_slice(&request.body)
        .map_err(|_| bad("the body must be an array of keys"))?;
    if keys.len() > DOCUMENTS_MAX {
        return Err(bad(format!("at most {DOCUMENTS_MAX} keys per request")));
    }
    let mut documents = Vec::with_capacity(keys.len());
    for key in &keys {
        documents.push(match shard.read(key) {
            Ok(document) => serde_json::from_slice(&document.json).unwrap_or(Value::Null),
            Err(error) if error.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => Value::Null,
            Err(error) => return Err(error),
        });
    }
    Ok(serde_json::to_value(DocumentsReply { documents }).expect("documents serialize"))
}
