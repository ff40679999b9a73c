//! From the syntax tree to a plan: names resolved, bind parameters checked and substituted,
//! options read, constants folded.
//!
//! What it is: [`compile`], one pass over the tree with a stack of scopes (one level per
//! subquery; `COLLECT` empties its level, as AQL hides the variables before it).
//!
//! What it is not: the choice of access paths (`optimize.rs`) or execution.
//!
//! Invariants: every bind parameter given is used and every one used is given (1551, 1552); a
//! name that is not a variable is a collection (1203 when there is none, 1568 when a
//! collection is used as a value); function names and arities are checked (1540, 1541); a
//! collection is not read after the query modified it (1579).

use std::collections::HashSet;
use std::sync::Arc;

use quince_errors::{self as codes, ArangoError, Result};
use quince_ops::{DatabaseOps, OverwriteMode};
use serde_json::{Map, Value};

use crate::ast::{self, BinaryOp, CollectionRef, Expr, ObjectKey, OperationKind, Quantifier};
use crate::exec::fold;
use crate::functions;

mod graph;

use super::{
    Access, Aggregate, CExpr, CKey, CQuantifier, CollectNode, ForCollection, ModifyNode, ModifyOp,
    ModifyOptions, Node, Pipeline, Plan, Slot, UsedCollection, WindowNode,
};

/// Functions never folded at compile time although their results depend only on their
/// arguments: they read collections, the session, or exist to stop optimization.
const NOT_FOLDED: &[&str] = &[
    "DOCUMENT",
    "COLLECTION_COUNT",
    "COLLECTIONS",
    "CURRENT_USER",
    "CURRENT_DATABASE",
    "FAIL",
    "ASSERT",
    "WARN",
    "NOOPT",
    "V8",
    "SLEEP",
];

/// Compiles `query` against `database` with `binds` (the request's `bindVars`).
/// `full_count` makes the last top-level `LIMIT` count what it would have cut.
pub fn compile(
    query: &ast::Query,
    database: &Arc<dyn DatabaseOps>,
    binds: &Map<String, Value>,
    full_count: bool,
) -> Result<Plan> {
    let mut compiler = Compiler {
        database,
        binds,
        used_binds: HashSet::new(),
        slots: Vec::new(),
        scopes: vec![Vec::new()],
        collections: Vec::new(),
        modified: Vec::new(),
        expansion_depth: 0,
        deterministic: true,
        wait_for_sync: false,
        bind_variables: false,
        warnings: Vec::new(),
    };
    for with in &query.with {
        let name = compiler.collection_name(with)?;
        compiler.collection(&name)?;
    }
    let mut root = compiler.pipeline(&query.operations, true)?;
    for name in binds.keys() {
        if !compiler.used_binds.contains(name.as_str()) {
            return Err(parse_error(
                codes::QUERY_BIND_PARAMETER_UNDECLARED,
                format!("bind parameter '{name}' was not declared in the query"),
            ));
        }
    }
    if full_count {
        if let Some(Node::Limit { full_count, .. }) = root
            .nodes
            .iter_mut()
            .rev()
            .find(|n| matches!(n, Node::Limit { .. }))
        {
            *full_count = true;
        }
    }
    let modifies = !compiler.modified.is_empty();
    mark_snapshots(&mut root, &compiler.modified);
    Ok(Plan {
        root,
        slots: compiler.slots,
        collections: compiler.collections,
        rules: Vec::new(),
        modifies,
        wait_for_sync: compiler.wait_for_sync,
        deterministic: compiler.deterministic && !modifies,
        warnings: compiler.warnings,
    })
}

