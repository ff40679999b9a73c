//! Maintenance: the thread that makes this DB server's local state follow `Plan/`.
//!
//! What it is: a loop that reads `Plan/` whole when a watch on it reports a change (or failed,
//! or the history was compacted: the watch then starts again from the new read), and on every
//! pass, at least every [`TICK`]:
//! - creates the local databases of the Plan;
//! - creates the local collection of each shard the Plan gives this server (leader or
//!   follower), named as the shard, with its collection's kind and properties (keys always
//!   accepted as given: coordinators generate them), applies later changes of those
//!   properties (`waitForSync`, `journalSize`, `schema`, `computedValues`, `cacheEnabled`),
//!   and creates and drops its indexes to match the collection's Plan (matched by name);
//! - drops every local shard collection (`s<digits>`, not a system collection) that the Plan
//!   does not give this server, and every local database the Plan lacks whose collections were
//!   all shards: never anything else, and never a shard the Plan still assigns here;
//! - takes up the leadership of each shard it leads at the Plan's epoch once the local shard
//!   exists (`in_sync::report_leadership`, then `in_sync::shrink` of every other member that a
//!   Current of the same epoch still lists: a leader that restarted sends to nobody, so nobody
//!   else may count as in sync until it joins again), gives up the others (their waiting
//!   writes fail with 1491), and retires the senders of followers the Plan removed;
//! - for each shard it follows whose `Current` does not list it in sync at the Plan's epoch,
//!   runs a catch-up thread that asks the leader to join, with backoff (100 ms doubling to 5 s),
//!   until it is in sync, the Plan changes, or the server stops.
//!
//! What it is not: the Plan's author (coordinators and supervision write it), or replication.
//!
//! Invariants: a pass never drops a shard the view assigns this server; nothing happens before
//! the first whole read of the Plan succeeded; errors are logged and retried on the next pass.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use quince_errors::{ArangoError, Result};
use quince_meta::Watch;
use quince_ops::{
    CollectionOps, CollectionType, CreateCollection, Engine, PropertiesUpdate, EDGE_INDEX_ID,
};
use serde_json::{json, Value};

use super::catch_up::join_leader;
use super::leader::LeaderShard;
use super::plan::{is_shard_name, PlanView, PlannedShard};
use super::DbServer;
use crate::in_sync::{self, InSyncError};
use crate::layout::{decode, CollectionPlan, ShardCurrent};

/// The longest a pass waits for a Plan change.
pub const TICK: Duration = Duration::from_millis(250);

/// Starts the maintenance thread of `server`.
pub fn start(server: &Arc<DbServer>) -> Result<()> {
    let weak = Arc::downgrade(server);
    let thread = std::thread::Builder::new()
        .name("dbserver-maintenance".into())
        .spawn(move || run(&weak))
        .map_err(|e| {
            ArangoError::with_message(quince_errors::INTERNAL, format!("no thread: {e}"))
        })?;
    *server.maintenance.lock() = Some(thread);
    Ok(())
}

fn run(weak: &Weak<DbServer>) {
    let mut watch: Option<Watch> = None;
    let mut read_plan = true;
    loop {
        let Some(server) = weak.upgrade() else { return };
        if server.is_stopped() {
            return;
        }
        if read_plan {
            let ctx = &server.ctx;
            match PlanView::read(&*ctx.store, &ctx.layout) {
                Ok(view) => {
                    let revision = view.revision;
                    let view = view.keeping_fresher(&server.plan());
                    server.set_plan(view);
                    watch = ctx.store.watch(&ctx.layout.plan(), revision + 1).ok();
                    read_plan = watch.is_none();
                }
                Err(error) => {
                    tracing::warn!(event = "cluster.plan_read_failed", "{error}");
                    drop(server);
                    std::thread::sleep(TICK);
                    continue;
                }
            }
        }
        pass(&server);
        drop(server);
        match &watch {
            Some(w) => match w.next_timeout(TICK) {
                Ok(Some(_)) => read_plan = true,
                Ok(None) => {}
                Err(_) => {
                    watch = None;
                    read_plan = true;
                }
            },
            None => std::thread::sleep(TICK),
        }
    }
}

