//! Compiling the graph operations: a traversal or path search of the syntax tree to its plan
//! node, with the graph resolved, the depth and options read and checked.
//!
//! What it is: [`Compiler::traversal`] and [`Compiler::path_search`] (methods of the compile
//! pass), and the option readers they share.
//!
//! What it is not: execution, or the choice of pushed-down filters (`plan/pushdown.rs`).
//!
//! Invariants: the depth is known at compile time (numbers, ranges of numbers, bind
//! parameters), non-negative and `min <= max`; a named graph is read when the query is
//! compiled (404/1924 when there is none) and its edge and vertex collections become read
//! collections of the query; an edge collection that is not an edge collection is 1218;
//! `uniqueVertices: "global"` needs breadth-first or weighted order (400/10, as ArangoDB);
//! options Quince does not know become warnings (1539), options it knows but does not need
//! (parallelism, maxProjections, ...) are accepted silently.

use quince_errors::{self as codes, ArangoError, Result};
use quince_ops::CollectionType;
use serde_json::{Map, Value};

use super::{parse_error, Compiler};
use crate::ast::{self, Expr, GraphDirection, GraphRef, PathKind};
use crate::graph::traverse::{Order, TraversalOptions, Uniqueness};
use crate::graph::{Direction, Weights};
use crate::plan::{EdgeCollection, GraphEdges, PathSearchNode, TraversalNode};
use crate::value::Warning;

/// Options ArangoDB accepts on graph operations that Quince reads but has no use for.
const IGNORED_OPTIONS: &[&str] = &[
    "parallelism",
    "maxProjections",
    "useCache",
    "produceVertices",
    "indexHint",
    "refactor",
    "lookahead",
    "neighbors",
    "expander",
];

fn direction(d: GraphDirection) -> Direction {
    match d {
        GraphDirection::Outbound => Direction::Outbound,
        GraphDirection::Inbound => Direction::Inbound,
        GraphDirection::Any => Direction::Any,
    }
}

fn bad(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(codes::BAD_PARAMETER, message.into())
}

