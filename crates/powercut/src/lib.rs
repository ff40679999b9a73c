//! quince-powercut: an in-memory FUSE file system that can lose power on command.
//!
//! What it is: a test tool in the style of Jepsen's LazyFS. Mounted at a directory, it serves
//! a real process (the `quince` server) like any file system, while it keeps, per file, a
//! *live* image (what reads see) and a *durable* image (what the last fsync or fdatasync of
//! that file covered) with the ordered writes since, and, per directory, *live* and *durable*
//! entries. A `cut <seed>` on its control socket is a power cut: the state becomes what a
//! reboot would find: only durable directory entries, reached from the root, and for each file
//! found its durable bytes plus a seeded prefix, in write order, of its unsynced writes, the
//! last kept one possibly torn (a prefix of its bytes, or zeroes). That is the fault model of
//! `docs/safety.md`. Unlike `kill -9`, which leaves the page cache intact, a cut tests the
//! fsync discipline: directory fsyncs after create and rename, and data before metadata.
//!
//! What it is not: persistent (everything is in memory and goes with the process), fast, a
//! model of reordering inside a file, of failing fsyncs or full disks (the storage crate's
//! `SimFileIo` tests those), of hard links, symlinks or special files, or of permissions
//! (it is meant to be mounted and used by root).
//!
//! Layout: [`tree`] (inodes, live and durable entries, plain operations), [`namespace`]
//! (renames and directory fsync: the durable namespace rules), [`file_image`] (one file's
//! bytes and its unsynced writes), [`cut`] (the power cut), [`fs`] (the FUSE adapter),
//! [`control`] (the socket), [`stats`], [`rng`]. Everything but `fs` and `control`'s socket
//! loop is plain Rust with unit tests that need neither root nor `/dev/fuse`.
//!
//! Invariants: the model's state is behind one lock, held for each whole FUSE request and for
//! a whole cut, so a cut falls between requests; nothing becomes durable except by an fsync of
//! the file (bytes) or of a directory (entries, and pending renames up to the last one touching
//! it); a cut is deterministic in the state and the seed.

pub mod control;
pub mod cut;
pub mod file_image;
pub mod fs;
pub mod namespace;
pub mod rng;
pub mod stats;
pub mod tree;
