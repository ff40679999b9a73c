//! Where document work runs: a single-document write inline on its connection's task, and so a
//! multi-document write of one item (a cluster coordinator's request to a shard leader), every
//! multi-document write of more items on the blocking pool, never on a runtime worker. A hook
//! of the write path records the thread each change is decided on; the tests run on a
//! current-thread runtime, so the runtime's one worker is the test's own thread.

use std::sync::Arc;
use std::thread::{self, ThreadId};

use http::Method;
use parking_lot::Mutex;
use quince_db::{Change, CollectionProperties, CollectionType, DocumentHook, HookFactory, Version};
use serde_json::json;

use super::support::Fixture;

/// Records the thread of every decision.
#[derive(Default)]
struct Threads(Mutex<Vec<ThreadId>>);

impl DocumentHook for Threads {
    fn name(&self) -> &str {
        "threads"
    }
    fn check(&self, _change: &Change<'_>) -> quince_errors::Result<()> {
        self.0.lock().push(thread::current().id());
        Ok(())
    }
    fn applied(&self, _change: &Change<'_>) {}
    fn aborted(&self, _change: &Change<'_>) {}
    fn truncated(&self) {}
    fn recovered(&self, _key: &str, _version: Version<'_>) -> quince_errors::Result<()> {
        Ok(())
    }
}

/// Hands collection `c` the one shared recorder.
struct Shared(Arc<Threads>);

impl HookFactory for Shared {
    fn hooks_for(&self, _db: &str, c: &CollectionProperties) -> Vec<Arc<dyn DocumentHook>> {
        match c.name.as_str() {
            "c" => vec![Arc::clone(&self.0) as Arc<dyn DocumentHook>],
            _ => Vec::new(),
        }
    }
}

impl Threads {
    /// The threads recorded since the last call.
    fn take(&self) -> Vec<ThreadId> {
        std::mem::take(&mut *self.0.lock())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn multi_document_writes_leave_the_runtime_thread_and_single_ones_stay() {
    let threads = Arc::new(Threads::default());
    let fx = Fixture::with_hooks(Arc::new(Shared(Arc::clone(&threads))));
    fx.collection("c", CollectionType::Document);
    let runtime = thread::current().id();

    let reply = fx
        .call(Method::POST, "document", &["c"])
        .json(json!({"_key": "a"}))
        .document()
        .await;
    assert_eq!(reply.status, 202);
    assert_eq!(threads.take(), vec![runtime], "a single insert runs inline");

    let one = [
        (Method::POST, json!([{"_key": "o"}])),
        (Method::PATCH, json!([{"_key": "o", "x": 1}])),
        (Method::PUT, json!([{"_key": "o"}])),
        (Method::DELETE, json!(["o"])),
    ];
    for (method, body) in one {
        let reply = fx
            .call(method.clone(), "document", &["c"])
            .json(body)
            .document()
            .await;
        assert_eq!(reply.status, 202, "{method}: {:?}", reply.body);
        assert_eq!(
            threads.take(),
            vec![runtime],
            "{method} of one document runs inline"
        );
    }

    let many = [
        (Method::POST, json!([{"_key": "b"}, {"_key": "c"}])),
        (
            Method::PATCH,
            json!([{"_key": "b", "x": 1}, {"_key": "c", "x": 1}]),
        ),
        (Method::PUT, json!([{"_key": "b"}, {"_key": "c"}])),
        (Method::DELETE, json!(["b", "c"])),
    ];
    for (method, body) in many {
        let reply = fx
            .call(method.clone(), "document", &["c"])
            .json(body)
            .document()
            .await;
        assert_eq!(reply.status, 202, "{method}: {:?}", reply.body);
        let seen = threads.take();
        assert_eq!(seen.len(), 2, "{method}");
        assert!(
            seen.iter().all(|t| *t != runtime),
            "{method} with many documents ran on the runtime's worker"
        );
    }
}
