//! The cluster options of a collection create body, validated as ArangoDB 3.12 answers them.
//!
//! What it is: [`ClusterOptions::parse`]: `numberOfShards` (1 up to the configured maximum,
//! 1450 beyond), `shardKeys` (default `["_key"]`, 1 to 8 distinct non-empty strings),
//! `replicationFactor` (between the configured minimum and maximum: 400/10 otherwise; more than
//! the live DB servers: 1487 unless `enforceReplicationFactor` is false), `writeConcern` (old
//! name `minReplicationFactor`; at most `replicationFactor`), `shardingStrategy` (`hash` only),
//! `distributeShardsLike` (resolved by the caller: 1486 unknown, 1484 a chain), Quince's
//! `replicationMode`, and `waitForSyncReplication`. Defaults come from the database (its
//! `replicationFactor` and `writeConcern`) and then from the configuration.
//!
//! What it is not: the placement of shards (`placement.rs`) or the local properties
//! (`waitForSync`, `keyOptions`, `schema`, ...), which the DB servers' shards take.
//!
//! Invariants: every accepted set has `1 <= writeConcern <= replicationFactor` and
//! `1 <= numberOfShards <= max`.

use quince_errors::{
    ArangoError, Result, BAD_PARAMETER, CLUSTER_INSUFFICIENT_DBSERVERS, CLUSTER_TOO_MANY_SHARDS,
};
use serde_json::{Map, Value};

use crate::layout::{DatabasePlan, ReplicationMode};
use crate::node::ClusterConfig;

/// The most shard keys a collection may have.
pub const SHARD_KEYS_MAX: usize = 8;

/// A collection's validated cluster options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterOptions {
    /// `numberOfShards`.
    pub number_of_shards: u32,
    /// `shardKeys`.
    pub shard_keys: Vec<String>,
    /// `replicationFactor`.
    pub replication_factor: u32,
    /// `writeConcern`.
    pub write_concern: u32,
    /// `shardingStrategy`.
    pub sharding_strategy: String,
    /// `distributeShardsLike` as given (resolved by the caller).
    pub distribute_shards_like: Option<String>,
    /// `replicationMode`.
    pub replication_mode: ReplicationMode,
    /// `enforceReplicationFactor` (default true).
    pub enforce_replication_factor: bool,
    /// `waitForSyncReplication` (default true): creation waits for every copy to be in sync.
    pub wait_for_sync_replication: bool,
}

fn bad(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(BAD_PARAMETER, message.into())
}

/// A positive integer option (integral floats and decimal strings accepted, as clients send
/// them); `None` when absent or null.
fn positive(body: &Map<String, Value>, name: &str) -> Result<Option<u64>> {
    let value = match body.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let number = match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 4e9)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.parse::<u64>().ok(),
        _ => None,
    };
    number
        .map(Some)
        .ok_or_else(|| bad(format!("invalid value for {name}")))
}

fn flag(body: &Map<String, Value>, name: &str, default: bool) -> Result<bool> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
        Some(_) => Err(bad(format!("{name} must be a boolean"))),
    }
}

