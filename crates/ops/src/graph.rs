//! Named graphs as every engine stores them: the definitions kept in a database's `_graphs`
//! system collection, and how they are read.
//!
//! What it is: [`GraphDefinition`] (a graph's name, its edge definitions, its orphan
//! collections, and every other stored attribute kept verbatim, so that the sharding and smart
//! options a client sent are echoed back), its document form (`_key` is the graph's name), and
//! [`read_graph`] / [`list_graphs`], which read definitions through the operations interface.
//! The gharial API writes these documents; AQL's `GRAPH name` reads them.
//!
//! What it is not: the rules of changing a graph (which collections may join, the 1920s
//! errors of `/_api/gharial`) or the graph constraints on vertex and edge writes; those are
//! the api's. Nor is it a traversal.
//!
//! Invariants: a definition read from `_graphs` has a non-empty name and edge definitions whose
//! `collection`, `from` and `to` are strings (anything else is 500/1941, internal graph data
//! corrupt); a database without a `_graphs` collection has no graphs (reading one answers
//! 404/1924, listing answers an empty list), so the collection is created only when the first
//! graph is.

use quince_errors::{ArangoError, Result, GRAPH_INTERNAL_DATA_CORRUPT, GRAPH_NOT_FOUND};
use serde_json::{Map, Value};

use crate::interface::DatabaseOps;

/// The system collection that holds a database's graph definitions.
pub const GRAPHS_COLLECTION: &str = "_graphs";

/// One edge definition: an edge collection and the vertex collections its edges may join.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeDefinition {
    /// The edge collection.
    pub collection: String,
    /// The vertex collections an edge may start in (`_from`).
    pub from: Vec<String>,
    /// The vertex collections an edge may end in (`_to`).
    pub to: Vec<String>,
}

impl EdgeDefinition {
    /// The definition as ArangoDB renders it: `{collection, from, to}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "collection": self.collection, "from": self.from, "to": self.to })
    }
}

/// A named graph's definition.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphDefinition {
    /// The graph's name (its `_key` in `_graphs`).
    pub name: String,
    /// The edge definitions, in stored order.
    pub edge_definitions: Vec<EdgeDefinition>,
    /// Vertex collections that belong to the graph without an edge definition naming them.
    pub orphan_collections: Vec<String>,
    /// Every other stored attribute (`numberOfShards`, `replicationFactor`, `isSmart`, ...),
    /// kept as stored; system attributes (`_key`, `_id`, `_rev`) are not among them.
    pub options: Map<String, Value>,
}

