//! Compiled expressions: the syntax tree's expressions with every name resolved.
//!
//! What it is: [`CExpr`], evaluated by `crate::exec::eval`: variables are slots, bind
//! parameters and constant subtrees are values, functions are library entries, subqueries are
//! pipelines.
//!
//! What it is not: the operator semantics (`crate::value`) or the functions
//! (`crate::functions`).
//!
//! Invariants: a `CExpr` holds no unresolved name; `Current` only appears inside an
//! expansion's filter, limit or projection, or inside `UPSERT FILTER` (compiled to a slot).

use serde_json::Value;

use crate::ast::{BinaryOp, UnaryOp};
use crate::functions::Function;

use super::{Pipeline, Slot};

/// A compiled expression.
pub enum CExpr {
    /// A constant.
    Const(Value),
    /// A variable.
    Slot(Slot),
    /// The element of the innermost expansion.
    Current,
    /// `base.name`.
    Attribute(Box<CExpr>, String),
    /// `base[index]`.
    Index(Box<CExpr>, Box<CExpr>),
    /// An array literal.
    Array(Vec<CExpr>),
    /// An object literal.
    Object(Vec<(CKey, CExpr)>),
    /// A prefix operator.
    Unary(UnaryOp, Box<CExpr>),
    /// `&&`: the left operand when falsy, else the right.
    And(Box<CExpr>, Box<CExpr>),
    /// `||`: the left operand when truthy, else the right.
    Or(Box<CExpr>, Box<CExpr>),
    /// Any other infix operator.
    Binary(BinaryOp, Box<CExpr>, Box<CExpr>),
    /// An array comparison.
    Quantified {
        /// The quantifier.
        quantifier: CQuantifier,
        /// The comparison.
        op: BinaryOp,
        /// The array.
        lhs: Box<CExpr>,
        /// The value.
        rhs: Box<CExpr>,
    },
    /// `c ? a : b` and `c ?: b`.
    Ternary(Box<CExpr>, Option<Box<CExpr>>, Box<CExpr>),
    /// `a..b`.
    Range(Box<CExpr>, Box<CExpr>),
    /// A function call.
    Call(&'static Function, Vec<CExpr>),
    /// A subquery: its pipeline runs on a copy of the current row; its value is the array of
    /// what it returns.
    Subquery(Box<Pipeline>),
    /// `base[*...]`.
    Expansion {
        /// The array.
        base: Box<CExpr>,
        /// Flattening depth (1 for `[*]`).
        depth: u32,
        /// Inline filter over `Current`.
        filter: Option<Box<CExpr>>,
        /// Inline limit (offset, count).
        limit: Option<(u64, u64)>,
        /// Projection over `Current`.
        projection: Option<Box<CExpr>>,
    },
}

/// An object literal's key, compiled.
pub enum CKey {
    /// A fixed name.
    Static(String),
    /// A computed name (cast to string).
    Computed(CExpr),
}

/// A quantifier, compiled.
pub enum CQuantifier {
    /// ALL.
    All,
    /// ANY.
    Any,
    /// NONE.
    None,
    /// AT LEAST (n).
    AtLeast(Box<CExpr>),
}

impl CExpr {
    /// The constant value, when this is one.
    pub fn as_const(&self) -> Option<&Value> {
        match self {
            CExpr::Const(v) => Some(v),
            _ => None,
        }
    }

