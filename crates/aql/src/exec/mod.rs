//! The executor: runs a plan's pipelines row by row and hands each returned value to a sink.
//!
//! What it is: a push executor. A row enters a pipeline's first node; each node passes rows
//! it produces to the next one (`FOR` once per element, `FILTER` when true, ...) and the
//! `RETURN` node hands values to the sink. The nodes that need every row first (`SORT`,
//! `COLLECT`, `WINDOW`) keep the rows they receive; when their input is exhausted they pass
//! their results on, in pipeline order. Nothing is materialised that a node does not need, so
//! a query streams: with a sink that blocks (a stream cursor's channel) the first values
//! leave before the scan has read the rest.
//!
//! What it is not: the choice of plan (`crate::plan`), or the cursor (the api crate owns
//! batches, ids and expiry).
//!
//! Invariants: a `LIMIT` that has passed its count stops every loop before it (the stop
//! travels back to the start of its segment); the sink returning false stops the whole
//! query; every element a loop hands on (a document, an index hit, an array element, a number
//! of a range), every row a breaker takes or gives out, every result of a subquery and every
//! element of an expansion is a step ([`Context::tick`]), so the kill switch and the memory
//! account are checked at every step and the deadline at least every 8; a `FOR` over a range
//! (`FOR i IN a..b`) counts through it without building it, so only its steps bound it.

mod collect;
pub mod context;
mod eval;
pub mod graph_provider;
mod modify;
mod project;
mod traversal;

use std::collections::BTreeSet;

use quince_errors::{ArangoError, Result};
use serde_json::Value;

use std::ops::Bound;

use quince_ops::{IndexLookup, ReadRequest, ScanCounts, ScanHints};

use crate::plan::aql_text::Param;
use crate::plan::{Access, CExpr, ForCollection, IndexAccess, Node, Pipeline, Plan};
use crate::value::{self, truthy};

pub use context::{Context, Control, Stats};
pub use eval::{fold, Env};

use collect::{CollectState, OrdValue};

/// A row: one value per slot of the query.
pub type Row = Vec<Value>;

/// Where returned values go: false stops the query.
pub type Sink<'s> = dyn FnMut(&mut Context, Value) -> Result<bool> + 's;

/// Whether the rows before a node should go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// Runs plans.
pub struct Executor<'p> {
    /// The plan's variable names, for `COLLECT INTO`.
    plan: &'p Plan,
    /// The query's state.
    pub ctx: Context,
    cancelled: bool,
}

/// The per-run state of a pipeline's nodes.
enum NodeState {
    Stateless,
    Limit {
        skipped: u64,
        passed: u64,
        seen: u64,
    },
    Sort {
        rows: Vec<(Vec<Value>, Row)>,
    },
    Collect(Box<CollectState>),
    Window {
        rows: Vec<Row>,
    },
    Distinct(BTreeSet<OrdValue>),
}

