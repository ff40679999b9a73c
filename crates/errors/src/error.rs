//! [`ArangoError`]: an error code, the message sent to the client, and the HTTP status.

use std::borrow::Cow;
use std::fmt;

use crate::codes::ErrorCode;

/// The result type of every layer that speaks in ArangoDB error codes.
pub type Result<T, E = ArangoError> = std::result::Result<T, E>;

/// Anything that can say which client-visible code it stands for.
pub trait HasErrorCode {
    /// The code this error is reported as.
    fn error_code(&self) -> ErrorCode;
}

/// An operating error as the client will see it.
///
/// Kept one pointer wide on the hot path is not a goal here: documents fail rarely, and the
/// message is usually a `&'static str`.
#[derive(Clone, PartialEq, Eq)]
pub struct ArangoError {
    /// The `errorNum` and its defaults.
    pub code: ErrorCode,
    /// The HTTP status sent with the error; the code's default unless overridden.
    pub status: u16,
    /// The `errorMessage`.
    pub message: Cow<'static, str>,
    /// More string attributes for the error body, in order: a 412 on a document names the
    /// current version with `_id`, `_key` and `_rev`. Empty for most errors.
    pub extra: Vec<(&'static str, String)>,
}

impl ArangoError {
    /// An error with the code's default status and message.
    pub fn new(code: ErrorCode) -> Self {
        ArangoError {
            code,
            status: code.http_status,
            message: Cow::Borrowed(code.message),
            extra: Vec::new(),
        }
    }

    /// An error with the code's default status and a specific message.
    pub fn with_message(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        ArangoError {
            code,
            status: code.http_status,
            message: message.into(),
            extra: Vec::new(),
        }
    }

    /// The same error sent with another HTTP status (ArangoDB's per-endpoint overrides).
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// The same error with one more string attribute in its body.
    pub fn with_extra(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.extra.push((name, value.into()));
        self
    }

    /// The `errorNum`.
    pub fn num(&self) -> u32 {
        self.code.num
    }

    /// True when this error carries the given code.
    pub fn is(&self, code: ErrorCode) -> bool {
        self.code.num == code.num
    }
}

impl From<ErrorCode> for ArangoError {
    fn from(code: ErrorCode) -> Self {
        ArangoError::new(code)
    }
}

impl HasErrorCode for ArangoError {
    fn error_code(&self) -> ErrorCode {
        self.code
    }
}

impl fmt::Debug for ArangoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ArangoError({} {} [{}]: {})",
            self.status, self.code.name, self.code.num, self.message
        )
    }
}

impl fmt::Display for ArangoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (errorNum {})", self.message, self.code.num)
    }
}

impl std::error::Error for ArangoError {}
