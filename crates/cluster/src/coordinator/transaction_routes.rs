//! [`TrxRoutes`]: where the requests of a coordinator's stream transaction go: each shard of a
//! declared collection to the leader the transaction began on, with that leader's transaction
//! id in `x-arango-trx-id`; and [`Router::to_trx_leader`], which sends them.
//!
//! What it is: the binding made at the begin (shard → leader and epoch, leader → its
//! transaction id) and the rule that breaks the transaction: a shard whose Plan names another
//! leader or epoch, a leader that cannot be reached or whose answer is unknown, a leader that
//! refuses to lead (1496, 1491) or no longer knows the transaction (1654, 1655). A broken
//! transaction is aborted on every leader (best effort: a leader that cannot be reached drops
//! its part at its idle timeout) and answers every later request with 1654.
//!
//! What it is not: the retries of plain requests (`shard_requests.rs`: a transaction is never
//! moved to another leader, its writes live in the one it began on), or the begin and commit
//! (`transaction.rs`).
//!
//! Invariants: a request of a transaction reaches only the leaders it began on; a write to a
//! shard the transaction did not declare is refused (1652) before any request; reads of
//! undeclared collections (`allowImplicit`) go to the shard's current leader outside the
//! transaction.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use parking_lot::Mutex;
use quince_client::request::Method;
use quince_errors::{
    ArangoError, Result, CLUSTER_BACKEND_UNAVAILABLE, CLUSTER_NOT_LEADER, CLUSTER_TIMEOUT,
    TRANSACTION_ABORTED, TRANSACTION_UNREGISTERED_COLLECTION,
};

use super::shard_requests::{error_from_body, Router, ShardCall};
use crate::layout::ServerId;
use crate::peers::{PeerError, PeerRequest};

/// The errors that mean a leader's part of a transaction is gone.
const GONE: [u32; 4] = [1496, 1491, 1654, 1655];

/// The leader a shard of a transaction is bound to.
#[derive(Clone, Debug)]
pub struct Bound {
    /// The leader the transaction began on.
    pub leader: ServerId,
    /// The Plan's epoch of the shard then.
    pub epoch: u64,
}

/// A transaction's routes (see the module documentation).
pub struct TrxRoutes {
    /// The database.
    pub db: String,
    /// The coordinator's id of the transaction (for messages).
    pub id: String,
    /// Each declared collection's shards.
    pub shards: HashMap<String, Bound>,
    /// Each leader's transaction id.
    pub parts: BTreeMap<ServerId, String>,
    /// Reads of undeclared collections are allowed.
    pub allow_implicit: bool,
    /// Why the transaction broke, once it did.
    broken: Mutex<Option<ArangoError>>,
    /// When its last request ended.
    pub last_used: Mutex<Instant>,
}

impl TrxRoutes {
    /// Routes of transaction `id` of `db`.
    pub fn new(
        db: String,
        id: String,
        shards: HashMap<String, Bound>,
        parts: BTreeMap<ServerId, String>,
        allow_implicit: bool,
    ) -> TrxRoutes {
        TrxRoutes {
            db,
            id,
            shards,
            parts,
            allow_implicit,
            broken: Mutex::new(None),
            last_used: Mutex::new(Instant::now()),
        }
    }

    /// Why the transaction broke, if it did.
    pub fn broken(&self) -> Option<ArangoError> {
        self.broken.lock().clone()
    }

    /// 1654 for a request after the transaction broke.
    fn aborted(&self, cause: &ArangoError) -> ArangoError {
        ArangoError::with_message(
            TRANSACTION_ABORTED,
            format!("transaction {} was aborted: {}", self.id, cause.message),
        )
    }
}

impl Router {
    /// Sends `call` within the transaction of `routes` (see the module documentation).
    pub fn to_trx_leader(
        &self,
        call: &ShardCall,
        routes: &TrxRoutes,
    ) -> Result<crate::peers::PeerReply> {
        if let Some(cause) = routes.broken() {
            return Err(routes.aborted(&cause));
        }
        let result = self.send_in_trx(call, routes);
        *routes.last_used.lock() = Instant::now();
        result
    }

