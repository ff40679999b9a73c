//! A compiled condition written back as AQL text, for another server to evaluate: the filters
//! a cluster coordinator sends with a scan to the shards (`distribute.rs`).
//!
//! What it is: [`render`], which writes a [`CExpr`] over one loop variable as AQL text over
//! [`quince_ops::SCAN_VARIABLE`], every constant and every other variable a bind parameter
//! ([`Param`]: a value known now, or a slot read from the row when the scan starts), every
//! compound expression in parentheses so that no precedence rule is needed.
//!
//! What it is not: a pretty printer, nor complete: an expression that reads the loop variable
//! other than as `x.name` (whole, by a computed index, or its `_id`, which names the
//! collection differently on a shard), that calls a non-deterministic function or one that
//! answers differently on another server (`CURRENT_USER`, `CURRENT_DATABASE`), or that holds a
//! subquery or an expansion, is not rendered (`None`).
//!
//! Invariants: the text parses, and evaluated with the parameters' values on a document it
//! gives what the expression gives on the same document (the tests check it case by case).

use serde_json::Value;

use crate::ast::UnaryOp;

use super::{CExpr, CKey, CQuantifier, Slot};

/// The value of one bind parameter of a rendered condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// A constant of the query.
    Const(Value),
    /// A variable of an earlier loop or `LET`: its value in the row when the scan starts.
    Slot(Slot),
}

/// A rendered condition: the text and its bind parameters (`@` + name).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Rendered {
    /// The AQL text.
    pub text: String,
    /// Each bind parameter, by name, in order of first use.
    pub params: Vec<(String, Param)>,
}

/// Functions that are deterministic but answer differently on another server.
const LOCAL_ONLY: &[&str] = &["CURRENT_USER", "CURRENT_DATABASE"];

/// Appends `expr` to `into` as AQL text over [`quince_ops::SCAN_VARIABLE`] standing for
/// `loop_slot`, its parameters named `q<N>` after those `into` has; `None`, with `into` left
/// as it was, when it cannot be (see the module documentation).
pub fn render(expr: &CExpr, loop_slot: Slot, into: &mut Rendered) -> Option<()> {
    let (text, params) = (into.text.len(), into.params.len());
    let mut writer = Writer {
        loop_slot,
        out: into,
    };
    let written = writer.expr(expr);
    if written.is_none() {
        into.text.truncate(text);
        into.params.truncate(params);
    }
    written
}

struct Writer<'o> {
    loop_slot: Slot,
    out: &'o mut Rendered,
}

impl Writer<'_> {
    fn push(&mut self, text: &str) {
        self.out.text.push_str(text);
    }

    fn param(&mut self, param: Param) {
        let name = format!("q{}", self.out.params.len());
        self.out.text.push('@');
        self.out.text.push_str(&name);
        self.out.params.push((name, param));
    }

    fn paren(&mut self, expr: &CExpr) -> Option<()> {
        self.push("(");
        self.expr(expr)?;
        self.push(")");
        Some(())
    }

    fn list(&mut self, items: &[CExpr]) -> Option<()> {
        for (n, item) in items.iter().enumerate() {
            if n > 0 {
                self.push(", ");
            }
            self.expr(item)?;
        }
        Some(())
    }

    fn expr(&mut self, expr: &CExpr) -> Option<()> {
        match expr {
            CExpr::Const(value) => self.param(Param::Const(value.clone())),
            CExpr::Slot(slot) if *slot == self.loop_slot => return None,
            CExpr::Slot(slot) => self.param(Param::Slot(*slot)),
            CExpr::Attribute(base, name) => self.attribute(base, name)?,
            CExpr::Index(base, index) if self.is_loop(base) => match index.as_const() {
                Some(Value::String(name)) => self.attribute(base, name)?,
                _ => return None,
            },
            CExpr::Index(base, index) => {
                self.paren(base)?;
                self.push("[");
                self.expr(index)?;
                self.push("]");
            }
            CExpr::Array(items) => {
                self.push("[");
                self.list(items)?;
                self.push("]");
            }
            CExpr::Object(entries) => {
                self.push("{");
                for (n, (key, value)) in entries.iter().enumerate() {
                    if n > 0 {
                        self.push(", ");
                    }
                    match key {
                        CKey::Static(name) => {
                            let quoted = serde_json::to_string(name).ok()?;
                            self.push(&quoted);
                        }
                        CKey::Computed(key) => {
                            self.push("[");
                            self.expr(key)?;
                            self.push("]");
                        }
                    }
                    self.push(": ");
                    self.expr(value)?;
                }
                self.push("}");
            }
            CExpr::Unary(op, operand) => {
                self.push(match op {
                    UnaryOp::Not => "(NOT ",
                    UnaryOp::Minus => "(-",
                    UnaryOp::Plus => "(+",
                });
                self.paren(operand)?;
                self.push(")");
            }
            CExpr::And(a, b) => self.infix(a, "AND", b)?,
            CExpr::Or(a, b) => self.infix(a, "OR", b)?,
            CExpr::Binary(op, a, b) => self.infix(a, op.token(), b)?,
            CExpr::Quantified {
                quantifier,
                op,
                lhs,
                rhs,
            } => {
                self.push("(");
                self.paren(lhs)?;
                match quantifier {
                    CQuantifier::All => self.push(" ALL "),
                    CQuantifier::Any => self.push(" ANY "),
                    CQuantifier::None => self.push(" NONE "),
                    CQuantifier::AtLeast(count) => {
                        self.push(" AT LEAST (");
                        self.expr(count)?;
                        self.push(") ");
                    }
                }
                self.push(op.token());
                self.push(" ");
                self.paren(rhs)?;
                self.push(")");
            }
            CExpr::Ternary(condition, then, otherwise) => {
                self.push("(");
                self.paren(condition)?;
                match then {
                    Some(then) => {
                        self.push(" ? ");
                        self.paren(then)?;
                        self.push(" : ");
                    }
                    None => self.push(" ?: "),
                }
                self.paren(otherwise)?;
                self.push(")");
            }
            CExpr::Range(low, high) => self.infix(low, "..", high)?,
            CExpr::Call(function, args) => {
                if !function.deterministic || LOCAL_ONLY.contains(&function.name) {
                    return None;
                }
                self.push(function.name);
                self.push("(");
                self.list(args)?;
                self.push(")");
            }
            CExpr::Current | CExpr::Subquery(_) | CExpr::Expansion { .. } => return None,
        }
        Some(())
    }

    fn is_loop(&self, expr: &CExpr) -> bool {
        matches!(expr, CExpr::Slot(s) if *s == self.loop_slot)
    }

    /// `base.name`, the loop variable's `_id` refused.
    fn attribute(&mut self, base: &CExpr, name: &str) -> Option<()> {
        if self.is_loop(base) {
            if name == "_id" {
                return None;
            }
            self.push(quince_ops::SCAN_VARIABLE);
        } else {
            self.paren(base)?;
        }
        self.push(".`");
        for c in name.chars() {
            if c == '`' || c == '\\' {
                self.out.text.push('\\');
            }
            self.out.text.push(c);
        }
        self.push("`");
        Some(())
    }

    fn infix(&mut self, a: &CExpr, op: &str, b: &CExpr) -> Option<()> {
        self.push("(");
        self.paren(a)?;
        self.push(" ");
        self.push(op);
        self.push(" ");
        self.paren(b)?;
        self.push(")");
        Some(())
    }
}
