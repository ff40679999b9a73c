//! [`Warning`]: a non-fatal problem found while evaluating an expression.
//!
//! What it is: the `{code, message}` pair ArangoDB reports in a cursor's `extra.warnings`,
//! with constructors for the warnings operators and functions raise.
//!
//! What it is not: an error. A warning never stops a query (unless the executor is told to
//! escalate warnings with `failOnWarning`, which is its business).

use quince_errors::{
    ErrorCode, QUERY_DIVISION_BY_ZERO, QUERY_FUNCTION_ARGUMENT_TYPE_MISMATCH, QUERY_INVALID_REGEX,
};

/// One warning: an ArangoDB error number and its message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// The `errorNum` (for example 1562 for a division by zero).
    pub code: u32,
    /// The message, as ArangoDB words it.
    pub message: String,
}

impl Warning {
    /// A warning with a code's default message.
    pub fn new(code: ErrorCode) -> Self {
        Warning {
            code: code.num,
            message: code.message.to_string(),
        }
    }

    /// A warning with a specific message.
    pub fn with_message(code: ErrorCode, message: impl Into<String>) -> Self {
        Warning {
            code: code.num,
            message: message.into(),
        }
    }

    /// 1562 "division by zero".
    pub fn division_by_zero() -> Self {
        Warning::new(QUERY_DIVISION_BY_ZERO)
    }

    /// 1543 "invalid regex value".
    pub fn invalid_regex() -> Self {
        Warning::new(QUERY_INVALID_REGEX)
    }

    /// 1542 "invalid argument type in call to function 'NAME()'".
    pub fn invalid_argument(function: &str) -> Self {
        Warning::with_message(
            QUERY_FUNCTION_ARGUMENT_TYPE_MISMATCH,
            format!("invalid argument type in call to function '{function}()'"),
        )
    }
}
