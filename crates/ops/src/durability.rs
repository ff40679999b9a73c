//! [`Durability`]: the engine-neutral promise that a write acknowledged with `waitForSync` will
//! be, or failed to be, made durable.
//!
//! What it is: a future (and a callback and a blocking wait) over whatever the engine behind the
//! operations interface uses to learn that a write survives a crash: an answer already known,
//! or a [`Completer`] the engine fires (the local engine from its storage syncer once an fsync
//! covered the write, a cluster coordinator once its followers answered). The api awaits it on
//! its connection's task without holding a thread.
//!
//! What it is not: a transaction. The write is already visible to readers when the handle is
//! returned; the handle only says when it survives a crash.
//!
//! Invariants: the outcome is delivered exactly once (to the future, the callback or the
//! waiter), with `Ok` only after the engine made the write durable, otherwise with the error (a
//! failed fsync poisons the local collection's store: 503/1004 for every later write); a handle
//! whose completer is dropped unfired resolves to 503/30 (the engine is going away). Handles of
//! one collection of the local engine are ordered: when a later write is durable, so is every
//! earlier write of that collection ([`Durability::newest`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use parking_lot::Mutex;
use quince_errors::{ArangoError, Result, SHUTTING_DOWN};

/// The pending durability of one write, or of every write of one request (see the module doc).
#[must_use = "a synced write is acknowledged only once its durability is known"]
pub struct Durability {
    /// Orders handles of one collection: a higher one implies the lower ones.
    order: u64,
    source: Source,
}

enum Source {
    /// The answer, known or awaited, in a slot the engine fills.
    Slot(Arc<Slot>),
    /// The outcome was handed out already (a future polled to completion).
    Taken,
}

/// Where the outcome lands, and who waits for it.
#[derive(Default)]
struct Slot {
    state: Mutex<SlotState>,
    ready: parking_lot::Condvar,
}

#[derive(Default)]
struct SlotState {
    result: Option<Result<()>>,
    waker: Option<Waker>,
    callback: Option<Box<dyn FnOnce(Result<()>) + Send>>,
}

impl Slot {
    fn fill(&self, result: Result<()>) {
        let mut state = self.state.lock();
        if state.result.is_some() {
            return;
        }
        if let Some(callback) = state.callback.take() {
            drop(state);
            callback(result);
            return;
        }
        state.result = Some(result);
        let waker = state.waker.take();
        drop(state);
        self.ready.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Fires a [`Durability`] made by [`Durability::pending`]; dropping it unfired resolves the
/// handle to 503/30.
pub struct Completer {
    slot: Option<Arc<Slot>>,
}

impl Completer {
    /// Delivers the outcome.
    pub fn complete(mut self, result: Result<()>) {
        if let Some(slot) = self.slot.take() {
            slot.fill(result);
        }
    }
}

impl Drop for Completer {
    fn drop(&mut self) {
        if let Some(slot) = self.slot.take() {
            slot.fill(Err(ArangoError::new(SHUTTING_DOWN)));
        }
    }
}

impl Durability {
    /// A handle whose outcome is known already.
    pub fn ready(result: Result<()>) -> Durability {
        let slot = Arc::new(Slot::default());
        slot.fill(result);
        Durability {
            order: 0,
            source: Source::Slot(slot),
        }
    }

    /// A handle and the [`Completer`] that answers it, for engines that learn durability some
    /// other way. `order` ranks handles of one collection for [`Durability::newest`].
    pub fn pending(order: u64) -> (Durability, Completer) {
        let slot = Arc::new(Slot::default());
        let completer = Completer {
            slot: Some(Arc::clone(&slot)),
        };
        let durability = Durability {
            order,
            source: Source::Slot(slot),
        };
        (durability, completer)
    }

    /// The slot the answer lands in, unless the outcome was handed out already.
    fn slot(&mut self) -> Option<Arc<Slot>> {
        match &self.source {
            Source::Slot(slot) => Some(Arc::clone(slot)),
            Source::Taken => None,
        }
    }

    /// Calls `done` once the write is durable (`Ok`) or cannot become so (the error). Never
    /// blocks; `done` runs on the calling thread when the answer is already known, else on the
    /// engine's thread that learns it (a storage syncer), so it must be quick.
    pub fn on_done(mut self, done: impl FnOnce(Result<()>) + Send + 'static) {
        let Some(slot) = self.slot() else {
            return;
        };
        let mut state = slot.state.lock();
        match state.result.take() {
            Some(result) => {
                drop(state);
                done(result);
            }
            None => state.callback = Some(Box::new(done)),
        }
    }

    /// Blocks until the write is durable, or returns why it cannot be. Never call it on an
    /// async runtime's worker: await the handle instead.
    pub fn wait(mut self) -> Result<()> {
        let Some(slot) = self.slot() else {
            return Err(ArangoError::new(SHUTTING_DOWN));
        };
        let mut state = slot.state.lock();
        loop {
            if let Some(result) = state.result.take() {
                return result;
            }
            slot.ready.wait(&mut state);
        }
    }

    /// Of two handles of the SAME collection, the one whose durability implies the other's.
    pub fn newest(a: Option<Durability>, b: Option<Durability>) -> Option<Durability> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if a.order >= b.order { a } else { b }),
            (a, b) => a.or(b),
        }
    }
}

impl Future for Durability {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let this = self.get_mut();
        let Some(slot) = this.slot() else {
            return Poll::Ready(Err(ArangoError::new(SHUTTING_DOWN)));
        };
        let mut state = slot.state.lock();
        match state.result.take() {
            Some(result) => {
                drop(state);
                this.source = Source::Taken;
                Poll::Ready(result)
            }
            None => {
                state.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

impl std::fmt::Debug for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Durability")
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}
