//! AQL expressions: a precedence-climbing parser over ArangoDB's operator table.
//!
//! What it is: [`Parser::expr`] and its helpers, producing [`Expr`] trees. Binding, from
//! loosest to tightest (ArangoDB's grammar): `? :` (right), `||`/`OR`, `&&`/`AND`, the
//! array quantifiers `ALL`/`ANY`/`NONE`, `AT LEAST`, `==` `!=` `LIKE` `=~` `!~`, `IN` `NOT
//! IN` (and `NOT LIKE`, `NOT =~`, `NOT !~`), `<` `<=` `>` `>=`, `..`, `+` `-`, `*` `/` `%`,
//! then the prefix operators `!`/`NOT`, `-`, `+`, then `.name`, `.@bind`, `[index]`, `[*
//! ...]` and calls. All infix operators associate to the left except `?:`.
//!
//! What it is not: a constant folder. Only a unary minus or plus directly before a number
//! literal is folded into the literal (as ArangoDB does), so `-1` is the literal `-1`.
//!
//! Invariants: function names are upper-cased and keep `::`; `x NOT LIKE y` is
//! [`BinaryOp::NotLike`], `x NOT =~ y` is [`BinaryOp::RegexNotMatch`] and `x NOT !~ y` is
//! [`BinaryOp::RegexMatch`]; a path or index after `[*]` belongs to the expansion's
//! projection (innermost expansion first), unless the expansion is in parentheses; a
//! further `[*]` nests in the innermost projection, a `[**]` expands the whole expansion.

use quince_errors::ArangoError;
use serde_json::Value;

use super::error;
use super::lexer::{Keyword, Punct, Tok};
use super::parser::Parser;
use crate::ast::{BinaryOp, Expansion, Expr, ObjectKey, Quantifier, Span, UnaryOp};

/// Binding powers, loosest first.
const TERNARY: u8 = 1;
const OR: u8 = 2;
const AND: u8 = 3;
const QUANTIFIER: u8 = 4;
const AT_LEAST: u8 = 5;
const EQUALITY: u8 = 6;
const MEMBERSHIP: u8 = 7;
const RELATION: u8 = 8;
const RANGE: u8 = 9;
const ADDITIVE: u8 = 10;
const MULTIPLICATIVE: u8 = 11;

/// The level of a comparison operator usable after a quantifier.
fn comparison_level(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Eq | BinaryOp::Ne => EQUALITY,
        BinaryOp::In | BinaryOp::NotIn => MEMBERSHIP,
        _ => RELATION,
    }
}

