//! Group commit: many writers waiting for durability share one fsync, and none of them parks a
//! thread of its own while it waits.
//!
//! What it is: a per-store coordinator over `seq` numbers. A write hands back a
//! [`WriteTicket`] (its `seq` and the journal its record went to). [`WriteTicket::on_durable`]
//! registers a callback: it fires at once when an fsync already covered the record, and
//! otherwise joins the store's list of waiters and schedules the store on the shared syncer
//! threads (`syncer.rs`). A syncer round takes every waiter of the store, issues ONE
//! `sync_data` of the journal holding the newest of them (preceded by the fsync of any full
//! journal handed off but not synced yet, and by a directory fsync for a journal whose entry
//! is not durable yet), raises `synced` and fires all their callbacks. Writers that arrive
//! during that fsync wait for the next round, which the same syncer thread starts as soon as
//! it answered this one (no hand-off to another thread, no timer: a lone write is fsynced at
//! once). [`WriteTicket::wait`] is the blocking form, built on the callback.
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
//! - The store is in the syncers' queue at most once (`queued`), so one store never has two
//!   rounds in flight and the queue is bounded by the number of stores. The waiter list is
//!   bounded by the writes in flight, which the server bounds; the hand-off list by the
//!   journals filled between two maintenance passes.
//! - Callbacks run on a syncer thread (or on the registering thread when already durable),
//!   never under a lock of the store; they must be quick and must not block. A round takes no
//!   lock of the store but its own state's (never the writer's).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::datafile::DataFile;
use crate::error::StorageError;
use crate::manifest::FileSet;
use crate::poison::Poison;
use crate::store::Store;

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
    /// The store is in the syncers' queue or a round is running for it.
    queued: bool,
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
            state: Mutex::new(SyncState {
                synced,
                waiters: Vec::new(),
                queued: false,
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
        let schedule = !state.queued;
        state.queued = true;
        drop(state);
        if schedule {
            crate::syncer::schedule(self);
        }
    }

    /// One syncer round: covers every current waiter with one fsync and answers them all. Runs
    /// on a syncer thread, for one store at a time (`queued`). Sets `again` (before the first
    /// callback runs, so a panicking callback cannot lose it) when writers joined during the
    /// fsync: the store then stays `queued`, and the caller owes it the next round (it runs it
    /// at once, on the same thread, unless other stores wait: `syncer.rs`).
    pub(crate) fn round(self: &Arc<Self>, again: &mut bool) {
        let waiters = std::mem::take(&mut self.state.lock().waiters);
        let outcome = self.cover(&waiters);
        let mut state = self.state.lock();
        let mut answered = waiters;
        if outcome.is_err() {
            // Writers that joined during the failed fsync cannot be acknowledged either.
            answered.append(&mut state.waiters);
        }
        *again = !state.waiters.is_empty();
        state.queued = *again;
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
        // fsync's success says nothing about earlier writes.
        self.poison.check()?;
        let mut state = self.state.lock();
        state.synced = state.synced.max(newest.seq);
        state.last_sync = Instant::now();
        Ok(())
    }

    /// True when records past `synced` exist up to `written`, no round is pending, and the last
    /// fsync is `interval` old.
    fn due(&self, written: u64, interval: Duration) -> bool {
        let state = self.state.lock();
        written > state.synced && !state.queued && state.last_sync.elapsed() >= interval
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
