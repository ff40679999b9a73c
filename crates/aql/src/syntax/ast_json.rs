//! ArangoDB's JSON form of a parsed query's syntax tree, for the `ast` of `POST /_api/query`.
//!
//! What it is: [`ast_json`], giving `[{"type": "root", "subNodes": [...]}]` with ArangoDB's
//! node types and attributes for the common nodes: `for`, `let`, `filter`, `sort`, `limit`,
//! `return`, `variable` and `reference` (`name`, `id`), `collection` and `parameter`/
//! `datasource parameter` (`name`), `value` (`value`), `array`, `object` and `object
//! element`, `attribute access`, `indexed access`, `function call` (`name`, one `array` of
//! arguments), the `compare`, `logical`, arithmetic and `unary` operators, `ternary`,
//! `range`. As in ArangoDB, `LIKE` and `=~` are calls of `LIKE` and `REGEX_TEST` (negated
//! forms wrapped in `unary not`) and a subquery is a `let` of a numbered variable placed
//! before the operation that uses it.
//!
//! Graph operations are `traversal` (sub-nodes: `direction` with the direction's number and
//! the depth, the start, the graph as a value/`parameter` or a `collection list`, the prune
//! condition or `no-op`, the options or `no-op`, then the variables), `shortest path`
//! (direction, source, target, graph, options, variables) and `enumerate paths` (the search's
//! keyword as a value, then as `shortest path`).
//!
//! What it is not: byte-for-byte ArangoDB for the rarer nodes. `collect`, `window`,
//! `expansion`, `search` and the data modifications keep ArangoDB's node types but lay out
//! their sub-nodes in a simpler, documented order; internal variable numbers may differ
//! where ArangoDB creates hidden variables.
//!
//! Invariants: variables are numbered from 0 in declaration order; a bare name is a
//! `reference` when a variable of that name is visible, else a `collection`; `subNodes` is
//! left out when a node has none.

use serde_json::{json, Map, Value};

use super::scope::{ScopeKind, Scopes};
use crate::ast::{
    BinaryOp, CollectionRef, Expr, GraphDirection, GraphRef, ModifyKind, ObjectKey, Operation,
    OperationKind, PathKind, Quantifier, Query, UnaryOp, UpsertSearch,
};

/// The AST JSON of `query`.
pub fn ast_json(query: &Query) -> Value {
    let mut gen = Gen {
        scopes: Scopes::default(),
        current: Vec::new(),
    };
    gen.scopes.open(ScopeKind::Main);
    let mut nodes = Vec::new();
    if !query.with.is_empty() {
        let collections = query.with.iter().map(collection).collect();
        nodes.push(node("with collections", &[], collections));
    }
    gen.operations(&query.operations, &mut nodes);
    json!([node("root", &[], nodes)])
}

/// A node: `type`, extra attributes, then `subNodes` unless empty.
fn node(kind: &str, attributes: &[(&str, Value)], sub_nodes: Vec<Value>) -> Value {
    let mut map = Map::new();
    map.insert("type".into(), Value::from(kind));
    for (name, value) in attributes {
        map.insert((*name).into(), value.clone());
    }
    if !sub_nodes.is_empty() {
        map.insert("subNodes".into(), Value::Array(sub_nodes));
    }
    Value::Object(map)
}

/// ArangoDB's numbers of the directions.
fn direction_number(direction: GraphDirection) -> u32 {
    match direction {
        GraphDirection::Any => 0,
        GraphDirection::Inbound => 1,
        GraphDirection::Outbound => 2,
    }
}

fn no_op() -> Value {
    node("no-op", &[], Vec::new())
}

fn value(v: Value) -> Value {
    node("value", &[("value", v)], Vec::new())
}

fn collection(c: &CollectionRef) -> Value {
    match c {
        CollectionRef::Name(name) => node("collection", &[("name", name.as_str().into())], vec![]),
        CollectionRef::Bind(name) => node(
            "datasource parameter",
            &[("name", format!("@{name}").into())],
            vec![],
        ),
    }
}

fn variable(name: &str, id: u32) -> Value {
    node(
        "variable",
        &[("name", name.into()), ("id", id.into())],
        Vec::new(),
    )
}

