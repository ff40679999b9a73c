//! [`CachedFileIo`]: a bound on the open files of the whole engine, whatever the number of
//! collections and datafiles (like RocksDB's `max_open_files`).
//!
//! What it is: a [`FileIo`] over another one whose handles are *virtual*: each remembers its
//! file's current path (renames and deletions made through this `FileIo` are tracked), and
//! holds a real descriptor only while it is among the `capacity` most recently used ones. A
//! handle whose descriptor was closed reopens its file on its next use.
//!
//! What it is not: a cache of data. Every call still reaches the file.
//!
//! Invariants:
//! - at most `capacity` descriptors are held by the cache; a call in progress holds its own
//!   reference, and a deleted file's descriptor is kept while its handle lives (it could not be
//!   reopened), so the count can pass `capacity` only by those two;
//! - a descriptor with writes not yet covered by an fsync is fsynced before it is closed, and a
//!   failure of that fsync is reported by the handle's next `sync_data` (and every one after):
//!   closing a descriptor never hides a lost write (after a failed writeback, a descriptor
//!   opened later might not be told);
//! - `sync_data` skips the fsync only when every write that *returned* before it was covered
//!   by an earlier fsync; a write still on its way counts as not covered; a handle from `open`
//!   fsyncs on its first `sync_data` (earlier processes' writes may not be durable);
//! - the fsyncs of one handle run one at a time, each recording its outcome before the next
//!   starts, and a failure is final: every later `sync_data` of the handle fails;
//! - `open` and `create_new` fail exactly as the inner calls do (they open at once).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{FileHandle, FileIo};

/// A descriptor shared by the cache and the calls using it.
type Descriptor = Arc<dyn FileHandle>;

/// How often a reopen is retried when a concurrent rename moved the file between reading its
/// path and opening it.
const REOPEN_ATTEMPTS_MAX: usize = 8;

/// What one virtual handle is.
struct Entry {
    /// The file's current path.
    path: PathBuf,
    /// The file was deleted through this `FileIo`: its descriptor cannot be reopened.
    deleted: bool,
    /// The open descriptor, if the handle holds one now.
    descriptor: Option<Descriptor>,
    /// When it was last used (the cache's clock), for choosing what to close.
    used: u64,
    /// Write and sync bookkeeping, shared with the handle.
    sync: Arc<SyncState>,
}

/// Whether a handle's writes are covered by an fsync, and the error of one that was not.
#[derive(Default)]
struct SyncState {
    /// Counts writes (and `set_len`s) that reached the file: a write is counted after its
    /// call returned, so an fsync that starts after reading the count covers every write
    /// counted in it.
    written: AtomicU64,
    /// The value of `written` the last successful fsync covered.
    synced: AtomicU64,
    /// An fsync of the handle failed (while closing its descriptor, or asked for): the
    /// handle's data is in doubt, and every later `sync_data` fails.
    failed: Mutex<Option<(io::ErrorKind, String)>>,
    /// Held around "fsync, then record what it said", so that of two fsyncs of one file (a
    /// seal's and a syncer round's, or an eviction's) the second sees the first's failure:
    /// the kernel reports a writeback error to one fsync only.
    fsync: Mutex<()>,
    /// The handle came from `open`: what earlier processes wrote may not be durable yet, so
    /// the first `sync_data` fsyncs even though this handle wrote nothing.
    unverified: std::sync::atomic::AtomicBool,
}

impl SyncState {
    fn dirty(&self) -> bool {
        self.written.load(Ordering::Acquire) > self.synced.load(Ordering::Acquire)
    }

    fn failure(&self) -> Option<io::Error> {
        self.failed
            .lock()
            .as_ref()
            .map(|(kind, text)| io::Error::new(*kind, text.clone()))
    }

