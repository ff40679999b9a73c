//! [`JobStore`]: the table of asynchronous jobs, their queues and their stored results.
//!
//! What it is: one mutex-guarded table from job id to job (its owner, and its state: queued with
//! its work, running, or done with its reply), one FIFO queue per owner taken in turn (so one
//! owner's backlog cannot starve another's jobs), and the semaphore of job slots that bounds how
//! many jobs run at once. Fire-and-forget jobs (`x-arango-async: true`) live here while they
//! wait and run (so shutdown can report them and their owner can cancel them), but no lookup
//! sees them and their replies are dropped.
//!
//! A job belongs to its [`Owner`]: the user who queued it and the database it was queued in.
//! Lookups ([`Viewer`]) see only the jobs of that database, and a user only their own; a
//! superuser (a superuser token, or authentication switched off) sees every user's, as in
//! ArangoDB. A job that is not one's own answers exactly as a job that does not exist. Ids are
//! random, so knowing one's own ids says nothing about others'.
//!
//! It also holds what the job runners and the job handlers share without knowing each other:
//! the reply header with a stored job's id ([`ASYNC_ID_HEADER`]), the reply of a cancelled job
//! ([`cancelled_reply`]), and the running job's cancel flag as the running task sees it
//! ([`run_as_job`], [`cancelled`]).
//!
//! What it is not: the workers (`crate::async_exec` runs them) or HTTP (`crate::job`). It sits
//! with the API's state, which holds the table, and imports nothing above it.
//!
//! Invariants: a job is in exactly one state; a cancelled or deleted queued job is removed
//! from the table before any worker can take it, so it never runs (the worker skips its id);
//! an owner never has more than `per_owner_max` jobs queued or running; stored results are
//! bounded by [`RESULTS_MAX`] and [`RESULT_BYTES_MAX`], and when a new result would pass either
//! bound the oldest stored results are evicted first; the byte and count totals always equal the
//! sums over the table's done jobs.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use quince_errors::{ArangoError, REQUEST_CANCELED};
use tokio::sync::{Notify, Semaphore};

use crate::error::error_response;
use crate::response::ApiResponse;

/// The header that carries a stored job's id.
pub(crate) const ASYNC_ID_HEADER: &str = "x-arango-async-id";

tokio::task_local! {
    /// The cancel flag of the job the current task runs.
    static CANCEL: Arc<CancelFlag>;
}

/// Runs `work` as the job whose cancel flag is `flag`: [`cancelled`] inside it watches that
/// flag.
pub(crate) async fn run_as_job<F: std::future::Future>(
    flag: Arc<CancelFlag>,
    work: F,
) -> F::Output {
    CANCEL.scope(flag, work).await
}

/// Completes when the job the current task runs is cancelled; never, outside a job.
pub(crate) async fn cancelled() {
    match CANCEL.try_with(Arc::clone) {
        Ok(flag) => flag.cancelled().await,
        Err(_) => std::future::pending().await,
    }
}

/// The reply a job cancelled before it ran leaves behind (410, errorNum 21).
pub(crate) fn cancelled_reply() -> ApiResponse {
    error_response(&ArangoError::new(REQUEST_CANCELED))
}

/// A job's id: random, server-wide unique, never 0.
pub(crate) type JobId = u64;

/// The most stored results kept at once; beyond it the oldest are evicted.
pub(crate) const RESULTS_MAX: usize = 65_536;

/// The most bytes (bodies and headers) of stored results kept at once; beyond it the oldest
/// are evicted.
pub(crate) const RESULT_BYTES_MAX: usize = 256 * 1024 * 1024;

/// Who a job belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Owner {
    /// The user who queued it (empty for an unauthenticated caller).
    pub user: String,
    /// The database it was queued in.
    pub database: String,
}

/// Who is looking up jobs, and where.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Viewer<'a> {
    /// The caller's user name.
    pub user: &'a str,
    /// The database of the request.
    pub database: &'a str,
    /// A superuser sees every user's jobs (of this database).
    pub superuser: bool,
}

impl Viewer<'_> {
    /// True when the viewer may see (and fetch, cancel, delete) a job of `owner`.
    fn sees(&self, owner: &Owner) -> bool {
        owner.database == self.database && (self.superuser || owner.user == self.user)
    }
}

