//! The graph operations of AQL: traversals (`FOR v, e, p IN 1..3 OUTBOUND start GRAPH g`) and
//! the path searches (`SHORTEST_PATH`, `K_SHORTEST_PATHS`, `K_PATHS`, `ALL_SHORTEST_PATHS`).
//!
//! What it is: [`Parser::graph_operation`], called by `FOR` once it has seen `IN [depth]`
//! followed by `OUTBOUND`, `INBOUND` or `ANY`, producing [`OperationKind::Traversal`] or
//! [`OperationKind::PathSearch`] and declaring their variables.
//!
//! What it is not: the meaning of the depth, the graph or the options (the planner checks
//! them: a depth must be a number or a range of numbers, a graph must exist).
//!
//! Invariants (ArangoDB's grammar): a traversal has one to three variables, `SHORTEST_PATH`
//! one or two, the other searches one; only traversals and `K_PATHS` take a depth; the graph
//! is `GRAPH name` (a string, an identifier or a bind parameter) or a comma-separated list of
//! edge collections, each optionally preceded by its own direction; `PRUNE` only follows a
//! traversal, and its variable (`PRUNE var = cond`) is visible after it; the traversal's
//! variables are visible in `PRUNE`.

use quince_errors::ArangoError;

use super::lexer::{Keyword, Punct, Tok};
use super::parser::Parser;
use super::scope::ScopeKind;
use crate::ast::{
    CollectionRef, Expr, GraphDirection, GraphRef, Operation, OperationKind, PathKind, PathSearch,
    Prune, Span, Traversal,
};

