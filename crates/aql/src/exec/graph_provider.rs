//! Where the executor's graph searches read edges and vertices: [`EdgeProvider`], the
//! [`Neighbors`] of `crate::graph` over the engines' edge indexes, and [`VertexReader`], which
//! reads (and keeps, for one search) the vertex documents a search's rows show (only the
//! plan's projection of them when it has one; a projection of `_key`, `_id` and `_rev` alone
//! only checks that the vertex exists, by its revision).
//!
//! What it is: one edge-index lookup per edge collection and direction for every vertex a
//! search expands (two for `ANY`: outbound edges first); as much of each hit's edge document
//! as the plan needs ([`EdgeData`]): nothing (the hit's values carry the other end, and the
//! step's edge is a shared `null`), the weight attribute projected from the stored bytes, or
//! the whole document parsed; [`whole_edge`], which reads the edges of the paths a search
//! emits when it ran without them; the `OPTIONS { vertexCollections }` restriction.
//!
//! What it is not: a cache across searches (every start vertex begins afresh), or the
//! algorithms.
//!
//! Invariants: the edges of a vertex come in the same order every time (collections in
//! plan order, then the edge index's key order), as depth-first results require; a step's
//! `edge_id` is the edge's `_id` whatever is read of the edge (uniqueness and Yen's edge
//! removal go by it); the query is checked (kill switch, deadline, memory: a search's edges
//! and vertices are allocated on the query's thread, so its account holds them) before every
//! expansion, every 1,024 edges of one vertex, and at every vertex read; reads go through the
//! collections of the plan, which is compiled against the transaction's view of the database
//! when the query runs in one, and vertex collections through the query's database, which
//! checks the caller may read them.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Arc;

use quince_errors::{self as codes, Result};
use quince_ops::{CollectionOps, EdgeDirection, IndexLookup, EDGE_INDEX_ID};
use serde_json::Value;

use super::context::{Context, Control};
use crate::functions::FunctionContext;
use crate::graph::{Direction, Neighbors, Step};
use crate::plan::GraphEdges;
use crate::value::Warning;

/// An edge index hit as the provider keeps it: the key, the other end when the hit carries
/// it, and the document when it does.
type EdgeHit = (String, Option<Arc<str>>, Option<Vec<u8>>);

/// What a search's provider and its rows share: the statistics.
#[derive(Default)]
pub struct SearchAccount {
    /// Edge-index hits (`scannedIndex`).
    pub scanned: Cell<u64>,
}

impl SearchAccount {
    /// Moves the statistics into the query's.
    pub fn finish(&self, ctx: &mut Context) {
        ctx.stats.scanned_index += self.scanned.replace(0);
    }
}

/// How many edges of one vertex are read between two checks of the query.
const CHECK_EVERY: usize = 1024;

/// How much of each edge document a search needs while it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum EdgeData {
    /// None: the edge index's hits give the other end, and every [`Step::edge`] is the shared
    /// `null` placeholder (the search reads edges only by `edge_id`).
    Nothing,
    /// The top-level attribute `name` only (the first of a weight attribute's path), projected
    /// from the stored bytes: [`Step::edge`] is `{name: value}` (or `{}`), enough for
    /// [`crate::graph::Weights::of`].
    Attribute(String),
    /// The whole document, parsed.
    Whole,
}

/// The edges of a graph operation, read through the edge indexes.
pub struct EdgeProvider<'a> {
    edges: &'a GraphEdges,
    control: Arc<Control>,
    account: &'a SearchAccount,
    data: EdgeData,
    null: Arc<Value>,
    /// Steps of the search so far ([`Neighbors::step`]).
    steps: u32,
}

