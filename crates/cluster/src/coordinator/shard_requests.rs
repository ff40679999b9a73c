//! Requests to a shard's leader, with the retries a failover needs, and the mapping of DB
//! server error bodies to [`ArangoError`]s.
//!
//! What it is: [`Router::to_leader`]: finds the shard's leader in the current Plan view and
//! sends it a request on the shard collection. When the leader refuses because it does not
//! lead (1496) or resigned (1491), or cannot be reached ([`PeerError::NotSent`]), it waits for
//! the Plan view to change (a failover writes a new leader; failover takes up to about 15 s),
//! reading the store again, and retries until [`Router::retry_for`] has passed; then it answers
//! 1478 (no leader reachable) or the leader's last refusal. A request whose outcome is unknown
//! ([`PeerError::Unknown`]) is retried only when it is a read; a write answers 1457 then, since
//! it may have been applied. [`Router::to_leaders`] sends one request per shard, in parallel
//! when there are several.
//!
//! What it is not: the splitting of documents by shard (`documents.rs`).
//!
//! Invariants: a write is sent again only when no earlier attempt can have reached a leader
//! that applied it (not sent, or refused before applying: 1496/1491 are answered before any
//! change).

use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_client::request::Method;
use quince_errors::{
    code_by_num, ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND, CLUSTER_BACKEND_UNAVAILABLE,
    CLUSTER_TIMEOUT, INTERNAL,
};
use serde_json::Value;

use super::plan_cache::PlanCache;
use super::transaction_routes::TrxRoutes;
use super::transport::Transport;
use crate::peers::{PeerError, PeerReply, PeerRequest};

/// A refusal that a new leader may cure.
const NOT_LEADER: u32 = 1496;
const RESIGNED: u32 = 1491;

/// The most threads one request uses to reach its shards at once.
pub const PARALLEL_MAX: usize = 16;

/// How long one wait for a Plan change lasts before the request is tried again anyway.
const PLAN_WAIT: Duration = Duration::from_millis(500);

/// One request to a shard's leader.
#[derive(Clone, Debug)]
pub struct ShardCall {
    /// The database.
    pub db: String,
    /// The shard collection's name.
    pub shard: String,
    /// The method.
    pub method: Method,
    /// The path below `/_db/<db>` with its query string.
    pub path: String,
    /// The JSON body.
    pub body: Option<Vec<u8>>,
    /// True for a request that changes nothing (it may be sent again when its outcome is
    /// unknown).
    pub read_only: bool,
}

/// Sends requests to shard leaders (see the module documentation).
pub struct Router {
    /// The Plan view.
    pub cache: Arc<PlanCache>,
    /// How requests travel.
    pub transport: Arc<dyn Transport>,
    /// How long a request is retried while a shard has no reachable leader.
    pub retry_for: Duration,
    /// The stream transaction whose requests this router sends (`transaction_routes.rs`),
    /// if any.
    pub trx: Option<Arc<TrxRoutes>>,
}

impl Router {
    /// Sends `call` to its shard's leader (see the module documentation): the leader's reply,
    /// whatever its status, unless it is a refusal to lead.
    /// Within a transaction, the leader it began on (`transaction_routes.rs`).
    pub fn to_leader(&self, call: &ShardCall) -> Result<PeerReply> {
        match &self.trx {
            Some(routes) => self.to_trx_leader(call, routes),
            None => self.to_plan_leader(call),
        }
    }

