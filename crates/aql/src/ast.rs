//! The syntax tree of an AQL query, as the parser produces it.
//!
//! What it is: plain data. A [`Query`] is a list of [`Operation`]s (`FOR`, `LET`, `FILTER`,
//! ..., `RETURN` or a data modification), each operation's expressions are [`Expr`] trees,
//! and every operation carries the [`Span`] of its keyword for error messages.
//!
//! What it is not: resolved. A bare name ([`Expr::Name`]) may be a variable or a collection;
//! bind parameters are not substituted; function names are not checked. The planner does all
//! of that, so the same tree also serves `POST /_api/query`, which only parses.
//!
//! Invariants (the parser keeps them): keywords and function names are upper-cased
//! (`Expr::Call::name`), names of variables, attributes and collections keep their case;
//! a [`Query`] that is a whole request (not a subquery) ends with `RETURN` or a data
//! modification; literal numbers are JSON numbers (integers when written as integers and in
//! the `i64` range, floats otherwise).

use serde_json::Value;

/// A position in the query text: 1-based line, 1-based column (in characters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub column: u32,
}

/// A query or a subquery: the collections of `WITH` and the operations in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// The collections named by a leading `WITH` (empty without one).
    pub with: Vec<CollectionRef>,
    /// The operations, in the order written.
    pub operations: Vec<Operation>,
}

/// A collection as written where only a collection may stand (after `IN`/`INTO` of a data
/// modification, in `WITH`).
#[derive(Clone, Debug, PartialEq)]
pub enum CollectionRef {
    /// A name written as an identifier or a quoted string.
    Name(String),
    /// A collection bind parameter `@@name` (the name is stored without the `@@`).
    Bind(String),
}

/// One operation with the position of its keyword.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Where the keyword starts.
    pub span: Span,
    /// What it does.
    pub kind: OperationKind,
}

/// The operations of AQL.
#[derive(Clone, Debug, PartialEq)]
pub enum OperationKind {
    /// `FOR var IN expr [OPTIONS {...}]`: loops over an array, a collection (a bare name or
    /// `@@c`) or a subquery.
    For {
        /// The loop variable.
        variable: String,
        /// What it iterates over.
        source: Expr,
        /// `OPTIONS { ... }` (indexHint, forceIndexHint, ...), if given.
        options: Option<Expr>,
    },
    /// `LET var = expr`.
    Let {
        /// The variable defined.
        variable: String,
        /// Its value.
        value: Expr,
    },
    /// `FILTER expr`.
    Filter(Expr),
    /// `SEARCH expr [OPTIONS {...}]` (only valid after a `FOR` over a view).
    Search {
        /// The search condition.
        condition: Expr,
        /// `OPTIONS { ... }`, if given.
        options: Option<Expr>,
    },
    /// `SORT expr [ASC|DESC], ...`.
    Sort(Vec<SortKey>),
    /// `LIMIT count` or `LIMIT offset, count`.
    Limit {
        /// The offset (`None` when only a count is written).
        offset: Option<Expr>,
        /// The count.
        count: Expr,
    },
    /// `COLLECT ...` in any of its forms.
    Collect(Collect),
    /// `WINDOW [rangeValue] WITH { preceding, following } AGGREGATE ...`.
    Window(Window),
    /// `RETURN [DISTINCT] expr`.
    Return {
        /// `RETURN DISTINCT`.
        distinct: bool,
        /// The value returned.
        value: Expr,
    },
    /// `INSERT`, `UPDATE`, `REPLACE`, `REMOVE` or `UPSERT`.
    Modify(Modify),
    /// `FOR v[, e[, p]] IN [min[..max]] OUTBOUND|INBOUND|ANY start GRAPH g|colls [PRUNE ...]
    /// [OPTIONS {...}]`.
    Traversal(Box<Traversal>),
    /// `FOR ... IN dir SHORTEST_PATH|K_SHORTEST_PATHS|K_PATHS|ALL_SHORTEST_PATHS s TO t ...`.
    PathSearch(Box<PathSearch>),
}

