//! Computed-value expressions: `RETURN <expr>` over `@doc`, checked as ArangoDB checks them
//! and compiled once, then evaluated for each write that computes the value.
//!
//! What it is: [`ComputedValueCompiler`], the operations interface's [`ExpressionCompiler`]
//! over AQL. It parses the text, refuses what ArangoDB refuses in a computation expression
//! (anything but one `RETURN`; `FOR`, `LET` and subqueries; a collection; a bind parameter
//! other than `@doc`; functions that read data, the session or the server, call other
//! functions by name, or wait), then compiles the expression with `@doc` as a variable so
//! each evaluation only binds it.
//!
//! What it is not: a query. Nothing here touches a database: expressions are compiled and run
//! against a database that holds nothing (every collection is missing), so even a rule missed
//! by the checks above could not read data. Nor is it where values are stored into the
//! document (`quince_ops::ComputedValues`).
//!
//! Invariants: an expression accepted here evaluates without any lock, I/O or database access
//! (engines evaluate it while holding a collection's write lock); a warning fails the
//! evaluation only when asked to; a function that is not deterministic (`DATE_NOW()`,
//! `RAND()`) is allowed, as in ArangoDB, and is evaluated per write.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use quince_ops::{
    CollectionOps, ComputedExpression, CreateCollection, DatabaseOps, ExpressionCompiler,
    TransactionOps, TransactionOptions,
};
use serde_json::Value;

use crate::ast::{Expr, OperationKind};
use crate::exec::{Context, Control, Env, Executor};
use crate::plan::{self, CExpr, Pipeline, Plan};
use crate::syntax::walk::{walk_expr, Item};
use crate::QueryOptions;

/// The bind parameter that holds the document.
const DOC: &str = "doc";

/// Where ArangoDB's messages about a computation expression say they come from.
const CONTEXT: &str = " in computation expression";

/// Functions a computation expression may not call: they read documents, collections or the
/// session, call functions by name, or (`SLEEP`) would hold the collection's write lock while
/// they wait.
const FORBIDDEN: &[&str] = &[
    "APPLY",
    "CALL",
    "COLLECTIONS",
    "COLLECTION_COUNT",
    "CURRENT_DATABASE",
    "CURRENT_USER",
    "DOCUMENT",
    "FULLTEXT",
    "NEAR",
    "PREGEL_RESULT",
    "SCHEMA_GET",
    "SCHEMA_VALIDATE",
    "SLEEP",
    "V8",
    "VERSION",
    "WITHIN",
    "WITHIN_RECTANGLE",
];

/// The [`ExpressionCompiler`] of computed values, over AQL.
#[derive(Clone, Copy, Debug, Default)]
pub struct ComputedValueCompiler;

impl ComputedValueCompiler {
    /// The compiler as the engines take it.
    pub fn shared() -> Arc<dyn ExpressionCompiler> {
        Arc::new(ComputedValueCompiler)
    }
}

impl ExpressionCompiler for ComputedValueCompiler {
    fn compile(&self, text: &str) -> Result<Arc<dyn ComputedExpression>> {
        let query = crate::syntax::parse(text)
            .map_err(|e| ArangoError::with_message(e.code, format!("{}{CONTEXT}", e.message)))?;
        let value = match query.operations.as_slice() {
            _ if !query.with.is_empty() => return Err(forbidden_node("with")),
            [only] => match &only.kind {
                OperationKind::Return { value, .. } => value,
                other => return Err(forbidden_node(operation_name(other))),
            },
            _ => {
                let not_return = query
                    .operations
                    .iter()
                    .find(|op| !matches!(op.kind, OperationKind::Return { .. }));
                return Err(match not_return {
                    Some(op) => forbidden_node(operation_name(&op.kind)),
                    None => needs_return(),
                });
            }
        };
        check(value)?;
        let nothing: Arc<dyn DatabaseOps> = Arc::new(NoDatabase);
        let (expr, slots) = plan::compile_expression(value, &nothing, &[DOC])?;
        let plan = Plan {
            root: Pipeline { nodes: Vec::new() },
            slots: vec![format!("@{DOC}"); slots],
            collections: Vec::new(),
            rules: Vec::new(),
            modifies: false,
            wait_for_sync: false,
            deterministic: false,
            warnings: Vec::new(),
        };
        Ok(Arc::new(Compiled {
            expr,
            plan,
            database: nothing,
        }))
    }
}

/// One compiled expression.
struct Compiled {
    expr: CExpr,
    /// An empty plan: the executor's evaluation needs one for its slot names.
    plan: Plan,
    database: Arc<dyn DatabaseOps>,
}

impl ComputedExpression for Compiled {
    fn evaluate(&self, doc: &Value, fail_on_warning: bool) -> Result<Value> {
        let options = QueryOptions {
            fail_on_warning,
            ..QueryOptions::default()
        };
        let context = Context::new(
            Arc::clone(&self.database),
            Control::new(None),
            None,
            &options,
        );
        let mut executor = Executor::new(&self.plan, context);
        let owned_row;
        let row: &[Value] = if self.plan.slots.len() == 1 {
            std::slice::from_ref(doc)
        } else {
            // Inline expansions may take slots of their own; `@doc` is the first.
            let mut row = vec![Value::Null; self.plan.slots.len()];
            row[0] = doc.clone();
            owned_row = row;
            &owned_row
        };
        let value = executor
            .eval(&self.expr, Env { row, current: None })?
            .into_owned();
        executor.ctx.take_failure()?;
        Ok(value)
    }
}