/// What [`JobStore::submit`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Submitted {
    /// Queued under this id.
    Queued(JobId),
    /// The owner already has as many jobs queued or running as one owner may.
    OwnerFull,
    /// The store no longer takes jobs (shutdown).
    Closed,
}

/// Set when a job is cancelled while it runs; interruptible handlers (`/_admin/sleep`) watch it.
#[derive(Default)]
pub(crate) struct CancelFlag {
    set: AtomicBool,
    notify: Notify,
}

impl CancelFlag {
    /// Marks the job cancelled and wakes whoever waits for it.
    pub(crate) fn cancel(&self) {
        self.set.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// True once cancelled.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.set.load(Ordering::Acquire)
    }

    /// Completes once the job is cancelled.
    pub(crate) async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            let mut notified = std::pin::pin!(notified);
            // Registering before checking the flag means a cancel between the check and the
            // wait still wakes us.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// A job taken off the queue by a worker.
pub(crate) struct Taken<W> {
    /// Its id.
    pub id: JobId,
    /// What to run.
    pub work: W,
    /// Its cancel flag.
    pub cancel: Arc<CancelFlag>,
}

/// What `GET /_api/job/{id}` and `PUT /_api/job/{id}` learn about a stored job.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Queued or running.
    Pending,
    /// Finished; its reply is stored.
    Done,
    /// No stored job of the viewer's has this id.
    Unknown,
}

/// What `PUT /_api/job/{id}` gets.
pub(crate) enum Fetched {
    /// The stored reply (now removed from the store).
    Done(ApiResponse),
    /// Not finished yet.
    Pending,
    /// No stored job of the viewer's has this id.
    Unknown,
}

enum State<W> {
    Queued(W),
    Running(Arc<CancelFlag>),
    Done {
        reply: ApiResponse,
        bytes: usize,
        finished_unix: f64,
    },
}

struct Job<W> {
    /// Who queued it.
    owner: Owner,
    /// False for fire-and-forget jobs: invisible to lookups, result dropped.
    stored: bool,
    state: State<W>,
}

struct Inner<W> {
    jobs: HashMap<JobId, Job<W>>,
    /// Per owner, ids in arrival order; ids of jobs cancelled or deleted while queued are
    /// skipped when reached.
    queues: HashMap<Owner, VecDeque<JobId>>,
    /// The owners whose queue is not empty, in the order they get their next turn.
    turns: VecDeque<Owner>,
    /// Per owner, jobs queued or running.
    active: HashMap<Owner, usize>,
    /// Ids of done stored jobs, oldest first (may hold ids already fetched or deleted).
    done_order: VecDeque<JobId>,
    done_count: usize,
    done_bytes: usize,
    running: usize,
    /// Jobs waiting in the table (queued state), for the idle check.
    queued: usize,
    /// Set at shutdown: no new jobs.
    closed: bool,
}

impl<W> Inner<W> {
    /// One job of `owner` is no longer queued or running.
    fn release(&mut self, owner: &Owner) {
        let count = self
            .active
            .get_mut(owner)
            .expect("an active job's owner is counted");
        *count -= 1;
        if *count == 0 {
            self.active.remove(owner);
        }
    }

    /// A fresh random id, unused.
    fn fresh_id(&self) -> JobId {
        loop {
            // 63 bits, never 0: a decimal that starts with 1-9, as job ids must.
            let id = rand::random::<u64>() >> 1;
            if id != 0 && !self.jobs.contains_key(&id) {
                return id;
            }
        }
    }
}

/// The job table; `W` is the work a queued job carries.
pub(crate) struct JobStore<W> {
    inner: Mutex<Inner<W>>,
    /// One permit per job that may run at once (none until [`JobStore::open_slots`]).
    slots: Semaphore,
    /// Woken whenever a job finishes or leaves the queue, for shutdown's wait.
    changed: Notify,
    results_max: usize,
    result_bytes_max: usize,
    /// The most jobs one owner may have queued or running.
    per_owner_max: usize,
}

impl<W> JobStore<W> {
    /// A store with the default result bounds, where one owner may have `per_owner_max` jobs
    /// queued or running.
    pub(crate) fn new(per_owner_max: usize) -> Self {
        Self::with_bounds(RESULTS_MAX, RESULT_BYTES_MAX, per_owner_max)
    }

