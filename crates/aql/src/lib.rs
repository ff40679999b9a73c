//! Quince's AQL: ArangoDB's query language, parsed, planned and run over the operations
//! interface.
//!
//! What it is: the syntax tree ([`ast`]) and its parser ([`syntax`]), the values and the type
//! order of AQL ([`quince_model::order`] holds the comparison the indexes share), the function
//! library ([`functions`]), and (later modules) the planner and the executor that run a query
//! against any [`quince_ops::DatabaseOps`].
//!
//! What it is not: HTTP or storage. The cursor API lives in the api crate; the engine behind
//! the operations interface decides how documents are stored and indexed.
//!
//! Invariants: a query is parsed completely before anything runs; a parse error names its line
//! and column; nothing here touches an engine except through the operations interface.

pub mod ast;
pub mod functions;
pub mod value;
