//! The index types the server advertises are the ones it has: `/_api/engine` lists the primary,
//! edge, persistent (with its aliases `hash` and `skiplist`), ttl, geo (aliases `geo1`, `geo2`)
//! and fulltext indexes, and a collection's figures count and describe its indexes, in an edge
//! collection its edge index too.

use crate::support;

use http::Method;
use serde_json::json;
use support::Server;

#[tokio::test]
async fn the_engine_advertises_the_index_types_it_has() {
    let s = Server::new();
    let engine = s
        .root(Method::GET, "/_api/engine", "")
        .await
        .assert_success(200);
    assert_eq!(
        engine["supports"]["indexes"],
        json!([
            "primary",
            "edge",
            "persistent",
            "hash",
            "skiplist",
            "ttl",
            "geo",
            "fulltext"
        ])
    );
    assert_eq!(
        engine["supports"]["aliases"]["indexes"],
        json!({"hash": "persistent", "skiplist": "persistent", "geo1": "geo", "geo2": "geo"})
    );
}

#[tokio::test]
async fn figures_count_every_index_in_document_and_edge_collections() {
    let s = Server::new();
    for (name, kind, automatic) in [
        ("docs", 2, vec!["primary"]),
        ("edges", 3, vec!["primary", "edge"]),
    ] {
        let body = json!({"name": name, "type": kind}).to_string();
        s.root(Method::POST, "/_api/collection", &body)
            .await
            .assert_success(200);
        let target = format!("/_api/collection/{name}/figures?details=true");
        let reply = s.root(Method::GET, &target, "").await.assert_success(200);
        let figures = &reply["figures"];
        assert_eq!(
            figures["indexes"]["count"],
            automatic.len(),
            "{name}: {figures}"
        );
        assert!(figures["indexes"]["size"].is_u64(), "{name}: {figures}");
        let index = json!({"type": "persistent", "fields": ["a"]}).to_string();
        s.root(
            Method::POST,
            &format!("/_api/index?collection={name}"),
            &index,
        )
        .await
        .assert_success(201);
        let reply = s.root(Method::GET, &target, "").await.assert_success(200);
        let figures = &reply["figures"];
        assert_eq!(
            figures["indexes"]["count"],
            automatic.len() + 1,
            "{name}: {figures}"
        );
        let types: Vec<&str> = figures["engine"]["indexes"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {figures}"))
            .iter()
            .map(|index| index["type"].as_str().unwrap())
            .collect();
        let mut expected = automatic.clone();
        expected.push("persistent");
        assert_eq!(types, expected, "{name}");
    }
}
