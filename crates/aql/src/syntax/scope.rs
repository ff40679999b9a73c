//! Variable scopes as ArangoDB's parser keeps them, shared by the parser (redeclaration
//! errors, `DISTINCT`, `KEEP`, `CURRENT`) and by the walks over a parsed query that need to
//! tell variables from collection names ([`super::collections`], [`super::ast_json`]).
//!
//! What it is: a stack of scopes, each with the variables declared in it and a number for
//! each variable (in declaration order, as ArangoDB numbers variables).
//!
//! What it is not: the planner's name resolution; it only mirrors what ArangoDB decides at
//! parse time.
//!
//! Invariants: a variable is visible from its declaration to the end of its scope, and in
//! every scope opened inside it; a `COLLECT` inside a loop ends the loops' scopes; the
//! bottom of the stack is a `Main` scope once [`Scopes::open`] has been called with it.

/// What opened a scope (ArangoDB's scope types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    /// The whole query.
    Main,
    /// A subquery.
    Subquery,
    /// A `FOR` loop.
    For,
    /// A `COLLECT` inside a loop.
    Collect,
}

/// One scope and its variables with their numbers.
#[derive(Debug)]
struct Scope {
    kind: ScopeKind,
    variables: Vec<(String, u32)>,
}

/// The scope stack.
#[derive(Debug, Default)]
pub(crate) struct Scopes {
    /// Outermost first.
    stack: Vec<Scope>,
    /// The number the next declared variable gets.
    next_id: u32,
}

impl Scopes {
    /// Opens a scope of `kind`.
    pub(crate) fn open(&mut self, kind: ScopeKind) {
        self.stack.push(Scope {
            kind,
            variables: Vec::new(),
        });
    }

    /// Closes scopes up to and including the innermost `Main` or `Subquery` scope.
    pub(crate) fn close_query(&mut self) {
        while let Some(scope) = self.stack.pop() {
            if matches!(scope.kind, ScopeKind::Main | ScopeKind::Subquery) {
                return;
            }
        }
    }

    /// The kind of the innermost scope.
    pub(crate) fn kind(&self) -> ScopeKind {
        self.stack.last().map_or(ScopeKind::Main, |s| s.kind)
    }

    /// True when no loop or `COLLECT` scope is open in the current (sub)query.
    pub(crate) fn at_query_level(&self) -> bool {
        matches!(self.kind(), ScopeKind::Main | ScopeKind::Subquery)
    }

    /// `COLLECT` inside a loop ends the loops' scopes and opens its own; returns whether it
    /// did (at query level it does not, and the variables stay where they are).
    pub(crate) fn start_collect(&mut self) -> bool {
        if self.at_query_level() {
            return false;
        }
        while !self.at_query_level() {
            self.stack.pop();
        }
        self.open(ScopeKind::Collect);
        true
    }

    /// The number of the visible variable `name`, if there is one.
    pub(crate) fn lookup(&self, name: &str) -> Option<u32> {
        self.stack
            .iter()
            .rev()
            .flat_map(|s| s.variables.iter().rev())
            .find(|(n, _)| n == name)
            .map(|&(_, id)| id)
    }

    /// Declares `name` in the innermost scope with a new number; `Err` (with nothing
    /// declared) if a variable of that name is visible.
    pub(crate) fn declare(&mut self, name: &str) -> Result<u32, ()> {
        if self.lookup(name).is_some() {
            return Err(());
        }
        Ok(self.declare_unchecked(name))
    }

    /// Declares `name` in the innermost scope with a new number, shadowing any other.
    pub(crate) fn declare_unchecked(&mut self, name: &str) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        self.redeclare(name, id);
        id
    }

    /// Puts a variable that already has a number into the innermost scope (a `COLLECT`
    /// moving its variables into the scope it opens).
    pub(crate) fn redeclare(&mut self, name: &str, id: u32) {
        if self.stack.is_empty() {
            self.open(ScopeKind::Main);
        }
        if let Some(scope) = self.stack.last_mut() {
            scope.variables.push((name.to_owned(), id));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_and_collect() {
        let mut s = Scopes::default();
        s.open(ScopeKind::Main);
        assert_eq!(s.declare("a"), Ok(0));
        s.open(ScopeKind::For);
        assert_eq!(s.declare("x"), Ok(1));
        assert_eq!(s.declare("a"), Err(()));
        assert!(!s.at_query_level());
        assert!(s.start_collect());
        assert_eq!(s.lookup("x"), None);
        assert_eq!(s.lookup("a"), Some(0));
        s.open(ScopeKind::Subquery);
        assert_eq!(s.declare("a"), Err(()));
        assert!(s.at_query_level());
        s.close_query();
        assert_eq!(s.kind(), ScopeKind::Collect);
    }
}