    /// A store with given bounds (tests use small ones).
    pub(crate) fn with_bounds(
        results_max: usize,
        result_bytes_max: usize,
        per_owner_max: usize,
    ) -> Self {
        assert!(results_max > 0 && result_bytes_max > 0 && per_owner_max > 0);
        JobStore {
            inner: Mutex::new(Inner {
                jobs: HashMap::new(),
                queues: HashMap::new(),
                turns: VecDeque::new(),
                active: HashMap::new(),
                done_order: VecDeque::new(),
                done_count: 0,
                done_bytes: 0,
                running: 0,
                queued: 0,
                closed: false,
            }),
            slots: Semaphore::new(0),
            changed: Notify::new(),
            results_max,
            result_bytes_max,
            per_owner_max,
        }
    }

    /// Queues a job of `owner`.
    pub(crate) fn submit(&self, owner: Owner, work: W, stored: bool) -> Submitted {
        let mut inner = self.inner.lock();
        if inner.closed {
            return Submitted::Closed;
        }
        let active = inner.active.get(&owner).copied().unwrap_or(0);
        if active >= self.per_owner_max {
            return Submitted::OwnerFull;
        }
        let id = inner.fresh_id();
        *inner.active.entry(owner.clone()).or_default() += 1;
        let queue = inner.queues.entry(owner.clone()).or_default();
        queue.push_back(id);
        if queue.len() == 1 {
            inner.turns.push_back(owner.clone());
        }
        inner.jobs.insert(
            id,
            Job {
                owner,
                stored,
                state: State::Queued(work),
            },
        );
        inner.queued += 1;
        Submitted::Queued(id)
    }

    /// Adds `n` job slots: from now on up to that many more jobs may run at once.
    pub(crate) fn open_slots(&self, n: usize) {
        self.slots.add_permits(n);
    }

    /// The job slots; a runner holds one while it runs a job.
    pub(crate) fn slots(&self) -> &Semaphore {
        &self.slots
    }

    /// Takes the next queued job, owners in turn (each owner's jobs in arrival order), and
    /// marks it running; None when nothing is queued.
    pub(crate) fn take_next(&self) -> Option<Taken<W>> {
        let mut inner = self.inner.lock();
        loop {
            let owner = inner.turns.pop_front()?;
            let queue = inner
                .queues
                .get_mut(&owner)
                .expect("owners in turn have a queue");
            let id = queue.pop_front().expect("owners in turn have a queued id");
            if queue.is_empty() {
                inner.queues.remove(&owner);
            } else {
                inner.turns.push_back(owner);
            }
            let Some(job) = inner
                .jobs
                .get_mut(&id)
                .filter(|job| matches!(job.state, State::Queued(_)))
            else {
                // Cancelled (now done) or deleted while queued: it never runs.
                continue;
            };
            let cancel = Arc::new(CancelFlag::default());
            let State::Queued(work) =
                std::mem::replace(&mut job.state, State::Running(cancel.clone()))
            else {
                unreachable!("checked to be queued above");
            };
            inner.queued -= 1;
            inner.running += 1;
            return Some(Taken { id, work, cancel });
        }
    }

