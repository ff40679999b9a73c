//! DDL on the Plan: databases, collections and their properties, each one guarded
//! transaction on the metadata store, then a bounded wait until the DB servers report.
//!
//! What it is: create and drop databases; create (with the cluster options of
//! `collection_options.rs`, `distributeShardsLike` and OneShard databases resolved, shards
//! placed by `placement.rs`), drop and rename collections; property changes (indexes are
//! `indexes.rs`'s). Every change of a database's collections is guarded by the `mod_revision` of
//! the database's Plan key, which each such change rewrites: two coordinators changing one
//! database are serialised, and a name is never taken twice. After a write the coordinator
//! waits until its cache has seen it, and, for a new collection, until each shard's leader
//! reported in Current at its epoch (with `waitForSyncReplication`, until each shard's in-sync
//! set reached the replication factor), at most [`super::context::Timeouts::ddl`]; past that it
//! answers 1457 (the Plan holds the collection; its shards may still come).
//!
//! What it is not: the DB servers' side (creating `s<id>` collections from the Plan).
//!
//! Invariants: each DDL is one transaction (no half-created collection in the Plan); the Plan
//! never holds two collections of one name in a database.

use quince_aql::ComputedValueCompiler;
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATA_SOURCE_NOT_FOUND,
    ARANGO_DUPLICATE_NAME, ARANGO_USE_SYSTEM_DATABASE, CLUSTER_CHAIN_OF_DISTRIBUTESHARDSLIKE,
    CLUSTER_INSUFFICIENT_DBSERVERS, CLUSTER_MUST_NOT_DROP_COLL_OTHER_DISTRIBUTESHARDSLIKE,
    CLUSTER_TIMEOUT, CLUSTER_UNKNOWN_DISTRIBUTESHARDSLIKE, CLUSTER_UNSUPPORTED, FORBIDDEN,
    INTERNAL,
};
use quince_meta::{Compare, Op, Txn};
use quince_model::keygen::{KeyGenerator, KeyOptions};
use quince_model::names::{is_system_name, validate_collection_name, validate_database_name};
use quince_ops::{check_journal_size, CreateCollection, PropertiesUpdate, WriteRules};
use serde_json::{json, Value};

use super::collection_options::{database_options, ClusterOptions};
use super::context::{agency_error, Context};
use super::documents::autoincrement_needs_one_shard;
use super::placement::place;
use crate::layout::{decode, encode, CollectionPlan, DatabasePlan, ShardPlan};

/// How often a guarded transaction is tried again when another DDL of the same database won.
const RETRIES: usize = 32;

/// The first epoch of a new shard.
pub const FIRST_EPOCH: u64 = 1;

/// Creates a database in the Plan.
pub fn create_database(ctx: &Context, name: &str, options: &Value) -> Result<DatabasePlan> {
    validate_database_name(name)?;
    let (sharding, replication_factor, write_concern) =
        database_options(options, &ctx.node.config)?;
    let layout = ctx.node.layout();
    let id = ctx.node.allocate_ids(1).map_err(agency_error)?;
    let plan = DatabasePlan {
        name: name.to_string(),
        id,
        sharding,
        replication_factor,
        write_concern,
    };
    let key = layout.database(name);
    let outcome = ctx
        .node
        .store
        .txn(Txn::when(
            vec![Compare::Absent(key.clone())],
            vec![Op::put(key, encode(&plan))],
        ))
        .map_err(agency_error)?;
    if !outcome.succeeded {
        return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
    }
    wait_for_revision(ctx, outcome.revision)?;
    Ok(plan)
}

/// Drops a database from the Plan, with its collections and shards.
pub fn drop_database(ctx: &Context, name: &str) -> Result<()> {
    if name == "_system" {
        return Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE));
    }
    let layout = ctx.node.layout();
    let key = layout.database(name);
    let outcome = ctx
        .node
        .store
        .txn(Txn::when(
            vec![Compare::Exists(key.clone())],
            vec![
                Op::delete(key),
                Op::DeletePrefix(layout.collections(name)),
                Op::DeletePrefix(format!("{}{name}/", layout.all_shard_plans())),
            ],
        ))
        .map_err(agency_error)?;
    if !outcome.succeeded {
        return Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND));
    }
    wait_for_revision(ctx, outcome.revision)
}

