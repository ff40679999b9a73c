//! `figures` counts the journals in use (the active one and full ones handed off and not sealed
//! yet), never the spare journal the maintenance pass makes ahead of need, not even while it is
//! being made.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{put, sim_store};

#[test]
fn a_spare_being_made_is_not_a_journal() {
    let (io, store) = sim_store(1 << 20);
    let store = Arc::new(store);
    put(&store, b"k", 1, b"v", false).unwrap();
    assert_eq!(store.figures().journals_count, 1);
    // Every fsync takes a while, so the maintenance pass spends time between adding the spare
    // to the store's files and installing it.
    io.set_sync_delay(Some(Duration::from_millis(20)));
    let done = Arc::new(AtomicBool::new(false));
    let maintainer = {
        let (store, done) = (Arc::clone(&store), Arc::clone(&done));
        std::thread::spawn(move || {
            store.maintain().unwrap();
            done.store(true, Ordering::Release);
        })
    };
    let mut seen = Vec::new();
    while !done.load(Ordering::Acquire) {
        seen.push(store.figures().journals_count);
    }
    maintainer.join().unwrap();
    io.set_sync_delay(None);
    assert!(
        seen.iter().all(|&count| count == 1),
        "journal counts seen: {seen:?}"
    );
    assert_eq!(store.figures().journals_count, 1);
    assert_eq!(store.figures().alive_count, 1);
    store.check_consistency().unwrap();
}
