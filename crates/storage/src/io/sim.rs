//! [`SimFileIo`]: an in-memory file system with a crash model and fault injection, for tests.
//!
//! What it is: every file has a *live* image (what reads see) and a *durable* image (what the
//! last successful `sync_data` covered). Directory entries are live at once and durable only
//! after `sync_dir` on their parent. [`SimFileIo::crash`] returns the file system a reboot would
//! find: durable entries, durable bytes, and optionally a random prefix of each file's unsynced
//! appended bytes (that is how torn tails arise). Faults: a failing `sync_data`, a disk that fills
//! up after N more bytes (ENOSPC), a torn write (only a prefix lands, then an error), and a
//! latency for `sync_data` so concurrent callers overlap as they would on a real disk.
//!
//! What it is not: a model of directories' own durability (directories created with
//! `create_dir_all`, removed with `remove_dir_all` or renamed are so durably at once) or of page
//! reordering inside a file (unsynced bytes survive only as a prefix).
//!
//! Invariants: a file's durable image only changes in `sync_data` (or `set_len`-free crash
//! rebuilding); the durable directory only changes in `sync_dir`; `crash` never invents bytes that
//! were not written.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::{FileHandle, FileIo};

/// Counters of the calls a [`SimFileIo`] served, for tests that check what the engine did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SimStats {
    /// `sync_data` calls that succeeded.
    pub syncs: u64,
    /// `sync_data` calls that failed by injection.
    pub failed_syncs: u64,
    /// `sync_dir` calls.
    pub dir_syncs: u64,
    /// `read_exact_at` calls.
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// `write_all_at` calls.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
}

/// One simulated file (an inode): its live and durable images and its read count.
#[derive(Default)]
struct SimFile {
    live: Vec<u8>,
    durable: Vec<u8>,
    reads: u64,
}

/// The injected faults still armed.
#[derive(Default)]
struct Faults {
    /// Successful syncs left before one fails (`Some(0)`: the next one fails).
    sync_fails_after: Option<u64>,
    /// Bytes that can still be written before the disk is full.
    space_left: Option<u64>,
    /// The next write lands only this many bytes, then fails.
    tear_next_write: Option<usize>,
    /// How long each `sync_data` takes.
    sync_delay: Option<Duration>,
}

#[derive(Default)]
struct SimState {
    files: HashMap<u64, SimFile>,
    inode_next: u64,
    entries: BTreeMap<PathBuf, u64>,
    entries_durable: BTreeMap<PathBuf, u64>,
    dirs: BTreeSet<PathBuf>,
    faults: Faults,
    stats: SimStats,
}

impl SimState {
    fn parent_exists(&self, path: &Path) -> bool {
        match path.parent() {
            None => true,
            Some(p) if p.as_os_str().is_empty() || p == Path::new("/") => true,
            Some(p) => self.dirs.contains(p),
        }
    }

    fn inode_of(&self, path: &Path) -> io::Result<u64> {
        self.entries
            .get(path)
            .copied()
            .ok_or_else(|| not_found(path))
    }
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

/// An in-memory, crashable, fault-injecting file system. Clones share the same state.
#[derive(Clone, Default)]
pub struct SimFileIo {
    state: Arc<Mutex<SimState>>,
}

impl SimFileIo {
    /// An empty file system.
    pub fn new() -> SimFileIo {
        SimFileIo::default()
    }

    /// The file system a reboot after a crash now would find, as a new, independent instance.
    ///
    /// With `keep_unsynced`, each file keeps a prefix, chosen by `seed`, of the bytes appended
    /// after its last sync (a torn tail); without it, only synced bytes survive. Faults and
    /// counters are not carried over. Handles of `self` stay usable but never reach the result.
    pub fn crash(&self, seed: u64, keep_unsynced: bool) -> SimFileIo {
        let state = self.state.lock();
        let mut rng = SplitMix64(seed);
        let mut next = SimState {
            inode_next: state.inode_next,
            dirs: state.dirs.clone(),
            ..SimState::default()
        };
        for (path, inode) in &state.entries_durable {
            let file = &state.files[inode];
            let mut bytes = file.durable.clone();
            let appended = file.live.len() > bytes.len() && file.live.starts_with(&bytes);
            if keep_unsynced && appended {
                let extra = file.live.len() - bytes.len();
                let keep = (rng.next() % (extra as u64 + 1)) as usize;
                bytes.extend_from_slice(&file.live[file.durable.len()..file.durable.len() + keep]);
            }
            let survivor = next.files.entry(*inode).or_default();
            survivor.live = bytes.clone();
            survivor.durable = bytes;
            next.entries.insert(path.clone(), *inode);
            next.entries_durable.insert(path.clone(), *inode);
        }
        SimFileIo {
            state: Arc::new(Mutex::new(next)),
        }
    }

