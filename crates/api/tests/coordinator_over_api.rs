//! A coordinator whose DB servers answer with Quince's own api, each over a local engine on a
//! temporary directory: the requests the coordinator sends (multi-document writes and reads,
//! cursors, counts, checksums, truncates, indexes on shard collections) are ones the real api
//! understands, and the coordinator reads its answers right. The Plan is followed for the DB
//! servers by `coordinator::testing` (shard collections created, leaders reported); the
//! requests travel as HTTP requests into `Api::serve`, without sockets.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use quince_api::{Api, ApiConfig};
use quince_client::request::Method;
use quince_cluster::coordinator::testing::FakeDbServers;
use quince_cluster::coordinator::{start_with, Timeouts, Transport};
use quince_cluster::layout::{Layout, Role, ServerId};
use quince_cluster::node::{ClusterConfig, Node};
use quince_cluster::peers::{PeerError, PeerReply, PeerRequest};
use quince_db::{Catalog, DbConfig};
use quince_meta::{MemoryStore, MetaStore};
use quince_ops::{
    CollectionType, CreateCollection, Engine, IndexLookup, ReadRequest, WriteKind, WriteOptions,
    WriteRequest,
};
use serde_json::{json, Value};

/// DB servers as Quince apis, reached by calling `Api::serve`.
struct ApiServers {
    apis: BTreeMap<ServerId, Arc<Api>>,
    runtime: tokio::runtime::Runtime,
}

impl Transport for ApiServers {
    fn send(
        &self,
        server: &ServerId,
        _endpoint: &str,
        request: &PeerRequest<'_>,
    ) -> Result<PeerReply, PeerError> {
        let api = self.apis[server].clone();
        let method = match request.method {
            Method::Get => http::Method::GET,
            Method::Post => http::Method::POST,
            Method::Put => http::Method::PUT,
            Method::Patch => http::Method::PATCH,
            Method::Delete => http::Method::DELETE,
        };
        let http_request = http::Request::builder()
            .method(method)
            .uri(format!("/_db/{}{}", request.database, request.path))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::copy_from_slice(
                request.body.unwrap_or(b""),
            )))
            .unwrap();
        let (status, body) = self.runtime.block_on(async move {
            let response = api.serve(http_request).await;
            let status = response.status().as_u16();
            let body = response.into_body().collect().await.unwrap().to_bytes();
            (status, body)
        });
        Ok(PeerReply {
            status,
            body: body.to_vec(),
        })
    }
}

fn create(name: &str) -> CreateCollection {
    CreateCollection {
        name: name.to_string(),
        kind: CollectionType::Document,
        wait_for_sync: None,
        is_system: false,
        key_options: None,
        journal_size: None,
        schema: None,
        computed_values: None,
        cache_enabled: None,
    }
}

