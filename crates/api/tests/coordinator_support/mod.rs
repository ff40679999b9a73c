//! The harness shared by the coordinator-over-api tests (`coordinator_over_api.rs`,
//! `coordinator_transactions.rs`): a coordinator whose three DB servers answer with Quince's
//! own api, each over a local engine on a temporary directory. The Plan is followed for the DB
//! servers by `coordinator::testing` (shard collections created, leaders reported); the
//! coordinator's requests travel as HTTP requests into `Api::serve`, without sockets.
//!
//! Not a server: nothing listens. Invariants: DB server `i` is `IDS[i]` over `catalogs[i]`;
//! [`CoordinatorOverApi::stop`] stops the coordinator and the followers before the engines.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use quince_api::{Api, ApiConfig};
use quince_client::request::Method;
use quince_cluster::coordinator::testing::FakeDbServers;
use quince_cluster::coordinator::{start_with, Coordinator, Timeouts, Transport};
use quince_cluster::layout::{Layout, Role, ServerId};
use quince_cluster::node::{ClusterConfig, Node};
use quince_cluster::peers::{PeerError, PeerReply, PeerRequest};
use quince_db::{Catalog, DbConfig};
use quince_meta::{MemoryStore, MetaStore};
use quince_ops::{CollectionType, CreateCollection, Engine};

/// The DB servers' ids.
pub const IDS: [&str; 3] = ["PRMR-a", "PRMR-b", "PRMR-c"];

/// DB servers as Quince apis, reached by calling `Api::serve`.
pub struct ApiServers {
    apis: BTreeMap<ServerId, Arc<Api>>,
    runtime: tokio::runtime::Runtime,
    sent: Arc<CursorTraffic>,
}

/// What the DB servers' cursors handed the coordinator, all requests together.
#[derive(Default)]
pub struct CursorTraffic {
    /// Documents (elements of `result`).
    pub documents: AtomicUsize,
    /// Reply bytes.
    pub bytes: AtomicUsize,
}

impl CursorTraffic {
    /// The documents and bytes so far, and resets both.
    pub fn take(&self) -> (usize, usize) {
        (
            self.documents.swap(0, Ordering::SeqCst),
            self.bytes.swap(0, Ordering::SeqCst),
        )
    }
}

fn http_method(method: Method) -> http::Method {
    match method {
        Method::Get => http::Method::GET,
        Method::Post => http::Method::POST,
        Method::Put => http::Method::PUT,
        Method::Patch => http::Method::PATCH,
        Method::Delete => http::Method::DELETE,
    }
}

/// One request into `api` on `runtime`: status and JSON body.
pub fn call(
    runtime: &tokio::runtime::Runtime,
    api: &Arc<Api>,
    request: http::Request<Full<Bytes>>,
) -> (u16, Vec<u8>) {
    let api = api.clone();
    runtime.block_on(async move {
        let response = api.serve(request).await;
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, body.to_vec())
    })
}

impl Transport for ApiServers {
    fn send(
        &self,
        server: &ServerId,
        _endpoint: &str,
        request: &PeerRequest<'_>,
    ) -> Result<PeerReply, PeerError> {
        let mut builder = http::Request::builder()
            .method(http_method(request.method))
            .uri(format!("/_db/{}{}", request.database, request.path))
            .header("content-type", "application/json");
        if let Some(trx) = request.trx {
            builder = builder.header("x-arango-trx-id", trx);
        }
        let http_request = builder
            .body(Full::new(Bytes::copy_from_slice(
                request.body.unwrap_or(b""),
            )))
            .unwrap();
        let (status, body) = call(&self.runtime, &self.apis[server], http_request);
        if request.path.starts_with("/_api/cursor") && status < 300 {
            let reply: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let documents = reply["result"].as_array().map_or(0, Vec::len);
            self.sent.documents.fetch_add(documents, Ordering::SeqCst);
            self.sent.bytes.fetch_add(body.len(), Ordering::SeqCst);
        }
        Ok(PeerReply { status, body })
    }
}

pub fn create(name: &str) -> CreateCollection {
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

/// The DB servers' api configuration (no authentication).
pub fn api_config() -> ApiConfig {
    ApiConfig {
        authentication: false,
        ..ApiConfig::default()
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// A coordinator over three DB servers that are Quince apis.
pub struct CoordinatorOverApi {
    pub coordinator: Arc<Coordinator>,
    pub follower: Arc<FakeDbServers>,
    pub store: Arc<dyn MetaStore>,
    pub nodes: Vec<Arc<Node>>,
    pub catalogs: Vec<Arc<Catalog>>,
    pub dirs: Vec<tempfile::TempDir>,
    /// What the DB servers' cursors sent.
    pub sent: Arc<CursorTraffic>,
}

impl CoordinatorOverApi {
    pub fn start() -> CoordinatorOverApi {
        let dirs: Vec<tempfile::TempDir> =
            IDS.iter().map(|_| tempfile::tempdir().unwrap()).collect();
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
        let config = api_config();
        let apis: BTreeMap<ServerId, Arc<Api>> = IDS
            .iter()
            .zip(&catalogs)
            .map(|(id, catalog)| {
                let engine: Arc<dyn Engine> = catalog.clone();
                (id.to_string(), Api::new(engine, config.clone()))
            })
            .collect();
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let mut nodes = Vec::new();
        for id in IDS {
            let config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
            nodes.push(Node::join(store.clone(), config, id.into(), "3.12.4", "quince").unwrap());
        }
        let engines: Vec<(ServerId, Arc<dyn Engine>)> = IDS
            .iter()
            .zip(&catalogs)
            .map(|(id, catalog)| (id.to_string(), catalog.clone() as Arc<dyn Engine>))
            .collect();
        let follower = FakeDbServers::over(store.clone(), Layout::default(), engines);
        let sent = Arc::new(CursorTraffic::default());
        let transport = Arc::new(ApiServers {
            apis,
            runtime: runtime(),
            sent: sent.clone(),
        });
        let config = ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:2");
        let node = Node::join(store.clone(), config, "CRDN-a".into(), "3.12.4", "quince").unwrap();
        nodes.push(node.clone());
        let coordinator = start_with(node, transport, Timeouts::default()).unwrap();
        CoordinatorOverApi {
            coordinator,
            follower,
            store,
            nodes,
            catalogs,
            dirs,
            sent,
        }
    }

    /// Stops the coordinator and the followers, leaves, and shuts every engine down.
    pub fn stop(self) {
        self.coordinator.stop();
        self.follower.stop();
        for node in self.nodes {
            node.leave();
        }
        for catalog in self.catalogs {
            catalog.shutdown().unwrap();
        }
    }
}
