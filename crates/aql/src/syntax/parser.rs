//! The parser's state: the token cursor, the variable scopes, and the query and subquery
//! frame (a list of operations ending with `RETURN` or a data modification).
//!
//! What it is: [`Parser`] with the helpers every grammar file uses (peek, expect, the
//! ArangoDB-worded "unexpected ..." error), the scope stack that ArangoDB's parser keeps
//! (for 1511 redeclarations, `RETURN DISTINCT` outside a loop, `KEEP`, object shorthand and
//! `CURRENT`), and [`Parser::query`]. The operations are in `operation.rs` and
//! `modify.rs`, the expressions in `expr.rs`.
//!
//! What it is not: name resolution for the planner. A bare name that is no variable stays
//! [`Expr::Name`] (a collection, or an error the planner reports).
//!
//! Invariants: a variable is visible from its declaration to the end of its scope; a `FOR`
//! opens a scope, a `COLLECT` inside a loop closes the loops' scopes and opens its own, a
//! subquery opens a scope that sees the enclosing ones; a name may not be declared while a
//! variable of that name is visible (1511), as in ArangoDB.

use quince_errors::ArangoError;

use super::error;
use super::lexer::{Keyword, Punct, Tok, Token};
use super::scope::{ScopeKind, Scopes};
use crate::ast::{Expr, Operation, OperationKind, Query, Span};

/// The deepest recursion of the parser (parentheses, arrays, objects, calls, prefix
/// operators, subqueries) accepted; deeper input is error 1524 rather than a stack overflow.
/// Kept well below ArangoDB's 500 so that a debug build stays within a 2 MiB thread stack.
const NESTING_MAX: u32 = 64;

/// The deepest expression tree accepted (ArangoDB's limit); operator and path chains
/// (`1 + 1 + ...`, `a.b.c...`) count one level per link, so later recursive walks of the
/// tree are bounded too.
const EXPRESSION_DEPTH_MAX: u32 = 500;

/// The parser state.
pub(crate) struct Parser<'a> {
    /// The query text, for error snippets.
    pub(crate) text: &'a str,
    /// All tokens, ending with `End`.
    tokens: Vec<Token>,
    /// The index of the next token.
    at: usize,
    /// The variables visible at the current position.
    pub(crate) scopes: Scopes,
    /// How many constructs that provide `CURRENT` (array inline expressions, `UPSERT
    /// FILTER`) enclose the current position.
    pub(crate) current_depth: u32,
    /// How deeply expressions and subqueries nest at the current position.
    nesting: u32,
}

impl<'a> Parser<'a> {
    /// A parser over `tokens` (which end with `End`) of `text`.
    pub(crate) fn new(text: &'a str, tokens: Vec<Token>) -> Self {
        assert!(
            matches!(tokens.last().map(|t| &t.tok), Some(Tok::End)),
            "tokens end with End"
        );
        Parser {
            text,
            tokens,
            at: 0,
            scopes: Scopes::default(),
            current_depth: 0,
            nesting: 0,
        }
    }

    // ---- the token cursor -------------------------------------------------------------

    /// The next token.
    pub(crate) fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    /// The token `ahead` positions after the next one (the `End` token repeats).
    pub(crate) fn peek_at(&self, ahead: usize) -> &Token {
        let last = self.tokens.len() - 1;
        &self.tokens[(self.at + ahead).min(last)]
    }

    /// The next token's kind.
    pub(crate) fn tok(&self) -> &Tok {
        &self.peek().tok
    }