fn wait_for_revision(ctx: &Context, revision: i64) -> Result<()> {
    if ctx.cache.wait_for_revision(revision, ctx.timeouts.ddl) {
        Ok(())
    } else {
        Err(ArangoError::with_message(
            CLUSTER_TIMEOUT,
            "the coordinator's Plan cache did not see its own change in time",
        ))
    }
}

/// A database's Plan key as read now: its value and `mod_revision` (1228 when absent).
fn read_database(ctx: &Context, db: &str) -> Result<(DatabasePlan, i64, Vec<u8>)> {
    let entry = ctx
        .node
        .store
        .get(&ctx.node.layout().database(db))
        .map_err(agency_error)?
        .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND))?;
    let plan = decode::<DatabasePlan>(&entry.value)
        .ok_or_else(|| ArangoError::with_message(INTERNAL, "unreadable database in the Plan"))?;
    Ok((plan, entry.mod_revision, entry.value))
}

/// A database's collections as read now.
fn read_collections(ctx: &Context, db: &str) -> Result<Vec<CollectionPlan>> {
    let snapshot = ctx
        .node
        .store
        .range(&ctx.node.layout().collections(db))
        .map_err(agency_error)?;
    Ok(snapshot
        .entries
        .iter()
        .filter_map(|e| decode::<CollectionPlan>(&e.value))
        .collect())
}

/// The live DB servers as read now, sorted.
fn live_dbservers(ctx: &Context) -> Result<Vec<String>> {
    let snapshot = ctx
        .node
        .store
        .range(&ctx.node.layout().heartbeats())
        .map_err(agency_error)?;
    let mut servers: Vec<String> = snapshot
        .entries
        .iter()
        .filter_map(|e| {
            let beat = decode::<crate::layout::Heartbeat>(&e.value)?;
            (beat.role == crate::layout::Role::Dbserver)
                .then(|| e.key.rsplit('/').next().unwrap_or_default().to_string())
        })
        .collect();
    servers.sort();
    Ok(servers)
}

/// Applies `ops` guarded by the database key's revision (rewriting the key, so concurrent DDL
/// of the database conflicts); false when another change won.
fn guarded(
    ctx: &Context,
    db: &str,
    revision: i64,
    value: Vec<u8>,
    mut ops: Vec<Op>,
) -> Result<Option<i64>> {
    let key = ctx.node.layout().database(db);
    ops.push(Op::put(key.clone(), value));
    let outcome = ctx
        .node
        .store
        .txn(Txn::when(vec![Compare::ModRevision(key, revision)], ops))
        .map_err(agency_error)?;
    Ok(outcome.succeeded.then_some(outcome.revision))
}

/// The local properties of a new collection, checked (`waitForSync`, `keyOptions`, `schema`,
/// `computedValues`, `isSystem`, `cacheEnabled`, `journalSize`).
fn local_properties(
    request: &CreateCollection,
    shards: u32,
    shard_keys: &[String],
) -> Result<Value> {
    validate_collection_name(&request.name, request.is_system)?;
    let keys = KeyOptions::parse(request.key_options.as_ref())?;
    if autoincrement_needs_one_shard(&keys, shards) {
        return Err(ArangoError::with_message(
            CLUSTER_UNSUPPORTED,
            "the autoincrement key generator is not supported for collections with more than one shard",
        ));
    }
    let rules = WriteRules::parse(
        request.schema.as_ref().unwrap_or(&Value::Null),
        request.computed_values.as_ref().unwrap_or(&Value::Null),
        Some(&ComputedValueCompiler),
    )?;
    check_computed_values(&rules, shard_keys)?;
    let journal_size = request.journal_size.unwrap_or(32 << 20);
    check_journal_size(journal_size)?;
    Ok(json!({
        "waitForSync": request.wait_for_sync.unwrap_or(false),
        "keyOptions": KeyGenerator::new(keys, 0).report(),
        "schema": rules.schema_json(),
        "computedValues": rules.computed_values_json(),
        "isSystem": is_system_name(&request.name),
        "cacheEnabled": request.cache_enabled.unwrap_or(false),
        "journalSize": journal_size,
    }))
}

