//! Asynchronous jobs: the `/_api/job` and `/_admin/job` endpoints ([`handlers`]) and
//! `/_admin/sleep` ([`sleep`]), a request that only waits, which tests and operators use to
//! occupy a worker.
//!
//! What it is not: queuing and running jobs (`crate::async_exec`) or the job table
//! (`crate::state::job_store`). Job management is in the router's fast lane, outside the
//! queue bound, so a full queue can still be inspected and cancelled.
//!
//! Invariants: a job belongs to the user who queued it and the database it was queued in, and
//! only its owner (or a superuser) in that database sees it; only jobs queued with
//! `x-arango-async: store` are visible here.

pub(crate) mod handlers;
pub(crate) mod sleep;

pub(crate) use handlers::handle;
