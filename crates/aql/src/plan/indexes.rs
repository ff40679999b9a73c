//! The choice of secondary indexes: which persistent index (or edge index: `edge_index.rs`)
//! a `FOR` over a collection reads, with which equality prefix and range, in which order, and
//! whether the document is needed at all.
//!
//! What it is: three rules, applied by `optimize.rs`:
//! - `use-indexes`: the `FILTER`s right after the loop are split into conjuncts; those of the
//!   forms `x.path == v`, `x.path IN list`, `x.path <|<=|>|>= v` and `v IN x.array` (with `v`
//!   not depending on the loop) are matched against each persistent index's fields in order
//!   (equality on a prefix, then a range on the next field); the index matching most fields
//!   wins (equality counts double, a unique index fully matched wins outright);
//! - `use-index-for-sort`: a `SORT` on the fields after the prefix, all in one direction,
//!   right after the loop and its filters, is served by reading the index in that order (and
//!   the `SORT` goes); without conditions, a non-sparse index whose fields begin with the sort
//!   keys is read whole in order;
//! - `reduce-extraction-to-projection`: when everything after the loop reads only indexed
//!   top-level attributes (and `_key`) of the document, the document is never fetched;
//! - and, for graph operations, vertex projections ([`graph_projections`]): a traversal's or
//!   `SHORTEST_PATH`'s vertices read only as `v.name` are built with only those attributes.
//!
//! What it is not: a cost model; nor the removal of the filters an index serves (they stay,
//! and are checked again on every document the index yields).
//!
//! Invariants: a sparse index is chosen only when every equality value is a non-null constant
//! and, without a full prefix, a non-null constant lower bound rules out nulls; an index is
//! used for sorting only when no loop comes before this one in its pipeline, so the order of
//! the index is the order of the rows.

use std::collections::BTreeSet;

use quince_ops::{IndexDescription, IndexType};
use serde_json::Value;

use crate::ast::{BinaryOp, PathKind};

use super::{Access, CExpr, CKey, CQuantifier, IndexAccess, Node, PathTarget, Pipeline, Slot};

/// What a conjunct says about one attribute path of the loop variable.
pub(super) enum Condition {
    Eq(CExpr),
    In(CExpr),
    Low(CExpr, bool),
    High(CExpr, bool),
}

/// Applies `use-indexes` and `use-index-for-sort` to every loop of `pipeline` (and its
/// subqueries); the rules that changed something.
pub fn use_indexes(pipeline: &mut Pipeline, rules: &mut BTreeSet<&'static str>) {
    let mut i = 0;
    while i < pipeline.nodes.len() {
        let loops_before = pipeline.nodes[..i]
            .iter()
            .any(|n| matches!(n, Node::ForCollection(_) | Node::ForValues { .. }));
        let conditions = match &pipeline.nodes[i] {
            Node::ForCollection(f) if matches!(f.access, Access::Full) => {
                let mut found = Vec::new();
                for node in &pipeline.nodes[i + 1..] {
                    let Node::Filter(condition) = node else { break };
                    conjuncts(condition, f.slot, &mut found);
                }
                Some(found)
            }
            _ => None,
        };
        if let Some(conditions) = conditions {
            choose(pipeline, i, conditions, !loops_before, rules);
        }
        i += 1;
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| use_indexes(p, rules));
    }
}