    /// Makes the sync after `successes` more successful syncs fail (0: the next one fails).
    pub fn fail_sync_after(&self, successes: u64) {
        self.state.lock().faults.sync_fails_after = Some(successes);
    }

    /// Lets only `bytes` more bytes be written; the write that crosses the limit lands partly
    /// and fails with `StorageFull` (ENOSPC). `None` lifts the limit.
    pub fn set_space_left(&self, bytes: Option<u64>) {
        self.state.lock().faults.space_left = bytes;
    }

    /// Tears the next write: only its first `keep` bytes land, then it fails.
    pub fn tear_next_write(&self, keep: usize) {
        self.state.lock().faults.tear_next_write = Some(keep);
    }

    /// Makes every `sync_data` take this long (outside the file system's lock, so concurrent
    /// callers overlap the way they would on a real disk).
    pub fn set_sync_delay(&self, delay: Option<Duration>) {
        self.state.lock().faults.sync_delay = delay;
    }

    /// Disarms every injected fault (the sync delay included).
    pub fn clear_faults(&self) {
        self.state.lock().faults = Faults::default();
    }

    /// Counters of the calls served so far.
    pub fn stats(&self) -> SimStats {
        self.state.lock().stats.clone()
    }

    /// How many reads the file now at `path` has served (0 if there is none).
    pub fn reads_of(&self, path: &Path) -> u64 {
        let state = self.state.lock();
        state
            .entries
            .get(path)
            .map_or(0, |inode| state.files[inode].reads)
    }

    /// The live bytes of the file at `path`.
    pub fn read_file(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.state.lock();
        state
            .entries
            .get(path)
            .map(|inode| state.files[inode].live.clone())
    }

    /// Flips every bit of the byte at `offset` in both images, as bit rot on the medium would.
    pub fn flip_byte(&self, path: &Path, offset: u64) {
        let mut state = self.state.lock();
        let inode = state.entries[path];
        let file = state
            .files
            .get_mut(&inode)
            .expect("an entry names a live inode");
        let at = usize::try_from(offset).expect("offset fits in memory");
        file.live[at] ^= 0xff;
        if at < file.durable.len() {
            file.durable[at] ^= 0xff;
        }
    }

    /// Appends `bytes` to both images of the file at `path`, as if they had reached the medium
    /// (garbage after a crash, for torn-tail tests).
    pub fn append_durable(&self, path: &Path, bytes: &[u8]) {
        let mut state = self.state.lock();
        let inode = state.entries[path];
        let file = state
            .files
            .get_mut(&inode)
            .expect("an entry names a live inode");
        file.live.extend_from_slice(bytes);
        file.durable = file.live.clone();
    }

    /// The names of every file, live namespace, sorted (for test diagnostics).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.state.lock().entries.keys().cloned().collect()
    }
}

/// A small deterministic generator, so the crash model needs no dependency.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// An open simulated file: the shared state and the inode, which outlives unlinking.
struct SimHandle {
    state: Arc<Mutex<SimState>>,
    inode: u64,
}

