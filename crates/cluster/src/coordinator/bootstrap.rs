//! The first coordinator's bootstrap: the `_system` database and its system collections in
//! the Plan.
//!
//! What it is: [`bootstrap`]: when the Plan has no `_system`, one transaction guarded by the
//! key's absence writes `_system` with `_users` (the system collection the local engine holds
//! in `_system`; `_graphs` is created with the first graph, as on a single server) and its
//! shard, so two coordinators starting together make one. Every coordinator then waits,
//! bounded by the DDL timeout, for at least one DB server's heartbeat (before writing) and for
//! `_users`' shard leader to report in Current, so the users store the api opens at start is
//! usable when [`super::start`] returns.
//!
//! What it is not: user accounts (the api creates root in `_users` through the engine).
//!
//! Invariants: `_system` and `_users` appear in the Plan together or not at all.

use quince_errors::{ArangoError, Result, CLUSTER_INSUFFICIENT_DBSERVERS, CLUSTER_TIMEOUT};
use quince_meta::{Compare, Op, Txn};
use quince_ops::{CollectionType, CreateCollection, USERS_COLLECTION};
use serde_json::json;

use super::context::{agency_error, Context};
use super::ddl;
use crate::layout::{encode, CollectionPlan, DatabasePlan, ReplicationMode, ShardPlan};

/// The system database.
const SYSTEM: &str = "_system";

/// Makes sure `_system/_users` exists in the Plan and its shard's leader reported.
pub fn bootstrap(ctx: &Context) -> Result<()> {
    let servers = ctx
        .cache
        .wait_until(ctx.timeouts.ddl, |catalog| {
            !catalog.live_dbservers.is_empty()
        })
        .ok_or_else(|| {
            ArangoError::with_message(
                CLUSTER_INSUFFICIENT_DBSERVERS,
                format!(
                    "no DB server reported a heartbeat within {} s",
                    ctx.timeouts.ddl.as_secs()
                ),
            )
        })?
        .live_dbservers
        .iter()
        .cloned()
        .collect::<Vec<_>>();
    if !ctx.cache.catalog().databases.contains_key(SYSTEM) {
        write_system(ctx, &servers)?;
    }
    let catalog = ctx.cache.catalog();
    let users = match catalog.collection(SYSTEM, USERS_COLLECTION) {
        Some(entry) => entry.plan.clone(),
        None => {
            // `_system` exists without `_users` (made by an older start): create it.
            let request = CreateCollection {
                name: USERS_COLLECTION.to_string(),
                kind: CollectionType::Document,
                wait_for_sync: Some(true),
                is_system: true,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            };
            let body = json!({
                "replicationFactor": system_replication_factor(ctx, servers.len()),
                "waitForSyncReplication": false,
            });
            match ddl::create_collection(ctx, SYSTEM, &request, &body) {
                Ok(plan) => plan,
                Err(error) if error.num() == quince_errors::ARANGO_DUPLICATE_NAME.num => ctx
                    .cache
                    .catalog()
                    .collection(SYSTEM, USERS_COLLECTION)
                    .map(|e| e.plan.clone())
                    .ok_or(error)?,
                Err(error) => return Err(error),
            }
        }
    };
    ddl::wait_for_shards(ctx, &users, false).map_err(|error| {
        ArangoError::with_message(
            CLUSTER_TIMEOUT,
            format!("_system/_users is not ready: {}", error.message),
        )
    })
}

/// The replication factor of system collections: the configured default, at most the live
/// DB servers.
fn system_replication_factor(ctx: &Context, live: usize) -> u32 {
    ctx.node
        .config
        .default_replication_factor
        .min(live.max(1) as u32)
        .max(1)
}

/// Writes `_system` with `_users` in one transaction guarded by `_system`'s absence.
fn write_system(ctx: &Context, servers: &[String]) -> Result<()> {
    let layout = ctx.node.layout();
    let first = ctx.node.allocate_ids(3).map_err(agency_error)?;
    let replication_factor = system_replication_factor(ctx, servers.len());
    let database = DatabasePlan {
        name: SYSTEM.to_string(),
        id: first,
        sharding: String::new(),
        replication_factor: ctx.node.config.default_replication_factor,
        write_concern: ctx.node.config.write_concern,
    };
    let cid = first + 1;
    let shard = format!("s{}", first + 2);
    let users = CollectionPlan {
        id: cid,
        name: USERS_COLLECTION.to_string(),
        kind: 2,
        number_of_shards: 1,
        shard_keys: vec!["_key".to_string()],
        replication_factor,
        write_concern: 1,
        sharding_strategy: "hash".to_string(),
        distribute_shards_like: None,
        replication_mode: ReplicationMode::Synchronous,
        shards: vec![shard.clone()],
        properties: json!({
            "waitForSync": true,
            "keyOptions": {"type": "traditional", "allowUserKeys": true, "lastValue": 0},
            "schema": null,
            "computedValues": null,
            "isSystem": true,
            "cacheEnabled": false,
            "journalSize": 32u64 << 20,
        }),
        indexes: Vec::new(),
    };
    let placed = super::placement::place(
        servers,
        1,
        replication_factor as usize,
        (first % servers.len() as u64) as usize,
    );
    let shard_plan = ShardPlan {
        leader: placed[0][0].clone(),
        followers: placed[0][1..].to_vec(),
        epoch: ddl::FIRST_EPOCH,
    };
    let key = layout.database(SYSTEM);
    let outcome = ctx
        .node
        .store
        .txn(Txn::when(
            vec![Compare::Absent(key.clone())],
            vec![
                Op::put(key, encode(&database)),
                Op::put(layout.collection(SYSTEM, cid), encode(&users)),
                Op::put(layout.shard_plan(SYSTEM, cid, &shard), encode(&shard_plan)),
            ],
        ))
        .map_err(agency_error)?;
    // Lost the race: another coordinator wrote `_system`; wait until the cache has it.
    let _ = ctx.cache.refresh();
    if outcome.succeeded
        && !ctx
            .cache
            .wait_for_revision(outcome.revision, ctx.timeouts.ddl)
    {
        return Err(ArangoError::with_message(
            CLUSTER_TIMEOUT,
            "the Plan cache did not see _system in time",
        ));
    }
    Ok(())
}