/// Compiles one expression outside any query, with the bind parameters named `variables`
/// standing for slots `0..` rather than for values (for expressions compiled once and
/// evaluated many times, such as a collection's computed values, whose `@doc` changes with
/// every write): the compiled expression and the number of slots a row for it needs.
pub fn compile_expression(
    expr: &Expr,
    database: &Arc<dyn DatabaseOps>,
    variables: &[&str],
) -> Result<(CExpr, usize)> {
    let binds = Map::new();
    let mut compiler = Compiler {
        database,
        binds: &binds,
        used_binds: HashSet::new(),
        slots: Vec::new(),
        scopes: vec![Vec::new()],
        collections: Vec::new(),
        modified: Vec::new(),
        expansion_depth: 0,
        deterministic: true,
        wait_for_sync: false,
        bind_variables: true,
        warnings: Vec::new(),
    };
    for variable in variables {
        compiler.define(&format!("@{variable}"))?;
    }
    let compiled = compiler.expr(expr)?;
    Ok((compiled, compiler.slots.len()))
}

/// An error of the compile stage, in ArangoDB's wording.
pub(crate) fn parse_error(code: quince_errors::ErrorCode, message: String) -> ArangoError {
    ArangoError::with_message(code, format!("AQL: {message} (while parsing)"))
}

struct Compiler<'a> {
    database: &'a Arc<dyn DatabaseOps>,
    binds: &'a Map<String, Value>,
    used_binds: HashSet<String>,
    slots: Vec<String>,
    scopes: Vec<Vec<(String, Slot)>>,
    collections: Vec<UsedCollection>,
    modified: Vec<String>,
    expansion_depth: u32,
    deterministic: bool,
    wait_for_sync: bool,
    /// True: a value bind parameter `@x` is the variable defined as `@x` when there is one
    /// (`compile_expression`); false: always the value given with the query.
    bind_variables: bool,
    /// Warnings found while compiling (unknown graph options).
    warnings: Vec<crate::value::Warning>,
}