fn reference(name: &str, id: u32) -> Value {
    node(
        "reference",
        &[("name", name.into()), ("id", id.into())],
        Vec::new(),
    )
}

fn call(name: &str, args: Vec<Value>) -> Value {
    let kind = if name.contains("::") {
        "user function call"
    } else {
        "function call"
    };
    node(
        kind,
        &[("name", name.into())],
        vec![node("array", &[], args)],
    )
}

/// The generator's state: scopes for names and numbers, and the `CURRENT` variables of the
/// enclosing inline expressions.
struct Gen {
    scopes: Scopes,
    current: Vec<(String, u32)>,
}

impl Gen {
    fn declare(&mut self, name: &str) -> Value {
        let id = self.scopes.declare_unchecked(name);
        variable(name, id)
    }

    fn operations(&mut self, operations: &[Operation], out: &mut Vec<Value>) {
        for op in operations {
            let generated = self.operation(&op.kind, out);
            out.push(generated);
        }
    }

    fn opt(&mut self, e: Option<&Expr>, out: &mut Vec<Value>) -> Value {
        e.map_or_else(no_op, |e| self.expr(e, out))
    }

    fn operation(&mut self, kind: &OperationKind, out: &mut Vec<Value>) -> Value {
        match kind {
            OperationKind::For {
                variable,
                source,
                options,
            } => {
                let source = self.expr(source, out);
                let options = options.as_ref().map(|o| self.expr(o, out));
                self.scopes.open(ScopeKind::For);
                let mut subs = vec![self.declare(variable), source];
                subs.extend(options);
                node("for", &[], subs)
            }
            OperationKind::Let { variable, value } => {
                let value = self.expr(value, out);
                node("let", &[], vec![self.declare(variable), value])
            }
            OperationKind::Filter(e) => node("filter", &[], vec![self.expr(e, out)]),
            OperationKind::Search { condition, options } => {
                let mut subs = vec![self.expr(condition, out)];
                subs.extend(options.as_ref().map(|o| self.expr(o, out)));
                node("search", &[], subs)
            }
            OperationKind::Sort(keys) => {
                let elements = keys
                    .iter()
                    .map(|k| {
                        let v = self.expr(&k.value, out);
                        node("sort element", &[], vec![v, value(k.ascending.into())])
                    })
                    .collect();
                node("sort", &[], vec![node("array", &[], elements)])
            }
            OperationKind::Limit { offset, count } => {
                let offset = offset
                    .as_ref()
                    .map_or_else(|| value(0.into()), |o| self.expr(o, out));
                node("limit", &[], vec![offset, self.expr(count, out)])
            }
            OperationKind::Return { distinct, value } => {
                let v = self.expr(value, out);
                let v = if *distinct {
                    node("distinct", &[], vec![v])
                } else {
                    v
                };
                node("return", &[], vec![v])
            }
            OperationKind::Collect(c) => {
                let assigns = |gen: &mut Gen, list: &[(String, Expr)], out: &mut Vec<Value>| {
                    let mut nodes = Vec::new();
                    let mut own = Vec::new();
                    for (name, e) in list {
                        let v = gen.expr(e, out);
                        let id = gen.scopes.declare_unchecked(name);
                        own.push((name.clone(), id));
                        nodes.push(node("assign", &[], vec![variable(name, id), v]));
                    }
                    (node("array", &[], nodes), own)
                };
                let (groups, mut own) = assigns(self, &c.groups, out);
                let (mut aggregates, own_aggregates) = assigns(self, &c.aggregates, out);
                own.extend(own_aggregates);
                let into_value = c.into.as_ref().and_then(|i| i.value.as_ref());
                let into_value = self.opt(into_value, out);
                let options = self.opt(c.options.as_ref(), out);
                if self.scopes.start_collect() {
                    for (name, id) in &own {
                        self.scopes.redeclare(name, *id);
                    }
                }
                let into = c
                    .into
                    .as_ref()
                    .map_or_else(no_op, |i| self.declare(&i.variable));
                if let Some(name) = &c.count_into {
                    let count = node(
                        "assign",
                        &[],
                        vec![self.declare(name), call("LENGTH", vec![])],
                    );
                    aggregates = node("array", &[], vec![count]);
                }
                let keep = if c.keep.is_empty() {
                    no_op()
                } else {
                    let names = c.keep.iter().map(|k| self.name(k, false)).collect();
                    node("array", &[], names)
                };
                node(
                    "collect",
                    &[],
                    vec![options, groups, aggregates, into, into_value, keep],
                )
            }
            OperationKind::Window(w) => {
                let range = self.opt(w.range_value.as_ref(), out);
                let bounds = self.expr(&w.bounds, out);
                let mut nodes = Vec::new();
                for (name, e) in &w.aggregates {
                    let v = self.expr(e, out);
                    nodes.push(node("assign", &[], vec![self.declare(name), v]));
                }
                node(
                    "window",
                    &[],
                    vec![bounds, range, node("array", &[], nodes)],
                )
            }
            OperationKind::Modify(m) => {
                let (kind, exprs): (&str, Vec<Option<&Expr>>) = match &m.kind {
                    ModifyKind::Insert { document } => ("insert", vec![Some(document)]),
                    ModifyKind::Update { key, document } => {
                        ("update", vec![Some(document), key.as_ref()])
                    }
                    ModifyKind::Replace { key, document } => {
                        ("replace", vec![Some(document), key.as_ref()])
                    }
                    ModifyKind::Remove { key } => ("remove", vec![Some(key)]),
                    ModifyKind::Upsert {
                        search,
                        insert,
                        update,
                        replace,
                    } => {
                        let (UpsertSearch::Example(s) | UpsertSearch::Filter(s)) = search;
                        let kind = if *replace { "upsert replace" } else { "upsert" };
                        (kind, vec![Some(s), Some(insert), Some(update)])
                    }
                };
                let kind = if kind == "upsert replace" {
                    "upsert"
                } else {
                    kind
                };
                if let ModifyKind::Upsert {
                    search: UpsertSearch::Filter(_),
                    ..
                } = &m.kind
                {
                    self.current.push(("$CURRENT".into(), u32::MAX));
                }
                let mut subs = vec![self.opt(m.options.as_ref(), out), collection(&m.collection)];
                for (i, e) in exprs.into_iter().enumerate() {
                    subs.push(self.opt(e, out));
                    if i == 0 {
                        if let ModifyKind::Upsert {
                            search: UpsertSearch::Filter(_),
                            ..
                        } = &m.kind
                        {
                            self.current.pop();
                        }
                    }
                }
                node(kind, &[], subs)
            }
            OperationKind::Traversal(t) => {
                let direction = self.direction(t.direction, t.depth.as_ref(), out);
                let start = self.expr(&t.start, out);
                let graph = self.graph(&t.graph, out);
                self.scopes.open(ScopeKind::For);
                let mut variables = vec![self.declare(&t.vertex)];
                variables.extend(t.edge.as_ref().map(|e| self.declare(e)));
                variables.extend(t.path.as_ref().map(|p| self.declare(p)));
                let prune = match &t.prune {
                    Some(p) => {
                        let condition = self.expr(&p.condition, out);
                        match &p.variable {
                            Some(name) => node("let", &[], vec![self.declare(name), condition]),
                            None => condition,
                        }
                    }
                    None => no_op(),
                };
                let options = self.opt(t.options.as_ref(), out);
                let mut subs = vec![direction, start, graph, prune, options];
                subs.extend(variables);
                node("traversal", &[], subs)
            }
            OperationKind::PathSearch(p) => {
                let direction = self.direction(p.direction, p.depth.as_ref(), out);
                let source = self.expr(&p.source, out);
                let target = self.expr(&p.target, out);
                let graph = self.graph(&p.graph, out);
                let options = self.opt(p.options.as_ref(), out);
                self.scopes.open(ScopeKind::For);
                let mut subs = Vec::new();
                let kind = match p.kind {
                    PathKind::Shortest => "shortest path",
                    _ => {
                        subs.push(value(p.kind.keyword().into()));
                        "enumerate paths"
                    }
                };
                subs.extend([direction, source, target, graph, options]);
                subs.push(self.declare(&p.variable));
                subs.extend(p.edge.as_ref().map(|e| self.declare(e)));
                node(kind, &[], subs)
            }
        }
    }