    /// Takes the next token (never moves past `End`).
    pub(crate) fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        token
    }

    /// True if the next token is `keyword`.
    pub(crate) fn at_keyword(&self, keyword: Keyword) -> bool {
        self.tok() == &Tok::Keyword(keyword)
    }

    /// True if the next token is `punct`.
    pub(crate) fn at_punct(&self, punct: Punct) -> bool {
        self.tok() == &Tok::Punct(punct)
    }

    /// Takes `keyword` if it is next.
    pub(crate) fn eat_keyword(&mut self, keyword: Keyword) -> bool {
        let found = self.at_keyword(keyword);
        if found {
            self.advance();
        }
        found
    }

    /// Takes `punct` if it is next.
    pub(crate) fn eat_punct(&mut self, punct: Punct) -> bool {
        let found = self.at_punct(punct);
        if found {
            self.advance();
        }
        found
    }

    /// Takes `keyword` or fails with "unexpected ...".
    pub(crate) fn expect_keyword(&mut self, keyword: Keyword) -> Result<Span, ArangoError> {
        if self.at_keyword(keyword) {
            Ok(self.advance().span)
        } else {
            Err(self.unexpected())
        }
    }

    /// Takes `punct` or fails with "unexpected ...".
    pub(crate) fn expect_punct(&mut self, punct: Punct) -> Result<Span, ArangoError> {
        if self.at_punct(punct) {
            Ok(self.advance().span)
        } else {
            Err(self.unexpected())
        }
    }

    /// Takes a name (an identifier or quoted name; not a keyword) or fails.
    pub(crate) fn expect_name(&mut self) -> Result<(String, Span), ArangoError> {
        match self.tok() {
            Tok::Ident(name) => {
                let name = name.clone();
                Ok((name, self.advance().span))
            }
            _ => Err(self.unexpected()),
        }
    }

    /// The error for the next token: ArangoDB's "syntax error, unexpected <token>", or the
    /// lexical error that token stands for.
    pub(crate) fn unexpected(&self) -> ArangoError {
        let token = self.peek();
        if let Tok::Error(err) = &token.tok {
            return (**err).clone();
        }
        let detail = format!("syntax error, unexpected {}", token.tok.describe());
        error::syntax(self.text, token.span, &detail)
    }

    /// A 1501 error at `span` with `detail`.
    pub(crate) fn error_at(&self, span: Span, detail: &str) -> ArangoError {
        error::syntax(self.text, span, detail)
    }

    /// Counts one more level of nesting; error 1524 beyond [`NESTING_MAX`]. Pair with
    /// [`Parser::leave`].
    pub(crate) fn enter(&mut self) -> Result<(), ArangoError> {
        self.nesting += 1;
        if self.nesting > NESTING_MAX {
            return Err(error::plain(
                quince_errors::QUERY_TOO_MUCH_NESTING,
                quince_errors::QUERY_TOO_MUCH_NESTING.message,
            ));
        }
        Ok(())
    }

    /// Checks that `links` more levels of a chain built at the current nesting stay within
    /// [`EXPRESSION_DEPTH_MAX`] (error 1524 otherwise).
    pub(crate) fn check_chain(&self, links: u32) -> Result<(), ArangoError> {
        if self.nesting.saturating_add(links) > EXPRESSION_DEPTH_MAX {
            return Err(error::plain(
                quince_errors::QUERY_TOO_MUCH_NESTING,
                quince_errors::QUERY_TOO_MUCH_NESTING.message,
            ));
        }
        Ok(())
    }

    /// Ends a level counted by [`Parser::enter`].
    pub(crate) fn leave(&mut self) {
        assert!(self.nesting > 0, "leave without enter");
        self.nesting -= 1;
    }

    // ---- scopes -----------------------------------------------------------------------

    /// True if a variable `name` is visible.
    pub(crate) fn is_variable(&self, name: &str) -> bool {
        self.scopes.lookup(name).is_some()
    }

    /// Declares `name` in the innermost scope; 1511 if a variable of that name is visible.
    pub(crate) fn declare(&mut self, name: &str) -> Result<(), ArangoError> {
        self.scopes.declare(name).map(|_| ()).map_err(|()| {
            error::plain(
                quince_errors::QUERY_VARIABLE_REDECLARED,
                &format!("variable '{name}' is assigned multiple times"),
            )
        })
    }

    /// The expression for the bare name `name` at the current position: `CURRENT` (or
    /// `$CURRENT`) where an inline expression provides it and no variable of that name is
    /// visible, else [`Expr::Name`].
    pub(crate) fn name_expr(&self, name: String) -> Expr {
        let is_current = name == "CURRENT" || name == "$CURRENT";
        if is_current && self.current_depth > 0 && !self.is_variable(&name) {
            Expr::Current
        } else {
            Expr::Name(name)
        }
    }

    // ---- queries ----------------------------------------------------------------------

    /// True if the next token starts an operation (and so a query or subquery).
    pub(crate) fn at_operation(&self) -> bool {
        matches!(
            self.tok(),
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
        )
    }

    /// Operations up to and including the final `RETURN` or a data modification that the
    /// query ends with (next token `End`, `)` or `,`). The caller checks what follows.
    pub(crate) fn operations(&mut self) -> Result<Vec<Operation>, ArangoError> {
        let mut operations = Vec::new();
        loop {
            let Tok::Keyword(keyword) = *self.tok() else {
                return Err(self.unexpected());
            };
            match keyword {
                Keyword::Return => {
                    operations.push(self.return_operation()?);
                    return Ok(operations);
                }
                Keyword::Insert
                | Keyword::Update
                | Keyword::Replace
                | Keyword::Remove
                | Keyword::Upsert => {
                    operations.push(self.modify_operation()?);
                    let ends = matches!(
                        self.tok(),
                        Tok::End | Tok::Punct(Punct::Close | Punct::Comma)
                    );
                    if ends {
                        return Ok(operations);
                    }
                }
                Keyword::For => self.for_operation(&mut operations)?,
                Keyword::Let => self.let_operations(&mut operations)?,
                Keyword::Filter => {
                    let span = self.advance().span;
                    let condition = self.expr()?;
                    operations.push(Operation {
                        span,
                        kind: OperationKind::Filter(condition),
                    });
                }
                Keyword::Collect => operations.push(self.collect_operation()?),
                Keyword::Sort => operations.push(self.sort_operation()?),
                Keyword::Limit => operations.push(self.limit_operation()?),
                Keyword::Window => operations.push(self.window_operation()?),
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// A subquery's operations after its opening (the caller takes `(` and `)`): a new
    /// scope seeing the enclosing ones.
    pub(crate) fn subquery(&mut self) -> Result<Query, ArangoError> {
        self.enter()?;
        self.scopes.open(ScopeKind::Subquery);
        let operations = self.operations()?;
        self.scopes.close_query();
        self.leave();
        Ok(Query {
            with: Vec::new(),
            operations,
        })
    }
}
