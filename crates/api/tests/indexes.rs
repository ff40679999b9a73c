//! The index types the server advertises are the ones it has: `/_api/engine` lists only the
//! primary index, and a collection's figures count and describe only that index, in an edge
//! collection too (`_from`/`_to` lookups have no edge index to use).

mod support;

use http::Method;
use serde_json::json;
use support::Server;

#[tokio::test]
async fn the_engine_advertises_only_the_primary_index() {
    let s = Server::new();
    let engine = s
        .root(Method::GET, "/_api/engine", "")
        .await
        .assert_success(200);
    assert_eq!(engine["supports"]["indexes"], json!(["primary"]));
}

#[tokio::test]
async fn figures_count_one_index_in_document_and_edge_collections() {
    let s = Server::new();
    for (name, kind) in [("docs", 2), ("edges", 3)] {
        let body = json!({"name": name, "type": kind}).to_string();
        s.root(Method::POST, "/_api/collection", &body)
            .await
            .assert_success(200);
        let target = format!("/_api/collection/{name}/figures?details=true");
        let reply = s.root(Method::GET, &target, "").await.assert_success(200);
        let figures = &reply["figures"];
        assert_eq!(figures["indexes"]["count"], 1, "{name}: {figures}");
        assert!(figures["indexes"]["size"].is_u64(), "{name}: {figures}");
        let types: Vec<&str> = figures["engine"]["indexes"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: {figures}"))
            .iter()
            .map(|index| index["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["primary"], "{name}");
    }
}