    /// Records a finished job's reply (dropped for fire-and-forget and deleted jobs).
    pub(crate) fn finish(&self, id: JobId, reply: ApiResponse) {
        let mut inner = self.inner.lock();
        inner.running -= 1;
        let job = inner
            .jobs
            .get(&id)
            .expect("a running job stays in the table until it finishes");
        assert!(
            matches!(job.state, State::Running(_)),
            "only a running job finishes"
        );
        let (owner, stored) = (job.owner.clone(), job.stored);
        inner.release(&owner);
        if stored {
            let bytes = reply_bytes(&reply);
            self.make_room(&mut inner, bytes);
            let job = inner.jobs.get_mut(&id).expect("checked above");
            job.state = State::Done {
                reply,
                bytes,
                finished_unix: unix_now(),
            };
            inner.done_order.push_back(id);
            inner.done_count += 1;
            inner.done_bytes += bytes;
        } else {
            inner.jobs.remove(&id);
        }
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Evicts the oldest stored results until one of `incoming` bytes fits both bounds.
    fn make_room(&self, inner: &mut Inner<W>, incoming: usize) {
        while inner.done_count > 0
            && (inner.done_count + 1 > self.results_max
                || inner.done_bytes + incoming > self.result_bytes_max)
        {
            let Some(oldest) = inner.done_order.pop_front() else {
                break;
            };
            if let Some(job) = inner.jobs.get(&oldest) {
                if matches!(job.state, State::Done { .. }) {
                    remove_done(inner, oldest);
                    tracing::debug!(event = "job.result_evicted", id = oldest);
                }
            }
        }
    }

    /// The stored job `id` if the viewer may see it.
    fn visible<'i>(
        inner: &'i mut Inner<W>,
        id: JobId,
        viewer: Viewer<'_>,
    ) -> Option<&'i mut Job<W>> {
        inner
            .jobs
            .get_mut(&id)
            .filter(|job| job.stored && viewer.sees(&job.owner))
    }

    /// The status of a stored job.
    pub(crate) fn status(&self, id: JobId, viewer: Viewer<'_>) -> Status {
        let mut inner = self.inner.lock();
        match Self::visible(&mut inner, id, viewer) {
            Some(job) => match job.state {
                State::Done { .. } => Status::Done,
                _ => Status::Pending,
            },
            None => Status::Unknown,
        }
    }

    /// Takes a stored job's reply out (fetch-once).
    pub(crate) fn fetch(&self, id: JobId, viewer: Viewer<'_>) -> Fetched {
        let mut inner = self.inner.lock();
        match Self::visible(&mut inner, id, viewer) {
            Some(job) if !matches!(job.state, State::Done { .. }) => return Fetched::Pending,
            Some(_) => {}
            None => return Fetched::Unknown,
        }
        Fetched::Done(remove_done(&mut inner, id))
    }

    /// The ids of the viewer's stored jobs that are done (`done`) or pending, ascending, at
    /// most `count`.
    pub(crate) fn list(&self, done: bool, count: usize, viewer: Viewer<'_>) -> Vec<JobId> {
        let inner = self.inner.lock();
        let mut ids: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| {
                job.stored
                    && viewer.sees(&job.owner)
                    && matches!(job.state, State::Done { .. }) == done
            })
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids.truncate(count);
        ids
    }

    /// Cancels a stored job: a queued one is removed and never runs (its stored reply says
    /// it was cancelled); a running one has its flag set; a done one is left alone. False
    /// when the viewer has no stored job with this id.
    pub(crate) fn cancel(
        &self,
        id: JobId,
        viewer: Viewer<'_>,
        cancelled_reply: impl FnOnce() -> ApiResponse,
    ) -> bool {
        let mut inner = self.inner.lock();
        let Some(job) = Self::visible(&mut inner, id, viewer) else {
            return false;
        };
        match &job.state {
            State::Queued(_) => {
                // Replacing the state drops the work and the admission it holds, which only
                // decrements a counter, so doing it under the lock is cheap.
                let reply = cancelled_reply();
                let bytes = reply_bytes(&reply);
                job.state = State::Done {
                    reply,
                    bytes,
                    finished_unix: unix_now(),
                };
                let owner = job.owner.clone();
                inner.queued -= 1;
                inner.release(&owner);
                self.make_room(&mut inner, bytes);
                inner.done_order.push_back(id);
                inner.done_count += 1;
                inner.done_bytes += bytes;
                drop(inner);
                self.changed.notify_waiters();
            }
            State::Running(flag) => flag.cancel(),
            State::Done { .. } => {}
        }
        true
    }

    /// Deletes a stored job: its result, or (queued) the job itself, or (running) the claim
    /// on its result. False when the viewer has no stored job with this id.
    pub(crate) fn delete(&self, id: JobId, viewer: Viewer<'_>) -> bool {
        let mut inner = self.inner.lock();
        let Some(job) = Self::visible(&mut inner, id, viewer) else {
            return false;
        };
        match job.state {
            State::Queued(_) => {
                let owner = job.owner.clone();
                inner.jobs.remove(&id);
                inner.queued -= 1;
                inner.release(&owner);
            }
            State::Running(_) => job.stored = false,
            State::Done { .. } => {
                remove_done(&mut inner, id);
            }
        }
        drop(inner);
        self.changed.notify_waiters();
        true
    }

    /// `DELETE /_api/job/all`: of the viewer's jobs (stored or fire-and-forget), deletes every
    /// stored result, removes every queued job (it never runs) and cancels every running one
    /// (which then keeps no result). Other users' jobs are untouched.
    pub(crate) fn delete_all(&self, viewer: Viewer<'_>) {
        let mut inner = self.inner.lock();
        let mine: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| viewer.sees(&job.owner))
            .map(|(id, _)| *id)
            .collect();
        for id in mine {
            let job = inner.jobs.get_mut(&id).expect("listed above");
            match &job.state {
                State::Done { .. } => {
                    remove_done(&mut inner, id);
                }
                State::Queued(_) => {
                    let job = inner.jobs.remove(&id).expect("listed above");
                    inner.queued -= 1;
                    inner.release(&job.owner);
                }
                State::Running(flag) => {
                    flag.cancel();
                    job.stored = false;
                }
            }
        }
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Deletes the viewer's stored results that finished before `stamp` (Unix seconds).
    pub(crate) fn delete_expired(&self, stamp: f64, viewer: Viewer<'_>) {
        let mut inner = self.inner.lock();
        let expired: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| {
                viewer.sees(&job.owner)
                    && matches!(job.state, State::Done { finished_unix, .. } if finished_unix < stamp)
            })
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            remove_done(&mut inner, id);
        }
    }

    /// Stops taking new jobs (shutdown); queued ones still run.
    pub(crate) fn close(&self) {
        self.inner.lock().closed = true;
    }

    /// (queued, running) job counts.
    pub(crate) fn pending(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.queued, inner.running)
    }

    /// Waits until nothing is queued or running.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.changed.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.pending() == (0, 0) {
                return;
            }
            notified.await;
        }
    }

    /// Removes every queued job without running it; returns their ids (stored or not).
    pub(crate) fn abandon_queued(&self) -> Vec<JobId> {
        let mut inner = self.inner.lock();
        let mut ids: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| matches!(job.state, State::Queued(_)))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        for id in &ids {
            let job = inner.jobs.remove(id).expect("listed above");
            inner.release(&job.owner);
        }
        inner.queued = 0;
        drop(inner);
        self.changed.notify_waiters();
        ids
    }

    /// Sets the cancel flag of every running job.
    pub(crate) fn cancel_running(&self) {
        let inner = self.inner.lock();
        for job in inner.jobs.values() {
            if let State::Running(flag) = &job.state {
                flag.cancel();
            }
        }
    }

    /// (stored results, their bytes).
    #[cfg(test)]
    pub(crate) fn stored(&self) -> (usize, usize) {
        let inner = self.inner.lock();
        (inner.done_count, inner.done_bytes)
    }
}