impl Compiler<'_> {
    /// A traversal's plan node.
    pub(super) fn traversal(&mut self, t: &ast::Traversal) -> Result<TraversalNode> {
        let (min_depth, max_depth) = self.depth(t.depth.as_ref())?;
        let start = self.expr(&t.start)?;
        let options = self.graph_options(t.options.as_ref())?;
        let mut edges = self.graph_edges(&t.graph, t.direction, &options)?;
        let mut order = Order::Dfs;
        if options.get("bfs").is_some_and(crate::value::truthy) {
            order = Order::Bfs;
        }
        match options.get("order") {
            None | Some(Value::Null) => {}
            Some(Value::String(o)) if o == "dfs" => order = Order::Dfs,
            Some(Value::String(o)) if o == "bfs" => order = Order::Bfs,
            Some(Value::String(o)) if o == "weighted" => order = Order::Weighted,
            Some(other) => {
                return Err(bad(format!(
                    "invalid traversal 'order' option {other}: must be 'dfs', 'bfs' or 'weighted'"
                )))
            }
        }
        let unique_vertices = match options.get("uniqueVertices").and_then(Value::as_str) {
            None | Some("none") => Uniqueness::None,
            Some("path") => Uniqueness::Path,
            Some("global") => {
                if order == Order::Dfs {
                    return Err(bad(
                        "uniqueVertices: 'global' is only supported with order: 'bfs' or \
                         'weighted' (or bfs: true) due to unpredictable results",
                    ));
                }
                Uniqueness::Global
            }
            Some(other) => return Err(bad(format!("invalid uniqueVertices value '{other}'"))),
        };
        let unique_edges = match options.get("uniqueEdges").and_then(Value::as_str) {
            None | Some("path") | Some("global") => Uniqueness::Path,
            Some("none") => Uniqueness::None,
            Some(other) => return Err(bad(format!("invalid uniqueEdges value '{other}'"))),
        };
        let weights = (order == Order::Weighted).then(|| weights_of(&options));
        edges.restrict_vertices = string_list(options.get("vertexCollections"));
        let vertex = self.define(&t.vertex)?;
        let edge = t.edge.as_ref().map(|e| self.define(e)).transpose()?;
        let path = t.path.as_ref().map(|p| self.define(p)).transpose()?;
        let prune = match &t.prune {
            Some(p) => {
                let condition = self.expr(&p.condition)?;
                let slot = p.variable.as_ref().map(|v| self.define(v)).transpose()?;
                Some((slot, condition))
            }
            None => None,
        };
        Ok(TraversalNode {
            vertex: Some(vertex),
            edge,
            path,
            start,
            edges,
            options: TraversalOptions {
                min_depth,
                max_depth,
                order,
                unique_vertices,
                unique_edges,
                weights,
            },
            prune,
            conditions: Vec::new(),
            declared: [Some(vertex), edge, path],
            vertex_projection: None,
            options_json: Value::Object(options),
        })
    }

    /// A path search's plan node.
    pub(super) fn path_search(&mut self, s: &ast::PathSearch) -> Result<PathSearchNode> {
        let (min_depth, max_depth) = self.depth(s.depth.as_ref())?;
        let source = self.expr(&s.source)?;
        let target = self.expr(&s.target)?;
        let options = self.graph_options(s.options.as_ref())?;
        let edges = self.graph_edges(&s.graph, s.direction, &options)?;
        let weights = options
            .get("weightAttribute")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
            .map(|_| weights_of(&options));
        let slot = self.define(&s.variable)?;
        let edge = s.edge.as_ref().map(|e| self.define(e)).transpose()?;
        Ok(PathSearchNode {
            kind: s.kind,
            slot,
            edge,
            source,
            target,
            edges,
            min_depth: if s.kind == PathKind::KPaths {
                min_depth
            } else {
                0
            },
            max_depth: if s.kind == PathKind::KPaths {
                max_depth
            } else {
                0
            },
            weights,
            vertex_projection: None,
            options_json: Value::Object(options),
        })
    }

    /// `min`, `min..max` or nothing (1..1), known at compile time.
    fn depth(&mut self, depth: Option<&Expr>) -> Result<(u64, u64)> {
        let invalid = || parse_error(codes::QUERY_PARSE, "invalid traversal depth".into());
        let number = |v: Value| -> Result<u64> {
            match v.as_f64() {
                Some(f) if f >= 0.0 && f.is_finite() && f.fract() == 0.0 => Ok(f as u64),
                _ => Err(invalid()),
            }
        };
        let (min, max) = match depth {
            None => (1, 1),
            Some(Expr::Range(low, high)) => {
                let low = self.constant(low, "traversal depth")?;
                let high = self.constant(high, "traversal depth")?;
                (number(low)?, number(high)?)
            }
            Some(e) => match self.constant(e, "traversal depth")? {
                // A bind parameter may hold a range's array form.
                Value::Array(items) if !items.is_empty() => {
                    let low = items.first().cloned().unwrap_or(Value::Null);
                    let high = items.last().cloned().unwrap_or(Value::Null);
                    (number(low)?, number(high)?)
                }
                v => {
                    let n = number(v)?;
                    (n, n)
                }
            },
        };
        if min > max {
            return Err(invalid());
        }
        Ok((min, max))
    }

    /// The `OPTIONS` object (empty without one); unknown attributes become warnings.
    fn graph_options(&mut self, options: Option<&Expr>) -> Result<Map<String, Value>> {
        let Some(options) = options else {
            return Ok(Map::new());
        };
        let Value::Object(map) = self.constant(options, "OPTIONS")? else {
            return Err(parse_error(
                codes::QUERY_COMPILE_TIME_OPTIONS,
                "OPTIONS must be an object".into(),
            ));
        };
        const KNOWN: &[&str] = &[
            "order",
            "bfs",
            "uniqueVertices",
            "uniqueEdges",
            "edgeCollections",
            "vertexCollections",
            "weightAttribute",
            "defaultWeight",
        ];
        for name in map.keys() {
            if !KNOWN.contains(&name.as_str()) && !IGNORED_OPTIONS.contains(&name.as_str()) {
                self.warnings.push(Warning {
                    code: codes::QUERY_INVALID_OPTIONS_ATTRIBUTE.num,
                    message: format!("unknown OPTIONS attribute used: '{name}'"),
                });
            }
        }
        if let Some(w) = map.get("defaultWeight") {
            if w.as_f64().is_some_and(|w| w < 0.0) {
                return Err(ArangoError::new(codes::GRAPH_NEGATIVE_EDGE_WEIGHT));
            }
        }
        Ok(map)
    }

    /// The edge collections of `GRAPH name` or of a collection list, registered as read
    /// collections of the query (with a named graph's vertex collections).
    fn graph_edges(
        &mut self,
        graph: &GraphRef,
        default: GraphDirection,
        options: &Map<String, Value>,
    ) -> Result<GraphEdges> {
        let only = string_list(options.get("edgeCollections"));
        let mut collections = Vec::new();
        let mut graph_name = None;
        let mut vertex_collections = Vec::new();
        match graph {
            GraphRef::Named(name) => {
                let name = match self.expr(name)? {
                    super::CExpr::Const(Value::String(name)) => name,
                    _ => {
                        return Err(parse_error(
                            codes::QUERY_BIND_PARAMETER_TYPE,
                            "a graph's name must be a string".into(),
                        ))
                    }
                };
                let (definition, _) = quince_ops::graph::read_graph(&**self.database, &name)?;
                for def in &definition.edge_definitions {
                    if only.as_ref().is_some_and(|o| !o.contains(&def.collection)) {
                        continue;
                    }
                    let collection = self.edge_collection(&def.collection)?;
                    collections.push(EdgeCollection {
                        name: collection.name(),
                        collection,
                        direction: direction(default),
                    });
                }
                vertex_collections = definition.vertex_collections();
                for vertex in &vertex_collections {
                    // A vertex collection that does not exist has no vertices to read; one the
                    // caller may not read fails the query.
                    match self.collection(vertex) {
                        Err(e) if !e.is(codes::ARANGO_DATA_SOURCE_NOT_FOUND) => return Err(e),
                        _ => {}
                    }
                }
                graph_name = Some(name);
            }
            GraphRef::Collections(list) => {
                for (own, reference) in list {
                    let name = self.collection_name(reference)?;
                    if only.as_ref().is_some_and(|o| !o.contains(&name)) {
                        continue;
                    }
                    let collection = self.edge_collection(&name)?;
                    collections.push(EdgeCollection {
                        name: collection.name(),
                        collection,
                        direction: direction(own.unwrap_or(default)),
                    });
                }
            }
        }
        Ok(GraphEdges {
            graph: graph_name,
            collections,
            vertex_collections,
            restrict_vertices: None,
            direction: direction(default),
        })
    }

    fn edge_collection(
        &mut self,
        name: &str,
    ) -> Result<std::sync::Arc<dyn quince_ops::CollectionOps>> {
        let collection = self.collection(name)?;
        if collection.kind() != CollectionType::Edge {
            return Err(ArangoError::with_message(
                codes::ARANGO_COLLECTION_TYPE_INVALID,
                format!("collection type invalid: '{name}' is not an edge collection"),
            ));
        }
        Ok(collection)
    }
}

/// `weightAttribute` (one attribute name) and `defaultWeight` (default 1).
fn weights_of(options: &Map<String, Value>) -> Weights {
    Weights {
        attribute: options
            .get("weightAttribute")
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
            .map(|a| vec![a.to_owned()]),
        default: options
            .get("defaultWeight")
            .and_then(Value::as_f64)
            .unwrap_or(1.0),
    }
}

/// A string or an array of strings (other values: none).
fn string_list(value: Option<&Value>) -> Option<Vec<String>> {
    match value? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => Some(
            items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}
