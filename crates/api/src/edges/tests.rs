//! Tests of `/_api/edges` against the local engine and the fake: bodies, order and errors as
//! ArangoDB answers them.

use http::Method;
use quince_ops::{CollectionType, WriteKind, WriteOptions, WriteRequest};
use serde_json::{json, Value};

use crate::document::tests::support::{Fixture, Reply};

fn fixtures() -> [Fixture; 2] {
    [Fixture::new(), Fixture::fake()]
}

/// `e` with edges around `v/1` (one looping on it) and a document collection `d`.
fn graph(fx: &Fixture) {
    let e = fx.collection("e", CollectionType::Edge);
    fx.collection("d", CollectionType::Document);
    let edges = vec![
        json!({"_key": "5", "_from": "v/1", "_to": "v/3"}),
        json!({"_key": "6", "_from": "v/2", "_to": "v/1"}),
        json!({"_key": "7", "_from": "v/4", "_to": "v/1"}),
        json!({"_key": "8", "_from": "v/1", "_to": "v/1"}),
        json!({"_key": "9", "_from": "v/2", "_to": "v/3"}),
    ];
    let written = e.write(WriteRequest::new(
        WriteKind::Insert,
        edges,
        WriteOptions::default(),
    ));
    assert!(written.items.iter().all(Result::is_ok));
}

async fn get(fx: &Fixture, collection: &str, params: &[(&str, &str)]) -> Reply {
    let mut call = fx.call(Method::GET, "edges", &[collection]);
    for (name, value) in params {
        call = call.query(name, value);
    }
    call.edges().await
}

