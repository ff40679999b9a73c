//! The coordinator: Quince's operations interface over the cluster. Its catalog is the
//! cluster's Plan (cached, `plan_cache.rs`); its documents live on DB servers, reached through
//! each shard's leader.
//!
//! What it is: [`start`], the entry point the binary calls on a coordinator: it reads the
//! Plan, bootstraps `_system` when it is the first coordinator (`bootstrap.rs`), and answers a
//! [`Coordinator`], whose [`Coordinator::engine`] the api serves and which is the server's
//! [`quince_ops::ClusterOps`] (role `COORDINATOR`). The parts: `catalog.rs` (a parsed Plan
//! view), `plan_cache.rs`, `collection_options.rs` (cluster options and their errors),
//! `placement.rs`, `ddl.rs` and `indexes.rs`, `keys.rs`, `documents.rs` (write routing),
//! `reads.rs`, `shard_requests.rs` (leaders, retries, error bodies), `transaction.rs` and
//! `transaction_routes.rs` (stream transactions over the shards' leaders), `transport.rs`,
//! `engine.rs` and `collection.rs` (the trait implementations), and `testing.rs` (in-process
//! DB servers for tests). `docs/cluster.md` ("Coordinators")
//! describes the behaviour.
//!
//! What it is not: a DB server (shards are held and replicated in `crate::dbserver`), the
//! supervision, or the HTTP layer.
//!
//! Invariants: no durable state of its own (everything is in the metadata store or on DB
//! servers), so any number of coordinators serve the same cluster.

mod bootstrap;
mod catalog;
mod collection;
mod collection_options;
mod context;
mod ddl;
mod documents;
mod engine;
pub mod forwarding;
mod indexes;
mod keys;
mod placement;
mod plan_cache;
mod reads;
mod scan;
mod shard_requests;
pub mod testing;
mod transaction;
mod transaction_routes;
mod transport;

use std::sync::{Arc, OnceLock};

use quince_errors::{ArangoError, Result, HTTP_NOT_FOUND};
use quince_ops::{
    ClusterOps, Engine, ForwardedReply, ForwardedRequest, InternalReply, InternalRequest,
    ServerRole,
};

pub use catalog::{Catalog, CollectionEntry};
pub use collection_options::{ClusterOptions, SHARD_KEYS_MAX};
pub use context::Timeouts;
pub use keys::KEY_BLOCK;
pub use transport::{PeersTransport, Transport};

use context::{agency_error, Context};
use engine::CoordinatorEngine;
use keys::KeyBlocks;
use plan_cache::PlanCache;
use shard_requests::Router;

use crate::node::Node;
use crate::peers::{superuser_token, Peers};

/// A running coordinator (see the module documentation).
pub struct Coordinator {
    ctx: Arc<Context>,
    /// The superuser token requests forwarded to other coordinators carry (unset: a cluster
    /// without authentication).
    forward_token: OnceLock<String>,
}

/// Starts this server's coordinator role: DB servers are reached over HTTP as the cluster's
/// superuser (a token over `jwt_secret`; none for a cluster without authentication). Returns
/// once `_system/_users` is usable; errors when the metadata store cannot be read (1492), no
/// DB server reports within the DDL timeout (1487), or `_users`' shard does not come up
/// (1457).
pub fn start(
    node: Arc<Node>,
    jwt_secret: Option<Vec<u8>>,
) -> Result<Arc<Coordinator>, ArangoError> {
    let timeouts = Timeouts::default();
    let peers = Peers::new(jwt_secret.as_deref(), &node.id, timeouts.request);
    let token = jwt_secret.map(|secret| superuser_token(&secret, &node.id));
    let coordinator = start_with(node, Arc::new(PeersTransport(peers)), timeouts)?;
    if let Some(token) = token {
        let _ = coordinator.forward_token.set(token);
    }
    Ok(coordinator)
}

/// [`start`] over another transport and time bounds (tests answer for DB servers in process).
pub fn start_with(
    node: Arc<Node>,
    transport: Arc<dyn Transport>,
    timeouts: Timeouts,
) -> Result<Arc<Coordinator>, ArangoError> {
    let cache = Arc::new(
        PlanCache::start(node.store.clone(), node.layout().clone()).map_err(agency_error)?,
    );
    let ctx = Arc::new(Context {
        keys: Arc::new(KeyBlocks::new(node.store.clone(), node.layout().clone())),
        router: Router {
            cache: cache.clone(),
            transport,
            retry_for: timeouts.leader_retry,
            trx: None,
        },
        transactions: Arc::new(transaction::Registry::default()),
        cache,
        node,
        timeouts,
    });
    if let Err(error) = bootstrap::bootstrap(&ctx) {
        ctx.cache.stop();
        return Err(error);
    }
    Ok(Arc::new(Coordinator {
        ctx,
        forward_token: OnceLock::new(),
    }))
}

impl Coordinator {
    /// The operations interface over the cluster, for the api.
    pub fn engine(self: &Arc<Self>) -> Arc<dyn Engine> {
        Arc::new(CoordinatorEngine {
            ctx: self.ctx.clone(),
        })
    }

    /// The current Plan view (for diagnostics and tests).
    pub fn catalog(&self) -> Arc<Catalog> {
        self.ctx.cache.catalog()
    }

    /// Stops the Plan cache's watch. The node (heartbeat, registration) is the caller's to
    /// leave. Idempotent.
    pub fn stop(&self) {
        self.ctx.cache.stop();
    }
}

impl ClusterOps for Coordinator {
    fn role(&self) -> ServerRole {
        ServerRole::Coordinator
    }

    fn server_id(&self) -> String {
        self.ctx.node.id.clone()
    }

    fn internal(&self, _request: InternalRequest) -> Result<InternalReply> {
        Err(ArangoError::with_message(
            HTTP_NOT_FOUND,
            "a coordinator serves no cluster-internal requests",
        ))
    }

    fn server_get(&self, server: &str, path: &str) -> Result<InternalReply> {
        let record = crate::servers::find_server(&self.ctx.node, server)?;
        let request = crate::peers::PeerRequest {
            method: quince_client::request::Method::Get,
            database: "_system",
            path,
            body: None,
            trx: None,
        };
        let reply = self
            .ctx
            .router
            .transport
            .send(&record.id, &record.endpoint, &request)
            .map_err(|error| {
                ArangoError::with_message(
                    quince_errors::CLUSTER_BACKEND_UNAVAILABLE,
                    format!("server {}: {error}", record.id),
                )
            })?;
        Ok(InternalReply {
            status: reply.status,
            body: reply.body,
        })
    }

    fn forward(&self, request: &ForwardedRequest) -> Result<Option<ForwardedReply>> {
        forwarding::forward(
            &self.ctx.node,
            self.forward_token.get().map(String::as_str),
            self.ctx.timeouts.request,
            request,
        )
    }
}
