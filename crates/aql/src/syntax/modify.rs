//! The data-modification operations: `INSERT`, `UPDATE`, `REPLACE`, `REMOVE`, `UPSERT`.
//!
//! What it is: grammar rules on [`Parser`] producing [`OperationKind::Modify`]: both forms
//! of `UPDATE`/`REPLACE` (`doc IN c` and `key WITH doc IN c`), `IN` or `INTO`, the
//! collection as a name, a quoted string or `@@param`, `OPTIONS {...}`, and `UPSERT` with an
//! example object, a bind parameter, or 3.12's `UPSERT FILTER cond` (where `CURRENT` is the
//! candidate document).
//!
//! What it is not: a check of which collections a query may write; the planner does that.
//!
//! Invariants: the expression before `IN coll` ends where ArangoDB's grammar ends it (see
//! [`Parser::expr_before_collection`]); a value bind parameter (`@c`) cannot name the
//! collection written, only `@@c` can.

use quince_errors::ArangoError;

use super::lexer::{Keyword, Punct, Tok};
use super::parser::Parser;
use crate::ast::{CollectionRef, Expr, Modify, ModifyKind, Operation, OperationKind, UpsertSearch};

impl Parser<'_> {
    /// One data modification, from its keyword to its options.
    pub(crate) fn modify_operation(&mut self) -> Result<Operation, ArangoError> {
        let token = self.advance();
        let Tok::Keyword(keyword) = token.tok else {
            unreachable!("called on a modification keyword")
        };
        let kind = match keyword {
            Keyword::Insert => ModifyKind::Insert {
                document: self.expr_before_collection()?,
            },
            Keyword::Remove => ModifyKind::Remove {
                key: self.expr_before_collection()?,
            },
            Keyword::Update | Keyword::Replace => {
                let first = self.expr_before_collection()?;
                let (key, document) = if self.eat_keyword(Keyword::With) {
                    (Some(first), self.expr_before_collection()?)
                } else {
                    (None, first)
                };
                if keyword == Keyword::Update {
                    ModifyKind::Update { key, document }
                } else {
                    ModifyKind::Replace { key, document }
                }
            }
            Keyword::Upsert => self.upsert()?,
            _ => unreachable!("called on a modification keyword"),
        };
        let collection = self.in_or_into_collection()?;
        let options = self.options()?;
        Ok(Operation {
            span: token.span,
            kind: OperationKind::Modify(Modify {
                kind,
                collection,
                options,
            }),
        })
    }

    /// `UPSERT search INSERT doc UPDATE|REPLACE doc` (the collection follows).
    fn upsert(&mut self) -> Result<ModifyKind, ArangoError> {
        let search = match self.tok() {
            Tok::Keyword(Keyword::Filter) => {
                self.advance();
                self.current_depth += 1;
                let condition = self.expr();
                self.current_depth -= 1;
                UpsertSearch::Filter(condition?)
            }
            Tok::Punct(Punct::ObjectOpen) => UpsertSearch::Example(self.expr_primary_object()?),
            Tok::Bind(name) => {
                let example = Expr::Bind(name.clone());
                self.advance();
                UpsertSearch::Example(example)
            }
            _ => return Err(self.unexpected()),
        };
        self.expect_keyword(Keyword::Insert)?;
        let insert = self.expr()?;
        let replace = match self.tok() {
            Tok::Keyword(Keyword::Update) => false,
            Tok::Keyword(Keyword::Replace) => true,
            _ => return Err(self.unexpected()),
        };
        self.advance();
        let update = self.expr_before_collection()?;
        Ok(ModifyKind::Upsert {
            search,
            insert,
            update,
            replace,
        })
    }

    /// `IN` or `INTO`, then a name, a quoted string or `@@param`.
    fn in_or_into_collection(&mut self) -> Result<CollectionRef, ArangoError> {
        if !self.eat_keyword(Keyword::In) {
            self.expect_keyword(Keyword::Into)?;
        }
        let collection = match self.tok() {
            Tok::Ident(name) | Tok::String(name) => CollectionRef::Name(name.clone()),
            Tok::BindCollection(name) => CollectionRef::Bind(name.clone()),
            _ => return Err(self.unexpected()),
        };
        self.advance();
        Ok(collection)
    }
}