    /// The conjuncts of `a && b && ...` (each of them, for a condition: it holds exactly when
    /// every conjunct does); `[self]` for anything else.
    pub fn conjuncts(&self) -> Vec<&CExpr> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                CExpr::And(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                other => out.push(other),
            }
        }
        out
    }

    /// Calls `visit` on every slot read by this expression (subqueries included).
    pub fn visit_slots(&self, visit: &mut dyn FnMut(Slot)) {
        match self {
            CExpr::Slot(s) => visit(*s),
            CExpr::Subquery(pipeline) => pipeline.visit_slots(visit),
            other => other.for_each_child(&mut |child| child.visit_slots(visit)),
        }
    }

    /// True when evaluating this expression can give different values for the same row
    /// (a non-deterministic function) or touches a collection (a subquery).
    pub fn is_volatile(&self) -> bool {
        let mut volatile = false;
        self.walk(&mut |e| match e {
            CExpr::Call(f, _) if !f.deterministic => volatile = true,
            CExpr::Subquery(_) => volatile = true,
            _ => {}
        });
        volatile
    }

    /// Calls `visit` on this expression and every sub-expression (not into subqueries).
    pub fn walk(&self, visit: &mut dyn FnMut(&CExpr)) {
        visit(self);
        self.for_each_child(&mut |child| child.walk(visit));
    }

    /// Calls `visit` on each direct sub-expression (a subquery's pipeline is not one).
    pub fn for_each_child(&self, visit: &mut dyn FnMut(&CExpr)) {
        match self {
            CExpr::Const(_) | CExpr::Slot(_) | CExpr::Current | CExpr::Subquery(_) => {}
            CExpr::Attribute(base, _) | CExpr::Unary(_, base) => visit(base),
            CExpr::Index(a, b)
            | CExpr::And(a, b)
            | CExpr::Or(a, b)
            | CExpr::Binary(_, a, b)
            | CExpr::Range(a, b) => {
                visit(a);
                visit(b);
            }
            CExpr::Array(items) | CExpr::Call(_, items) => items.iter().for_each(visit),
            CExpr::Object(entries) => {
                for (key, value) in entries {
                    if let CKey::Computed(k) = key {
                        visit(k);
                    }
                    visit(value);
                }
            }
            CExpr::Quantified {
                quantifier,
                lhs,
                rhs,
                ..
            } => {
                if let CQuantifier::AtLeast(n) = quantifier {
                    visit(n);
                }
                visit(lhs);
                visit(rhs);
            }
            CExpr::Ternary(c, t, e) => {
                visit(c);
                if let Some(t) = t {
                    visit(t);
                }
                visit(e);
            }
            CExpr::Expansion {
                base,
                filter,
                projection,
                ..
            } => {
                visit(base);
                if let Some(f) = filter {
                    visit(f);
                }
                if let Some(p) = projection {
                    visit(p);
                }
            }
        }
    }

    /// [`CExpr::for_each_child`], mutably.
    pub fn for_each_child_mut(&mut self, visit: &mut dyn FnMut(&mut CExpr)) {
        match self {
            CExpr::Const(_) | CExpr::Slot(_) | CExpr::Current | CExpr::Subquery(_) => {}
            CExpr::Attribute(base, _) | CExpr::Unary(_, base) => visit(base),
            CExpr::Index(a, b)
            | CExpr::And(a, b)
            | CExpr::Or(a, b)
            | CExpr::Binary(_, a, b)
            | CExpr::Range(a, b) => {
                visit(a);
                visit(b);
            }
            CExpr::Array(items) | CExpr::Call(_, items) => items.iter_mut().for_each(visit),
            CExpr::Object(entries) => {
                for (key, value) in entries {
                    if let CKey::Computed(k) = key {
                        visit(k);
                    }
                    visit(value);
                }
            }
            CExpr::Quantified {
                quantifier,
                lhs,
                rhs,
                ..
            } => {
                if let CQuantifier::AtLeast(n) = quantifier {
                    visit(n);
                }
                visit(lhs);
                visit(rhs);
            }
            CExpr::Ternary(c, t, e) => {
                visit(c);
                if let Some(t) = t {
                    visit(t);
                }
                visit(e);
            }
            CExpr::Expansion {
                base,
                filter,
                projection,
                ..
            } => {
                visit(base);
                if let Some(f) = filter {
                    visit(f);
                }
                if let Some(p) = projection {
                    visit(p);
                }
            }
        }
    }

    /// Calls `visit` on each subquery pipeline in this expression (not inside those).
    pub fn for_each_subquery_mut(&mut self, visit: &mut dyn FnMut(&mut Pipeline)) {
        match self {
            CExpr::Subquery(p) => visit(p),
            other => other.for_each_child_mut(&mut |child| child.for_each_subquery_mut(visit)),
        }
    }
}

impl Pipeline {
    /// Calls `visit` on every slot any node of this pipeline reads.
    pub fn visit_slots(&self, visit: &mut dyn FnMut(Slot)) {
        for node in &self.nodes {
            node.visit_expressions(&mut |e| e.visit_slots(visit));
        }
    }
}

