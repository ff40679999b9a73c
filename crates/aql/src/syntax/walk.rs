//! A walk over a parsed query in the order its parts are written.
//!
//! What it is: [`walk_query`] and [`walk_expr`], calling back for every expression (before
//! its parts), every bind-parameter object key and every collection reference, so callers
//! can list bind parameters in order of first appearance or find the names an expression
//! uses.
//!
//! What it is not: scope-aware; callers that must tell variables from collections use
//! [`super::scope::Scopes`] themselves.
//!
//! Invariants: parts are visited in source order (an `UPDATE key WITH doc IN coll OPTIONS
//! {...}` visits key, doc, coll, options).

use crate::ast::{
    CollectionRef, Expr, GraphRef, ModifyKind, ObjectKey, OperationKind, Quantifier, Query,
    UpsertSearch,
};

/// What the walk reports.
pub(crate) enum Item<'a> {
    /// An expression, before its parts.
    Expr(&'a Expr),
    /// An object key `@name:`.
    KeyBind(&'a String),
    /// A collection where only a collection may stand.
    Collection(&'a CollectionRef),
}

/// Walks `query` (its `WITH` collections, then its operations).
pub(crate) fn walk_query<'a>(query: &'a Query, f: &mut impl FnMut(Item<'a>)) {
    for c in &query.with {
        f(Item::Collection(c));
    }
    for op in &query.operations {
        walk_operation(&op.kind, f);
    }
}

fn walk_operation<'a>(kind: &'a OperationKind, f: &mut dyn FnMut(Item<'a>)) {
    let opt = |e: &'a Option<Expr>, f: &mut dyn FnMut(Item<'a>)| {
        if let Some(e) = e {
            walk_expr_dyn(e, f);
        }
    };
    match kind {
        OperationKind::For {
            source, options, ..
        } => {
            walk_expr_dyn(source, f);
            opt(options, f);
        }
        OperationKind::Let { value, .. } => walk_expr_dyn(value, f),
        OperationKind::Filter(e) => walk_expr_dyn(e, f),
        OperationKind::Search { condition, options } => {
            walk_expr_dyn(condition, f);
            opt(options, f);
        }
        OperationKind::Sort(keys) => keys.iter().for_each(|k| walk_expr_dyn(&k.value, f)),
        OperationKind::Limit { offset, count } => {
            opt(offset, f);
            walk_expr_dyn(count, f);
        }
        OperationKind::Collect(c) => {
            for (_, e) in c.groups.iter().chain(&c.aggregates) {
                walk_expr_dyn(e, f);
            }
            if let Some(into) = &c.into {
                opt(&into.value, f);
            }
            opt(&c.options, f);
        }
        OperationKind::Window(w) => {
            opt(&w.range_value, f);
            walk_expr_dyn(&w.bounds, f);
            w.aggregates.iter().for_each(|(_, e)| walk_expr_dyn(e, f));
        }
        OperationKind::Return { value, .. } => walk_expr_dyn(value, f),
        OperationKind::Modify(m) => {
            match &m.kind {
                ModifyKind::Insert { document } => walk_expr_dyn(document, f),
                ModifyKind::Update { key, document } | ModifyKind::Replace { key, document } => {
                    opt(key, f);
                    walk_expr_dyn(document, f);
                }
                ModifyKind::Remove { key } => walk_expr_dyn(key, f),
                ModifyKind::Upsert {
                    search,
                    insert,
                    update,
                    ..
                } => {
                    match search {
                        UpsertSearch::Example(e) | UpsertSearch::Filter(e) => walk_expr_dyn(e, f),
                    }
                    walk_expr_dyn(insert, f);
                    walk_expr_dyn(update, f);
                }
            }
            f(Item::Collection(&m.collection));
            opt(&m.options, f);
        }
        OperationKind::Traversal(t) => {
            opt(&t.depth, f);
            walk_expr_dyn(&t.start, f);
            walk_graph(&t.graph, f);
            if let Some(prune) = &t.prune {
                walk_expr_dyn(&prune.condition, f);
            }
            opt(&t.options, f);
        }
        OperationKind::PathSearch(s) => {
            opt(&s.depth, f);
            walk_expr_dyn(&s.source, f);
            walk_expr_dyn(&s.target, f);
            walk_graph(&s.graph, f);
            opt(&s.options, f);
        }
    }
}

fn walk_graph<'a>(graph: &'a GraphRef, f: &mut dyn FnMut(Item<'a>)) {
    match graph {
        GraphRef::Named(name) => walk_expr_dyn(name, f),
        GraphRef::Collections(list) => list.iter().for_each(|(_, c)| f(Item::Collection(c))),
    }
}

/// Walks `expr` and its parts.
pub(crate) fn walk_expr<'a>(expr: &'a Expr, f: &mut impl FnMut(Item<'a>)) {
    walk_expr_dyn(expr, f);
}

fn walk_expr_dyn<'a>(expr: &'a Expr, f: &mut dyn FnMut(Item<'a>)) {
    f(Item::Expr(expr));
    match expr {
        Expr::Literal(_)
        | Expr::Name(_)
        | Expr::Bind(_)
        | Expr::BindCollection(_)
        | Expr::Current => {}
        Expr::Array(items) => items.iter().for_each(|e| walk_expr_dyn(e, f)),
        Expr::Object(entries) => {
            for (key, value) in entries {
                match key {
                    ObjectKey::Static(_) => {}
                    ObjectKey::Computed(k) => walk_expr_dyn(k, f),
                    ObjectKey::Bind(name) => f(Item::KeyBind(name)),
                }
                walk_expr_dyn(value, f);
            }
        }
        Expr::Attribute(base, _) => walk_expr_dyn(base, f),
        Expr::Index(base, index) => {
            walk_expr_dyn(base, f);
            walk_expr_dyn(index, f);
        }
        Expr::Expansion(x) => {
            walk_expr_dyn(&x.base, f);
            if let Some(e) = &x.filter {
                walk_expr_dyn(e, f);
            }
            if let Some((offset, count)) = &x.limit {
                if let Some(o) = offset {
                    walk_expr_dyn(o, f);
                }
                walk_expr_dyn(count, f);
            }
            if let Some(e) = &x.projection {
                walk_expr_dyn(e, f);
            }
        }
        Expr::Unary(_, e) => walk_expr_dyn(e, f),
        Expr::Binary(_, l, r) | Expr::Range(l, r) => {
            walk_expr_dyn(l, f);
            walk_expr_dyn(r, f);
        }
        Expr::Quantified {
            quantifier,
            lhs,
            rhs,
            ..
        } => {
            walk_expr_dyn(lhs, f);
            if let Quantifier::AtLeast(n) = quantifier {
                walk_expr_dyn(n, f);
            }
            walk_expr_dyn(rhs, f);
        }
        Expr::Ternary {
            condition,
            then,
            otherwise,
        } => {
            walk_expr_dyn(condition, f);
            if let Some(t) = then {
                walk_expr_dyn(t, f);
            }
            walk_expr_dyn(otherwise, f);
        }
        Expr::Call { args, .. } => args.iter().for_each(|e| walk_expr_dyn(e, f)),
        Expr::Subquery(q) => {
            for c in &q.with {
                f(Item::Collection(c));
            }
            for op in &q.operations {
                walk_operation(&op.kind, f);
            }
        }
    }
}

/// The bare names `expr` uses (possible variable references), in order, without repeats.
pub(crate) fn referenced(expr: &Expr) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    walk_expr(expr, &mut |item| {
        if let Item::Expr(Expr::Name(name)) = item {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    });
    names
}

/// The direct sub-expressions of `expr` in source order (bind keys and subqueries'
/// contents excluded).
pub(crate) fn children(expr: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    match expr {
        Expr::Literal(_)
        | Expr::Name(_)
        | Expr::Bind(_)
        | Expr::BindCollection(_)
        | Expr::Current
        | Expr::Subquery(_) => {}
        Expr::Array(items) => out.extend(items),
        Expr::Object(entries) => {
            for (key, value) in entries {
                if let ObjectKey::Computed(k) = key {
                    out.push(k);
                }
                out.push(value);
            }
        }
        Expr::Attribute(base, _) | Expr::Unary(_, base) => out.push(base),
        Expr::Index(l, r) | Expr::Binary(_, l, r) | Expr::Range(l, r) => {
            out.push(l);
            out.push(r);
        }
        Expr::Expansion(x) => {
            out.push(&x.base);
            out.extend(&x.filter);
            if let Some((offset, count)) = &x.limit {
                out.extend(offset);
                out.push(count);
            }
            out.extend(&x.projection);
        }
        Expr::Quantified {
            quantifier,
            lhs,
            rhs,
            ..
        } => {
            out.push(lhs);
            if let Quantifier::AtLeast(n) = quantifier {
                out.push(n);
            }
            out.push(rhs);
        }
        Expr::Ternary {
            condition,
            then,
            otherwise,
        } => {
            out.push(condition);
            if let Some(t) = then {
                out.push(t);
            }
            out.push(otherwise);
        }
        Expr::Call { args, .. } => out.extend(args),
    }
    out
}