impl<'a> EdgeProvider<'a> {
    /// A provider over `edges`, stopping when `control` says so, counting into `account`,
    /// reading whole edge documents.
    pub fn new(
        edges: &'a GraphEdges,
        control: Arc<Control>,
        account: &'a SearchAccount,
    ) -> EdgeProvider<'a> {
        EdgeProvider {
            edges,
            control,
            account,
            data: EdgeData::Whole,
            null: Arc::new(Value::Null),
            steps: 0,
        }
    }

    /// The provider reading only `data` of each edge.
    pub fn reading(mut self, data: EdgeData) -> EdgeProvider<'a> {
        self.data = data;
        self
    }

    fn allowed(&self, vertex: &str) -> bool {
        match &self.edges.restrict_vertices {
            None => true,
            Some(names) => {
                let collection = vertex.split('/').next().unwrap_or("");
                names.iter().any(|n| n == collection)
            }
        }
    }

    fn lookup(
        &self,
        collection: &Arc<dyn CollectionOps>,
        name: &str,
        direction: EdgeDirection,
        vertex: &str,
        out: &mut Vec<Step>,
    ) -> Result<()> {
        let mut hits: Vec<EdgeHit> = Vec::new();
        let lookup = IndexLookup::Edge {
            direction,
            vertex: vertex.to_owned(),
        };
        let mut failure = None;
        collection.index_lookup(EDGE_INDEX_ID, &lookup, &mut |hit| {
            if hits.len() % CHECK_EVERY == CHECK_EVERY - 1 {
                if let Err(e) = self.control.check() {
                    failure = Some(e);
                    return false;
                }
            }
            let other = match hit.values.get(1) {
                Some(Value::String(other)) => Some(Arc::from(other.as_str())),
                _ => None,
            };
            hits.push((hit.key.to_owned(), other, hit.document.map(<[u8]>::to_vec)));
            true
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        self.account
            .scanned
            .set(self.account.scanned.get() + hits.len() as u64);
        let other_end = match direction {
            EdgeDirection::Out => "_to",
            EdgeDirection::In => "_from",
        };
        for (n, (key, other, carried)) in hits.into_iter().enumerate() {
            // A vertex with very many edges is one expansion: check the query on the way.
            if n % CHECK_EVERY == CHECK_EVERY - 1 {
                self.control.check()?;
            }
            if let (EdgeData::Nothing, Some(other)) = (&self.data, &other) {
                if !self.allowed(other) {
                    continue;
                }
                out.push(Step {
                    edge_id: format!("{name}/{key}").into(),
                    vertex: Arc::clone(other),
                    edge: Arc::clone(&self.null),
                });
                continue;
            }
            let Some(document) = quince_ops::hit_document(&**collection, &key, carried)? else {
                continue;
            };
            let (edge, other): (Value, Arc<str>) = match (&self.data, other) {
                (EdgeData::Attribute(attribute), Some(other)) => (
                    super::project::project(&document, std::slice::from_ref(attribute))?,
                    other,
                ),
                _ => {
                    let edge: Value = super::parse(&document)?;
                    let Some(other) = edge.get(other_end).and_then(Value::as_str) else {
                        continue;
                    };
                    let other = Arc::from(other);
                    (edge, other)
                }
            };
            if !self.allowed(&other) {
                continue;
            }
            let edge_id: Arc<str> = match edge.get("_id").and_then(Value::as_str) {
                Some(id) => id.into(),
                None => format!("{name}/{key}").into(),
            };
            out.push(Step {
                edge_id,
                vertex: other,
                edge: Arc::new(edge),
            });
        }
        Ok(())
    }
}

/// The document `step` shows when its search read `data` of each edge over `edges`: the
/// step's edge when that is the whole document, else the edge read now ([`whole_edge`]).
pub fn edge_of(data: &EdgeData, edges: &GraphEdges, step: &Step) -> Result<Value> {
    match data {
        EdgeData::Whole => Ok(Value::clone(&step.edge)),
        _ => whole_edge(edges, &step.edge_id),
    }
}

/// The whole document of the edge `edge_id` (of one of the collections of `edges`), or `null`
/// when it is gone: what a search that ran without edge data shows for the edges it emits.
pub fn whole_edge(edges: &GraphEdges, edge_id: &str) -> Result<Value> {
    let (name, key) = edge_id.split_once('/').unwrap_or((edge_id, ""));
    let Some(edges) = edges.collections.iter().find(|c| c.name == name) else {
        return Ok(Value::Null);
    };
    match edges.collection.read(key) {
        Ok(d) => super::parse(&d.json),
        Err(e) if e.is(codes::ARANGO_DOCUMENT_NOT_FOUND) => Ok(Value::Null),
        Err(e) => Err(e),
    }
}

impl Neighbors for EdgeProvider<'_> {
    fn neighbors(&mut self, vertex: &str, backward: bool) -> Result<Vec<Step>> {
        self.control.check()?;
        let mut steps = Vec::new();
        for edges in &self.edges.collections {
            let direction = if backward {
                edges.direction.reverse()
            } else {
                edges.direction
            };
            let lookups: &[EdgeDirection] = match direction {
                Direction::Outbound => &[EdgeDirection::Out],
                Direction::Inbound => &[EdgeDirection::In],
                Direction::Any => &[EdgeDirection::Out, EdgeDirection::In],
            };
            for d in lookups {
                self.lookup(&edges.collection, &edges.name, *d, vertex, &mut steps)?;
            }
        }
        Ok(steps)
    }

    fn step(&mut self) -> Result<()> {
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(8) {
            self.control.check()
        } else {
            self.control.check_without_clock()
        }
    }
}