/// Splits `condition` into the conjuncts an index can serve.
fn conjuncts(condition: &CExpr, slot: Slot, out: &mut Vec<(String, Condition)>) {
    match condition {
        CExpr::And(a, b) => {
            conjuncts(a, slot, out);
            conjuncts(b, slot, out);
        }
        CExpr::Binary(op, lhs, rhs) => {
            let left = path_of(lhs, slot);
            let right = path_of(rhs, slot);
            match (op, left, right) {
                (BinaryOp::Eq, Some(p), None) => push(out, p, rhs, slot, Condition::Eq),
                (BinaryOp::Eq, None, Some(p)) => push(out, p, lhs, slot, Condition::Eq),
                (BinaryOp::In, Some(p), None) => push(out, p, rhs, slot, Condition::In),
                (BinaryOp::In, None, Some(p)) => {
                    push(out, format!("{p}[*]"), lhs, slot, Condition::Eq)
                }
                (BinaryOp::Gt, Some(p), None) | (BinaryOp::Lt, None, Some(p)) => {
                    let v = if left_is(lhs, slot) { rhs } else { lhs };
                    push(out, p, v, slot, |e| Condition::Low(e, false))
                }
                (BinaryOp::Ge, Some(p), None) | (BinaryOp::Le, None, Some(p)) => {
                    let v = if left_is(lhs, slot) { rhs } else { lhs };
                    push(out, p, v, slot, |e| Condition::Low(e, true))
                }
                (BinaryOp::Lt, Some(p), None) | (BinaryOp::Gt, None, Some(p)) => {
                    let v = if left_is(lhs, slot) { rhs } else { lhs };
                    push(out, p, v, slot, |e| Condition::High(e, false))
                }
                (BinaryOp::Le, Some(p), None) | (BinaryOp::Ge, None, Some(p)) => {
                    let v = if left_is(lhs, slot) { rhs } else { lhs };
                    push(out, p, v, slot, |e| Condition::High(e, true))
                }
                _ => {}
            }
        }
        _ => {}
    }
}

fn left_is(e: &CExpr, slot: Slot) -> bool {
    path_of(e, slot).is_some()
}

fn push(
    out: &mut Vec<(String, Condition)>,
    path: String,
    value: &CExpr,
    slot: Slot,
    make: impl FnOnce(CExpr) -> Condition,
) {
    let mut reads_loop = false;
    value.visit_slots(&mut |s| reads_loop |= s == slot);
    if reads_loop || value.is_volatile() {
        return;
    }
    if let Some(copy) = try_clone(value) {
        out.push((path, make(copy)));
    }
}

/// `x.a.b` on the loop variable `slot` as the path `a.b`.
pub(super) fn path_of(expr: &CExpr, slot: Slot) -> Option<String> {
    match expr {
        CExpr::Attribute(base, name) => match &**base {
            CExpr::Slot(s) if *s == slot => Some(name.clone()),
            inner => path_of(inner, slot).map(|p| format!("{p}.{name}")),
        },
        _ => None,
    }
}

/// A copy of an expression without subqueries (the values an index lookup takes).
pub(super) fn try_clone(e: &CExpr) -> Option<CExpr> {
    let boxed = |e: &CExpr| try_clone(e).map(Box::new);
    Some(match e {
        CExpr::Const(v) => CExpr::Const(v.clone()),
        CExpr::Slot(s) => CExpr::Slot(*s),
        CExpr::Current => CExpr::Current,
        CExpr::Attribute(b, n) => CExpr::Attribute(boxed(b)?, n.clone()),
        CExpr::Index(a, b) => CExpr::Index(boxed(a)?, boxed(b)?),
        CExpr::Array(items) => CExpr::Array(items.iter().map(try_clone).collect::<Option<_>>()?),
        CExpr::Object(entries) => CExpr::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    let k = match k {
                        CKey::Static(s) => CKey::Static(s.clone()),
                        CKey::Computed(e) => CKey::Computed(try_clone(e)?),
                    };
                    Some((k, try_clone(v)?))
                })
                .collect::<Option<_>>()?,
        ),
        CExpr::Unary(op, a) => CExpr::Unary(*op, boxed(a)?),
        CExpr::And(a, b) => CExpr::And(boxed(a)?, boxed(b)?),
        CExpr::Or(a, b) => CExpr::Or(boxed(a)?, boxed(b)?),
        CExpr::Binary(op, a, b) => CExpr::Binary(*op, boxed(a)?, boxed(b)?),
        CExpr::Range(a, b) => CExpr::Range(boxed(a)?, boxed(b)?),
        CExpr::Ternary(c, t, e) => CExpr::Ternary(
            boxed(c)?,
            match t {
                Some(t) => Some(boxed(t)?),
                None => None,
            },
            boxed(e)?,
        ),
        CExpr::Call(f, args) => CExpr::Call(f, args.iter().map(try_clone).collect::<Option<_>>()?),
        CExpr::Quantified {
            quantifier,
            op,
            lhs,
            rhs,
        } => CExpr::Quantified {
            quantifier: match quantifier {
                CQuantifier::All => CQuantifier::All,
                CQuantifier::Any => CQuantifier::Any,
                CQuantifier::None => CQuantifier::None,
                CQuantifier::AtLeast(n) => CQuantifier::AtLeast(boxed(n)?),
            },
            op: *op,
            lhs: boxed(lhs)?,
            rhs: boxed(rhs)?,
        },
        CExpr::Subquery(_) | CExpr::Expansion { .. } => return None,
    })
}

