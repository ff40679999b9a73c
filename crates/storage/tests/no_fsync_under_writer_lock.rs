//! Regression test: no fsync (of a file or of the directory) happens inside a call that holds a
//! collection's writer lock, even when the call fills the journal and rotates it, and the
//! durability tickets of those writes still resolve, durably.
//!
//! The engine used to seal a full journal under the writer lock (footer, fsync, rename,
//! directory fsync) and to start the next one there too (create, header, fsync, directory
//! fsync, manifest rewrite with two more): every writer of the collection waited for the disk.
//! A `FileIo` wrapper over `SimFileIo` records every `sync_data` and `sync_dir` made on a
//! thread while it is inside `mutate_deferred`, `truncate` (without sync), `write_meta` or a
//! one-store transaction (`Store::part`, `commit`: a multi-document request); those return
//! without waiting for durability, so any fsync they make is made under the writer lock, on the
//! request path. (A transaction spanning several stores does wait, by design: `group.rs`.)

use crate::common;

use std::cell::Cell;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quince_storage::io::{FileHandle, FileIo, SimFileIo};
use quince_storage::{Mutation, StorageError, Store, WriteTicket};

thread_local! {
    /// The thread is inside one of the store's writing calls.
    static IN_WRITE: Cell<bool> = const { Cell::new(false) };
}

/// fsyncs seen: all of them, and those made inside a writing call.
#[derive(Default)]
struct Syncs {
    total: AtomicU64,
    in_write: AtomicU64,
}

impl Syncs {
    fn record(&self) {
        self.total.fetch_add(1, Ordering::Relaxed);
        if IN_WRITE.with(Cell::get) {
            self.in_write.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `SimFileIo` that records where its fsyncs happen.
struct Watched {
    inner: SimFileIo,
    syncs: Arc<Syncs>,
}

struct WatchedHandle {
    inner: Box<dyn FileHandle>,
    syncs: Arc<Syncs>,
}

impl FileHandle for WatchedHandle {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.syncs.record();
        self.inner.sync_data()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
}

impl Watched {
    fn wrap(&self, inner: Box<dyn FileHandle>) -> Box<dyn FileHandle> {
        Box::new(WatchedHandle {
            inner,
            syncs: self.syncs.clone(),
        })
    }
}

impl FileIo for Watched {
    fn open(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        self.inner.open(path).map(|h| self.wrap(h))
    }
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FileHandle>> {
        self.inner.create_new(path).map(|h| self.wrap(h))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn remove_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<PathBuf>> {
        self.inner.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.syncs.record();
        self.inner.sync_dir(path)
    }
}

/// Runs `call` as a writing call.
fn writing<R>(call: impl FnOnce() -> R) -> R {
    IN_WRITE.with(|w| w.set(true));
    let result = call();
    IN_WRITE.with(|w| w.set(false));
    result
}

fn put(store: &Store, key: &[u8], rev: u64) -> WriteTicket {
    let (_, ticket) = writing(|| {
        store.mutate_deferred(key, |_| {
            Ok::<_, StorageError>((
                Mutation::Put {
                    rev,
                    value: vec![rev as u8; 100],
                },
                (),
            ))
        })
    })
    .unwrap();
    ticket.unwrap()
}

/// Writes through every writing call into 1 KiB journals (a rotation every few records),
/// with or without maintenance passes (which prepare spare journals) in between; returns the
/// file system and the number of rotations.
fn workload(maintain: bool) -> (SimFileIo, Arc<Syncs>, u64) {
    let sim = SimFileIo::new();
    let syncs = Arc::new(Syncs::default());
    let io = Arc::new(Watched {
        inner: sim.clone(),
        syncs: syncs.clone(),
    });
    let store = Store::create(io, &common::dir(), common::options(1024)).unwrap();
    let mut tickets = Vec::new();
    let mut rev = 0;
    for round in 0..30u64 {
        for i in 0..10u64 {
            rev += 1;
            tickets.push(put(&store, format!("k{round:02}-{i}").as_bytes(), rev));
        }
        let keys: Vec<String> = (0..12).map(|i| format!("b{round:02}-{i}")).collect();
        let first = rev;
        rev += keys.len() as u64;
        let (results, ticket) = writing(|| {
            common::commit_part(&store, &keys, |i, _| {
                let rev = first + 1 + i as u64;
                Ok::<_, StorageError>((
                    Mutation::Put {
                        rev,
                        value: vec![rev as u8; 60],
                    },
                    (),
                ))
            })
        });
        assert!(results.iter().all(Result::is_ok));
        tickets.push(ticket.unwrap());
        tickets.push(writing(|| store.write_meta(&[round as u8; 200])).unwrap());
        // A transaction in this store alone: its group is appended like a batch, no fsync.
        let first = rev;
        rev += 4;
        let committed = writing(|| {
            let mut part = store.part(1);
            for i in 0..4u64 {
                common::stage_put(
                    &mut part,
                    format!("t{round:02}-{i}").as_bytes(),
                    first + 1 + i,
                    &[i as u8; 80],
                );
            }
            quince_storage::commit(rev, vec![part])
        });
        tickets.push(committed.unwrap().pop().flatten().unwrap());
        if round % 7 == 6 {
            rev += 1;
            writing(|| store.truncate(rev, false)).unwrap();
        }
        if maintain {
            store.maintain().unwrap();
        }
        // Half the tickets are waited for now, the rest at the end.
        if round % 2 == 0 {
            for ticket in tickets.drain(..) {
                ticket.wait().unwrap();
            }
        }
    }
    for ticket in tickets {
        ticket.wait().unwrap();
    }
    let rotations = store.figures().journals_count + store.stats().seals;
    store.sync().unwrap();
    (sim, syncs, rotations)
}

fn check(maintain: bool) {
    let (sim, syncs, rotations) = workload(maintain);
    assert!(rotations >= 20, "only {rotations} journals were used");
    assert!(syncs.total.load(Ordering::Relaxed) > 0);
    assert_eq!(
        syncs.in_write.load(Ordering::Relaxed),
        0,
        "fsyncs made inside writing calls, under the writer lock"
    );
    // Every ticket resolved Ok: after a crash that keeps only synced bytes, all is there.
    let store = common::reopen(&sim.crash(7, false), 1024).unwrap();
    // The last round (29) came after the last truncate (round 27).
    for i in 0..10u64 {
        assert!(store.get(format!("k29-{i}").as_bytes()).unwrap().is_some());
    }
    assert_eq!(store.len(), 2 * 26);
    assert_eq!(store.meta(), Some(vec![29u8; 200]));
}

#[test]
fn rotating_writes_do_not_fsync_when_no_spare_is_ready() {
    check(false);
}

#[test]
fn rotating_writes_do_not_fsync_when_maintenance_prepares_spares() {
    check(true);
}