    /// ArangoDB's `direction` node: the direction's number (0 any, 1 inbound, 2 outbound) and
    /// the depth (1 when none is written).
    fn direction(
        &mut self,
        direction: GraphDirection,
        depth: Option<&Expr>,
        out: &mut Vec<Value>,
    ) -> Value {
        let steps = depth.map_or_else(|| value(1.into()), |d| self.expr(d, out));
        node(
            "direction",
            &[],
            vec![value(direction_number(direction).into()), steps],
        )
    }

    /// A named graph (its name as a value or parameter) or a `collection list`.
    fn graph(&mut self, graph: &GraphRef, out: &mut Vec<Value>) -> Value {
        match graph {
            GraphRef::Named(name) => self.expr(name, out),
            GraphRef::Collections(list) => {
                let items = list
                    .iter()
                    .map(|(direction, c)| match direction {
                        Some(d) => node(
                            "direction",
                            &[],
                            vec![value(direction_number(*d).into()), collection(c)],
                        ),
                        None => collection(c),
                    })
                    .collect();
                node("collection list", &[], items)
            }
        }
    }

    /// A bare name: a reference to a visible variable, else a collection.
    fn name(&self, name: &str, _in_expr: bool) -> Value {
        match self.scopes.lookup(name) {
            Some(id) => reference(name, id),
            None if name == "NEW" || name == "OLD" => {
                node("reference", &[("name", format!("${name}").into())], vec![])
            }
            None => node("collection", &[("name", name.into())], vec![]),
        }
    }