fn non_null_const(e: &CExpr) -> bool {
    matches!(e, CExpr::Const(v) if !v.is_null())
}

/// Picks an index for loop `i` of `pipeline` from its `conditions`, and a sort it can serve.
fn choose(
    pipeline: &mut Pipeline,
    i: usize,
    conditions: Vec<(String, Condition)>,
    may_sort: bool,
    rules: &mut BTreeSet<&'static str>,
) {
    let Node::ForCollection(f) = &pipeline.nodes[i] else {
        return;
    };
    let slot = f.slot;
    let indexes: Vec<IndexDescription> = f
        .collection
        .indexes()
        .into_iter()
        .filter(|ix| matches!(ix.kind, IndexType::Persistent | IndexType::Edge))
        .collect();
    // The SORT right after the loop and its filters, as (path, ascending) pairs.
    let sort_at = pipeline.nodes[i + 1..]
        .iter()
        .position(|n| !matches!(n, Node::Filter(_)))
        .map(|p| i + 1 + p);
    let sort: Option<Vec<(String, bool)>> = match sort_at.map(|s| &pipeline.nodes[s]) {
        Some(Node::Sort(keys)) if may_sort => keys
            .iter()
            .map(|(k, asc)| path_of(k, slot).map(|p| (p, *asc)))
            .collect(),
        _ => None,
    };
    let mut best: Option<(u32, IndexAccess, bool)> = None;
    for index in indexes {
        let (access, score) = match index.kind {
            IndexType::Edge => match super::edge_index::match_edge(&index, &conditions) {
                Some(matched) => matched,
                None => continue,
            },
            _ => match_index(&index, &conditions),
        };
        let sorts = index.kind != IndexType::Edge
            && sort.as_ref().is_some_and(|keys| {
                let rest = &index.fields[access.prefix.len()..];
                let directions: BTreeSet<bool> = keys.iter().map(|(_, a)| *a).collect();
                !access.in_last
                    && directions.len() == 1
                    && keys.len() <= rest.len()
                    && keys.iter().zip(rest).all(|((p, _), field)| p == field)
                    && (!index.sparse || score > 0)
            });
        let score = score * 4 + u32::from(sorts) * 2;
        if score == 0 {
            continue;
        }
        if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
            best = Some((score, access, sorts));
        }
    }
    let Some((_, mut access, sorts)) = best else {
        return;
    };
    rules.insert("use-indexes");
    if sorts {
        let ascending = sort
            .as_ref()
            .and_then(|k| k.first())
            .is_none_or(|(_, a)| *a);
        access.reverse = !ascending;
        if let Some(s) = sort_at {
            pipeline.nodes.remove(s);
        }
        rules.insert("use-index-for-sort");
    }
    if let Node::ForCollection(f) = &mut pipeline.nodes[i] {
        f.access = Access::Index(Box::new(access));
    }
}