/// The direction of a graph operation or of one edge collection in its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphDirection {
    /// `OUTBOUND`.
    Outbound,
    /// `INBOUND`.
    Inbound,
    /// `ANY`.
    Any,
}

/// Which edges a graph operation follows: a named graph or a list of edge collections.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphRef {
    /// `GRAPH name`: the name as a string literal (also written as an identifier) or a value
    /// bind parameter.
    Named(Expr),
    /// `[dir] coll1, [dir] coll2, ...`: each edge collection with its own direction, if
    /// written (the operation's direction otherwise).
    Collections(Vec<(Option<GraphDirection>, CollectionRef)>),
}

/// `PRUNE [var =] condition` of a traversal.
#[derive(Clone, Debug, PartialEq)]
pub struct Prune {
    /// `PRUNE var = cond`: the variable, visible after the traversal.
    pub variable: Option<String>,
    /// The condition (over the traversal's variables).
    pub condition: Expr,
}

/// A graph traversal.
#[derive(Clone, Debug, PartialEq)]
pub struct Traversal {
    /// The vertex variable.
    pub vertex: String,
    /// The edge variable, if declared.
    pub edge: Option<String>,
    /// The path variable, if declared.
    pub path: Option<String>,
    /// `min` or `min..max` (a number, a range, a bind parameter); `None`: depth 1.
    pub depth: Option<Expr>,
    /// The default direction.
    pub direction: GraphDirection,
    /// The start vertex (an `_id` string or a document with `_id`).
    pub start: Expr,
    /// The graph or edge collections.
    pub graph: GraphRef,
    /// `PRUNE`, if given.
    pub prune: Option<Prune>,
    /// `OPTIONS { ... }`, if given.
    pub options: Option<Expr>,
}

/// The path searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathKind {
    /// `SHORTEST_PATH`: one row per vertex of one shortest path.
    Shortest,
    /// `K_SHORTEST_PATHS`: paths by ascending weight.
    KShortest,
    /// `K_PATHS`: every path of a length in a range.
    KPaths,
    /// `ALL_SHORTEST_PATHS`: every shortest path.
    AllShortest,
}

impl PathKind {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            PathKind::Shortest => "SHORTEST_PATH",
            PathKind::KShortest => "K_SHORTEST_PATHS",
            PathKind::KPaths => "K_PATHS",
            PathKind::AllShortest => "ALL_SHORTEST_PATHS",
        }
    }
}

/// A path search between two vertices.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSearch {
    /// Which search.
    pub kind: PathKind,
    /// The first variable: the vertex (`SHORTEST_PATH`) or the path (the others).
    pub variable: String,
    /// `SHORTEST_PATH`'s edge variable.
    pub edge: Option<String>,
    /// `K_PATHS`'s `min..max` (`None`: 1).
    pub depth: Option<Expr>,
    /// The direction.
    pub direction: GraphDirection,
    /// The source vertex.
    pub source: Expr,
    /// The target vertex.
    pub target: Expr,
    /// The graph or edge collections.
    pub graph: GraphRef,
    /// `OPTIONS { ... }`, if given.
    pub options: Option<Expr>,
}

/// One key of `SORT`.
#[derive(Clone, Debug, PartialEq)]
pub struct SortKey {
    /// The value sorted by.
    pub value: Expr,
    /// `ASC` (the default) or `DESC`.
    pub ascending: bool,
}

/// `COLLECT [var = expr, ...] [AGGREGATE var = FUNC(expr), ...] [INTO var [= expr] [KEEP var,
/// ...]] [WITH COUNT INTO var] [OPTIONS {...}]`. `COLLECT WITH COUNT INTO n` alone has no
/// groups.
#[derive(Clone, Debug, PartialEq)]
pub struct Collect {
    /// The group variables and their values.
    pub groups: Vec<(String, Expr)>,
    /// `AGGREGATE` assignments; each value is an aggregate call such as `SUM(x)` (checked by
    /// the planner).
    pub aggregates: Vec<(String, Expr)>,
    /// `INTO var` or `INTO var = expr`.
    pub into: Option<CollectInto>,
    /// `KEEP var, ...` (only with `INTO var`).
    pub keep: Vec<String>,
    /// `WITH COUNT INTO var`.
    pub count_into: Option<String>,
    /// `OPTIONS { method: "sorted" | "hash" }`, if given.
    pub options: Option<Expr>,
}