#[test]
fn the_real_api_answers_what_the_coordinator_asks() {
    let ids = ["PRMR-a", "PRMR-b", "PRMR-c"];
    let dirs: Vec<tempfile::TempDir> = ids.iter().map(|_| tempfile::tempdir().unwrap()).collect();
    let catalogs: Vec<Arc<Catalog>> = dirs
        .iter()
        .map(|dir| {
            let io = Arc::new(quince_storage::io::OsFileIo::new());
            Catalog::open(DbConfig {
                sync_interval: Duration::from_millis(50),
                ..DbConfig::new(dir.path().to_path_buf(), io)
            })
            .unwrap()
        })
        .collect();
    let config = ApiConfig {
        authentication: false,
        ..ApiConfig::default()
    };
    let apis: BTreeMap<ServerId, Arc<Api>> = ids
        .iter()
        .zip(&catalogs)
        .map(|(id, catalog)| {
            let engine: Arc<dyn Engine> = catalog.clone();
            (id.to_string(), Api::new(engine, config.clone()))
        })
        .collect();
    let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
    let mut nodes = Vec::new();
    for id in ids {
        let config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
        nodes.push(Node::join(store.clone(), config, id.into(), "3.12.4", "quince").unwrap());
    }
    let engines: Vec<(ServerId, Arc<dyn Engine>)> = ids
        .iter()
        .zip(&catalogs)
        .map(|(id, catalog)| (id.to_string(), catalog.clone() as Arc<dyn Engine>))
        .collect();
    let follower = FakeDbServers::over(store.clone(), Layout::default(), engines);
    let transport = Arc::new(ApiServers {
        apis,
        runtime: tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap(),
    });
    let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:2");
    let node = Node::join(store.clone(), config, "CRDN-a".into(), "3.12.4", "quince").unwrap();
    nodes.push(node.clone());
    let coordinator = start_with(node, transport.clone(), Timeouts::default()).unwrap();
    let engine = coordinator.engine();
    let system = engine.database("_system").unwrap();

    let collection = system
        .create_collection_with(create("c"), &json!({"numberOfShards": 3}))
        .unwrap();
    // More documents per shard than one cursor batch (1000), so scans continue cursors.
    let items: Vec<Value> = (0..3300).map(|n| json!({"n": n, "tag": n % 7})).collect();
    let results = collection
        .write(WriteRequest::new(
            WriteKind::Insert,
            items,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    let keys: Vec<String> = results
        .iter()
        .map(|r| r.as_ref().unwrap().key.clone())
        .collect();
    assert_eq!(collection.count(), 3300);
    let largest = catalogs
        .iter()
        .flat_map(|catalog| catalog.database("_system").unwrap().collections())
        .filter(|shard| shard.name().starts_with('s'))
        .map(|shard| shard.count())
        .max()
        .unwrap();
    assert!(
        largest > 1000,
        "a shard holds more than one cursor batch: {largest}"
    );
    let mut scanned = 0;
    collection
        .scan(&mut |document| {
            let value: Value = serde_json::from_slice(&document.json).unwrap();
            assert!(value["_id"].as_str().unwrap().starts_with("c/"));
            scanned += 1;
            true
        })
        .unwrap();
    assert_eq!(scanned, 3300);

    // Reads in order, with a revision precondition that fails.
    let first = collection.read(&keys[0]).unwrap();
    let selectors = vec![
        json!(keys[1]),
        json!({"_key": keys[0], "_rev": first.rev}),
        json!({"_key": keys[2], "_rev": "_aaaaaaaaaa"}),
        json!("missing"),
    ];
    let mut seen = Vec::new();
    collection
        .read_many(
            &ReadRequest {
                selectors,
                ignore_revs: false,
            },
            &mut |result| {
                seen.push(result.map(|d| d.rev).map_err(|e| e.num()));
                true
            },
        )
        .unwrap();
    assert!(seen[0].is_ok() && seen[1].as_ref().unwrap() == &first.rev);
    assert_eq!(seen[2], Err(1200));
    assert_eq!(seen[3], Err(1202));

    // Replace with If-Match, update, removals.
    let options = WriteOptions {
        return_old: true,
        return_new: true,
        if_match: Some("_aaaaaaaaaa".into()),
        ignore_revs: false,
        ..WriteOptions::default()
    };
    let stale = collection
        .write(WriteRequest::one(
            WriteKind::Replace,
            &keys[0],
            json!({"x": 1}).as_object().unwrap().clone(),
            options.clone(),
        ))
        .settle_one();
    assert_eq!(stale.unwrap_err().num(), 1200);
    let options = WriteOptions {
        if_match: Some(first.rev.clone()),
        ..options
    };
    let replaced = collection
        .write(WriteRequest::one(
            WriteKind::Replace,
            &keys[0],
            json!({"x": 1}).as_object().unwrap().clone(),
            options,
        ))
        .settle_one()
        .unwrap();
    assert_eq!(
        replaced.old.unwrap()["_id"],
        json!(format!("c/{}", keys[0]))
    );
    assert_eq!(replaced.new.unwrap()["x"], 1);
    let removals: Vec<Value> = keys[..500].iter().map(|k| json!(k)).collect();
    let removed = collection
        .write(WriteRequest::new(
            WriteKind::Remove,
            removals,
            WriteOptions::default(),
        ))
        .settle()
        .unwrap();
    assert!(removed.iter().all(Result::is_ok));
    assert_eq!(collection.count(), 2800);
    assert_eq!(collection.figures().storage.alive_count, 2800);
    let (checksum, revision) = collection.checksum(true, false).unwrap();
    assert_ne!(checksum, "0");
    assert_eq!(revision, collection.revision());

    // Indexes through the real index API of each shard, and lookups.
    let (index, new) = collection
        .create_index(&json!({"type": "persistent", "fields": ["tag"]}))
        .unwrap();
    assert!(new);
    let estimate = collection.indexes()[1].json["selectivityEstimate"]
        .as_f64()
        .unwrap();
    assert!(estimate > 0.0 && estimate < 0.1, "{estimate}");
    let lookup = IndexLookup::Sorted {
        prefix: vec![json!(3)],
        low: std::ops::Bound::Unbounded,
        high: std::ops::Bound::Unbounded,
        reverse: false,
    };
    let mut hits = 0;
    collection
        .index_lookup(index.id, &lookup, &mut |_| {
            hits += 1;
            true
        })
        .unwrap();
    let expected = (500..3300).filter(|n| n % 7 == 3).count();
    assert_eq!(hits, expected);
    collection.drop_index(&index.name).unwrap();
    for catalog in &catalogs {
        let local = catalog.database("_system").unwrap();
        for shard in local.collections() {
            if shard.name().starts_with('s') {
                assert_eq!(shard.indexes().len(), 1, "dropped on {}", shard.name());
            }
        }
    }
    collection.truncate(true).unwrap();
    assert_eq!(collection.count(), 0);

    coordinator.stop();
    follower.stop();
    for node in nodes {
        node.leave();
    }
    for catalog in catalogs {
        catalog.shutdown().unwrap();
    }
}
