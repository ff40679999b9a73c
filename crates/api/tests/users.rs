//! The pipeline with users: §1.1's database rules for normal users, levels on reads and
//! writes, the deny-by-default rule for families without checks of their own, and the cache
//! that spares steady-state Basic authentication a password hash.

use crate::support;

use http::Method;
use support::{basic, request, Server};

/// Creates `name` (password `pw`) as root; `grant` on database `db` when given.
async fn user(server: &Server, name: &str, grant: Option<(&str, &str)>) {
    let body = format!(r#"{{"user":"{name}","passwd":"pw"}}"#);
    server
        .root(Method::POST, "/_api/user", &body)
        .await
        .assert_success(201);
    if let Some((db, level)) = grant {
        let path = format!("/_api/user/{name}/database/{db}");
        let body = format!(r#"{{"grant":"{level}"}}"#);
        server
            .root(Method::PUT, &path, &body)
            .await
            .assert_success(200);
    }
}

/// A request as `name` with password `pw`.
async fn as_user(
    server: &Server,
    name: &str,
    method: Method,
    target: &str,
    body: &str,
) -> support::Reply {
    let mut req = request(method, target, body);
    req.headers_mut()
        .insert("authorization", basic(name, "pw").parse().unwrap());
    server.send(req).await
}

#[tokio::test]
async fn missing_databases_are_401_for_users_without_access_and_404_for_root() {
    let server = Server::new();
    user(&server, "ann", None).await;
    as_user(
        &server,
        "ann",
        Method::GET,
        "/_db/nowhere/_api/collection",
        "",
    )
    .await
    .assert_error(401, 11);
    server
        .root(Method::GET, "/_db/nowhere/_api/collection", "")
        .await
        .assert_error(404, 1228);
    // Without a grant on `_system`, ann cannot use it, but may read her own account.
    as_user(&server, "ann", Method::GET, "/_api/collection", "")
        .await
        .assert_error(401, 11);
    let me = as_user(&server, "ann", Method::GET, "/_api/user/ann", "")
        .await
        .assert_success(200);
    assert_eq!(me["user"], "ann");
    as_user(&server, "ann", Method::GET, "/_api/user/root", "")
        .await
        .assert_error(403, 11);
}

#[tokio::test]
async fn read_only_users_read_but_do_not_write() {
    let server = Server::new();
    server
        .root(Method::POST, "/_api/collection", r#"{"name":"c"}"#)
        .await
        .assert_success(200);
    user(&server, "rob", Some(("_system", "ro"))).await;
    as_user(&server, "rob", Method::GET, "/_api/collection/c/count", "")
        .await
        .assert_success(200);
    as_user(&server, "rob", Method::POST, "/_api/document/c", "{}")
        .await
        .assert_error(403, 11);
    as_user(
        &server,
        "rob",
        Method::POST,
        "/_api/collection",
        r#"{"name":"d"}"#,
    )
    .await
    .assert_error(403, 11);
    as_user(
        &server,
        "rob",
        Method::PUT,
        "/_api/collection/c/truncate",
        "",
    )
    .await
    .assert_error(403, 11);
    // A family without checks of its own: writes need `rw` on the database.
    as_user(&server, "rob", Method::POST, "/_admin/echo", "{}")
        .await
        .assert_success(200);
    as_user(&server, "rob", Method::PUT, "/_admin/license", "{}")
        .await
        .assert_error(403, 11);
}

#[tokio::test]
async fn steady_state_basic_authentication_does_not_hash() {
    let server = Server::new();
    user(&server, "cas", Some(("_system", "rw"))).await;
    assert!(server.api.users().verified_before("cas", "pw").is_none());
    as_user(&server, "cas", Method::GET, "/_api/version", "")
        .await
        .assert_success(200);
    assert!(
        server.api.users().verified_before("cas", "pw").is_some(),
        "the first request remembered the verified password"
    );
    as_user(&server, "cas", Method::GET, "/_api/version", "")
        .await
        .assert_success(200);
    // A permission change voids the memory, and a wrong password is never remembered.
    server
        .root(
            Method::PUT,
            "/_api/user/cas/database/_system",
            r#"{"grant":"ro"}"#,
        )
        .await
        .assert_success(200);
    assert!(server.api.users().verified_before("cas", "pw").is_none());
    let mut wrong = request(Method::GET, "/_api/version", "");
    wrong
        .headers_mut()
        .insert("authorization", basic("cas", "nope").parse().unwrap());
    server.send(wrong).await.assert_error(401, 11);
    assert!(server.api.users().verified_before("cas", "nope").is_none());
}
