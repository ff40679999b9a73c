//! The rules of changing a named graph: how gharial bodies become [`GraphDefinition`]s and
//! [`EdgeDefinition`]s, and which changes are refused.
//!
//! What it is: pure functions over definitions and JSON bodies, no engine calls:
//! - [`parse_create`]: a `POST /_api/gharial` body (name, edge definitions, orphans, and the
//!   sharding and smart options, read at the top level or under `options`, stored with the
//!   defaults of a general graph);
//! - [`parse_edge_definition`] (400/1923), [`parse_orphans`] (400/1943);
//! - [`check_own_definitions`] (400/1920: one edge collection twice in a graph) and
//!   [`check_conflicts`] (1921: an edge collection that another graph uses with other
//!   `from`/`to` collections);
//! - [`settle_orphans`]: orphans that an edge definition now uses stop being orphans.
//!
//! What it is not: the checks that need the catalog (a collection of the wrong type: 1927,
//! 1944), the `_graphs` writes, or HTTP statuses beyond the codes' defaults (callers override
//! them where ArangoDB answers otherwise).
//!
//! Invariants: an edge definition's `from` and `to` come out sorted and without repeats (so
//! two definitions compare equal when they join the same collections, in any order); orphans
//! keep their order without repeats and never name a collection an edge definition uses.

use quince_errors::{
    ArangoError, Result, BAD_PARAMETER, GRAPH_COLLECTION_MULTI_USE,
    GRAPH_COLLECTION_USE_IN_MULTI_GRAPHS, GRAPH_CREATE_MALFORMED_EDGE_DEFINITION,
    GRAPH_CREATE_MALFORMED_ORPHAN_LIST, GRAPH_CREATE_MISSING_NAME,
};
use quince_ops::graph::{EdgeDefinition, GraphDefinition};
use serde_json::{Map, Value};

/// The options a graph stores and echoes: each is read at the top level of a create body or
/// under its `options` (the drivers differ), the top level winning.
const GRAPH_OPTIONS: [&str; 8] = [
    "numberOfShards",
    "replicationFactor",
    "writeConcern",
    "minReplicationFactor",
    "isSmart",
    "isDisjoint",
    "smartGraphAttribute",
    "satellites",
];

/// A create body as a definition (not yet checked against the catalog or other graphs).
pub(crate) fn parse_create(body: &Value) -> Result<GraphDefinition> {
    let Value::Object(body) = body else {
        return Err(ArangoError::new(GRAPH_CREATE_MISSING_NAME));
    };
    let name = match body.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err(ArangoError::new(GRAPH_CREATE_MISSING_NAME)),
    };
    let edge_definitions = match body.get("edgeDefinitions") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(parse_edge_definition)
            .collect::<Result<_>>()?,
        Some(_) => {
            return Err(malformed_edge_definition(
                "edgeDefinitions must be an array",
            ))
        }
    };
    let orphan_collections = parse_orphans(body.get("orphanCollections"))?;
    let mut graph = GraphDefinition {
        name,
        edge_definitions,
        orphan_collections,
        options: stored_options(body)?,
    };
    check_own_definitions(&graph.edge_definitions)?;
    settle_orphans(&mut graph);
    Ok(graph)
}

/// The stored options of a new graph: what the body gave, and a general graph's defaults for
/// the rest (one shard, replication factor and write concern 1, not smart, not disjoint; a
/// `replicationFactor` of `"satellite"` makes a SatelliteGraph).
fn stored_options(body: &Map<String, Value>) -> Result<Map<String, Value>> {
    let nested = match body.get("options") {
        Some(Value::Object(options)) => Some(options),
        None | Some(Value::Null) => None,
        Some(_) => return Err(bad("options must be an object")),
    };
    let given = |key: &str| {
        body.get(key)
            .filter(|v| !v.is_null())
            .or_else(|| nested.and_then(|o| o.get(key)).filter(|v| !v.is_null()))
            .cloned()
    };
    let mut options = Map::new();
    for key in GRAPH_OPTIONS {
        if let Some(value) = given(key) {
            options.insert(key.to_owned(), value);
        }
    }
    match options.get("numberOfShards") {
        None => {
            options.insert("numberOfShards".into(), 1.into());
        }
        Some(v) if v.as_u64().is_some_and(|n| n >= 1) => {}
        Some(_) => return Err(bad("numberOfShards must be a positive integer")),
    }
    let satellite = match options.get("replicationFactor") {
        None => {
            options.insert("replicationFactor".into(), 1.into());
            false
        }
        Some(Value::String(s)) if s == "satellite" => true,
        Some(v) if v.as_u64().is_some_and(|n| n >= 1) => false,
        Some(_) => {
            return Err(bad(
                "replicationFactor must be a positive integer or \"satellite\"",
            ))
        }
    };
    let write_concern = options
        .get("writeConcern")
        .or_else(|| options.get("minReplicationFactor"))
        .cloned()
        .unwrap_or_else(|| 1.into());
    if write_concern.as_u64().is_none_or(|n| n < 1) {
        return Err(bad("writeConcern must be a positive integer"));
    }
    options.insert("writeConcern".into(), write_concern.clone());
    options.insert("minReplicationFactor".into(), write_concern);
    for flag in ["isSmart", "isDisjoint"] {
        match options.get(flag) {
            None => {
                options.insert(flag.into(), false.into());
            }
            Some(Value::Bool(_)) => {}
            Some(_) => return Err(bad(&format!("{flag} must be a boolean"))),
        }
    }
    options.insert("isSatellite".into(), satellite.into());
    Ok(options)
}

