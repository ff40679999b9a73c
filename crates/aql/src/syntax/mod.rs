//! TEMPORARY stand-in for the parser being written on the `aql-parser` branch; the merge
//! replaces this file.

use quince_errors::{ArangoError, Result};

use crate::ast::Query;

/// Parses a query.
pub fn parse(_text: &str) -> Result<Query> {
    Err(ArangoError::new(quince_errors::QUERY_PARSE))
}

/// Stand-in.
pub fn collections(_query: &Query) -> Vec<String> {
    Vec::new()
}

/// Stand-in.
pub fn bind_parameters(_query: &Query) -> Vec<String> {
    Vec::new()
}

/// Stand-in.
pub fn ast_json(_query: &Query) -> serde_json::Value {
    serde_json::Value::Null
}