impl super::Node {
    /// Calls `visit` on each expression of this node.
    pub fn visit_expressions(&self, visit: &mut dyn FnMut(&CExpr)) {
        use super::{Access, ModifyOp, Node};
        match self {
            Node::ForCollection(f) => {
                match &f.access {
                    Access::Full => {}
                    Access::Keys(k) => visit(k),
                    Access::Index(a) => {
                        a.prefix.iter().for_each(&mut *visit);
                        for (bound, _) in a.low.iter().chain(&a.high) {
                            visit(bound);
                        }
                    }
                }
                f.filters.iter().for_each(&mut *visit);
            }
            Node::ForValues { source, .. } => visit(source),
            Node::Let { value, .. } => visit(value),
            Node::Filter(c) => visit(c),
            Node::Sort(keys) => keys.iter().for_each(|(k, _)| visit(k)),
            Node::Limit { .. } => {}
            Node::Collect(c) => {
                c.groups.iter().for_each(|(_, e)| visit(e));
                c.aggregates.iter().for_each(|(_, _, e)| visit(e));
                if let Some((_, Some(e))) = &c.into {
                    visit(e);
                }
                if c.into.as_ref().is_some_and(|(_, e)| e.is_none()) {
                    for (_, slot) in &c.keep {
                        visit(&CExpr::Slot(*slot));
                    }
                }
            }
            Node::Window(w) => {
                if let Some(r) = &w.range_value {
                    visit(r);
                }
                w.aggregates.iter().for_each(|(_, _, e)| visit(e));
            }
            Node::Return { value, .. } => visit(value),
            Node::Traversal(t) => {
                visit(&t.start);
                if let Some((_, c)) = &t.prune {
                    visit(c);
                }
                t.conditions.iter().for_each(|c| visit(&c.condition));
            }
            Node::PathSearch(s) => {
                visit(&s.source);
                visit(&s.target);
            }
            Node::Modify(m) => match &m.kind {
                ModifyOp::Insert(d) | ModifyOp::Remove(d) => visit(d),
                ModifyOp::Update(k, d) | ModifyOp::Replace(k, d) => {
                    if let Some(k) = k {
                        visit(k);
                    }
                    visit(d);
                }
                ModifyOp::Upsert {
                    example,
                    filter,
                    insert,
                    update,
                    ..
                } => {
                    if let Some(e) = example {
                        visit(e);
                    }
                    if let Some((f, _)) = filter {
                        visit(f);
                    }
                    visit(insert);
                    visit(update);
                }
            },
        }
    }

    /// [`super::Node::visit_expressions`], mutably (without `KEEP`'s variables, which are not
    /// expressions of the node).
    pub fn visit_expressions_mut(&mut self, visit: &mut dyn FnMut(&mut CExpr)) {
        use super::{Access, ModifyOp, Node};
        match self {
            Node::ForCollection(f) => {
                match &mut f.access {
                    Access::Full => {}
                    Access::Keys(k) => visit(k),
                    Access::Index(a) => {
                        a.prefix.iter_mut().for_each(&mut *visit);
                        for (bound, _) in a.low.iter_mut().chain(a.high.iter_mut()) {
                            visit(bound);
                        }
                    }
                }
                f.filters.iter_mut().for_each(&mut *visit);
            }
            Node::ForValues { source, .. } => visit(source),
            Node::Let { value, .. } => visit(value),
            Node::Filter(c) => visit(c),
            Node::Sort(keys) => keys.iter_mut().for_each(|(k, _)| visit(k)),
            Node::Limit { .. } => {}
            Node::Collect(c) => {
                c.groups.iter_mut().for_each(|(_, e)| visit(e));
                c.aggregates.iter_mut().for_each(|(_, _, e)| visit(e));
                if let Some((_, Some(e))) = &mut c.into {
                    visit(e);
                }
            }
            Node::Window(w) => {
                if let Some(r) = &mut w.range_value {
                    visit(r);
                }
                w.aggregates.iter_mut().for_each(|(_, _, e)| visit(e));
            }
            Node::Return { value, .. } => visit(value),
            Node::Traversal(t) => {
                visit(&mut t.start);
                if let Some((_, c)) = &mut t.prune {
                    visit(c);
                }
                t.conditions
                    .iter_mut()
                    .for_each(|c| visit(&mut c.condition));
            }
            Node::PathSearch(s) => {
                visit(&mut s.source);
                visit(&mut s.target);
            }
            Node::Modify(m) => match &mut m.kind {
                ModifyOp::Insert(d) | ModifyOp::Remove(d) => visit(d),
                ModifyOp::Update(k, d) | ModifyOp::Replace(k, d) => {
                    if let Some(k) = k {
                        visit(k);
                    }
                    visit(d);
                }
                ModifyOp::Upsert {
                    example,
                    filter,
                    insert,
                    update,
                    ..
                } => {
                    if let Some(e) = example {
                        visit(e);
                    }
                    if let Some((f, _)) = filter {
                        visit(f);
                    }
                    visit(insert);
                    visit(update);
                }
            },
        }
    }

    /// Calls `visit` on each subquery pipeline directly inside this node's expressions.
    pub fn for_each_subquery_mut(&mut self, visit: &mut dyn FnMut(&mut Pipeline)) {
        self.visit_expressions_mut(&mut |e| e.for_each_subquery_mut(visit));
    }
}
