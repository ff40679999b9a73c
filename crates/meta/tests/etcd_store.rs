//! `EtcdStore`'s own behaviour beyond the shared scenarios (`conformance.rs`): compacted
//! watches, unreachable members, and the store's runtime inside another runtime. Each test
//! starts a single-member etcd; it skips with a message when the `etcd` binary is missing,
//! unless `QUINCE_REQUIRE_ETCD=1` is set.

use crate::support;

use std::time::{Duration, Instant};

use quince_meta::etcd_wire::{ConnectOptions, Rpc};
use quince_meta::{EtcdOptions, EtcdStore, MetaError, MetaStore};
use support::EtcdCluster;

fn quick() -> EtcdOptions {
    EtcdOptions {
        call_timeout: Duration::from_secs(1),
        connect_timeout: Duration::from_millis(500),
    }
}

#[test]
fn a_watch_from_a_compacted_revision_answers_compacted() {
    let Some(cluster) = EtcdCluster::start("compacted watch", 1) else {
        return;
    };
    let store = EtcdStore::connect(&cluster.endpoints(), EtcdOptions::default()).unwrap();
    let first = store.put("/c/a", b"1").unwrap();
    store.put("/c/a", b"2").unwrap();
    let last = store.put("/c/b", b"3").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let options = ConnectOptions {
            connect_timeout: Duration::from_secs(2),
            keep_alive: None,
            require_leader: false,
        };
        let client = Rpc::new(&[cluster.client_url(0)], &options).unwrap();
        client.compact(last, true).await.unwrap();
    });
    match store.watch("/c/", first) {
        Err(MetaError::Compacted(revision)) => assert_eq!(revision, last),
        Err(other) => panic!("expected Compacted, got {other}"),
        Ok(_) => panic!("a compacted revision was watched"),
    }
    let watch = store
        .watch("/c/", last)
        .expect("the compaction revision itself is kept");
    let batch = watch.next_timeout(Duration::from_secs(5)).unwrap().unwrap();
    assert_eq!(batch[0].entry.mod_revision, last);
    assert_eq!(batch[0].entry.key, "/c/b");
}

#[test]
fn unreachable_etcd_answers_unavailable_in_time() {
    let Some(mut cluster) = EtcdCluster::start("unreachable etcd", 1) else {
        return;
    };
    let store = EtcdStore::connect(&cluster.endpoints(), quick()).unwrap();
    store.put("/u/a", b"1").unwrap();
    let lease = store.grant_lease(Duration::from_secs(30)).unwrap();
    let watch = store.watch("/u/", 1).unwrap();
    cluster.kill(0);
    // Each call gives up after its timeout (1 s here), with some slack for a loaded machine.
    let timed = |what: &str, call: &dyn Fn() -> Result<(), MetaError>| {
        let started = Instant::now();
        let outcome = call();
        assert!(
            matches!(outcome, Err(MetaError::Unavailable(_))),
            "{what}: {outcome:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{what} took {:?}",
            started.elapsed()
        );
    };
    timed("get", &|| store.get("/u/a").map(|_| ()));
    timed("put", &|| store.put("/u/b", b"2").map(|_| ()));
    timed("keep_alive", &|| store.keep_alive(lease));
    timed("grant", &|| {
        store.grant_lease(Duration::from_secs(5)).map(|_| ())
    });
    // The watch delivers what it saw, then ends with an error once it cannot resume.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match watch.next_timeout(Duration::from_millis(100)) {
            Ok(_) => assert!(Instant::now() < deadline, "the watch never failed"),
            Err(error) => {
                assert!(matches!(error, MetaError::Unavailable(_)), "{error}");
                break;
            }
        }
    }
    let nobody = EtcdStore::connect(&cluster.endpoints(), quick());
    assert!(matches!(nobody, Err(MetaError::Unavailable(_))));
    // The member comes back from its data directory: the same store works again.
    let reconnects = store.reconnects();
    cluster.restart(0);
    let restarted = Instant::now();
    let deadline = restarted + Duration::from_secs(10);
    while store.get("/u/a").is_err() {
        assert!(Instant::now() < deadline, "the store never recovered");
    }
    eprintln!(
        "the store works again {:?} after the member's restart ({} client replacements \
         while it was down, {} after)",
        restarted.elapsed(),
        reconnects,
        store.reconnects() - reconnects
    );
    assert_eq!(store.get("/u/a").unwrap().unwrap().value, b"1");
}

#[test]
fn endpoints_take_tcp_http_and_bare_forms() {
    let Some(cluster) = EtcdCluster::start("endpoint forms", 1) else {
        return;
    };
    let http = cluster.client_url(0);
    let bare = http.trim_start_matches("http://").to_string();
    for endpoint in [cluster.endpoints()[0].clone(), http.clone(), bare] {
        let store = EtcdStore::connect(std::slice::from_ref(&endpoint), quick()).unwrap();
        assert_eq!(store.endpoints(), std::slice::from_ref(&http));
        store.put("/forms", endpoint.as_bytes()).unwrap();
    }
    assert!(matches!(
        EtcdStore::connect(&["ssl://127.0.0.1:1".to_string()], quick()),
        Err(MetaError::Unavailable(_))
    ));
    assert!(matches!(
        EtcdStore::connect(&[], quick()),
        Err(MetaError::Unavailable(_))
    ));
}

#[test]
fn a_store_made_and_dropped_inside_another_runtime_does_not_panic() {
    let Some(cluster) = EtcdCluster::start("store inside a runtime", 1) else {
        return;
    };
    let endpoints = cluster.endpoints();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let answer = runtime.block_on(runtime.spawn(async move {
        let store = EtcdStore::connect(&endpoints, EtcdOptions::default()).unwrap();
        let revision = store.put("/inside", b"1").unwrap();
        let watch = store.watch("/inside", revision).unwrap();
        drop(store);
        // The store's runtime is gone with its last handle: the watch ends.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut ended = false;
        while !ended && Instant::now() < deadline {
            ended = watch.next_timeout(Duration::from_millis(50)).is_err();
        }
        (revision, ended)
    }));
    let (revision, ended) = answer.unwrap();
    assert!(revision > 0);
    assert!(ended, "a watch of a dropped store ends with an error");
}

#[test]
fn a_watch_resumes_by_itself_when_its_member_comes_back_in_time() {
    let Some(mut cluster) = EtcdCluster::start("watch resume", 1) else {
        return;
    };
    let store = EtcdStore::connect(&cluster.endpoints(), EtcdOptions::default()).unwrap();
    let first = store.put("/r/a", b"1").unwrap();
    let watch = store.watch("/r/", first).unwrap();
    let batch = watch.next_timeout(Duration::from_secs(5)).unwrap().unwrap();
    assert_eq!(batch[0].entry.mod_revision, first);
    cluster.kill(0);
    cluster.restart(0);
    let second = store.put("/r/b", b"2").unwrap();
    let third = store.put("/r/a", b"3").unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.len() < 2 {
        assert!(Instant::now() < deadline, "the watch stalled: {seen:?}");
        let batch = watch
            .next_timeout(Duration::from_millis(100))
            .expect("the watch resumes without an error")
            .unwrap_or_default();
        seen.extend(
            batch
                .into_iter()
                .map(|e| (e.entry.key, e.entry.mod_revision)),
        );
    }
    assert_eq!(
        seen,
        [("/r/b".to_string(), second), ("/r/a".to_string(), third)],
        "nothing repeated, nothing lost"
    );
    assert!(watch.drain().unwrap().is_empty());
}
