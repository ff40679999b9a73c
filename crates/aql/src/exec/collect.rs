//! `COLLECT` and `WINDOW`: the grouping and aggregating breakers.
//!
//! What it is: [`CollectState`], which groups rows as they arrive (one entry per distinct
//! group value, ordered by AQL's value order, so groups come out sorted as ArangoDB's sorted
//! collect gives them), keeping per group only what its outputs need: a count, running
//! MIN/MAX, the values of other aggregates, and the `INTO` members; and [`window`], which
//! aggregates each row's neighbours.
//!
//! What it is not: the aggregate functions' semantics beyond COUNT/MIN/MAX: the others are the
//! library's functions applied to the array of a group's values.
//!
//! Invariants: a `COLLECT` without group variables yields exactly one row, even for no input
//! (a count of 0); every row taken and every window computed is a step of the query
//! ([`super::Context::tick`]), so a kill, the deadline or the memory limit (the groups are
//! allocated on the query's thread, so its account holds them) stops it.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use quince_errors::Result;
use quince_model::order::compare_values;
use serde_json::{Map, Value};

use crate::plan::{Aggregate, CollectNode, WindowNode};

use super::{Env, Executor, Row};

/// A value ordered by AQL's value order.
#[derive(Clone, Debug)]
pub struct OrdValue(pub Value);

impl PartialEq for OrdValue {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for OrdValue {}
impl PartialOrd for OrdValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for OrdValue {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_values(&self.0, &other.0)
    }
}

/// One aggregate's running state.
enum Running {
    Count(u64),
    Min(Option<Value>),
    Max(Option<Value>),
    Values(Vec<Value>),
}

impl Running {
    fn new(aggregate: Aggregate) -> Running {
        match aggregate {
            Aggregate::Count => Running::Count(0),
            Aggregate::Min => Running::Min(None),
            Aggregate::Max => Running::Max(None),
            Aggregate::Sum | Aggregate::Function(_) => Running::Values(Vec::new()),
        }
    }

    /// Adds a value.
    fn add(&mut self, value: Value) {
        match self {
            Running::Count(n) => *n += 1,
            Running::Min(best) => {
                if !value.is_null()
                    && best
                        .as_ref()
                        .is_none_or(|b| compare_values(&value, b) == Ordering::Less)
                {
                    *best = Some(value);
                }
            }
            Running::Max(best) => {
                if best
                    .as_ref()
                    .is_none_or(|b| compare_values(&value, b) == Ordering::Greater)
                {
                    *best = Some(value);
                }
            }
            Running::Values(values) => values.push(value),
        }
    }

    fn finish(self, aggregate: Aggregate, executor: &mut Executor<'_>) -> Result<Value> {
        Ok(match self {
            Running::Count(n) => Value::from(n),
            Running::Min(v) | Running::Max(v) => v.unwrap_or(Value::Null),
            Running::Values(values) => {
                let function = match aggregate {
                    Aggregate::Sum => crate::functions::lookup("SUM").expect("SUM exists"),
                    Aggregate::Function(f) => f,
                    _ => unreachable!("only SUM and library aggregates keep values"),
                };
                (function.call)(&mut executor.ctx, &[Value::Array(values)])?
            }
        })
    }
}

/// One group.
struct Group {
    base: Row,
    aggregates: Vec<Running>,
    members: Vec<Value>,
    count: u64,
}

/// The groups of a `COLLECT` so far.
pub struct CollectState {
    groups: BTreeMap<Vec<OrdValue>, Group>,
    /// The row a group-less COLLECT answers with when no row arrived.
    input: Row,
}

impl CollectState {
    /// The state before any row, for a pipeline entered with `input`.
    pub fn new(_node: &CollectNode, input: &Row) -> CollectState {
        CollectState {
            groups: BTreeMap::new(),
            input: input.clone(),
        }
    }

    /// A placeholder while the state is being updated.
    pub fn empty() -> CollectState {
        CollectState {
            groups: BTreeMap::new(),
            input: Vec::new(),
        }
    }