/// How much of `index` the conditions match: the access, and a score (0: no use).
fn match_index(index: &IndexDescription, conditions: &[(String, Condition)]) -> (IndexAccess, u32) {
    let mut access = IndexAccess {
        index: index.clone(),
        prefix: Vec::new(),
        in_last: false,
        low: None,
        high: None,
        reverse: false,
        projection: None,
    };
    let mut score = 0;
    for field in &index.fields {
        let eq = conditions.iter().find_map(|(p, c)| match c {
            Condition::Eq(v) if p == field => Some(v),
            _ => None,
        });
        if let Some(v) = eq {
            if index.sparse && !non_null_const(v) {
                break;
            }
            access.prefix.push(try_clone(v).expect("cloned once"));
            score += 2;
            continue;
        }
        let within = conditions.iter().find_map(|(p, c)| match c {
            Condition::In(v) if p == field => Some(v),
            _ => None,
        });
        if let Some(v) = within {
            if !index.sparse {
                access.prefix.push(try_clone(v).expect("cloned once"));
                access.in_last = true;
                score += 2;
            }
            break;
        }
        for (p, c) in conditions {
            if p != field {
                continue;
            }
            match c {
                Condition::Low(v, inclusive) if access.low.is_none() => {
                    access.low = Some((try_clone(v).expect("cloned once"), *inclusive))
                }
                Condition::High(v, inclusive) if access.high.is_none() => {
                    access.high = Some((try_clone(v).expect("cloned once"), *inclusive))
                }
                _ => {}
            }
        }
        if access.low.is_some() || access.high.is_some() {
            score += 1;
        }
        break;
    }
    if index.sparse {
        // A sparse index lacks every document with a null in any indexed field: it serves
        // only conditions that rule such documents out on every field.
        let n = index.fields.len();
        let all_equal = access.prefix.len() == n && !access.in_last;
        let last_bounded = access.prefix.len() + 1 == n
            && access.low.as_ref().is_some_and(|(v, _)| non_null_const(v));
        if !(all_equal || last_bounded) {
            return (access, 0);
        }
    }
    if index.unique && access.prefix.len() == index.fields.len() && !access.in_last {
        score += 100;
    }
    (access, score)
}

/// `reduce-extraction-to-projection`: loops through an index whose document is only read for
/// indexed top-level attributes get a projection instead of a fetch.
pub fn use_projections(pipeline: &mut Pipeline, rules: &mut BTreeSet<&'static str>) {
    for i in 0..pipeline.nodes.len() {
        let (slot, allowed) = match &pipeline.nodes[i] {
            Node::ForCollection(f) => match &f.access {
                Access::Index(a) if a.index.fields.iter().all(|p| !p.contains(['.', '['])) => {
                    let mut allowed: BTreeSet<String> = a.index.fields.iter().cloned().collect();
                    allowed.insert("_key".to_owned());
                    (f.slot, allowed)
                }
                _ => continue,
            },
            _ => continue,
        };
        let mut used = BTreeSet::new();
        let mut covered = true;
        if let Node::ForCollection(f) = &pipeline.nodes[i] {
            for filter in &f.filters {
                covered &= only_attributes(filter, slot, Some(&allowed), &mut used);
            }
        }
        for node in &pipeline.nodes[i + 1..] {
            node_only_attributes(node, slot, Some(&allowed), &mut used, &mut covered);
        }
        if covered {
            if let Node::ForCollection(f) = &mut pipeline.nodes[i] {
                if let Access::Index(a) = &mut f.access {
                    a.projection = Some(used.into_iter().collect());
                    rules.insert("reduce-extraction-to-projection");
                }
            }
        }
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| use_projections(p, rules));
    }
}

/// `reduce-extraction-to-projection` for every other loop over a collection: when the rest
/// of the query reads its variable only as `x.name`, only those attributes are built from
/// each document.
pub fn scan_projections(pipeline: &mut Pipeline, rules: &mut BTreeSet<&'static str>) {
    for i in 0..pipeline.nodes.len() {
        let slot = match &pipeline.nodes[i] {
            Node::ForCollection(f) if f.projection.is_none() => match &f.access {
                Access::Index(a) if a.projection.is_some() => continue,
                _ => f.slot,
            },
            _ => continue,
        };
        let mut used = BTreeSet::new();
        let mut covered = true;
        if let Node::ForCollection(f) = &pipeline.nodes[i] {
            for filter in &f.filters {
                covered &= only_attributes(filter, slot, None, &mut used);
            }
        }
        for node in &pipeline.nodes[i + 1..] {
            node_only_attributes(node, slot, None, &mut used, &mut covered);
        }
        if covered {
            if let Node::ForCollection(f) = &mut pipeline.nodes[i] {
                f.projection = Some(used.into_iter().collect());
                rules.insert("reduce-extraction-to-projection");
            }
        }
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| scan_projections(p, rules));
    }
}