/// One reconciliation of local state with the Plan view (see the module documentation).
pub fn pass(server: &Arc<DbServer>) {
    let view = server.plan();
    if view.revision == 0 {
        return;
    }
    let local = Arc::clone(server.local());
    for name in view.databases.keys() {
        if local.database(name).is_none() {
            if let Err(error) = local.create_database(name) {
                tracing::warn!(event = "cluster.create_database_failed", db = %name, "{error}");
            }
        }
    }
    let me = server.ctx.me.clone();
    let mine: Vec<&PlannedShard> = view.shards_of(&me).collect();
    for planned in &mine {
        if let Err(error) = ensure_shard(server, &*local, &view, planned) {
            tracing::warn!(event = "cluster.create_shard_failed", shard = %planned.id.shard, "{error}");
        }
    }
    drop_unassigned(server, &*local, &view);
    leaderships(server, &view, &mine);
    follow(server, &mine);
}

/// The local collection of a shard, created when missing, its properties and indexes made to
/// match.
fn ensure_shard(
    server: &DbServer,
    local: &dyn Engine,
    view: &PlanView,
    planned: &PlannedShard,
) -> Result<()> {
    let Some(collection) = view.collection_of(&planned.id) else {
        return Ok(());
    };
    let Some(database) = local.database(&planned.id.db) else {
        return Ok(());
    };
    let shard = match database.collection(&planned.id.shard) {
        Ok(shard) => shard,
        Err(_) => database.create_collection(create_request(&planned.id.shard, collection))?,
    };
    sync_properties(server, &*shard, collection)?;
    sync_indexes(&*shard, collection)
}

/// Applies the collection's Plan properties to a shard when they changed since this server
/// last applied them (once after a start: the update is idempotent).
fn sync_properties(
    server: &DbServer,
    shard: &dyn CollectionOps,
    collection: &CollectionPlan,
) -> Result<()> {
    let name = shard.name();
    if server.applied_properties.lock().get(&name) == Some(&collection.properties) {
        return Ok(());
    }
    let create = create_request(&name, collection);
    shard.update_properties(PropertiesUpdate {
        wait_for_sync: create.wait_for_sync,
        journal_size: create.journal_size,
        schema: Some(create.schema.unwrap_or(Value::Null)),
        computed_values: Some(create.computed_values.unwrap_or(Value::Null)),
        cache_enabled: create.cache_enabled,
    })?;
    server
        .applied_properties
        .lock()
        .insert(name, collection.properties.clone());
    Ok(())
}

/// The creation of a shard of `collection`.
fn create_request(name: &str, collection: &CollectionPlan) -> CreateCollection {
    let properties = &collection.properties;
    let present = |name: &str| properties.get(name).filter(|v| !v.is_null()).cloned();
    CreateCollection {
        name: name.to_owned(),
        kind: if collection.kind == 3 {
            CollectionType::Edge
        } else {
            CollectionType::Document
        },
        wait_for_sync: properties.get("waitForSync").and_then(Value::as_bool),
        is_system: false,
        key_options: Some(json!({"type": "traditional", "allowUserKeys": true})),
        journal_size: properties.get("journalSize").and_then(Value::as_u64),
        schema: present("schema"),
        computed_values: present("computedValues"),
        cache_enabled: properties.get("cacheEnabled").and_then(Value::as_bool),
    }
}