    /// Fsyncs `descriptor` (the caller holds `fsync`) and records the outcome: the writes
    /// counted before it as covered, or the failure for good.
    fn fsync_locked(&self, descriptor: &Descriptor) -> io::Result<()> {
        let written = self.written.load(Ordering::Acquire);
        match descriptor.sync_data() {
            Ok(()) => {
                self.synced.fetch_max(written, Ordering::AcqRel);
                self.unverified.store(false, Ordering::Release);
                Ok(())
            }
            Err(e) => {
                self.failed
                    .lock()
                    .get_or_insert_with(|| (e.kind(), e.to_string()));
                Err(e)
            }
        }
    }
}

#[derive(Default)]
struct State {
    entries: HashMap<u64, Entry>,
    /// The live (not deleted) handles by path, ordered so that a directory's subtree is one
    /// range: renames and deletions cost O(affected handles), not O(all handles).
    by_path: BTreeMap<PathBuf, Vec<u64>>,
    /// The handles holding a descriptor now (so choosing one to close costs O(capacity)).
    open: HashSet<u64>,
    next_id: u64,
    clock: u64,
}

struct Shared {
    inner: Arc<dyn FileIo>,
    capacity: usize,
    state: Mutex<State>,
}

/// A [`FileIo`] holding at most `capacity` descriptors at once.
#[derive(Clone)]
pub struct CachedFileIo {
    shared: Arc<Shared>,
}