impl Compiler<'_> {
    fn new_slot(&mut self, name: &str) -> Slot {
        self.slots.push(name.to_owned());
        self.slots.len() - 1
    }

    fn define(&mut self, name: &str) -> Result<Slot> {
        let level = self.scopes.last().expect("a scope");
        if level.iter().any(|(n, _)| n == name) && !is_implicit(name) {
            return Err(parse_error(
                codes::QUERY_VARIABLE_REDECLARED,
                format!("variable '{name}' is assigned multiple times"),
            ));
        }
        let slot = self.new_slot(name);
        let level = self.scopes.last_mut().expect("a scope");
        level.retain(|(n, _)| n != name);
        level.push((name.to_owned(), slot));
        Ok(slot)
    }

    fn lookup(&self, name: &str) -> Option<Slot> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|level| level.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    fn visible(&self) -> Vec<(String, Slot)> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for level in self.scopes.iter().rev() {
            for (name, slot) in level.iter().rev() {
                if !name.starts_with('#') && seen.insert(name.clone()) {
                    out.push((name.clone(), *slot));
                }
            }
        }
        out.reverse();
        out
    }

    /// The slot a bind parameter stands for, when binds are variables (`compile_expression`).
    fn bound_variable(&self, name: &str) -> Option<Slot> {
        self.bind_variables
            .then(|| self.lookup(&format!("@{name}")))
            .flatten()
    }

    fn bind(&mut self, name: &str) -> Result<Value> {
        self.used_binds.insert(name.to_owned());
        self.binds.get(name).cloned().ok_or_else(|| {
            parse_error(
                codes::QUERY_BIND_PARAMETER_MISSING,
                format!("no value specified for declared bind parameter '{name}'"),
            )
        })
    }

    fn collection_name(&mut self, reference: &CollectionRef) -> Result<String> {
        match reference {
            CollectionRef::Name(name) => Ok(name.clone()),
            CollectionRef::Bind(name) => self.bound_collection(name),
        }
    }

    fn bound_collection(&mut self, name: &str) -> Result<String> {
        let key = format!("@{name}");
        match self.bind(&key)? {
            Value::String(collection) => Ok(collection),
            _ => Err(parse_error(
                codes::QUERY_BIND_PARAMETER_TYPE,
                format!("bind parameter '{key}' has an invalid value or type"),
            )),
        }
    }

    fn collection(&mut self, name: &str) -> Result<Arc<dyn quince_ops::CollectionOps>> {
        let collection = self.database.collection(name).map_err(|e| {
            if e.is(codes::ARANGO_DATA_SOURCE_NOT_FOUND) {
                ArangoError::with_message(
                    codes::ARANGO_DATA_SOURCE_NOT_FOUND,
                    format!("AQL: collection or view not found: {name} (while parsing)"),
                )
            } else {
                e
            }
        })?;
        let name = collection.name();
        if !self.collections.iter().any(|c| c.name == name) {
            self.collections.push(UsedCollection {
                name,
                write: false,
                exclusive: false,
            });
        }
        Ok(collection)
    }

    fn pipeline(&mut self, operations: &[ast::Operation], top_level: bool) -> Result<Pipeline> {
        let mut nodes = Vec::new();
        for operation in operations {
            self.operation(operation, &mut nodes)?;
        }
        let ends_well = matches!(
            nodes.last(),
            Some(Node::Return { .. }) | Some(Node::Modify(_))
        );
        if top_level && !ends_well {
            return Err(parse_error(
                codes::QUERY_PARSE,
                "query must end with a RETURN or a data-modification operation".into(),
            ));
        }
        Ok(Pipeline { nodes })
    }

    fn operation(&mut self, operation: &ast::Operation, nodes: &mut Vec<Node>) -> Result<()> {
        match &operation.kind {
            OperationKind::For {
                variable,
                source,
                options: _,
            } => {
                let target = match source {
                    Expr::Name(name) if self.lookup(name).is_none() => Some(name.clone()),
                    Expr::BindCollection(name) => Some(self.bound_collection(name)?),
                    _ => None,
                };
                match target {
                    Some(name) => {
                        let collection = self.collection(&name)?;
                        let name = collection.name();
                        if self.modified.contains(&name) {
                            return Err(parse_error(
                                codes::QUERY_ACCESS_AFTER_MODIFICATION,
                                format!("access after data-modification by collection '{name}'"),
                            ));
                        }
                        let slot = self.define(variable)?;
                        nodes.push(Node::ForCollection(ForCollection {
                            slot,
                            name,
                            collection,
                            access: Access::Full,
                            filters: Vec::new(),
                            snapshot: false,
                            projection: None,
                            filter_projection: None,
                            remote: None,
                        }));
                    }
                    None => {
                        let source = self.expr(source)?;
                        let slot = self.define(variable)?;
                        nodes.push(Node::ForValues { slot, source });
                    }
                }
            }
            OperationKind::Let { variable, value } => {
                let value = self.expr(value)?;
                let slot = self.define(variable)?;
                nodes.push(Node::Let { slot, value });
            }
            OperationKind::Filter(condition) => nodes.push(Node::Filter(self.expr(condition)?)),
            OperationKind::Search { .. } => {
                return Err(parse_error(
                    codes::QUERY_PARSE,
                    "SEARCH needs a view, and Quince has no views yet".into(),
                ))
            }
            OperationKind::Sort(keys) => {
                let keys = keys
                    .iter()
                    .map(|k| Ok((self.expr(&k.value)?, k.ascending)))
                    .collect::<Result<Vec<_>>>()?;
                nodes.push(Node::Sort(keys));
            }
            OperationKind::Limit { offset, count } => {
                let offset = match offset {
                    Some(e) => self.limit_value(e)?.unwrap_or(0),
                    None => 0,
                };
                let count = self.limit_value(count)?;
                nodes.push(Node::Limit {
                    offset,
                    count,
                    full_count: false,
                });
            }
            OperationKind::Collect(collect) => nodes.push(Node::Collect(self.collect(collect)?)),
            OperationKind::Window(window) => nodes.push(Node::Window(self.window(window)?)),
            OperationKind::Return { distinct, value } => nodes.push(Node::Return {
                value: self.expr(value)?,
                distinct: *distinct,
            }),
            OperationKind::Modify(modify) => {
                nodes.push(Node::Modify(Box::new(self.modify(modify)?)));
            }
            OperationKind::Traversal(t) => {
                nodes.push(Node::Traversal(Box::new(self.traversal(t)?)));
            }
            OperationKind::PathSearch(s) => {
                nodes.push(Node::PathSearch(Box::new(self.path_search(s)?)));
            }
        }
        Ok(())
    }

    fn limit_value(&mut self, expr: &Expr) -> Result<Option<u64>> {
        let value = self.constant(expr, "LIMIT")?;
        match value {
            Value::Null => Ok(None),
            Value::Number(n) => match n.as_f64() {
                Some(f) if f >= 0.0 && f.is_finite() => Ok(Some(f as u64)),
                _ => Err(limit_error()),
            },
            _ => Err(limit_error()),
        }
    }

    /// An expression that must be known before the query runs (LIMIT, OPTIONS).
    fn constant(&mut self, expr: &Expr, what: &str) -> Result<Value> {
        match self.expr(expr)? {
            CExpr::Const(v) => Ok(v),
            _ => Err(parse_error(
                codes::QUERY_COMPILE_TIME_OPTIONS,
                format!("{what} value must be readable at query compile time"),
            )),
        }
    }

    fn collect(&mut self, collect: &ast::Collect) -> Result<CollectNode> {
        let mut groups = Vec::new();
        for (_, value) in &collect.groups {
            groups.push(self.expr(value)?);
        }
        let mut aggregates = Vec::new();
        for (_, value) in &collect.aggregates {
            aggregates.push(self.aggregate(value)?);
        }
        let into_value = match &collect.into {
            Some(ast::CollectInto {
                value: Some(value), ..
            }) => Some(self.expr(value)?),
            _ => None,
        };
        let keep = if collect.into.is_some() && into_value.is_none() {
            if collect.keep.is_empty() {
                self.visible()
            } else {
                collect
                    .keep
                    .iter()
                    .map(|name| {
                        self.lookup(name).map(|s| (name.clone(), s)).ok_or_else(|| {
                            parse_error(
                                codes::QUERY_VARIABLE_NAME_UNKNOWN,
                                format!("unknown variable '{name}' in KEEP"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?
            }
        } else {
            Vec::new()
        };
        // COLLECT hides every variable of its own level.
        self.scopes.last_mut().expect("a scope").clear();
        let groups = collect
            .groups
            .iter()
            .zip(groups)
            .map(|((name, _), value)| Ok((self.define(name)?, value)))
            .collect::<Result<Vec<_>>>()?;
        let aggregates = collect
            .aggregates
            .iter()
            .zip(aggregates)
            .map(|((name, _), (aggregate, input))| Ok((self.define(name)?, aggregate, input)))
            .collect::<Result<Vec<_>>>()?;
        let into = match &collect.into {
            Some(into) => Some((self.define(&into.variable)?, into_value)),
            None => None,
        };
        let count = match &collect.count_into {
            Some(name) => Some(self.define(name)?),
            None => None,
        };
        Ok(CollectNode {
            groups,
            aggregates,
            into,
            keep,
            count,
        })
    }

    fn aggregate(&mut self, expr: &Expr) -> Result<(Aggregate, CExpr)> {
        let Expr::Call { name, args, .. } = expr else {
            return Err(aggregate_error());
        };
        if args.len() != 1 {
            return Err(aggregate_error());
        }
        let aggregate = match name.as_str() {
            "LENGTH" | "COUNT" => Aggregate::Count,
            "SUM" => Aggregate::Sum,
            "MIN" => Aggregate::Min,
            "MAX" => Aggregate::Max,
            "AVERAGE"
            | "AVG"
            | "UNIQUE"
            | "SORTED_UNIQUE"
            | "COUNT_DISTINCT"
            | "COUNT_UNIQUE"
            | "PUSH"
            | "STDDEV"
            | "STDDEV_POPULATION"
            | "STDDEV_SAMPLE"
            | "VARIANCE"
            | "VARIANCE_POPULATION"
            | "VARIANCE_SAMPLE"
            | "BIT_AND"
            | "BIT_OR"
            | "BIT_XOR" => match functions::lookup(name) {
                Some(f) => Aggregate::Function(f),
                None => return Err(aggregate_error()),
            },
            _ => return Err(aggregate_error()),
        };
        Ok((aggregate, self.expr(&args[0])?))
    }

    fn window(&mut self, window: &ast::Window) -> Result<WindowNode> {
        let range_value = match &window.range_value {
            Some(e) => Some(self.expr(e)?),
            None => None,
        };
        let bounds = self.constant(&window.bounds, "WINDOW")?;
        let bound = |name: &str| -> Result<Option<f64>> {
            match bounds.get(name) {
                None => Ok(Some(0.0)),
                Some(Value::String(s)) if s.eq_ignore_ascii_case("unbounded") => Ok(None),
                Some(Value::Number(n)) => Ok(Some(n.as_f64().unwrap_or(0.0).max(0.0))),
                Some(Value::String(s)) => s
                    .parse::<f64>()
                    .map(Some)
                    .map_err(|_| bad_window(&format!("unsupported WINDOW bound '{s}'"))),
                Some(_) => Err(bad_window("WINDOW bounds must be numbers or \"unbounded\"")),
            }
        };
        let (preceding, following) = (bound("preceding")?, bound("following")?);
        let mut inputs = Vec::new();
        for (_, value) in &window.aggregates {
            inputs.push(self.aggregate(value)?);
        }
        let aggregates = window
            .aggregates
            .iter()
            .zip(inputs)
            .map(|((name, _), (aggregate, input))| Ok((self.define(name)?, aggregate, input)))
            .collect::<Result<Vec<_>>>()?;
        Ok(WindowNode {
            range_value,
            preceding,
            following,
            aggregates,
        })
    }

    fn modify(&mut self, modify: &ast::Modify) -> Result<ModifyNode> {
        let name = self.collection_name(&modify.collection)?;
        let collection = self.collection(&name)?;
        let name = collection.name();
        let options = match &modify.options {
            Some(e) => modify_options(self.constant(e, "OPTIONS")?)?,
            None => ModifyOptions::default(),
        };
        let kind = match &modify.kind {
            ast::ModifyKind::Insert { document } => ModifyOp::Insert(self.expr(document)?),
            ast::ModifyKind::Update { key, document } => {
                ModifyOp::Update(self.opt_expr(key.as_ref())?, self.expr(document)?)
            }
            ast::ModifyKind::Replace { key, document } => {
                ModifyOp::Replace(self.opt_expr(key.as_ref())?, self.expr(document)?)
            }
            ast::ModifyKind::Remove { key } => ModifyOp::Remove(self.expr(key)?),
            ast::ModifyKind::Upsert {
                search,
                insert,
                update,
                replace,
            } => {
                let (example, filter) = match search {
                    ast::UpsertSearch::Example(e) => (Some(self.expr(e)?), None),
                    ast::UpsertSearch::Filter(cond) => {
                        let slot = self.new_slot("#current");
                        self.scopes.push(vec![("#current".to_owned(), slot)]);
                        let result = self.expr(cond);
                        self.scopes.pop();
                        (None, Some((result?, slot)))
                    }
                };
                let insert = self.expr(insert)?;
                let old_slot = self.new_slot("OLD");
                self.scopes.push(vec![("OLD".to_owned(), old_slot)]);
                let update = self.expr(update);
                self.scopes.pop();
                ModifyOp::Upsert {
                    example,
                    filter,
                    insert,
                    update: update?,
                    replace: *replace,
                    old_slot,
                }
            }
        };
        self.wait_for_sync |= options.wait_for_sync;
        if let Some(used) = self.collections.iter_mut().find(|c| c.name == name) {
            used.write = true;
            used.exclusive |= options.exclusive;
        }
        if !self.modified.contains(&name) {
            self.modified.push(name.clone());
        }
        let new_slot = self.define("NEW")?;
        let old_slot = match &kind {
            ModifyOp::Upsert { old_slot, .. } => {
                let slot = *old_slot;
                let level = self.scopes.last_mut().expect("a scope");
                level.retain(|(n, _)| n != "OLD");
                level.push(("OLD".to_owned(), slot));
                slot
            }
            _ => self.define("OLD")?,
        };
        Ok(ModifyNode {
            kind,
            name,
            collection,
            options,
            new_slot: Some(new_slot),
            old_slot: Some(old_slot),
        })
    }

    fn opt_expr(&mut self, expr: Option<&Expr>) -> Result<Option<CExpr>> {
        expr.map(|e| self.expr(e)).transpose()
    }

    fn expr(&mut self, expr: &Expr) -> Result<CExpr> {
        Ok(match expr {
            Expr::Literal(v) => CExpr::Const(v.clone()),
            Expr::Array(items) => {
                let items = items
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<Result<Vec<_>>>()?;
                fold(CExpr::Array(items))
            }
            Expr::Object(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let key = match key {
                        ObjectKey::Static(name) => CKey::Static(name.clone()),
                        ObjectKey::Computed(e) => match self.expr(e)? {
                            CExpr::Const(Value::String(s)) => CKey::Static(s),
                            other => CKey::Computed(other),
                        },
                        ObjectKey::Bind(name) => match self.bind(name)? {
                            Value::String(s) => CKey::Static(s),
                            _ => {
                                return Err(parse_error(
                                    codes::QUERY_BIND_PARAMETER_TYPE,
                                    format!("bind parameter '{name}' has an invalid value or type"),
                                ))
                            }
                        },
                    };
                    out.push((key, self.expr(value)?));
                }
                fold(CExpr::Object(out))
            }
            Expr::Name(name) => match self.lookup(name) {
                Some(slot) => CExpr::Slot(slot),
                None => return Err(self.collection_as_value(name)),
            },
            Expr::Bind(name) => match self.bound_variable(name) {
                Some(slot) => CExpr::Slot(slot),
                None => CExpr::Const(self.bind(name)?),
            },
            Expr::BindCollection(name) => {
                let collection = self.bound_collection(name)?;
                return Err(self.collection_as_value(&collection));
            }
            Expr::Current => match self.lookup("#current") {
                Some(slot) if self.expansion_depth == 0 => CExpr::Slot(slot),
                _ if self.expansion_depth > 0 => CExpr::Current,
                _ => {
                    return Err(parse_error(
                        codes::QUERY_PARSE,
                        "CURRENT is only valid inside an array expansion or UPSERT FILTER".into(),
                    ))
                }
            },
            Expr::Attribute(base, name) => {
                fold(CExpr::Attribute(Box::new(self.expr(base)?), name.clone()))
            }
            Expr::Index(base, index) => {
                let base = self.expr(base)?;
                let index = self.expr(index)?;
                fold(CExpr::Index(Box::new(base), Box::new(index)))
            }
            Expr::Expansion(expansion) => {
                let base = self.expr(&expansion.base)?;
                self.expansion_depth += 1;
                let inner = self.expansion_parts(expansion);
                self.expansion_depth -= 1;
                let (filter, limit, projection) = inner?;
                CExpr::Expansion {
                    base: Box::new(base),
                    depth: expansion.depth,
                    filter: filter.map(Box::new),
                    limit,
                    projection: projection.map(Box::new),
                }
            }
            Expr::Unary(op, operand) => fold(CExpr::Unary(*op, Box::new(self.expr(operand)?))),
            Expr::Binary(op, lhs, rhs) => {
                let (lhs, rhs) = (Box::new(self.expr(lhs)?), Box::new(self.expr(rhs)?));
                fold(match op {
                    BinaryOp::And => CExpr::And(lhs, rhs),
                    BinaryOp::Or => CExpr::Or(lhs, rhs),
                    op => CExpr::Binary(*op, lhs, rhs),
                })
            }
            Expr::Quantified {
                quantifier,
                op,
                lhs,
                rhs,
            } => {
                let quantifier = match quantifier {
                    Quantifier::All => CQuantifier::All,
                    Quantifier::Any => CQuantifier::Any,
                    Quantifier::None => CQuantifier::None,
                    Quantifier::AtLeast(n) => CQuantifier::AtLeast(Box::new(self.expr(n)?)),
                };
                fold(CExpr::Quantified {
                    quantifier,
                    op: *op,
                    lhs: Box::new(self.expr(lhs)?),
                    rhs: Box::new(self.expr(rhs)?),
                })
            }
            Expr::Ternary {
                condition,
                then,
                otherwise,
            } => {
                let condition = Box::new(self.expr(condition)?);
                let then = match then {
                    Some(t) => Some(Box::new(self.expr(t)?)),
                    None => None,
                };
                fold(CExpr::Ternary(
                    condition,
                    then,
                    Box::new(self.expr(otherwise)?),
                ))
            }
            Expr::Range(low, high) => fold(CExpr::Range(
                Box::new(self.expr(low)?),
                Box::new(self.expr(high)?),
            )),
            Expr::Call { name, args, .. } => self.call(name, args)?,
            Expr::Subquery(query) => {
                self.scopes.push(Vec::new());
                let pipeline = self.pipeline(&query.operations, false);
                self.scopes.pop();
                CExpr::Subquery(Box::new(pipeline?))
            }
        })
    }

    #[allow(clippy::type_complexity)]
    fn expansion_parts(
        &mut self,
        expansion: &ast::Expansion,
    ) -> Result<(Option<CExpr>, Option<(u64, u64)>, Option<CExpr>)> {
        let filter = self.opt_expr(expansion.filter.as_ref())?;
        let limit = match &expansion.limit {
            Some((offset, count)) => {
                let offset = match offset {
                    Some(o) => self.limit_value(o)?.unwrap_or(0),
                    None => 0,
                };
                Some((offset, self.limit_value(count)?.unwrap_or(u64::MAX)))
            }
            None => None,
        };
        let projection = self.opt_expr(expansion.projection.as_ref())?;
        Ok((filter, limit, projection))
    }

    fn call(&mut self, name: &str, args: &[Expr]) -> Result<CExpr> {
        // `LENGTH(collection)` and `COUNT(collection)` count the collection's documents.
        let counts_collection = matches!(name, "LENGTH" | "COUNT")
            && matches!(args, [Expr::Name(n)] if self.lookup(n).is_none())
            || matches!(args, [Expr::BindCollection(_)]);
        let name = if counts_collection && matches!(name, "LENGTH" | "COUNT") {
            "COLLECTION_COUNT"
        } else {
            name
        };
        let Some(function) = functions::lookup(name) else {
            return Err(if name.contains("::") {
                parse_error(
                    codes::QUERY_FUNCTION_NOT_FOUND,
                    format!("user function '{name}()' not found"),
                )
            } else {
                parse_error(
                    codes::QUERY_FUNCTION_NAME_UNKNOWN,
                    format!("usage of unknown function '{name}()'"),
                )
            });
        };
        if args.len() < function.min_args || args.len() > function.max_args {
            let max = if function.max_args == usize::MAX {
                "unlimited".to_owned()
            } else {
                function.max_args.to_string()
            };
            return Err(parse_error(
                codes::QUERY_FUNCTION_ARGUMENT_NUMBER_MISMATCH,
                format!(
                    "invalid number of arguments for function '{name}()', expected number of \
                     arguments: minimum: {}, maximum: {max}",
                    function.min_args
                ),
            ));
        }
        let mut compiled = Vec::with_capacity(args.len());
        for arg in args {
            // A collection may stand as a function's argument: its name is the value.
            let value = match arg {
                Expr::Name(n) if self.lookup(n).is_none() => CExpr::Const(Value::String(n.clone())),
                Expr::BindCollection(b) => CExpr::Const(Value::String(self.bound_collection(b)?)),
                other => self.expr(other)?,
            };
            compiled.push(value);
        }
        if !function.deterministic {
            self.deterministic = false;
        }
        if !function.deterministic || NOT_FOLDED.contains(&function.name) {
            if NOT_FOLDED.contains(&function.name) {
                self.deterministic = false;
            }
            return Ok(CExpr::Call(function, compiled));
        }
        Ok(fold(CExpr::Call(function, compiled)))
    }

    fn collection_as_value(&self, name: &str) -> ArangoError {
        let exists = match self.database.collection(name) {
            Ok(_) => true,
            Err(e) => !e.is(codes::ARANGO_DATA_SOURCE_NOT_FOUND),
        };
        if exists {
            parse_error(
                codes::QUERY_COLLECTION_USED_IN_EXPRESSION,
                format!("collection '{name}' used as expression operand"),
            )
        } else {
            ArangoError::with_message(
                codes::ARANGO_DATA_SOURCE_NOT_FOUND,
                format!("AQL: collection or view not found: {name} (while parsing)"),
            )
        }
    }
}

/// `NEW` and `OLD` may be defined again by a later modification.
fn is_implicit(name: &str) -> bool {
    name == "NEW" || name == "OLD"
}

fn limit_error() -> ArangoError {
    parse_error(
        codes::QUERY_NUMBER_OUT_OF_RANGE,
        "LIMIT value is not a number or out of range".into(),
    )
}

fn aggregate_error() -> ArangoError {
    parse_error(
        codes::QUERY_INVALID_AGGREGATE_EXPRESSION,
        "invalid aggregate expression".into(),
    )
}

fn bad_window(message: &str) -> ArangoError {
    parse_error(codes::BAD_PARAMETER, message.to_owned())
}

/// Reads a modification's `OPTIONS` object.
fn modify_options(value: Value) -> Result<ModifyOptions> {
    let Value::Object(map) = value else {
        return Err(parse_error(
            codes::QUERY_COMPILE_TIME_OPTIONS,
            "OPTIONS must be an object".into(),
        ));
    };
    let mut options = ModifyOptions::default();
    let mut other = Map::new();
    for (name, value) in map {
        let flag = crate::value::truthy(&value);
        match name.as_str() {
            "ignoreErrors" => options.ignore_errors = flag,
            "waitForSync" => options.wait_for_sync = flag,
            "keepNull" => options.keep_null = flag,
            "mergeObjects" => options.merge_objects = flag,
            "ignoreRevs" => options.ignore_revs = flag,
            "exclusive" => options.exclusive = flag,
            "overwrite" if flag => options.overwrite_mode = OverwriteMode::Replace,
            "overwriteMode" => {
                options.overwrite_mode = match value.as_str() {
                    Some("ignore") => OverwriteMode::Ignore,
                    Some("replace") => OverwriteMode::Replace,
                    Some("update") => OverwriteMode::Update,
                    Some("conflict") => OverwriteMode::Conflict,
                    _ => {
                        return Err(parse_error(
                            codes::BAD_PARAMETER,
                            "overwriteMode must be one of ignore, replace, update, conflict".into(),
                        ))
                    }
                }
            }
            _ => {
                other.insert(name, value);
            }
        }
    }
    options.other = Value::Object(other);
    Ok(options)
}

/// Marks every scan of a collection the query writes as a snapshot scan.
fn mark_snapshots(pipeline: &mut Pipeline, modified: &[String]) {
    for node in &mut pipeline.nodes {
        if let Node::ForCollection(f) = node {
            if modified.contains(&f.name) {
                f.snapshot = true;
            }
        }
        node.for_each_subquery_mut(&mut |p| mark_snapshots(p, modified));
    }
}
