//! AQL text to [`Query`]: the lexer, the parser, and what `POST /_api/query` reports about a
//! parsed query (bind parameters, collections, ArangoDB's AST JSON).
//!
//! What it is: [`parse`] (the whole grammar of AQL 3.12, graph traversals and path searches
//! included, except the `[? ...]` question-mark operator and array destructuring, which are
//! refused with error 1501), [`bind_parameters`], [`collections`] and [`ast_json`].
//!
//! What it is not: the planner. Bare names stay [`crate::ast::Expr::Name`] whether they are
//! variables or collections; bind parameters are not substituted; function names and
//! aggregate functions are not checked.
//!
//! Invariants: errors are ArangoDB's: 1502 for an empty query, 1501 with `near '...' at
//! position line:column` for syntax errors, 1504 for a number literal out of range, 1511 for
//! a variable declared twice in visible scopes, 1512 for an unknown variable in an object
//! shorthand or a `COLLECT`'s own expressions, 1575 for `OPTIONS` not known at compile
//! time, 1524 for nesting deeper than the parser's bound; messages have the `AQL: ...
//! (while parsing)` frame ArangoDB sends (except 1502, which it sends bare).

mod ast_json;
mod collections;
mod error;
mod expr;
mod graph;
mod lexer;
mod modify;
mod operation;
mod parser;
mod scope;
pub(crate) mod walk;

use quince_errors::ArangoError;

pub use ast_json::ast_json;
pub use collections::collections;

use crate::ast::{CollectionRef, Expr, Query};
use lexer::{Keyword, Punct, Tok};
use parser::Parser;
use scope::ScopeKind;
use walk::Item;

/// Parses a whole query.
pub fn parse(text: &str) -> Result<Query, ArangoError> {
    if text.is_empty() {
        return Err(ArangoError::with_message(
            quince_errors::QUERY_EMPTY,
            "query is empty",
        ));
    }
    let mut parser = Parser::new(text, lexer::lex(text));
    parser.scopes.open(ScopeKind::Main);
    let with = parser.with_collections()?;
    let operations = parser.operations()?;
    if parser.tok() != &Tok::End {
        return Err(parser.unexpected());
    }
    Ok(Query { with, operations })
}

/// The bind parameters of `query` in order of first appearance, each once; collection
/// parameters with their leading `@` (`@@coll` is listed as `@coll`), as ArangoDB's
/// `bindVars`.
pub fn bind_parameters(query: &Query) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    walk::walk_query(query, &mut |item| {
        let name = match item {
            Item::Expr(Expr::Bind(name)) | Item::KeyBind(name) => name.clone(),
            Item::Expr(Expr::BindCollection(name))
            | Item::Collection(CollectionRef::Bind(name)) => format!("@{name}"),
            _ => return,
        };
        if !names.contains(&name) {
            names.push(name);
        }
    });
    names
}

impl Parser<'_> {
    /// `WITH a, @@b c ...` at the start of a query (commas optional).
    fn with_collections(&mut self) -> Result<Vec<CollectionRef>, ArangoError> {
        let mut collections = Vec::new();
        if !self.eat_keyword(Keyword::With) {
            return Ok(collections);
        }
        loop {
            let collection = match self.tok() {
                Tok::Ident(name) => CollectionRef::Name(name.clone()),
                Tok::BindCollection(name) => CollectionRef::Bind(name.clone()),
                Tok::Bind(_) => {
                    return Err(self.error_at(
                        self.peek().span,
                        "a value bind parameter in WITH is not supported, use @@name",
                    ))
                }
                _ => return Err(self.unexpected()),
            };
            self.advance();
            collections.push(collection);
            let more = self.eat_punct(Punct::Comma)
                || matches!(
                    self.tok(),
                    Tok::Ident(_) | Tok::Bind(_) | Tok::BindCollection(_)
                );
            if !more {
                return Ok(collections);
            }
        }
    }
}