/// One edge definition as sent: `{collection, from, to}` with a non-empty collection name and
/// arrays of names (400/1923 otherwise).
pub(crate) fn parse_edge_definition(value: &Value) -> Result<EdgeDefinition> {
    let Value::Object(object) = value else {
        return Err(malformed_edge_definition(
            "an edge definition must be an object",
        ));
    };
    let collection = match object.get("collection") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => {
            return Err(malformed_edge_definition(
                "collection must be a non-empty string",
            ))
        }
    };
    let names = |field: &str| -> Result<Vec<String>> {
        let Some(Value::Array(items)) = object.get(field) else {
            return Err(malformed_edge_definition(&format!(
                "{field} must be an array of collection names"
            )));
        };
        let mut names = items
            .iter()
            .map(|item| match item {
                Value::String(name) if !name.is_empty() => Ok(name.clone()),
                _ => Err(malformed_edge_definition(&format!(
                    "{field} must be an array of collection names"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        names.sort();
        names.dedup();
        Ok(names)
    };
    Ok(EdgeDefinition {
        from: names("from")?,
        to: names("to")?,
        collection,
    })
}

/// `orphanCollections`: absent, null, or an array of names (400/1943 otherwise); repeats
/// dropped.
pub(crate) fn parse_orphans(value: Option<&Value>) -> Result<Vec<String>> {
    let items = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ArangoError::new(GRAPH_CREATE_MALFORMED_ORPHAN_LIST)),
    };
    let mut orphans: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::String(name) if !name.is_empty() => {
                if !orphans.contains(name) {
                    orphans.push(name.clone());
                }
            }
            _ => return Err(ArangoError::new(GRAPH_CREATE_MALFORMED_ORPHAN_LIST)),
        }
    }
    Ok(orphans)
}

/// 400/1920 when one edge collection has two definitions in the same graph.
pub(crate) fn check_own_definitions(definitions: &[EdgeDefinition]) -> Result<()> {
    for (i, definition) in definitions.iter().enumerate() {
        if definitions[..i]
            .iter()
            .any(|earlier| earlier.collection == definition.collection)
        {
            return Err(ArangoError::with_message(
                GRAPH_COLLECTION_MULTI_USE,
                format!(
                    "multi use of edge collection in edge def: collection '{}'",
                    definition.collection
                ),
            ));
        }
    }
    Ok(())
}

/// 1921 when a graph other than `own` defines `definition`'s edge collection with other
/// `from` or `to` collections.
pub(crate) fn check_conflicts(
    definition: &EdgeDefinition,
    graphs: &[GraphDefinition],
    own: &str,
) -> Result<()> {
    for graph in graphs.iter().filter(|graph| graph.name != own) {
        let clash = graph
            .edge_definitions
            .iter()
            .any(|other| other.collection == definition.collection && other != definition);
        if clash {
            return Err(ArangoError::with_message(
                GRAPH_COLLECTION_USE_IN_MULTI_GRAPHS,
                format!(
                    "{}: edge collection '{}' is used with other vertex collections in graph '{}'",
                    "edge collection already used in edge def", definition.collection, graph.name
                ),
            ));
        }
    }
    Ok(())
}

/// Drops the orphans an edge definition uses (they are vertex collections of the graph
/// through it now).
pub(crate) fn settle_orphans(graph: &mut GraphDefinition) {
    let used: Vec<String> = graph
        .edge_definitions
        .iter()
        .flat_map(|d| d.from.iter().chain(&d.to).cloned())
        .collect();
    graph.orphan_collections.retain(|name| !used.contains(name));
}

/// After an edge definition left or changed: the vertex collections it no longer reaches
/// through any definition become orphans (ArangoDB keeps them in the graph), in `before`'s
/// order.
pub(crate) fn keep_vertex_collections(graph: &mut GraphDefinition, before: &[String]) {
    let now = graph.vertex_collections();
    for name in before {
        if !now.contains(name) {
            graph.orphan_collections.push(name.clone());
        }
    }
}

fn malformed_edge_definition(detail: &str) -> ArangoError {
    ArangoError::with_message(
        GRAPH_CREATE_MALFORMED_EDGE_DEFINITION,
        format!("malformed edge definition: {detail}"),
    )
}

