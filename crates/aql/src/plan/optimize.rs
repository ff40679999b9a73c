//! The optimizer: rewrites a compiled plan into a cheaper one with the same results.
//!
//! What it is: [`optimize`], a fixed sequence of rules, each recorded in [`super::Plan::rules`]
//! under ArangoDB's rule name when it changed something:
//! - `remove-unnecessary-calculations`: a `LET` nothing reads, whose value has no effect, goes;
//! - `use-indexes`: a `FOR` over a collection whose filter pins `_key` (`==` or `IN` a value
//!   that does not depend on the loop) reads those keys from the primary index instead of
//!   scanning;
//! - `use-indexes`, `use-index-for-sort` and `reduce-extraction-to-projection` for secondary
//!   indexes (`indexes.rs`);
//! - `move-filters-into-enumerate`: filters right after a `FOR` over a collection run inside
//!   the scan, before a row is built for the rest of the pipeline;
//! - `NEW` and `OLD` are only asked of the engine when a later node reads them;
//! - `optimize-traversals` and `remove-filter-covered-by-traversal`: filters on a traversal's
//!   path pushed into it, unread traversal variables not produced (`pushdown.rs`);
//! - `scatter-in-cluster` and `distribute-filtercalc-to-cluster`: a full scan of a sharded
//!   collection sends its filters, projection and limit to the shards (`distribute.rs`).
//!
//! What it is not: a cost model. Each rule is applied when it cannot make a plan slower.
//!
//! Invariants: a rule never changes what a query returns or writes; a filter used to choose
//! an index is still evaluated on each document (so an index only narrows the input).

use std::collections::HashSet;

use crate::ast::BinaryOp;

use super::{Access, CExpr, Node, Pipeline, Plan, Slot};

/// Applies every rule to `plan`.
pub fn optimize(plan: &mut Plan) {
    let mut rules = Vec::new();
    let mut read = HashSet::new();
    collect_reads(&mut plan.root, &mut read);
    if remove_unused_lets(&mut plan.root, &read) {
        rules.push("remove-unnecessary-calculations");
    }
    let mut index_rules = std::collections::BTreeSet::new();
    if use_primary_index(&mut plan.root) {
        index_rules.insert("use-indexes");
    }
    super::indexes::use_indexes(&mut plan.root, &mut index_rules);
    for rule in ["use-indexes", "use-index-for-sort"] {
        if index_rules.contains(rule) {
            rules.push(rule);
        }
    }
    if move_filters(&mut plan.root) {
        rules.push("move-filters-into-enumerate");
    }
    let mut projection_rules = std::collections::BTreeSet::new();
    super::indexes::use_projections(&mut plan.root, &mut projection_rules);
    super::indexes::scan_projections(&mut plan.root, &mut projection_rules);
    super::indexes::filter_projections(&mut plan.root, &mut projection_rules);
    rules.extend(projection_rules);
    prune_new_old(&mut plan.root, &read);
    super::pushdown::optimize_traversals(plan, &mut rules);
    super::indexes::graph_projections(&mut plan.root);
    super::distribute::distribute(&mut plan.root, &mut rules);
    plan.rules = rules;
}

fn collect_reads(pipeline: &mut Pipeline, read: &mut HashSet<Slot>) {
    pipeline.visit_slots(&mut |s| {
        read.insert(s);
    });
}

fn remove_unused_lets(pipeline: &mut Pipeline, read: &HashSet<Slot>) -> bool {
    let before = pipeline.nodes.len();
    pipeline.nodes.retain(|node| match node {
        Node::Let { slot, value } => read.contains(slot) || value.is_volatile(),
        _ => true,
    });
    let mut changed = pipeline.nodes.len() != before;
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| changed |= remove_unused_lets(p, read));
    }
    changed
}

fn use_primary_index(pipeline: &mut Pipeline) -> bool {
    let mut changed = false;
    for i in 0..pipeline.nodes.len() {
        let (head, tail) = pipeline.nodes.split_at_mut(i + 1);
        let Node::ForCollection(f) = &mut head[i] else {
            continue;
        };
        if !matches!(f.access, Access::Full) {
            continue;
        }
        for node in tail.iter() {
            let Node::Filter(condition) = node else { break };
            if let Some(keys) = key_condition(condition, f.slot) {
                f.access = Access::Keys(keys);
                changed = true;
                break;
            }
        }
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| changed |= use_primary_index(p));
    }
    changed
}

/// The keys a condition pins on `slot`'s `_key`: `x._key == v`, `v == x._key`, `x._key IN v`,
/// or one of the conjuncts of an `&&`.
fn key_condition(condition: &CExpr, slot: Slot) -> Option<CExpr> {
    match condition {
        CExpr::And(a, b) => key_condition(a, slot).or_else(|| key_condition(b, slot)),
        CExpr::Binary(op @ (BinaryOp::Eq | BinaryOp::In), lhs, rhs) => {
            let is_key = |e: &CExpr| {
                matches!(e, CExpr::Attribute(base, name)
                    if name == "_key" && matches!(**base, CExpr::Slot(s) if s == slot))
            };
            let independent = |e: &CExpr| {
                let mut reads_loop = false;
                e.visit_slots(&mut |s| reads_loop |= s == slot);
                !reads_loop && !e.is_volatile()
            };
            if is_key(lhs) && independent(rhs) {
                Some(copy(rhs)?)
            } else if *op == BinaryOp::Eq && is_key(rhs) && independent(lhs) {
                Some(copy(lhs)?)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// A copy of a simple expression (constants and variables), the forms an index lookup takes.
fn copy(e: &CExpr) -> Option<CExpr> {
    Some(match e {
        CExpr::Const(v) => CExpr::Const(v.clone()),
        CExpr::Slot(s) => CExpr::Slot(*s),
        CExpr::Attribute(base, name) => CExpr::Attribute(Box::new(copy(base)?), name.clone()),
        _ => return None,
    })
}

fn move_filters(pipeline: &mut Pipeline) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < pipeline.nodes.len() {
        if matches!(pipeline.nodes[i], Node::ForCollection(_)) {
            while matches!(pipeline.nodes.get(i + 1), Some(Node::Filter(_))) {
                let Node::Filter(condition) = pipeline.nodes.remove(i + 1) else {
                    unreachable!("checked above")
                };
                if let Node::ForCollection(f) = &mut pipeline.nodes[i] {
                    f.filters.push(condition);
                }
                changed = true;
            }
        }
        i += 1;
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| changed |= move_filters(p));
    }
    changed
}

fn prune_new_old(pipeline: &mut Pipeline, read: &HashSet<Slot>) {
    for node in &mut pipeline.nodes {
        if let Node::Modify(m) = node {
            m.new_slot = m.new_slot.filter(|s| read.contains(s));
            m.old_slot = m.old_slot.filter(|s| read.contains(s));
        }
        node.for_each_subquery_mut(&mut |p| prune_new_old(p, read));
    }
}
