//! Quince's storage engine: one append-only journal store per collection.
//!
//! What it is: a Bitcask/MMFiles-style heap of records. Each [`Store`] owns one directory with
//! at most one active *journal* (appended to) and any number of sealed, read-only *datafiles*.
//! When the journal would grow past the store's maximal journal size the writer hands it off
//! (footer appended) and takes the next one, a spare made ahead of need; the background seals
//! the full one into a datafile (fsync, rename), so no writer waits for the disk. An in-memory primary index maps each live key to the
//! location and revision of its newest record; removals append tombstones. Compaction rewrites
//! datafiles whose dead share passes a threshold, without blocking writers. A hint file per
//! sealed datafile lets a restart skip rescanning it.
//!
//! What it is not: it knows nothing about JSON, ArangoDB documents, collections' names or HTTP.
//! Keys and values are bytes; revisions are opaque, strictly increasing `u64`s chosen by the
//! caller. Document semantics live in `quince-db`.
//!
//! Crash model and invariants (see `docs/storage-format.md` and `docs/safety.md`):
//! - every record carries a CRC32C over its header and payload; recovery cuts the active journal
//!   at the first record that fails its checks and never skips into the middle of a file;
//! - a write acknowledged with `sync = true` was covered by an fsync before [`Store::mutate`]
//!   returned, and a [`WriteTicket`]'s `on_durable` callback fires `Ok` only after an fsync
//!   covered its write; concurrent syncing writers share fsyncs (group commit), issued by a few
//!   syncer threads shared by all stores, so a waiting writer parks no thread;
//! - after a failed write or fsync the store is poisoned: every later write fails with
//!   [`StorageError::Poisoned`] until the store is reopened (and recovered);
//! - for each key the record with the highest revision wins, so the order of files never
//!   decides which version is current;
//! - a transaction ([`Store::part`], [`commit`]) is written as one *group* per store (a group
//!   marker, then its records, contiguous in one journal): recovery indexes a group only if it
//!   is whole, and a transaction spanning several stores is durable in all of them before any
//!   of its records is published, so after [`settle`] it is whole or absent everywhere.
//!
//! All file I/O goes through [`io::FileIo`], so tests can inject torn writes, lost unsynced
//! data and fsync failures ([`io::SimFileIo`]).

pub mod backup;
#[doc(hidden)]
pub mod fuzzing;
pub mod index;
pub mod io;

mod chain;
mod compaction;
mod consistency;
mod datafile;
mod error;
mod format;
mod group;
mod group_reader;
mod handoff;
mod hint;
mod journal;
mod manifest;
mod poison;
mod recovery;
mod salvage;
mod scan;
mod store;
mod sync;
mod syncer;
mod tail;

pub use error::StorageError;
pub use group::{commit, settle, Part, PendingGroup};
pub use store::{
    CompactionPolicy, CompactionReport, Existing, Figures, Mutation, Record, Store, StoreOptions,
    StoreStats,
};
pub use sync::{DurableCallback, WriteTicket};
