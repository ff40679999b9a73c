//! Evaluation of compiled expressions over a row.
//!
//! What it is: [`Executor::eval`], which borrows from the row where it can (a variable, an
//! attribute of a document) and owns only what it computes; [`fold`], which evaluates a
//! constant subtree once at compile time.
//!
//! What it is not: the operators' or functions' semantics (`crate::value`,
//! `crate::functions`): this module only walks the tree and applies them.
//!
//! Invariants: `&&` and `||` short-circuit and give an operand's value (AQL's rule), not a
//! boolean; a missing attribute or index is `null`; folding never changes a result: a subtree
//! is folded only when every operand is constant and its evaluation raises no warning and no
//! error (those are left for the run, which reports them), and only when computing it takes
//! at most 1 MiB and 50 ms (a folded value is computed before the query has memory limits or
//! can be killed).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_errors::Result;
use quince_memory::{Account, Pool};
use serde_json::{Map, Value};

use crate::plan::{CExpr, CKey, CQuantifier, Pipeline, Plan};
use crate::value::{self, truthy, Quantifier};

use super::{Context, Control, Executor};

static NULL: Value = Value::Null;

/// Where an expression is evaluated: the row, and the element `CURRENT` stands for.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// The row (every slot of the query).
    pub row: &'a [Value],
    /// `CURRENT`.
    pub current: Option<&'a Value>,
}

impl Executor<'_> {
    /// The value of `expr` in `env`.
    pub fn eval<'a>(&mut self, expr: &'a CExpr, env: Env<'a>) -> Result<Cow<'a, Value>> {
        Ok(match expr {
            CExpr::Const(v) => Cow::Borrowed(v),
            CExpr::Slot(s) => Cow::Borrowed(&env.row[*s]),
            CExpr::Current => Cow::Borrowed(env.current.unwrap_or(&NULL)),
            CExpr::Attribute(base, name) => attribute(self.eval(base, env)?, name),
            CExpr::Index(base, index) => {
                let index = self.eval(index, env)?.into_owned();
                let base = self.eval(base, env)?;
                match (&index, base) {
                    (Value::String(name), base) => attribute(base, name),
                    (Value::Number(n), Cow::Borrowed(Value::Array(items))) => {
                        Cow::Borrowed(position(items.len(), n).map_or(&NULL, |i| &items[i]))
                    }
                    (Value::Number(n), Cow::Owned(Value::Array(mut items))) => {
                        match position(items.len(), n) {
                            Some(i) => Cow::Owned(items.swap_remove(i)),
                            None => Cow::Borrowed(&NULL),
                        }
                    }
                    _ => Cow::Borrowed(&NULL),
                }
            }
            CExpr::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.push(self.eval(item, env)?.into_owned());
                }
                Cow::Owned(Value::Array(out))
            }
            CExpr::Object(entries) => {
                let mut out = Map::new();
                for (key, value) in entries {
                    let key = match key {
                        CKey::Static(name) => name.clone(),
                        CKey::Computed(e) => match self.eval(e, env)?.into_owned() {
                            Value::String(s) => s,
                            other => value::to_string_value(&other),
                        },
                    };
                    let value = self.eval(value, env)?.into_owned();
                    out.insert(key, value);
                }
                Cow::Owned(Value::Object(out))
            }
            CExpr::Unary(op, operand) => {
                Cow::Owned(value::unary(*op, self.eval(operand, env)?.as_ref()))
            }
            CExpr::And(lhs, rhs) => {
                let left = self.eval(lhs, env)?;
                if truthy(&left) {
                    self.eval(rhs, env)?
                } else {
                    left
                }
            }
            CExpr::Or(lhs, rhs) => {
                let left = self.eval(lhs, env)?;
                if truthy(&left) {
                    left
                } else {
                    self.eval(rhs, env)?
                }
            }
            CExpr::Binary(op, lhs, rhs) => {
                let left = self.eval(lhs, env)?;
                let right = self.eval(rhs, env)?;
                let ctx = &mut self.ctx;
                let result = value::binary(*op, &left, &right, &mut |w| {
                    crate::functions::FunctionContext::warn(ctx, w)
                });
                Cow::Owned(result)
            }
            CExpr::Quantified {
                quantifier,
                op,
                lhs,
                rhs,
            } => {
                let quantifier = match quantifier {
                    CQuantifier::All => Quantifier::All,
                    CQuantifier::Any => Quantifier::Any,
                    CQuantifier::None => Quantifier::None,
                    CQuantifier::AtLeast(n) => {
                        let n = value::to_number(self.eval(n, env)?.as_ref()).max(0.0);
                        Quantifier::AtLeast(n as u64)
                    }
                };
                let left = self.eval(lhs, env)?;
                let right = self.eval(rhs, env)?;
                let ctx = &mut self.ctx;
                Cow::Owned(value::quantified(
                    quantifier,
                    *op,
                    &left,
                    &right,
                    &mut |w| crate::functions::FunctionContext::warn(ctx, w),
                ))
            }
            CExpr::Ternary(condition, then, otherwise) => {
                let condition_value = self.eval(condition, env)?;
                if truthy(&condition_value) {
                    match then {
                        Some(t) => self.eval(t, env)?,
                        None => condition_value,
                    }
                } else {
                    self.eval(otherwise, env)?
                }
            }
            CExpr::Range(low, high) => {
                let low = value::to_number(self.eval(low, env)?.as_ref());
                let high = value::to_number(self.eval(high, env)?.as_ref());
                Cow::Owned(range(low, high, &mut self.ctx)?)
            }
            CExpr::Call(function, args) => {
                let mut values = Vec::with_capacity(args.len());
                for arg in args {
                    values.push(self.eval(arg, env)?.into_owned());
                    // An argument taken from a variable is a copy of it.
                    self.ctx.control.check_memory()?;
                }
                let result = (function.call)(&mut self.ctx, &values)?;
                self.ctx.take_failure()?;
                Cow::Owned(result)
            }
            CExpr::Subquery(pipeline) => Cow::Owned(self.subquery(pipeline, env.row)?),
            CExpr::Expansion {
                base,
                depth,
                filter,
                limit,
                projection,
            } => {
                let base = self.eval(base, env)?.into_owned();
                let mut items = match base {
                    Value::Array(items) => items,
                    _ => return Ok(Cow::Owned(Value::Array(Vec::new()))),
                };
                for _ in 1..*depth {
                    self.ctx.tick()?;
                    items = items
                        .into_iter()
                        .flat_map(|item| match item {
                            Value::Array(inner) => inner,
                            other => vec![other],
                        })
                        .collect();
                }
                let (mut skip, mut take) = limit.unwrap_or((0, u64::MAX));
                let mut out = Vec::new();
                for item in &items {
                    self.ctx.tick()?;
                    let inner = Env {
                        row: env.row,
                        current: Some(item),
                    };
                    if let Some(filter) = filter {
                        if !truthy(self.eval(filter, inner)?.as_ref()) {
                            continue;
                        }
                    }
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    if take == 0 {
                        break;
                    }
                    take -= 1;
                    out.push(match projection {
                        Some(p) => self.eval(p, inner)?.into_owned(),
                        None => item.clone(),
                    });
                }
                Cow::Owned(Value::Array(out))
            }
        })
    }

    /// Runs a subquery on a copy of the row and gathers what it returns.
    fn subquery(&mut self, pipeline: &Pipeline, row: &[Value]) -> Result<Value> {
        let mut out = Vec::new();
        self.run(pipeline, row.to_vec(), &mut |ctx, value| {
            ctx.tick()?;
            out.push(value);
            Ok(true)
        })?;
        Ok(Value::Array(out))
    }
}

