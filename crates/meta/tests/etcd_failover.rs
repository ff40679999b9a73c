//! A three-member etcd cluster keeps serving an `EtcdStore` through the loss of a member and
//! then of its leader: the store-level form of "an etcd member killed, then etcd's leader
//! killed: the cluster keeps serving".
//!
//! Three members survive one loss, not two at once: the killed follower is restarted (it
//! rejoins from its data directory) before the leader is killed, as an operator or
//! `quince start` would. A watch opened before the kills must deliver every change exactly
//! once: by itself (the store resumes it), or after an error, from a new watch opened at the
//! revision after the last one seen.
//!
//! Skips with a message when the `etcd` binary is missing, unless `QUINCE_REQUIRE_ETCD=1`.

use crate::support;

use std::time::{Duration, Instant};

use quince_meta::etcd_wire::{ConnectOptions, Rpc};
use quince_meta::{EtcdOptions, EtcdStore, Event, MetaStore, Revision, Watch};
use support::EtcdCluster;

/// The member that leads, as an index into the cluster's members.
fn leader_index(cluster: &EtcdCluster, alive: &[usize]) -> usize {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let mut ids = Vec::new();
            let mut leader = 0;
            for &i in alive {
                let options = ConnectOptions {
                    connect_timeout: Duration::from_millis(500),
                    keep_alive: None,
                    require_leader: false,
                };
                let client = Rpc::new(&[cluster.client_url(i)], &options).unwrap();
                let status = tokio::time::timeout(Duration::from_secs(1), client.status());
                if let Ok(Ok(status)) = status.await {
                    let me = status.header.map_or(0, |h| h.member_id);
                    ids.push((me, i));
                    if status.leader != 0 {
                        leader = status.leader;
                    }
                }
            }
            if let Some(&(_, i)) = ids.iter().find(|(id, _)| *id == leader) {
                return i;
            }
            assert!(Instant::now() < deadline, "no leader among {alive:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// Puts `count` keys and answers the acknowledged ones with their revisions. A put that
/// answers `Unavailable` (its connection broke with the member it was sent to: it may or may
/// not have been applied) is tried again under a key of its own, until a deadline.
fn put_all(store: &EtcdStore, from: usize, count: usize) -> Vec<(String, Revision)> {
    let deadline = Instant::now() + Duration::from_secs(15);
    (from..from + count)
        .map(|n| {
            let mut attempt = 0;
            loop {
                attempt += 1;
                let key = format!("/f/{n:04}-{attempt}");
                match store.put(&key, b"v") {
                    Ok(revision) => return (key, revision),
                    Err(error) => {
                        assert!(Instant::now() < deadline, "put {key}: {error}");
                        eprintln!("put {key}: {error}; trying again");
                    }
                }
            }
        })
        .collect()
}

/// The watch's events so far, reopening it from the last revision seen plus one whenever it
/// fails; answers how many times it had to.
fn follow(
    store: &EtcdStore,
    watch: &mut Watch,
    seen: &mut Vec<Event>,
    until: Revision,
    from: Revision,
) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut reopened = 0;
    while seen.last().map_or(from - 1, |e| e.entry.mod_revision) < until {
        assert!(Instant::now() < deadline, "the watch stalled: {seen:?}");
        match watch.next_timeout(Duration::from_millis(100)) {
            Ok(Some(batch)) => seen.extend(batch),
            Ok(None) => {}
            Err(error) => {
                eprintln!("watch failed ({error}); reopened from the last revision + 1");
                let next = seen.last().map_or(from, |e| e.entry.mod_revision + 1);
                if let Ok(again) = store.watch("/f/", next) {
                    *watch = again;
                    reopened += 1;
                }
            }
        }
    }
    reopened
}

#[test]
fn killing_a_member_then_the_leader_keeps_the_store_serving() {
    let Some(mut cluster) = EtcdCluster::start("etcd failover", 3) else {
        return;
    };
    let started = Instant::now();
    let store = EtcdStore::connect(&cluster.endpoints(), EtcdOptions::default()).unwrap();
    let from = store.range("").unwrap().revision + 1;
    let mut watch = store.watch("/f/", from).unwrap();
    let mut written = put_all(&store, 0, 20);

    let leader = leader_index(&cluster, &[0, 1, 2]);
    let follower = (leader + 1) % 3;
    cluster.kill(follower);
    let killed = Instant::now();
    written.extend(put_all(&store, 20, 20));
    assert!(store.range("/f/").unwrap().entries.len() >= 40);
    eprintln!(
        "follower {follower} killed: 20 puts in {:?}",
        killed.elapsed()
    );

    cluster.restart(follower);
    let leader = leader_index(&cluster, &[0, 1, 2]);
    cluster.kill(leader);
    let killed = Instant::now();
    // Writes and reads from the moment of the kill, side by side. A write sent before the
    // members noticed the leader's death is lost with it and answers Unavailable after the
    // call timeout (it may or may not have been applied); calls must succeed again within a
    // few seconds all the same.
    let (recovered, writes_recovered, attempts, reads_recovered) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let deadline = killed + Duration::from_secs(15);
            let mut attempts = 0;
            loop {
                attempts += 1;
                // A put that failed may still have been applied: each try writes its own key.
                let probe = format!("/f/probe{attempts}");
                match store.put(&probe, b"p") {
                    Ok(revision) => return ((probe, revision), killed.elapsed(), attempts),
                    Err(error) => {
                        assert!(Instant::now() < deadline, "writes never recovered: {error}");
                        eprintln!("write after the leader's death: {error}");
                    }
                }
            }
        });
        let deadline = killed + Duration::from_secs(15);
        while let Err(error) = store.range("/f/") {
            assert!(Instant::now() < deadline, "reads never recovered: {error}");
        }
        let reads_recovered = killed.elapsed();
        let (recovered, writes_recovered, attempts) = writer.join().unwrap();
        (recovered, writes_recovered, attempts, reads_recovered)
    });
    eprintln!(
        "leader {leader} killed: reads succeed again after {reads_recovered:?}, writes after \
         {writes_recovered:?} ({attempts} attempts)"
    );
    written.push(recovered);
    written.extend(put_all(&store, 40, 20));

    let snapshot = store.range("/f/").unwrap();
    assert!(snapshot.entries.len() >= 61);
    let mut seen = Vec::new();
    let reopened = follow(&store, &mut watch, &mut seen, snapshot.revision, from);
    let delivered: Vec<(String, Revision)> = seen
        .iter()
        .map(|e| (e.entry.key.clone(), e.entry.mod_revision))
        .collect();
    let mut stored: Vec<(String, Revision)> = snapshot
        .entries
        .iter()
        .map(|e| (e.key.clone(), e.mod_revision))
        .collect();
    stored.sort_by_key(|(_, revision)| *revision);
    assert_eq!(delivered, stored, "every change exactly once, in order");
    for (key, revision) in &written {
        assert!(
            stored.contains(&(key.clone(), *revision)),
            "acknowledged put {key}@{revision} is stored"
        );
    }
    eprintln!(
        "watch reopened {reopened} times; the client was replaced {} times; test body took {:?}",
        store.reconnects(),
        started.elapsed()
    );
}