impl Parser<'_> {
    /// True if the next token is `OUTBOUND`, `INBOUND` or `ANY`.
    pub(crate) fn at_graph_direction(&self) -> bool {
        matches!(
            self.tok(),
            Tok::Keyword(Keyword::Outbound | Keyword::Inbound | Keyword::Any)
        )
    }

    /// Takes a direction keyword if one is next.
    fn graph_direction(&mut self) -> Option<GraphDirection> {
        let direction = match self.tok() {
            Tok::Keyword(Keyword::Outbound) => GraphDirection::Outbound,
            Tok::Keyword(Keyword::Inbound) => GraphDirection::Inbound,
            Tok::Keyword(Keyword::Any) => GraphDirection::Any,
            _ => return None,
        };
        self.advance();
        Some(direction)
    }

    /// True if the next token is the contextual keyword `word`.
    fn at_word(&self, word: &str) -> bool {
        matches!(self.tok(), Tok::Ident(w) if w.eq_ignore_ascii_case(word))
    }

    /// A traversal or path search after `FOR vars IN [depth]`; the next token is its
    /// direction.
    pub(crate) fn graph_operation(
        &mut self,
        span: Span,
        variables: Vec<String>,
        depth: Option<Expr>,
        out: &mut Vec<Operation>,
    ) -> Result<(), ArangoError> {
        let direction = self.graph_direction().expect("a direction is next");
        let kind = match self.tok() {
            Tok::Keyword(Keyword::ShortestPath) => Some(PathKind::Shortest),
            Tok::Keyword(Keyword::KShortestPaths) => Some(PathKind::KShortest),
            Tok::Keyword(Keyword::KPaths) => Some(PathKind::KPaths),
            Tok::Keyword(Keyword::AllShortestPaths) => Some(PathKind::AllShortest),
            _ => None,
        };
        match kind {
            Some(kind) => {
                let keyword_span = self.advance().span;
                self.path_search(span, keyword_span, kind, variables, depth, direction, out)
            }
            None => self.traversal(span, variables, depth, direction, out),
        }
    }

    fn traversal(
        &mut self,
        span: Span,
        variables: Vec<String>,
        depth: Option<Expr>,
        direction: GraphDirection,
        out: &mut Vec<Operation>,
    ) -> Result<(), ArangoError> {
        if variables.len() > 3 {
            return Err(self.error_at(
                span,
                "Traversals only have one, two or three return variables",
            ));
        }
        let start = self.expr()?;
        let graph = self.graph_ref()?;
        let mut names = variables.into_iter();
        let vertex = names.next().expect("one variable");
        let edge = names.next();
        let path = names.next();
        self.scopes.open(ScopeKind::For);
        for name in std::iter::once(&vertex).chain(&edge).chain(&path) {
            self.declare(name)?;
        }
        let mut prune = None;
        if self.at_word("PRUNE") {
            self.advance();
            let variable = if matches!(self.tok(), Tok::Ident(_))
                && matches!(self.peek_at(1).tok, Tok::Punct(Punct::Assign))
            {
                let (name, _) = self.expect_name()?;
                self.advance();
                Some(name)
            } else {
                None
            };
            let condition = self.expr()?;
            if let Some(name) = &variable {
                self.declare(name)?;
            }
            prune = Some(Prune {
                variable,
                condition,
            });
        }
        let options = self.graph_options()?;
        out.push(Operation {
            span,
            kind: OperationKind::Traversal(Box::new(Traversal {
                vertex,
                edge,
                path,
                depth,
                direction,
                start,
                graph,
                prune,
                options,
            })),
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn path_search(
        &mut self,
        span: Span,
        keyword_span: Span,
        kind: PathKind,
        variables: Vec<String>,
        depth: Option<Expr>,
        direction: GraphDirection,
        out: &mut Vec<Operation>,
    ) -> Result<(), ArangoError> {
        let most = if kind == PathKind::Shortest { 2 } else { 1 };
        if variables.len() > most {
            let detail = if kind == PathKind::Shortest {
                "SHORTEST_PATH only has one or two return variables".to_owned()
            } else {
                format!("{} only has one return variable", kind.keyword())
            };
            return Err(self.error_at(span, &detail));
        }
        if depth.is_some() && kind != PathKind::KPaths {
            return Err(self.error_at(
                keyword_span,
                &format!("{} does not take a depth", kind.keyword()),
            ));
        }
        let source = self.expr()?;
        if !self.at_word("TO") {
            return Err(self.unexpected());
        }
        self.advance();
        let target = self.expr()?;
        let graph = self.graph_ref()?;
        let mut names = variables.into_iter();
        let variable = names.next().expect("one variable");
        let edge = names.next();
        self.scopes.open(ScopeKind::For);
        for name in std::iter::once(&variable).chain(&edge) {
            self.declare(name)?;
        }
        let options = self.graph_options()?;
        out.push(Operation {
            span,
            kind: OperationKind::PathSearch(Box::new(PathSearch {
                kind,
                variable,
                edge,
                depth,
                direction,
                source,
                target,
                graph,
                options,
            })),
        });
        Ok(())
    }

    /// `GRAPH name` or `[dir] coll, [dir] coll, ...`.
    fn graph_ref(&mut self) -> Result<GraphRef, ArangoError> {
        if self.eat_keyword(Keyword::Graph) {
            let name = match self.tok().clone() {
                Tok::String(name) | Tok::Ident(name) => Expr::Literal(name.into()),
                Tok::Bind(name) => Expr::Bind(name),
                _ => return Err(self.unexpected()),
            };
            self.advance();
            return Ok(GraphRef::Named(name));
        }
        let mut collections = Vec::new();
        loop {
            let direction = self.graph_direction();
            let collection = match self.tok().clone() {
                Tok::Ident(name) | Tok::String(name) => CollectionRef::Name(name),
                Tok::BindCollection(name) => CollectionRef::Bind(name),
                _ => return Err(self.unexpected()),
            };
            self.advance();
            collections.push((direction, collection));
            if !self.eat_punct(Punct::Comma) {
                return Ok(GraphRef::Collections(collections));
            }
        }
    }

    /// `[OPTIONS {...}]` after a graph operation (a `PRUNE` after `OPTIONS` is refused).
    fn graph_options(&mut self) -> Result<Option<Expr>, ArangoError> {
        if !self.at_word("OPTIONS") {
            return Ok(None);
        }
        self.advance();
        let value_span = self.peek().span;
        let value = self.expr()?;
        self.check_options(&value, value_span)?;
        Ok(Some(value))
    }
}
