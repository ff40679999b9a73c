//! Asynchronous jobs through the whole pipeline (`Api::serve`), on a current-thread runtime:
//! one job worker, which runs only when the test awaits, so the order of events is exact.
//! Covers the shared queue bound, the stored reply, cancel of a queued job, and shutdown's
//! drain (queued jobs finished, or dropped and never started when the drain times out).

use crate::support;

use std::time::Duration;

use http::Method;
use support::{as_root, request, Server};

/// An asynchronous request as root.
fn async_request(
    method: Method,
    target: &str,
    body: &str,
    mode: &str,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let mut req = as_root(request(method, target, body));
    req.headers_mut()
        .insert("x-arango-async", mode.parse().unwrap());
    req
}

async fn count(server: &Server, collection: &str) -> u64 {
    let reply = server
        .root(
            Method::GET,
            &format!("/_api/collection/{collection}/count"),
            "",
        )
        .await;
    reply.assert_success(200)["count"].as_u64().unwrap()
}

/// Polls the job's status until it is done (each poll lets the worker run).
async fn wait_done(server: &Server, id: &str) {
    for _ in 0..10_000 {
        let reply = server
            .root(Method::GET, &format!("/_api/job/{id}"), "")
            .await;
        match reply.status {
            200 => return,
            204 => tokio::task::yield_now().await,
            other => panic!("job {id}: status {other}"),
        }
    }
    panic!("job {id} never finished");
}

#[tokio::test]
async fn stored_jobs_reply_later_with_their_original_reply() {
    let server = Server::new();
    server
        .root(Method::POST, "/_api/collection", r#"{"name":"c"}"#)
        .await
        .assert_success(200);
    let queued = server
        .send(async_request(
            Method::POST,
            "/_api/document/c",
            r#"{"_key":"k"}"#,
            "store",
        ))
        .await;
    assert_eq!(queued.status, 202);
    assert!(queued.body.is_empty());
    let id = queued.header("x-arango-async-id").unwrap().to_string();
    wait_done(&server, &id).await;
    let fetched = server
        .root(Method::PUT, &format!("/_api/job/{id}"), "")
        .await;
    assert_eq!(fetched.header("x-arango-async-id"), Some(id.as_str()));
    assert_eq!(fetched.assert_success(202)["_key"], "k");
    server
        .root(Method::PUT, &format!("/_api/job/{id}"), "")
        .await
        .assert_error(404, 404);
}

#[tokio::test]
async fn queued_jobs_share_the_queue_bound_and_cancel_frees_it() {
    let server = Server::with(|c| {
        c.queue_size_max = 2;
        c.jobs_per_user_max = 2;
    });
    server
        .root(Method::POST, "/_api/collection", r#"{"name":"c"}"#)
        .await
        .assert_success(200);
    let first = server
        .send(async_request(
            Method::POST,
            "/_api/document/c",
            r#"{"_key":"a"}"#,
            "store",
        ))
        .await;
    let second = server
        .send(async_request(
            Method::POST,
            "/_api/document/c",
            r#"{"_key":"b"}"#,
            "store",
        ))
        .await;
    assert_eq!((first.status, second.status), (202, 202));
    // Neither job has run (the worker has not been polled): both units are taken.
    server
        .send(async_request(Method::GET, "/_api/version", "", "store"))
        .await
        .assert_error(503, 21003);
    server
        .root(Method::GET, "/_api/version", "")
        .await
        .assert_error(503, 21003);
    let second_id = second.header("x-arango-async-id").unwrap();
    let cancel = server
        .root(Method::PUT, &format!("/_api/job/{second_id}/cancel"), "")
        .await;
    assert_eq!(
        cancel.assert_success(200),
        serde_json::json!({"result": true})
    );
    server
        .root(Method::GET, "/_api/version", "")
        .await
        .assert_success(200);
    wait_done(&server, first.header("x-arango-async-id").unwrap()).await;
    server
        .root(Method::PUT, &format!("/_api/job/{second_id}"), "")
        .await
        .assert_error(410, 21);
    assert_eq!(
        count(&server, "c").await,
        1,
        "the cancelled insert never ran"
    );
}

#[tokio::test]
async fn shutdown_runs_queued_jobs() {
    let server = Server::new();
    server
        .root(Method::POST, "/_api/collection", r#"{"name":"c"}"#)
        .await
        .assert_success(200);
    for i in 0..50 {
        let body = format!(r#"{{"_key":"k{i}"}}"#);
        let reply = server
            .send(async_request(
                Method::POST,
                "/_api/document/c",
                &body,
                "true",
            ))
            .await;
        assert_eq!(reply.status, 202);
    }
    server.api.begin_shutdown();
    server.api.finish_jobs(Duration::from_secs(30)).await;
    assert_eq!(
        server
            .catalog
            .database("_system")
            .unwrap()
            .collection("c")
            .unwrap()
            .count(),
        50
    );
}

#[tokio::test]
async fn shutdown_drops_jobs_that_cannot_start_in_time() {
    let server = Server::new();
    server
        .root(Method::POST, "/_api/collection", r#"{"name":"c"}"#)
        .await
        .assert_success(200);
    let sleeper = server
        .send(async_request(
            Method::GET,
            "/_admin/sleep?duration=300",
            "",
            "store",
        ))
        .await;
    assert_eq!(sleeper.status, 202);
    for i in 0..5 {
        let body = format!(r#"{{"_key":"k{i}"}}"#);
        let reply = server
            .send(async_request(
                Method::POST,
                "/_api/document/c",
                &body,
                "true",
            ))
            .await;
        assert_eq!(reply.status, 202);
    }
    server.api.begin_shutdown();
    // The worker takes the sleeper first (arrival order); the inserts cannot start before
    // the drain times out, so they are dropped, and the sleeper is cancelled.
    let drained = tokio::time::timeout(
        Duration::from_secs(60),
        server.api.finish_jobs(Duration::from_millis(200)),
    )
    .await;
    assert!(
        drained.is_ok(),
        "the drain ends: the sleeping job was cancelled"
    );
    assert_eq!(
        server
            .catalog
            .database("_system")
            .unwrap()
            .collection("c")
            .unwrap()
            .count(),
        0
    );
}
