//! [`Current`]: the current version of a key as a write decision sees it.
//!
//! What it is: the revision and the stored bytes of the version a decision builds on, from the
//! store (`quince_storage::Existing`, read under the writer lock) or from a transaction's own
//! buffer ([`Buffered`], a version the transaction wrote and has not committed).
//!
//! What it is not: a read path for clients; documents are read with `Collection::read`.
//!
//! Invariants: `value` returns the bytes of exactly the version `rev` names.

use quince_errors::Result;
use quince_storage::Existing;

/// The version a decision builds on.
pub(crate) trait Current {
    /// Its revision.
    fn rev(&self) -> u64;
    /// Its stored bytes.
    fn value(&self) -> Result<Vec<u8>>;
}

impl Current for Existing<'_> {
    fn rev(&self) -> u64 {
        self.rev
    }

    fn value(&self) -> Result<Vec<u8>> {
        Ok(Existing::value(self)?)
    }
}

/// A version a transaction wrote and has not committed.
pub(crate) struct Buffered<'a> {
    pub rev: u64,
    pub value: &'a [u8],
}

impl Current for Buffered<'_> {
    fn rev(&self) -> u64 {
        self.rev
    }

    fn value(&self) -> Result<Vec<u8>> {
        Ok(self.value.to_vec())
    }
}