impl FileHandle for SimHandle {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        state.stats.reads += 1;
        state.stats.bytes_read += buf.len() as u64;
        let file = state
            .files
            .get_mut(&self.inode)
            .expect("handles keep inodes");
        file.reads += 1;
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(buf.len());
        if end > file.live.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "read past the end",
            ));
        }
        buf.copy_from_slice(&file.live[start..end]);
        Ok(())
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        state.stats.writes += 1;
        let mut land = buf.len();
        let mut failure = None;
        if let Some(keep) = state.faults.tear_next_write.take() {
            land = land.min(keep);
            failure = Some(io::Error::other("injected torn write"));
        }
        if let Some(left) = state.faults.space_left {
            if land as u64 > left {
                land = left as usize;
                failure = Some(io::Error::new(
                    io::ErrorKind::StorageFull,
                    "injected ENOSPC",
                ));
            }
            state.faults.space_left = Some(left - land as u64);
        }
        state.stats.bytes_written += land as u64;
        let file = state
            .files
            .get_mut(&self.inode)
            .expect("handles keep inodes");
        let start = usize::try_from(offset).expect("offset fits in memory");
        let end = start + land;
        if file.live.len() < end {
            file.live.resize(end, 0);
        }
        file.live[start..end].copy_from_slice(&buf[..land]);
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn sync_data(&self) -> io::Result<()> {
        let delay = {
            let mut state = self.state.lock();
            match state.faults.sync_fails_after {
                Some(0) => {
                    state.faults.sync_fails_after = None;
                    state.stats.failed_syncs += 1;
                    return Err(io::Error::other("injected fsync failure"));
                }
                Some(n) => state.faults.sync_fails_after = Some(n - 1),
                None => {}
            }
            state.faults.sync_delay
        };
        if let Some(delay) = delay {
            // Simulated device latency, not synchronisation: the lock is released meanwhile.
            std::thread::sleep(delay);
        }
        let mut state = self.state.lock();
        state.stats.syncs += 1;
        let file = state
            .files
            .get_mut(&self.inode)
            .expect("handles keep inodes");
        file.durable = file.live.clone();
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.state.lock().files[&self.inode].live.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock();
        let file = state
            .files
            .get_mut(&self.inode)
            .expect("handles keep inodes");
        file.live
            .resize(usize::try_from(len).expect("length fits in memory"), 0);
        Ok(())
    }
}

impl FileIo for SimFileIo {
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let inode = self.state.lock().inode_of(path)?;
        Ok(Box::new(SimHandle {
            state: self.state.clone(),
            inode,
        }))
    }

    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        let mut state = self.state.lock();
        if state.entries.contains_key(path) || state.dirs.contains(path) {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, "file exists"));
        }
        if !state.parent_exists(path) {
            return Err(not_found(path));
        }
        state.inode_next += 1;
        let inode = state.inode_next;
        state.files.insert(inode, SimFile::default());
        state.entries.insert(path.to_path_buf(), inode);
        Ok(Box::new(SimHandle {
            state: self.state.clone(),
            inode,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if state.dirs.contains(from) {
            if !state.parent_exists(to) {
                return Err(not_found(to));
            }
            if state.dirs.contains(to) || state.entries.contains_key(to) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "target exists",
                ));
            }
            // Like creating and removing directories, renaming one is durable at once.
            let moved = |p: &Path| to.join(p.strip_prefix(from).expect("under from"));
            state.dirs = std::mem::take(&mut state.dirs)
                .into_iter()
                .map(|d| if d.starts_with(from) { moved(&d) } else { d })
                .collect();
            let state = &mut *state;
            for map in [&mut state.entries, &mut state.entries_durable] {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(p, i)| {
                        if p.starts_with(from) {
                            (moved(&p), i)
                        } else {
                            (p, i)
                        }
                    })
                    .collect();
            }
            return Ok(());
        }
        let inode = state.inode_of(from)?;
        if !state.parent_exists(to) {
            return Err(not_found(to));
        }
        state.entries.remove(from);
        state.entries.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        state
            .entries
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        for ancestor in path.ancestors() {
            if !ancestor.as_os_str().is_empty() && ancestor != Path::new("/") {
                state.dirs.insert(ancestor.to_path_buf());
            }
        }
        Ok(())
    }

    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if !state.dirs.contains(path) {
            return Err(not_found(path));
        }
        state.dirs.retain(|d| !d.starts_with(path));
        state.entries.retain(|p, _| !p.starts_with(path));
        state.entries_durable.retain(|p, _| !p.starts_with(path));
        Ok(())
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        let state = self.state.lock();
        if !state.dirs.contains(path) {
            return Err(not_found(path));
        }
        let files = state.entries.keys().filter(|p| p.parent() == Some(path));
        let dirs = state.dirs.iter().filter(|p| p.parent() == Some(path));
        Ok(files
            .chain(dirs)
            .filter_map(|p| p.file_name().map(PathBuf::from))
            .collect())
    }

    fn exists(&self, path: &Path) -> bool {
        let state = self.state.lock();
        state.entries.contains_key(path) || state.dirs.contains(path)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if !state.dirs.contains(path) {
            return Err(not_found(path));
        }
        state.stats.dir_syncs += 1;
        state
            .entries_durable
            .retain(|p, _| p.parent() != Some(path));
        let live: Vec<(PathBuf, u64)> = state
            .entries
            .iter()
            .filter(|(p, _)| p.parent() == Some(path))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        state.entries_durable.extend(live);
        Ok(())
    }
}
