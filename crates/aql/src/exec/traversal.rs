//! Running the graph operations: a traversal's rows (`v`, `e`, `p` per path reached, with
//! `PRUNE` and the pushed-down conditions deciding what is expanded) and the path searches'
//! rows.
//!
//! What it is: [`Executor::traverse_node`] and [`Executor::path_search_node`], which run the
//! algorithms of `crate::graph` over an [`EdgeProvider`] and push a row to the next node from
//! inside the algorithm's callback, so a `LIMIT` after a traversal stops it.
//!
//! What it is not: the algorithms, or the choice of pushed conditions.
//!
//! Invariants: a path is emitted when `min <= depth` and every pushed condition holds (an
//! element a condition reads that the path does not have is `null`, exactly as the `FILTER`
//! it came from would see it); a path is expanded unless `PRUNE` holds or a pushed condition
//! fails on an element the path has (every longer path shares that element, so none of them
//! could pass); `p.weights` is present only for weighted traversals; vertex documents are read
//! once per search (a missing one is `null` with warning 1202); a search reads whole edge
//! documents only when `e`, `p`, `PRUNE` or a pushed condition can see them, the weight
//! attribute alone when only weights need them, and nothing otherwise; a path search reads the
//! whole edges of the paths it emits only.

use std::sync::Arc;

use quince_errors::Result;
use serde_json::{json, Map, Value};

use super::graph_provider::{
    edge_of, vertex_id, EdgeData, EdgeProvider, SearchAccount, VertexReader,
};
use super::{Env, Executor, Flow, NodeState, Row, Sink};
use crate::ast::PathKind;
use crate::graph::traverse::{self, Order};
use crate::graph::{paths, Path, Weights};
use crate::plan::{PathSearchNode, PathTarget, Pipeline, TraversalNode};
use crate::value::truthy;

