//! Catching a follower up (`docs/cluster.md`, "Catching up"): the follower's request
//! ([`join_leader`]), and the leader's side ([`serve_join`], `POST /_api/replication/join`).
//!
//! What it is: the leader compares its `(_key, _rev)` pairs with the follower's, one hash
//! bucket at a time (at most about [`PAGE_KEYS`] keys of each side in memory), in two passes:
//! first it removes from the follower every key it holds in another revision or should not
//! hold, then it sends every document the follower lacks, whole, in batches of [`PUT_BATCH`].
//! (Removals first, so that a unique index never sees two documents share a value midway.) It
//! does this once without any lock, then once more holding the shard's order lock (only what
//! changed meanwhile), starts a sender for the follower while still holding it, and then adds
//! the follower to the in-sync set (`in_sync::grow`, ordered with any `shrink` of the same
//! follower by the sender's membership lock).
//!
//! What it is not: the follower's retry loop (`maintenance.rs` runs one per shard, with backoff).
//!
//! Invariants: when a join succeeds the follower holds exactly the leader's documents (same
//! keys, same revisions, same bodies) and receives every later write; the follower enters the
//! in-sync set only after its sender runs, and never after the sender closed.

use std::collections::HashMap;
use std::sync::Arc;

use quince_errors::{
    ArangoError, Result, CLUSTER_BACKEND_UNAVAILABLE, CLUSTER_NOT_LEADER,
    CLUSTER_SHARD_LEADER_RESIGNED, HTTP_BAD_PARAMETER,
};
use quince_ops::{CollectionOps, InternalRequest, ReplicatedOp};
use serde_json::{json, Value};

use super::follower::{bucket_keys, local_shard, BUCKETS_MAX};
use super::leader::LeaderShard;
use super::plan::PlannedShard;
use super::sender::{Sender, BATCH_OPS};
use super::wire::{encode_op, ApplyBody, JoinBody, KeysReply};
use super::DbServer;
use crate::in_sync::{self, InSyncError};

/// About how many keys of one side a bucket holds.
pub const PAGE_KEYS: u64 = 10_000;

/// Documents per apply request while catching up.
pub const PUT_BATCH: usize = 500;

/// The follower's side: asks the Plan's leader of `shard` to bring this server in sync. Blocks
/// until the leader answers (it copies the shard meanwhile).
pub fn join_leader(server: &DbServer, shard: &PlannedShard) -> Result<()> {
    let body = JoinBody {
        shard: shard.id.shard.clone(),
        epoch: shard.plan.epoch,
        follower: server.ctx.me.clone(),
    };
    let request = InternalRequest {
        method: "POST".into(),
        database: shard.id.db.clone(),
        path: vec!["join".into()],
        query: Vec::new(),
        body: serde_json::to_vec(&body).expect("JSON values serialize"),
    };
    server
        .ctx
        .call(&shard.plan.leader, request, true)
        .map(|_| ())
}

/// `POST join` `{shard, epoch, follower}`: brings the follower in sync (see the module doc).
pub fn serve_join(server: &DbServer, request: &InternalRequest) -> Result<Value> {
    let body: JoinBody = serde_json::from_slice(&request.body).map_err(|e| {
        ArangoError::with_message(HTTP_BAD_PARAMETER, format!("bad join body: {e}"))
    })?;
    let database = request.database.as_str();
    let not_leading = || {
        ArangoError::with_message(
            CLUSTER_NOT_LEADER,
            format!(
                "this server does not lead shard {} at epoch {}",
                body.shard, body.epoch
            ),
        )
    };
    let (leader, _, _) = server
        .leading(database, &body.shard)
        .ok_or_else(not_leading)?;
    if body.epoch < leader.epoch {
        return Err(ArangoError::new(CLUSTER_SHARD_LEADER_RESIGNED));
    }
    if body.epoch != leader.epoch {
        return Err(not_leading());
    }
    let planned = server
        .plan()
        .shard(&body.shard)
        .cloned()
        .ok_or_else(not_leading)?;
    if !planned.plan.followers.contains(&body.follower) {
        return Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            format!(
                "{} is not a follower of shard {}",
                body.follower, body.shard
            ),
        ));
    }
    let local = local_shard(server, database, &body.shard)?;
    let _one_join_at_a_time = leader.joins.lock();
    // A follower that asks again is out of sync: stop waiting for it (removing it first).
    let old = leader.order().senders.get(&body.follower).cloned();
    if let Some(old) = old {
        old.retire();
        let mut order = leader.order();
        if order
            .senders
            .get(&body.follower)
            .is_some_and(|s| Arc::ptr_eq(s, &old))
        {
            order.senders.remove(&body.follower);
        }
        drop(order);
        old.stop();
    }
    copy_to(&leader, &*local, &body.follower)?;
    let sender = {
        // The shard's writes wait for this pass: let them wait off the api's runtime workers.
        let _on_network = server.hold_order_on_network();
        let mut order = leader.order();
        copy_to(&leader, &*local, &body.follower)?;
        let sender = Sender::start(
            Arc::clone(leader.ctx()),
            leader.id.clone(),
            leader.epoch,
            &body.follower,
            Arc::clone(&leader.in_sync),
        );
        order
            .senders
            .insert(body.follower.clone(), Arc::clone(&sender));
        sender
    };
    let ctx = leader.ctx();
    let grown = {
        let _membership = sender.membership.lock();
        if !sender.is_open() {
            return Err(ArangoError::with_message(
                CLUSTER_BACKEND_UNAVAILABLE,
                format!("{} failed while it joined", body.follower),
            ));
        }
        in_sync::grow(
            &*ctx.store,
            &ctx.layout,
            &leader.id,
            &ctx.me,
            leader.epoch,
            &body.follower,
        )
    };
    match grown {
        Ok(current) => {
            *leader.in_sync.lock() = current.in_sync.clone();
            Ok(json!({"error": false, "inSync": current.in_sync}))
        }
        Err(InSyncError::Resigned) => {
            leader.order().senders.remove(&body.follower);
            sender.stop();
            Err(ArangoError::new(CLUSTER_SHARD_LEADER_RESIGNED))
        }
        // The change may or may not have been made: the sender stays (it is safe either way).
        Err(InSyncError::Store(error)) => Err(ArangoError::with_message(
            CLUSTER_BACKEND_UNAVAILABLE,
            format!("cannot add the follower to the in-sync set: {error}"),
        )),
    }
}

