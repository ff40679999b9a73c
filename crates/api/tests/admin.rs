//! Server-information endpoints and `/_open/auth` through the pipeline.

use crate::support;

use http::Method;
use serde_json::Value;
use support::{request, Server, PASSWORD};

#[tokio::test]
async fn version_reports_arangodb_and_names_quince_in_details() {
    let s = Server::new();
    let plain = s
        .root(Method::GET, "/_api/version", "")
        .await
        .assert_success(200);
    assert_eq!(plain["license"], "community");
    assert!(plain.get("details").is_none());
    let detailed = s
        .root(Method::GET, "/_api/version?details=true", "")
        .await
        .assert_success(200);
    let details = &detailed["details"];
    assert_eq!(details["quince-version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(details["role"], "SINGLE");
    assert!(details["server-version"]
        .as_str()
        .unwrap()
        .starts_with("3.12."));
}

#[tokio::test]
async fn small_endpoints_have_their_shapes() {
    let s = Server::new();
    let role = s
        .root(Method::GET, "/_admin/server/role", "")
        .await
        .assert_success(200);
    assert_eq!(
        role,
        serde_json::json!({"error": false, "code": 200, "role": "SINGLE", "mode": "default"})
    );
    let engine = s
        .root(Method::GET, "/_api/engine", "")
        .await
        .assert_success(200);
    assert_eq!(engine["name"], "rocksdb", "the name 3.12 clients expect");
    assert_eq!(
        engine["quince"]["engine"], "journal",
        "what the engine really is"
    );
    assert!(engine["supports"].is_object());
    let time = s
        .root(Method::GET, "/_admin/time", "")
        .await
        .assert_success(200);
    assert!(time["time"].as_f64().unwrap() > 1.6e9);
    let license = s
        .root(Method::GET, "/_admin/license", "")
        .await
        .assert_success(200);
    assert_eq!(license, serde_json::json!({"license": "none"}));
    assert!(s.root(Method::PUT, "/_admin/license", "{}").await.status >= 400);
    let status = s
        .root(Method::GET, "/_admin/status", "")
        .await
        .assert_success(200);
    assert_eq!(status["serverInfo"]["role"], "SINGLE");
    assert_eq!(status["pid"], std::process::id());
}

#[tokio::test]
async fn echo_reflects_the_request() {
    let s = Server::new();
    let body = s
        .root(
            Method::POST,
            "/_admin/echo/a/b?flavour=quince&x=1+2",
            "raw text",
        )
        .await
        .assert_success(200);
    assert_eq!(body["requestType"], "POST");
    assert_eq!(body["requestBody"], "raw text");
    assert_eq!(body["rawRequestBody"]["data"][0], u64::from(b'r'));
    assert_eq!(body["parameters"]["flavour"], "quince");
    assert_eq!(body["parameters"]["x"], "1 2");
    assert_eq!(body["suffix"], serde_json::json!(["a", "b"]));
    assert_eq!(body["user"], "root");
    assert_eq!(body["database"], "_system");
    assert_eq!(body["protocol"], "http");
    assert_eq!(body["url"], "/_admin/echo/a/b?flavour=quince&x=1+2");
}

#[tokio::test]
async fn metrics_count_requests() {
    let s = Server::new();
    for _ in 0..3 {
        s.root(Method::GET, "/_api/version", "").await;
    }
    let reply = s.root(Method::GET, "/_admin/metrics/v2", "").await;
    assert_eq!(reply.status, 200);
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let text = String::from_utf8(reply.body.to_vec()).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(r#"quince_http_requests_total{method="GET",status="2xx"}"#))
        .expect("GET 2xx counter");
    let n: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n >= 3.0, "{line}");
    assert!(text.contains("quince_databases 1"));
    assert_eq!(s.root(Method::GET, "/_admin/metrics", "").await.status, 200);
}

#[tokio::test]
async fn statistics_count_requests_by_method() {
    let s = Server::new();
    for _ in 0..2 {
        s.root(Method::GET, "/_api/version", "").await;
    }
    s.root(Method::POST, "/_api/version", "").await;
    let reply = s.root(Method::GET, "/_admin/statistics", "").await;
    assert_eq!(reply.status, 200);
    let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(body["enabled"], true);
    assert_eq!(body["http"]["requestsTotal"], 3);
    assert_eq!(body["http"]["requestsGet"], 2);
    assert_eq!(body["http"]["requestsPost"], 1);
    assert_eq!(body["client"]["totalTime"]["count"], 3);
    assert_eq!(
        body["client"]["totalTime"]["counts"]
            .as_array()
            .unwrap()
            .len(),
        10
    );
    assert!(body["system"]["residentSize"].as_u64().unwrap() > 0);
    let reply = s
        .root(Method::GET, "/_admin/statistics-description", "")
        .await;
    assert_eq!(reply.status, 200);
    let description: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    let groups = description["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 4);
    s.root(Method::PUT, "/_admin/statistics", "")
        .await
        .assert_error(405, 405);
}

async fn login(s: &Server, prefix: &str, body: &str) -> support::Reply {
    s.send(request(Method::POST, &format!("{prefix}/_open/auth"), body))
        .await
}

#[tokio::test]
async fn open_auth_trades_the_password_for_a_working_token() {
    let s = Server::new();
    for prefix in ["", "/_db/_system"] {
        let body = login(
            &s,
            prefix,
            &format!(r#"{{"username":"root","password":"{PASSWORD}"}}"#),
        )
        .await
        .assert_success(200);
        let token = body["jwt"].as_str().expect("jwt").to_string();
        let mut req = request(Method::GET, "/_api/version", "");
        req.headers_mut()
            .insert("authorization", format!("bearer {token}").parse().unwrap());
        assert_eq!(s.send(req).await.status, 200);

        let mut renew = request(Method::POST, "/_open/auth/renew", "");
        renew
            .headers_mut()
            .insert("authorization", format!("bearer {token}").parse().unwrap());
        let renewed = s.send(renew).await.assert_success(200);
        assert!(renewed["jwt"].is_string());
    }
    let message = login(&s, "", r#"{"username":"root","password":"wrong"}"#)
        .await
        .assert_error(401, 401);
    assert_eq!(message, "Wrong credentials");
    login(&s, "", r#"{"username":"root"}"#)
        .await
        .assert_error(400, 400);
    login(&s, "", "not json").await.assert_error(400, 400);
    s.send(request(Method::POST, "/_open/auth/renew", ""))
        .await
        .assert_error(401, 11);
}

#[tokio::test]
async fn open_auth_is_404_without_authentication() {
    let s = Server::with(|c| c.authentication = false);
    let reply = login(&s, "", r#"{"username":"root","password":""}"#).await;
    reply.assert_error(404, 404);
    let _: Value = reply.json();
}
