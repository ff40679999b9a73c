//! Client-visible error codes of the ArangoDB HTTP API, and the error value that carries one.
//!
//! What it is: one table (`codes.rs`) of `errorNum`, name, default HTTP status and default
//! message, mirroring the shape of ArangoDB's error table (facts only: numbers, names, statuses),
//! plus [`ArangoError`], the value every layer above `storage` returns for an operating error.
//!
//! What it is not: it knows nothing about HTTP bodies or headers (the `api` crate renders an
//! `ArangoError` as `{error, errorNum, errorMessage, code}`), and it is not for bugs: a violated
//! invariant is an `assert!`, never an `ArangoError`.
//!
//! Invariants: every `errorNum` appears once in the table (checked by a test); an
//! `ArangoError`'s status is the code's default unless a handler overrides it on purpose
//! (412 for a revision precondition, 401 for authentication).

mod codes;
mod error;

pub use codes::*;
pub use error::{ArangoError, HasErrorCode, Result};
