//! [`CrashPlan`]: a `FileIo` over `SimFileIo` that takes the power-cut image just before its
//! N-th mutating call (create, write, fsync, `set_len`, rename, remove, directory fsync), while
//! the workload goes on, so a crash can fall anywhere inside a call: between the parts of a
//! transaction's commit, between a write and its fsync, inside a seal.
//!
//! The workload records what it saw acknowledged (`ack`); the record is taken together with the
//! image, so it lists only acknowledgements that happened before the crash.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use quince_storage::io::{FileHandle, FileIo, SimFileIo};

/// Where the crash falls, and what it caught.
pub struct CrashPlan {
    sim: SimFileIo,
    /// Calls are counted only once armed (after the stores were created).
    armed: AtomicBool,
    calls: AtomicU64,
    at: u64,
    seed: u64,
    keep_unsynced: bool,
    /// Per slot (a store, say): how much the workload saw acknowledged so far.
    acked: Mutex<Vec<usize>>,
    /// The image at the crash and the acknowledgements before it.
    caught: Mutex<Option<(SimFileIo, Vec<usize>)>>,
}

impl CrashPlan {
    /// A plan crashing `sim` before its `at`-th mutating call once armed, keeping a
    /// `seed`-chosen prefix of each file's unsynced bytes when `keep_unsynced`.
    pub fn new(
        sim: &SimFileIo,
        at: u64,
        seed: u64,
        keep_unsynced: bool,
        slots: usize,
    ) -> Arc<CrashPlan> {
        Arc::new(CrashPlan {
            sim: sim.clone(),
            armed: AtomicBool::new(false),
            calls: AtomicU64::new(0),
            at,
            seed,
            keep_unsynced,
            acked: Mutex::new(vec![0; slots]),
            caught: Mutex::new(None),
        })
    }

    /// The file system the stores see.
    pub fn io(self: &Arc<Self>) -> Arc<dyn FileIo> {
        Arc::new(Crashing(self.clone()))
    }

    /// The simulation underneath (to inject faults).
    pub fn sim(&self) -> &SimFileIo {
        &self.sim
    }

    /// Starts counting calls.
    pub fn arm(&self) {
        self.armed.store(true, Ordering::SeqCst);
    }

    /// Records that `slot` had its first `upto` items acknowledged.
    pub fn ack(&self, slot: usize, upto: usize) {
        let mut acked = self.acked.lock();
        acked[slot] = acked[slot].max(upto);
    }

    /// Mutating calls counted so far.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }

    /// True once the crash point was reached.
    pub fn caught(&self) -> bool {
        self.caught.lock().is_some()
    }

    /// The image and the acknowledgements before it; the crash happens now if it did not yet.
    pub fn take(&self) -> (SimFileIo, Vec<usize>) {
        let mut caught = self.caught.lock();
        if caught.is_none() {
            let acked = self.acked.lock().clone();
            *caught = Some((self.sim.crash(self.seed, self.keep_unsynced), acked));
        }
        caught.take().expect("set above")
    }

    fn step(&self) {
        if !self.armed.load(Ordering::SeqCst) {
            return;
        }
        if self.calls.fetch_add(1, Ordering::SeqCst) == self.at {
            let acked = self.acked.lock().clone();
            let image = self.sim.crash(self.seed, self.keep_unsynced);
            *self.caught.lock() = Some((image, acked));
        }
    }
}

struct Crashing(Arc<CrashPlan>);

struct CrashingHandle {
    inner: Box<dyn FileHandle>,
    plan: Arc<CrashPlan>,
}

impl FileHandle for CrashingHandle {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.plan.step();
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.plan.step();
        self.inner.sync_data()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.plan.step();
        self.inner.set_len(len)
    }
}

impl Crashing {
    fn wrap(&self, inner: Box<dyn FileHandle>) -> Box<dyn FileHandle> {
        Box::new(CrashingHandle {
            inner,
            plan: self.0.clone(),
        })
    }
}

impl FileIo for Crashing {
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        self.0.sim.open(path).map(|h| self.wrap(h))
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        self.0.step();
        self.0.sim.create_new(path).map(|h| self.wrap(h))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.0.step();
        self.0.sim.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.0.step();
        self.0.sim.remove_file(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.0.sim.create_dir_all(path)
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.0.sim.remove_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.0.sim.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.0.sim.exists(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.0.step();
        self.0.sim.sync_dir(path)
    }
}