impl Executor<'_> {
    /// A traversal from the start vertex of `row`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn traverse_node(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        t: &TraversalNode,
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        let start = self.eval(&t.start, Env::of(row))?.into_owned();
        let Some(start) = vertex_id(&mut self.ctx, &start, "traversal") else {
            return Ok(Flow::Go);
        };
        let account = SearchAccount::default();
        let mut vertices = VertexReader::projecting(t.vertex_projection.as_ref());
        let [vertex_slot, edge_slot, path_slot] = t.declared;
        let mut prune_reads = [false; 3];
        if let Some((_, condition)) = &t.prune {
            condition.visit_slots(&mut |s| {
                for (k, declared) in t.declared.iter().enumerate() {
                    prune_reads[k] |= *declared == Some(s);
                }
            });
        }
        let need_vertex = t.vertex.is_some() || prune_reads[0];
        let need_edge = t.edge.is_some() || prune_reads[1];
        let need_path = t.path.is_some() || prune_reads[2];
        let weighted = t.options.order == Order::Weighted;
        let edge_conditions = t
            .conditions
            .iter()
            .any(|c| matches!(c.target, PathTarget::Edge(_) | PathTarget::AllEdges));
        let data = if need_edge || need_path || edge_conditions {
            EdgeData::Whole
        } else {
            weight_data(t.options.weights.as_ref().filter(|_| weighted))
        };
        let mut provider =
            EdgeProvider::new(&t.edges, Arc::clone(&self.ctx.control), &account).reading(data);
        let mut flow = Flow::Go;
        let result = traverse::traverse(&mut provider, &start, &t.options, &mut |path| {
            let depth = path.depth() as u64;
            // The pushed conditions: whether the path may be emitted and expanded.
            let (emit, expand) = self.path_conditions(t, path, &mut vertices, row)?;
            if !emit && !expand {
                self.ctx.stats.filtered += 1;
                return Ok(traverse::Flow {
                    expand: false,
                    stop: false,
                });
            }
            if need_vertex {
                let v = vertices.read(&mut self.ctx, path.end())?;
                set(row, vertex_slot, v);
            }
            if need_edge {
                let e = path
                    .steps
                    .last()
                    .map_or(Value::Null, |s| Value::clone(&s.edge));
                set(row, edge_slot, e);
            }
            if need_path {
                let p = self.path_value(path, &mut vertices, t, weighted)?;
                set(row, path_slot, p);
            }
            let mut expand = expand;
            if let Some((slot, condition)) = &t.prune {
                let value = self.eval(condition, Env::of(row))?.into_owned();
                if truthy(&value) {
                    expand = false;
                }
                if let Some(slot) = slot {
                    row[*slot] = value;
                }
            }
            if emit && depth >= t.options.min_depth {
                if self.push(pipeline, states, i + 1, row, sink)? == Flow::Stop {
                    flow = Flow::Stop;
                    return Ok(traverse::Flow {
                        expand: false,
                        stop: true,
                    });
                }
            } else if depth >= t.options.min_depth {
                self.ctx.stats.filtered += 1;
            }
            Ok(traverse::Flow {
                expand,
                stop: false,
            })
        });
        account.finish(&mut self.ctx);
        result?;
        Ok(flow)
    }

    /// Whether `path` passes the pushed conditions (emit) and whether its extensions still
    /// may (expand).
    fn path_conditions(
        &mut self,
        t: &TraversalNode,
        path: &Path,
        vertices: &mut VertexReader,
        row: &mut Row,
    ) -> Result<(bool, bool)> {
        let mut emit = true;
        let mut expand = true;
        let depth = path.depth();
        for c in &t.conditions {
            // The element the condition reads, and whether this depth is where it appears.
            let (element, new) = match c.target {
                PathTarget::Vertex(n) => {
                    let element = match path.vertices().nth(n) {
                        Some(id) => Some(vertices.read(&mut self.ctx, id)?),
                        None => None,
                    };
                    (element, depth == n)
                }
                PathTarget::Edge(n) => (
                    path.steps.get(n).map(|s| Value::clone(&s.edge)),
                    depth == n + 1,
                ),
                PathTarget::AllVertices => (Some(vertices.read(&mut self.ctx, path.end())?), true),
                PathTarget::AllEdges => match path.steps.last() {
                    Some(s) => (Some(Value::clone(&s.edge)), true),
                    None => continue,
                },
            };
            let present = element.is_some();
            if !present && matches!(c.target, PathTarget::Vertex(_) | PathTarget::Edge(_)) {
                // A path too short for the element: the filter sees null.
                row[c.slot] = Value::Null;
                if !truthy(self.eval(&c.condition, Env::of(row))?.as_ref()) {
                    emit = false;
                }
                continue;
            }
            if !new && !matches!(c.target, PathTarget::AllVertices | PathTarget::AllEdges) {
                // Checked when the path reached that depth (its prefix passed).
                continue;
            }
            row[c.slot] = element.unwrap_or(Value::Null);
            if !truthy(self.eval(&c.condition, Env::of(row))?.as_ref()) {
                return Ok((false, false));
            }
        }
        if !emit {
            expand = true;
        }
        Ok((emit, expand))
    }

    /// `p`: `{edges, vertices}` (and `weights` in weighted order).
    fn path_value(
        &mut self,
        path: &Path,
        vertices: &mut VertexReader,
        t: &TraversalNode,
        weighted: bool,
    ) -> Result<Value> {
        let mut documents = Vec::with_capacity(path.depth() + 1);
        for id in path.vertices() {
            documents.push(vertices.read(&mut self.ctx, id)?);
        }
        let edges: Vec<Value> = path.steps.iter().map(|s| Value::clone(&s.edge)).collect();
        let mut p = Map::new();
        p.insert("edges".into(), Value::Array(edges));
        p.insert("vertices".into(), Value::Array(documents));
        if weighted {
            let mut sum = 0.0;
            let mut weights = vec![json!(0)];
            let w = t.options.weights.clone().unwrap_or_default();
            for step in &path.steps {
                sum += w.of(&step.edge)?;
                weights.push(number(sum));
            }
            p.insert("weights".into(), Value::Array(weights));
        }
        Ok(Value::Object(p))
    }

    /// A path search between the source and target of `row`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn path_search_node(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        s: &PathSearchNode,
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        let what = s.kind.keyword();
        let source = self.eval(&s.source, Env::of(row))?.into_owned();
        let target = self.eval(&s.target, Env::of(row))?.into_owned();
        let Some(source) = vertex_id(&mut self.ctx, &source, what) else {
            return Ok(Flow::Go);
        };
        let Some(target) = vertex_id(&mut self.ctx, &target, what) else {
            return Ok(Flow::Go);
        };
        let account = SearchAccount::default();
        let weights = s.weights.as_ref();
        // The searches read only what the weights need; the edges of the paths emitted are
        // read whole afterwards.
        let data = weight_data(weights);
        let mut provider = EdgeProvider::new(&s.edges, Arc::clone(&self.ctx.control), &account)
            .reading(data.clone());
        let mut vertices = VertexReader::projecting(s.vertex_projection.as_ref());
        let mut flow = Flow::Go;
        let result = match s.kind {
            PathKind::Shortest => {
                let found = paths::shortest_path(&mut provider, &source, &target, weights);
                match found {
                    Ok(Some(path)) => {
                        let mut steps = std::iter::once(None).chain(path.steps.iter().map(Some));
                        let mut outcome = Ok(());
                        for (vertex, step) in path.vertices().zip(&mut steps) {
                            let v = match vertices.read(&mut self.ctx, vertex) {
                                Ok(v) => v,
                                Err(e) => {
                                    outcome = Err(e);
                                    break;
                                }
                            };
                            row[s.slot] = v;
                            if let Some(edge) = s.edge {
                                row[edge] = match step {
                                    None => Value::Null,
                                    Some(st) => match edge_of(&data, &s.edges, st) {
                                        Ok(e) => e,
                                        Err(e) => {
                                            outcome = Err(e);
                                            break;
                                        }
                                    },
                                };
                            }
                            match self.push(pipeline, states, i + 1, row, sink) {
                                Ok(Flow::Go) => {}
                                Ok(Flow::Stop) => {
                                    flow = Flow::Stop;
                                    break;
                                }
                                Err(e) => {
                                    outcome = Err(e);
                                    break;
                                }
                            }
                        }
                        outcome
                    }
                    Ok(None) => Ok(()),
                    Err(e) => Err(e),
                }
            }
            kind => {
                let mut visit = |path: Path| -> Result<bool> {
                    let mut documents = Vec::with_capacity(path.depth() + 1);
                    for id in path.vertices() {
                        documents.push(vertices.read(&mut self.ctx, id)?);
                    }
                    let edges = path
                        .steps
                        .iter()
                        .map(|st| edge_of(&data, &s.edges, st))
                        .collect::<Result<Vec<Value>>>()?;
                    let mut p = Map::new();
                    p.insert("edges".into(), Value::Array(edges));
                    p.insert("vertices".into(), Value::Array(documents));
                    if kind == PathKind::KShortest {
                        p.insert("weight".into(), number(path.weight));
                    }
                    row[s.slot] = Value::Object(p);
                    if self.push(pipeline, states, i + 1, row, sink)? == Flow::Stop {
                        flow = Flow::Stop;
                        return Ok(false);
                    }
                    Ok(true)
                };
                match kind {
                    PathKind::KShortest => paths::k_shortest_paths(
                        &mut provider,
                        &source,
                        &target,
                        weights,
                        &mut visit,
                    ),
                    PathKind::KPaths => paths::k_paths(
                        &mut provider,
                        &source,
                        &target,
                        s.min_depth,
                        s.max_depth,
                        &mut visit,
                    ),
                    _ => paths::all_shortest_paths(
                        &mut provider,
                        &source,
                        &target,
                        weights,
                        &mut visit,
                    ),
                }
            }
        };
        account.finish(&mut self.ctx);
        result?;
        Ok(flow)
    }
}

/// What a search must read of each edge for `weights` alone: the weight attribute's first
/// name, or nothing (unweighted, or every edge the default weight).
fn weight_data(weights: Option<&Weights>) -> EdgeData {
    match weights.and_then(|w| w.attribute.as_ref()?.first()) {
        Some(name) => EdgeData::Attribute(name.clone()),
        None => EdgeData::Nothing,
    }
}

/// A weight as JSON: an integer when it is one (as ArangoDB prints whole doubles).
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// Sets `slot` of `row` when there is one.
fn set(row: &mut Row, slot: Option<usize>, value: Value) {
    if let Some(slot) = slot {
        row[slot] = value;
    }
}
