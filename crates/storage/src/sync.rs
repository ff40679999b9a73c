//! Group commit: many writers waiting for durability share one fsync, and none of them parks a
//! thread of its own while it waits.
//!
//! What it is: a per-store coordinator over `seq` numbers. A write hands back a
//! [`WriteTicket`] (its `seq` and the journal its record went to). [`WriteTicket::on_durable`]
//! registers a callback: it fires at once when an fsync already covered the record, and
//! otherwise joins the store's list of waiters and, unless a round of the store is collecting
//! waiters already, schedules one on the shared syncer threads (`syncer.rs`). A syncer round
//! takes every waiter of the store, issues ONE `sync_data` of the journal holding the newest
//! of them (preceded by the fsync of any full journal handed off but not synced yet, and by a
//! directory fsync for a journal whose entry is not durable yet), waits until every earlier
//! round of the store finished, raises `synced` and fires all their callbacks. Up to
//! [`ROUNDS_IN_FLIGHT`] rounds of a store run at once: writers that arrive while a round
//! fsyncs form the next round, which starts its own fsync at once instead of waiting for the
//! first to return (on the machine of `docs/benchmarks/notes-perf-sync.md` overlapping fsyncs
//! cost far less than back-to-back ones), and answers after it. The thread
//! that finished a round runs the store's next one itself, without waking another thread. No
//! timer: a lone write is fsynced at once. [`WriteTicket::wait`] is the blocking form, built on
//! the callback.
//!
//! What it is not: a timer. The background fsync of unsynced writes after `sync_interval` is
//! `Store::maintain`, which uses the same path through `Store::sync`.
//!
//! Invariants:
//! - `synced` only grows and never passes a `seq` whose record was not covered by a successful
//!   fsync. A round raises it to the newest waiter's `seq` only after it fsynced, in order,
//!   every journal handed off for sealing whose records are not all covered yet (see
//!   [`GroupCommit::hand_off`]), then the newest waiter's journal, then (once) the directory
//!   when one of those journals was created by the writer without a durable entry. Records
//!   are numbered in append order and a journal is handed off (its footer appended) before
//!   its successor takes any record, so every older waiter is in one of those journals or in
//!   a datafile sealed earlier: "when a later write is durable, so is every earlier one".
//! - A handed-off journal stays on the list until `Store::maintain` (or `rotate`, `close`)
//!   renamed it to a datafile after an fsync that covered it; no round ever renames.
//! - A callback fires exactly once: `Ok` only after `synced` reached its `seq`; with an error
//!   when an fsync failed (then the store is poisoned first, and every waiter, present and
//!   future, gets an error: nothing more is ever acknowledged) or when another failure
//!   poisoned the store while it waited.
//! - At most [`ROUNDS_IN_FLIGHT`] rounds of a store are queued or running (`rounds`), at most
//!   one of them collecting waiters (`collecting`), so the queue is bounded by twice the number
//!   of stores. Rounds are numbered when they take their waiters and answer in that order
//!   (`finished`): a round raises `synced` and answers `Ok` only after every earlier round
//!   succeeded (a failed one poisoned the store, which fails every later round), so `synced`
//!   always names a prefix of the log even though fsyncs overlap; a round waits only for
//!   rounds that took their waiters before it, which are running, so the wait is bounded. An
//!   fsync's `Ok` is trusted only because the file layer fails it when an overlapping fsync of
//!   the same file failed (`io/cached.rs`, through which the catalog opens every store). The
//!   waiter list is
//!   bounded by the writes in flight, which the server bounds; the hand-off list by the
//!   journals filled between two maintenance passes.
//! - Callbacks run on a syncer thread (or on the registering thread when already durable),
//!   never under a lock of the store; they must be quick and must not block. A round takes no
//!   lock of the store but its own state's (never the writer's).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::manifest::FileSet;
use crate::poison::Poison;
use crate::store::Store;

/// How many rounds of one store may be in flight at once: while one fsyncs, the next one takes
/// the writers that arrived meanwhile and starts its own fsync without waiting for the first to
/// return. On the 2-core virtual machine of `docs/benchmarks/notes-perf-sync.md` a lone fsync
/// took about 4 ms and two overlapping ones about 0.2-0.3 ms each.
pub(crate) const ROUNDS_IN_FLIGHT: usize = 2;

/// What a durability callback is told: `Ok` once an fsync covered the write, else why not.
pub type DurableCallback = Box<dyn FnOnce(Result<(), StorageError>) + Send + 'static>;