/// Creates a collection in the Plan and waits for its shards (see the module documentation).
pub fn create_collection(
    ctx: &Context,
    db: &str,
    request: &CreateCollection,
    body: &Value,
) -> Result<CollectionPlan> {
    for _ in 0..RETRIES {
        let (database, revision, value) = read_database(ctx, db)?;
        let servers = live_dbservers(ctx)?;
        let mut options = ClusterOptions::parse(body, &database, &ctx.node.config, servers.len())?;
        let existing = read_collections(ctx, db)?;
        if existing.iter().any(|c| c.name == request.name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        if servers.is_empty() {
            return Err(ArangoError::with_message(
                CLUSTER_INSUFFICIENT_DBSERVERS,
                "no DB server is available",
            ));
        }
        // OneShard: one shard, placed like the database's first collection.
        if database.sharding == "single" {
            options.number_of_shards = 1;
            if options.distribute_shards_like.is_none() {
                options.distribute_shards_like = existing
                    .iter()
                    .filter(|c| c.distribute_shards_like.is_none())
                    .min_by_key(|c| c.id)
                    .map(|c| c.name.clone());
            }
        }
        let prototype = match &options.distribute_shards_like {
            None => None,
            Some(name) => {
                let prototype = existing.iter().find(|c| &c.name == name).ok_or_else(|| {
                    ArangoError::with_message(
                        CLUSTER_UNKNOWN_DISTRIBUTESHARDSLIKE,
                        format!("Collection not found: {name}"),
                    )
                })?;
                if prototype.distribute_shards_like.is_some() {
                    return Err(ArangoError::new(CLUSTER_CHAIN_OF_DISTRIBUTESHARDSLIKE));
                }
                options.number_of_shards = prototype.number_of_shards;
                options.replication_factor = prototype.replication_factor;
                options.write_concern = options.write_concern.min(prototype.replication_factor);
                Some(prototype.clone())
            }
        };
        let properties = local_properties(request, options.number_of_shards, &options.shard_keys)?;
        let count = u64::from(options.number_of_shards);
        let first = ctx.node.allocate_ids(1 + count).map_err(agency_error)?;
        let shards: Vec<String> = (0..count).map(|i| format!("s{}", first + 1 + i)).collect();
        let placed: Vec<Vec<String>> = match &prototype {
            Some(prototype) => {
                // Read now, not from the cache: the prototype may be younger than the view.
                let snapshot = ctx
                    .node
                    .store
                    .range(&ctx.node.layout().shard_plans(db, prototype.id))
                    .map_err(agency_error)?;
                let plans: std::collections::HashMap<String, ShardPlan> = snapshot
                    .entries
                    .iter()
                    .filter_map(|e| {
                        let name = e.key.rsplit('/').next()?.to_string();
                        Some((name, decode::<ShardPlan>(&e.value)?))
                    })
                    .collect();
                prototype
                    .shards
                    .iter()
                    .map(|shard| {
                        plans
                            .get(shard)
                            .map(|p| p.servers().cloned().collect())
                            .unwrap_or_default()
                    })
                    .collect()
            }
            None => place(
                &servers,
                shards.len(),
                options.replication_factor as usize,
                (first % servers.len() as u64) as usize,
            ),
        };
        if placed.iter().any(Vec::is_empty) {
            return Err(ArangoError::with_message(
                CLUSTER_UNKNOWN_DISTRIBUTESHARDSLIKE,
                "the prototype's shards are not in the Plan yet",
            ));
        }
        let plan = CollectionPlan {
            id: first,
            name: request.name.clone(),
            kind: request.kind.as_number(),
            number_of_shards: options.number_of_shards,
            shard_keys: options.shard_keys.clone(),
            replication_factor: options.replication_factor,
            write_concern: options.write_concern,
            sharding_strategy: options.sharding_strategy.clone(),
            distribute_shards_like: options.distribute_shards_like.clone(),
            replication_mode: options.replication_mode,
            shards: shards.clone(),
            properties,
            indexes: Vec::new(),
        };
        let layout = ctx.node.layout();
        let mut ops = vec![Op::put(layout.collection(db, first), encode(&plan))];
        for (shard, servers) in shards.iter().zip(&placed) {
            let shard_plan = ShardPlan {
                leader: servers[0].clone(),
                followers: servers[1..].to_vec(),
                epoch: FIRST_EPOCH,
            };
            ops.push(Op::put(
                layout.shard_plan(db, first, shard),
                encode(&shard_plan),
            ));
        }
        let Some(written) = guarded(ctx, db, revision, value, ops)? else {
            continue;
        };
        wait_for_revision(ctx, written)?;
        wait_for_shards(ctx, &plan, options.wait_for_sync_replication)?;
        return Ok(plan);
    }
    Err(ArangoError::with_message(
        INTERNAL,
        "the database kept changing while the collection was created",
    ))
}

/// Waits until each shard's leader reported at its epoch (and, with `in_sync`, until each
/// shard has `replicationFactor` in-sync copies, or as many as it has servers).
pub fn wait_for_shards(ctx: &Context, plan: &CollectionPlan, in_sync: bool) -> Result<()> {
    let ready = ctx.cache.wait_until(ctx.timeouts.ddl, |catalog| {
        plan.shards.iter().all(|shard| {
            if !catalog.shard_ready(shard) {
                return false;
            }
            if !in_sync {
                return true;
            }
            let copies = catalog
                .shard_plans
                .get(shard)
                .map_or(0, |p| 1 + p.followers.len());
            catalog.in_sync_count(shard) >= copies.min(plan.replication_factor as usize)
        })
    });
    match ready {
        Some(_) => Ok(()),
        None => Err(ArangoError::with_message(
            CLUSTER_TIMEOUT,
            format!(
                "collection {} is in the Plan, but its shards' leaders did not report within {} s",
                plan.name,
                ctx.timeouts.ddl.as_secs()
            ),
        )),
    }
}

/// Drops a collection (a system one only with `is_system`: 403/11; a prototype that others
/// follow: 1485); its id.
pub fn drop_collection(ctx: &Context, db: &str, name_or_id: &str, is_system: bool) -> Result<u64> {
    for _ in 0..RETRIES {
        let (_, revision, value) = read_database(ctx, db)?;
        let existing = read_collections(ctx, db)?;
        let plan = find(&existing, name_or_id)?;
        if is_system_name(&plan.name) && !is_system {
            return Err(ArangoError::new(FORBIDDEN));
        }
        if existing
            .iter()
            .any(|c| c.distribute_shards_like.as_deref() == Some(plan.name.as_str()))
        {
            return Err(ArangoError::new(
                CLUSTER_MUST_NOT_DROP_COLL_OTHER_DISTRIBUTESHARDSLIKE,
            ));
        }
        let layout = ctx.node.layout();
        let ops = vec![
            Op::delete(layout.collection(db, plan.id)),
            Op::DeletePrefix(layout.shard_plans(db, plan.id)),
        ];
        if let Some(written) = guarded(ctx, db, revision, value, ops)? {
            wait_for_revision(ctx, written)?;
            return Ok(plan.id);
        }
    }
    Err(ArangoError::with_message(
        INTERNAL,
        "the database kept changing",
    ))
}

fn find<'a>(existing: &'a [CollectionPlan], name_or_id: &str) -> Result<&'a CollectionPlan> {
    let id = name_or_id.parse::<u64>().ok();
    existing
        .iter()
        .find(|c| c.name == name_or_id)
        .or_else(|| existing.iter().find(|c| Some(c.id) == id))
        .ok_or_else(|| ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))
}