fn bad(message: &str) -> ArangoError {
    ArangoError::with_message(BAD_PARAMETER, message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(collection: &str, from: &[&str], to: &[&str]) -> EdgeDefinition {
        EdgeDefinition {
            collection: collection.into(),
            from: from.iter().map(|s| s.to_string()).collect(),
            to: to.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_create_body_gets_a_general_graphs_defaults_and_keeps_what_was_sent() {
        let graph = parse_create(&json!({
            "name": "g",
            "edgeDefinitions": [{"collection": "e", "from": ["b", "a", "a"], "to": ["c"]}],
            "orphanCollections": ["o", "a", "o"],
            "isSmart": true,
            "options": {"numberOfShards": 3, "isSmart": false, "smartGraphAttribute": "region"},
        }))
        .unwrap();
        assert_eq!(
            graph.edge_definitions,
            vec![definition("e", &["a", "b"], &["c"])]
        );
        assert_eq!(graph.orphan_collections, vec!["o"]);
        let o = &graph.options;
        assert_eq!(o["numberOfShards"], 3);
        assert_eq!(o["replicationFactor"], 1);
        assert_eq!(o["writeConcern"], 1);
        assert_eq!(o["minReplicationFactor"], 1);
        assert_eq!(o["isSmart"], true, "the top level wins");
        assert_eq!(o["isDisjoint"], false);
        assert_eq!(o["isSatellite"], false);
        assert_eq!(o["smartGraphAttribute"], "region");
        let satellite =
            parse_create(&json!({"name": "s", "options": {"replicationFactor": "satellite"}}))
                .unwrap();
        assert_eq!(satellite.options["isSatellite"], true);
    }

    #[test]
    fn malformed_bodies_have_their_own_codes() {
        let cases = [
            (json!({}), GRAPH_CREATE_MISSING_NAME),
            (json!({"name": ""}), GRAPH_CREATE_MISSING_NAME),
            (json!({"name": 1}), GRAPH_CREATE_MISSING_NAME),
            (
                json!({"name": "g", "edgeDefinitions": {}}),
                GRAPH_CREATE_MALFORMED_EDGE_DEFINITION,
            ),
            (
                json!({"name": "g", "edgeDefinitions": [{"collection": "e", "from": "a", "to": []}]}),
                GRAPH_CREATE_MALFORMED_EDGE_DEFINITION,
            ),
            (
                json!({"name": "g", "edgeDefinitions": [{"from": [], "to": []}]}),
                GRAPH_CREATE_MALFORMED_EDGE_DEFINITION,
            ),
            (
                json!({"name": "g", "orphanCollections": "o"}),
                GRAPH_CREATE_MALFORMED_ORPHAN_LIST,
            ),
            (
                json!({"name": "g", "orphanCollections": [1]}),
                GRAPH_CREATE_MALFORMED_ORPHAN_LIST,
            ),
            (
                json!({"name": "g", "edgeDefinitions": [
                {"collection": "e", "from": ["a"], "to": ["b"]},
                {"collection": "e", "from": ["a"], "to": ["c"]}]}),
                GRAPH_COLLECTION_MULTI_USE,
            ),
            (
                json!({"name": "g", "options": {"numberOfShards": 0}}),
                BAD_PARAMETER,
            ),
        ];
        for (body, code) in cases {
            let e = parse_create(&body).unwrap_err();
            assert!(e.is(code), "{body}: {e:?}");
        }
    }

    #[test]
    fn an_edge_collection_shared_by_graphs_must_join_the_same_collections() {
        let other = GraphDefinition {
            name: "other".into(),
            edge_definitions: vec![definition("e", &["a"], &["b"])],
            orphan_collections: vec![],
            options: Map::new(),
        };
        let graphs = [other];
        assert!(check_conflicts(&definition("e", &["a"], &["b"]), &graphs, "g").is_ok());
        assert!(check_conflicts(&definition("f", &["x"], &["y"]), &graphs, "g").is_ok());
        let e = check_conflicts(&definition("e", &["a"], &["c"]), &graphs, "g").unwrap_err();
        assert!(e.is(GRAPH_COLLECTION_USE_IN_MULTI_GRAPHS));
        assert!(
            check_conflicts(&definition("e", &["a"], &["c"]), &graphs, "other").is_ok(),
            "a graph never conflicts with itself"
        );
    }

    #[test]
    fn vertex_collections_a_definition_left_behind_become_orphans() {
        let mut graph = GraphDefinition {
            name: "g".into(),
            edge_definitions: vec![
                definition("e", &["a"], &["b"]),
                definition("f", &["a"], &["c"]),
            ],
            orphan_collections: vec!["o".into()],
            options: Map::new(),
        };
        let before = graph.vertex_collections();
        graph.edge_definitions.remove(1);
        keep_vertex_collections(&mut graph, &before);
        assert_eq!(graph.orphan_collections, vec!["o", "c"]);
        graph.edge_definitions.push(definition("g", &["o"], &["c"]));
        settle_orphans(&mut graph);
        assert!(graph.orphan_collections.is_empty());
    }
}
