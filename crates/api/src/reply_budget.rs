//! The memory replies may take: a bound per reply (`--http.max-reply-size`) and one over all
//! replies being built at once, so that a small request cannot make the server build a huge
//! reply (a bulk read naming one big document thousands of times, a batch of thousands of
//! reads, an echo of a large body).
//!
//! What it is: [`ReplyLimits`] (the two bounds and the shared count, one per server, handed to
//! every request) and [`ReplyBudget`] (one reply being built: handlers report its size as it
//! grows, and get an error instead of growing past a bound).
//!
//! What it is not: a bound on replies whose size follows from the request in a fixed ratio
//! (single documents, listings); those are bounded by the body and queue limits already.
//!
//! Invariants: a reply of at most [`FREE_BYTES`] is not counted against the shared bound, so
//! small replies never fail on it; a larger one counts whole, reserved in steps of
//! [`STEP_BYTES`], and gives everything back when its budget is dropped; the shared count never
//! passes the shared bound (a reservation that would pass it is refused and undone).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use quince_errors::{ArangoError, RESOURCE_LIMIT};

/// Replies up to this size are not counted against the shared bound.
pub const FREE_BYTES: usize = 1 << 20;

/// The step in which a larger reply reserves from the shared bound.
pub const STEP_BYTES: usize = 1 << 20;

/// How many largest replies the shared bound holds at once.
pub const SHARED_REPLIES: usize = 4;

/// The bounds of the server's replies.
#[derive(Clone, Debug)]
pub struct ReplyLimits {
    /// The most bytes one reply may have.
    per_reply: usize,
    /// The most bytes all (counted) replies being built may have together.
    shared: usize,
    /// What replies being built have reserved now.
    in_use: Arc<AtomicUsize>,
}

impl ReplyLimits {
    /// Bounds of `per_reply` bytes per reply, and [`SHARED_REPLIES`] times that in all.
    pub fn new(per_reply: usize) -> ReplyLimits {
        ReplyLimits {
            per_reply,
            shared: per_reply.saturating_mul(SHARED_REPLIES),
            in_use: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The most bytes one reply may have.
    pub fn per_reply(&self) -> usize {
        self.per_reply
    }

    /// A budget for one reply.
    pub fn budget(&self) -> ReplyBudget {
        ReplyBudget {
            limits: self.clone(),
            reserved: 0,
        }
    }

    /// Bytes reserved by replies being built now.
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Acquire)
    }
}

/// The budget of one reply being built.
#[derive(Debug)]
pub struct ReplyBudget {
    limits: ReplyLimits,
    /// What this reply reserved from the shared bound.
    reserved: usize,
}

impl ReplyBudget {
    /// Accounts for the reply having grown to `len` bytes: 400/32 when that is more than one
    /// reply may have, 503/32 when the replies being built together would pass their bound.
    pub fn grow(&mut self, len: usize) -> Result<(), ArangoError> {
        if len > self.limits.per_reply {
            return Err(too_large(self.limits.per_reply));
        }
        if len <= FREE_BYTES || len <= self.reserved {
            return Ok(());
        }
        let wanted = len
            .div_ceil(STEP_BYTES)
            .saturating_mul(STEP_BYTES)
            .min(self.limits.per_reply);
        let extra = wanted - self.reserved;
        let before = self.limits.in_use.fetch_add(extra, Ordering::AcqRel);
        if before + extra > self.limits.shared {
            self.limits.in_use.fetch_sub(extra, Ordering::AcqRel);
            return Err(ArangoError::with_message(
                RESOURCE_LIMIT,
                "the server is building too many large replies at once; retry later",
            )
            .with_status(503));
        }
        self.reserved = wanted;
        Ok(())
    }
}

impl Drop for ReplyBudget {
    fn drop(&mut self) {
        self.limits
            .in_use
            .fetch_sub(self.reserved, Ordering::AcqRel);
    }
}

/// 400/32 for a reply over the bound.
pub fn too_large(per_reply: usize) -> ArangoError {
    ArangoError::with_message(
        RESOURCE_LIMIT,
        format!(
            "the reply would be larger than {per_reply} bytes (--http.max-reply-size): ask for \
             less at a time"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reply_is_bounded_and_small_ones_are_free() {
        let limits = ReplyLimits::new(10 << 20);
        let mut small = limits.budget();
        small.grow(FREE_BYTES).unwrap();
        assert_eq!(limits.in_use(), 0);
        let mut big = limits.budget();
        big.grow(3 << 20).unwrap();
        assert_eq!(limits.in_use(), 3 << 20);
        let err = big.grow((10 << 20) + 1).unwrap_err();
        assert_eq!((err.status, err.num()), (400, 32));
        drop(big);
        assert_eq!(limits.in_use(), 0);
    }

    #[test]
    fn replies_together_are_bounded() {
        let limits = ReplyLimits::new(4 << 20);
        let mut held: Vec<ReplyBudget> = Vec::new();
        for _ in 0..SHARED_REPLIES {
            let mut b = limits.budget();
            b.grow(4 << 20).unwrap();
            held.push(b);
        }
        let mut one_more = limits.budget();
        one_more.grow(FREE_BYTES).unwrap();
        let err = one_more.grow(FREE_BYTES + 1).unwrap_err();
        assert_eq!((err.status, err.num()), (503, 32));
        held.pop();
        one_more.grow(4 << 20).unwrap();
    }
}
