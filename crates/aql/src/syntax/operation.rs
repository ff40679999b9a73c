//! The read operations of AQL: `FOR` (with `SEARCH` and `OPTIONS`), `LET`, `COLLECT` in all
//! its forms, `SORT`, `LIMIT`, `WINDOW` and `RETURN`, plus the `OPTIONS { ... }` rule they
//! share with the data modifications.
//!
//! What it is: grammar rules on [`Parser`], each taking its keyword and producing
//! [`Operation`]s, and declaring the variables they introduce.
//!
//! What it is not: graph traversals and path searches (`FOR v, e, p IN 1..3 OUTBOUND ...`),
//! which `graph.rs` parses once `for_operation` has seen their direction keyword.
//!
//! Invariants: a `FOR` over a collection or an array has exactly one variable (ArangoDB's
//! 1501 "Collections and views FOR loops only allow a single return variable"); `OPTIONS`
//! is an object literal whose values are known when the query is compiled (literals and
//! bind parameters); `RETURN DISTINCT` only inside a loop or `COLLECT`.

use quince_errors::ArangoError;

use super::error;
use super::lexer::{Keyword, Punct, Tok};
use super::parser::Parser;
use super::scope::ScopeKind;
use crate::ast::{
    Collect, CollectInto, Expr, ObjectKey, Operation, OperationKind, SortKey, Span, Window,
};

