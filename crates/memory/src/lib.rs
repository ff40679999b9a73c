//! Memory accounting at real size.
//!
//! What it is: [`Counting`], a wrapper around the process's allocator that charges every
//! allocation, reallocation and free to the [`Account`] its thread is working for (if any);
//! [`Account`], the bytes one piece of work (an AQL query) holds, with its limit and peak;
//! [`Pool`], the bytes all accounts of a kind hold together, with the server-wide limit; and
//! [`Charging`], the guard that makes the current thread charge an account.
//!
//! What it is not: a limit enforced inside the allocator. An allocation can never fail here
//! (a failing global allocator aborts the process); the work checks its account at its own
//! check points ([`Account::check`]) and before an allocation whose size it can tell in
//! advance ([`Account::admit`]), and stops itself with an error.
//!
//! Invariants:
//! - only the thread that allocates or frees is looked at: memory allocated by a charging
//!   thread and freed by another stays charged until its account is dropped or the work hands
//!   it over with [`Account::release`]; memory allocated elsewhere and freed by a charging
//!   thread lowers the account (an account may read below zero; [`Account::used`] is never
//!   negative);
//! - each thread batches its charges in [`CHUNK`]-byte steps (as ArangoDB does with 32 KiB),
//!   so an account is exact to within one chunk per thread charging it;
//! - the pool holds the sum of its live accounts: a dropped account gives back what it still
//!   held;
//! - nothing here allocates, so the allocator wrapper never recurses;
//! - an account that held much gives the memory back to the operating system when it goes,
//!   and a thread that freed much for its account gives its arena's freed pages back at its
//!   next check, through the allocator's own calls the process installs ([`set_trim`],
//!   [`set_trim_thread`]): the process's resident memory follows the accounts, not the
//!   allocator's caches.

mod account;
mod allocator;

pub use account::{
    set_trim, set_trim_thread, Account, Charging, Exceeded, Pool, CHUNK, TRIM_AFTER, TRIM_CHURN,
};
pub use allocator::Counting;