impl ClusterOptions {
    /// Parses the cluster options of a create body for a collection in `database`, with
    /// `live_dbservers` DB servers alive.
    pub fn parse(
        body: &Value,
        database: &DatabasePlan,
        config: &ClusterConfig,
        live_dbservers: usize,
    ) -> Result<ClusterOptions> {
        let empty = Map::new();
        let body = body.as_object().unwrap_or(&empty);
        let number_of_shards = match positive(body, "numberOfShards")? {
            None => 1,
            Some(0) => return Err(bad("invalid number of shards")),
            Some(n) if n > u64::from(config.max_number_of_shards) => {
                return Err(ArangoError::with_message(
                    CLUSTER_TOO_MANY_SHARDS,
                    format!(
                        "too many shards: at most {} are allowed",
                        config.max_number_of_shards
                    ),
                ))
            }
            Some(n) => n as u32,
        };
        let shard_keys = match body.get("shardKeys") {
            None | Some(Value::Null) => vec!["_key".to_string()],
            Some(Value::Array(keys)) => {
                if keys.is_empty() || keys.len() > SHARD_KEYS_MAX {
                    return Err(bad("invalid number of shard keys for collection"));
                }
                let mut out: Vec<String> = Vec::with_capacity(keys.len());
                for key in keys {
                    let Some(key) = key.as_str().filter(|k| !k.is_empty()) else {
                        return Err(bad("shardKeys must be non-empty strings"));
                    };
                    // ArangoDB accepts a trailing ':' (smart graphs); a plain attribute here.
                    let key = key.trim_end_matches(':');
                    if key.is_empty() || key == "_id" || key == "_rev" {
                        return Err(bad(format!("'{key}' cannot be a shard key")));
                    }
                    if out.iter().any(|k| k == key) {
                        return Err(bad(format!("duplicate shard key '{key}'")));
                    }
                    out.push(key.to_string());
                }
                out
            }
            Some(_) => return Err(bad("shardKeys must be an array of strings")),
        };
        let replication_factor = match body.get("replicationFactor") {
            Some(Value::String(s)) if s == "satellite" => {
                return Err(ArangoError::with_message(
                    quince_errors::CLUSTER_UNSUPPORTED,
                    "satellite collections are not supported",
                ))
            }
            _ => positive(body, "replicationFactor")?
                .map(|n| n.min(u64::from(u32::MAX)) as u32)
                .unwrap_or(database.replication_factor),
        };
        if replication_factor < config.min_replication_factor {
            return Err(bad(format!(
                "replicationFactor must not be lower than minimum allowed replicationFactor ({})",
                config.min_replication_factor
            )));
        }
        if replication_factor > config.max_replication_factor {
            return Err(bad(format!(
                "replicationFactor must not be higher than maximum allowed replicationFactor ({})",
                config.max_replication_factor
            )));
        }
        let enforce_replication_factor = flag(body, "enforceReplicationFactor", true)?;
        if enforce_replication_factor && replication_factor as usize > live_dbservers {
            return Err(ArangoError::with_message(
                CLUSTER_INSUFFICIENT_DBSERVERS,
                format!(
                    "replicationFactor {replication_factor} is higher than the number of \
                     available DB servers ({live_dbservers})"
                ),
            ));
        }
        let write_concern = match positive(body, "writeConcern")? {
            Some(n) => Some(n),
            None => positive(body, "minReplicationFactor")?,
        };
        let write_concern = match write_concern {
            Some(0) => return Err(bad("writeConcern must be at least 1")),
            Some(n) => n.min(u64::from(u32::MAX)) as u32,
            None => database.write_concern.min(replication_factor).max(1),
        };
        if write_concern > replication_factor {
            return Err(bad(
                "writeConcern must not be higher than replicationFactor",
            ));
        }
        let sharding_strategy = match body.get("shardingStrategy") {
            None | Some(Value::Null) => "hash".to_string(),
            Some(Value::String(s)) if s == "hash" => s.clone(),
            Some(Value::String(s)) => {
                return Err(bad(format!(
                    "unknown or unsupported sharding strategy '{s}' (supported: hash)"
                )))
            }
            Some(_) => return Err(bad("shardingStrategy must be a string")),
        };
        let distribute_shards_like = match body.get("distributeShardsLike") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(bad("distributeShardsLike must be a string")),
        };
        let replication_mode = match body.get("replicationMode") {
            None | Some(Value::Null) => ReplicationMode::Synchronous,
            Some(Value::String(s)) if s == "synchronous" => ReplicationMode::Synchronous,
            Some(Value::String(s)) if s == "asynchronous" => ReplicationMode::Asynchronous,
            Some(_) => {
                return Err(bad(
                    "replicationMode must be \"synchronous\" or \"asynchronous\"",
                ))
            }
        };
        Ok(ClusterOptions {
            number_of_shards,
            shard_keys,
            replication_factor,
            write_concern,
            sharding_strategy,
            distribute_shards_like,
            replication_mode,
            enforce_replication_factor,
            wait_for_sync_replication: flag(body, "waitForSyncReplication", true)?,
        })
    }
}

