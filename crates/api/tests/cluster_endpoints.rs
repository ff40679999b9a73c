//! The cluster's endpoints through the pipeline: what a single server answers, and what a
//! member answers with its `ClusterOps` installed (a recording fake here; the cluster crate's
//! own tests cover the real one over a metadata store).

use crate::support;

use std::sync::{Arc, Mutex};

use http::Method;
use quince_errors::Result;
use quince_ops::{ClusterOps, InternalReply, InternalRequest, ServerRole};
use serde_json::{json, Value};
use support::{request, Server};

#[derive(Default)]
struct FakeMember {
    maintenance: Mutex<Vec<Option<u64>>>,
}

impl ClusterOps for FakeMember {
    fn role(&self) -> ServerRole {
        ServerRole::Coordinator
    }

    fn server_id(&self) -> String {
        "CRDN-fake".into()
    }

    fn internal(&self, _request: InternalRequest) -> Result<InternalReply> {
        Err(quince_errors::ArangoError::new(
            quince_errors::HTTP_NOT_FOUND,
        ))
    }

    fn health(&self) -> Result<Value> {
        Ok(json!({"ClusterId": "c", "Health": {"CRDN-fake": {"Status": "GOOD"}}}))
    }

    fn coordinator_endpoints(&self) -> Result<Vec<String>> {
        Ok(vec!["tcp://127.0.0.1:1".into(), "tcp://127.0.0.1:2".into()])
    }

    fn set_maintenance(&self, seconds: Option<u64>) -> Result<Option<String>> {
        self.maintenance.lock().unwrap().push(seconds);
        Ok(seconds.map(|s| format!("for {s} s")))
    }
}

#[tokio::test]
async fn a_single_server_is_no_member() {
    let s = Server::new();
    let id = s.root(Method::GET, "/_admin/server/id", "").await;
    id.assert_error(500, 4);
    for path in ["/_admin/cluster/health", "/_api/cluster/endpoints"] {
        s.root(Method::GET, path, "").await.assert_error(501, 1471);
    }
    s.root(Method::PUT, "/_admin/cluster/maintenance", "\"on\"")
        .await
        .assert_error(501, 1471);
}

#[tokio::test]
async fn a_member_answers_its_role_id_health_and_endpoints() {
    let s = Server::new();
    let member = Arc::new(FakeMember::default());
    s.api.install_cluster(member.clone());
    let role = s
        .root(Method::GET, "/_admin/server/role", "")
        .await
        .assert_success(200);
    assert_eq!(role["role"], "COORDINATOR");
    let id = s
        .root(Method::GET, "/_admin/server/id", "")
        .await
        .assert_success(200);
    assert_eq!(id["id"], "CRDN-fake");
    let health = s
        .root(Method::GET, "/_admin/cluster/health", "")
        .await
        .assert_success(200);
    assert_eq!(health["Health"]["CRDN-fake"]["Status"], "GOOD");
    assert_eq!(health["ClusterId"], "c");
    let endpoints = s
        .root(Method::GET, "/_api/cluster/endpoints", "")
        .await
        .assert_success(200);
    assert_eq!(
        endpoints["endpoints"],
        json!([{"endpoint": "tcp://127.0.0.1:1"}, {"endpoint": "tcp://127.0.0.1:2"}])
    );
}

#[tokio::test]
async fn the_maintenance_switch_takes_arangodb_bodies_from_administrators() {
    let s = Server::new();
    let member = Arc::new(FakeMember::default());
    s.api.install_cluster(member.clone());
    let on = s
        .root(Method::PUT, "/_admin/cluster/maintenance", "\"on\"")
        .await
        .assert_success(200);
    assert_eq!(on["warning"], "for 3600 s");
    s.root(Method::PUT, "/_admin/cluster/maintenance", "\"7200\"")
        .await
        .assert_success(200);
    let off = s
        .root(Method::PUT, "/_admin/cluster/maintenance", "\"off\"")
        .await
        .assert_success(200);
    assert!(off.get("warning").is_none());
    for bad in ["\"ON\"", "true", "{\"mode\":\"on\"}", "\"0\"", "\"-5\""] {
        s.root(Method::PUT, "/_admin/cluster/maintenance", bad)
            .await
            .assert_error(400, 400);
    }
    assert_eq!(
        *member.maintenance.lock().unwrap(),
        vec![Some(3600), Some(7200), None]
    );
    // A user without rights on _system may not switch it.
    s.root(
        Method::POST,
        "/_api/user",
        r#"{"user": "plain", "passwd": "p"}"#,
    )
    .await
    .assert_success(201);
    s.root(
        Method::PUT,
        "/_api/user/plain/database/_system",
        r#"{"grant": "ro"}"#,
    )
    .await
    .assert_success(200);
    let mut req = request(Method::PUT, "/_admin/cluster/maintenance", "\"on\"");
    req.headers_mut().insert(
        http::header::AUTHORIZATION,
        support::basic("plain", "p").parse().unwrap(),
    );
    s.send(req).await.assert_error(403, 11);
}