/// `late-document-materialization` for scans: filters that read the loop variable only as
/// `x.name` run on a document built with only those attributes; the rest of it is built only
/// for the documents that pass.
pub fn filter_projections(pipeline: &mut Pipeline, rules: &mut BTreeSet<&'static str>) {
    for node in &mut pipeline.nodes {
        if let Node::ForCollection(f) = node {
            let index_built = matches!(&f.access, Access::Index(a) if a.projection.is_some());
            if !f.filters.is_empty() && !index_built {
                let mut used = BTreeSet::new();
                let covered = f
                    .filters
                    .iter()
                    .all(|c| only_attributes(c, f.slot, None, &mut used));
                let names: Vec<String> = used.into_iter().collect();
                if covered && f.projection.as_ref() != Some(&names) {
                    f.filter_projection = Some(names);
                    rules.insert("late-document-materialization");
                }
            }
        }
        node.for_each_subquery_mut(&mut |p| filter_projections(p, rules));
    }
}

/// Vertex projections for graph operations: a traversal whose vertex variable the rest of the
/// query reads only as `v.name` (with no `p`, no `PRUNE` and no pushed condition on vertices,
/// which see whole vertices), and a `SHORTEST_PATH` whose vertex variable is read so, build
/// only those attributes of each vertex.
pub fn graph_projections(pipeline: &mut Pipeline) {
    for i in 0..pipeline.nodes.len() {
        let slot = match &pipeline.nodes[i] {
            Node::Traversal(t)
                if t.path.is_none()
                    && t.prune.is_none()
                    && t.conditions.iter().all(|c| {
                        matches!(c.target, PathTarget::Edge(_) | PathTarget::AllEdges)
                    }) =>
            {
                match t.vertex {
                    Some(slot) => slot,
                    None => continue,
                }
            }
            Node::PathSearch(s) if s.kind == PathKind::Shortest => s.slot,
            _ => continue,
        };
        let mut used = BTreeSet::new();
        let mut covered = true;
        for node in &pipeline.nodes[i + 1..] {
            node_only_attributes(node, slot, None, &mut used, &mut covered);
        }
        if covered {
            let names = Some(used.into_iter().collect());
            match &mut pipeline.nodes[i] {
                Node::Traversal(t) => t.vertex_projection = names,
                Node::PathSearch(s) => s.vertex_projection = names,
                _ => {}
            }
        }
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| graph_projections(p));
    }
}

fn node_only_attributes(
    node: &Node,
    slot: Slot,
    allowed: Option<&BTreeSet<String>>,
    used: &mut BTreeSet<String>,
    covered: &mut bool,
) {
    node.visit_expressions(&mut |e| *covered &= only_attributes(e, slot, allowed, used));
}

/// True when `expr` reads `slot` only as `slot.name` with `name` allowed (any name when
/// `allowed` is `None`), subqueries too.
fn only_attributes(
    expr: &CExpr,
    slot: Slot,
    allowed: Option<&BTreeSet<String>>,
    used: &mut BTreeSet<String>,
) -> bool {
    match expr {
        CExpr::Attribute(base, name) if matches!(**base, CExpr::Slot(s) if s == slot) => {
            used.insert(name.clone());
            allowed.is_none_or(|a| a.contains(name))
        }
        CExpr::Slot(s) => *s != slot,
        CExpr::Subquery(p) => {
            let mut covered = true;
            for node in &p.nodes {
                if let Node::ForCollection(f) = node {
                    if let Access::Keys(k) = &f.access {
                        covered &= only_attributes(k, slot, allowed, used);
                    }
                }
                node_only_attributes(node, slot, allowed, used, &mut covered);
            }
            covered
        }
        other => {
            let mut covered = true;
            other.for_each_child(&mut |child| {
                covered &= only_attributes(child, slot, allowed, used)
            });
            covered
        }
    }
}

/// The value of a projected document: the named attributes from an index entry.
pub fn project(fields: &[String], names: &[String], key: &str, values: &[Value]) -> Value {
    let mut object = serde_json::Map::new();
    for name in names {
        let value = if name == "_key" {
            Value::String(key.to_owned())
        } else {
            fields
                .iter()
                .position(|f| f == name)
                .and_then(|p| values.get(p).cloned())
                .unwrap_or(Value::Null)
        };
        object.insert(name.clone(), value);
    }
    Value::Object(object)
}