impl CachedFileIo {
    /// Wraps `inner`, keeping at most `capacity` (at least 1) descriptors open.
    pub fn new(inner: Arc<dyn FileIo>, capacity: usize) -> CachedFileIo {
        CachedFileIo {
            shared: Arc::new(Shared {
                inner,
                capacity: capacity.max(1),
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// Descriptors held by the cache now.
    pub fn open_descriptors(&self) -> usize {
        self.shared.state.lock().open.len()
    }

    /// Registers a new handle holding `descriptor`.
    fn register(
        &self,
        path: &Path,
        descriptor: Box<dyn FileHandle>,
        unverified: bool,
    ) -> Box<dyn FileHandle> {
        let sync = Arc::new(SyncState {
            unverified: std::sync::atomic::AtomicBool::new(unverified),
            ..SyncState::default()
        });
        let id = {
            let mut state = self.shared.state.lock();
            state.next_id += 1;
            state.clock += 1;
            let (id, used) = (state.next_id, state.clock);
            state
                .by_path
                .entry(path.to_path_buf())
                .or_default()
                .push(id);
            state.entries.insert(
                id,
                Entry {
                    path: path.to_path_buf(),
                    deleted: false,
                    descriptor: Some(Arc::from(descriptor)),
                    used,
                    sync: sync.clone(),
                },
            );
            state.open.insert(id);
            id
        };
        self.shared.make_room();
        Box::new(CachedHandle {
            id,
            shared: self.shared.clone(),
            sync,
        })
    }

    /// Follows a rename (`to: Some`) or a deletion (`to: None`) of `path` and everything under
    /// it in the live handles (a rename also deletes what it replaces).
    fn retarget(&self, path: &Path, to: Option<&Path>) {
        let mut state = self.shared.state.lock();
        if let Some(to) = to {
            // A rename replaces its target: handles of the replaced file name a deleted file.
            Self::follow(&mut state, to, None);
        }
        Self::follow(&mut state, path, to);
    }

    fn follow(state: &mut State, path: &Path, to: Option<&Path>) {
        let affected: Vec<PathBuf> = state
            .by_path
            .range(path.to_path_buf()..)
            .take_while(|(p, _)| p.starts_with(path))
            .map(|(p, _)| p.clone())
            .collect();
        for old in affected {
            let ids = state.by_path.remove(&old).expect("listed above");
            let new = to.map(|to| {
                let rest = old.strip_prefix(path).expect("in the subtree");
                if rest.as_os_str().is_empty() {
                    to.to_path_buf()
                } else {
                    to.join(rest)
                }
            });
            for id in &ids {
                let entry = state.entries.get_mut(id).expect("indexed handles exist");
                match &new {
                    Some(new) => entry.path = new.clone(),
                    None => entry.deleted = true,
                }
            }
            if let Some(new) = new {
                state.by_path.entry(new).or_default().extend(ids);
            }
        }
    }
}

impl Shared {
    /// Closes the least recently used descriptors until at most `capacity` are held.
    fn make_room(&self) {
        loop {
            let victim = {
                let mut state = self.state.lock();
                if state.open.len() <= self.capacity {
                    return;
                }
                let entries = &state.entries;
                let Some(id) = state
                    .open
                    .iter()
                    .filter(|id| !entries[id].deleted)
                    .min_by_key(|id| entries[id].used)
                    .copied()
                else {
                    // Only descriptors of deleted files are left; they stay until their
                    // handles go.
                    return;
                };
                state.open.remove(&id);
                let entry = state.entries.get_mut(&id).expect("open ids have entries");
                let descriptor = entry.descriptor.take().expect("open ids hold one");
                (descriptor, entry.sync.clone())
            };
            let (descriptor, sync) = victim;
            close(&descriptor, &sync);
        }
    }

    /// The descriptor of handle `id`, opening its file again if it was closed.
    fn descriptor(&self, id: u64) -> io::Result<Descriptor> {
        for _ in 0..REOPEN_ATTEMPTS_MAX {
            let path = {
                let mut state = self.state.lock();
                state.clock += 1;
                let clock = state.clock;
                let entry = state
                    .entries
                    .get_mut(&id)
                    .expect("a live handle has an entry");
                entry.used = clock;
                if let Some(descriptor) = &entry.descriptor {
                    return Ok(descriptor.clone());
                }
                if entry.deleted {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("{} was deleted", entry.path.display()),
                    ));
                }
                entry.path.clone()
            };
            let opened: Descriptor = match self.inner.open(&path) {
                Ok(handle) => Arc::from(handle),
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            let descriptor = {
                let mut state = self.state.lock();
                let entry = state
                    .entries
                    .get_mut(&id)
                    .expect("a live handle has an entry");
                if entry.path != path {
                    // Renamed while we opened it: the descriptor names the same file, but keep
                    // to one rule and open by the current path.
                    continue;
                }
                match &entry.descriptor {
                    Some(other) => other.clone(),
                    None => {
                        entry.descriptor = Some(opened.clone());
                        state.open.insert(id);
                        opened
                    }
                }
            };
            self.make_room();
            return Ok(descriptor);
        }
        Err(io::Error::new(
            io::ErrorKind::NotFound,
            "the file kept moving while it was reopened",
        ))
    }
}

/// Closes `descriptor`, fsyncing it first when it holds writes no fsync covered.
fn close(descriptor: &Descriptor, sync: &SyncState) {
    let _fsync = sync.fsync.lock();
    if !sync.dirty() {
        return;
    }
    if let Err(e) = sync.fsync_locked(descriptor) {
        tracing::error!(event = "file_cache.sync_on_close_failed", error = %e);
    }
}

/// A virtual handle of [`CachedFileIo`].
struct CachedHandle {
    id: u64,
    shared: Arc<Shared>,
    sync: Arc<SyncState>,
}

impl FileHandle for CachedHandle {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.shared.descriptor(self.id)?.read_exact_at(buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let descriptor = self.shared.descriptor(self.id)?;
        let result = descriptor.write_all_at(buf, offset);
        // Counted once it reached the file (failed or not: part of it may have), never
        // before: an fsync that read the count while the write was on its way would mark it
        // covered without having seen it.
        self.sync.written.fetch_add(1, Ordering::AcqRel);
        result
    }

    fn sync_data(&self) -> io::Result<()> {
        if let Some(error) = self.sync.failure() {
            return Err(error);
        }
        // The descriptor first, then the lock: getting it may close another handle's
        // descriptor, which takes that handle's lock.
        let descriptor = self.shared.descriptor(self.id)?;
        let _fsync = self.sync.fsync.lock();
        // An fsync that failed while this one waited for the lock still counts.
        if let Some(error) = self.sync.failure() {
            return Err(error);
        }
        if !self.sync.dirty() && !self.sync.unverified.load(Ordering::Acquire) {
            // Everything written was covered (maybe by the fsync that closed the descriptor).
            return Ok(());
        }
        self.sync.fsync_locked(&descriptor)
    }

    fn len(&self) -> io::Result<u64> {
        self.shared.descriptor(self.id)?.len()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let descriptor = self.shared.descriptor(self.id)?;
        let result = descriptor.set_len(len);
        self.sync.written.fetch_add(1, Ordering::AcqRel);
        result
    }
}

impl Drop for CachedHandle {
    fn drop(&mut self) {
        let mut state = self.shared.state.lock();
        state.open.remove(&self.id);
        let Some(entry) = state.entries.remove(&self.id) else {
            return;
        };
        if let Some(ids) = state.by_path.get_mut(&entry.path) {
            ids.retain(|id| *id != self.id);
            if ids.is_empty() {
                state.by_path.remove(&entry.path);
            }
        }
    }
}

impl FileIo for CachedFileIo {
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let descriptor = self.shared.inner.open(path)?;
        Ok(self.register(path, descriptor, true))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let descriptor = self.shared.inner.create_new(path)?;
        Ok(self.register(path, descriptor, false))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.shared.inner.rename(from, to)?;
        self.retarget(from, Some(to));
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.shared.inner.remove_file(path)?;
        self.retarget(path, None);
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.shared.inner.create_dir_all(path)
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.shared.inner.remove_dir_all(path)?;
        self.retarget(path, None);
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.shared.inner.list_dir(path)
    }

    fn exists(&self, path: &Path) -> bool {
        self.shared.inner.exists(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.shared.inner.sync_dir(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::SimFileIo;

    fn cache(capacity: usize) -> (SimFileIo, CachedFileIo) {
        let sim = SimFileIo::new();
        sim.create_dir_all(Path::new("/d")).unwrap();
        (sim.clone(), CachedFileIo::new(Arc::new(sim), capacity))
    }

    #[test]
    fn many_handles_share_few_descriptors() {
        let (_, io) = cache(3);
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let h = io.create_new(&PathBuf::from(format!("/d/f{i}"))).unwrap();
                h.write_all_at(format!("file {i}").as_bytes(), 0).unwrap();
                h
            })
            .collect();
        assert!(io.open_descriptors() <= 3);
        for (i, h) in handles.iter().enumerate() {
            let expected = format!("file {i}");
            let mut buf = vec![0u8; expected.len()];
            h.read_exact_at(&mut buf, 0).unwrap();
            assert_eq!(buf, expected.as_bytes());
            assert!(io.open_descriptors() <= 3);
        }
        drop(handles);
        assert_eq!(io.open_descriptors(), 0);
    }

    #[test]
    fn a_closed_descriptor_was_synced_first_and_renames_are_followed() {
        let (sim, io) = cache(1);
        let a = io.create_new(Path::new("/d/a")).unwrap();
        a.write_all_at(b"unsynced", 0).unwrap();
        // Opening another file closes `a`'s descriptor, which must sync it first.
        let b = io.create_new(Path::new("/d/b")).unwrap();
        sim.sync_dir(Path::new("/d")).unwrap();
        let crashed = sim.crash(0, false);
        assert_eq!(crashed.read_file(Path::new("/d/a")).unwrap(), b"unsynced");
        io.rename(Path::new("/d/a"), Path::new("/d/a2")).unwrap();
        let mut buf = [0u8; 8];
        a.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"unsynced");
        drop(b);
    }

    #[test]
    fn a_failed_sync_on_close_is_reported_by_the_next_sync() {
        let (sim, io) = cache(1);
        let a = io.create_new(Path::new("/d/a")).unwrap();
        a.write_all_at(b"x", 0).unwrap();
        sim.fail_sync_after(0);
        let _b = io.create_new(Path::new("/d/b")).unwrap();
        assert!(
            a.sync_data().is_err(),
            "the lost write must not be acknowledged"
        );
        assert!(a.sync_data().is_err(), "and never later either");
    }

    #[test]
    fn a_file_replaced_by_a_rename_is_not_reopened_under_its_old_name() {
        let (_, io) = cache(1);
        let old = io.create_new(Path::new("/d/m")).unwrap();
        old.write_all_at(b"old", 0).unwrap();
        old.sync_data().unwrap();
        let new = io.create_new(Path::new("/d/m.tmp")).unwrap();
        new.write_all_at(b"new", 0).unwrap();
        new.sync_data().unwrap();
        io.rename(Path::new("/d/m.tmp"), Path::new("/d/m")).unwrap();
        // `old`'s descriptor was closed to open `new`; its file is gone, and reopening
        // "/d/m" would read the wrong file.
        let mut buf = [0u8; 3];
        assert!(old.read_exact_at(&mut buf, 0).is_err());
        new.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"new");
    }

    /// A `FileIo` over `SimFileIo` whose next write waits at a gate (entered, then released)
    /// before it reaches the file, and which counts the fsyncs that reach the file.
    #[derive(Clone, Default)]
    struct GatedIo {
        sim: SimFileIo,
        gate: Arc<Gate>,
    }

    #[derive(Default)]
    struct Gate {
        /// 0: open; 1: the next write waits; 2: a write is waiting; 3: released.
        state: std::sync::Mutex<u8>,
        changed: std::sync::Condvar,
        syncs: AtomicU64,
    }

    impl Gate {
        fn set(&self, state: u8) {
            *self.state.lock().unwrap() = state;
            self.changed.notify_all();
        }

        fn wait_for(&self, state: u8) {
            let mut current = self.state.lock().unwrap();
            while *current != state {
                current = self.changed.wait(current).unwrap();
            }
        }

        fn pass(&self) {
            let mut current = self.state.lock().unwrap();
            if *current == 1 {
                *current = 2;
                self.changed.notify_all();
                while *current != 3 {
                    current = self.changed.wait(current).unwrap();
                }
            }
        }
    }

    struct GatedHandle {
        inner: Box<dyn FileHandle>,
        gate: Arc<Gate>,
    }

    impl FileHandle for GatedHandle {
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
            self.inner.read_exact_at(buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
            self.gate.pass();
            self.inner.write_all_at(buf, offset)
        }
        fn sync_data(&self) -> io::Result<()> {
            self.gate.syncs.fetch_add(1, Ordering::SeqCst);
            self.inner.sync_data()
        }
        fn len(&self) -> io::Result<u64> {
            self.inner.len()
        }
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.inner.set_len(len)
        }
    }

