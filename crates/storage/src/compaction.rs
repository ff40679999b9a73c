//! Compaction: rewriting sealed datafiles without their dead records, without blocking writers.
//!
//! What it is: `Store::compact`. Selection is O(files), from each file's counters:
//! - a file with no live document and no marker (tombstone or truncate) is dropped as is;
//! - a file qualifies for rewriting when its dead document bytes reach the policy's share of
//!   its size or its byte threshold; when no sealed file holds a live document (after a
//!   truncate, or after removing everything) every sealed file is rewritten.
//!
//! Rewriting copies the records still needed into `compaction-<fid>.db` with a fresh, higher
//! fid: live documents (those the index names), plus tombstones of keys not live now and
//! truncate markers, unless the set covers every sealed datafile, in which case markers are
//! dropped (nothing older than them remains outside the set; the journal only holds newer
//! records); the newest metadata record and the newest commit record, whatever else goes; never
//! a group marker (a sealed datafile holds only whole groups of committed transactions, so the
//! records need their marker no more). The output starts with a supersedes record listing every file it replaces. Then:
//! fsync the output, fsync the journal (so every record that made a dropped one dead is durable),
//! write the output's hint, rename it to `datafile-<fid>.db` and fsync the directory: from this
//! point the compaction is committed, and recovery finishes it if we crash. Then index entries
//! that still name an old location are re-pointed (compare and swap per key: a writer's newer
//! version wins), and the old files are unlinked. A full disk before the commit (writing the
//! output or its hint, or renaming it) gives the compaction up: the output is removed and the
//! store stays writable; any other failure to write poisons it. Readers holding an old file's
//! handle keep reading valid bytes; a reader that finds the file gone re-reads the index.
//!
//! What it is not: a writer. It never takes the writer lock; writers run during the copy.
//!
//! Invariants: a record is dropped only if it is dead and what made it dead is durable and
//! outlives the drop; outputs keep each record's `seq`, so which version wins never depends on
//! file order.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::datafile::{DataFile, FileCounts, FileName};
use crate::error::StorageError;
use crate::format::{self, FileHeader, RecordType};
use crate::hint::{HintBuilder, HintEntry};
use crate::index::Location;
use crate::store::{CompactionPolicy, CompactionReport, Store};

/// Output bytes buffered before one write.
const FLUSH_SIZE: usize = 4 << 20;

/// What compaction decided to do with the sealed datafiles.
struct Plan {
    /// Files deleted as they are (only dead documents, or nothing).
    drop: Vec<Arc<DataFile>>,
    /// Files rewritten into one output.
    rewrite: Vec<Arc<DataFile>>,
    /// True when the plan covers every sealed datafile, so markers may go.
    covers_all: bool,
}

fn qualifies(counts: &FileCounts, policy: &CompactionPolicy) -> bool {
    counts.dead_bytes > 0
        && (counts.dead_bytes >= policy.dead_bytes_min
            || counts.dead_bytes as f64 >= policy.dead_share_min * counts.len as f64)
}

fn plan(sealed: Vec<(Arc<DataFile>, FileCounts)>, policy: &CompactionPolicy) -> Plan {
    let total = sealed.len();
    let none_live = sealed.iter().all(|(_, c)| c.live_count == 0);
    let mut plan = Plan {
        drop: Vec::new(),
        rewrite: Vec::new(),
        covers_all: false,
    };
    for (file, counts) in sealed {
        if counts.live_count == 0 && counts.marker_bytes == 0 {
            plan.drop.push(file);
        } else if none_live || qualifies(&counts, policy) {
            plan.rewrite.push(file);
        }
    }
    plan.covers_all = plan.drop.len() + plan.rewrite.len() == total;
    plan
}

/// A record copied into the output whose index entry must be re-pointed.
struct Relocation {
    key: Box<[u8]>,
    from: Location,
    to: Location,
}

