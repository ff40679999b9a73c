//! Filters on a traversal's path pushed into the traversal (ArangoDB's `optimize-traversals`
//! and `remove-filter-covered-by-traversal`), and the traversal's unread variables dropped.
//!
//! What it is: [`optimize_traversals`]. For each `FILTER` directly after a traversal, every
//! conjunct that reads the path only as `p.vertices[N]` or `p.edges[N]` (one element, N a
//! non-negative constant) or as `p.vertices[*]...` / `p.edges[*]...` `ALL op value` becomes a
//! [`PathCondition`] over a fresh slot holding that element, which the executor checks when
//! the path reaches the element's depth: a path failing it is neither emitted nor expanded.
//! A filter whose every conjunct was pushed is removed; otherwise it stays and is still
//! evaluated on each row (the pushed part only saves expansions). A traversal variable (`v`,
//! `e`, `p`) nothing reads is not produced.
//!
//! What it is not: pushing conditions on `v` or `e` (they hold only at the last depth, so they
//! prune nothing), nor on `p` in any other form, nor a conjunct wrapped in `NOOPT()`.
//!
//! Invariants: a pushed conjunct reads no traversal variable other than through the matched
//! element, is deterministic and has no subquery, and its other values do not change while
//! the traversal runs (they come from rows before it), so checking it on the element gives
//! the same answer as the filter on every row; for an element the path lacks, the executor
//! evaluates it on `null`, as the filter would see the missing element.

use crate::ast::BinaryOp;

use super::{CExpr, CKey, CQuantifier, Node, PathCondition, PathTarget, Pipeline, Plan, Slot};

/// Applies the rules to every traversal of `plan`; the rule names that changed something.
pub fn optimize_traversals(plan: &mut Plan, rules: &mut Vec<&'static str>) {
    let mut pushed = false;
    let mut removed = false;
    let mut slots = std::mem::take(&mut plan.slots);
    push_filters(&mut plan.root, &mut slots, &mut pushed, &mut removed);
    plan.slots = slots;
    let mut read = std::collections::HashSet::new();
    plan.root.visit_slots(&mut |s| {
        read.insert(s);
    });
    let dropped = drop_unread(&mut plan.root, &read);
    if pushed || dropped {
        rules.push("optimize-traversals");
    }
    if removed {
        rules.push("remove-filter-covered-by-traversal");
    }
}

fn push_filters(
    pipeline: &mut Pipeline,
    slots: &mut Vec<String>,
    pushed: &mut bool,
    removed: &mut bool,
) {
    let mut i = 0;
    while i < pipeline.nodes.len() {
        if let Node::Traversal(t) = &pipeline.nodes[i] {
            let [v, e, p] = t.declared;
            let prune = t.prune.as_ref().and_then(|(s, _)| *s);
            if let Some(p) = p {
                let own: Vec<Slot> = [v, e, Some(p), prune].into_iter().flatten().collect();
                let mut j = i + 1;
                while let Some(Node::Filter(condition)) = pipeline.nodes.get(j) {
                    let parts = condition.conjuncts();
                    let mut matched = Vec::new();
                    for part in &parts {
                        if let Some(found) =
                            match_conjunct(part, p, &own, slots.len() + matched.len())
                        {
                            matched.push(found);
                        }
                    }
                    let covered = matched.len() == parts.len();
                    let Node::Traversal(t) = &mut pipeline.nodes[i] else {
                        unreachable!("checked above")
                    };
                    for condition in matched {
                        slots.push("#pathElement".to_owned());
                        t.conditions.push(condition);
                        *pushed = true;
                    }
                    if covered {
                        pipeline.nodes.remove(j);
                        *removed = true;
                    } else {
                        j += 1;
                    }
                }
            }
        }
        i += 1;
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |sub| push_filters(sub, slots, pushed, removed));
    }
}