    fn expr(&mut self, e: &Expr, out: &mut Vec<Value>) -> Value {
        match e {
            Expr::Literal(v) => value(v.clone()),
            Expr::Array(items) => {
                let items = items.iter().map(|i| self.expr(i, out)).collect();
                node("array", &[], items)
            }
            Expr::Object(entries) => {
                let mut elements = Vec::new();
                for (key, v) in entries {
                    let element = match key {
                        ObjectKey::Static(name) => {
                            let v = self.expr(v, out);
                            node("object element", &[("name", name.as_str().into())], vec![v])
                        }
                        ObjectKey::Computed(k) => {
                            let k = self.expr(k, out);
                            let v = self.expr(v, out);
                            node("calculated object element", &[], vec![k, v])
                        }
                        ObjectKey::Bind(name) => {
                            let k = node("parameter", &[("name", name.as_str().into())], vec![]);
                            let v = self.expr(v, out);
                            node("calculated object element", &[], vec![k, v])
                        }
                    };
                    elements.push(element);
                }
                node("object", &[], elements)
            }
            Expr::Name(name) => self.name(name, true),
            Expr::Bind(name) => node("parameter", &[("name", name.as_str().into())], vec![]),
            Expr::BindCollection(name) => node(
                "datasource parameter",
                &[("name", format!("@{name}").into())],
                vec![],
            ),
            Expr::Current => match self.current.last() {
                Some((name, id)) if *id != u32::MAX => reference(name, *id),
                _ => node("reference", &[("name", "$CURRENT".into())], vec![]),
            },
            Expr::Attribute(base, name) => {
                let base = self.expr(base, out);
                node(
                    "attribute access",
                    &[("name", name.as_str().into())],
                    vec![base],
                )
            }
            Expr::Index(base, index) => {
                let base = self.expr(base, out);
                let index = self.expr(index, out);
                node("indexed access", &[], vec![base, index])
            }
            Expr::Expansion(x) => {
                let base = self.expr(&x.base, out);
                let id = self.scopes.declare_unchecked("");
                let name = format!("{id}_");
                let iterator = node("iterator", &[], vec![variable(&name, id), base]);
                self.current.push((name.clone(), id));
                let projection = match &x.projection {
                    Some(p) => self.expr(p, out),
                    None => reference(&name, id),
                };
                let filter = self.opt(x.filter.as_ref(), out);
                let limit = match &x.limit {
                    Some((offset, count)) => {
                        let offset = offset
                            .as_ref()
                            .map_or_else(|| value(0.into()), |o| self.expr(o, out));
                        node("array limit", &[], vec![offset, self.expr(count, out)])
                    }
                    None => no_op(),
                };
                self.current.pop();
                let levels = ("levels", Value::from(x.depth));
                node(
                    "expansion",
                    &[levels],
                    vec![iterator, projection, filter, limit, no_op()],
                )
            }
            Expr::Unary(op, operand) => {
                let kind = match op {
                    UnaryOp::Not => "unary not",
                    UnaryOp::Minus => "unary minus",
                    UnaryOp::Plus => "unary plus",
                };
                node(kind, &[], vec![self.expr(operand, out)])
            }
            Expr::Binary(op, lhs, rhs) => {
                let l = self.expr(lhs, out);
                let r = self.expr(rhs, out);
                binary(*op, l, r)
            }
            Expr::Quantified {
                quantifier,
                op,
                lhs,
                rhs,
            } => {
                let l = self.expr(lhs, out);
                let q = match quantifier {
                    Quantifier::All => node("quantifier", &[("quantifier", "all".into())], vec![]),
                    Quantifier::Any => node("quantifier", &[("quantifier", "any".into())], vec![]),
                    Quantifier::None => {
                        node("quantifier", &[("quantifier", "none".into())], vec![])
                    }
                    Quantifier::AtLeast(n) => {
                        let n = self.expr(n, out);
                        node("quantifier", &[("quantifier", "at least".into())], vec![n])
                    }
                };
                let r = self.expr(rhs, out);
                let kind = format!("array {}", comparison_name(*op));
                node(&kind, &[], vec![l, r, q])
            }
            Expr::Ternary {
                condition,
                then,
                otherwise,
            } => {
                let mut subs = vec![self.expr(condition, out)];
                if let Some(t) = then {
                    subs.push(self.expr(t, out));
                }
                subs.push(self.expr(otherwise, out));
                node("ternary", &[], subs)
            }
            Expr::Range(l, r) => {
                let l = self.expr(l, out);
                let r = self.expr(r, out);
                node("range", &[], vec![l, r])
            }
            Expr::Call { name, args, .. } => {
                let args = args.iter().map(|a| self.expr(a, out)).collect();
                call(name, args)
            }
            Expr::Subquery(q) => {
                let id = self.scopes.declare_unchecked("");
                let name = id.to_string();
                self.scopes.open(ScopeKind::Subquery);
                let mut inner = Vec::new();
                self.operations(&q.operations, &mut inner);
                self.scopes.close_query();
                let subquery = node("subquery", &[], inner);
                out.push(node("let", &[], vec![variable(&name, id), subquery]));
                reference(&name, id)
            }
        }
    }
}