/// The output file being written.
struct Output {
    fid: u64,
    handle: Box<dyn crate::io::FileHandle>,
    pending: Vec<u8>,
    written: u64,
    hint: HintBuilder,
    relocations: Vec<Relocation>,
    tombstones: u64,
    marker_bytes: u64,
}

impl Output {
    fn len(&self) -> u64 {
        self.written + self.pending.len() as u64
    }
}

impl Store {
    /// Compacts every datafile that the policy selects, now, on the caller's thread; journals
    /// handed off and not yet sealed are sealed first, so an explicit compaction sees every
    /// full journal as the datafile it is.
    pub fn compact(&self) -> Result<CompactionReport, StorageError> {
        let mut upkeep = self.upkeep.lock();
        if !self.closed.load(Ordering::Acquire) {
            self.finish_seals()?;
        }
        self.compact_locked(&mut upkeep)
    }

    /// [`Store::compact`] with the upkeep lock held (`last_run` is its value).
    pub(crate) fn compact_locked(
        &self,
        last_run: &mut Instant,
    ) -> Result<CompactionReport, StorageError> {
        self.check_writable()?;
        let sealed: Vec<(Arc<DataFile>, FileCounts)> = self
            .files
            .read()
            .values()
            .filter(|f| f.is_sealed())
            .map(|f| (f.clone(), f.counts()))
            .collect();
        let plan = plan(sealed, &self.policy);
        *last_run = Instant::now();
        if plan.drop.is_empty() && plan.rewrite.is_empty() {
            return Ok(CompactionReport::default());
        }
        let before: u64 = plan
            .drop
            .iter()
            .chain(&plan.rewrite)
            .map(|f| f.len.load(Ordering::Acquire))
            .sum();
        let after = if plan.rewrite.is_empty() {
            // Nothing to copy: make what killed these records durable, then delete them.
            self.sync()?;
            self.unlink(&plan.drop)?;
            0
        } else {
            self.rewrite(&plan)?
        };
        self.counters.compactions.fetch_add(1, Ordering::Relaxed);
        let report = CompactionReport {
            files_compacted: (plan.drop.len() + plan.rewrite.len()) as u64,
            bytes_reclaimed: before.saturating_sub(after),
        };
        tracing::info!(
            event = "compaction.done",
            dir = %self.dir.display(),
            files = report.files_compacted,
            bytes_reclaimed = report.bytes_reclaimed,
        );
        Ok(report)
    }

    /// Copies the needed records of `plan.rewrite` into a new datafile, commits it, re-points
    /// the index and deletes every file of the plan. Returns the new file's length.
    fn rewrite(&self, plan: &Plan) -> Result<u64, StorageError> {
        let fid = self.fid_next.fetch_add(1, Ordering::Relaxed);
        let temp = FileName::Compaction(fid).path_in(&self.dir);
        let handle = self
            .io
            .create_new(&temp)
            .map_err(|e| self.fail_output(&temp, e))?;
        let replaced: Vec<u64> = plan
            .drop
            .iter()
            .chain(&plan.rewrite)
            .map(|f| f.fid)
            .collect();
        let mut pending = format::encode_file_header(FileHeader {
            fid,
            maximal_size: 0,
        });
        pending.extend_from_slice(&format::encode_supersedes(&replaced));
        let mut out = Output {
            fid,
            handle,
            pending,
            written: 0,
            hint: HintBuilder::new(),
            relocations: Vec::new(),
            tombstones: 0,
            marker_bytes: 0,
        };
        self.compactors.fetch_add(1, Ordering::Relaxed);
        let copied = plan
            .rewrite
            .iter()
            .try_for_each(|file| self.copy_needed(file, plan, &mut out));
        let committed = copied.and_then(|()| self.commit(&mut out, &temp));
        self.compactors.fetch_sub(1, Ordering::Relaxed);
        self.compactor_bytes.store(0, Ordering::Relaxed);
        let file = match committed {
            Ok(file) => file,
            Err(e) => {
                // The output is not committed; recovery would delete it too.
                let _ = self.io.remove_file(&temp);
                if matches!(e, StorageError::Full { .. }) && self.poison.reason().is_none() {
                    // No room for the output: nothing the store relies on changed, so the
                    // compaction is given up (and tried again by a later pass), the store
                    // stays writable, and the output's hint, if written, goes with it.
                    let hint = FileName::Hint(fid).path_in(&self.dir);
                    if self.io.exists(&hint) {
                        let _ = self.io.remove_file(&hint);
                    }
                    tracing::warn!(event = "compaction.abandoned", dir = %self.dir.display(), error = %e);
                }
                return Err(e);
            }
        };
        {
            let _no_scans = self.relocation.write();
            for r in &out.relocations {
                let size = u64::from(r.to.size);
                if !self
                    .index
                    .replace_if(&r.key, r.from, r.to, &mut || file.add_live(size))
                {
                    file.add_dead(1, size);
                }
            }
            file.add_markers(out.tombstones, out.marker_bytes);
            let mut files = self.files.write();
            for old in plan.drop.iter().chain(&plan.rewrite) {
                files.remove(&old.fid);
            }
        }
        let replaced: Vec<Arc<DataFile>> = plan.drop.iter().chain(&plan.rewrite).cloned().collect();
        self.unlink(&replaced)?;
        Ok(file.len.load(Ordering::Acquire))
    }

