//! `/_api/replication/...`: the cluster-internal route of DB servers. Only a superuser reaches
//! the installed cluster part; without one installed the path does not exist.

use crate::support;

use std::sync::{Arc, Mutex};

use http::Method;
use jsonwebtoken::{EncodingKey, Header};
use quince_errors::Result;
use quince_ops::{ClusterOps, InternalReply, InternalRequest, ServerRole};
use serde_json::json;
use support::{request, Server, SECRET};

/// A cluster part that records what it was asked and answers 202 with a fixed body.
#[derive(Default)]
struct Recorder(Mutex<Vec<InternalRequest>>);

impl ClusterOps for Recorder {
    fn role(&self) -> ServerRole {
        ServerRole::DbServer
    }

    fn server_id(&self) -> String {
        "PRMR-test".into()
    }

    fn internal(&self, request: InternalRequest) -> Result<InternalReply> {
        self.0.lock().unwrap().push(request);
        Ok(InternalReply {
            status: 202,
            body: br#"{"applied":1}"#.to_vec(),
        })
    }
}

fn superuser(
    method: Method,
    target: &str,
    body: &str,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    let token = jsonwebtoken::encode(
        &Header::default(),
        &json!({"iss": "arangodb", "server_id": "PRMR-other"}),
        &EncodingKey::from_secret(SECRET),
    )
    .unwrap();
    let mut req = request(method, target, body);
    req.headers_mut()
        .insert("authorization", format!("bearer {token}").parse().unwrap());
    req
}

#[tokio::test]
async fn only_superusers_reach_the_cluster_and_only_when_there_is_one() {
    let s = Server::new();
    s.send(superuser(Method::POST, "/_api/replication/apply", "{}"))
        .await
        .assert_error(404, 404);

    let recorder = Arc::new(Recorder::default());
    s.api.install_cluster(recorder.clone());
    s.root(Method::POST, "/_api/replication/apply", "{}")
        .await
        .assert_error(403, 11);
    s.send(request(Method::POST, "/_api/replication/apply", "{}"))
        .await
        .assert_error(401, 11);
    assert!(recorder.0.lock().unwrap().is_empty());

    let reply = s
        .send(superuser(
            Method::GET,
            "/_db/_system/_api/replication/keys?shard=s12&bucket=0",
            "",
        ))
        .await;
    assert_eq!(reply.assert_success(202), json!({"applied": 1}));
    let body = r#"{"shard":"s12"}"#;
    s.send(superuser(Method::POST, "/_api/replication/apply", body))
        .await
        .assert_success(202);
    let seen = recorder.0.lock().unwrap();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].database, "_system");
    assert_eq!(seen[0].path, vec!["keys"]);
    assert_eq!(seen[0].param("shard"), Some("s12"));
    assert_eq!(seen[0].param("bucket"), Some("0"));
    assert_eq!(seen[1].body, body.as_bytes());
}

/// A cluster part that calls the requests with `quick=yes` quick, and records the thread each
/// request ran on.
#[derive(Default)]
struct Threads(Mutex<Vec<std::thread::ThreadId>>);

impl ClusterOps for Threads {
    fn role(&self) -> ServerRole {
        ServerRole::DbServer
    }

    fn server_id(&self) -> String {
        "PRMR-test".into()
    }

    fn internal(&self, _request: InternalRequest) -> Result<InternalReply> {
        self.0.lock().unwrap().push(std::thread::current().id());
        Ok(InternalReply {
            status: 200,
            body: b"{}".to_vec(),
        })
    }

    fn internal_is_quick(&self, request: &InternalRequest) -> bool {
        request.param("quick") == Some("yes")
    }
}

#[tokio::test(flavor = "current_thread")]
async fn quick_requests_run_on_the_connection_task_and_others_on_the_blocking_pool() {
    let s = Server::new();
    let threads = Arc::new(Threads::default());
    s.api.install_cluster(threads.clone());
    let runtime = std::thread::current().id();
    for (target, inline) in [
        ("/_api/replication/apply?quick=yes", true),
        ("/_api/replication/apply?quick=no", false),
        ("/_api/replication/apply", false),
    ] {
        s.send(superuser(Method::POST, target, "{}"))
            .await
            .assert_success(200);
        let seen = std::mem::take(&mut *threads.0.lock().unwrap());
        assert_eq!(seen.len(), 1, "{target}");
        assert_eq!(seen[0] == runtime, inline, "{target}");
    }
}