/// Creates the Plan's indexes a shard lacks and drops those the Plan no longer has (by name).
fn sync_indexes(shard: &dyn CollectionOps, collection: &CollectionPlan) -> Result<()> {
    let planned: BTreeSet<&str> = collection
        .indexes
        .iter()
        .filter_map(|i| i.get("name").and_then(Value::as_str))
        .collect();
    let existing = shard.indexes();
    for description in &existing {
        let builtin = description.id == 0
            || (shard.kind() == CollectionType::Edge && description.id == EDGE_INDEX_ID);
        if !builtin && !planned.contains(description.name.as_str()) {
            shard.drop_index(&description.id.to_string())?;
        }
    }
    let names: BTreeSet<&str> = existing.iter().map(|d| d.name.as_str()).collect();
    for definition in &collection.indexes {
        let Some(name) = definition.get("name").and_then(Value::as_str) else {
            continue;
        };
        if names.contains(name) {
            continue;
        }
        let mut body = definition.clone();
        if let Some(object) = body.as_object_mut() {
            object.remove("id");
        }
        shard.create_index(&body)?;
    }
    Ok(())
}

/// Drops the local shards (and shard-only databases) the Plan does not give this server.
fn drop_unassigned(server: &Arc<DbServer>, local: &dyn Engine, view: &PlanView) {
    let me = &server.ctx.me;
    for name in local.database_names() {
        let Some(database) = local.database(&name) else {
            continue;
        };
        let mut only_shards = true;
        for collection in database.collections() {
            let shard = collection.name();
            if collection.is_system() {
                continue;
            }
            if !is_shard_name(&shard) {
                only_shards = false;
                continue;
            }
            let assigned = view
                .shard(&shard)
                .is_some_and(|s| s.id.db == name && s.plan.servers().any(|x| x == me));
            if assigned {
                only_shards = false;
                continue;
            }
            if let Some(leader) = server.leaders.write().remove(&shard) {
                leader.stop();
            }
            server.applied_properties.lock().remove(&shard);
            if let Err(error) = database.drop_collection(&shard, false) {
                tracing::warn!(event = "cluster.drop_shard_failed", shard = %shard, "{error}");
                only_shards = false;
            }
        }
        if only_shards && name != "_system" && !view.databases.contains_key(&name) {
            if let Err(error) = local.drop_database(&name) {
                tracing::warn!(event = "cluster.drop_database_failed", db = %name, "{error}");
            }
        }
    }
}

/// True when the local shard collection exists.
fn has_shard(server: &DbServer, planned: &PlannedShard) -> bool {
    server
        .local()
        .database(&planned.id.db)
        .is_some_and(|d| d.collection(&planned.id.shard).is_ok())
}

/// Takes up and gives up leaderships; retires the senders of followers the Plan removed.
fn leaderships(server: &Arc<DbServer>, view: &PlanView, mine: &[&PlannedShard]) {
    let me = &server.ctx.me;
    let gone: Vec<Arc<LeaderShard>> = {
        let mut leaders = server.leaders.write();
        let stale: Vec<String> = leaders
            .iter()
            .filter(|(name, leader)| {
                !view.shard(name).is_some_and(|s| {
                    s.plan.leader == *me && s.plan.epoch == leader.epoch && s.id == leader.id
                })
            })
            .map(|(name, _)| name.clone())
            .collect();
        stale.iter().filter_map(|n| leaders.remove(n)).collect()
    };
    for leader in gone {
        leader.stop();
    }
    for planned in mine.iter().filter(|s| s.plan.leader == *me) {
        let existing = server.leaders.read().get(&planned.id.shard).cloned();
        match existing {
            Some(leader) => retire_removed_followers(&leader, planned),
            None if has_shard(server, planned) => {
                if let Err(error) = take_leadership(server, planned) {
                    tracing::warn!(event = "cluster.leadership_failed", shard = %planned.id.shard, "{error:?}");
                }
            }
            None => {}
        }
    }
}

/// Reports the leadership of `planned`, removes every other member from the in-sync set, and
/// starts serving writes for it.
fn take_leadership(server: &Arc<DbServer>, planned: &PlannedShard) -> Result<(), InSyncError> {
    let ctx = &server.ctx;
    let (store, layout, id, epoch) = (&*ctx.store, &ctx.layout, &planned.id, planned.plan.epoch);
    let mut current = in_sync::report_leadership(store, layout, id, &ctx.me, epoch)?;
    let others: Vec<String> = current
        .in_sync
        .iter()
        .filter(|m| **m != ctx.me)
        .cloned()
        .collect();
    for member in others {
        current = in_sync::shrink(store, layout, id, &ctx.me, epoch, &member)?;
    }
    let leader = LeaderShard::new(Arc::clone(ctx), id.clone(), epoch, current.in_sync);
    server
        .leaders
        .write()
        .insert(id.shard.clone(), Arc::new(leader));
    tracing::info!(event = "cluster.leading", shard = %id.shard, epoch, "leading shard");
    Ok(())
}