/// Changes one collection's Plan value with `change` (guarded); the new value.
pub fn change_collection(
    ctx: &Context,
    db: &str,
    name_or_id: &str,
    mut change: impl FnMut(&mut CollectionPlan, &[CollectionPlan]) -> Result<Vec<Op>>,
) -> Result<CollectionPlan> {
    for _ in 0..RETRIES {
        let (_, revision, value) = read_database(ctx, db)?;
        let existing = read_collections(ctx, db)?;
        let mut plan = find(&existing, name_or_id)?.clone();
        let mut ops = change(&mut plan, &existing)?;
        ops.push(Op::put(
            ctx.node.layout().collection(db, plan.id),
            encode(&plan),
        ));
        if let Some(written) = guarded(ctx, db, revision, value, ops)? {
            wait_for_revision(ctx, written)?;
            return Ok(plan);
        }
    }
    Err(ArangoError::with_message(
        INTERNAL,
        "the database kept changing",
    ))
}

/// Renames a collection (1207 taken; system collections cannot be: 403/11); followers'
/// `distributeShardsLike` move with it.
pub fn rename_collection(
    ctx: &Context,
    db: &str,
    name: &str,
    new_name: &str,
) -> Result<CollectionPlan> {
    let layout = ctx.node.layout().clone();
    change_collection(ctx, db, name, |plan, existing| {
        if plan.name == new_name {
            return Ok(Vec::new());
        }
        if is_system_name(&plan.name) {
            return Err(ArangoError::with_message(
                FORBIDDEN,
                "system collections cannot be renamed",
            ));
        }
        validate_collection_name(new_name, false)?;
        if existing.iter().any(|c| c.name == new_name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        let mut ops = Vec::new();
        for follower in existing
            .iter()
            .filter(|c| c.distribute_shards_like.as_deref() == Some(plan.name.as_str()))
        {
            let mut follower = follower.clone();
            follower.distribute_shards_like = Some(new_name.to_string());
            ops.push(Op::put(
                layout.collection(db, follower.id),
                encode(&follower),
            ));
        }
        plan.name = new_name.to_string();
        Ok(ops)
    })
}

/// 400/10 when a computed value would write a shard key (a document's shard would no longer
/// follow from the values a client sent, as ArangoDB refuses too).
fn check_computed_values(rules: &WriteRules, shard_keys: &[String]) -> Result<()> {
    let computed = rules.computed_values_json();
    for name in computed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.get("name").and_then(Value::as_str))
    {
        let hits = |key: &String| key == name || key.starts_with(&format!("{name}."));
        if shard_keys.iter().any(hits) {
            return Err(ArangoError::with_message(
                quince_errors::BAD_PARAMETER,
                format!("computed value '{name}' cannot write a shard key attribute"),
            ));
        }
    }
    Ok(())
}