/// `base.name` (`null` unless `base` is an object with that attribute).
fn attribute<'a>(base: Cow<'a, Value>, name: &str) -> Cow<'a, Value> {
    match base {
        Cow::Borrowed(Value::Object(map)) => Cow::Borrowed(map.get(name).unwrap_or(&NULL)),
        Cow::Owned(Value::Object(mut map)) => {
            Cow::Owned(map.swap_remove(name).unwrap_or(Value::Null))
        }
        _ => Cow::Borrowed(&NULL),
    }
}

/// An array position, counted from the end when negative.
fn position(len: usize, n: &serde_json::Number) -> Option<usize> {
    let i = n.as_f64()?;
    if i.fract() != 0.0 {
        return None;
    }
    let i = if i < 0.0 { len as f64 + i } else { i };
    (i >= 0.0 && i < len as f64).then_some(i as usize)
}

/// The most elements a range built as a value may have, whatever the memory limits say (a
/// `FOR` over a range is not built: it counts through it).
const RANGE_MAX: f64 = (1u64 << 40) as f64;

/// `low..high` as an array, admitted against the memory limits before it is built.
fn range(low: f64, high: f64, ctx: &mut Context) -> Result<Value> {
    let (low, high) = (low.trunc(), high.trunc());
    let n = (high - low).abs() + 1.0;
    if n > RANGE_MAX {
        return Err(quince_errors::ArangoError::with_message(
            quince_errors::RESOURCE_LIMIT,
            "AQL: range too big (while executing)".to_owned(),
        ));
    }
    ctx.admit((n as u64).saturating_mul(std::mem::size_of::<Value>() as u64))?;
    let step = if high >= low { 1.0 } else { -1.0 };
    let mut out = Vec::with_capacity(n as usize);
    let mut x = low;
    for _ in 0..n as usize {
        out.push(value::number(x));
        x += step;
    }
    Ok(Value::Array(out))
}

