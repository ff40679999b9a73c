//! The accounting of `quince-memory` under its own allocator: what a charging thread allocates
//! and frees reaches its account and the pool, within one chunk; other threads charge nothing;
//! limits answer as documented.

use std::alloc::System;
use std::sync::Arc;

use quince_memory::{Account, Counting, Exceeded, Pool, CHUNK};

#[global_allocator]
static ALLOCATOR: Counting<System> = Counting(System);

const MIB: usize = 1 << 20;

fn near(value: u64, expected: u64) -> bool {
    value.abs_diff(expected) <= CHUNK as u64 * 2
}

#[test]
fn a_charging_thread_is_counted_at_real_size_and_others_are_not() {
    let pool = Pool::new(0);
    let account = Account::new(0, Arc::clone(&pool));
    let outside = vec![1u8; 4 * MIB];
    {
        let _charging = account.charge_this_thread();
        let inside = vec![1u8; 8 * MIB];
        assert!(near(account.used(), 8 * MIB as u64), "{}", account.used());
        let strings: Vec<String> = (0..1000).map(|i| "x".repeat(1000 + i % 7)).collect();
        assert!(account.used() >= (8 * MIB + 1_000_000) as u64);
        drop(strings);
        drop(inside);
        assert!(account.used() < CHUNK as u64 * 2, "{}", account.used());
        assert!(near(
            account.peak(),
            (8 * MIB + 1_003_000 + 24 * 1000) as u64
        ));
    }
    drop(outside);
    let other = std::thread::spawn(|| vec![1u8; 16 * MIB].len())
        .join()
        .expect("thread");
    assert_eq!(other, 16 * MIB);
    assert!(account.used() < CHUNK as u64 * 2);
    assert!(near(pool.used(), account.used()));
}

#[test]
fn memory_kept_past_the_guard_stays_charged_until_released_or_dropped() {
    let pool = Pool::new(0);
    let account = Account::new(0, Arc::clone(&pool));
    let kept = {
        let _charging = account.charge_this_thread();
        vec![7u8; 4 * MIB]
    };
    assert!(near(account.used(), 4 * MIB as u64));
    assert!(near(pool.used(), 4 * MIB as u64));
    drop(kept);
    assert!(
        near(account.used(), 4 * MIB as u64),
        "freed outside: still charged"
    );
    account.release(4 * MIB as u64);
    assert!(account.used() < CHUNK as u64 * 2);
    let other = Account::new(0, Arc::clone(&pool));
    let _kept = {
        let _charging = other.charge_this_thread();
        vec![7u8; 2 * MIB]
    };
    assert!(near(pool.used(), 2 * MIB as u64));
    drop(other);
    assert!(
        pool.used() < CHUNK as u64 * 2,
        "a dropped account gives its bytes back"
    );
}

#[test]
fn guards_nest_and_give_the_outer_account_back() {
    let outer = Account::unlimited();
    let inner = Account::unlimited();
    let _o = outer.charge_this_thread();
    let a = vec![0u8; 2 * MIB];
    {
        let _i = inner.charge_this_thread();
        let b = vec![0u8; 3 * MIB];
        assert!(near(inner.used(), 3 * MIB as u64));
        std::mem::forget(b);
    }
    let c = vec![0u8; MIB];
    assert!(near(outer.used(), 3 * MIB as u64), "{}", outer.used());
    drop((a, c));
}

#[test]
fn limits_refuse_growth_and_allocations_known_in_advance() {
    let pool = Pool::new(0);
    let account = Account::new(4 * MIB as u64, Arc::clone(&pool));
    let _charging = account.charge_this_thread();
    assert_eq!(account.check(), Ok(()));
    assert_eq!(
        account.admit(8 * MIB as u64),
        Err(Exceeded::Own {
            limit: 4 * MIB as u64
        })
    );
    let big = vec![0u8; 5 * MIB];
    assert_eq!(
        account.check(),
        Err(Exceeded::Own {
            limit: 4 * MIB as u64
        })
    );
    drop(big);
    assert_eq!(account.check(), Ok(()));
    assert_eq!(pool.refused_own(), 2);

    // The pool's limit stops accounts that grow while it is passed, not those that hold steady.
    pool.set_limit(6 * MIB as u64);
    let steady = Account::new(0, Arc::clone(&pool));
    let held = {
        let _c = steady.charge_this_thread();
        vec![0u8; 3 * MIB]
    };
    assert_eq!(steady.check(), Ok(()), "within the pool's limit");
    let more = vec![0u8; 3 * MIB + 1];
    assert_eq!(
        account.check(),
        Err(Exceeded::Pool {
            limit: 6 * MIB as u64
        })
    );
    assert_eq!(steady.check(), Ok(()), "did not grow since its last check");
    assert_eq!(
        steady.admit(1),
        Err(Exceeded::Pool {
            limit: 6 * MIB as u64
        })
    );
    drop((more, held));
}
