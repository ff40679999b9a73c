//! The request pipeline in the order of §1.1: stopping, URL length, credentials, database,
//! access, queue time, in-flight bound, body size and encoding; and the headers of every
//! reply.

use crate::support;

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Version};
use hyper::body::{Body, Frame};
use quince_api::Received;
use support::{as_root, basic, request, Server, PASSWORD};
use tokio::sync::oneshot;

#[tokio::test]
async fn every_reply_carries_the_common_headers() {
    let s = Server::new();
    for reply in [
        s.root(Method::GET, "/_api/version", "").await,
        s.send(request(Method::GET, "/_api/version", "")).await,
        s.root(Method::GET, "/_api/nowhere", "").await,
    ] {
        assert_eq!(reply.header("server"), Some("ArangoDB"));
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
        let queued: f64 = reply
            .header("x-arango-queue-time-seconds")
            .expect("queue time header")
            .parse()
            .expect("a number");
        assert!(queued >= 0.0);
        assert!(reply
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json")));
    }
}

#[tokio::test]
async fn missing_credentials_are_401_with_an_invitation() {
    let s = Server::new();
    let reply = s.send(request(Method::GET, "/_api/version", "")).await;
    let message = reply.assert_error(401, 11);
    assert_eq!(message, "not authorized to execute this request");
    assert_eq!(
        reply.header("www-authenticate"),
        Some("Basic, realm=\"ArangoDB\"")
    );

    let mut req = request(Method::GET, "/_api/version", "");
    req.headers_mut()
        .insert("x-omit-www-authenticate", "1".parse().unwrap());
    let reply = s.send(req).await;
    reply.assert_error(401, 11);
    assert!(reply.header("www-authenticate").is_none());
}

#[tokio::test]
async fn wrong_credentials_are_401() {
    let s = Server::new();
    let mut req = request(Method::GET, "/_api/version", "");
    req.headers_mut()
        .insert("authorization", basic("root", "nope").parse().unwrap());
    s.send(req).await.assert_error(401, 11);
}

#[tokio::test]
async fn root_gets_through() {
    let s = Server::new();
    let body = s
        .root(Method::GET, "/_api/version", "")
        .await
        .assert_success(200);
    assert_eq!(body["server"], "arango");
    assert!(body["version"].as_str().unwrap().starts_with("3.12."));
}

#[tokio::test]
async fn open_paths_need_no_credentials() {
    let s = Server::new();
    let body = s
        .send(request(Method::GET, "/_admin/server/availability", ""))
        .await
        .assert_success(200);
    assert_eq!(body["mode"], "default");
    // Bad credentials do not matter on an open path either.
    let mut req = request(Method::GET, "/_admin/server/availability", "");
    req.headers_mut()
        .insert("authorization", basic("root", "nope").parse().unwrap());
    assert_eq!(s.send(req).await.status, 200);
}

#[tokio::test]
async fn missing_database_is_1228_for_root_and_401_for_strangers() {
    let s = Server::new();
    s.root(Method::GET, "/_db/nothere/_api/version", "")
        .await
        .assert_error(404, 1228);
    s.send(request(Method::GET, "/_db/nothere/_api/version", ""))
        .await
        .assert_error(401, 11);
}

#[tokio::test]
async fn database_prefix_is_percent_decoded() {
    let s = Server::new();
    s.root(Method::POST, "/_api/database", r#"{"name":"Quince db ü"}"#)
        .await
        .assert_success(201);
    let body = s
        .root(
            Method::GET,
            "/_db/Quince%20db%20%C3%BC/_api/database/current",
            "",
        )
        .await
        .assert_success(200);
    assert_eq!(body["result"]["name"], "Quince db ü");
}

#[tokio::test]
async fn unknown_paths_are_404_and_wrong_methods_405() {
    let s = Server::new();
    let message = s
        .root(Method::GET, "/_api/no-such-thing", "")
        .await
        .assert_error(404, 404);
    assert_eq!(message, "unknown path '/_api/no-such-thing'");
    let message = s
        .root(Method::GET, "/_db/_system/_api/version/extra", "")
        .await
        .assert_error(404, 404);
    assert_eq!(message, "unknown path '/_api/version/extra'");
    for (method, path) in [
        (Method::DELETE, "/_api/version"),
        (Method::PUT, "/_api/engine"),
        (Method::POST, "/_admin/time"),
        (Method::POST, "/_admin/metrics"),
    ] {
        s.root(method, path, "").await.assert_error(405, 405);
    }
}

#[tokio::test]
async fn stopping_server_answers_503() {
    let s = Server::new();
    s.api.begin_shutdown();
    s.root(Method::GET, "/_api/version", "")
        .await
        .assert_error(503, 30);
    s.send(request(Method::GET, "/_admin/server/availability", ""))
        .await
        .assert_error(503, 30);
}

#[tokio::test]
async fn long_urls_are_414() {
    let s = Server::new();
    let target = format!("/_api/version?x={}", "a".repeat(17 * 1024));
    s.root(Method::GET, &target, "")
        .await
        .assert_error(414, 414);
}

#[tokio::test]
async fn oversized_headers_are_431() {
    let s = Server::new();
    let mut req = as_root(request(Method::GET, "/_api/version", ""));
    for i in 0..70 {
        let name: http::HeaderName = format!("x-filler-{i}").parse().unwrap();
        req.headers_mut()
            .insert(name, "v".repeat(1000).parse().unwrap());
    }
    s.send(req).await.assert_error(431, 431);
}

#[tokio::test]
async fn queue_time_limit_is_enforced() {
    let s = Server::new();
    let mut req = as_root(request(Method::GET, "/_api/version", ""));
    req.extensions_mut()
        .insert(Received(Instant::now() - Duration::from_secs(2)));
    req.headers_mut()
        .insert("x-arango-queue-time-seconds", "0.5".parse().unwrap());
    s.send(req).await.assert_error(412, 21004);

    // A generous limit, or none (0), lets the request through.
    for limit in ["100", "0"] {
        let mut req = as_root(request(Method::GET, "/_api/version", ""));
        req.extensions_mut()
            .insert(Received(Instant::now() - Duration::from_secs(2)));
        req.headers_mut()
            .insert("x-arango-queue-time-seconds", limit.parse().unwrap());
        assert_eq!(s.send(req).await.status, 200, "limit {limit}");
    }
}

/// A body that announces when it is first read and then waits until released.
struct HeldBody {
    reading: Option<oneshot::Sender<()>>,
    release: oneshot::Receiver<()>,
}

impl Body for HeldBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        if let Some(reading) = self.reading.take() {
            let _ = reading.send(());
        }
        match Pin::new(&mut self.release).poll(cx) {
            Poll::Ready(_) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[tokio::test]
async fn requests_beyond_the_queue_bound_are_503_21003() {
    let s = Arc::new(Server::with(|c| c.queue_size_max = 1));
    let (reading, read_started) = oneshot::channel();
    let (release, released) = oneshot::channel();
    let held = Request::builder()
        .method(Method::POST)
        .uri("/_admin/echo")
        .header("authorization", basic("root", PASSWORD))
        .body(HeldBody {
            reading: Some(reading),
            release: released,
        })
        .unwrap();
    let api = s.api.clone();
    let first = tokio::spawn(async move { api.serve(held).await.status().as_u16() });
    // The first request is admitted and now waits for its body.
    read_started.await.unwrap();
    s.root(Method::GET, "/_api/version", "")
        .await
        .assert_error(503, 21003);
    release.send(()).unwrap();
    assert_eq!(first.await.unwrap(), 200);
    // Once it is answered there is room again.
    assert_eq!(s.root(Method::GET, "/_api/version", "").await.status, 200);
}

#[tokio::test]
async fn bodies_over_the_bound_are_413() {
    let s = Server::with(|c| c.body_size_max = 100);
    let big = format!("{{\"x\":\"{}\"}}", "a".repeat(200));
    s.root(Method::POST, "/_admin/echo", &big)
        .await
        .assert_error(413, 413);
    // Also when the Content-Length does not announce it.
    let mut req = as_root(request(Method::POST, "/_admin/echo", &big));
    req.headers_mut().remove("content-length");
    s.send(req).await.assert_error(413, 413);
    assert_eq!(s.root(Method::POST, "/_admin/echo", "{}").await.status, 200);
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[tokio::test]
async fn compressed_bodies_are_decoded_within_the_bound() {
    let s = Server::with(|c| c.body_size_max = 10_000);
    let text = r#"{"hello":"quince"}"#;
    let req = Request::builder()
        .method(Method::POST)
        .uri("/_admin/echo")
        .header("authorization", basic("root", PASSWORD))
        .header("content-encoding", "gzip")
        .body(http_body_util::Full::new(Bytes::from(gzip(
            text.as_bytes(),
        ))))
        .unwrap();
    let body = s.send(req).await.assert_success(200);
    assert_eq!(body["requestBody"], text);

    let bomb = gzip(&vec![b' '; 100_000]);
    assert!(bomb.len() < 10_000);
    let req = Request::builder()
        .method(Method::POST)
        .uri("/_admin/echo")
        .header("authorization", basic("root", PASSWORD))
        .header("content-encoding", "gzip")
        .body(http_body_util::Full::new(Bytes::from(bomb)))
        .unwrap();
    s.send(req).await.assert_error(413, 413);
}

#[tokio::test]
async fn http10_keep_alive_is_echoed() {
    let s = Server::new();
    let mut req = as_root(request(Method::GET, "/_api/version", ""));
    *req.version_mut() = Version::HTTP_10;
    req.headers_mut()
        .insert("connection", "Keep-Alive".parse().unwrap());
    let reply = s.send(req).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.header("connection"), Some("keep-alive"));

    let mut req = as_root(request(Method::GET, "/_api/version", ""));
    *req.version_mut() = Version::HTTP_10;
    assert!(s.send(req).await.header("connection").is_none());
}

#[tokio::test]
async fn without_authentication_everyone_is_root() {
    let s = Server::with(|c| c.authentication = false);
    let body = s
        .send(request(Method::GET, "/_admin/echo", ""))
        .await
        .assert_success(200);
    assert_eq!(body["user"], "root");
    s.send(request(Method::GET, "/_db/nothere/_api/version", ""))
        .await
        .assert_error(404, 1228);
}