/// Folds `expr` to a constant when every operand is constant and evaluating it raises no
/// warning and no error; otherwise returns it unchanged.
pub fn fold(expr: CExpr) -> CExpr {
    let foldable = match &expr {
        CExpr::Attribute(base, _) | CExpr::Unary(_, base) => base.as_const().is_some(),
        CExpr::Index(a, b)
        | CExpr::And(a, b)
        | CExpr::Or(a, b)
        | CExpr::Binary(_, a, b)
        | CExpr::Range(a, b) => a.as_const().is_some() && b.as_const().is_some(),
        CExpr::Array(items) | CExpr::Call(_, items) => items.iter().all(|e| e.as_const().is_some()),
        CExpr::Object(entries) => entries
            .iter()
            .all(|(k, v)| matches!(k, CKey::Static(_)) && v.as_const().is_some()),
        CExpr::Ternary(c, t, e) => {
            c.as_const().is_some()
                && t.as_ref().is_none_or(|t| t.as_const().is_some())
                && e.as_const().is_some()
        }
        CExpr::Quantified {
            quantifier,
            lhs,
            rhs,
            ..
        } => {
            lhs.as_const().is_some()
                && rhs.as_const().is_some()
                && match quantifier {
                    CQuantifier::AtLeast(n) => n.as_const().is_some(),
                    _ => true,
                }
        }
        _ => false,
    };
    if !foldable {
        return expr;
    }
    let plan = Plan::empty();
    let database: Arc<dyn quince_ops::DatabaseOps> = Arc::new(NoDatabase);
    let memory = Account::new(FOLD_MEMORY_MAX, Pool::new(0));
    let charging = memory.charge_this_thread();
    let mut executor = Executor::new(
        &plan,
        Context::new(
            database,
            Control::with_memory(
                Instant::now().checked_add(FOLD_TIME_MAX),
                Arc::clone(&memory),
            ),
            None,
            &crate::QueryOptions::default(),
        ),
    );
    let value = match executor.eval(
        &expr,
        Env {
            row: &[],
            current: None,
        },
    ) {
        Ok(v) => v.into_owned(),
        Err(_) => return expr,
    };
    drop(charging);
    if !executor.ctx.warnings.is_empty() || memory.peak() > FOLD_MEMORY_MAX {
        return expr;
    }
    CExpr::Const(value)
}

/// The most memory a folded constant may take to compute: a larger one (a long range, a big
/// string) is left for the run, where the query's memory limits apply to it.
const FOLD_MEMORY_MAX: u64 = 1 << 20;

/// The longest a folded constant may take to compute: folding runs before the query is
/// registered (it cannot be killed then), so a longer one is left for the run, where kills
/// and `maxRuntime` apply to it.
const FOLD_TIME_MAX: Duration = Duration::from_millis(50);

/// The database of compile-time folding: folded functions never touch one.
struct NoDatabase;

impl quince_ops::DatabaseOps for NoDatabase {
    fn name(&self) -> &str {
        "_system"
    }
    fn id(&self) -> u64 {
        0
    }
    fn collections(&self) -> Vec<Arc<dyn quince_ops::CollectionOps>> {
        Vec::new()
    }
    fn collection(&self, _: &str) -> Result<Arc<dyn quince_ops::CollectionOps>> {
        Err(quince_errors::ArangoError::new(
            quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND,
        ))
    }
    fn create_collection(
        &self,
        _: quince_ops::CreateCollection,
    ) -> Result<Arc<dyn quince_ops::CollectionOps>> {
        Err(quince_errors::ArangoError::new(quince_errors::FORBIDDEN))
    }
    fn drop_collection(&self, _: &str, _: bool) -> Result<u64> {
        Err(quince_errors::ArangoError::new(quince_errors::FORBIDDEN))
    }
    fn rename_collection(&self, _: &str, _: &str) -> Result<Arc<dyn quince_ops::CollectionOps>> {
        Err(quince_errors::ArangoError::new(quince_errors::FORBIDDEN))
    }
    fn begin_transaction(
        &self,
        _: quince_ops::TransactionOptions,
    ) -> Result<Arc<dyn quince_ops::TransactionOps>> {
        Err(quince_errors::ArangoError::new(quince_errors::FORBIDDEN))
    }
    fn transaction(&self, id: &str) -> Result<Arc<dyn quince_ops::TransactionOps>> {
        Err(quince_ops::transaction_not_found(id))
    }
    fn running_transactions(&self) -> Vec<Arc<dyn quince_ops::TransactionOps>> {
        Vec::new()
    }
}