    impl FileIo for GatedIo {
        fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
            let inner = self.sim.open(path)?;
            Ok(Box::new(GatedHandle {
                inner,
                gate: self.gate.clone(),
            }))
        }
        fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
            let inner = self.sim.create_new(path)?;
            Ok(Box::new(GatedHandle {
                inner,
                gate: self.gate.clone(),
            }))
        }
        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            self.sim.rename(from, to)
        }
        fn remove_file(&self, path: &Path) -> io::Result<()> {
            self.sim.remove_file(path)
        }
        fn create_dir_all(&self, path: &Path) -> io::Result<()> {
            self.sim.create_dir_all(path)
        }
        fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
            self.sim.remove_dir_all(path)
        }
        fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
            self.sim.list_dir(path)
        }
        fn exists(&self, path: &Path) -> bool {
            self.sim.exists(path)
        }
        fn sync_dir(&self, path: &Path) -> io::Result<()> {
            self.sim.sync_dir(path)
        }
    }

    /// The power-cut test's finding: a write counted before it reached the file let an fsync
    /// that ran meanwhile mark it covered, so the fsync its own waiter asked for was skipped
    /// and the write was acknowledged while only in the page cache.
    #[test]
    fn a_write_in_progress_is_not_covered_by_a_concurrent_fsync() {
        let gated = GatedIo::default();
        gated.sim.create_dir_all(Path::new("/d")).unwrap();
        let io = CachedFileIo::new(Arc::new(gated.clone()), 4);
        let handle: Arc<dyn FileHandle> = Arc::from(io.create_new(Path::new("/d/j")).unwrap());
        gated.gate.set(1);
        let writer = {
            let handle = handle.clone();
            std::thread::spawn(move || handle.write_all_at(b"acked", 0).unwrap())
        };
        gated.gate.wait_for(2);
        // A round for an earlier waiter fsyncs while the write is on its way.
        handle.sync_data().unwrap();
        gated.gate.set(3);
        writer.join().unwrap();
        // The write's own waiter: its fsync must reach the file.
        let before = gated.gate.syncs.load(Ordering::SeqCst);
        handle.sync_data().unwrap();
        assert_eq!(
            gated.gate.syncs.load(Ordering::SeqCst),
            before + 1,
            "the fsync after the write was skipped"
        );
        gated.sim.sync_dir(Path::new("/d")).unwrap();
        let crashed = gated.sim.crash(0, false);
        assert_eq!(crashed.read_file(Path::new("/d/j")).unwrap(), b"acked");
    }

    /// The review's finding: a handle from `open` counted nothing as written, so recovery's
    /// fsync of a journal an earlier process wrote without syncing did nothing.
    #[test]
    fn an_opened_file_is_fsynced_by_its_first_sync() {
        let gated = GatedIo::default();
        gated.sim.create_dir_all(Path::new("/d")).unwrap();
        let earlier = gated.sim.create_new(Path::new("/d/j")).unwrap();
        earlier
            .write_all_at(b"unsynced by the process that died", 0)
            .unwrap();
        gated.sim.sync_dir(Path::new("/d")).unwrap();
        let io = CachedFileIo::new(Arc::new(gated.clone()), 4);
        let handle = io.open(Path::new("/d/j")).unwrap();
        handle.sync_data().unwrap();
        assert_eq!(gated.gate.syncs.load(Ordering::SeqCst), 1);
        handle.sync_data().unwrap();
        assert_eq!(
            gated.gate.syncs.load(Ordering::SeqCst),
            1,
            "nothing new to sync"
        );
        let crashed = gated.sim.crash(0, false);
        assert_eq!(
            crashed.read_file(Path::new("/d/j")).unwrap(),
            b"unsynced by the process that died"
        );
    }

    /// A failed fsync is final for the handle: a later fsync of the same file may succeed
    /// although the failed one's data is gone.
    #[test]
    fn a_failed_sync_is_reported_by_every_later_sync() {
        let (sim, io) = cache(4);
        let a = io.create_new(Path::new("/d/a")).unwrap();
        a.write_all_at(b"x", 0).unwrap();
        sim.fail_sync_after(0);
        assert!(a.sync_data().is_err());
        assert!(a.sync_data().is_err(), "a later sync must not pretend");
    }

    #[test]
    fn a_deleted_file_stays_readable_while_its_descriptor_is_open() {
        let (_, io) = cache(1);
        let a = io.create_new(Path::new("/d/a")).unwrap();
        a.write_all_at(b"kept", 0).unwrap();
        a.sync_data().unwrap();
        io.remove_file(Path::new("/d/a")).unwrap();
        let _b = io.create_new(Path::new("/d/b")).unwrap();
        let mut buf = [0u8; 4];
        a.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(&buf, b"kept");
    }
}
