//! `/_api/database` through the pipeline: list, current, user, create (with users), drop, and
//! the rule that only `_system` manages databases.

use crate::support;

use http::Method;
use support::Server;

#[tokio::test]
async fn system_database_is_always_there() {
    let s = Server::new();
    let body = s
        .root(Method::GET, "/_api/database", "")
        .await
        .assert_success(200);
    assert_eq!(body["error"], false);
    assert_eq!(body["code"], 200);
    assert_eq!(body["result"], serde_json::json!(["_system"]));
    let current = s
        .root(Method::GET, "/_api/database/current", "")
        .await
        .assert_success(200);
    let r = &current["result"];
    assert_eq!(r["name"], "_system");
    assert_eq!(r["isSystem"], true);
    assert_eq!(r["path"], "none");
    assert!(r["id"].is_string());
}

#[tokio::test]
async fn create_list_use_and_drop() {
    let s = Server::new();
    let body = s
        .root(
            Method::POST,
            "/_api/database",
            r#"{"name":"shop","options":{},"users":[{"username":"u","passwd":"p","active":true,"extra":{}}]}"#,
        )
        .await
        .assert_success(201);
    assert_eq!(
        body,
        serde_json::json!({"error": false, "code": 201, "result": true})
    );

    let list = s
        .root(Method::GET, "/_api/database", "")
        .await
        .assert_success(200);
    assert_eq!(list["result"], serde_json::json!(["_system", "shop"]));
    let user = s
        .root(Method::GET, "/_api/database/user", "")
        .await
        .assert_success(200);
    assert_eq!(user["result"], serde_json::json!(["_system", "shop"]));
    let current = s
        .root(Method::GET, "/_db/shop/_api/database/current", "")
        .await
        .assert_success(200);
    assert_eq!(current["result"]["name"], "shop");
    assert_eq!(current["result"]["isSystem"], false);

    let dropped = s
        .root(Method::DELETE, "/_api/database/shop", "")
        .await
        .assert_success(200);
    assert_eq!(dropped["result"], true);
    s.root(Method::GET, "/_db/shop/_api/database/current", "")
        .await
        .assert_error(404, 1228);
    s.root(Method::DELETE, "/_api/database/shop", "")
        .await
        .assert_error(404, 1228);
}

#[tokio::test]
async fn create_errors() {
    let s = Server::new();
    s.root(Method::POST, "/_api/database", r#"{"name":"dup"}"#)
        .await
        .assert_success(201);
    s.root(Method::POST, "/_api/database", r#"{"name":"dup"}"#)
        .await
        .assert_error(409, 1207);
    s.root(Method::POST, "/_api/database", r#"{"name":"bad/name"}"#)
        .await
        .assert_error(400, 1229);
    s.root(Method::POST, "/_api/database", r#"{"name":5}"#)
        .await
        .assert_error(400, 1229);
    s.root(
        Method::POST,
        "/_api/database",
        r#"{"name":"x","users":[{"passwd":"p"}]}"#,
    )
    .await
    .assert_error(400, 400);
    s.root(Method::POST, "/_api/database", r#"{"name":"x","users":{}}"#)
        .await
        .assert_error(400, 400);
    s.root(Method::POST, "/_api/database", r#"{"name":"x","#)
        .await
        .assert_error(400, 600);
}

#[tokio::test]
async fn only_system_manages_databases() {
    let s = Server::new();
    s.root(Method::POST, "/_api/database", r#"{"name":"other"}"#)
        .await
        .assert_success(201);
    s.root(Method::GET, "/_db/other/_api/database", "")
        .await
        .assert_error(403, 1230);
    s.root(
        Method::POST,
        "/_db/other/_api/database",
        r#"{"name":"nested"}"#,
    )
    .await
    .assert_error(403, 1230);
    s.root(Method::DELETE, "/_db/other/_api/database/other", "")
        .await
        .assert_error(403, 1230);
    let dropped = s.root(Method::DELETE, "/_api/database/_system", "").await;
    assert!(matches!(dropped.status, 400 | 403), "{}", dropped.status);
}

#[tokio::test]
async fn wrong_methods_are_405() {
    let s = Server::new();
    s.root(Method::PUT, "/_api/database", "")
        .await
        .assert_error(405, 405);
    s.root(Method::POST, "/_api/database/current", "")
        .await
        .assert_error(405, 405);
}