/// Retires the senders of followers the Plan no longer lists (removing them from the set).
fn retire_removed_followers(leader: &LeaderShard, planned: &PlannedShard) {
    let removed: Vec<_> = leader
        .order()
        .senders
        .iter()
        .filter(|(f, _)| !planned.plan.followers.contains(f))
        .map(|(f, s)| (f.clone(), Arc::clone(s)))
        .collect();
    for (follower, sender) in removed {
        sender.retire();
        if sender.is_closed() {
            leader.order().senders.remove(&follower);
            sender.stop();
        }
    }
    let closed: Vec<_> = leader
        .order()
        .senders
        .iter()
        .filter(|(_, s)| s.is_closed())
        .map(|(f, _)| f.clone())
        .collect();
    for follower in closed {
        if let Some(sender) = leader.order().senders.remove(&follower) {
            sender.stop();
        }
    }
}

/// Starts a catch-up for each followed shard not in sync at the Plan's epoch.
fn follow(server: &Arc<DbServer>, mine: &[&PlannedShard]) {
    let me = &server.ctx.me;
    let followed: Vec<&&PlannedShard> = mine
        .iter()
        .filter(|s| s.plan.followers.contains(me) && has_shard(server, s))
        .collect();
    let mut catch_ups = server.catch_ups.lock();
    catch_ups.retain(|_, thread| !thread.is_finished());
    if followed.is_empty() {
        return;
    }
    let currents = match server
        .ctx
        .store
        .range(&server.ctx.layout.all_shard_currents())
    {
        Ok(snapshot) => snapshot,
        Err(error) => {
            tracing::warn!(event = "cluster.current_read_failed", "{error}");
            return;
        }
    };
    for planned in followed {
        let key =
            server
                .ctx
                .layout
                .shard_current(&planned.id.db, planned.id.cid, &planned.id.shard);
        let in_sync = currents
            .entries
            .iter()
            .find(|e| e.key == key)
            .and_then(|e| decode::<ShardCurrent>(&e.value))
            .is_some_and(|c| c.epoch == planned.plan.epoch && c.in_sync.contains(me));
        if in_sync || catch_ups.contains_key(&planned.id.shard) {
            continue;
        }
        let weak = Arc::downgrade(server);
        let name = planned.id.shard.clone();
        match std::thread::Builder::new()
            .name(format!("shard-catch-up-{name}"))
            .spawn({
                let name = name.clone();
                move || catch_up_loop(&weak, &name)
            }) {
            Ok(thread) => {
                catch_ups.insert(name, thread);
            }
            Err(error) => tracing::warn!(event = "cluster.catch_up_failed", "{error}"),
        }
    }
}

/// Joins the leader of shard `name` until in sync, no longer a follower, or stopped.
fn catch_up_loop(weak: &Weak<DbServer>, name: &str) {
    let mut backoff = Duration::from_millis(100);
    loop {
        let Some(server) = weak.upgrade() else { return };
        if server.is_stopped() {
            return;
        }
        let view = server.plan();
        let Some(planned) = view.shard(name) else {
            return;
        };
        if !planned.plan.followers.contains(&server.ctx.me) {
            return;
        }
        match join_leader(&server, planned) {
            Ok(()) => {
                tracing::info!(event = "cluster.in_sync", shard = %name, "follower in sync");
                return;
            }
            Err(error) => {
                tracing::info!(event = "cluster.catch_up_retry", shard = %name, "{error}");
            }
        }
        if server.wait_stop(backoff) {
            return;
        }
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}