/// Removes a done job and returns its reply, keeping the totals right.
fn remove_done<W>(inner: &mut Inner<W>, id: JobId) -> ApiResponse {
    let job = inner
        .jobs
        .remove(&id)
        .expect("the caller checked the job exists");
    let State::Done { reply, bytes, .. } = job.state else {
        unreachable!("the caller checked the job is done");
    };
    inner.done_count -= 1;
    inner.done_bytes -= bytes;
    // Ids already removed stay in `done_order` until eviction reaches them; keep that list
    // from growing without bound when clients fetch results in a different order.
    if inner.done_order.len() > 2 * inner.done_count + 1024 {
        let Inner {
            done_order, jobs, ..
        } = inner;
        done_order.retain(|id| {
            matches!(
                jobs.get(id),
                Some(Job {
                    state: State::Done { .. },
                    ..
                })
            )
        });
    }
    reply
}

/// The memory a stored reply accounts for: body, header names and values, and a fixed
/// overhead per result.
fn reply_bytes(reply: &ApiResponse) -> usize {
    let headers: usize = reply
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    reply.body.len() + headers + 128
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(body: &'static str) -> ApiResponse {
        ApiResponse::json_bytes(200, body)
    }

    fn cancelled() -> ApiResponse {
        ApiResponse::empty(410)
    }

    fn owner(user: &str) -> Owner {
        Owner {
            user: user.into(),
            database: "_system".into(),
        }
    }

    fn viewer(user: &str) -> Viewer<'_> {
        Viewer {
            user,
            database: "_system",
            superuser: false,
        }
    }

    const ALICE: Viewer<'static> = Viewer {
        user: "alice",
        database: "_system",
        superuser: false,
    };

    fn submit<W>(store: &JobStore<W>, user: &str, work: W, stored: bool) -> JobId {
        match store.submit(owner(user), work, stored) {
            Submitted::Queued(id) => id,
            other => panic!("not queued: {other:?}"),
        }
    }

    fn run<W>(store: &JobStore<W>, body: &'static str) -> JobId {
        let taken = store.take_next().unwrap();
        store.finish(taken.id, reply(body));
        taken.id
    }

    #[tokio::test]
    async fn jobs_run_in_order_and_results_are_fetched_once() {
        let store: JobStore<&str> = JobStore::new(100);
        let a = submit(&store, "alice", "a", true);
        let b = submit(&store, "alice", "b", true);
        assert_ne!(a, b);
        assert_eq!(store.status(a, ALICE), Status::Pending);
        let first = store.take_next().unwrap();
        assert_eq!((first.id, first.work), (a, "a"));
        assert!(matches!(store.fetch(a, ALICE), Fetched::Pending));
        store.finish(a, reply("1"));
        assert_eq!(store.status(a, ALICE), Status::Done);
        assert_eq!(store.list(true, 100, ALICE), vec![a]);
        assert_eq!(store.list(false, 100, ALICE), vec![b]);
        let Fetched::Done(r) = store.fetch(a, ALICE) else {
            panic!("done job must be fetched");
        };
        assert_eq!(&r.body[..], b"1");
        assert!(matches!(store.fetch(a, ALICE), Fetched::Unknown));
        assert_eq!(store.stored(), (0, 0));
    }

    #[tokio::test]
    async fn another_users_jobs_are_as_good_as_missing() {
        let store: JobStore<()> = JobStore::new(100);
        let secret = submit(&store, "root", (), true);
        run(&store, "{\"secret\":1}");
        let mallory = viewer("mallory");
        assert_eq!(store.status(secret, mallory), Status::Unknown);
        assert!(matches!(store.fetch(secret, mallory), Fetched::Unknown));
        assert!(store.list(true, 100, mallory).is_empty());
        assert!(!store.cancel(secret, mallory, cancelled));
        assert!(!store.delete(secret, mallory));
        store.delete_all(mallory);
        store.delete_expired(f64::MAX, mallory);
        // The same user in another database does not see it either.
        let elsewhere = Viewer {
            user: "root",
            database: "other",
            superuser: false,
        };
        assert_eq!(store.status(secret, elsewhere), Status::Unknown);
        // A superuser sees every user's jobs of the database.
        let superuser = Viewer {
            user: "",
            database: "_system",
            superuser: true,
        };
        assert_eq!(store.list(true, 100, superuser), vec![secret]);
        assert!(matches!(
            store.fetch(secret, viewer("root")),
            Fetched::Done(_)
        ));
    }

    #[tokio::test]
    async fn one_owner_cannot_take_every_turn_or_every_place() {
        let store: JobStore<&str> = JobStore::new(3);
        for _ in 0..3 {
            submit(&store, "greedy", "g", true);
        }
        assert_eq!(
            store.submit(owner("greedy"), "g", true),
            Submitted::OwnerFull
        );
        let polite = submit(&store, "polite", "p", true);
        // The polite owner's one job runs second, not after the greedy backlog.
        assert_eq!(store.take_next().unwrap().work, "g");
        let second = store.take_next().unwrap();
        assert_eq!((second.id, second.work), (polite, "p"));
        // A running job still counts; a finished one frees a place.
        assert_eq!(
            store.submit(owner("greedy"), "g", true),
            Submitted::OwnerFull
        );
        let third = store.take_next().unwrap();
        store.finish(third.id, reply("x"));
        assert!(matches!(
            store.submit(owner("greedy"), "g", true),
            Submitted::Queued(_)
        ));
    }

    #[tokio::test]
    async fn delete_all_cancels_ones_own_queued_and_running_jobs_only() {
        let store: JobStore<&str> = JobStore::new(100);
        let running = submit(&store, "alice", "r", true);
        let taken = store.take_next().unwrap();
        assert_eq!(taken.id, running);
        submit(&store, "alice", "queued", true);
        submit(&store, "alice", "fire and forget", false);
        let bobs = submit(&store, "bob", "b", true);
        store.delete_all(ALICE);
        assert!(taken.cancel.is_cancelled());
        // Only bob's job is left to run.
        let next = store.take_next().unwrap();
        assert_eq!(next.id, bobs);
        assert!(store.take_next().is_none());
        store.finish(running, reply("late"));
        assert_eq!(
            store.status(running, ALICE),
            Status::Unknown,
            "no result kept"
        );
        assert_eq!(store.pending(), (0, 1));
    }

    #[tokio::test]
    async fn a_cancelled_queued_job_never_runs() {
        let store: JobStore<&str> = JobStore::new(100);
        let a = submit(&store, "alice", "a", true);
        let b = submit(&store, "alice", "b", true);
        let c = submit(&store, "alice", "c", true);
        assert!(store.cancel(b, ALICE, cancelled));
        assert!(store.delete(c, ALICE));
        assert_eq!(store.pending(), (1, 0));
        let taken = store.take_next().unwrap();
        assert_eq!(taken.id, a);
        store.finish(a, reply("1"));
        // b and c left the queue: the next job a worker sees is a later one.
        let d = submit(&store, "alice", "d", true);
        assert_eq!(store.take_next().unwrap().id, d);
        let Fetched::Done(r) = store.fetch(b, ALICE) else {
            panic!("a cancelled job is done with the cancel reply");
        };
        assert_eq!(r.status.as_u16(), 410);
        assert_eq!(store.status(c, ALICE), Status::Unknown);
        assert!(!store.cancel(999, ALICE, cancelled));
    }

    #[tokio::test]
    async fn running_jobs_see_their_cancel_flag() {
        let store: JobStore<()> = JobStore::new(100);
        let a = submit(&store, "alice", (), true);
        let taken = store.take_next().unwrap();
        let waiter = {
            let flag = taken.cancel.clone();
            tokio::spawn(async move { flag.cancelled().await })
        };
        assert!(store.cancel(a, ALICE, cancelled));
        waiter.await.unwrap();
        assert!(taken.cancel.is_cancelled());
        assert_eq!(store.status(a, ALICE), Status::Pending);
    }

    #[tokio::test]
    async fn fire_and_forget_jobs_are_invisible_and_keep_no_result() {
        let store: JobStore<()> = JobStore::new(100);
        let a = submit(&store, "alice", (), false);
        assert_eq!(store.status(a, ALICE), Status::Unknown);
        assert!(!store.cancel(a, ALICE, cancelled));
        assert!(store.list(false, 10, ALICE).is_empty());
        run(&store, "x");
        assert_eq!(store.stored(), (0, 0));
        assert_eq!(store.pending(), (0, 0));
    }

    #[tokio::test]
    async fn oldest_results_are_evicted_at_the_bounds() {
        let store: JobStore<()> = JobStore::with_bounds(2, 1 << 20, 100);
        let ids: Vec<JobId> = (0..3)
            .map(|_| {
                submit(&store, "alice", (), true);
                run(&store, "r")
            })
            .collect();
        assert_eq!(store.status(ids[0], ALICE), Status::Unknown);
        let mut kept = ids[1..].to_vec();
        kept.sort_unstable();
        assert_eq!(store.list(true, 10, ALICE), kept);

        let small: JobStore<()> = JobStore::with_bounds(100, 300, 100);
        submit(&small, "alice", (), true);
        let first = run(&small, "0123456789");
        submit(&small, "alice", (), true);
        let second = run(&small, "0123456789");
        // Each result accounts for about 170 bytes; two do not fit in 300.
        assert_eq!(small.status(first, ALICE), Status::Unknown);
        assert_eq!(small.status(second, ALICE), Status::Done);
        let (count, bytes) = small.stored();
        assert_eq!(count, 1);
        assert!(bytes <= 300);
    }

    #[tokio::test]
    async fn delete_all_expired_and_shutdown() {
        let store: JobStore<()> = JobStore::new(100);
        submit(&store, "alice", (), true);
        let a = run(&store, "r");
        store.delete_expired(0.0, ALICE);
        assert_eq!(store.status(a, ALICE), Status::Done);
        store.delete_expired(unix_now() + 1.0, ALICE);
        assert_eq!(store.status(a, ALICE), Status::Unknown);

        submit(&store, "alice", (), true);
        let b = run(&store, "r");
        let c = submit(&store, "alice", (), true);
        store.delete_all(ALICE);
        assert_eq!(store.status(b, ALICE), Status::Unknown);
        assert_eq!(store.status(c, ALICE), Status::Unknown);

        let q = submit(&store, "bob", (), false);
        store.close();
        assert_eq!(store.submit(owner("alice"), (), true), Submitted::Closed);
        assert_eq!(store.abandon_queued(), vec![q]);
        store.idle().await;
        assert!(store.take_next().is_none());
    }
}