    /// [`Router::to_leader`] outside a transaction.
    pub fn to_plan_leader(&self, call: &ShardCall) -> Result<PeerReply> {
        let deadline = Instant::now() + self.retry_for;
        let mut last_refusal: Option<ArangoError> = None;
        loop {
            let catalog = self.cache.catalog();
            let Some(plan) = catalog.shard_plans.get(&call.shard).cloned() else {
                return Err(ArangoError::with_message(
                    ARANGO_DATA_SOURCE_NOT_FOUND,
                    format!("shard {} is not in the Plan", call.shard),
                ));
            };
            let endpoint = catalog.endpoints.get(&plan.leader).cloned();
            let outcome = match &endpoint {
                Some(endpoint) => self.transport.send(
                    &plan.leader,
                    endpoint,
                    &PeerRequest {
                        method: call.method,
                        database: &call.db,
                        path: &call.path,
                        body: call.body.as_deref(),
                        trx: None,
                    },
                ),
                None => Err(PeerError::NotSent(format!(
                    "no endpoint registered for {}",
                    plan.leader
                ))),
            };
            match outcome {
                Ok(reply) => match refusal(&reply) {
                    Some(error) => last_refusal = Some(error),
                    None => return Ok(reply),
                },
                Err(PeerError::NotSent(why)) => {
                    tracing::debug!(event = "coordinator.leader_unreachable", shard = %call.shard, "{why}");
                }
                Err(PeerError::Unknown(why)) => {
                    if !call.read_only {
                        return Err(ArangoError::with_message(
                            CLUSTER_TIMEOUT,
                            format!(
                                "the outcome of the request to shard {} is unknown: {why}",
                                call.shard
                            ),
                        ));
                    }
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(last_refusal.unwrap_or_else(|| {
                    ArangoError::with_message(
                        CLUSTER_BACKEND_UNAVAILABLE,
                        format!("no leader of shard {} could be reached", call.shard),
                    )
                }));
            }
            // Wait for a new leader (or an epoch change) in the Plan, reading the store again
            // in case the watch lags.
            let _ = self.cache.refresh();
            let before = (plan.leader.clone(), plan.epoch);
            self.cache
                .wait_until(PLAN_WAIT.min(deadline - now), |catalog| {
                    catalog
                        .shard_plans
                        .get(&call.shard)
                        .is_none_or(|p| (p.leader.clone(), p.epoch) != before)
                });
        }
    }

    /// Sends each call to its shard's leader, in parallel when there are several (at most
    /// [`PARALLEL_MAX`] threads, each taking every `PARALLEL_MAX`-th call); the replies in the
    /// calls' order.
    pub fn to_leaders(&self, calls: &[ShardCall]) -> Vec<Result<PeerReply>> {
        if calls.len() <= 1 {
            return calls.iter().map(|call| self.to_leader(call)).collect();
        }
        let threads = calls.len().min(PARALLEL_MAX);
        let mut replies: Vec<Option<Result<PeerReply>>> = (0..calls.len()).map(|_| None).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|first| {
                    scope.spawn(move || {
                        (first..calls.len())
                            .step_by(threads)
                            .map(|at| (at, self.to_leader(&calls[at])))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for handle in handles {
                if let Ok(answers) = handle.join() {
                    for (at, reply) in answers {
                        replies[at] = Some(reply);
                    }
                }
            }
        });
        replies
            .into_iter()
            .map(|reply| {
                reply.unwrap_or_else(|| {
                    Err(ArangoError::with_message(
                        INTERNAL,
                        "a shard request panicked",
                    ))
                })
            })
            .collect()
    }
}

/// The refusal in a reply that a new leader may cure (1496, 1491), if it is one.
fn refusal(reply: &PeerReply) -> Option<ArangoError> {
    if reply.status < 400 {
        return None;
    }
    let error = error_from_body(reply.status, &reply.body);
    matches!(error.num(), NOT_LEADER | RESIGNED).then_some(error)
}

/// The error a DB server's error body (`{error, errorNum, errorMessage, code}`) stands for,
/// with its status.
pub fn error_from_body(status: u16, body: &[u8]) -> ArangoError {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => error_from_value(&value, Some(status)),
        Err(_) => ArangoError::with_message(
            INTERNAL,
            format!(
                "a DB server answered {status} with a body that is not JSON: {}",
                String::from_utf8_lossy(&body[..body.len().min(200)])
            ),
        ),
    }
}

/// The error an error object stands for (per item of a multi-document reply, or a whole
/// reply's body); `status` overrides the code's default.
pub fn error_from_value(value: &Value, status: Option<u16>) -> ArangoError {
    let num = value
        .get("errorNum")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(INTERNAL.num)) as u32;
    let message = value
        .get("errorMessage")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let code = code_by_num(num).unwrap_or(INTERNAL);
    let mut error = if message.is_empty() {
        ArangoError::new(code)
    } else {
        ArangoError::with_message(code, message)
    };
    if code.num != num {
        error = ArangoError::with_message(
            INTERNAL,
            format!("a DB server answered errorNum {num}: {}", error.message),
        );
    }
    let status = status.or_else(|| {
        value
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
    });
    if let Some(status) = status.filter(|s| *s >= 400) {
        error = error.with_status(status);
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::{encode, Layout, ServerId, ServerRecord, ShardPlan};
    use parking_lot::Mutex;
    use quince_meta::{MemoryStore, MetaStore};
    use std::collections::VecDeque;

    /// Answers from a script, recording who was asked.
    struct Scripted {
        answers: Mutex<VecDeque<std::result::Result<PeerReply, PeerError>>>,
        asked: Mutex<Vec<ServerId>>,
    }

    impl Transport for Scripted {
        fn send(
            &self,
            server: &ServerId,
            _endpoint: &str,
            _request: &PeerRequest<'_>,
        ) -> std::result::Result<PeerReply, PeerError> {
            self.asked.lock().push(server.clone());
            self.answers
                .lock()
                .pop_front()
                .unwrap_or_else(|| Err(PeerError::NotSent("no more answers".into())))
        }
    }

    fn setup(
        answers: Vec<std::result::Result<PeerReply, PeerError>>,
    ) -> (Arc<dyn MetaStore>, Router, Arc<Scripted>) {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let layout = Layout::default();
        for id in ["PRMR-a", "PRMR-b"] {
            let record = ServerRecord {
                id: id.into(),
                role: crate::layout::Role::Dbserver,
                endpoint: format!("tcp://{id}:1"),
                short_name: id.into(),
                version: "3.12".into(),
                engine: "quince".into(),
            };
            store
                .put(&layout.server_registered(id), &encode(&record))
                .unwrap();
        }
        let plan = ShardPlan {
            leader: "PRMR-a".into(),
            followers: vec!["PRMR-b".into()],
            epoch: 1,
        };
        store
            .put(&layout.shard_plan("db", 1, "s2"), &encode(&plan))
            .unwrap();
        let cache = Arc::new(PlanCache::start(store.clone(), layout).unwrap());
        let transport = Arc::new(Scripted {
            answers: Mutex::new(answers.into()),
            asked: Mutex::new(Vec::new()),
        });
        let router = Router {
            cache,
            transport: transport.clone(),
            retry_for: Duration::from_secs(5),
            trx: None,
        };
        (store, router, transport)
    }

    fn call(read_only: bool) -> ShardCall {
        ShardCall {
            db: "db".into(),
            shard: "s2".into(),
            method: Method::Post,
            path: "/_api/document/s2".into(),
            body: Some(b"[]".to_vec()),
            read_only,
        }
    }

    fn not_leader() -> PeerReply {
        PeerReply {
            status: 503,
            body: br#"{"error":true,"errorNum":1496,"errorMessage":"not a leader","code":503}"#
                .to_vec(),
        }
    }

    #[test]
    fn a_refusal_to_lead_is_retried_and_an_answer_passes_through() {
        let ok = PeerReply {
            status: 202,
            body: b"[]".to_vec(),
        };
        let (_store, router, transport) = setup(vec![
            Ok(not_leader()),
            Err(PeerError::NotSent("refused".into())),
            Ok(ok.clone()),
        ]);
        assert_eq!(router.to_leader(&call(false)).unwrap(), ok);
        assert_eq!(transport.asked.lock().len(), 3);
        router.cache.stop();
    }

    #[test]
    fn an_unknown_outcome_is_retried_for_reads_only() {
        let (_store, router, transport) = setup(vec![Err(PeerError::Unknown("reset".into()))]);
        let error = router.to_leader(&call(false)).unwrap_err();
        assert_eq!(error.num(), 1457);
        assert_eq!(
            transport.asked.lock().len(),
            1,
            "a write is never sent twice"
        );
        let ok = PeerReply {
            status: 200,
            body: b"[]".to_vec(),
        };
        transport
            .answers
            .lock()
            .extend([Err(PeerError::Unknown("reset".into())), Ok(ok.clone())]);
        assert_eq!(router.to_leader(&call(true)).unwrap(), ok);
        router.cache.stop();
    }

    #[test]
    fn a_new_leader_in_the_plan_is_asked_next() {
        let ok = PeerReply {
            status: 201,
            body: b"[]".to_vec(),
        };
        let (store, router, transport) = setup(vec![Ok(ok.clone())]);
        let moved = ShardPlan {
            leader: "PRMR-b".into(),
            followers: vec!["PRMR-a".into()],
            epoch: 2,
        };
        let revision = store
            .put(
                &Layout::default().shard_plan("db", 1, "s2"),
                &encode(&moved),
            )
            .unwrap();
        assert!(router
            .cache
            .wait_for_revision(revision, Duration::from_secs(5)));
        assert_eq!(router.to_leader(&call(false)).unwrap(), ok);
        assert_eq!(*transport.asked.lock(), vec!["PRMR-b".to_string()]);
        router.cache.stop();
    }

    #[test]
    fn error_bodies_keep_their_number_message_and_status() {
        let error = error_from_body(
            403,
            br#"{"error":true,"errorNum":1429,"errorMessage":"write concern not fulfilled","code":403}"#,
        );
        assert_eq!((error.num(), error.status), (1429, 403));
        assert_eq!(error.message, "write concern not fulfilled");
        let unknown = error_from_value(&serde_json::json!({"errorNum": 99999}), Some(500));
        assert_eq!(unknown.num(), INTERNAL.num);
        let garbage = error_from_body(502, b"<html>");
        assert_eq!(garbage.num(), INTERNAL.num);
    }
}
