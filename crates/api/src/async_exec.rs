//! Asynchronous execution (<https://docs.arangodb.com/3.12/develop/http-api/jobs/>): the pipeline step that turns
//! a request with `x-arango-async: true|store` into a queued job, the worker pool that runs
//! jobs, and the drain at shutdown.
//!
//! What it is: [`mode`] (reads the header; only the exact values `true` and `store` count),
//! [`submit`] (queues the checked request and answers 202, with `x-arango-async-id` for
//! `store`), the runners (one short-lived tokio task spawned per queued job; it waits for a
//! job slot, takes the oldest queued job and runs it through [`Api::execute`], the same
//! router and handlers a synchronous request uses, with the job's cancel flag in reach of
//! its handler: `crate::state::job_store::cancelled`), and [`drain`].
//!
//! Why a task per job rather than long-lived workers: a task spawned from a request's task
//! goes to the same runtime thread's next slot, so a fire-and-forget insert runs on that
//! thread right after its 202 is written, while the client sends its next request, without
//! waking another thread. The slots (one fewer than the runtime's worker threads, at least
//! one) bound how many jobs run at once; runners waiting for a slot hold no thread.
//!
//! What it is not: the job table (`crate::state::job_store`, held by the API's state) or the
//! `/_api/job` endpoints (`crate::job`). It is a step of the pipeline layer: it imports only
//! the state below it, and runs jobs through `Api::execute`, which the pipeline defines.
//!
//! Invariants: a job holds its [`Admission`] from the moment it is queued until it finishes
//! or is cancelled, so queued jobs and requests in flight share the one bound of
//! `--server.maximal-queue-size` (503/21003 when it is reached); one user may have at most a
//! quarter of that bound in jobs queued or running (503/21003 beyond), and users' queued jobs
//! are taken in turn, so one user's backlog neither fills the queue nor delays everyone
//! else's jobs behind it; jobs never use more than
//! `slots` runtime threads at once, so synchronous requests always have a thread; there are
//! never fewer runners still to run than valid queued jobs (one is spawned per job and each
//! takes at most one), so every queued job is taken, each user's in arrival order; a job
//! runs to its end once started (a write is never cut in half: only handlers that wait, such
//! as `/_admin/sleep`, react to a cancel).

use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;
use quince_errors::{ArangoError, QUEUE_FULL, SHUTTING_DOWN};

use crate::response::{ApiResponse, ApiResult};
use crate::state::job_store::{cancelled_reply, run_as_job, Owner, Submitted, ASYNC_ID_HEADER};
use crate::state::{Admission, Api, Jobs, Routed, Work};

/// The header that asks for asynchronous execution.
const ASYNC_HEADER: &str = "x-arango-async";

/// How many job ids one log line lists when shutdown drops queued jobs.
const LOGGED_IDS_PER_LINE: usize = 1000;

/// The two asynchronous modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `x-arango-async: true`: the result is discarded.
    FireAndForget,
    /// `x-arango-async: store`: the result is kept for `PUT /_api/job/{id}`.
    Store,
}

/// The asynchronous mode a request asks for, if any; other values mean synchronous.
pub(crate) fn mode(headers: &HeaderMap) -> Option<Mode> {
    match headers.get(ASYNC_HEADER)?.as_bytes() {
        b"true" => Some(Mode::FireAndForget),
        b"store" => Some(Mode::Store),
        _ => None,
    }
}

/// Queues a checked request as a job and answers 202.
pub(crate) fn submit(
    api: &Api,
    routed: Routed,
    mode: Mode,
    admission: Option<Admission>,
) -> ApiResult {
    open_slots(api);
    let owner = Owner {
        user: routed.request.user.name().to_owned(),
        database: routed.request.database.name().to_owned(),
    };
    let work = Work { routed, admission };
    let id = match api.jobs().submit(owner, work, mode == Mode::Store) {
        Submitted::Queued(id) => id,
        Submitted::OwnerFull => {
            return Err(ArangoError::with_message(
                QUEUE_FULL,
                "queue is full: this user has as many asynchronous jobs queued or running as \
                 one user may",
            ))
        }
        Submitted::Closed => return Err(ArangoError::new(SHUTTING_DOWN)),
    };
    tokio::spawn(run_one(api.weak(), api.jobs().clone()));
    let reply = ApiResponse::with_content_type(202, "text/plain; charset=utf-8", Bytes::new());
    Ok(match mode {
        Mode::FireAndForget => reply,
        Mode::Store => reply.with_header(
            http::HeaderName::from_static(ASYNC_ID_HEADER),
            &id.to_string(),
        ),
    })
}

/// Opens the job slots on the first asynchronous request (there is a runtime then).
fn open_slots(api: &Api) {
    api.job_workers(|| {
        let threads = tokio::runtime::Handle::current().metrics().num_workers();
        let slots = threads.saturating_sub(1).max(1);
        api.jobs().open_slots(slots);
        tracing::debug!(event = "jobs.slots_opened", slots);
        slots
    });
}

/// One runner: waits for a slot, then runs the oldest queued job (if any is left) to its end.
async fn run_one(api: Weak<Api>, jobs: Arc<Jobs>) {
    let Ok(_slot) = jobs.slots().acquire().await else {
        return;
    };
    let Some(taken) = jobs.take_next() else {
        return;
    };
    let reply = match api.upgrade() {
        Some(api) => {
            let Work { routed, admission } = taken.work;
            let reply = run_as_job(taken.cancel, api.execute(routed)).await;
            drop(admission);
            reply
        }
        // The API is gone (the server is past its shutdown); nothing can run any more.
        None => cancelled_reply(),
    };
    jobs.finish(taken.id, reply);
}

/// Shutdown: stops taking jobs, lets queued ones run within `timeout`, then drops the rest
/// (logged with their ids) and waits up to `timeout` more for the running ones, which are
/// told to cancel.
pub(crate) async fn drain(api: &Api, timeout: Duration) {
    let jobs = api.jobs();
    jobs.close();
    let (queued, running) = jobs.pending();
    if (queued, running) == (0, 0) {
        return;
    }
    tracing::info!(event = "jobs.draining", queued, running);
    if tokio::time::timeout(timeout, jobs.idle()).await.is_ok() {
        tracing::info!(event = "jobs.drained", "every queued job ran");
        return;
    }
    let dropped = jobs.abandon_queued();
    for (part, chunk) in dropped.chunks(LOGGED_IDS_PER_LINE).enumerate() {
        let ids: Vec<String> = chunk.iter().map(u64::to_string).collect();
        tracing::warn!(
            event = "jobs.dropped",
            count = dropped.len(),
            part,
            ids = %ids.join(","),
            "queued jobs were not run before shutdown (none of them was started)"
        );
    }
    jobs.cancel_running();
    if tokio::time::timeout(timeout, jobs.idle()).await.is_err() {
        let (_, running) = jobs.pending();
        tracing::error!(
            event = "jobs.still_running",
            running,
            "jobs still running at shutdown"
        );
    }
}