impl Parser<'_> {
    /// `FOR var IN source [SEARCH cond] [OPTIONS {...}]`.
    pub(crate) fn for_operation(&mut self, out: &mut Vec<Operation>) -> Result<(), ArangoError> {
        let span = self.advance().span;
        let (variable, _) = self.expect_name()?;
        let mut variables = vec![variable.clone()];
        while self.eat_punct(Punct::Comma) {
            variables.push(self.expect_name()?.0);
        }
        let more_variables = variables.len() > 1;
        self.expect_keyword(Keyword::In)?;
        if self.at_graph_direction() {
            return self.graph_operation(span, variables, None, out);
        }
        self.refuse_graph()?;
        let source = self.expr()?;
        if self.at_graph_direction() {
            return self.graph_operation(span, variables, Some(source), out);
        }
        self.refuse_graph()?;
        if more_variables {
            return Err(self.error_at(
                span,
                "Collections and views FOR loops only allow a single return variable",
            ));
        }
        self.scopes.open(ScopeKind::For);
        self.declare(&variable)?;

        // Up to two qualifiers: `SEARCH expr`, `OPTIONS expr`, or `SEARCH expr OPTIONS expr`.
        let mut qualifiers = Vec::new();
        while qualifiers.len() < 2 {
            let Tok::Ident(word) = self.tok().clone() else {
                break;
            };
            let word_span = self.advance().span;
            let value_span = self.peek().span;
            let value = self.expr()?;
            qualifiers.push((word, word_span, value, value_span));
        }
        let mut options = None;
        let mut search = None;
        match qualifiers.as_slice() {
            [] => {}
            [(word, word_span, value, value_span)] => {
                if word.eq_ignore_ascii_case("SEARCH") {
                    search = Some((*word_span, value.clone(), None));
                } else if word.eq_ignore_ascii_case("OPTIONS") {
                    self.check_options(value, *value_span)?;
                    options = Some(value.clone());
                } else {
                    return Err(self.error_at(
                        *word_span,
                        &format!("unexpected qualifier '{word}', expecting 'SEARCH' or 'OPTIONS'"),
                    ));
                }
            }
            [(first, first_span, condition, _), (second, _, value, value_span)] => {
                if !first.eq_ignore_ascii_case("SEARCH") || !second.eq_ignore_ascii_case("OPTIONS")
                {
                    return Err(self.error_at(
                        *first_span,
                        &format!(
                            "unexpected qualifier '{first}', expecting 'SEARCH' and 'OPTIONS'"
                        ),
                    ));
                }
                self.check_options(value, *value_span)?;
                search = Some((*first_span, condition.clone(), Some(value.clone())));
            }
            _ => unreachable!("at most two qualifiers"),
        }
        if search.is_some() && !matches!(source, Expr::Name(_) | Expr::BindCollection(_)) {
            return Err(self.error_at(span, "SEARCH condition used on non-view"));
        }
        out.push(Operation {
            span,
            kind: OperationKind::For {
                variable,
                source,
                options,
            },
        });
        if let Some((span, condition, options)) = search {
            out.push(Operation {
                span,
                kind: OperationKind::Search { condition, options },
            });
        }
        Ok(())
    }

    /// A graph keyword where no graph operation can start is "unexpected".
    fn refuse_graph(&self) -> Result<(), ArangoError> {
        let graph = matches!(
            self.tok(),
            Tok::Keyword(
                Keyword::ShortestPath
                    | Keyword::KShortestPaths
                    | Keyword::KPaths
                    | Keyword::AllShortestPaths
                    | Keyword::Graph
            )
        );
        if graph {
            return Err(self.unexpected());
        }
        Ok(())
    }

    /// `LET a = x, b = y, ...`: one `Let` operation per assignment.
    pub(crate) fn let_operations(&mut self, out: &mut Vec<Operation>) -> Result<(), ArangoError> {
        let span = self.advance().span;
        loop {
            let (variable, _) = self.expect_name()?;
            self.expect_punct(Punct::Assign)?;
            let value = self.expr()?;
            self.declare(&variable)?;
            out.push(Operation {
                span,
                kind: OperationKind::Let { variable, value },
            });
            if !self.eat_punct(Punct::Comma) {
                return Ok(());
            }
        }
    }

    /// `COLLECT` in ArangoDB's six forms: `WITH COUNT INTO n`, groups with `WITH COUNT INTO
    /// n`, `AGGREGATE ...` with or without groups (and `INTO`), groups with `INTO` and
    /// `KEEP`; each may end with `OPTIONS {...}`.
    pub(crate) fn collect_operation(&mut self) -> Result<Operation, ArangoError> {
        let span = self.advance().span;
        let mut collect = Collect {
            groups: Vec::new(),
            aggregates: Vec::new(),
            into: None,
            keep: Vec::new(),
            count_into: None,
            options: None,
        };
        if !self.at_keyword(Keyword::With) && !self.at_keyword(Keyword::Aggregate) {
            collect.groups = self.assignments(false)?;
        }
        if self.at_keyword(Keyword::With) {
            collect.count_into = Some(self.count_into()?);
        } else {
            if self.eat_keyword(Keyword::Aggregate) {
                collect.aggregates = self.assignments(true)?;
            }
            if self.eat_keyword(Keyword::Into) {
                let (variable, _) = self.expect_name()?;
                let value = if self.eat_punct(Punct::Assign) {
                    Some(self.expr()?)
                } else {
                    None
                };
                collect.into = Some(CollectInto { variable, value });
            }
            let keep_next = matches!(self.tok(), Tok::Ident(_))
                && !matches!(self.peek_at(1).tok, Tok::Punct(Punct::ObjectOpen));
            if keep_next && collect.aggregates.is_empty() && !collect.groups.is_empty() {
                collect.keep = self.keep(collect.into.is_some(), span)?;
            }
        }
        collect.options = self.options()?;
        self.check_collect_references(&collect, span)?;
        self.declare_collect(&collect)?;
        Ok(Operation {
            span,
            kind: OperationKind::Collect(collect),
        })
    }

    /// `name = expr, ...` (groups) or `name = FUNC(args), ...` (aggregates); each name is
    /// declared as it is read, as ArangoDB does, so duplicates are 1511.
    fn assignments(&mut self, aggregate: bool) -> Result<Vec<(String, Expr)>, ArangoError> {
        let mut list = Vec::new();
        loop {
            let (name, _) = self.expect_name()?;
            self.expect_punct(Punct::Assign)?;
            let value = if aggregate {
                self.aggregate_call()?
            } else {
                self.expr()?
            };
            self.declare(&name)?;
            list.push((name, value));
            if !self.eat_punct(Punct::Comma) {
                return Ok(list);
            }
        }
    }

    /// `WITH COUNT INTO name` (`COUNT` is a contextual keyword).
    fn count_into(&mut self) -> Result<String, ArangoError> {
        self.expect_keyword(Keyword::With)?;
        let (word, word_span) = self.expect_name()?;
        self.expect_keyword(Keyword::Into)?;
        let (variable, _) = self.expect_name()?;
        if !word.eq_ignore_ascii_case("COUNT") {
            return Err(self.error_at(
                word_span,
                &format!("unexpected qualifier '{word}', expecting 'COUNT'"),
            ));
        }
        Ok(variable)
    }

    /// `KEEP a, b`: variables that must be visible.
    fn keep(&mut self, has_into: bool, collect_span: Span) -> Result<Vec<String>, ArangoError> {
        let (word, word_span) = self.expect_name()?;
        if !word.eq_ignore_ascii_case("KEEP") {
            return Err(self.error_at(
                word_span,
                &format!("unexpected qualifier '{word}', expecting 'KEEP'"),
            ));
        }
        let mut names = Vec::new();
        loop {
            let (name, name_span) = self.expect_name()?;
            if !self.is_variable(&name) {
                return Err(self.error_at(
                    name_span,
                    &format!("use of unknown variable '{name}' for KEEP"),
                ));
            }
            names.push(name);
            if !self.eat_punct(Punct::Comma) {
                break;
            }
        }
        if !has_into {
            return Err(self.error_at(collect_span, "use of 'KEEP' without 'INTO'"));
        }
        Ok(names)
    }

    /// ArangoDB's checks of what a `COLLECT`'s own expressions may use: an aggregate may not
    /// use the group variables or the aggregate variables, the `INTO` expression neither.
    fn check_collect_references(&self, collect: &Collect, span: Span) -> Result<(), ArangoError> {
        let unknown = |detail: String| {
            error::positioned(
                quince_errors::QUERY_VARIABLE_NAME_UNKNOWN,
                self.text,
                span,
                &detail,
            )
        };
        let mut introduced: Vec<&str> = Vec::new();
        for (name, value) in &collect.aggregates {
            introduced.push(name);
            let used = super::walk::referenced(value);
            if let Some(var) = used.iter().find(|u| introduced.contains(&u.as_str())) {
                return Err(unknown(format!(
                    "use of COLLECT variable '{var}' inside same COLLECT"
                )));
            }
            if let Some((var, _)) = collect.groups.iter().find(|(g, _)| used.contains(g)) {
                return Err(unknown(format!(
                    "use of unknown variable '{var}' in AGGREGATE expression"
                )));
            }
        }
        if let Some(value) = collect.into.as_ref().and_then(|into| into.value.as_ref()) {
            let used = super::walk::referenced(value);
            let own = collect
                .groups
                .iter()
                .chain(&collect.aggregates)
                .map(|(n, _)| n);
            if let Some(var) = own.into_iter().find(|n| used.contains(n)) {
                return Err(unknown(format!(
                    "use of COLLECT variable '{var}' inside same COLLECT's expression"
                )));
            }
        }
        Ok(())
    }

    /// Declares what a `COLLECT` introduces, in the scope it opens.
    fn declare_collect(&mut self, collect: &Collect) -> Result<(), ArangoError> {
        let own: Vec<(String, u32)> = collect
            .groups
            .iter()
            .chain(&collect.aggregates)
            .filter_map(|(name, _)| Some((name.clone(), self.scopes.lookup(name)?)))
            .collect();
        if self.scopes.start_collect() {
            for (name, id) in own {
                self.scopes.redeclare(&name, id);
            }
        }
        if let Some(into) = &collect.into {
            self.declare(&into.variable)?;
        }
        if let Some(name) = &collect.count_into {
            self.declare(name)?;
        }
        Ok(())
    }

    /// `SORT expr [ASC|DESC], ...`; a literal direction is also accepted (`"DESC"`, `false`).
    pub(crate) fn sort_operation(&mut self) -> Result<Operation, ArangoError> {
        let span = self.advance().span;
        let mut keys = Vec::new();
        loop {
            let value = self.expr()?;
            let ascending = self.sort_direction()?;
            keys.push(SortKey { value, ascending });
            if !self.eat_punct(Punct::Comma) {
                return Ok(Operation {
                    span,
                    kind: OperationKind::Sort(keys),
                });
            }
        }
    }

    /// The direction after a sort expression: `ASC`, `DESC`, nothing (ascending), or a
    /// literal: the strings `"ASC"`/`"DESC"` (any case), otherwise its truthiness.
    fn sort_direction(&mut self) -> Result<bool, ArangoError> {
        let ascending = match self.tok() {
            Tok::Keyword(Keyword::Asc) => true,
            Tok::Keyword(Keyword::Desc) => false,
            Tok::Keyword(Keyword::True) => true,
            Tok::Keyword(Keyword::False | Keyword::Null) => false,
            Tok::Number { value, .. } => value.as_f64().is_some_and(|v| v != 0.0),
            Tok::String(s) if s.eq_ignore_ascii_case("DESC") => false,
            Tok::String(s) => !s.is_empty(),
            Tok::Bind(_) => {
                return Err(self.error_at(
                    self.peek().span,
                    "a bind parameter as SORT direction is not supported",
                ))
            }
            _ => return Ok(true),
        };
        self.advance();
        Ok(ascending)
    }

    /// `LIMIT count` or `LIMIT offset, count`.
    pub(crate) fn limit_operation(&mut self) -> Result<Operation, ArangoError> {
        let span = self.advance().span;
        let (offset, count) = self.limit_values()?;
        Ok(Operation {
            span,
            kind: OperationKind::Limit { offset, count },
        })
    }

    /// The values after `LIMIT` (also inside `[* LIMIT ...]`).
    pub(crate) fn limit_values(&mut self) -> Result<(Option<Expr>, Expr), ArangoError> {
        let first = self.expr()?;
        if self.eat_punct(Punct::Comma) {
            Ok((Some(first), self.expr()?))
        } else {
            Ok((None, first))
        }
    }

    /// `WINDOW { preceding, following } AGGREGATE ...` or `WINDOW range WITH { ... }
    /// AGGREGATE ...`.
    pub(crate) fn window_operation(&mut self) -> Result<Operation, ArangoError> {
        let span = self.advance().span;
        let first = self.expr()?;
        let (range_value, bounds) =
            if matches!(first, Expr::Object(_)) && self.at_keyword(Keyword::Aggregate) {
                (None, first)
            } else {
                self.expect_keyword(Keyword::With)?;
                if !self.at_punct(Punct::ObjectOpen) {
                    return Err(self.unexpected());
                }
                (Some(first), self.expr_primary_object()?)
            };
        self.expect_keyword(Keyword::Aggregate)?;
        let aggregates = self.assignments(true)?;
        self.check_window_bounds(&bounds, span)?;
        Ok(Operation {
            span,
            kind: OperationKind::Window(Window {
                range_value,
                bounds,
                aggregates,
            }),
        })
    }

    /// ArangoDB's checks of a window's bounds object.
    fn check_window_bounds(&self, bounds: &Expr, span: Span) -> Result<(), ArangoError> {
        let Expr::Object(entries) = bounds else {
            unreachable!("window bounds are an object literal")
        };
        if entries.is_empty() {
            return Err(self.error_at(
                span,
                "At least one WINDOW bound must be specified ('preceding'/'following')",
            ));
        }
        let mut seen: Vec<&str> = Vec::new();
        for (key, _) in entries {
            let name = match key {
                ObjectKey::Static(name) => name.as_str(),
                _ => "",
            };
            if name != "preceding" && name != "following" {
                return Err(self.error_at(
                    span,
                    &format!(
                        "Invalid WINDOW attribute '{name}'; only \"preceding\" and \
                         \"following\" are supported"
                    ),
                ));
            }
            if seen.contains(&name) {
                return Err(self.error_at(
                    span,
                    &format!("WINDOW attribute '{name}' is specified multiple times"),
                ));
            }
            seen.push(name);
        }
        Ok(())
    }

    /// `RETURN [DISTINCT] expr`.
    pub(crate) fn return_operation(&mut self) -> Result<Operation, ArangoError> {
        let span = self.advance().span;
        let distinct = self.at_keyword(Keyword::Distinct);
        if distinct {
            let distinct_span = self.advance().span;
            if self.scopes.at_query_level() {
                return Err(self.error_at(
                    distinct_span,
                    "cannot use DISTINCT modifier on top-level query element",
                ));
            }
        }
        let value = self.expr()?;
        Ok(Operation {
            span,
            kind: OperationKind::Return { distinct, value },
        })
    }

    /// `[OPTIONS { ... }]` after an operation: a contextual `OPTIONS` and an object literal.
    pub(crate) fn options(&mut self) -> Result<Option<Expr>, ArangoError> {
        let Tok::Ident(word) = self.tok().clone() else {
            return Ok(None);
        };
        let word_span = self.advance().span;
        if !self.at_punct(Punct::ObjectOpen) {
            return Err(self.unexpected());
        }
        let value_span = self.peek().span;
        let value = self.expr_primary_object()?;
        if !word.eq_ignore_ascii_case("OPTIONS") {
            return Err(self.error_at(
                word_span,
                &format!("unexpected qualifier '{word}', expecting 'OPTIONS'"),
            ));
        }
        self.check_options(&value, value_span)?;
        Ok(Some(value))
    }

    /// `OPTIONS` must be an object (1501) known at compile time (1575).
    pub(crate) fn check_options(&self, value: &Expr, span: Span) -> Result<(), ArangoError> {
        if !matches!(value, Expr::Object(_)) {
            return Err(self.error_at(span, "'OPTIONS' have to be an object"));
        }
        if !is_compile_time_constant(value) {
            return Err(error::positioned(
                quince_errors::QUERY_COMPILE_TIME_OPTIONS,
                self.text,
                span,
                "'OPTIONS' have to be known at query compile time",
            ));
        }
        Ok(())
    }
}

/// True for values known before the query runs: literals, bind parameters, and arrays,
/// objects and operators over them.
fn is_compile_time_constant(expr: &Expr) -> bool {
    match expr {
        Expr::Literal(_) | Expr::Bind(_) | Expr::BindCollection(_) => true,
        Expr::Array(items) => items.iter().all(is_compile_time_constant),
        Expr::Object(entries) => entries.iter().all(|(key, value)| {
            let key_constant = match key {
                ObjectKey::Computed(k) => is_compile_time_constant(k),
                ObjectKey::Static(_) | ObjectKey::Bind(_) => true,
            };
            key_constant && is_compile_time_constant(value)
        }),
        Expr::Unary(_, operand) => is_compile_time_constant(operand),
        Expr::Binary(_, lhs, rhs) | Expr::Range(lhs, rhs) => {
            is_compile_time_constant(lhs) && is_compile_time_constant(rhs)
        }
        _ => false,
    }
}