    /// Appends the records of `file` that must survive to the output.
    fn copy_needed(
        &self,
        file: &DataFile,
        plan: &Plan,
        out: &mut Output,
    ) -> Result<(), StorageError> {
        let path = file.file_name().path_in(&self.dir);
        let fid = file.fid as u32;
        let outcome = crate::scan::scan(
            file.handle.as_ref(),
            format::FILE_HEADER_RECORD_SIZE,
            file.len.load(Ordering::Acquire),
            &mut |offset, r| {
                let current = match r.kind {
                    RecordType::Document | RecordType::Tombstone => self.index.get(r.key),
                    _ => None,
                };
                let keep = match r.kind {
                    RecordType::Document => {
                        current.is_some_and(|l| l.fid == fid && l.offset == offset)
                    }
                    RecordType::Tombstone => !plan.covers_all && current.is_none(),
                    RecordType::Truncate => !plan.covers_all,
                    // Only the newest metadata record means anything; it is kept whatever else
                    // goes.
                    RecordType::Meta => self.meta.lock().as_ref().is_some_and(|m| m.0 == r.seq),
                    // So is the newest commit record (`Store::newest_commit`). Group markers
                    // go: a sealed datafile holds whole, committed groups only.
                    RecordType::Commit => self.newest_commit.lock().is_some_and(|c| c.0 == r.seq),
                    _ => false,
                };
                if !keep {
                    return Ok(());
                }
                let at = out.len();
                format::encode_into(&mut out.pending, r.kind, r.seq, r.rev, r.key, r.value);
                out.hint.push(&HintEntry {
                    kind: r.kind,
                    seq: r.seq,
                    rev: r.rev,
                    offset: at,
                    size: r.size,
                    key: r.key,
                });
                match r.kind {
                    RecordType::Document => out.relocations.push(Relocation {
                        key: r.key.into(),
                        from: current.expect("a live document has an index entry"),
                        to: Location {
                            fid: out.fid as u32,
                            size: r.size,
                            offset: at,
                            seq: r.seq,
                            rev: r.rev,
                        },
                    }),
                    RecordType::Tombstone => {
                        out.tombstones += 1;
                        out.marker_bytes += u64::from(r.size);
                    }
                    _ => out.marker_bytes += u64::from(r.size),
                }
                if out.pending.len() >= FLUSH_SIZE {
                    self.flush(out)?;
                }
                Ok(())
            },
            &|e| StorageError::io(&path, e),
        )?;
        if let Some((offset, error)) = outcome.bad {
            return Err(StorageError::corrupted(&path, offset, error.to_string()));
        }
        Ok(())
    }