impl<'p> Executor<'p> {
    /// An executor of `plan` with `ctx`.
    pub fn new(plan: &'p Plan, ctx: Context) -> Executor<'p> {
        Executor {
            plan,
            ctx,
            cancelled: false,
        }
    }

    /// Runs the plan's top-level pipeline.
    pub fn run_plan(&mut self, sink: &mut Sink<'_>) -> Result<()> {
        let row = vec![Value::Null; self.plan.slots.len()];
        let plan = self.plan;
        for warning in &plan.warnings {
            crate::functions::FunctionContext::warn(&mut self.ctx, warning.clone());
        }
        self.run(&plan.root, row, sink)?;
        let full_count = plan.root.nodes.iter().any(|n| {
            matches!(
                n,
                Node::Limit {
                    full_count: true,
                    ..
                }
            )
        });
        if !full_count {
            self.ctx.stats.full_count = None;
        }
        Ok(())
    }

    /// Runs `pipeline` on `row`.
    pub fn run(&mut self, pipeline: &Pipeline, mut row: Row, sink: &mut Sink<'_>) -> Result<()> {
        let mut states: Vec<NodeState> = pipeline
            .nodes
            .iter()
            .map(|node| match node {
                Node::Limit { .. } => NodeState::Limit {
                    skipped: 0,
                    passed: 0,
                    seen: 0,
                },
                Node::Sort(_) => NodeState::Sort { rows: Vec::new() },
                Node::Collect(c) => NodeState::Collect(Box::new(CollectState::new(c, &row))),
                Node::Window(_) => NodeState::Window { rows: Vec::new() },
                Node::Return { distinct: true, .. } => NodeState::Distinct(BTreeSet::new()),
                _ => NodeState::Stateless,
            })
            .collect();
        self.push(pipeline, &mut states, 0, &mut row, sink)?;
        for i in 0..pipeline.nodes.len() {
            if self.cancelled {
                return Ok(());
            }
            let rows = match (&pipeline.nodes[i], &mut states[i]) {
                (Node::Sort(keys), NodeState::Sort { rows }) => {
                    let mut rows = std::mem::take(rows);
                    rows.sort_by(|(a, _), (b, _)| {
                        for ((x, y), (_, ascending)) in a.iter().zip(b).zip(keys) {
                            let order = quince_model::order::compare_values(x, y);
                            if order != std::cmp::Ordering::Equal {
                                return if *ascending { order } else { order.reverse() };
                            }
                        }
                        std::cmp::Ordering::Equal
                    });
                    rows.into_iter().map(|(_, row)| row).collect::<Vec<_>>()
                }
                (Node::Collect(c), NodeState::Collect(state)) => {
                    let state = std::mem::replace(state, Box::new(CollectState::new(c, &row)));
                    state.finish(self, c)?
                }
                (Node::Window(w), NodeState::Window { rows }) => {
                    let rows = std::mem::take(rows);
                    collect::window(self, w, rows)?
                }
                _ => continue,
            };
            for mut row in rows {
                self.ctx.tick()?;
                if self.push(pipeline, &mut states, i + 1, &mut row, sink)? == Flow::Stop {
                    break;
                }
            }
        }
        for (node, state) in pipeline.nodes.iter().zip(&states) {
            if let (
                Node::Limit {
                    full_count: true, ..
                },
                NodeState::Limit { seen, .. },
            ) = (node, state)
            {
                self.ctx.stats.full_count = Some(*seen);
            }
        }
        Ok(())
    }

    /// Hands `row` to node `i` of `pipeline`.
    fn push(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        let Some(node) = pipeline.nodes.get(i) else {
            return Ok(Flow::Go);
        };
        match node {
            Node::ForCollection(f) => self.scan(pipeline, states, i, f, row, sink),
            Node::ForValues {
                slot,
                source: CExpr::Range(low, high),
            } => {
                let low = value::to_number(self.eval(low, Env::of(row))?.as_ref()).trunc();
                let high = value::to_number(self.eval(high, Env::of(row))?.as_ref()).trunc();
                let step = if high >= low { 1.0 } else { -1.0 };
                let mut left = (high - low).abs() + 1.0;
                let mut x = low;
                while left >= 1.0 {
                    self.ctx.tick()?;
                    row[*slot] = value::number(x);
                    if self.push(pipeline, states, i + 1, row, sink)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                    x += step;
                    left -= 1.0;
                }
                Ok(Flow::Go)
            }
            Node::ForValues { slot, source } => {
                let items = match self.eval(source, Env::of(row))?.into_owned() {
                    Value::Array(items) => items,
                    _ => {
                        return Err(ArangoError::with_message(
                            quince_errors::QUERY_ARRAY_EXPECTED,
                            "AQL: collection or array expected as operand to FOR loop; you \
                             provided a value of another type (while executing)"
                                .to_owned(),
                        ))
                    }
                };
                for item in items {
                    self.ctx.tick()?;
                    row[*slot] = item;
                    if self.push(pipeline, states, i + 1, row, sink)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                }
                Ok(Flow::Go)
            }
            Node::Let { slot, value } => {
                row[*slot] = self.eval(value, Env::of(row))?.into_owned();
                self.push(pipeline, states, i + 1, row, sink)
            }
            Node::Filter(condition) => {
                if truthy(self.eval(condition, Env::of(row))?.as_ref()) {
                    self.push(pipeline, states, i + 1, row, sink)
                } else {
                    self.ctx.stats.filtered += 1;
                    Ok(Flow::Go)
                }
            }
            Node::Limit {
                offset,
                count,
                full_count,
            } => {
                let NodeState::Limit {
                    skipped,
                    passed,
                    seen,
                } = &mut states[i]
                else {
                    unreachable!("a limit's state")
                };
                *seen += 1;
                if *skipped < *offset {
                    *skipped += 1;
                    return Ok(Flow::Go);
                }
                if count.is_some_and(|c| *passed >= c) {
                    return Ok(if *full_count { Flow::Go } else { Flow::Stop });
                }
                *passed += 1;
                let last = count.is_some_and(|c| *passed >= c) && !*full_count;
                let flow = self.push(pipeline, states, i + 1, row, sink)?;
                Ok(if last { Flow::Stop } else { flow })
            }
            Node::Sort(keys) => {
                self.ctx.tick()?;
                let mut values = Vec::with_capacity(keys.len());
                for (key, _) in keys {
                    values.push(self.eval(key, Env::of(row))?.into_owned());
                }
                if let NodeState::Sort { rows } = &mut states[i] {
                    rows.push((values, row.clone()));
                }
                Ok(Flow::Go)
            }
            Node::Collect(c) => {
                let NodeState::Collect(state) = &mut states[i] else {
                    unreachable!("a collect's state")
                };
                let mut state = std::mem::replace(state, Box::new(CollectState::empty()));
                let result = state.add(self, c, row);
                states[i] = NodeState::Collect(state);
                result.map(|()| Flow::Go)
            }
            Node::Window(_) => {
                self.ctx.tick()?;
                if let NodeState::Window { rows } = &mut states[i] {
                    rows.push(row.clone());
                }
                Ok(Flow::Go)
            }
            Node::Return { value, distinct } => {
                let value = self.eval(value, Env::of(row))?.into_owned();
                if *distinct {
                    let NodeState::Distinct(seen) = &mut states[i] else {
                        unreachable!("a distinct return's state")
                    };
                    self.ctx.tick()?;
                    if !seen.insert(OrdValue(value.clone())) {
                        return Ok(Flow::Go);
                    }
                }
                if sink(&mut self.ctx, value)? {
                    Ok(Flow::Go)
                } else {
                    self.cancelled = true;
                    Ok(Flow::Stop)
                }
            }
            Node::Modify(m) => {
                self.modify(m, row)?;
                self.push(pipeline, states, i + 1, row, sink)
            }
            Node::Traversal(t) => self.traverse_node(pipeline, states, i, t, row, sink),
            Node::PathSearch(s) => self.path_search_node(pipeline, states, i, s, row, sink),
        }
    }

    /// A `FOR` over a collection.
    fn scan(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        f: &ForCollection,
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        match &f.access {
            Access::Keys(keys) => {
                let keys = match self.eval(keys, Env::of(row))?.into_owned() {
                    Value::String(key) => vec![Value::String(key)],
                    Value::Array(keys) => keys,
                    _ => Vec::new(),
                };
                // Read together (a coordinator asks each shard once); a string that is no
                // key (empty, or with a `/`, which a selector would take for a handle) finds
                // nothing.
                let selectors: Vec<Value> = keys
                    .into_iter()
                    .filter(|k| matches!(k, Value::String(k) if !k.is_empty() && !k.contains('/')))
                    .collect();
                let request = ReadRequest {
                    selectors,
                    ignore_revs: true,
                };
                let mut failure = None;
                let mut flow = Flow::Go;
                f.collection.read_many(&request, &mut |result| {
                    let document = match result {
                        Ok(document) => document,
                        Err(e) if e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => return true,
                        Err(e) => {
                            failure = Some(e);
                            return false;
                        }
                    };
                    self.ctx.stats.scanned_index += 1;
                    let result = self.ctx.tick().and_then(|()| {
                        self.visit(pipeline, states, i, f, row, Doc::Json(&document.json), sink)
                    });
                    go_on(result, &mut flow, &mut failure)
                })?;
                match failure {
                    Some(e) => Err(e),
                    None => Ok(flow),
                }
            }
            Access::Index(access) => self.index_scan(pipeline, states, i, f, access, row, sink),
            Access::Full if f.snapshot => {
                let hints = self.scan_hints(f, row)?;
                let mut documents = Vec::new();
                let mut failure = None;
                let counts = f.collection.scan_hinted(&hints, &mut |document| {
                    if let Err(e) = self.ctx.tick() {
                        failure = Some(e);
                        return false;
                    }
                    documents.push(document.json);
                    true
                })?;
                if let Some(e) = failure {
                    return Err(e);
                }
                self.count_remote(counts, documents.len() as u64);
                let mut flow = Flow::Go;
                for json in documents {
                    self.ctx.stats.scanned_full += 1;
                    self.ctx.tick()?;
                    if self.visit(pipeline, states, i, f, row, Doc::Json(&json), sink)?
                        == Flow::Stop
                    {
                        flow = Flow::Stop;
                        break;
                    }
                }
                Ok(flow)
            }
            Access::Full => {
                let hints = self.scan_hints(f, row)?;
                let mut failure = None;
                let mut flow = Flow::Go;
                let mut n = 0u64;
                let counts = f.collection.scan_hinted(&hints, &mut |document| {
                    n += 1;
                    if let Err(e) = self.ctx.tick() {
                        failure = Some(e);
                        return false;
                    }
                    self.ctx.stats.scanned_full += 1;
                    let result =
                        self.visit(pipeline, states, i, f, row, Doc::Json(&document.json), sink);
                    go_on(result, &mut flow, &mut failure)
                })?;
                self.count_remote(counts, n);
                match failure {
                    Some(e) => Err(e),
                    None => Ok(flow),
                }
            }
        }
    }

    /// The hints of a full scan (`distribute.rs`): its remote filter's parameters read from
    /// `row`.
    fn scan_hints(&self, f: &ForCollection, row: &Row) -> Result<ScanHints> {
        let Some(remote) = &f.remote else {
            return Ok(ScanHints::default());
        };
        let bind_vars = remote
            .params
            .iter()
            .map(|(name, param)| {
                let value = match param {
                    Param::Const(value) => value.clone(),
                    Param::Slot(slot) => row[*slot].clone(),
                };
                (name.clone(), value)
            })
            .collect();
        Ok(ScanHints {
            filter: remote.filter.clone(),
            sort: remote.sort.clone(),
            bind_vars,
            attributes: remote.attributes.clone(),
            limit: remote.limit,
        })
    }

    /// Adds the work a scan's engine did where the documents are to the statistics: the
    /// documents it read beyond the `handed` ones counted already, and those it filtered.
    fn count_remote(&mut self, counts: Option<ScanCounts>, handed: u64) {
        if let Some(counts) = counts {
            self.ctx.stats.scanned_full += counts.scanned.saturating_sub(handed);
            self.ctx.stats.filtered += counts.filtered;
        }
    }

    /// A `FOR` through a secondary index: one lookup (or one per `IN` candidate); through the
    /// edge index, an edge lookup per vertex.
    #[allow(clippy::too_many_arguments)]
    fn index_scan(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        f: &ForCollection,
        access: &IndexAccess,
        row: &mut Row,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        let mut prefix = Vec::with_capacity(access.prefix.len());
        for value in &access.prefix {
            prefix.push(self.eval(value, Env::of(row))?.into_owned());
        }
        let bound = |executor: &mut Self,
                     b: &Option<(CExpr, bool)>,
                     row: &Row|
         -> Result<Bound<Value>> {
            Ok(match b {
                None => Bound::Unbounded,
                Some((e, true)) => Bound::Included(executor.eval(e, Env::of(row))?.into_owned()),
                Some((e, false)) => Bound::Excluded(executor.eval(e, Env::of(row))?.into_owned()),
            })
        };
        let low = bound(self, &access.low, row)?;
        let high = bound(self, &access.high, row)?;
        let lookups: Vec<Vec<Value>> = if access.in_last {
            let Some(Value::Array(candidates)) = prefix.pop() else {
                return Ok(Flow::Go);
            };
            let mut candidates: Vec<OrdValue> = candidates.into_iter().map(OrdValue).collect();
            candidates.sort();
            candidates.dedup();
            candidates
                .into_iter()
                .map(|c| {
                    let mut p = prefix.clone();
                    p.push(c.0);
                    p
                })
                .collect()
        } else {
            vec![prefix]
        };
        let edge = crate::plan::edge_index::direction_of(access);
        for prefix in lookups {
            let lookup = match (edge, prefix.first()) {
                (Some(direction), Some(Value::String(vertex))) => IndexLookup::Edge {
                    direction,
                    vertex: vertex.clone(),
                },
                // `_from` and `_to` are strings: nothing else finds an edge.
                (Some(_), _) => continue,
                (None, _) => IndexLookup::Sorted {
                    prefix,
                    low: low.clone(),
                    high: high.clone(),
                    reverse: access.reverse,
                },
            };
            let mut failure = None;
            let mut flow = Flow::Go;
            let documents = access.projection.is_none();
            f.collection
                .index_lookup_with(access.index.id, &lookup, documents, &mut |hit| {
                    self.ctx.stats.scanned_index += 1;
                    if let Err(e) = self.ctx.tick() {
                        failure = Some(e);
                        return false;
                    }
                    let result = match (&access.projection, hit.document) {
                        (Some(names), _) => {
                            let built = crate::plan::indexes::project(
                                &access.index.fields,
                                names,
                                hit.key,
                                hit.values,
                            );
                            self.visit(pipeline, states, i, f, row, Doc::Built(built), sink)
                        }
                        (None, Some(json)) => {
                            self.visit(pipeline, states, i, f, row, Doc::Json(json), sink)
                        }
                        (None, None) => match f.collection.read(hit.key) {
                            Ok(d) => {
                                self.visit(pipeline, states, i, f, row, Doc::Json(&d.json), sink)
                            }
                            Err(e) if e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => {
                                Ok(Flow::Go)
                            }
                            Err(e) => Err(e),
                        },
                    };
                    go_on(result, &mut flow, &mut failure)
                })?;
            if let Some(e) = failure {
                return Err(e);
            }
            if flow == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// One document of a scan: the pushed filters, then the next node.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &mut self,
        pipeline: &Pipeline,
        states: &mut [NodeState],
        i: usize,
        f: &ForCollection,
        row: &mut Row,
        document: Doc<'_>,
        sink: &mut Sink<'_>,
    ) -> Result<Flow> {
        let json = match document {
            Doc::Built(value) => {
                row[f.slot] = value;
                None
            }
            Doc::Json(json) => {
                // Late materialization: the filters see only the attributes they read; the
                // document is built for the rows that pass.
                row[f.slot] = match &f.filter_projection {
                    Some(names) => project::project(json, names)?,
                    None => read_document(f, json)?,
                };
                f.filter_projection.as_ref().map(|_| json)
            }
        };
        for condition in &f.filters {
            if !truthy(self.eval(condition, Env::of(row))?.as_ref()) {
                self.ctx.stats.filtered += 1;
                return Ok(Flow::Go);
            }
        }
        if let Some(json) = json {
            row[f.slot] = read_document(f, json)?;
        }
        self.push(pipeline, states, i + 1, row, sink)
    }
}

impl<'a> Env<'a> {
    /// The environment of a row outside any expansion.
    pub fn of(row: &'a [Value]) -> Env<'a> {
        Env { row, current: None }
    }
}

/// Whether a scan goes on after a document's rows: `result` is the next nodes' answer; a stop
/// or an error (kept in `failure`) ends it.
fn go_on(result: Result<Flow>, flow: &mut Flow, failure: &mut Option<ArangoError>) -> bool {
    match result {
        Ok(Flow::Go) => true,
        Ok(Flow::Stop) => {
            *flow = Flow::Stop;
            false
        }
        Err(e) => {
            *failure = Some(e);
            false
        }
    }
}

/// A document as a scan hands it over: its stored JSON, or a value built already (from an
/// index entry).
enum Doc<'j> {
    Json(&'j [u8]),
    Built(Value),
}

/// A document of loop `f` as its variable needs it: whole, or only the projected attributes.
fn read_document(f: &ForCollection, json: &[u8]) -> Result<Value> {
    match &f.projection {
        Some(names) => project::project(json, names),
        None => parse(json),
    }
}

/// A stored document's JSON as a value.
fn parse(json: &[u8]) -> Result<Value> {
    serde_json::from_slice(json).map_err(|e| {
        ArangoError::with_message(
            quince_errors::INTERNAL,
            format!("a stored document is not valid JSON: {e}"),
        )
    })
}

impl Plan {
    /// A plan with no slots and no nodes (for folding).
    pub fn empty() -> Plan {
        Plan {
            root: Pipeline { nodes: Vec::new() },
            slots: Vec::new(),
            collections: Vec::new(),
            rules: Vec::new(),
            modifies: false,
            wait_for_sync: false,
            deterministic: true,
            warnings: Vec::new(),
        }
    }
}
