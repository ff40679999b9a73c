//! Index DDL of a coordinator: indexes created on every shard's leader, then recorded in the
//! Plan.
//!
//! What it is: [`create_index`]: the definition parsed and checked (a unique index of a
//! collection with several shards must contain every shard key: 1470, since each shard checks
//! only its own documents), an existing equal index found again, a cluster-wide id assigned,
//! the index created on every shard's leader through the ordinary index API of the shard
//! collection (so a unique index over clashing documents fails there, 1210, and nothing is
//! recorded), then recorded in the collection's Plan value, from which DB servers create it on
//! followers and new copies. [`drop_index`]: the record removed from the Plan first, then each
//! leader's index.
//!
//! What it is not: the listing (`collection.rs` describes the Plan's definitions with the
//! shards' selectivity estimates) or lookups.
//!
//! Invariants: the Plan names an index only once every leader built it; a shard's index has
//! the name the Plan records (ids differ per shard; the Plan's id is the cluster's).

use std::time::Instant;

use quince_client::request::{encode_segment, Method};
use quince_errors::{
    ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND, ARANGO_DUPLICATE_NAME, CLUSTER_UNSUPPORTED,
};
use quince_ops::IndexDefinition;
use serde_json::{Map, Value};

use super::context::{agency_error, Context};
use super::ddl::change_collection;
use super::shard_requests::{error_from_body, ShardCall};

/// Creates an index on every shard's leader, then records it in the Plan (see the module
/// documentation): its description in the cluster (`id` cluster-wide) and whether it is new.
pub fn create_index(
    ctx: &Context,
    db: &str,
    name: &str,
    body: &Value,
) -> Result<(IndexDefinition, bool)> {
    let mut definition = IndexDefinition::parse(body)?;
    let catalog = ctx.cache.catalog();
    let entry = catalog
        .collection(db, name)
        .ok_or_else(|| ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))?;
    for stored in &entry.plan.indexes {
        if let Ok(existing) = IndexDefinition::from_stored(stored) {
            if existing.same_index(&definition) {
                return Ok((existing, false));
            }
            if !definition.name.is_empty() && existing.name == definition.name {
                return Err(ArangoError::with_message(
                    ARANGO_DUPLICATE_NAME,
                    format!("duplicate value for index name '{}'", definition.name),
                ));
            }
        }
    }
    // Each shard checks uniqueness among its own documents only: across shards it holds
    // only when equal values share a shard, that is when the shard keys are indexed.
    if definition.unique
        && entry.plan.shards.len() > 1
        && !entry
            .plan
            .shard_keys
            .iter()
            .all(|key| definition.fields.contains(key))
    {
        return Err(ArangoError::with_message(
            CLUSTER_UNSUPPORTED,
            "unique indexes of a collection with several shards must contain all shard keys",
        ));
    }
    definition.id = ctx.node.allocate_ids(1).map_err(agency_error)?;
    if definition.name.is_empty() {
        definition.name = format!("idx_{}", definition.id);
    }
    let mut shard_body: Map<String, Value> = body.as_object().cloned().unwrap_or_default();
    shard_body.insert("name".into(), Value::String(definition.name.clone()));
    let shard_body = serde_json::to_vec(&shard_body).expect("an index body serializes");
    let calls: Vec<ShardCall> = entry
        .plan
        .shards
        .iter()
        .map(|shard| ShardCall {
            db: db.to_string(),
            shard: shard.clone(),
            method: Method::Post,
            path: format!("/_api/index?collection={}", encode_segment(shard)),
            body: Some(shard_body.clone()),
            read_only: false,
        })
        .collect();
    for reply in ctx.router.to_leaders(&calls) {
        let reply = reply?;
        if reply.status >= 400 {
            // Leaders that built it keep it until the index is created again or dropped; the
            // Plan does not name it, so no follower builds it.
            return Err(error_from_body(reply.status, &reply.body));
        }
    }
    let stored = definition.to_stored();
    let name_taken = definition.name.clone();
    change_collection(ctx, db, name, |plan, _| {
        if plan
            .indexes
            .iter()
            .any(|i| i.get("name").and_then(Value::as_str) == Some(&name_taken))
        {
            return Ok(Vec::new());
        }
        plan.indexes.push(stored.clone());
        Ok(Vec::new())
    })?;
    Ok((definition, true))
}

/// Removes an index from the Plan, then from every shard's leader; its definition.
pub fn drop_index(
    ctx: &Context,
    db: &str,
    name: &str,
    id_or_name: &str,
) -> Result<IndexDefinition> {
    let mut dropped: Option<IndexDefinition> = None;
    let plan = change_collection(ctx, db, name, |plan, _| {
        let id = id_or_name.parse::<u64>().ok();
        let at = plan.indexes.iter().position(|stored| {
            IndexDefinition::from_stored(stored)
                .is_ok_and(|d| Some(d.id) == id || d.name == id_or_name)
        });
        let at = at.ok_or_else(|| ArangoError::new(quince_errors::ARANGO_INDEX_NOT_FOUND))?;
        dropped = IndexDefinition::from_stored(&plan.indexes.remove(at)).ok();
        Ok(Vec::new())
    })?;
    let definition =
        dropped.ok_or_else(|| ArangoError::new(quince_errors::ARANGO_INDEX_NOT_FOUND))?;
    let calls: Vec<ShardCall> = plan
        .shards
        .iter()
        .map(|shard| ShardCall {
            db: db.to_string(),
            shard: shard.clone(),
            method: Method::Delete,
            path: format!(
                "/_api/index/{}/{}",
                encode_segment(shard),
                encode_segment(&definition.name)
            ),
            body: None,
            read_only: false,
        })
        .collect();
    let started = Instant::now();
    for reply in ctx.router.to_leaders(&calls) {
        match reply {
            Ok(reply) if reply.status < 400 || reply.status == 404 => {}
            Ok(reply) => tracing::warn!(
                event = "coordinator.drop_index_on_shard_failed",
                "{}",
                error_from_body(reply.status, &reply.body)
            ),
            Err(error) => {
                tracing::warn!(event = "coordinator.drop_index_on_shard_failed", "{error}")
            }
        }
    }
    tracing::debug!(
        elapsed_ms = started.elapsed().as_millis() as u64,
        "index dropped"
    );
    Ok(definition)
}