impl Parser<'_> {
    /// A whole expression.
    pub(crate) fn expr(&mut self) -> Result<Expr, ArangoError> {
        self.binary(0, false)
    }

    /// A whole expression that ends before `IN collection` where a data modification
    /// names its collection (`UPDATE doc IN coll`): at the outermost level, an `IN`
    /// followed by a name and then something that cannot continue an expression is left
    /// for the caller, as ArangoDB's grammar decides.
    pub(crate) fn expr_before_collection(&mut self) -> Result<Expr, ArangoError> {
        self.binary(0, true)
    }

    fn binary(&mut self, min: u8, stop_at_in: bool) -> Result<Expr, ArangoError> {
        self.enter()?;
        let mut lhs = self.unary()?;
        let mut links = 0;
        loop {
            links += 1;
            self.check_chain(links)?;
            let tok = self.tok().clone();
            let (op, level) = match tok {
                Tok::Punct(Punct::Question) if TERNARY >= min => {
                    lhs = self.ternary(lhs)?;
                    continue;
                }
                Tok::Keyword(Keyword::Or) => (BinaryOp::Or, OR),
                Tok::Keyword(Keyword::And) => (BinaryOp::And, AND),
                Tok::Keyword(Keyword::All | Keyword::Any | Keyword::None)
                    if QUANTIFIER >= min && self.comparison_after(1).is_some() =>
                {
                    lhs = self.quantified(lhs)?;
                    continue;
                }
                Tok::Ident(ref w)
                    if AT_LEAST >= min
                        && w.eq_ignore_ascii_case("AT")
                        && matches!(&self.peek_at(1).tok, Tok::Ident(l) if l.eq_ignore_ascii_case("LEAST")) =>
                {
                    lhs = self.quantified(lhs)?;
                    continue;
                }
                Tok::Punct(Punct::Eq) => (BinaryOp::Eq, EQUALITY),
                Tok::Punct(Punct::Ne) => (BinaryOp::Ne, EQUALITY),
                Tok::Keyword(Keyword::Like) => (BinaryOp::Like, EQUALITY),
                Tok::Punct(Punct::RegexMatch) => (BinaryOp::RegexMatch, EQUALITY),
                Tok::Punct(Punct::RegexNotMatch) => (BinaryOp::RegexNotMatch, EQUALITY),
                Tok::Keyword(Keyword::In) => {
                    if stop_at_in && min == 0 && self.collection_follows_in() {
                        break;
                    }
                    (BinaryOp::In, MEMBERSHIP)
                }
                Tok::Keyword(Keyword::Not) if MEMBERSHIP >= min => {
                    lhs = self.negated_infix(lhs)?;
                    continue;
                }
                Tok::Punct(Punct::Lt) => (BinaryOp::Lt, RELATION),
                Tok::Punct(Punct::Le) => (BinaryOp::Le, RELATION),
                Tok::Punct(Punct::Gt) => (BinaryOp::Gt, RELATION),
                Tok::Punct(Punct::Ge) => (BinaryOp::Ge, RELATION),
                Tok::Punct(Punct::Range) if RANGE >= min => {
                    self.advance();
                    let rhs = self.binary(RANGE + 1, false)?;
                    lhs = Expr::Range(Box::new(lhs), Box::new(rhs));
                    continue;
                }
                Tok::Punct(Punct::Plus) => (BinaryOp::Add, ADDITIVE),
                Tok::Punct(Punct::Minus) => (BinaryOp::Sub, ADDITIVE),
                Tok::Punct(Punct::Times) => (BinaryOp::Mul, MULTIPLICATIVE),
                Tok::Punct(Punct::Div) => (BinaryOp::Div, MULTIPLICATIVE),
                Tok::Punct(Punct::Mod) => (BinaryOp::Mod, MULTIPLICATIVE),
                _ => break,
            };
            if level < min {
                break;
            }
            self.advance();
            let rhs = self.binary(level + 1, false)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        self.leave();
        Ok(lhs)
    }

    /// After `IN`: a collection name, then a token that cannot continue an expression.
    fn collection_follows_in(&self) -> bool {
        let name = matches!(
            self.peek_at(1).tok,
            Tok::Ident(_) | Tok::String(_) | Tok::BindCollection(_)
        );
        let after = &self.peek_at(2).tok;
        let ends = matches!(
            after,
            Tok::End | Tok::Ident(_) | Tok::Punct(Punct::Close | Punct::Comma)
        ) || matches!(
            after,
            Tok::Keyword(
                Keyword::For
                    | Keyword::Let
                    | Keyword::Filter
                    | Keyword::Collect
                    | Keyword::Sort
                    | Keyword::Limit
                    | Keyword::Window
                    | Keyword::Return
                    | Keyword::Insert
                    | Keyword::Update
                    | Keyword::Replace
                    | Keyword::Remove
                    | Keyword::Upsert
            )
        );
        name && ends
    }

    /// The comparison operator `ahead` tokens on, if one that may follow a quantifier.
    fn comparison_after(&self, ahead: usize) -> Option<(BinaryOp, usize)> {
        let op = match self.peek_at(ahead).tok {
            Tok::Punct(Punct::Eq) => BinaryOp::Eq,
            Tok::Punct(Punct::Ne) => BinaryOp::Ne,
            Tok::Punct(Punct::Lt) => BinaryOp::Lt,
            Tok::Punct(Punct::Le) => BinaryOp::Le,
            Tok::Punct(Punct::Gt) => BinaryOp::Gt,
            Tok::Punct(Punct::Ge) => BinaryOp::Ge,
            Tok::Keyword(Keyword::In) => BinaryOp::In,
            Tok::Keyword(Keyword::Not)
                if self.peek_at(ahead + 1).tok == Tok::Keyword(Keyword::In) =>
            {
                return Some((BinaryOp::NotIn, 2));
            }
            _ => return None,
        };
        Some((op, 1))
    }

    /// `lhs ALL|ANY|NONE op rhs` or `lhs AT LEAST (n) op rhs`.
    fn quantified(&mut self, lhs: Expr) -> Result<Expr, ArangoError> {
        let quantifier = match self.advance().tok {
            Tok::Keyword(Keyword::All) => Quantifier::All,
            Tok::Keyword(Keyword::Any) => Quantifier::Any,
            Tok::Keyword(Keyword::None) => Quantifier::None,
            _ => {
                self.advance(); // LEAST
                self.expect_punct(Punct::Open)?;
                let count = self.expr()?;
                self.expect_punct(Punct::Close)?;
                Quantifier::AtLeast(Box::new(count))
            }
        };
        let Some((op, tokens)) = self.comparison_after(0) else {
            return Err(self.unexpected());
        };
        for _ in 0..tokens {
            self.advance();
        }
        let rhs = self.binary(comparison_level(op) + 1, false)?;
        Ok(Expr::Quantified {
            quantifier,
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        })
    }

    /// `lhs NOT IN rhs`, `lhs NOT LIKE rhs`, `lhs NOT =~ rhs`, `lhs NOT !~ rhs`.
    fn negated_infix(&mut self, lhs: Expr) -> Result<Expr, ArangoError> {
        self.advance();
        let (op, level) = match self.tok() {
            Tok::Keyword(Keyword::In) => (BinaryOp::NotIn, MEMBERSHIP),
            Tok::Keyword(Keyword::Like) => (BinaryOp::NotLike, EQUALITY),
            Tok::Punct(Punct::RegexMatch) => (BinaryOp::RegexNotMatch, EQUALITY),
            Tok::Punct(Punct::RegexNotMatch) => (BinaryOp::RegexMatch, EQUALITY),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        let rhs = self.binary(level + 1, false)?;
        Ok(Expr::Binary(op, Box::new(lhs), Box::new(rhs)))
    }

    /// `condition ? then : otherwise` or `condition ?: otherwise`.
    fn ternary(&mut self, condition: Expr) -> Result<Expr, ArangoError> {
        self.advance();
        let then = if self.eat_punct(Punct::Colon) {
            None
        } else {
            let then = self.binary(TERNARY, false)?;
            self.expect_punct(Punct::Colon)?;
            Some(Box::new(then))
        };
        let otherwise = self.binary(TERNARY, false)?;
        Ok(Expr::Ternary {
            condition: Box::new(condition),
            then,
            otherwise: Box::new(otherwise),
        })
    }

    /// Prefix operators, then an operand with its postfix operators.
    fn unary(&mut self) -> Result<Expr, ArangoError> {
        let op = match self.tok() {
            Tok::Keyword(Keyword::Not) => UnaryOp::Not,
            Tok::Punct(Punct::Minus) => UnaryOp::Minus,
            Tok::Punct(Punct::Plus) => UnaryOp::Plus,
            _ => return self.postfix(),
        };
        self.advance();
        self.enter()?;
        let operand = self.unary()?;
        self.leave();
        Ok(match (op, operand) {
            (UnaryOp::Minus, Expr::Literal(Value::Number(n))) => Expr::Literal(negate(&n)),
            (UnaryOp::Plus, literal @ Expr::Literal(Value::Number(_))) => literal,
            (op, operand) => Expr::Unary(op, Box::new(operand)),
        })
    }

    /// An operand and its `.name`, `.@bind`, `[index]` and `[* ...]` suffixes.
    fn postfix(&mut self) -> Result<Expr, ArangoError> {
        let mut expr = self.primary()?;
        // True while `expr` is an expansion this chain opened: later suffixes extend it (an
        // expansion in parentheses is closed).
        let mut open_expansion = false;
        let mut links = 0;
        loop {
            links += 1;
            self.check_chain(links)?;
            if self.eat_punct(Punct::Dot) {
                let step = match self.tok().clone() {
                    Tok::Ident(name) => Step::Attribute(name),
                    Tok::Bind(name) => Step::Index(Expr::Bind(name)),
                    Tok::BindCollection(name) => Step::Index(Expr::BindCollection(name)),
                    _ => return Err(self.unexpected()),
                };
                self.advance();
                expr = apply_step(expr, step, open_expansion);
            } else if self.at_punct(Punct::ArrayOpen) {
                match self.peek_at(1).tok {
                    Tok::Punct(Punct::Times) => {
                        expr = self.expansion(expr, open_expansion)?;
                        open_expansion = true;
                    }
                    Tok::Punct(Punct::Question) => {
                        return Err(self.error_at(
                            self.peek_at(1).span,
                            "the array question mark operator [? ...] is not supported",
                        ));
                    }
                    _ => {
                        self.advance();
                        let index = self.expr()?;
                        self.expect_punct(Punct::ArrayClose)?;
                        expr = apply_step(expr, Step::Index(index), open_expansion);
                    }
                }
            } else {
                return Ok(expr);
            }
        }
    }

    /// `[*...]` after `base`: depth, inline `FILTER`, `LIMIT`, `RETURN`, `]`.
    fn expansion(&mut self, base: Expr, chained: bool) -> Result<Expr, ArangoError> {
        self.advance(); // [
        let mut depth = 0u32;
        while self.eat_punct(Punct::Times) {
            depth += 1;
        }
        self.current_depth += 1;
        let inline = self.expansion_inline();
        self.current_depth -= 1;
        let (filter, limit, projection) = inline?;
        let make = |base| {
            Expr::Expansion(Box::new(Expansion {
                base,
                depth,
                filter,
                limit,
                projection,
            }))
        };
        match base {
            Expr::Expansion(mut outer) if chained && depth == 1 => {
                let slot = innermost_projection(&mut outer);
                let inner_base = slot.take().unwrap_or(Expr::Current);
                *slot = Some(make(inner_base));
                Ok(Expr::Expansion(outer))
            }
            base => Ok(make(base)),
        }
    }

    /// The inline operations of an expansion up to and including its `]`.
    #[allow(clippy::type_complexity)]
    fn expansion_inline(
        &mut self,
    ) -> Result<(Option<Expr>, Option<(Option<Expr>, Expr)>, Option<Expr>), ArangoError> {
        let filter = if self.eat_keyword(Keyword::Filter) {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_keyword(Keyword::Limit) {
            Some(self.limit_values()?)
        } else {
            None
        };
        let projection = if self.eat_keyword(Keyword::Return) {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_punct(Punct::ArrayClose)?;
        Ok((filter, limit, projection))
    }

    /// A literal, name, bind parameter, call, array, object, parenthesized expression or
    /// subquery.
    fn primary(&mut self) -> Result<Expr, ArangoError> {
        let token = self.peek().clone();
        let expr = match token.tok {
            Tok::String(s) => Expr::Literal(Value::String(s)),
            Tok::Number { value, .. } => Expr::Literal(Value::Number(value)),
            Tok::Keyword(Keyword::Null) => Expr::Literal(Value::Null),
            Tok::Keyword(Keyword::True) => Expr::Literal(Value::Bool(true)),
            Tok::Keyword(Keyword::False) => Expr::Literal(Value::Bool(false)),
            Tok::Bind(name) => Expr::Bind(name),
            Tok::BindCollection(name) => Expr::BindCollection(name),
            Tok::Keyword(Keyword::Like) if self.peek_at(1).tok == Tok::Punct(Punct::Open) => {
                self.advance();
                return self.call("LIKE".to_owned(), token.span);
            }
            Tok::Ident(name) => {
                self.advance();
                if self.at_punct(Punct::Open) || self.at_punct(Punct::Scope) {
                    let name = self.function_name(name)?;
                    return self.call(name, token.span);
                }
                return Ok(self.name_expr(name));
            }
            Tok::Punct(Punct::ArrayOpen) => return self.array_literal(),
            Tok::Punct(Punct::ObjectOpen) => return self.expr_primary_object(),
            Tok::Punct(Punct::Open) => {
                self.advance();
                let expr = if self.at_operation() {
                    Expr::Subquery(Box::new(self.subquery()?))
                } else {
                    self.expr()?
                };
                self.expect_punct(Punct::Close)?;
                return Ok(expr);
            }
            _ => return Err(self.unexpected()),
        };
        self.advance();
        Ok(expr)
    }

    /// `NAME` or `NS::NAME::...` up to the `(`, upper-cased.
    fn function_name(&mut self, first: String) -> Result<String, ArangoError> {
        let mut name = first.to_uppercase();
        while self.eat_punct(Punct::Scope) {
            let (part, _) = self.expect_name()?;
            name.push_str("::");
            name.push_str(&part.to_uppercase());
        }
        if !self.at_punct(Punct::Open) {
            return Err(self.unexpected());
        }
        Ok(name)
    }

    /// The arguments of a call from `(`: expressions, or a bare subquery
    /// (`LENGTH(FOR x IN y RETURN x)`).
    fn call(&mut self, name: String, span: Span) -> Result<Expr, ArangoError> {
        self.expect_punct(Punct::Open)?;
        let mut args = Vec::new();
        if !self.eat_punct(Punct::Close) {
            loop {
                let arg = if self.at_operation() {
                    Expr::Subquery(Box::new(self.subquery()?))
                } else {
                    self.expr()?
                };
                args.push(arg);
                if self.eat_punct(Punct::Close) {
                    break;
                }
                self.expect_punct(Punct::Comma)?;
            }
        }
        Ok(Expr::Call { name, args, span })
    }

    /// `NAME(args)` exactly, as `AGGREGATE` and `WINDOW` require.
    pub(crate) fn aggregate_call(&mut self) -> Result<Expr, ArangoError> {
        let (first, span) = self.expect_name()?;
        let name = self.function_name(first)?;
        self.call(name, span)
    }

    /// `[a, b, ...]` (a trailing comma is allowed).
    fn array_literal(&mut self) -> Result<Expr, ArangoError> {
        self.expect_punct(Punct::ArrayOpen)?;
        let mut items = Vec::new();
        while !self.eat_punct(Punct::ArrayClose) {
            items.push(self.expr()?);
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::ArrayClose)?;
                break;
            }
        }
        Ok(Expr::Array(items))
    }

    /// `{ key: value, ... }` with static, quoted, computed (`[expr]:`), bind (`@k:`) and
    /// shorthand (`{ a }`, a visible variable) keys; a trailing comma is allowed.
    pub(crate) fn expr_primary_object(&mut self) -> Result<Expr, ArangoError> {
        self.expect_punct(Punct::ObjectOpen)?;
        let mut entries = Vec::new();
        while !self.eat_punct(Punct::ObjectClose) {
            entries.push(self.object_entry()?);
            if !self.eat_punct(Punct::Comma) {
                self.expect_punct(Punct::ObjectClose)?;
                break;
            }
        }
        Ok(Expr::Object(entries))
    }

    fn object_entry(&mut self) -> Result<(ObjectKey, Expr), ArangoError> {
        let token = self.peek().clone();
        let key = match token.tok {
            Tok::Ident(name) => {
                self.advance();
                if !self.at_punct(Punct::Colon) {
                    let special = matches!(name.as_str(), "NEW" | "OLD");
                    if !special && !self.is_variable(&name) {
                        return Err(error::positioned(
                            quince_errors::QUERY_VARIABLE_NAME_UNKNOWN,
                            self.text,
                            token.span,
                            &format!("use of unknown variable '{name}' in object literal"),
                        ));
                    }
                    return Ok((ObjectKey::Static(name.clone()), Expr::Name(name)));
                }
                ObjectKey::Static(name)
            }
            Tok::String(name) => {
                self.advance();
                ObjectKey::Static(name)
            }
            Tok::Bind(name) => {
                self.advance();
                ObjectKey::Bind(name)
            }
            Tok::Punct(Punct::ArrayOpen) => {
                self.advance();
                let key = self.expr()?;
                self.expect_punct(Punct::ArrayClose)?;
                ObjectKey::Computed(key)
            }
            _ => return Err(self.unexpected()),
        };
        self.expect_punct(Punct::Colon)?;
        Ok((key, self.expr()?))
    }
}

/// One path step after an operand.
enum Step {
    Attribute(String),
    Index(Expr),
}

/// Applies `step` to `expr`, or to the innermost projection of an open expansion.
fn apply_step(expr: Expr, step: Step, open_expansion: bool) -> Expr {
    let wrap = |base: Expr, step: Step| match step {
        Step::Attribute(name) => Expr::Attribute(Box::new(base), name),
        Step::Index(index) => Expr::Index(Box::new(base), Box::new(index)),
    };
    match expr {
        Expr::Expansion(mut expansion) if open_expansion => {
            let slot = innermost_projection(&mut expansion);
            let base = slot.take().unwrap_or(Expr::Current);
            *slot = Some(wrap(base, step));
            Expr::Expansion(expansion)
        }
        expr => wrap(expr, step),
    }
}

/// The projection slot of the innermost expansion nested through projections.
fn innermost_projection(expansion: &mut Expansion) -> &mut Option<Expr> {
    match expansion.projection {
        Some(Expr::Expansion(ref mut inner)) => innermost_projection(inner),
        _ => &mut expansion.projection,
    }
}

/// `-n` for a number literal: an integer stays an integer.
fn negate(n: &serde_json::Number) -> Value {
    match n.as_i64().and_then(i64::checked_neg) {
        Some(i) => Value::from(i),
        None => serde_json::Number::from_f64(-n.as_f64().unwrap_or(0.0))
            .map_or(Value::Null, Value::Number),
    }
}