/// Changes the local properties kept in the Plan (`waitForSync`, `schema`, `computedValues`,
/// `cacheEnabled`, `journalSize`); DB servers apply them to their shards.
pub fn update_properties(
    ctx: &Context,
    db: &str,
    name: &str,
    update: &PropertiesUpdate,
) -> Result<CollectionPlan> {
    if let Some(size) = update.journal_size {
        check_journal_size(size)?;
    }
    let schema = match &update.schema {
        Some(schema) => Some(WriteRules::parse(schema, &Value::Null, None)?.schema_json()),
        None => None,
    };
    let computed = match &update.computed_values {
        Some(computed) => Some(WriteRules::parse(
            &Value::Null,
            computed,
            Some(&ComputedValueCompiler),
        )?),
        None => None,
    };
    change_collection(ctx, db, name, |plan, _| {
        if let Some(rules) = &computed {
            check_computed_values(rules, &plan.shard_keys)?;
        }
        let properties = plan
            .properties
            .as_object_mut()
            .ok_or_else(|| ArangoError::with_message(INTERNAL, "unreadable properties"))?;
        if let Some(rules) = &computed {
            properties.insert("computedValues".into(), rules.computed_values_json());
        }
        if let Some(sync) = update.wait_for_sync {
            properties.insert("waitForSync".into(), Value::Bool(sync));
        }
        if let Some(schema) = &schema {
            properties.insert("schema".into(), schema.clone());
        }
        if let Some(cache) = update.cache_enabled {
            properties.insert("cacheEnabled".into(), Value::Bool(cache));
        }
        if let Some(size) = update.journal_size {
            properties.insert("journalSize".into(), json!(size));
        }
        Ok(Vec::new())
    })
}