/// Makes the follower's copy of the shard equal to `local` (two passes over hash buckets).
fn copy_to(leader: &LeaderShard, local: &dyn CollectionOps, follower: &str) -> Result<()> {
    let theirs = follower_count(leader, follower)?;
    let buckets = ((local.count().max(theirs) / PAGE_KEYS) + 1).min(BUCKETS_MAX);
    for bucket in 0..buckets {
        let mine = bucket_keys(local, bucket, buckets)?;
        let mine: HashMap<&str, &str> =
            mine.iter().map(|(k, r)| (k.as_str(), r.as_str())).collect();
        let removals: Vec<ReplicatedOp> = follower_keys(leader, follower, bucket, buckets)?
            .into_iter()
            .filter(|(key, rev)| mine.get(key.as_str()) != Some(&rev.as_str()))
            .map(|(key, _)| ReplicatedOp::Remove(key))
            .collect();
        for batch in removals.chunks(BATCH_OPS) {
            send(leader, follower, batch)?;
        }
    }
    for bucket in 0..buckets {
        let theirs = follower_keys(leader, follower, bucket, buckets)?;
        let theirs: HashMap<String, String> = theirs.into_iter().collect();
        let missing: Vec<String> = bucket_keys(local, bucket, buckets)?
            .into_iter()
            .filter(|(key, rev)| theirs.get(key) != Some(rev))
            .map(|(key, _)| key)
            .collect();
        for keys in missing.chunks(PUT_BATCH) {
            let mut puts = Vec::with_capacity(keys.len());
            for key in keys {
                let document = match local.read(key) {
                    Ok(document) => document,
                    // Removed meanwhile: the second pass (under the order lock) settles it.
                    Err(error) if error.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => continue,
                    Err(error) => return Err(error),
                };
                let Ok(Value::Object(mut document)) = serde_json::from_slice(&document.json) else {
                    continue;
                };
                document.remove("_id");
                puts.push(ReplicatedOp::Put(document));
            }
            send(leader, follower, &puts)?;
        }
    }
    Ok(())
}

fn send(leader: &LeaderShard, follower: &str, ops: &[ReplicatedOp]) -> Result<()> {
    if ops.is_empty() {
        return Ok(());
    }
    let ctx = leader.ctx();
    let body = ApplyBody {
        shard: leader.id.shard.clone(),
        cid: leader.id.cid,
        epoch: leader.epoch,
        leader: ctx.me.clone(),
        wait_for_sync: false,
        ops: ops.iter().map(encode_op).collect(),
    };
    let request = super::sender::apply_request(&leader.id.db, &body);
    ctx.call(follower, request, true).map(|_| ())
}

fn keys_request(leader: &LeaderShard, query: Vec<(String, String)>) -> InternalRequest {
    let mut query = query;
    query.insert(0, ("shard".into(), leader.id.shard.clone()));
    InternalRequest {
        method: "GET".into(),
        database: leader.id.db.clone(),
        path: vec!["keys".into()],
        query,
        body: Vec::new(),
    }
}

fn follower_count(leader: &LeaderShard, follower: &str) -> Result<u64> {
    let request = keys_request(leader, vec![("countOnly".into(), "true".into())]);
    let body = leader.ctx().call(follower, request, true)?;
    let value: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(value.get("count").and_then(Value::as_u64).unwrap_or(0))
}

fn follower_keys(
    leader: &LeaderShard,
    follower: &str,
    bucket: u64,
    buckets: u64,
) -> Result<Vec<(String, String)>> {
    let request = keys_request(
        leader,
        vec![
            ("bucket".into(), bucket.to_string()),
            ("buckets".into(), buckets.to_string()),
        ],
    );
    let body = leader.ctx().call(follower, request, true)?;
    let reply: KeysReply = serde_json::from_slice(&body).map_err(|e| {
        ArangoError::with_message(
            CLUSTER_BACKEND_UNAVAILABLE,
            format!("a follower's key list does not parse: {e}"),
        )
    })?;
    Ok(reply.keys)
}
