//! [`JobStore`]: the table of asynchronous jobs, their FIFO queue and their stored results.
//!
//! What it is: one mutex-guarded table from job id to state (queued with its work, running,
//! or done with its reply), the queue of ids in arrival order, and the semaphore of job
//! slots that bounds how many jobs run at once. Fire-and-forget jobs
//! (`x-arango-async: true`) live here while they wait and run (so shutdown can report them),
//! but no API operation sees them and their replies are dropped.
//!
//! What it is not: the workers (`crate::async_exec` runs them) or HTTP (`super::handlers`).
//!
//! Invariants: a job is in exactly one state; a cancelled or deleted queued job is removed
//! from the table before any worker can take it, so it never runs (the worker skips its id);
//! stored results are bounded by [`RESULTS_MAX`] and [`RESULT_BYTES_MAX`], and when a new
//! result would pass either bound the oldest stored results are evicted first; the byte and
//! count totals always equal the sums over the table's done jobs.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use tokio::sync::{Notify, Semaphore};

use crate::response::ApiResponse;

/// A job's id, server-wide, counting up from 1.
pub(crate) type JobId = u64;

/// The most stored results kept at once; beyond it the oldest are evicted.
pub(crate) const RESULTS_MAX: usize = 65_536;

/// The most bytes (bodies and headers) of stored results kept at once; beyond it the oldest
/// are evicted.
pub(crate) const RESULT_BYTES_MAX: usize = 256 * 1024 * 1024;

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
    /// No stored job has this id.
    Unknown,
}

/// What `PUT /_api/job/{id}` gets.
pub(crate) enum Fetched {
    /// The stored reply (now removed from the store).
    Done(ApiResponse),
    /// Not finished yet.
    Pending,
    /// No stored job has this id.
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
    /// False for fire-and-forget jobs: invisible to the API, result dropped.
    stored: bool,
    state: State<W>,
}

struct Inner<W> {
    next_id: JobId,
    jobs: HashMap<JobId, Job<W>>,
    /// Ids in arrival order; ids of jobs cancelled while queued are skipped when reached.
    queue: VecDeque<JobId>,
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

/// The job table; `W` is the work a queued job carries.
pub(crate) struct JobStore<W> {
    inner: Mutex<Inner<W>>,
    /// One permit per job that may run at once (none until [`JobStore::open_slots`]).
    slots: Semaphore,
    /// Woken whenever a job finishes or leaves the queue, for shutdown's wait.
    changed: Notify,
    results_max: usize,
    result_bytes_max: usize,
}

impl<W> JobStore<W> {
    /// A store with the default bounds.
    pub(crate) fn new() -> Self {
        Self::with_bounds(RESULTS_MAX, RESULT_BYTES_MAX)
    }

