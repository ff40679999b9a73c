//! [`Durability`]: the promise that a write acknowledged with `waitForSync` will be, or failed
//! to be, made durable.
//!
//! What it is: a thin wrapper over the storage engine's `WriteTicket`, returned by the
//! `*_deferred` document operations of [`crate::Collection`] when the effective `waitForSync`
//! is true and a record was written. [`Durability::on_done`] learns the outcome without
//! blocking (the api awaits it on an async task); [`Durability::wait`] blocks.
//!
//! What it is not: a transaction. The write is already visible to readers when the handle is
//! returned; the handle only says when it survives a crash.
//!
//! Invariants: `on_done` fires exactly once, with `Ok` only after an fsync covered the write,
//! otherwise with the storage error as an `ArangoError` (a failed fsync poisons the collection's
//! store: 503/1004 for every later write). Handles of one collection are ordered: when a later
//! write is durable, so is every earlier write of that collection ([`Durability::newest`]).

use quince_errors::{ArangoError, Result};
use quince_storage::WriteTicket;

/// The pending durability of one write (see the module doc).
#[derive(Debug)]
#[must_use = "a synced write is acknowledged only once its durability is known"]
pub struct Durability {
    ticket: WriteTicket,
}

impl Durability {
    pub(crate) fn new(ticket: WriteTicket) -> Durability {
        Durability { ticket }
    }

    /// Calls `done` once the write is durable (`Ok`) or cannot become so (the error). Never
    /// blocks; `done` runs on the calling thread when the answer is already known, else on a
    /// storage syncer thread, so it must be quick (send on a channel, wake a task).
    pub fn on_done(self, done: impl FnOnce(Result<()>) + Send + 'static) {
        self.ticket.on_durable(Box::new(move |result| {
            done(result.map_err(ArangoError::from))
        }));
    }

    /// Blocks until the write is durable, or returns why it cannot be.
    pub fn wait(self) -> Result<()> {
        Ok(self.ticket.wait()?)
    }

    /// Of two handles of the SAME collection, the one whose durability implies the other's.
    pub fn newest(a: Option<Durability>, b: Option<Durability>) -> Option<Durability> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if a.ticket.seq() >= b.ticket.seq() {
                a
            } else {
                b
            }),
            (a, b) => a.or(b),
        }
    }
}