    fn send_in_trx(&self, call: &ShardCall, routes: &TrxRoutes) -> Result<crate::peers::PeerReply> {
        let Some(bound) = routes.shards.get(&call.shard) else {
            if call.read_only && routes.allow_implicit {
                return self.to_plan_leader(call);
            }
            return Err(ArangoError::with_message(
                TRANSACTION_UNREGISTERED_COLLECTION,
                format!(
                    "a collection of shard {} is not registered {}in transaction {}",
                    call.shard,
                    if call.read_only { "" } else { "for writing " },
                    routes.id
                ),
            ));
        };
        let catalog = self.cache.catalog();
        let moved = catalog
            .shard_plans
            .get(&call.shard)
            .is_none_or(|plan| plan.leader != bound.leader || plan.epoch != bound.epoch);
        if moved {
            return Err(self.break_trx(
                routes,
                ArangoError::with_message(
                    CLUSTER_NOT_LEADER,
                    format!(
                        "the leader of shard {} changed during transaction {}",
                        call.shard, routes.id
                    ),
                ),
            ));
        }
        let Some(endpoint) = catalog.endpoints.get(&bound.leader) else {
            return Err(self.break_trx(
                routes,
                ArangoError::with_message(
                    CLUSTER_BACKEND_UNAVAILABLE,
                    format!("no endpoint registered for {}", bound.leader),
                ),
            ));
        };
        let part = routes.parts.get(&bound.leader).map(String::as_str);
        let outcome = self.transport.send(
            &bound.leader,
            endpoint,
            &PeerRequest {
                method: call.method,
                database: &call.db,
                path: &call.path,
                body: call.body.as_deref(),
                trx: part,
            },
        );
        match outcome {
            Ok(reply) if reply.status >= 400 => {
                let error = error_from_body(reply.status, &reply.body);
                if GONE.contains(&error.num()) {
                    return Err(self.break_trx(routes, error));
                }
                Ok(reply)
            }
            Ok(reply) => Ok(reply),
            Err(PeerError::NotSent(why)) => Err(self.break_trx(
                routes,
                ArangoError::with_message(
                    CLUSTER_BACKEND_UNAVAILABLE,
                    format!(
                        "the leader of shard {} cannot be reached: {why}",
                        call.shard
                    ),
                ),
            )),
            Err(PeerError::Unknown(why)) => Err(self.break_trx(
                routes,
                ArangoError::with_message(
                    CLUSTER_TIMEOUT,
                    format!(
                        "the outcome of the request to shard {} is unknown: {why}",
                        call.shard
                    ),
                ),
            )),
        }
    }

    /// Marks the transaction broken by `error` and aborts every leader's part; answers the
    /// error.
    pub fn break_trx(&self, routes: &TrxRoutes, error: ArangoError) -> ArangoError {
        {
            let mut broken = routes.broken.lock();
            if broken.is_some() {
                return error;
            }
            *broken = Some(error.clone());
        }
        tracing::info!(
            event = "coordinator.transaction_broken",
            id = %routes.id,
            "{}",
            error.message
        );
        self.abort_parts(&routes.db, &routes.parts, None);
        error
    }

    /// Aborts each leader's part (`DELETE /_api/transaction/<id>`), skipping `except`; errors
    /// are ignored (a part that is not aborted ends at its leader's idle timeout).
    pub fn abort_parts(
        &self,
        db: &str,
        parts: &BTreeMap<ServerId, String>,
        except: Option<&dyn Fn(&ServerId) -> bool>,
    ) {
        let catalog = self.cache.catalog();
        for (leader, part) in parts {
            if except.is_some_and(|skip| skip(leader)) {
                continue;
            }
            let Some(endpoint) = catalog.endpoints.get(leader) else {
                continue;
            };
            let path = format!("/_api/transaction/{part}");
            let _ = self.transport.send(
                leader,
                endpoint,
                &PeerRequest {
                    method: Method::Delete,
                    database: db,
                    path: &path,
                    body: None,
                    trx: None,
                },
            );
        }
    }
}