/// The checks ArangoDB makes of a computation expression's parts.
fn check(value: &Expr) -> Result<()> {
    let mut failure: Option<ArangoError> = None;
    walk_expr(value, &mut |item| {
        if failure.is_some() {
            return;
        }
        failure = match item {
            Item::Expr(Expr::Subquery(_)) => Some(forbidden_node("subquery")),
            Item::Expr(Expr::Name(_)) => Some(forbidden_node("collection")),
            Item::Expr(Expr::BindCollection(name)) => Some(bad_bind(&format!("@{name}"))),
            Item::Expr(Expr::Bind(name)) if name != DOC => Some(bad_bind(name)),
            Item::KeyBind(name) => Some(bad_bind(name)),
            Item::Expr(Expr::Call { name, .. })
                if FORBIDDEN.contains(&name.as_str()) || name.contains("::") =>
            {
                Some(bad(format!("Function '{name}' is forbidden{CONTEXT}")))
            }
            _ => None,
        };
    });
    failure.map_or(Ok(()), Err)
}

fn bad(message: String) -> ArangoError {
    ArangoError::with_message(BAD_PARAMETER, message)
}

fn forbidden_node(kind: &str) -> ArangoError {
    bad(format!("Node type '{kind}' is forbidden{CONTEXT}"))
}

fn needs_return() -> ArangoError {
    bad(format!(
        "Computation expression needs to start with a RETURN statement{CONTEXT}"
    ))
}

fn bad_bind(name: &str) -> ArangoError {
    bad(format!("Invalid bind parameter '{name}' found"))
}

fn operation_name(kind: &OperationKind) -> &'static str {
    match kind {
        OperationKind::For { .. } => "for",
        OperationKind::Traversal(_) => "traversal",
        OperationKind::PathSearch(s) if s.kind == crate::ast::PathKind::Shortest => "shortest path",
        OperationKind::PathSearch(_) => "enumerate paths",
        OperationKind::Let { .. } => "let",
        OperationKind::Filter(_) => "filter",
        OperationKind::Search { .. } => "search",
        OperationKind::Sort(_) => "sort",
        OperationKind::Limit { .. } => "limit",
        OperationKind::Collect(_) => "collect",
        OperationKind::Window(_) => "window",
        OperationKind::Return { .. } => "return",
        OperationKind::Modify(_) => "modification",
    }
}

/// A database with nothing in it: what computation expressions are compiled and run against.
struct NoDatabase;

fn nothing_here() -> ArangoError {
    bad(format!("no data can be accessed{CONTEXT}"))
}

impl DatabaseOps for NoDatabase {
    fn name(&self) -> &str {
        "_system"
    }

    fn id(&self) -> u64 {
        0
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        Vec::new()
    }

    fn collection(&self, _name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(ArangoError::new(
            quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND,
        ))
    }

    fn create_collection(&self, _request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Err(nothing_here())
    }

    fn drop_collection(&self, _name: &str, _is_system: bool) -> Result<u64> {
        Err(nothing_here())
    }

    fn rename_collection(&self, _name: &str, _new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(nothing_here())
    }

    fn begin_transaction(&self, _options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Err(nothing_here())
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        Err(quince_ops::transaction_not_found(id))
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn compile(text: &str) -> Result<Arc<dyn ComputedExpression>> {
        ComputedValueCompiler.compile(text)
    }

    #[test]
    fn evaluates_over_doc() {
        let doc = json!({"_key": "k", "a": 2, "tags": ["X", "y", "Z"], "s": "AbC"});
        let cases = [
            ("RETURN @doc.a * 21", json!(42)),
            ("RETURN LOWER(@doc.s)", json!("abc")),
            (
                "RETURN @doc.tags[* FILTER CURRENT != 'y' RETURN LOWER(CURRENT)]",
                json!(["x", "z"]),
            ),
            ("RETURN CONCAT(@doc._key, '-', @doc.a)", json!("k-2")),
            ("RETURN @doc.missing", Value::Null),
            ("RETURN @doc.a > 1 ? 'big' : 'small'", json!("big")),
        ];
        for (text, wanted) in cases {
            let compiled = compile(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            assert_eq!(compiled.evaluate(&doc, false).unwrap(), wanted, "{text}");
        }
    }

    #[test]
    fn refuses_what_arangodb_refuses() {
        let cases = [
            ("RETURN", 1501),
            ("1 + 1", 1501),
            ("FOR x IN [1] RETURN x", 10),
            ("LET x = 1 RETURN x", 10),
            ("RETURN (FOR x IN [1] RETURN x)", 10),
            ("RETURN things", 10),
            ("RETURN @other", 10),
            ("RETURN @@coll", 10),
            ("RETURN DOCUMENT('c/k')", 10),
            ("RETURN CURRENT_USER()", 10),
            ("RETURN SLEEP(1)", 10),
            ("RETURN MY::FUNC()", 10),
            ("RETURN NO_SUCH_FUNCTION()", 1540),
        ];
        for (text, num) in cases {
            let error = match compile(text) {
                Ok(_) => panic!("{text} was accepted"),
                Err(e) => e,
            };
            assert_eq!(error.num(), num, "{text}: {error:?}");
        }
    }

    #[test]
    fn warnings_fail_only_when_asked() {
        let compiled = compile("RETURN 1 / @doc.zero").unwrap();
        let doc = json!({"zero": 0});
        assert_eq!(compiled.evaluate(&doc, false).unwrap(), Value::Null);
        assert!(compiled.evaluate(&doc, true).is_err());
    }

    #[test]
    fn not_deterministic_functions_are_allowed() {
        let compiled = compile("RETURN DATE_NOW()").unwrap();
        assert!(compiled.evaluate(&json!({}), false).unwrap().is_number());
    }
}