/// `compare ==` and friends for the comparison operators.
fn comparison_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Eq => "compare ==",
        BinaryOp::Ne => "compare !=",
        BinaryOp::Lt => "compare <",
        BinaryOp::Le => "compare <=",
        BinaryOp::Gt => "compare >",
        BinaryOp::Ge => "compare >=",
        BinaryOp::In => "compare in",
        BinaryOp::NotIn => "compare not in",
        _ => "compare",
    }
}

fn binary(op: BinaryOp, l: Value, r: Value) -> Value {
    let not = |v| node("unary not", &[], vec![v]);
    match op {
        BinaryOp::Or => node("logical or", &[], vec![l, r]),
        BinaryOp::And => node("logical and", &[], vec![l, r]),
        BinaryOp::Add => node("plus", &[], vec![l, r]),
        BinaryOp::Sub => node("minus", &[], vec![l, r]),
        BinaryOp::Mul => node("times", &[], vec![l, r]),
        BinaryOp::Div => node("division", &[], vec![l, r]),
        BinaryOp::Mod => node("modulus", &[], vec![l, r]),
        BinaryOp::Like => call("LIKE", vec![l, r]),
        BinaryOp::NotLike => not(call("LIKE", vec![l, r])),
        BinaryOp::RegexMatch => call("REGEX_TEST", vec![l, r]),
        BinaryOp::RegexNotMatch => not(call("REGEX_TEST", vec![l, r])),
        cmp => node(comparison_name(cmp), &[], vec![l, r]),
    }
}
