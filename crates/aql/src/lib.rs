//! Quince's AQL: ArangoDB's query language, parsed, planned and run over the operations
//! interface.
//!
//! What it is: the syntax tree ([`ast`]) and its parser ([`syntax`]); the values, operators
//! and casts of AQL ([`value`]; the type and value order itself is
//! `quince_model::order`, which the indexes share); the function library ([`functions`]);
//! the graph searches ([`graph`]: traversals and path searches over a source of edges); the
//! plan ([`plan`]: compile, optimize) and the executor ([`exec`]); [`query`], which
//! strings them together for the cursor API; and [`computed`], the compiler of collections'
//! computed-value expressions.
//!
//! What it is not: HTTP or storage. The cursor API lives in the api crate; the engine behind
//! the operations interface decides how documents are stored and indexed.
//!
//! Invariants: a query is parsed and compiled completely before anything runs; a parse error
//! names its line and column; nothing here touches an engine except through the operations
//! interface, so the same plans run over a cluster coordinator's implementation of it.

pub mod ast;
pub mod computed;
pub mod exec;
pub mod explain;
pub mod functions;
pub mod graph;
pub mod plan;
pub mod query;
pub mod service;
pub mod syntax;
pub mod value;

pub use computed::ComputedValueCompiler;
pub use exec::{Control, Stats};
pub use query::{prepare, Outcome, Prepared, QueryOptions};
pub use service::{CursorRequest, QueryService};
pub use value::Warning;
