//! [`ThreadCounters`]: counters that each thread adds to without atomic read-modify-writes.
//!
//! What it is: a set of `u64` counters kept once per thread that has counted into it (a
//! *shard*). A thread owns its shard alone, so an addition is a relaxed load and a relaxed
//! store to memory no other thread writes: no `lock`ed instruction and no cache line shared
//! with another writer. [`ThreadCounters::sums`] adds up every shard. When a thread ends, its
//! shard goes to a free list and the next new thread takes it over, counts and all, so the
//! number of shards is the most threads that ever counted at once, not the number of threads
//! ever started.
//!
//! What it is not: a general metrics registry; the meaning of each slot is the caller's
//! (`super::requests`).
//!
//! Invariants: a shard is owned by at most one thread at a time (it is handed out only from
//! the free list or fresh, and returned only by its owner's thread-local destructor), so its
//! single-writer additions are never lost; a thread whose thread-local storage is already torn
//! down adds to a shared shard with atomic additions instead; sums only grow (each slot only
//! grows, and no shard is ever dropped while its counters are alive).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

/// Slots of padding before and after each shard's counters: one 128-byte line pair, so no
/// other allocation's data shares a cache line with them.
const PAD: usize = 16;

/// One thread's counters (with padding at both ends).
struct Shard(Box<[AtomicU64]>);

impl Shard {
    fn new(slots: usize) -> Arc<Shard> {
        Arc::new(Shard(
            (0..slots + 2 * PAD).map(|_| AtomicU64::new(0)).collect(),
        ))
    }

    fn slots(&self) -> &[AtomicU64] {
        &self.0[PAD..self.0.len() - PAD]
    }
}

/// The shards of one [`ThreadCounters`].
struct Shards {
    slots: usize,
    /// Every shard ever made (sums read them all).
    all: Mutex<Vec<Arc<Shard>>>,
    /// Shards whose thread ended, for the next new thread.
    free: Mutex<Vec<Arc<Shard>>>,
}

/// Counters added to per thread, summed on demand.
pub(crate) struct ThreadCounters {
    shards: Arc<Shards>,
    /// Where a thread without thread-local storage adds (atomically).
    shared: Arc<Shard>,
}

/// One shard a thread owns.
struct Owned {
    shards: Weak<Shards>,
    shard: Arc<Shard>,
}

/// The shards the current thread owns, one per [`ThreadCounters`] it counted into.
struct ThreadShards(RefCell<Vec<Owned>>);

impl Drop for ThreadShards {
    fn drop(&mut self) {
        for owned in self.0.get_mut().drain(..) {
            if let Some(shards) = owned.shards.upgrade() {
                shards.free.lock().push(owned.shard);
            }
        }
    }
}

thread_local! {
    static THREAD_SHARDS: ThreadShards = const { ThreadShards(RefCell::new(Vec::new())) };
}

/// Adds to the slots of one shard.
pub(crate) struct Adder<'a> {
    slots: &'a [AtomicU64],
    /// The calling thread owns the shard: a load and a store suffice.
    owned: bool,
}

impl Adder<'_> {
    /// Adds `n` to `slot`.
    #[inline]
    pub(crate) fn add(&self, slot: usize, n: u64) {
        let counter = &self.slots[slot];
        if self.owned {
            counter.store(
                counter.load(Ordering::Relaxed).wrapping_add(n),
                Ordering::Relaxed,
            );
        } else {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }
}

impl ThreadCounters {
    /// `slots` counters, all 0.
    pub(crate) fn new(slots: usize) -> ThreadCounters {
        ThreadCounters {
            shards: Arc::new(Shards {
                slots,
                all: Mutex::new(Vec::new()),
                free: Mutex::new(Vec::new()),
            }),
            shared: Shard::new(slots),
        }
    }

    /// Runs `count` with an [`Adder`] on the calling thread's shard.
    pub(crate) fn with<R>(&self, count: impl FnOnce(&Adder<'_>) -> R) -> R {
        let mut count = Some(count);
        let owned = THREAD_SHARDS.try_with(|mine| {
            let mut mine = mine.0.borrow_mut();
            let index = match mine
                .iter()
                .position(|o| std::ptr::eq(o.shards.as_ptr(), Arc::as_ptr(&self.shards)))
            {
                Some(index) => index,
                None => {
                    // Shards of counters that are gone are let go first.
                    mine.retain(|o| o.shards.strong_count() > 0);
                    mine.push(Owned {
                        shards: Arc::downgrade(&self.shards),
                        shard: self.take_shard(),
                    });
                    mine.len() - 1
                }
            };
            let count = count.take().expect("called once");
            count(&Adder {
                slots: mine[index].shard.slots(),
                owned: true,
            })
        });
        match owned {
            Ok(result) => result,
            Err(_) => count.take().expect("not called yet")(&Adder {
                slots: self.shared.slots(),
                owned: false,
            }),
        }
    }

    /// A shard for a thread that has none: a free one, else a new one.
    fn take_shard(&self) -> Arc<Shard> {
        if let Some(shard) = self.shards.free.lock().pop() {
            return shard;
        }
        let shard = Shard::new(self.shards.slots);
        self.shards.all.lock().push(Arc::clone(&shard));
        shard
    }

    /// The sum of each slot over every shard.
    pub(crate) fn sums(&self) -> Vec<u64> {
        let mut sums: Vec<u64> = self
            .shared
            .slots()
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .collect();
        for shard in self.shards.all.lock().iter() {
            for (sum, slot) in sums.iter_mut().zip(shard.slots()) {
                *sum = sum.wrapping_add(slot.load(Ordering::Relaxed));
            }
        }
        sums
    }

    /// How many shards exist (for tests).
    #[cfg(test)]
    fn shard_count(&self) -> usize {
        self.shards.all.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_add_to_their_own_shards_and_sums_see_all() {
        let counters = Arc::new(ThreadCounters::new(3));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counters = Arc::clone(&counters);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        counters.with(|a| {
                            a.add(0, 1);
                            a.add(2, 5);
                        });
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counters.sums(), [4000, 0, 20000]);
        assert!(counters.shard_count() <= 4);
    }

    #[test]
    fn the_shard_of_an_ended_thread_is_reused_with_its_counts() {
        let counters = Arc::new(ThreadCounters::new(1));
        for _ in 0..10 {
            let c = Arc::clone(&counters);
            std::thread::spawn(move || c.with(|a| a.add(0, 1)))
                .join()
                .unwrap();
        }
        assert_eq!(counters.sums(), [10]);
        assert_eq!(counters.shard_count(), 1);
    }

    #[test]
    fn counters_of_two_owners_stay_apart_on_one_thread() {
        let a = ThreadCounters::new(1);
        let b = ThreadCounters::new(1);
        a.with(|x| x.add(0, 2));
        b.with(|x| x.add(0, 3));
        a.with(|x| x.add(0, 4));
        assert_eq!(a.sums(), [6]);
        assert_eq!(b.sums(), [3]);
        drop(b);
        let c = ThreadCounters::new(1);
        c.with(|x| x.add(0, 1));
        assert_eq!(c.sums(), [1]);
    }
}
