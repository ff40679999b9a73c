//! Reads the JSON bodies of `POST /_api/collection` and `PUT …/properties` into the db layer's
//! requests ([`CreateCollection`], [`PropertiesUpdate`]).
//!
//! What it is: type checks of each attribute (400 when an attribute has the wrong JSON type).
//!
//! What it is not: validation of values. Names (1208), key options (1232/400), the 1 MiB
//! minimum of `journalSize`, `schema` (1621) and `computedValues` (400/10, whatever their
//! JSON type) are the engine's rules, worded as ArangoDB words them; cluster options (`numberOfShards`,
//! `shardKeys`, `replicationFactor`, `writeConcern`, …) are accepted and ignored, as a single
//! ArangoDB server does.
//!
//! Invariants: an absent or `null` attribute means "not given" except for `schema` and
//! `computedValues`, where `null` is a value that clears them.

use quince_errors::{ArangoError, Result};
use quince_ops::{CollectionType, CreateCollection, PropertiesUpdate};
use serde_json::{Map, Value};

/// The body of a create request.
pub(super) fn create_request(body: Value) -> Result<CreateCollection> {
    let object = expect_object(body)?;
    let name = match object.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err(ArangoError::new(quince_errors::ARANGO_ILLEGAL_NAME)),
    };
    Ok(CreateCollection {
        name,
        kind: collection_type(object.get("type"))?,
        wait_for_sync: optional_bool(&object, "waitForSync")?,
        is_system: optional_bool(&object, "isSystem")?.unwrap_or(false),
        key_options: object.get("keyOptions").filter(|v| !v.is_null()).cloned(),
        journal_size: optional_size(&object, "journalSize")?,
        schema: object.get("schema").cloned(),
        computed_values: object.get("computedValues").cloned(),
        cache_enabled: optional_bool(&object, "cacheEnabled")?,
    })
}

/// The body of a properties change.
pub(super) fn properties_update(body: Value) -> Result<PropertiesUpdate> {
    let object = expect_object(body)?;
    Ok(PropertiesUpdate {
        wait_for_sync: optional_bool(&object, "waitForSync")?,
        journal_size: optional_size(&object, "journalSize")?,
        schema: object.get("schema").cloned(),
        computed_values: object.get("computedValues").cloned(),
        cache_enabled: optional_bool(&object, "cacheEnabled")?,
    })
}

/// The new name of a rename request (`{"name": "…"}`); 1208 when missing or not a string.
pub(super) fn new_name(body: Value) -> Result<String> {
    match expect_object(body)?.remove("name") {
        Some(Value::String(name)) if !name.is_empty() => Ok(name),
        _ => Err(ArangoError::new(quince_errors::ARANGO_ILLEGAL_NAME)),
    }
}

fn bad_parameter(message: String) -> ArangoError {
    ArangoError::with_message(quince_errors::HTTP_BAD_PARAMETER, message)
}

fn expect_object(body: Value) -> Result<Map<String, Value>> {
    match body {
        Value::Object(object) => Ok(object),
        _ => Err(bad_parameter("expecting a JSON object as body".into())),
    }
}

/// `type`: 2 (document, the default) or 3 (edge); the strings "document" and "edge" too.
fn collection_type(value: Option<&Value>) -> Result<CollectionType> {
    let kind = match value {
        None | Some(Value::Null) => Some(CollectionType::Document),
        Some(Value::Number(n)) => {
            // 2 and 2.0 are the same JSON number.
            let whole = n.as_f64().filter(|t| t.fract() == 0.0).map(|t| t as i64);
            match whole {
                Some(2) => Some(CollectionType::Document),
                Some(3) => Some(CollectionType::Edge),
                _ => None,
            }
        }
        Some(Value::String(s)) => match s.as_str() {
            "document" | "2" => Some(CollectionType::Document),
            "edge" | "3" => Some(CollectionType::Edge),
            _ => None,
        },
        Some(_) => None,
    };
    kind.ok_or_else(|| {
        ArangoError::with_message(
            quince_errors::ARANGO_COLLECTION_TYPE_INVALID,
            "invalid collection type",
        )
    })
}

fn optional_bool(object: &Map<String, Value>, name: &str) -> Result<Option<bool>> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad_parameter(format!("{name} must be a boolean"))),
    }
}

/// A byte size: a non-negative integer (an integral float is accepted, as JSON has no ints).
fn optional_size(object: &Map<String, Value>, name: &str) -> Result<Option<u64>> {
    let value = match object.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    if let Some(size) = value.as_u64() {
        return Ok(Some(size));
    }
    match value.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(Some(f as u64)),
        _ => Err(bad_parameter(format!(
            "{name} must be a non-negative integer"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_create_body_with_cluster_options_is_accepted() {
        let body = json!({
            "name": "c", "waitForSync": false, "isSystem": false,
            "keyOptions": {"type": "traditional", "allowUserKeys": true}, "type": 3,
            "numberOfShards": 1, "shardKeys": ["_key"], "replicationFactor": 1,
            "shardingStrategy": "hash", "smartJoinAttribute": null, "writeConcern": 1,
            "journalSize": 2097152.0,
        });
        let request = create_request(body).unwrap();
        assert_eq!(request.kind, CollectionType::Edge);
        assert_eq!(request.wait_for_sync, Some(false));
        assert_eq!(request.journal_size, Some(2 << 20));
        assert!(request.key_options.is_some());
    }

    #[test]
    fn wrong_types_are_rejected() {
        assert_eq!(create_request(json!({"type": 2})).unwrap_err().num(), 1208);
        let err = create_request(json!({"name": "c", "type": 4})).unwrap_err();
        assert_eq!((err.status, err.num()), (400, 1218));
        let err = create_request(json!({"name": "c", "waitForSync": "yes"})).unwrap_err();
        assert_eq!((err.status, err.num()), (400, 400));
        let err = create_request(json!({"name": "c", "journalSize": -1})).unwrap_err();
        assert_eq!(err.status, 400);
        assert_eq!(properties_update(json!([])).unwrap_err().status, 400);
        assert_eq!(new_name(json!({"name": 1})).unwrap_err().num(), 1208);
    }

    #[test]
    fn null_clears_schema_but_means_absent_elsewhere() {
        let update = properties_update(json!({"schema": null, "waitForSync": null})).unwrap();
        assert_eq!(update.schema, Some(Value::Null));
        assert_eq!(update.wait_for_sync, None);
    }
}
