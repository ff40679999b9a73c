//! [`Counting`]: the allocator wrapper that charges the current thread's account.
//!
//! What it is: a `GlobalAlloc` over any other (jemalloc in the server, the system's in tests)
//! that tells [`crate::account`] the size of every allocation, reallocation and free made by
//! a thread that is charging an account. A thread that charges nothing pays one thread-local
//! read per call.
//!
//! What it is not: a limit: it never refuses an allocation (see the crate's documentation).
//!
//! Invariants: sizes are the requested sizes (`Layout::size`), so a free gives back exactly
//! what its allocation charged; a failed allocation charges nothing.
//!
//! This is the one file of the crate with `unsafe`: implementing `GlobalAlloc` requires it, and
//! each method only forwards to the wrapped allocator with the caller's own promises.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};

use crate::account::charge;

/// The allocator `A`, with every allocation charged to the current thread's account.
pub struct Counting<A>(pub A);

// SAFETY: every method forwards to `A` with exactly the arguments (and so the promises) it
// was given; the bookkeeping around the call touches only thread-local cells and atomics and
// never allocates.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Counting<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { self.0.alloc(layout) };
        if !ptr.is_null() {
            charge(layout.size() as i64);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let ptr = unsafe { self.0.alloc_zeroed(layout) };
        if !ptr.is_null() {
            charge(layout.size() as i64);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { self.0.dealloc(ptr, layout) };
        charge(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let new = unsafe { self.0.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            charge(new_size as i64 - layout.size() as i64);
        }
        new
    }
}