impl GraphDefinition {
    /// Reads a stored `_graphs` document. A malformed one is 500/1941.
    pub fn from_document(document: &Value) -> Result<GraphDefinition> {
        let corrupt = |what: &str| {
            ArangoError::with_message(
                GRAPH_INTERNAL_DATA_CORRUPT,
                format!("internal graph data corrupt: {what}"),
            )
        };
        let Value::Object(object) = document else {
            return Err(corrupt("a graph definition is not an object"));
        };
        let name = object
            .get("_key")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .ok_or_else(|| corrupt("a graph definition has no _key"))?
            .to_owned();
        let strings = |value: Option<&Value>, what: &str| -> Result<Vec<String>> {
            match value {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| corrupt(&format!("{what} of graph '{name}'")))
                    })
                    .collect(),
                Some(_) => Err(corrupt(&format!("{what} of graph '{name}'"))),
            }
        };
        let mut edge_definitions = Vec::new();
        match object.get("edgeDefinitions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let collection = item
                        .get("collection")
                        .and_then(Value::as_str)
                        .ok_or_else(|| corrupt(&format!("an edge definition of graph '{name}'")))?;
                    edge_definitions.push(EdgeDefinition {
                        collection: collection.to_owned(),
                        from: strings(item.get("from"), "an edge definition's from")?,
                        to: strings(item.get("to"), "an edge definition's to")?,
                    });
                }
            }
            Some(_) => return Err(corrupt(&format!("the edge definitions of graph '{name}'"))),
        }
        let orphan_collections = strings(object.get("orphanCollections"), "the orphans")?;
        let options = object
            .iter()
            .filter(|(key, _)| {
                !matches!(
                    key.as_str(),
                    "_key" | "_id" | "_rev" | "name" | "edgeDefinitions" | "orphanCollections"
                )
            })
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Ok(GraphDefinition {
            name,
            edge_definitions,
            orphan_collections,
            options,
        })
    }

    /// The document stored in `_graphs` (without `_id` and `_rev`, which the engine adds).
    pub fn to_document(&self) -> Value {
        let mut object = Map::new();
        object.insert("_key".to_owned(), Value::String(self.name.clone()));
        self.put_definition(&mut object);
        Value::Object(object)
    }

    /// The graph as gharial answers it: `_key`, `_id` (`_graphs/NAME`), `_rev` (`rev`), `name`,
    /// the edge definitions, the orphans and every stored option.
    pub fn to_json(&self, rev: &str) -> Value {
        let mut object = Map::new();
        object.insert("_key".to_owned(), Value::String(self.name.clone()));
        object.insert(
            "_id".to_owned(),
            Value::String(format!("{GRAPHS_COLLECTION}/{}", self.name)),
        );
        object.insert("_rev".to_owned(), Value::String(rev.to_owned()));
        object.insert("name".to_owned(), Value::String(self.name.clone()));
        self.put_definition(&mut object);
        Value::Object(object)
    }

    fn put_definition(&self, object: &mut Map<String, Value>) {
        object.insert(
            "edgeDefinitions".to_owned(),
            Value::Array(
                self.edge_definitions
                    .iter()
                    .map(EdgeDefinition::to_json)
                    .collect(),
            ),
        );
        object.insert(
            "orphanCollections".to_owned(),
            Value::Array(
                self.orphan_collections
                    .iter()
                    .map(|name| Value::String(name.clone()))
                    .collect(),
            ),
        );
        for (key, value) in &self.options {
            object.insert(key.clone(), value.clone());
        }
    }

    /// The edge collections, in definition order.
    pub fn edge_collections(&self) -> Vec<String> {
        self.edge_definitions
            .iter()
            .map(|definition| definition.collection.clone())
            .collect()
    }

    /// Every vertex collection (each definition's `from` and `to`, then the orphans), sorted
    /// and without repeats.
    pub fn vertex_collections(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .edge_definitions
            .iter()
            .flat_map(|definition| definition.from.iter().chain(&definition.to).cloned())
            .chain(self.orphan_collections.iter().cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Whether `collection` belongs to the graph, as an edge or a vertex collection.
    pub fn uses_collection(&self, collection: &str) -> bool {
        self.edge_definitions.iter().any(|definition| {
            definition.collection == collection
                || definition.from.iter().any(|name| name == collection)
                || definition.to.iter().any(|name| name == collection)
        }) || self
            .orphan_collections
            .iter()
            .any(|name| name == collection)
    }
}

/// The error for an unknown graph: 404/1924 "graph 'NAME' not found".
pub fn graph_not_found(name: &str) -> ArangoError {
    ArangoError::with_message(GRAPH_NOT_FOUND, format!("graph '{name}' not found"))
}

/// Reads graph `name` of `database` with the `_rev` of its stored document.
pub fn read_graph(database: &dyn DatabaseOps, name: &str) -> Result<(GraphDefinition, String)> {
    let Ok(collection) = database.collection(GRAPHS_COLLECTION) else {
        return Err(graph_not_found(name));
    };
    let stored = match collection.read(name) {
        Ok(stored) => stored,
        Err(e) if e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => {
            return Err(graph_not_found(name))
        }
        Err(e) => return Err(e),
    };
    let document: Value = serde_json::from_slice(&stored.json).map_err(|e| {
        ArangoError::with_message(
            GRAPH_INTERNAL_DATA_CORRUPT,
            format!("internal graph data corrupt: graph '{name}': {e}"),
        )
    })?;
    Ok((GraphDefinition::from_document(&document)?, stored.rev))
}

/// Every graph of `database` with its `_rev`, sorted by name.
pub fn list_graphs(database: &dyn DatabaseOps) -> Result<Vec<(GraphDefinition, String)>> {
    let Ok(collection) = database.collection(GRAPHS_COLLECTION) else {
        return Ok(Vec::new());
    };
    let mut graphs = Vec::new();
    let mut failure = None;
    collection.scan(&mut |stored| {
        let parsed = serde_json::from_slice::<Value>(&stored.json)
            .map_err(|e| {
                ArangoError::with_message(
                    GRAPH_INTERNAL_DATA_CORRUPT,
                    format!("internal graph data corrupt: {e}"),
                )
            })
            .and_then(|document| GraphDefinition::from_document(&document));
        match parsed {
            Ok(graph) => {
                graphs.push((graph, stored.rev));
                true
            }
            Err(e) => {
                failure = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    graphs.sort_by(|a, b| a.0.name.cmp(&b.0.name));
    Ok(graphs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_stored_definition_reads_back_with_its_options() {
        let stored = json!({
            "_key": "social", "_id": "_graphs/social", "_rev": "_x",
            "edgeDefinitions": [{"collection": "relation", "from": ["female", "male"], "to": ["male"]}],
            "orphanCollections": ["lonely"],
            "numberOfShards": 3, "isSmart": false,
        });
        let graph = GraphDefinition::from_document(&stored).unwrap();
        assert_eq!(graph.name, "social");
        assert_eq!(graph.edge_collections(), vec!["relation"]);
        assert_eq!(graph.vertex_collections(), vec!["female", "lonely", "male"]);
        assert!(graph.uses_collection("lonely") && !graph.uses_collection("other"));
        assert_eq!(graph.options.get("numberOfShards"), Some(&json!(3)));
        assert!(!graph.options.contains_key("_rev"));
        let document = graph.to_document();
        assert_eq!(GraphDefinition::from_document(&document).unwrap(), graph);
        let rendered = graph.to_json("_x");
        assert_eq!(rendered["_id"], "_graphs/social");
        assert_eq!(rendered["name"], "social");
        assert_eq!(rendered["isSmart"], false);
    }

    #[test]
    fn a_malformed_definition_is_corrupt_data() {
        for stored in [
            json!([]),
            json!({"edgeDefinitions": []}),
            json!({"_key": "g", "edgeDefinitions": {}}),
            json!({"_key": "g", "edgeDefinitions": [{"from": [], "to": []}]}),
            json!({"_key": "g", "edgeDefinitions": [{"collection": "e", "from": [1], "to": []}]}),
            json!({"_key": "g", "orphanCollections": "x"}),
        ] {
            let e = GraphDefinition::from_document(&stored).unwrap_err();
            assert!(e.is(GRAPH_INTERNAL_DATA_CORRUPT), "{stored}: {e:?}");
        }
    }
}