/// `p.vertices` / `p.edges` on slot `p`: true for vertices.
fn path_list(e: &CExpr, p: Slot) -> Option<bool> {
    match e {
        CExpr::Attribute(base, name) if matches!(**base, CExpr::Slot(s) if s == p) => {
            match name.as_str() {
                "vertices" => Some(true),
                "edges" => Some(false),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `part` as a condition over the new slot `slot`, when it has a pushable form.
fn match_conjunct(part: &CExpr, p: Slot, own: &[Slot], slot: Slot) -> Option<PathCondition> {
    let mut noopt = false;
    part.walk(&mut |e| noopt |= matches!(e, CExpr::Call(f, _) if f.name == "NOOPT"));
    if part.is_volatile() || noopt {
        return None;
    }
    // `p.vertices[*]... ALL op value`.
    if let CExpr::Quantified {
        quantifier: CQuantifier::All,
        op,
        lhs,
        rhs,
    } = part
    {
        if let CExpr::Expansion {
            base,
            depth: 1,
            filter: None,
            limit: None,
            projection,
        } = &**lhs
        {
            if let Some(vertices) = path_list(base, p) {
                let element = match projection {
                    Some(projection) => copy(projection, &mut |e| {
                        matches!(e, CExpr::Current).then_some(CExpr::Slot(slot))
                    })?,
                    None => CExpr::Slot(slot),
                };
                let rhs = copy(rhs, &mut |_| None)?;
                let condition = comparison(*op, element, rhs)?;
                if reads_any(&condition, own) || contains_current(&condition) {
                    return None;
                }
                let target = if vertices {
                    PathTarget::AllVertices
                } else {
                    PathTarget::AllEdges
                };
                return Some(PathCondition {
                    target,
                    condition,
                    slot,
                });
            }
        }
        return None;
    }
    // `... p.vertices[N] ...` / `... p.edges[N] ...`, one element only.
    let mut target: Option<PathTarget> = None;
    let mut conflict = false;
    let condition = copy(part, &mut |e| {
        let CExpr::Index(base, index) = e else {
            return None;
        };
        let vertices = path_list(base, p)?;
        let n = index.as_const()?.as_u64()? as usize;
        let found = if vertices {
            PathTarget::Vertex(n)
        } else {
            PathTarget::Edge(n)
        };
        if target.is_some_and(|t| t != found) {
            conflict = true;
        }
        target = Some(found);
        Some(CExpr::Slot(slot))
    })?;
    if conflict || reads_any(&condition, own) {
        return None;
    }
    Some(PathCondition {
        target: target?,
        condition,
        slot,
    })
}

/// `lhs op rhs` for a comparison usable after a quantifier.
fn comparison(op: BinaryOp, lhs: CExpr, rhs: CExpr) -> Option<CExpr> {
    match op {
        BinaryOp::Eq
        | BinaryOp::Ne
        | BinaryOp::Lt
        | BinaryOp::Le
        | BinaryOp::Gt
        | BinaryOp::Ge
        | BinaryOp::In
        | BinaryOp::NotIn => Some(CExpr::Binary(op, Box::new(lhs), Box::new(rhs))),
        _ => None,
    }
}

fn reads_any(e: &CExpr, slots: &[Slot]) -> bool {
    let mut found = false;
    e.visit_slots(&mut |s| found |= slots.contains(&s));
    found
}

/// `Current` outside any expansion of `e` (it would belong to the quantifier's expansion).
fn contains_current(e: &CExpr) -> bool {
    match e {
        CExpr::Current => true,
        CExpr::Expansion { base, .. } => contains_current(base),
        other => {
            let mut found = false;
            other.for_each_child(&mut |c| found |= contains_current(c));
            found
        }
    }
}

/// A copy of `e` in which `replace` may substitute any sub-expression (tried before its
/// parts); `None` for an expression with a subquery.
fn copy(e: &CExpr, replace: &mut dyn FnMut(&CExpr) -> Option<CExpr>) -> Option<CExpr> {
    if let Some(r) = replace(e) {
        return Some(r);
    }
    let mut b = |e: &CExpr| copy(e, replace).map(Box::new);
    Some(match e {
        CExpr::Const(v) => CExpr::Const(v.clone()),
        CExpr::Slot(s) => CExpr::Slot(*s),
        CExpr::Current => CExpr::Current,
        CExpr::Attribute(x, n) => CExpr::Attribute(b(x)?, n.clone()),
        CExpr::Index(x, y) => CExpr::Index(b(x)?, b(y)?),
        CExpr::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(*b(item)?);
            }
            CExpr::Array(out)
        }
        CExpr::Object(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let k = match k {
                    CKey::Static(s) => CKey::Static(s.clone()),
                    CKey::Computed(k) => CKey::Computed(*b(k)?),
                };
                out.push((k, *b(v)?));
            }
            CExpr::Object(out)
        }
        CExpr::Unary(op, x) => CExpr::Unary(*op, b(x)?),
        CExpr::And(x, y) => CExpr::And(b(x)?, b(y)?),
        CExpr::Or(x, y) => CExpr::Or(b(x)?, b(y)?),
        CExpr::Binary(op, x, y) => CExpr::Binary(*op, b(x)?, b(y)?),
        CExpr::Range(x, y) => CExpr::Range(b(x)?, b(y)?),
        CExpr::Ternary(c, t, o) => {
            let c = b(c)?;
            let t = match t {
                Some(t) => Some(b(t)?),
                None => None,
            };
            CExpr::Ternary(c, t, b(o)?)
        }
        CExpr::Call(f, args) => {
            let mut out = Vec::with_capacity(args.len());
            for a in args {
                out.push(*b(a)?);
            }
            CExpr::Call(f, out)
        }
        CExpr::Quantified {
            quantifier,
            op,
            lhs,
            rhs,
        } => {
            let quantifier = match quantifier {
                CQuantifier::All => CQuantifier::All,
                CQuantifier::Any => CQuantifier::Any,
                CQuantifier::None => CQuantifier::None,
                CQuantifier::AtLeast(n) => CQuantifier::AtLeast(b(n)?),
            };
            CExpr::Quantified {
                quantifier,
                op: *op,
                lhs: b(lhs)?,
                rhs: b(rhs)?,
            }
        }
        CExpr::Expansion {
            base,
            depth,
            filter,
            limit,
            projection,
        } => {
            let base = b(base)?;
            let filter = match filter {
                Some(f) => Some(b(f)?),
                None => None,
            };
            let projection = match projection {
                Some(p) => Some(b(p)?),
                None => None,
            };
            CExpr::Expansion {
                base,
                depth: *depth,
                filter,
                limit: *limit,
                projection,
            }
        }
        CExpr::Subquery(_) => return None,
    })
}

/// Stops producing the traversal variables nothing reads; true if one was dropped.
fn drop_unread(pipeline: &mut Pipeline, read: &std::collections::HashSet<Slot>) -> bool {
    let mut dropped = false;
    for node in &mut pipeline.nodes {
        if let Node::Traversal(t) = node {
            for slot in [&mut t.vertex, &mut t.edge, &mut t.path] {
                if slot.is_some_and(|s| !read.contains(&s)) {
                    *slot = None;
                    dropped = true;
                }
            }
        }
        node.for_each_subquery_mut(&mut |sub| dropped |= drop_unread(sub, read));
    }
    dropped
}