/// The `INTO` part of `COLLECT`.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectInto {
    /// The group array's variable.
    pub variable: String,
    /// `INTO var = expr`: what each group member contributes (by default an object of the
    /// variables in scope).
    pub value: Option<Expr>,
}

/// `WINDOW { preceding, following } AGGREGATE ...` or `WINDOW rangeValue WITH { ... }
/// AGGREGATE ...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// The range value of the range-based form.
    pub range_value: Option<Expr>,
    /// The `{ preceding, following }` object.
    pub bounds: Expr,
    /// The aggregate assignments.
    pub aggregates: Vec<(String, Expr)>,
}

/// A data-modification operation: what, into which collection, with which options.
#[derive(Clone, Debug, PartialEq)]
pub struct Modify {
    /// Which operation, with its expressions.
    pub kind: ModifyKind,
    /// The collection written.
    pub collection: CollectionRef,
    /// `OPTIONS { ... }`, if given.
    pub options: Option<Expr>,
}

/// The data-modification operations.
#[derive(Clone, Debug, PartialEq)]
pub enum ModifyKind {
    /// `INSERT doc INTO c`.
    Insert {
        /// The document.
        document: Expr,
    },
    /// `UPDATE doc IN c` (`key` is `None`; the key comes from `doc`) or `UPDATE key WITH doc
    /// IN c`.
    Update {
        /// The key expression of the `WITH` form (a key string or an object with `_key`).
        key: Option<Expr>,
        /// The document (the patch).
        document: Expr,
    },
    /// `REPLACE doc IN c` or `REPLACE key WITH doc IN c`.
    Replace {
        /// The key expression of the `WITH` form.
        key: Option<Expr>,
        /// The new document.
        document: Expr,
    },
    /// `REMOVE key IN c` (a key string or an object with `_key`).
    Remove {
        /// The key expression.
        key: Expr,
    },
    /// `UPSERT search INSERT doc UPDATE|REPLACE doc IN c`.
    Upsert {
        /// The search: an example object, or (3.12's `UPSERT FILTER cond`) a condition over
        /// `CURRENT`.
        search: UpsertSearch,
        /// The document inserted when nothing matches.
        insert: Expr,
        /// The patch or replacement applied when a document matches.
        update: Expr,
        /// True for `REPLACE`, false for `UPDATE`.
        replace: bool,
    },
}