/// The options of a database create body (`sharding`, `replicationFactor`, `writeConcern`),
/// validated: `(sharding, replicationFactor, writeConcern)`.
pub fn database_options(options: &Value, config: &ClusterConfig) -> Result<(String, u32, u32)> {
    let empty = Map::new();
    let body = options.as_object().unwrap_or(&empty);
    let sharding = match body.get("sharding") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) if s.is_empty() || s == "flexible" => String::new(),
        Some(Value::String(s)) if s == "single" => "single".to_string(),
        Some(_) => {
            return Err(bad(
                "invalid sharding: expecting \"\", \"flexible\" or \"single\"",
            ))
        }
    };
    let replication_factor = match body.get("replicationFactor") {
        Some(Value::String(s)) if s == "satellite" => {
            return Err(ArangoError::with_message(
                quince_errors::CLUSTER_UNSUPPORTED,
                "satellite databases are not supported",
            ))
        }
        _ => positive(body, "replicationFactor")?
            .map(|n| n.min(u64::from(u32::MAX)) as u32)
            .unwrap_or(config.default_replication_factor),
    };
    if replication_factor < config.min_replication_factor
        || replication_factor > config.max_replication_factor
    {
        return Err(bad(format!(
            "replicationFactor must be between {} and {}",
            config.min_replication_factor, config.max_replication_factor
        )));
    }
    let write_concern = match positive(body, "writeConcern")? {
        Some(n) => Some(n),
        None => positive(body, "minReplicationFactor")?,
    };
    let write_concern = match write_concern {
        Some(0) => return Err(bad("writeConcern must be at least 1")),
        Some(n) => n.min(u64::from(u32::MAX)) as u32,
        None => config.write_concern.min(replication_factor).max(1),
    };
    if write_concern > replication_factor {
        return Err(bad(
            "writeConcern must not be higher than replicationFactor",
        ));
    }
    Ok((sharding, replication_factor, write_concern))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Role;
    use serde_json::json;

    fn database() -> DatabasePlan {
        DatabasePlan {
            name: "db".into(),
            id: 1,
            sharding: String::new(),
            replication_factor: 1,
            write_concern: 1,
        }
    }

    fn parse(body: Value, live: usize) -> Result<ClusterOptions> {
        let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:1");
        ClusterOptions::parse(&body, &database(), &config, live)
    }

    #[test]
    fn defaults_come_from_the_database() {
        let options = parse(json!({"name": "c"}), 3).unwrap();
        assert_eq!(options.number_of_shards, 1);
        assert_eq!(options.shard_keys, vec!["_key"]);
        assert_eq!((options.replication_factor, options.write_concern), (1, 1));
        assert_eq!(options.sharding_strategy, "hash");
        assert!(options.wait_for_sync_replication && options.enforce_replication_factor);
    }

    #[test]
    fn bad_values_get_arangodb_error_numbers() {
        let num = |body, live| parse(body, live).unwrap_err().num();
        assert_eq!(num(json!({"numberOfShards": 1001}), 3), 1450);
        assert_eq!(num(json!({"numberOfShards": 0}), 3), 10);
        assert_eq!(num(json!({"shardKeys": []}), 3), 10);
        assert_eq!(num(json!({"shardKeys": ["a", "a"]}), 3), 10);
        let nine: Vec<String> = (0..9).map(|i| format!("k{i}")).collect();
        assert_eq!(num(json!({ "shardKeys": nine }), 3), 10);
        assert_eq!(num(json!({"replicationFactor": 11}), 20), 10);
        assert_eq!(num(json!({"replicationFactor": 0}), 3), 10);
        assert_eq!(num(json!({"replicationFactor": 4}), 3), 1487);
        assert_eq!(
            num(json!({"replicationFactor": 2, "writeConcern": 3}), 3),
            10
        );
        assert_eq!(
            num(json!({"shardingStrategy": "enterprise-hash-smart-edge"}), 3),
            10
        );
        assert_eq!(num(json!({"replicationMode": "eventual"}), 3), 10);
    }

    #[test]
    fn enforcement_can_be_waived_and_old_names_are_read() {
        let options = parse(
            json!({"replicationFactor": 4, "enforceReplicationFactor": false,
                   "minReplicationFactor": 2, "replicationMode": "asynchronous"}),
            3,
        )
        .unwrap();
        assert_eq!((options.replication_factor, options.write_concern), (4, 2));
        assert_eq!(options.replication_mode, ReplicationMode::Asynchronous);
    }

    #[test]
    fn database_options_are_checked() {
        let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:1");
        assert_eq!(
            database_options(
                &json!({"sharding": "single", "replicationFactor": 2}),
                &config
            )
            .unwrap(),
            ("single".to_string(), 2, 1)
        );
        assert_eq!(
            database_options(&json!({"sharding": "odd"}), &config)
                .unwrap_err()
                .num(),
            10
        );
        assert_eq!(
            database_options(&json!({"replicationFactor": 2, "writeConcern": 3}), &config)
                .unwrap_err()
                .num(),
            10
        );
    }
}