fn keys(reply: &Reply) -> Vec<String> {
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["_key"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn directions_give_out_in_or_both_with_a_loop_once() {
    for fx in fixtures() {
        graph(&fx);
        let any = get(&fx, "e", &[("vertex", "v/1")]).await;
        assert_eq!(keys(&any), ["5", "8", "6", "7"]);
        assert_eq!(
            (any.body["error"].clone(), any.body["code"].clone()),
            (json!(false), json!(200))
        );
        assert_eq!(any.body["stats"]["scannedIndex"], 5);
        assert_eq!(any.body["stats"]["filtered"], 0);
        let first = &any.body["edges"][0];
        assert_eq!(first["_id"], "e/5");
        assert_eq!(first["_from"], "v/1");
        assert!(first["_rev"].is_string());
        let also_any = get(&fx, "e", &[("vertex", "v/1"), ("direction", "any")]).await;
        assert_eq!(keys(&also_any), ["5", "8", "6", "7"]);
        for (direction, expected) in [
            ("out", vec!["5", "8"]),
            ("outbound", vec!["5", "8"]),
            ("in", vec!["6", "7", "8"]),
            ("inbound", vec!["6", "7", "8"]),
        ] {
            let reply = get(&fx, "e", &[("vertex", "v/1"), ("direction", direction)]).await;
            assert_eq!(keys(&reply), expected, "{direction}");
        }
        let none = get(&fx, "e", &[("vertex", "v/nobody")]).await;
        assert_eq!(none.body["edges"], json!([]));
    }
}

#[tokio::test]
async fn errors_in_arangodbs_order() {
    for fx in fixtures() {
        graph(&fx);
        get(&fx, "missing", &[("vertex", "v/1")])
            .await
            .assert_error(404, 1203);
        get(&fx, "d", &[("vertex", "v/1")])
            .await
            .assert_error(400, 1218);
        // The collection is checked before the direction, the direction before the vertex.
        get(&fx, "d", &[("direction", "sideways")])
            .await
            .assert_error(400, 1218);
        let bad = get(&fx, "e", &[("vertex", "v/1"), ("direction", "sideways")]).await;
        bad.assert_error(400, 400);
        assert!(bad.body["errorMessage"]
            .as_str()
            .unwrap()
            .contains("sideways"));
        get(&fx, "e", &[("direction", "sideways")])
            .await
            .assert_error(400, 400);
        get(&fx, "e", &[]).await.assert_error(400, 1205);
        get(&fx, "e", &[("vertex", "")])
            .await
            .assert_error(400, 1205);
        let two = fx.call(Method::GET, "edges", &["e", "x"]).edges().await;
        two.assert_error(400, 400);
        let none = fx.call(Method::GET, "edges", &[]).edges().await;
        none.assert_error(400, 400);
        let put = fx.call(Method::PUT, "edges", &["e"]).edges().await;
        put.assert_error(501, 9);
    }
}

#[tokio::test]
async fn post_reads_the_edges_of_many_vertices_each_once() {
    for fx in fixtures() {
        graph(&fx);
        let post = |body: Value, direction: Option<&'static str>| {
            let mut call = fx.call(Method::POST, "edges", &["e"]).json(body);
            if let Some(direction) = direction {
                call = call.query("direction", direction);
            }
            call.edges()
        };
        let both = post(json!(["v/1", "v/2"]), None).await;
        assert_eq!(keys(&both), ["5", "8", "6", "7", "9"]);
        assert!(both.body.get("stats").is_none());
        let out = post(json!(["v/2", "v/1"]), Some("out")).await;
        assert_eq!(keys(&out), ["6", "9", "5", "8"]);
        let empty = post(json!([]), None).await;
        assert_eq!(keys(&empty), Vec::<String>::new());
        post(json!({"v": 1}), None).await.assert_error(400, 400);
        post(json!(["v/1", 2]), None).await.assert_error(400, 400);
        // The body is checked before the collection.
        let bad = fx.call(Method::POST, "edges", &["missing"]).json(json!(1));
        bad.edges().await.assert_error(400, 400);
        let missing = fx.call(Method::POST, "edges", &["missing"]).json(json!([]));
        missing.edges().await.assert_error(404, 1203);
        let document = fx.call(Method::POST, "edges", &["d"]).json(json!([]));
        document.edges().await.assert_error(400, 1218);
    }
}

#[tokio::test]
async fn the_edge_index_is_listed_read_and_not_dropped_through_the_index_api() {
    for fx in fixtures() {
        graph(&fx);
        let list = fx
            .call(Method::GET, "index", &[])
            .query("collection", "e")
            .index()
            .await;
        assert_eq!(list.status, 200);
        let edge = &list.body["indexes"][1];
        assert_eq!(edge["id"], "e/1");
        assert_eq!(edge["type"], "edge");
        assert_eq!(edge["name"], "edge");
        assert_eq!(edge["fields"], json!(["_from", "_to"]));
        assert_eq!(edge["unique"], false);
        assert_eq!(edge["sparse"], false);
        // (v/1, v/2, v/4 from; v/3, v/1 to) over 5 edges.
        assert_eq!(edge["selectivityEstimate"], json!(0.5));
        assert_eq!(list.body["identifiers"]["e/1"], *edge);
        let read = fx.call(Method::GET, "index", &["e", "1"]).index().await;
        assert_eq!(read.body["name"], "edge");
        let by_name = fx.call(Method::GET, "index", &["e", "edge"]).index().await;
        assert_eq!(by_name.body["id"], "e/1");
        let dropped = fx.call(Method::DELETE, "index", &["e", "1"]).index().await;
        dropped.assert_error(403, 11);
        let dropped = fx
            .call(Method::DELETE, "index", &["e", "edge"])
            .index()
            .await;
        dropped.assert_error(403, 11);
        let created = fx
            .call(Method::POST, "index", &[])
            .query("collection", "e")
            .json(json!({"type": "edge", "fields": ["_from"]}))
            .index()
            .await;
        created.assert_error(400, 10);
        let document = fx
            .call(Method::GET, "index", &[])
            .query("collection", "d")
            .index()
            .await;
        assert_eq!(document.body["indexes"].as_array().unwrap().len(), 1);
    }
}
