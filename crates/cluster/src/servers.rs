//! The cluster's servers one by one, as any member answers for them from the metadata store:
//! a DB server's maintenance mode (`/_admin/cluster/maintenance/<id>`), the number of servers
//! (`/_admin/cluster/numberOfServers`), and finding a server by its id or short name (for
//! `/_admin/cluster/nodeVersion` and friends, which the coordinator sends on).
//!
//! What it is: [`find_server`], [`server_maintenance`] and [`set_server_maintenance`]
//! (`Target/MaintenanceDBServers/<id>` on a lease of the requested duration, or removed; the
//! supervision neither fails over the shards such a server leads nor replaces it as a
//! follower), [`number_of_servers`] and [`set_number_of_servers`] (`Target/NumberOf...`: the
//! counts a deployment tool wants, reported as set; without them, the registered servers).
//!
//! What it is not: the supervision's use of the keys (`supervision/`), or HTTP.
//!
//! Invariants: only a registered DB server can be put in maintenance; a maintenance entry
//! disappears with its lease at its timeout.

use std::time::Duration;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use quince_meta::{Op, Txn};
use serde_json::{json, Value};

use crate::admin::{put_for, store_error};
use crate::layout::{decode, encode, Role, ServerMaintenance, ServerRecord};
use crate::node::Node;

/// The longest a DB server may be put in maintenance for (one week).
pub const SERVER_MAINTENANCE_MAX: Duration = Duration::from_secs(7 * 24 * 3600);

/// The registered server with id (`PRMR-...`) or short name (`DBServer0001`) `name`; 400/10
/// for none.
pub fn find_server(node: &Node, name: &str) -> Result<ServerRecord> {
    let snapshot = node
        .store
        .range(&node.layout().servers_registered())
        .map_err(store_error)?;
    snapshot
        .entries
        .iter()
        .filter_map(|entry| decode::<ServerRecord>(&entry.value))
        .find(|record| record.id == name || record.short_name == name)
        .ok_or_else(|| {
            ArangoError::with_message(BAD_PARAMETER, format!("no server with the id '{name}'"))
        })
}

/// The registered DB server `name`; 400/10 for none (or a coordinator).
fn find_dbserver(node: &Node, name: &str) -> Result<ServerRecord> {
    let record = find_server(node, name)?;
    if record.role != Role::Dbserver {
        return Err(ArangoError::with_message(
            BAD_PARAMETER,
            format!("'{name}' is not a DB server"),
        ));
    }
    Ok(record)
}

/// `{"Mode": "maintenance", "Until": ...}` while DB server `name` is in maintenance.
pub fn server_maintenance(node: &Node, name: &str) -> Result<Option<Value>> {
    let record = find_dbserver(node, name)?;
    let entry = node
        .store
        .get(&node.layout().server_maintenance(&record.id))
        .map_err(store_error)?;
    Ok(entry
        .and_then(|entry| decode::<ServerMaintenance>(&entry.value))
        .map(|maintenance| json!(maintenance)))
}

/// Puts DB server `name` in maintenance for `duration` (`Some`, at most
/// [`SERVER_MAINTENANCE_MAX`]: 400/10 beyond), or ends it (`None`).
pub fn set_server_maintenance(node: &Node, name: &str, duration: Option<Duration>) -> Result<()> {
    let record = find_dbserver(node, name)?;
    let key = node.layout().server_maintenance(&record.id);
    let store = &*node.store;
    let Some(duration) = duration else {
        store
            .txn(Txn::when(Vec::new(), vec![Op::delete(key)]))
            .map_err(store_error)?;
        return Ok(());
    };
    if duration.is_zero() || duration > SERVER_MAINTENANCE_MAX {
        return Err(ArangoError::with_message(
            BAD_PARAMETER,
            format!(
                "timeout must be between 1 and {} seconds",
                SERVER_MAINTENANCE_MAX.as_secs()
            ),
        ));
    }
    put_for(node, key, duration, |until| ServerMaintenance {
        mode: "maintenance".to_string(),
        until,
    })
}

/// `{numberOfCoordinators, numberOfDBServers, cleanedServers}`: the numbers set with
/// [`set_number_of_servers`], else the registered servers of each role.
pub fn number_of_servers(node: &Node) -> Result<Value> {
    let layout = node.layout();
    let store = &*node.store;
    let registered: Vec<ServerRecord> = store
        .range(&layout.servers_registered())
        .map_err(store_error)?
        .entries
        .iter()
        .filter_map(|entry| decode::<ServerRecord>(&entry.value))
        .collect();
    let target = |key: String| -> Result<Option<Value>> {
        Ok(store
            .get(&key)
            .map_err(store_error)?
            .and_then(|entry| decode::<Value>(&entry.value)))
    };
    let count = |role: Role| registered.iter().filter(|r| r.role == role).count();
    Ok(json!({
        "numberOfCoordinators": target(layout.target_number_of("Coordinators"))?
            .unwrap_or_else(|| json!(count(Role::Coordinator))),
        "numberOfDBServers": target(layout.target_number_of("DBServers"))?
            .unwrap_or_else(|| json!(count(Role::Dbserver))),
        "cleanedServers": target(layout.target_cleaned_servers())?.unwrap_or_else(|| json!([])),
    }))
}

/// Records the numbers of servers a deployment wants (`numberOfCoordinators`,
/// `numberOfDBServers`: non-negative integers or null; `cleanedServers`: an array of ids), as
/// ArangoDB keeps them for its tools; 400/10 for other values.
pub fn set_number_of_servers(node: &Node, body: &Value) -> Result<()> {
    let layout = node.layout();
    let Some(body) = body.as_object() else {
        return Err(ArangoError::with_message(
            BAD_PARAMETER,
            "expecting a JSON object",
        ));
    };
    let mut ops = Vec::new();
    for (name, key) in [
        (
            "numberOfCoordinators",
            layout.target_number_of("Coordinators"),
        ),
        ("numberOfDBServers", layout.target_number_of("DBServers")),
    ] {
        match body.get(name) {
            None => {}
            Some(Value::Null) => ops.push(Op::delete(key)),
            Some(value) if value.as_u64().is_some() => ops.push(Op::put(key, encode(value))),
            Some(_) => {
                return Err(ArangoError::with_message(
                    BAD_PARAMETER,
                    format!("{name} must be a non-negative integer"),
                ))
            }
        }
    }
    match body.get("cleanedServers") {
        None => {}
        Some(Value::Array(ids)) if ids.iter().all(Value::is_string) => ops.push(Op::put(
            layout.target_cleaned_servers(),
            encode(&Value::Array(ids.clone())),
        )),
        Some(_) => {
            return Err(ArangoError::with_message(
                BAD_PARAMETER,
                "cleanedServers must be an array of server ids",
            ))
        }
    }
    if !ops.is_empty() {
        node.store
            .txn(Txn::when(Vec::new(), ops))
            .map_err(store_error)?;
    }
    Ok(())
}