    /// A store with given result bounds (tests use small ones).
    pub(crate) fn with_bounds(results_max: usize, result_bytes_max: usize) -> Self {
        assert!(results_max > 0 && result_bytes_max > 0);
        JobStore {
            inner: Mutex::new(Inner {
                next_id: 1,
                jobs: HashMap::new(),
                queue: VecDeque::new(),
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
        }
    }

    /// Queues a job; None when the store no longer takes jobs (shutdown).
    pub(crate) fn submit(&self, work: W, stored: bool) -> Option<JobId> {
        let mut inner = self.inner.lock();
        if inner.closed {
            return None;
        }
        let id = inner.next_id;
        inner.next_id += 1;
        inner.jobs.insert(
            id,
            Job {
                stored,
                state: State::Queued(work),
            },
        );
        inner.queue.push_back(id);
        inner.queued += 1;
        Some(id)
    }

    /// Adds `n` job slots: from now on up to that many more jobs may run at once.
    pub(crate) fn open_slots(&self, n: usize) {
        self.slots.add_permits(n);
    }

    /// The job slots; a runner holds one while it runs a job.
    pub(crate) fn slots(&self) -> &Semaphore {
        &self.slots
    }

    /// Takes the oldest queued job and marks it running; None when nothing is queued.
    pub(crate) fn take_next(&self) -> Option<Taken<W>> {
        let mut inner = self.inner.lock();
        loop {
            let id = inner.queue.pop_front()?;
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
        let stored = match inner.jobs.get(&id) {
            Some(job) => {
                assert!(
                    matches!(job.state, State::Running(_)),
                    "only a running job finishes"
                );
                job.stored
            }
            None => false,
        };
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

    /// The status of a stored job.
    pub(crate) fn status(&self, id: JobId) -> Status {
        let inner = self.inner.lock();
        match inner.jobs.get(&id) {
            Some(job) if job.stored => match job.state {
                State::Done { .. } => Status::Done,
                _ => Status::Pending,
            },
            _ => Status::Unknown,
        }
    }

    /// Takes a stored job's reply out (fetch-once).
    pub(crate) fn fetch(&self, id: JobId) -> Fetched {
        let mut inner = self.inner.lock();
        match inner.jobs.get(&id) {
            Some(job) if job.stored => {
                if !matches!(job.state, State::Done { .. }) {
                    return Fetched::Pending;
                }
            }
            _ => return Fetched::Unknown,
        }
        Fetched::Done(remove_done(&mut inner, id))
    }

    /// The ids of stored jobs that are done (`done`) or pending, ascending, at most `count`.
    pub(crate) fn list(&self, done: bool, count: usize) -> Vec<JobId> {
        let inner = self.inner.lock();
        let mut ids: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| job.stored && matches!(job.state, State::Done { .. }) == done)
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids.truncate(count);
        ids
    }

    /// Cancels a stored job: a queued one is removed and never runs (its stored reply says
    /// it was cancelled); a running one has its flag set; a done one is left alone. False
    /// when no stored job has this id.
    pub(crate) fn cancel(&self, id: JobId, cancelled_reply: impl FnOnce() -> ApiResponse) -> bool {
        let mut inner = self.inner.lock();
        let Some(job) = inner.jobs.get_mut(&id).filter(|job| job.stored) else {
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
                inner.queued -= 1;
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
    /// on its result. False when no stored job has this id.
    pub(crate) fn delete(&self, id: JobId) -> bool {
        let mut inner = self.inner.lock();
        let Some(job) = inner.jobs.get_mut(&id).filter(|job| job.stored) else {
            return false;
        };
        match job.state {
            State::Queued(_) => {
                inner.jobs.remove(&id);
                inner.queued -= 1;
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

    /// Deletes every stored result; pending stored jobs still run but keep no result.
    pub(crate) fn delete_all(&self) {
        let mut inner = self.inner.lock();
        let done: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| matches!(job.state, State::Done { .. }))
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            remove_done(&mut inner, id);
        }
        for job in inner.jobs.values_mut() {
            job.stored = false;
        }
        inner.done_order.clear();
    }

    /// Deletes the stored results that finished before `stamp` (Unix seconds).
    pub(crate) fn delete_expired(&self, stamp: f64) {
        let mut inner = self.inner.lock();
        let expired: Vec<JobId> = inner
            .jobs
            .iter()
            .filter(|(_, job)| {
                matches!(job.state, State::Done { finished_unix, .. } if finished_unix < stamp)
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
            inner.jobs.remove(id);
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

    #[tokio::test]
    async fn jobs_run_in_order_and_results_are_fetched_once() {
        let store: JobStore<&str> = JobStore::new();
        let a = store.submit("a", true).unwrap();
        let b = store.submit("b", true).unwrap();
        assert!(a < b);
        assert_eq!(store.status(a), Status::Pending);
        let first = store.take_next().unwrap();
        assert_eq!((first.id, first.work), (a, "a"));
        assert!(matches!(store.fetch(a), Fetched::Pending));
        store.finish(a, reply("1"));
        assert_eq!(store.status(a), Status::Done);
        assert_eq!(store.list(true, 100), vec![a]);
        assert_eq!(store.list(false, 100), vec![b]);
        let Fetched::Done(r) = store.fetch(a) else {
            panic!("done job must be fetched");
        };
        assert_eq!(&r.body[..], b"1");
        assert!(matches!(store.fetch(a), Fetched::Unknown));
        assert_eq!(store.stored(), (0, 0));
    }

    #[tokio::test]
    async fn a_cancelled_queued_job_never_runs() {
        let store: JobStore<&str> = JobStore::new();
        let a = store.submit("a", true).unwrap();
        let b = store.submit("b", true).unwrap();
        let c = store.submit("c", true).unwrap();
        assert!(store.cancel(b, cancelled));
        assert!(store.delete(c));
        assert_eq!(store.pending(), (1, 0));
        let taken = store.take_next().unwrap();
        assert_eq!(taken.id, a);
        store.finish(a, reply("1"));
        // b and c left the queue: the next job a worker sees is a later one.
        let d = store.submit("d", true).unwrap();
        assert_eq!(store.take_next().unwrap().id, d);
        let Fetched::Done(r) = store.fetch(b) else {
            panic!("a cancelled job is done with the cancel reply");
        };
        assert_eq!(r.status.as_u16(), 410);
        assert_eq!(store.status(c), Status::Unknown);
        assert!(!store.cancel(999, cancelled));
    }

    #[tokio::test]
    async fn running_jobs_see_their_cancel_flag() {
        let store: JobStore<()> = JobStore::new();
        let a = store.submit((), true).unwrap();
        let taken = store.take_next().unwrap();
        let waiter = {
            let flag = taken.cancel.clone();
            tokio::spawn(async move { flag.cancelled().await })
        };
        assert!(store.cancel(a, cancelled));
        waiter.await.unwrap();
        assert!(taken.cancel.is_cancelled());
        assert_eq!(store.status(a), Status::Pending);
    }

    #[tokio::test]
    async fn fire_and_forget_jobs_are_invisible_and_keep_no_result() {
        let store: JobStore<()> = JobStore::new();
        let a = store.submit((), false).unwrap();
        assert_eq!(store.status(a), Status::Unknown);
        assert!(!store.cancel(a, cancelled));
        assert!(store.list(false, 10).is_empty());
        let taken = store.take_next().unwrap();
        store.finish(taken.id, reply("x"));
        assert_eq!(store.stored(), (0, 0));
        assert_eq!(store.pending(), (0, 0));
    }

    #[tokio::test]
    async fn oldest_results_are_evicted_at_the_bounds() {
        let store: JobStore<()> = JobStore::with_bounds(2, 1 << 20);
        let mut ids = Vec::new();
        for _ in 0..3 {
            let id = store.submit((), true).unwrap();
            let taken = store.take_next().unwrap();
            store.finish(taken.id, reply("r"));
            ids.push(id);
        }
        assert_eq!(store.status(ids[0]), Status::Unknown);
        assert_eq!(store.list(true, 10), ids[1..].to_vec());

        let small: JobStore<()> = JobStore::with_bounds(100, 300);
        let first = small.submit((), true).unwrap();
        let t = small.take_next().unwrap();
        small.finish(t.id, reply("0123456789"));
        let second = small.submit((), true).unwrap();
        let t = small.take_next().unwrap();
        small.finish(t.id, reply("0123456789"));
        // Each result accounts for about 170 bytes; two do not fit in 300.
        assert_eq!(small.status(first), Status::Unknown);
        assert_eq!(small.status(second), Status::Done);
        let (count, bytes) = small.stored();
        assert_eq!(count, 1);
        assert!(bytes <= 300);
    }

    #[tokio::test]
    async fn delete_all_expired_and_shutdown() {
        let store: JobStore<()> = JobStore::new();
        let a = store.submit((), true).unwrap();
        let t = store.take_next().unwrap();
        store.finish(t.id, reply("r"));
        store.delete_expired(0.0);
        assert_eq!(store.status(a), Status::Done);
        store.delete_expired(unix_now() + 1.0);
        assert_eq!(store.status(a), Status::Unknown);

        let b = store.submit((), true).unwrap();
        let t = store.take_next().unwrap();
        store.finish(t.id, reply("r"));
        let c = store.submit((), true).unwrap();
        store.delete_all();
        assert_eq!(store.status(b), Status::Unknown);
        assert_eq!(store.status(c), Status::Unknown);

        let q = store.submit((), false).unwrap();
        store.close();
        assert!(store.submit((), true).is_none());
        assert_eq!(store.abandon_queued(), vec![c, q]);
        store.idle().await;
        assert!(store.take_next().is_none());
    }
}