/// Changes `writeConcern` (also as `minReplicationFactor`; at most the replication factor:
/// 400/10), which the shards' leaders apply from the Plan, and `replicationFactor` (within
/// `--cluster.min-replication-factor` and `--cluster.max-replication-factor`: 400/10; at most
/// the live DB servers: 1477), which the supervision applies to each shard's Plan (followers
/// added from spare DB servers, which catch up, or the last ones removed). A collection that
/// shares its prototype's placement (`distributeShardsLike`, OneShard), or is a prototype
/// others follow, keeps its replication factor (1470: not supported yet).
pub fn update_cluster_properties(ctx: &Context, db: &str, name: &str, body: &Value) -> Result<()> {
    let number = |name: &str| -> Result<Option<u32>> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => value
                .as_u64()
                .filter(|n| *n >= 1 && *n <= u64::from(u32::MAX))
                .map(|n| Some(n as u32))
                .ok_or_else(|| {
                    ArangoError::with_message(
                        quince_errors::BAD_PARAMETER,
                        format!("invalid value for {name}"),
                    )
                }),
        }
    };
    let write_concern = match number("writeConcern")? {
        Some(n) => Some(n),
        None => number("minReplicationFactor")?,
    };
    let replication_factor = match body.get("replicationFactor") {
        Some(Value::String(s)) if s == "satellite" => {
            return Err(ArangoError::with_message(
                CLUSTER_UNSUPPORTED,
                "satellite collections are not supported",
            ))
        }
        _ => number("replicationFactor")?,
    };
    if write_concern.is_none() && replication_factor.is_none() {
        return Ok(());
    }
    let config = &ctx.node.config;
    let live = match replication_factor {
        Some(_) => live_dbservers(ctx)?.len(),
        None => 0,
    };
    change_collection(ctx, db, name, |plan, existing| {
        if let Some(factor) = replication_factor.filter(|rf| *rf != plan.replication_factor) {
            let followed = existing
                .iter()
                .any(|c| c.distribute_shards_like.as_deref() == Some(plan.name.as_str()));
            if plan.distribute_shards_like.is_some() || followed {
                return Err(ArangoError::with_message(
                    CLUSTER_UNSUPPORTED,
                    "changing the replicationFactor of a collection that shares its shards' \
                     placement (distributeShardsLike) is not supported yet",
                ));
            }
            if factor < config.min_replication_factor || factor > config.max_replication_factor {
                return Err(ArangoError::with_message(
                    quince_errors::BAD_PARAMETER,
                    format!(
                        "replicationFactor must be between {} and {}",
                        config.min_replication_factor, config.max_replication_factor
                    ),
                ));
            }
            if factor as usize > live {
                return Err(ArangoError::with_message(
                    CLUSTER_INSUFFICIENT_DBSERVERS,
                    format!(
                        "replicationFactor {factor} is higher than the number of available \
                         DB servers ({live})"
                    ),
                ));
            }
            if write_concern.unwrap_or(plan.write_concern) > factor {
                return Err(ArangoError::with_message(
                    quince_errors::BAD_PARAMETER,
                    "writeConcern must not be higher than replicationFactor",
                ));
            }
            plan.replication_factor = factor;
        }
        if let Some(write_concern) = write_concern {
            if write_concern > plan.replication_factor {
                return Err(ArangoError::with_message(
                    quince_errors::BAD_PARAMETER,
                    "writeConcern must not be higher than replicationFactor",
                ));
            }
            plan.write_concern = write_concern;
        }
        Ok(Vec::new())
    })
    .map(|_| ())
}