    /// Writes the buffered output bytes.
    fn flush(&self, out: &mut Output) -> Result<(), StorageError> {
        let path = FileName::Compaction(out.fid).path_in(&self.dir);
        out.handle
            .write_all_at(&out.pending, out.written)
            .map_err(|e| self.fail_output(&path, e))?;
        out.written += out.pending.len() as u64;
        out.pending.clear();
        self.compactor_bytes.store(out.written, Ordering::Relaxed);
        Ok(())
    }

    /// Footer, fsyncs, hint, rename: after this returns the compaction survives a crash.
    fn commit(
        &self,
        out: &mut Output,
        temp: &std::path::Path,
    ) -> Result<Arc<DataFile>, StorageError> {
        let records = out.relocations.len() as u64 + out.tombstones;
        out.pending
            .extend_from_slice(&format::encode_footer(records));
        self.flush(out)?;
        out.handle.sync_data().map_err(|e| self.fail(temp, e))?;
        self.counters.syncs.fetch_add(1, Ordering::Relaxed);
        // Every record that made a dropped one dead must be durable before the drop is.
        self.sync()?;
        let hint = std::mem::replace(&mut out.hint, HintBuilder::new());
        // A full disk gives the compaction up; any other failure poisons the store (a failed
        // fsync of the hint already has).
        self.write_hint_file(out.fid, &hint.finish(out.fid, out.written))
            .map_err(|e| match e {
                StorageError::Full { .. } => e,
                e => self.poison.poison(e),
            })?;
        let path = FileName::Datafile(out.fid).path_in(&self.dir);
        // A rename is atomic: when it fails, the output is still uncommitted.
        self.io
            .rename(temp, &path)
            .map_err(|e| self.fail_output(temp, e))?;
        self.io
            .sync_dir(&self.dir)
            .map_err(|e| self.fail(&self.dir, e))?;
        let handle = std::mem::replace(&mut out.handle, Box::new(Closed));
        let file = Arc::new(DataFile::new(out.fid, handle, true, out.written));
        self.files.write().insert(out.fid, file.clone());
        Ok(file)
    }

    /// Takes files out of the file set and the manifest, then deletes them with their hints.
    fn unlink(&self, files: &[Arc<DataFile>]) -> Result<(), StorageError> {
        {
            let mut set = self.files.write();
            for file in files {
                set.remove(&file.fid);
            }
        }
        self.write_manifest().map_err(|e| self.poison.poison(e))?;
        for file in files {
            for name in [FileName::Datafile(file.fid), FileName::Hint(file.fid)] {
                let path = name.path_in(&self.dir);
                if self.io.exists(&path) {
                    self.io
                        .remove_file(&path)
                        .map_err(|e| self.fail(&path, e))?;
                }
            }
        }
        self.io
            .sync_dir(&self.dir)
            .map_err(|e| self.fail(&self.dir, e))
    }

    /// The error of a failed write of the uncommitted output (or its rename) at `path`: a full
    /// disk gives the compaction up without poisoning the store (nothing it relies on
    /// changed); any other failure poisons it.
    fn fail_output(&self, path: &std::path::Path, e: std::io::Error) -> StorageError {
        match StorageError::io(path, e) {
            full @ StorageError::Full { .. } => full,
            other => self.poison.poison(other),
        }
    }

    /// Poisons the store with a failed I/O call on `path` and returns the error.
    fn fail(&self, path: &std::path::Path, e: std::io::Error) -> StorageError {
        self.poison.poison(StorageError::io(path, e))
    }
}

/// The handle left in an output after its real one moved into the file set.
struct Closed;

impl crate::io::FileHandle for Closed {
    fn read_exact_at(&self, _: &mut [u8], _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
    fn write_all_at(&self, _: &[u8], _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
    fn sync_data(&self) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
    fn len(&self) -> std::io::Result<u64> {
        Ok(0)
    }
    fn set_len(&self, _: u64) -> std::io::Result<()> {
        Err(std::io::Error::other("closed"))
    }
}