    /// Adds a row to its group.
    pub fn add(
        &mut self,
        executor: &mut Executor<'_>,
        node: &CollectNode,
        row: &Row,
    ) -> Result<()> {
        let mut key = Vec::with_capacity(node.groups.len());
        for (_, value) in &node.groups {
            key.push(OrdValue(executor.eval(value, Env::of(row))?.into_owned()));
        }
        let mut inputs = Vec::with_capacity(node.aggregates.len());
        for (_, _, input) in &node.aggregates {
            inputs.push(executor.eval(input, Env::of(row))?.into_owned());
        }
        let member = match &node.into {
            Some((_, Some(value))) => Some(executor.eval(value, Env::of(row))?.into_owned()),
            Some((_, None)) => {
                let mut object = Map::new();
                for (name, slot) in &node.keep {
                    object.insert(name.clone(), row[*slot].clone());
                }
                Some(Value::Object(object))
            }
            None => None,
        };
        executor.ctx.tick()?;
        let group = match self.groups.get_mut(&key) {
            Some(group) => group,
            None => {
                let group = Group {
                    base: row.clone(),
                    aggregates: node
                        .aggregates
                        .iter()
                        .map(|(_, a, _)| Running::new(*a))
                        .collect(),
                    members: Vec::new(),
                    count: 0,
                };
                self.groups.entry(key).or_insert(group)
            }
        };
        group.count += 1;
        for (running, input) in group.aggregates.iter_mut().zip(inputs) {
            running.add(input);
        }
        if let Some(member) = member {
            group.members.push(member);
        }
        Ok(())
    }

    /// The output rows, one per group in group order.
    pub fn finish(mut self, executor: &mut Executor<'_>, node: &CollectNode) -> Result<Vec<Row>> {
        if node.groups.is_empty() && self.groups.is_empty() {
            self.groups.insert(
                Vec::new(),
                Group {
                    base: self.input.clone(),
                    aggregates: node
                        .aggregates
                        .iter()
                        .map(|(_, a, _)| Running::new(*a))
                        .collect(),
                    members: Vec::new(),
                    count: 0,
                },
            );
        }
        let mut rows = Vec::with_capacity(self.groups.len());
        for (key, group) in self.groups {
            executor.ctx.tick()?;
            let mut row = group.base;
            for ((slot, _), value) in node.groups.iter().zip(key) {
                row[*slot] = value.0;
            }
            for ((slot, aggregate, _), running) in node.aggregates.iter().zip(group.aggregates) {
                row[*slot] = running.finish(*aggregate, executor)?;
            }
            if let Some((slot, _)) = &node.into {
                row[*slot] = Value::Array(group.members);
            }
            if let Some(slot) = node.count {
                row[slot] = Value::from(group.count);
            }
            rows.push(row);
        }
        Ok(rows)
    }
}

/// `WINDOW`: each row with its aggregates over the rows around it.
pub fn window(
    executor: &mut Executor<'_>,
    node: &WindowNode,
    mut rows: Vec<Row>,
) -> Result<Vec<Row>> {
    let n = rows.len();
    let mut inputs: Vec<Vec<Value>> = Vec::with_capacity(n);
    for row in &rows {
        executor.ctx.tick()?;
        let mut values = Vec::with_capacity(node.aggregates.len());
        for (_, _, input) in &node.aggregates {
            values.push(executor.eval(input, Env::of(row))?.into_owned());
        }
        inputs.push(values);
    }
    let ranges: Option<Vec<f64>> = match &node.range_value {
        Some(range) => {
            let mut values = Vec::with_capacity(n);
            for row in &rows {
                let v = executor.eval(range, Env::of(row))?;
                values.push(crate::value::to_number(&v));
            }
            Some(values)
        }
        None => None,
    };
    let mut results = Vec::with_capacity(n);
    for j in 0..n {
        executor.ctx.tick()?;
        let members: Vec<usize> = match &ranges {
            None => {
                let low = node.preceding.map_or(0, |p| j.saturating_sub(p as usize));
                let high = node
                    .following
                    .map_or(n - 1, |f| j.saturating_add(f as usize).min(n - 1));
                (low..=high).collect()
            }
            Some(values) => {
                let here = values[j];
                (0..n)
                    .filter(|&k| {
                        node.preceding.is_none_or(|p| values[k] >= here - p)
                            && node.following.is_none_or(|f| values[k] <= here + f)
                    })
                    .collect()
            }
        };
        let mut outputs = Vec::with_capacity(node.aggregates.len());
        for (a, (_, aggregate, _)) in node.aggregates.iter().enumerate() {
            let mut running = Running::new(*aggregate);
            for &k in &members {
                executor.ctx.tick()?;
                running.add(inputs[k][a].clone());
            }
            outputs.push(running.finish(*aggregate, executor)?);
        }
        results.push(outputs);
    }
    for (row, outputs) in rows.iter_mut().zip(results) {
        for ((slot, _, _), value) in node.aggregates.iter().zip(outputs) {
            row[*slot] = value;
        }
    }
    Ok(rows)
}