/// What `UPSERT` looks for.
#[derive(Clone, Debug, PartialEq)]
pub enum UpsertSearch {
    /// `UPSERT { a: 1, ... }`: a document whose attributes equal the example's.
    Example(Expr),
    /// `UPSERT FILTER cond`: a document for which `cond` (over `CURRENT`) holds.
    Filter(Expr),
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal: `null`, `true`, `false`, a number or a string.
    Literal(Value),
    /// `[a, b, ...]`.
    Array(Vec<Expr>),
    /// `{ key: value, ... }`.
    Object(Vec<(ObjectKey, Expr)>),
    /// A bare identifier: a variable, or a collection where a collection may stand (`FOR x IN
    /// name`). Quoted with backticks or forward ticks when it collides with a keyword.
    Name(String),
    /// A value bind parameter `@name` (stored without the `@`).
    Bind(String),
    /// A collection bind parameter `@@name` (stored without the `@@`).
    BindCollection(String),
    /// `CURRENT` inside an array expansion or an inline filter.
    Current,
    /// `base.name` (also `base.@name`, as `Index` with a bind parameter).
    Attribute(Box<Expr>, String),
    /// `base[index]`.
    Index(Box<Expr>, Box<Expr>),
    /// `base[*]...` (and `base[**]` flattening): each element of the array, optionally
    /// filtered, limited and projected. A path after the `[*]` (`a[*].b.c`) is the projection
    /// over `CURRENT` (`Attribute(Attribute(Current, "b"), "c")`).
    Expansion(Box<Expansion>),
    /// A prefix operator.
    Unary(UnaryOp, Box<Expr>),
    /// An infix operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `lhs ALL|ANY|NONE|AT LEAST (n) op rhs`: `op` applied between each element of the array
    /// `lhs` and `rhs`, quantified.
    Quantified {
        /// The quantifier.
        quantifier: Quantifier,
        /// The comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`, `IN`, `NOT IN`).
        op: BinaryOp,
        /// The array.
        lhs: Box<Expr>,
        /// The value compared with each element.
        rhs: Box<Expr>,
    },
    /// `cond ? then : otherwise`; `cond ?: otherwise` has no `then` (the condition's value is
    /// returned when truthy).
    Ternary {
        /// The condition.
        condition: Box<Expr>,
        /// The value when the condition is truthy (`None` for `?:`).
        then: Option<Box<Expr>>,
        /// The value otherwise.
        otherwise: Box<Expr>,
    },
    /// `low..high`.
    Range(Box<Expr>, Box<Expr>),
    /// `NAME(args...)`; `name` upper-cased, a namespaced user function keeps its `::`.
    Call {
        /// The function's name, upper-cased.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
        /// Where the name starts.
        span: Span,
    },
    /// `( query )` as a value: the array of what the subquery returns.
    Subquery(Box<Query>),
}

/// An object literal's key.
#[derive(Clone, Debug, PartialEq)]
pub enum ObjectKey {
    /// `name: value`, `"name": value`, or the shorthand `{ name }` (whose value is
    /// `Expr::Name(name)`).
    Static(String),
    /// `[expr]: value`.
    Computed(Expr),
    /// `@name: value`: the key is a bind parameter's value.
    Bind(String),
}

/// `[*]` or `[**]` with its inline operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Expansion {
    /// The array expanded.
    pub base: Expr,
    /// 1 for `[*]`, 2 for `[**]` (flatten one level first), and so on.
    pub depth: u32,
    /// `[* FILTER cond]` over `CURRENT`.
    pub filter: Option<Expr>,
    /// `[* LIMIT offset, count]`.
    pub limit: Option<(Option<Expr>, Expr)>,
    /// `[* RETURN expr]` over `CURRENT`, or the path after `[*]`.
    pub projection: Option<Expr>,
}

/// A quantifier of an array comparison.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantifier {
    /// `ALL`.
    All,
    /// `ANY`.
    Any,
    /// `NONE`.
    None,
    /// `AT LEAST (n)`.
    AtLeast(Box<Expr>),
}

/// A prefix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `NOT x` / `!x`.
    Not,
    /// `-x`.
    Minus,
    /// `+x`.
    Plus,
}

/// An infix operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `||` / `OR`.
    Or,
    /// `&&` / `AND`.
    And,
    /// `==`.
    Eq,
    /// `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `IN`.
    In,
    /// `NOT IN`.
    NotIn,
    /// `LIKE`.
    Like,
    /// `NOT LIKE`.
    NotLike,
    /// `=~`.
    RegexMatch,
    /// `!~`.
    RegexNotMatch,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Mod,
}

impl BinaryOp {
    /// The operator as AQL writes it (`AND`/`OR` for the logical ones).
    pub fn token(self) -> &'static str {
        match self {
            BinaryOp::Or => "OR",
            BinaryOp::And => "AND",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "IN",
            BinaryOp::NotIn => "NOT IN",
            BinaryOp::Like => "LIKE",
            BinaryOp::NotLike => "NOT LIKE",
            BinaryOp::RegexMatch => "=~",
            BinaryOp::RegexNotMatch => "!~",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
        }
    }
}
