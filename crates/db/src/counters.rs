//! [`Counters`]: the catalog's event counters for metrics (document writes, truncates, stream
//! transactions begun, committed and aborted).
//!
//! What it is: relaxed atomics, one per event, bumped where the event happens (the write path,
//! truncate, a transaction's begin and end) and read by [`crate::Catalog::stats`].
//!
//! What it is not: durable. They count since the catalog opened (a hot-backup restore carries
//! them over to the state it opens), as ArangoDB's counters count since the server started.
//!
//! Invariants: they only grow; a write is counted once, when its change was published (a
//! refused or failed item is not counted); a transaction is counted committed or aborted at
//! most once, when it leaves the running state.

use std::sync::atomic::{AtomicU64, Ordering};

/// The catalog's event counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    document_writes: AtomicU64,
    truncates: AtomicU64,
    transactions_started: AtomicU64,
    transactions_committed: AtomicU64,
    transactions_aborted: AtomicU64,
}

/// A snapshot of [`Counters`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CountersSnapshot {
    pub document_writes: u64,
    pub truncates: u64,
    pub transactions_started: u64,
    pub transactions_committed: u64,
    pub transactions_aborted: u64,
}

impl Counters {
    /// Adds a snapshot's counts (those of the state a restore replaced).
    pub(crate) fn add(&self, counts: &CountersSnapshot) {
        self.document_writes
            .fetch_add(counts.document_writes, Ordering::Relaxed);
        self.truncates
            .fetch_add(counts.truncates, Ordering::Relaxed);
        self.transactions_started
            .fetch_add(counts.transactions_started, Ordering::Relaxed);
        self.transactions_committed
            .fetch_add(counts.transactions_committed, Ordering::Relaxed);
        self.transactions_aborted
            .fetch_add(counts.transactions_aborted, Ordering::Relaxed);
    }

    /// Counts `n` published document changes (inserts, replaces, updates, removes).
    pub(crate) fn documents_written(&self, n: u64) {
        if n > 0 {
            self.document_writes.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counts one truncate.
    pub(crate) fn truncated(&self) {
        self.truncates.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one transaction begun.
    pub(crate) fn transaction_started(&self) {
        self.transactions_started.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one transaction ended: committed when `committed`, else aborted.
    pub(crate) fn transaction_finished(&self, committed: bool) {
        let counter = match committed {
            true => &self.transactions_committed,
            false => &self.transactions_aborted,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The current values.
    pub(crate) fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            document_writes: self.document_writes.load(Ordering::Relaxed),
            truncates: self.truncates.load(Ordering::Relaxed),
            transactions_started: self.transactions_started.load(Ordering::Relaxed),
            transactions_committed: self.transactions_committed.load(Ordering::Relaxed),
            transactions_aborted: self.transactions_aborted.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_counted() {
        let c = Counters::default();
        c.documents_written(3);
        c.documents_written(0);
        c.truncated();
        c.transaction_started();
        c.transaction_started();
        c.transaction_finished(true);
        c.transaction_finished(false);
        assert_eq!(
            c.snapshot(),
            CountersSnapshot {
                document_writes: 3,
                truncates: 1,
                transactions_started: 2,
                transactions_committed: 1,
                transactions_aborted: 1,
            }
        );
    }
}