/// A write that reached the journal (the page cache) and may not be durable yet.
///
/// Dropping a ticket is fine: the write stays, and the background fsync makes it durable within
/// the store's sync interval.
pub struct WriteTicket {
    seq: u64,
    journal: Arc<DataFile>,
    group_commit: Arc<GroupCommit>,
}

impl std::fmt::Debug for WriteTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteTicket")
            .field("seq", &self.seq)
            .field("fid", &self.journal.fid)
            .finish()
    }
}

impl WriteTicket {
    pub(crate) fn new(
        seq: u64,
        journal: Arc<DataFile>,
        group_commit: Arc<GroupCommit>,
    ) -> WriteTicket {
        WriteTicket {
            seq,
            journal,
            group_commit,
        }
    }

    /// The write's sequence number in its store (strictly increasing in write order).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Calls `done` once an fsync covered the write (`Ok`), or with the error that means it
    /// never will be. Never blocks: `done` runs at once when the write is already durable (or
    /// the store poisoned), else later on a syncer thread. `done` must be quick.
    pub fn on_durable(self, done: DurableCallback) {
        let WriteTicket {
            seq,
            journal,
            group_commit,
        } = self;
        group_commit.register(seq, journal, done);
    }

    /// Blocks until the write is durable (or cannot become so).
    pub fn wait(self) -> Result<(), StorageError> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        self.on_durable(Box::new(move |result| {
            // The receiver waits below until this fires; it cannot be gone.
            let _ = sender.send(result);
        }));
        // Every callback fires exactly once; a dropped one would be a bug in a syncer round,
        // and the caller is better served by an error than by a panic or a hang.
        receiver.recv().unwrap_or(Err(StorageError::ShuttingDown))
    }
}

/// One registered callback.
struct Waiter {
    seq: u64,
    journal: Arc<DataFile>,
    done: DurableCallback,
}

struct SyncState {
    /// Every record with `seq <= synced` is durable.
    synced: u64,
    /// Callbacks waiting for an fsync, in registration order.
    waiters: Vec<Waiter>,
    /// Rounds of the store in the syncers' queue or running (at most [`ROUNDS_IN_FLIGHT`]).
    rounds: usize,
    /// One of them has not taken its waiters yet: new waiters join it.
    collecting: bool,
    /// Rounds that took their waiters: the next one to do so gets this number.
    taken: u64,
    /// Rounds finished (answered): they finish in the order they took their waiters.
    finished: u64,
    /// When the last fsync finished.
    last_sync: Instant,
    /// Full journals handed off for sealing (footer appended, not yet renamed to datafiles),
    /// oldest first.
    handed_off: Vec<HandedOff>,
}

/// A full journal handed off for sealing.
struct HandedOff {
    journal: Arc<DataFile>,
    /// The `seq` of its last record.
    last_seq: u64,
    /// An fsync that started after its footer was appended succeeded: the whole journal is
    /// durable. Until then no round acknowledges a record of a later journal without fsyncing
    /// it first (recovery reads a journal without its footer as the end of the log).
    synced: bool,
}

/// The group-commit coordinator of one store, shared with the syncer threads.
pub struct GroupCommit {
    state: Mutex<SyncState>,
    /// Signalled when a round finished: the next one in order may answer.
    turn: Condvar,
    /// The store's latch: a failed fsync sets it, and a set latch fails every waiter.
    poison: Arc<Poison>,
    /// The store's directory: to fsync it, and to name files in errors.
    dir: PathBuf,
    /// The store's files: for the directory fsync, and the manifest that must name a journal
    /// the writer created before a record in it is acknowledged.
    files: Arc<FileSet>,
    /// fsyncs issued by syncer rounds.
    syncs: AtomicU64,
}

impl GroupCommit {
    /// A coordinator for the store in `dir` whose records up to `synced` are durable.
    pub(crate) fn new(
        synced: u64,
        dir: PathBuf,
        files: Arc<FileSet>,
        poison: Arc<Poison>,
    ) -> GroupCommit {
        GroupCommit {
            turn: Condvar::new(),
            state: Mutex::new(SyncState {
                synced,
                waiters: Vec::new(),
                rounds: 0,
                collecting: false,
                taken: 0,
                finished: 0,
                last_sync: Instant::now(),
                handed_off: Vec::new(),
            }),
            poison,
            dir,
            files,
            syncs: AtomicU64::new(0),
        }
    }

