//! TEMPORARY stand-in for the parser being written on the `aql-parser` branch; the merge
//! replaces this file.

use quince_errors::{ArangoError, Result};

use crate::ast::Query;

/// Parses a query.
pub fn parse(_text: &str) -> Result<Query> {
    Err(ArangoError::new(quince_errors::QUERY_PARSE))
}
