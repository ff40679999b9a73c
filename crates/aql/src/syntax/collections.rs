//! The collections a query names statically, as `POST /_api/query` lists them.
//!
//! What it is: [`collections`], a scope-aware walk that collects `WITH` collections, the
//! collections written by data modifications, and every bare name that is not a variable
//! where it is used (`FOR x IN users`, `LENGTH(users)`), sorted and without repeats.
//!
//! What it is not: bind parameters (`@@c`) are not resolved; they are listed by
//! [`super::bind_parameters`] instead.
//!
//! Invariants: the scope rules are the parser's ([`super::scope::Scopes`]); after a data
//! modification, `NEW` and `OLD` are variables, not collections.

use std::collections::BTreeSet;

use super::scope::{ScopeKind, Scopes};
use super::walk::children;
use crate::ast::{
    CollectionRef, Expr, GraphRef, ModifyKind, Operation, OperationKind, Query, UpsertSearch,
};

/// The collection names of `query`, sorted.
pub fn collections(query: &Query) -> Vec<String> {
    let mut finder = Finder {
        scopes: Scopes::default(),
        found: BTreeSet::new(),
    };
    finder.scopes.open(ScopeKind::Main);
    for c in &query.with {
        finder.collection(c);
    }
    finder.operations(&query.operations, false);
    finder.found.into_iter().collect()
}

/// The walk's state.
struct Finder {
    scopes: Scopes,
    found: BTreeSet<String>,
}

impl Finder {
    fn collection(&mut self, c: &CollectionRef) {
        if let CollectionRef::Name(name) = c {
            self.found.insert(name.clone());
        }
    }

    fn operations(&mut self, operations: &[Operation], mut modified: bool) {
        for op in operations {
            match &op.kind {
                OperationKind::For {
                    variable,
                    source,
                    options,
                } => {
                    self.expr(source, modified);
                    self.opt(options.as_ref(), modified);
                    self.scopes.open(ScopeKind::For);
                    self.scopes.declare_unchecked(variable);
                }
                OperationKind::Let { variable, value } => {
                    self.expr(value, modified);
                    self.scopes.declare_unchecked(variable);
                }
                OperationKind::Filter(e) => self.expr(e, modified),
                OperationKind::Search { condition, options } => {
                    self.expr(condition, modified);
                    self.opt(options.as_ref(), modified);
                }
                OperationKind::Sort(keys) => {
                    keys.iter().for_each(|k| self.expr(&k.value, modified))
                }
                OperationKind::Limit { offset, count } => {
                    self.opt(offset.as_ref(), modified);
                    self.expr(count, modified);
                }
                OperationKind::Collect(c) => {
                    let mut own = Vec::new();
                    for (name, value) in c.groups.iter().chain(&c.aggregates) {
                        self.expr(value, modified);
                        own.push((name.clone(), self.scopes.declare_unchecked(name)));
                    }
                    if let Some(into) = &c.into {
                        self.opt(into.value.as_ref(), modified);
                    }
                    self.opt(c.options.as_ref(), modified);
                    if self.scopes.start_collect() {
                        for (name, id) in own {
                            self.scopes.redeclare(&name, id);
                        }
                    }
                    if let Some(into) = &c.into {
                        self.scopes.declare_unchecked(&into.variable);
                    }
                    if let Some(name) = &c.count_into {
                        self.scopes.declare_unchecked(name);
                    }
                }
                OperationKind::Window(w) => {
                    self.opt(w.range_value.as_ref(), modified);
                    self.expr(&w.bounds, modified);
                    for (name, value) in &w.aggregates {
                        self.expr(value, modified);
                        self.scopes.declare_unchecked(name);
                    }
                }
                OperationKind::Return { value, .. } => self.expr(value, modified),
                OperationKind::Modify(m) => {
                    let exprs: Vec<&Expr> = match &m.kind {
                        ModifyKind::Insert { document } => vec![document],
                        ModifyKind::Update { key, document }
                        | ModifyKind::Replace { key, document } => {
                            key.iter().chain(std::iter::once(document)).collect()
                        }
                        ModifyKind::Remove { key } => vec![key],
                        ModifyKind::Upsert {
                            search,
                            insert,
                            update,
                            ..
                        } => {
                            let (UpsertSearch::Example(s) | UpsertSearch::Filter(s)) = search;
                            vec![s, insert, update]
                        }
                    };
                    exprs.into_iter().for_each(|e| self.expr(e, modified));
                    self.collection(&m.collection);
                    self.opt(m.options.as_ref(), modified);
                    modified = true;
                }
                OperationKind::Traversal(t) => {
                    self.opt(t.depth.as_ref(), modified);
                    self.expr(&t.start, modified);
                    self.graph(&t.graph);
                    self.scopes.open(ScopeKind::For);
                    for name in std::iter::once(&t.vertex).chain(&t.edge).chain(&t.path) {
                        self.scopes.declare_unchecked(name);
                    }
                    if let Some(prune) = &t.prune {
                        self.expr(&prune.condition, modified);
                        if let Some(name) = &prune.variable {
                            self.scopes.declare_unchecked(name);
                        }
                    }
                    self.opt(t.options.as_ref(), modified);
                }
                OperationKind::PathSearch(s) => {
                    self.opt(s.depth.as_ref(), modified);
                    self.expr(&s.source, modified);
                    self.expr(&s.target, modified);
                    self.graph(&s.graph);
                    self.scopes.open(ScopeKind::For);
                    for name in std::iter::once(&s.variable).chain(&s.edge) {
                        self.scopes.declare_unchecked(name);
                    }
                    self.opt(s.options.as_ref(), modified);
                }
            }
        }
    }

    /// The edge collections a graph operation names (a named graph's collections are the
    /// planner's: the parser does not read graph definitions).
    fn graph(&mut self, graph: &GraphRef) {
        if let GraphRef::Collections(list) = graph {
            list.iter().for_each(|(_, c)| self.collection(c));
        }
    }

    fn opt(&mut self, e: Option<&Expr>, modified: bool) {
        if let Some(e) = e {
            self.expr(e, modified);
        }
    }

    fn expr(&mut self, e: &Expr, modified: bool) {
        match e {
            Expr::Name(name) => {
                let special = modified && (name == "NEW" || name == "OLD");
                if !special && self.scopes.lookup(name).is_none() {
                    self.found.insert(name.clone());
                }
            }
            Expr::Subquery(q) => {
                self.scopes.open(ScopeKind::Subquery);
                self.operations(&q.operations, modified);
                self.scopes.close_query();
            }
            _ => children(e).into_iter().for_each(|c| self.expr(c, modified)),
        }
    }
}