    /// Takes a full journal whose footer was just appended (page cache only) and whose last
    /// record is `last_seq`: from now on every round fsyncs it before it acknowledges anything
    /// newer, until [`GroupCommit::sealed`] says it became a datafile. Called by the writer,
    /// under the writer lock; does no I/O.
    pub(crate) fn hand_off(&self, journal: Arc<DataFile>, last_seq: u64) {
        let mut state = self.state.lock();
        assert!(
            state
                .handed_off
                .last()
                .is_none_or(|h| h.journal.fid < journal.fid && h.last_seq <= last_seq),
            "journals are handed off in the order they were written"
        );
        state.handed_off.push(HandedOff {
            journal,
            last_seq,
            synced: false,
        });
    }

    /// The journals handed off and not sealed yet, oldest first, with their last `seq`.
    pub(crate) fn handed_off(&self) -> Vec<(Arc<DataFile>, u64)> {
        let state = self.state.lock();
        state
            .handed_off
            .iter()
            .map(|h| (h.journal.clone(), h.last_seq))
            .collect()
    }

    /// Records that the handed-off journal `fid` was fsynced whole (its footer included) and
    /// renamed to a datafile: every record up to its last is durable (the journals handed off
    /// before it were sealed first), and rounds forget it.
    pub(crate) fn sealed(&self, fid: u64) {
        let mut state = self.state.lock();
        if let Some(at) = state.handed_off.iter().position(|h| h.journal.fid == fid) {
            assert_eq!(at, 0, "handed-off journals are sealed in order");
            let sealed = state.handed_off.remove(at);
            state.synced = state.synced.max(sealed.last_seq);
        }
    }

