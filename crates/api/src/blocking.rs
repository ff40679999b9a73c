//! [`blocking`]: runs a call that may block (files, fsyncs, long loops over documents) on
//! tokio's blocking pool, so that no runtime worker ever waits for the disk.
//!
//! What it is not: a queue bound; the pipeline's in-flight bound already limits how many
//! requests can be here at once.
//!
//! Invariants: a panic inside the call resumes on the awaiting task (a bug surfaces as one, and
//! the pipeline answers 500); a call the runtime refuses to run (shutting down) answers 503/30.

use quince_errors::{ArangoError, Result};

/// Runs `call` on the blocking pool and returns its result.
pub(crate) async fn blocking<T, F>(call: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    match tokio::task::spawn_blocking(call).await {
        Ok(result) => result,
        // A panic in the call is a bug: let it surface as one.
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => Err(ArangoError::new(quince_errors::SHUTTING_DOWN)),
    }
}

/// Runs `call` right here when `inline` (the caller already runs on the blocking pool, or the
/// call is as cheap as the work runtime workers do inline), else as [`blocking`] does.
pub(crate) async fn blocking_unless<T, F>(inline: bool, call: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T> + Send + 'static,
{
    if inline {
        call()
    } else {
        blocking(call).await
    }
}