/// The vertex documents of one search, each read once.
#[derive(Default)]
pub struct VertexReader {
    documents: HashMap<Arc<str>, Value>,
    collections: HashMap<String, Option<Arc<dyn CollectionOps>>>,
    projection: Option<Vec<String>>,
}

impl VertexReader {
    /// A reader that builds only the attributes `projection` of each vertex (all when `None`).
    pub fn projecting(projection: Option<&Vec<String>>) -> VertexReader {
        VertexReader {
            projection: projection.cloned(),
            ..VertexReader::default()
        }
    }

    /// The document of vertex `id`, or `null` (with warning 1202) when there is none.
    pub fn read(&mut self, ctx: &mut Context, id: &Arc<str>) -> Result<Value> {
        if let Some(document) = self.documents.get(id) {
            return Ok(document.clone());
        }
        let (collection, key) = id.split_once('/').unwrap_or((id, ""));
        if !self.collections.contains_key(collection) {
            // A collection that does not exist has no vertices; one the caller may not read
            // fails the query (the database a query holds is guarded: `quince_ops::guard`).
            let handle = match ctx.database.collection(collection) {
                Ok(c) => Some(c),
                Err(e) if e.is(codes::ARANGO_DATA_SOURCE_NOT_FOUND) => None,
                Err(e) => return Err(e),
            };
            self.collections.insert(collection.to_owned(), handle);
        }
        let handle = self.collections.get(collection).and_then(Option::as_ref);
        let document = match handle {
            Some(c) if self.projection.as_ref().is_some_and(|n| only_system(n)) => {
                match c.read_rev(key) {
                    Ok(rev) => {
                        let names = self.projection.as_deref().unwrap_or_default();
                        let mut object = serde_json::Map::new();
                        for name in names {
                            let value = match name.as_str() {
                                "_key" => key.to_owned(),
                                "_id" => format!("{}/{key}", c.name()),
                                _ => rev.clone(),
                            };
                            object.insert(name.clone(), Value::String(value));
                        }
                        Some(Value::Object(object))
                    }
                    Err(e) if e.is(codes::ARANGO_DOCUMENT_NOT_FOUND) => None,
                    Err(e) if e.is(codes::BAD_PARAMETER) => None,
                    Err(e) => return Err(e),
                }
            }
            Some(c) => match c.read(key) {
                Ok(d) => Some(match &self.projection {
                    Some(names) => super::project::project(&d.json, names)?,
                    None => super::parse(&d.json)?,
                }),
                Err(e) if e.is(codes::ARANGO_DOCUMENT_NOT_FOUND) => None,
                Err(e) if e.is(codes::BAD_PARAMETER) => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        let document = match document {
            Some(d) => d,
            None => {
                ctx.warn(Warning {
                    code: codes::ARANGO_DOCUMENT_NOT_FOUND.num,
                    message: format!("vertex '{id}' not found"),
                });
                Value::Null
            }
        };
        ctx.tick()?;
        self.documents.insert(Arc::clone(id), document.clone());
        Ok(document)
    }
}

/// True when a projection reads only `_key`, `_id` and `_rev`, which a vertex's key, its
/// collection and its revision give without reading the document.
fn only_system(names: &[String]) -> bool {
    names
        .iter()
        .all(|n| matches!(n.as_str(), "_key" | "_id" | "_rev"))
}

/// The `_id` a graph operation starts (or ends) at: an `_id` string or a document's `_id`;
/// `None` (with ArangoDB's warning) for anything else.
pub fn vertex_id(ctx: &mut Context, value: &Value, what: &str) -> Option<Arc<str>> {
    let id = match value {
        Value::String(s) => Some(s.as_str()),
        Value::Object(o) => o.get("_id").and_then(Value::as_str),
        _ => None,
    };
    match id {
        Some(id) if id.contains('/') => Some(id.into()),
        _ => {
            ctx.warn(Warning {
                code: codes::BAD_PARAMETER.num,
                message: format!(
                    "Invalid input for {what}: Only id strings or objects with _id are allowed"
                ),
            });
            None
        }
    }
}