    /// fsyncs issued by syncer rounds so far.
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::Relaxed)
    }

    /// The highest `seq` known durable.
    pub fn synced(&self) -> u64 {
        self.state.lock().synced
    }

    /// Adds a waiter for `seq` (in `journal`), or answers it at once.
    fn register(self: Arc<Self>, seq: u64, journal: Arc<DataFile>, done: DurableCallback) {
        let mut state = self.state.lock();
        if state.synced >= seq {
            drop(state);
            return done(Ok(()));
        }
        // Checked under the state lock: a failing round sets the latch before it takes the
        // waiters under this lock, so a waiter is either taken by it or sees the latch here.
        if let Err(error) = self.poison.check() {
            drop(state);
            return done(Err(error));
        }
        state.waiters.push(Waiter { seq, journal, done });
        let schedule = !state.collecting && state.rounds < ROUNDS_IN_FLIGHT;
        if schedule {
            state.rounds += 1;
            state.collecting = true;
        }
        drop(state);
        if schedule {
            crate::syncer::schedule(self);
        }
    }

    /// One syncer round: takes every current waiter, covers them with one fsync (which may
    /// overlap the previous round's), waits until every earlier round finished, and answers
    /// them all. Runs on a syncer thread. Sets `again` (before the first callback runs, so a
    /// panicking callback cannot lose it) when it is the round's job to start the store's next
    /// one: writers are waiting and no other round collects them; the caller then runs it (at
    /// once on the same thread, unless other stores wait: `syncer.rs`).
    pub(crate) fn round(self: &Arc<Self>, again: &mut bool) {
        let (waiters, number) = {
            let mut state = self.state.lock();
            state.collecting = false;
            let number = state.taken;
            state.taken += 1;
            (std::mem::take(&mut state.waiters), number)
        };
        let outcome = self.cover(&waiters);
        let mut state = self.state.lock();
        // In order: a round's fsync says nothing about the writes of an earlier round that
        // failed, and `synced` names a prefix of the log.
        while state.finished != number {
            self.turn.wait(&mut state);
        }
        // An earlier round that failed poisoned the store: nothing after it is acknowledged.
        let outcome = outcome.and_then(|()| self.poison.check());
        if outcome.is_ok() {
            if let Some(newest) = waiters.iter().map(|w| w.seq).max() {
                state.synced = state.synced.max(newest);
                state.last_sync = Instant::now();
            }
        }
        state.finished += 1;
        self.turn.notify_all();
        let mut answered = waiters;
        if outcome.is_err() {
            // Writers that joined during the failed fsync cannot be acknowledged either.
            answered.append(&mut state.waiters);
        }
        state.rounds -= 1;
        *again = !state.waiters.is_empty() && !state.collecting && state.rounds < ROUNDS_IN_FLIGHT;
        if *again {
            state.rounds += 1;
            state.collecting = true;
        }
        drop(state);
        answered.sort_by_key(|w| w.seq);
        for waiter in answered {
            let result = match &outcome {
                Ok(()) => Ok(()),
                Err(error) => Err(error.clone()),
            };
            (waiter.done)(result);
        }
    }

    /// Makes every waiter of `waiters` durable: fsyncs the handed-off journals not covered yet
    /// (oldest first), then the newest waiter's journal, then the directory if one of them was
    /// created without a durable entry; with nothing handed off, that is ONE fsync.
    fn cover(&self, waiters: &[Waiter]) -> Result<(), StorageError> {
        let Some(newest) = waiters.iter().max_by_key(|w| w.seq) else {
            return Ok(());
        };
        let before: Vec<Arc<DataFile>> = {
            let state = self.state.lock();
            if state.synced >= newest.seq {
                // Covered while they waited (an earlier round, or a seal).
                return Ok(());
            }
            // Taken after the waiters: a journal handed off before a waiter's record was written
            // is on this list (or sealed, so durable). Each is fsynced once whole, footer
            // included, even when its records were covered already: recovery must find the
            // footer of every journal older than one holding an acknowledged record.
            state
                .handed_off
                .iter()
                .filter(|h| !h.synced)
                .map(|h| h.journal.clone())
                .collect()
        };
        self.poison.check()?;
        let newest_too = !before.iter().any(|j| j.fid == newest.journal.fid);
        let journals: Vec<&Arc<DataFile>> = before
            .iter()
            .chain(Some(&newest.journal).filter(|_| newest_too))
            .collect();
        for journal in &journals {
            let result = journal.handle.sync_data();
            self.syncs.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = result {
                let path = journal.file_name().path_in(&self.dir);
                return Err(self.poison.poison(StorageError::io(&path, e)));
            }
        }
        let fresh: Vec<&&Arc<DataFile>> = journals.iter().filter(|j| !j.entry_durable()).collect();
        // A journal start that failed removed its file without a directory fsync: made durable
        // before anything written after it is acknowledged.
        let removed = self.files.take_dir_dirty();
        if !fresh.is_empty() || removed {
            // The header is durable now (fsynced above); the entry needs the directory's fsync.
            if let Err(e) = self.files.io().sync_dir(&self.dir) {
                return Err(self.poison.poison(StorageError::io(&self.dir, e)));
            }
            fresh.iter().for_each(|j| j.set_entry_durable(true));
            // Named in the manifest before anything in it is acknowledged, so a journal deleted
            // behind the engine's back is noticed at the next open.
            self.files
                .refresh_manifest()
                .map_err(|failure| self.poison.poison(failure.error))?;
        }
        {
            let mut state = self.state.lock();
            for h in state.handed_off.iter_mut() {
                if before.iter().any(|j| j.fid == h.journal.fid) {
                    h.synced = true;
                }
            }
        }
        // A failure elsewhere may have poisoned the store while we synced; after that, an
        // fsync's success says nothing about earlier writes. (`round` raises `synced`.)
        self.poison.check()
    }

    /// True when records past `synced` exist up to `written`, no round is pending, and the last
    /// fsync is `interval` old.
    fn due(&self, written: u64, interval: Duration) -> bool {
        let state = self.state.lock();
        written > state.synced && state.rounds == 0 && state.last_sync.elapsed() >= interval
    }
}

impl Store {
    /// A ticket for the record `seq` just written to `journal`.
    pub(crate) fn ticket(&self, seq: u64, journal: Arc<DataFile>) -> WriteTicket {
        WriteTicket::new(seq, journal, self.group_commit.clone())
    }

    /// Returns once every record up to the newest written one is durable.
    pub(crate) fn sync_all(&self) -> Result<(), StorageError> {
        // The target first, then the journal: every record up to the target is either in this
        // journal, in one handed off before it became active (the round fsyncs those first),
        // or in a sealed datafile.
        let target = self.seq_written.load(Ordering::Acquire);
        if self.group_commit.synced() >= target {
            return Ok(());
        }
        let journal = self.active.read().clone();
        self.ticket(target, journal).wait()
    }

    /// True when writes are waiting for an fsync and the last one is `interval` old.
    pub(crate) fn sync_due(&self, interval: Duration) -> bool {
        self.group_commit
            .due(self.seq_written.load(Ordering::Acquire), interval)
    }
}
