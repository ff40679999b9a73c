//! The JSON shapes of collection replies: the properties object, the basic info, a list entry,
//! and `figures` in MMFiles's shape beside 3.12's (<https://docs.arangodb.com/3.12/develop/http-api/collections/>).
//!
//! What it is: pure functions from the db layer's values to JSON objects, in ArangoDB's key
//! order, so that handlers only add the endpoint-specific attributes.
//!
//! What it is not: a place that reads state; callers pass what they read.
//!
//! Invariants: ids are decimal strings; `status` is always 3 ("loaded"), as in ArangoDB 3.9+;
//! no success object carries `errorNum`.

use quince_ops::{CollectionProperties, FiguresReport};
use serde_json::{json, Map, Value};

/// `{"error":false,"code":200}`, the head of every collection reply.
pub(super) fn success_head() -> Map<String, Value> {
    let mut head = Map::new();
    head.insert("error".into(), Value::Bool(false));
    head.insert("code".into(), Value::from(200));
    head
}

/// Appends the attributes of `extra` to `object`.
fn extend(mut object: Map<String, Value>, extra: Value) -> Map<String, Value> {
    if let Value::Object(extra) = extra {
        object.extend(extra);
    }
    object
}

/// One entry of the collection list: `id, name, status, type, isSystem, globallyUniqueId`.
pub(super) fn list_entry(p: &CollectionProperties) -> Value {
    json!({
        "id": p.id.to_string(),
        "name": p.name,
        "status": 3,
        "type": p.kind.as_number(),
        "isSystem": p.is_system,
        "globallyUniqueId": p.globally_unique_id,
    })
}

/// The basic info: `error, code, id, name, type, status, isSystem, globallyUniqueId`.
pub(super) fn basic_info(p: &CollectionProperties) -> Map<String, Value> {
    extend(
        success_head(),
        json!({
            "id": p.id.to_string(),
            "name": p.name,
            "type": p.kind.as_number(),
            "status": 3,
            "isSystem": p.is_system,
            "globallyUniqueId": p.globally_unique_id,
        }),
    )
}

/// The properties object: the basic info plus every property, `journalSize` included (Quince
/// keeps MMFiles's journals and their size limit), and the constants of a single server.
pub(super) fn properties(p: &CollectionProperties) -> Map<String, Value> {
    extend(
        success_head(),
        json!({
            "id": p.id.to_string(),
            "name": p.name,
            "type": p.kind.as_number(),
            "status": 3,
            "statusString": "loaded",
            "isSystem": p.is_system,
            "globallyUniqueId": p.globally_unique_id,
            "objectId": p.id.to_string(),
            "waitForSync": p.wait_for_sync,
            "keyOptions": p.key_options,
            "schema": p.schema,
            "computedValues": p.computed_values,
            "cacheEnabled": p.cache_enabled,
            "journalSize": p.journal_size,
            "writeConcern": 1,
            "replicationFactor": 1,
            "syncByRevision": true,
            "usesRevisionsAsDocumentIds": true,
            "internalValidatorType": 0,
            "isSmartChild": false,
        }),
    )
}

/// `figures`: MMFiles's `alive`, `dead`, `datafiles`, `journals`, `compactors` beside 3.12's
/// `indexes`, `documentsSize` and cache attributes.
pub(super) fn figures(report: &FiguresReport) -> Value {
    let s = &report.storage;
    json!({
        "alive": {"count": s.alive_count, "size": s.alive_size},
        "dead": {"count": s.dead_count, "size": s.dead_size, "deletion": s.dead_deletion},
        "datafiles": {"count": s.datafiles_count, "fileSize": s.datafiles_file_size},
        "journals": {"count": s.journals_count, "fileSize": s.journals_file_size},
        "compactors": {"count": s.compactors_count, "fileSize": s.compactors_file_size},
        "indexes": {"count": report.index_count, "size": index_size(report)},
        "documentsSize": s.documents_size,
        "cacheInUse": false,
        "cacheSize": 0,
        "cacheUsage": 0,
        "lastTick": s.last_tick.to_string(),
        "uncollectedLogfileEntries": 0,
    })
}

/// The memory of every index: the engine's primary index, and each secondary one's estimate.
fn index_size(report: &FiguresReport) -> u64 {
    let secondary: u64 = report
        .indexes
        .iter()
        .filter(|i| i.id != 0)
        .map(|i| i.memory)
        .sum();
    report.storage.index_size + secondary
}

/// The `engine` attribute of `figures?details=true`: the documents and each index with its
/// entries (an edge collection's edge index right after the primary one).
pub(super) fn engine_details(report: &FiguresReport, count: u64) -> Value {
    let indexes: Vec<Value> = report
        .indexes
        .iter()
        .map(|index| json!({"type": index.kind, "id": index.id, "count": index.count}))
        .collect();
    json!({"documents": count, "indexes": indexes})
}

#[cfg(test)]
mod tests {
    use super::*;
    use quince_ops::CollectionType;

    fn props() -> CollectionProperties {
        CollectionProperties {
            id: 42,
            name: "c".into(),
            kind: CollectionType::Edge,
            is_system: false,
            globally_unique_id: "h42".into(),
            wait_for_sync: true,
            journal_size: 1 << 20,
            key_options: json!({"type": "traditional", "allowUserKeys": true, "lastValue": 0}),
            schema: Value::Null,
            computed_values: Value::Null,
            cache_enabled: false,
        }
    }

    #[test]
    fn properties_have_the_documented_keys_in_order() {
        let object = properties(&props());
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "error",
                "code",
                "id",
                "name",
                "type",
                "status",
                "statusString",
                "isSystem",
                "globallyUniqueId",
                "objectId",
                "waitForSync",
                "keyOptions",
                "schema",
                "computedValues",
                "cacheEnabled",
                "journalSize",
                "writeConcern",
                "replicationFactor",
                "syncByRevision",
                "usesRevisionsAsDocumentIds",
                "internalValidatorType",
                "isSmartChild"
            ]
        );
        assert_eq!(object["id"], "42");
        assert_eq!(object["type"], 3);
        assert_eq!(object["journalSize"], 1048576);
    }

    #[test]
    fn basic_info_is_the_short_shape() {
        let object = basic_info(&props());
        let keys: Vec<&str> = object.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "error",
                "code",
                "id",
                "name",
                "type",
                "status",
                "isSystem",
                "globallyUniqueId"
            ]
        );
    }
}
