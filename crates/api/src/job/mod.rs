//! Asynchronous jobs: the job table ([`store`]), the `/_api/job` and `/_admin/job` endpoints
//! ([`handlers`]) and `/_admin/sleep` ([`sleep`]), a request that only waits, which tests and
//! operators use to occupy a worker.
//!
//! What it is not: queuing and running jobs (`crate::async_exec`).
//!
//! Invariants: a job belongs to the user who queued it and the database it was queued in, and
//! only its owner (or a superuser) in that database sees it; only jobs queued with
//! `x-arango-async: store` are visible here.

pub(crate) mod handlers;
pub(crate) mod sleep;
pub(crate) mod store;

pub(crate) use handlers::handle;

/// True for `/_api/job…` and `/_admin/job…`, the job-management fast lane (outside the
/// queue bound, so a full queue can still be inspected and cancelled).
pub(crate) fn is_job_path(segments: &[String]) -> bool {
    matches!(
        (
            segments.first().map(String::as_str),
            segments.get(1).map(String::as_str)
        ),
        (Some("_api" | "_admin"), Some("job"))
    )
}
