//! [`EtcdStore`]: the metadata store over a real etcd cluster (etcd's v3 gRPC API, through
//! the calls of [`crate::etcd_wire`]).
//!
//! What it is: the blocking [`MetaStore`] calls made on etcd. The store owns a small tokio
//! runtime of its own (two worker threads); every call runs there and the caller waits on a
//! std channel, so a call may be made from any thread, a worker thread of another tokio
//! runtime included (it blocks that thread, it never panics). Each call is bounded by
//! [`EtcdOptions::call_timeout`]; one that runs out, or cannot reach any member, answers
//! [`MetaError::Unavailable`]. Within that time a call fails over between the members it was
//! given: the client balances over every endpoint, and a call that failed in a way etcd's own
//! client retries is tried again (reads, watches and keep-alives on any "unavailable" answer;
//! transactions, grants and revokes only when the request cannot have been sent: a refused
//! connection, or a member that has no leader, which refuses before applying since every
//! request asks for one). A call that timed out, or a run of refused connections, replaces
//! the client with a fresh one, so a member that comes back is used again. A watch whose
//! stream breaks resumes by itself from the revision after the last one it delivered; only
//! when that is impossible within the call timeout does it end with an error.
//!
//! What it is not: a cache, a TLS client (endpoints are plain HTTP: `tcp://`, `http://` or
//! bare `host:port`), or a supervisor of etcd members (`etcd_process.rs` builds their command
//! line).
//!
//! Invariants: those of the crate. Revisions are etcd's own (the header of each answer). A
//! watch never delivers an event twice or skips one: it resumes from the revision after the
//! last delivered, and reports [`MetaError::Compacted`] when etcd no longer has that history.
//! Lease TTLs are whole seconds in etcd: a TTL is rounded up, and is at least one second
//! (etcd raises it further to its own minimum, 1.5 election timeouts in whole seconds: 2 s
//! with the members' settings of `etcd_process.rs`).

use std::future::Future;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::runtime::Runtime;
use tokio::sync::{mpsc, oneshot};
use tonic::{Status, Streaming};

use crate::etcd_wire::{
    self as wire, prefix_bounds, CompareWith, ConnectOptions, KeyValue, Operation, RangeRequest,
    RequestOp, Rpc, TxnRequest, WatchRequest, WatchResponse,
};

use crate::store::{
    Compare, Entry, Event, EventKind, LeaseId, MetaError, MetaStore, Op, Revision, Snapshot,
    StoreMember, Txn, TxnResult, Watch,
};

/// How long calls may take.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdOptions {
    /// The longest one call may take, failovers and retries included (default 5 s).
    pub call_timeout: Duration,
    /// The longest a connection attempt to one member may take (default 2 s); also how long
    /// [`EtcdStore::connect`] waits for a first member to answer.
    pub connect_timeout: Duration,
}

impl Default for EtcdOptions {
    fn default() -> Self {
        EtcdOptions {
            call_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(2),
        }
    }
}

/// How often an open stream's connection is pinged: above etcd's 5 s minimum
/// (`etcd_wire::ConnectOptions::keep_alive`).
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(10);
/// Connection-level failures in a row after which the client is replaced.
const RECONNECT_AFTER_FAILURES: u32 = 8;
/// The shortest time one try of a repeatable call is given.
const ATTEMPT_TIMEOUT_MIN: Duration = Duration::from_millis(500);
/// The first and the longest pause between two tries of a call.
const RETRY_PAUSE_MIN: Duration = Duration::from_millis(10);
const RETRY_PAUSE_MAX: Duration = Duration::from_millis(200);

/// The client in use and what replacing it needs.
struct Shared {
    endpoints: Vec<String>,
    options: EtcdOptions,
    current: Mutex<Current>,
}

struct Current {
    client: Rpc,
    generation: u64,
    refused_in_a_row: u32,
}

/// The metadata store on etcd (see the module documentation). Clones share the connection.
#[derive(Clone)]
pub struct EtcdStore {
    shared: Arc<Shared>,
    runtime: Arc<OwnedRuntime>,
}

/// The store's runtime, shut down without blocking when the last handle goes (so dropping a
/// store inside another runtime is fine).
struct OwnedRuntime(Option<Runtime>);

impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl OwnedRuntime {
    fn get(&self) -> &Runtime {
        self.0.as_ref().expect("present until dropped")
    }
}

/// The endpoint as the channel takes it: `http://host:port`.
fn normalize_endpoint(endpoint: &str) -> Result<String, MetaError> {
    let endpoint = endpoint.trim().trim_end_matches('/');
    let address = if let Some(rest) = endpoint.strip_prefix("tcp://") {
        rest
    } else if let Some(rest) = endpoint.strip_prefix("http://") {
        rest
    } else if endpoint.contains("://") {
        return Err(MetaError::Unavailable(format!(
            "unsupported etcd endpoint {endpoint:?}: only tcp://, http:// or host:port"
        )));
    } else {
        endpoint
    };
    if address.is_empty() || address.contains('/') || !address.contains(':') {
        return Err(MetaError::Unavailable(format!(
            "bad etcd endpoint {endpoint:?}: expected host:port"
        )));
    }
    Ok(format!("http://{address}"))
}

/// A client balanced over `endpoints`; it connects on its first call.
fn new_client(endpoints: &[String], options: &EtcdOptions) -> Result<Rpc, MetaError> {
    let connect = ConnectOptions {
        connect_timeout: options.connect_timeout,
        keep_alive: Some((KEEP_ALIVE_INTERVAL, options.connect_timeout)),
        require_leader: true,
    };
    Rpc::new(endpoints, &connect).map_err(|e| MetaError::Unavailable(format!("etcd client: {e}")))
}

/// How a failed try may be repeated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Retry {
    /// Reads and other calls that may be repeated after any "unavailable" answer.
    Idempotent,
    /// Changes: repeated only when the request cannot have been applied.
    OnlyUnsent,
}

/// What a failure says about the request.
#[derive(PartialEq, Eq)]
enum Failure {
    /// Not sent, or refused before it was applied: safe to send again.
    Unsent,
    /// The member or connection failed; the request may have been applied.
    Unavailable,
    /// etcd answered with an error about the request itself.
    Answer,
}

// gRPC status codes that say the member or the connection failed (a connection that broke
// during a request answers "unknown", with an HTTP/2 error).
const GRPC_CANCELLED: i32 = 1;
const GRPC_UNKNOWN: i32 = 2;
const GRPC_DEADLINE_EXCEEDED: i32 = 4;
const GRPC_UNAVAILABLE: i32 = 14;

/// The errors below `status`, outermost first.
fn causes(status: &Status) -> impl Iterator<Item = &(dyn std::error::Error + 'static)> {
    std::iter::successors(std::error::Error::source(status), |error| error.source())
}

/// Whether `status` came from a connection that could not be made (tonic's `ConnectError`
/// among its causes: a refused connection or a connect timeout): the request never left.
fn connect_failed(status: &Status) -> bool {
    causes(status).any(|error| error.is::<tonic::ConnectError>())
}

fn classify(status: &Status) -> Failure {
    let message = status.message().to_ascii_lowercase();
    let code = i32::from(status.code());
    if message.contains("no leader")
        || message.starts_with(wire::NOT_READY)
        || connect_failed(status)
    {
        Failure::Unsent
    } else if [
        GRPC_CANCELLED,
        GRPC_UNKNOWN,
        GRPC_DEADLINE_EXCEEDED,
        GRPC_UNAVAILABLE,
    ]
    .contains(&code)
    {
        Failure::Unavailable
    } else {
        Failure::Answer
    }
}

/// The error for a call that failed: etcd's code and message, and the causes below them
/// (a transport error's own message says only "transport error").
fn unavailable(status: &Status) -> MetaError {
    let mut text = format!("etcd: {}: {}", status.code(), status.message());
    for error in causes(status) {
        text.push_str(&format!(": {error}"));
    }
    MetaError::Unavailable(text)
}

impl Shared {
    fn client(&self) -> (Rpc, u64) {
        let current = self.current.lock();
        (current.client.clone(), current.generation)
    }

    /// How long one try of a repeatable call may take: a third of the call's time, at least
    /// [`ATTEMPT_TIMEOUT_MIN`].
    fn attempt_timeout(&self) -> Duration {
        (self.options.call_timeout / 3).max(ATTEMPT_TIMEOUT_MIN)
    }

    /// Replaces the client of `generation` (unless another call did already).
    async fn reconnect(&self, generation: u64) {
        if self.current.lock().generation != generation {
            return;
        }
        if let Ok(client) = new_client(&self.endpoints, &self.options) {
            let mut current = self.current.lock();
            if current.generation == generation {
                current.client = client;
                current.generation += 1;
                current.refused_in_a_row = 0;
            }
        }
    }

    fn note_outcome(&self, generation: u64, refused: bool) -> bool {
        let mut current = self.current.lock();
        if current.generation != generation {
            return false;
        }
        if refused {
            current.refused_in_a_row += 1;
            current.refused_in_a_row >= RECONNECT_AFTER_FAILURES
        } else {
            current.refused_in_a_row = 0;
            false
        }
    }

    /// Runs `attempt` until it succeeds, fails in a way `retry` does not repeat, or the
    /// caller's timeout ends the future.
    async fn retrying<T, F, Fut>(&self, retry: Retry, mut attempt: F) -> Result<T, Status>
    where
        F: FnMut(Rpc) -> Fut,
        Fut: Future<Output = Result<T, Status>>,
    {
        let mut pause = RETRY_PAUSE_MIN;
        loop {
            let (client, generation) = self.client();
            let outcome = if retry == Retry::Idempotent {
                // A read sent to a member that lost its leader waits for it: try again
                // elsewhere rather than wait for the whole call's time.
                tokio::time::timeout(self.attempt_timeout(), attempt(client)).await
            } else {
                Ok(attempt(client).await)
            };
            let error = match outcome {
                Ok(Ok(value)) => {
                    self.note_outcome(generation, false);
                    return Ok(value);
                }
                Ok(Err(error)) => Some(error),
                Err(_elapsed) => None,
            };
            let Some(error) = error else {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(RETRY_PAUSE_MAX);
                continue;
            };
            let failure = classify(&error);
            let repeat = match failure {
                Failure::Unsent => true,
                Failure::Unavailable => retry == Retry::Idempotent,
                Failure::Answer => false,
            };
            if !repeat {
                return Err(error);
            }
            if self.note_outcome(generation, failure == Failure::Unsent) {
                self.reconnect(generation).await;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RETRY_PAUSE_MAX);
        }
    }
}

impl EtcdStore {
    /// Connects to the etcd cluster whose client endpoints are `endpoints` (`tcp://h:p`,
    /// `http://h:p` or `h:p`; every member's, so that calls fail over between them), and
    /// waits up to the connect timeout for one of them to answer.
    pub fn connect(endpoints: &[String], options: EtcdOptions) -> Result<EtcdStore, MetaError> {
        let endpoints = endpoints
            .iter()
            .map(|endpoint| normalize_endpoint(endpoint))
            .collect::<Result<Vec<_>, _>>()?;
        if endpoints.is_empty() {
            return Err(MetaError::Unavailable("no etcd endpoint given".into()));
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("quince-etcd")
            .enable_all()
            .build()
            .map_err(|e| MetaError::Unavailable(format!("etcd client runtime: {e}")))?;
        let runtime = Arc::new(OwnedRuntime(Some(runtime)));
        // The channel spawns its connection tasks: it must be made inside the runtime.
        let client = {
            let _inside = runtime.get().enter();
            new_client(&endpoints, &options)?
        };
        let store = EtcdStore {
            shared: Arc::new(Shared {
                endpoints,
                current: Mutex::new(Current {
                    client,
                    generation: 0,
                    refused_in_a_row: 0,
                }),
                options,
            }),
            runtime,
        };
        store.call(store.shared.options.connect_timeout, |shared| async move {
            shared
                .retrying(
                    Retry::Idempotent,
                    |client| async move { client.status().await },
                )
                .await
                .map_err(|e| unavailable(&e))
                .map(|_| ())
        })?;
        Ok(store)
    }

    /// The endpoints in use, as `http://host:port`.
    pub fn endpoints(&self) -> &[String] {
        &self.shared.endpoints
    }

    /// How many times the client was replaced by a fresh one (after a call timed out, or
    /// after a run of refused connections).
    pub fn reconnects(&self) -> u64 {
        self.shared.current.lock().generation
    }

    /// Runs `task` on the store's runtime within `timeout`, blocking the caller until done.
    fn call<T, F, Fut>(&self, timeout: Duration, task: F) -> Result<T, MetaError>
    where
        F: FnOnce(Arc<Shared>) -> Fut,
        Fut: Future<Output = Result<T, MetaError>> + Send + 'static,
        T: Send + 'static,
    {
        let (sender, receiver) = sync_channel(1);
        let shared = self.shared.clone();
        let future = task(shared.clone());
        self.runtime.get().spawn(async move {
            let answer = match tokio::time::timeout(timeout, future).await {
                Ok(answer) => answer,
                Err(_) => {
                    let generation = shared.client().1;
                    shared.reconnect(generation).await;
                    Err(MetaError::Unavailable(format!(
                        "etcd did not answer within {timeout:?}"
                    )))
                }
            };
            let _ = sender.send(answer);
        });
        receiver.recv().unwrap_or(Err(MetaError::Closed))
    }

    fn timed<T, F, Fut>(&self, task: F) -> Result<T, MetaError>
    where
        F: FnOnce(Arc<Shared>) -> Fut,
        Fut: Future<Output = Result<T, MetaError>> + Send + 'static,
        T: Send + 'static,
    {
        self.call(self.shared.options.call_timeout, task)
    }
}

fn entry(kv: &KeyValue) -> Entry {
    Entry {
        key: String::from_utf8_lossy(&kv.key).into_owned(),
        value: kv.value.clone(),
        create_revision: kv.create_revision,
        mod_revision: kv.mod_revision,
        version: kv.version,
        lease: kv.lease,
    }
}

/// A read of every key under `prefix` (at `revision`, or the newest when 0).
fn prefix_range(prefix: &str, revision: Revision) -> RangeRequest {
    let (key, range_end) = prefix_bounds(prefix.as_bytes());
    RangeRequest {
        key,
        range_end,
        revision,
        count_only: false,
    }
}

fn compare(compare: &Compare) -> wire::Compare {
    let (key, result, target, with) = match compare {
        // A missing key's mod_revision compares as 0 in etcd.
        Compare::ModRevision(key, revision) => (
            key,
            wire::COMPARE_EQUAL,
            wire::TARGET_MOD,
            CompareWith::ModRevision(*revision),
        ),
        // A missing key's value compares false in etcd, whatever the operator.
        Compare::Value(key, value) => (
            key,
            wire::COMPARE_EQUAL,
            wire::TARGET_VALUE,
            CompareWith::Value(value.clone()),
        ),
        Compare::Exists(key) => (
            key,
            wire::COMPARE_GREATER,
            wire::TARGET_VERSION,
            CompareWith::Version(0),
        ),
        Compare::Absent(key) => (
            key,
            wire::COMPARE_EQUAL,
            wire::TARGET_CREATE,
            CompareWith::CreateRevision(0),
        ),
    };
    wire::Compare {
        result,
        target,
        key: key.as_bytes().to_vec(),
        with: Some(with),
    }
}

fn operation(op: &Op) -> RequestOp {
    let request = match op {
        Op::Put { key, value, lease } => Operation::Put(wire::PutRequest {
            key: key.as_bytes().to_vec(),
            value: value.clone(),
            lease: lease.unwrap_or(0),
        }),
        Op::Delete(key) => Operation::DeleteRange(wire::DeleteRangeRequest {
            key: key.as_bytes().to_vec(),
            range_end: Vec::new(),
        }),
        Op::DeletePrefix(prefix) => {
            let (key, range_end) = prefix_bounds(prefix.as_bytes());
            Operation::DeleteRange(wire::DeleteRangeRequest { key, range_end })
        }
    };
    RequestOp {
        request: Some(request),
    }
}

fn is_lease_not_found(status: &Status) -> bool {
    status.message().contains("lease not found")
}

/// The lease of a transaction's puts that etcd found missing (the first one named).
fn txn_lease(txn: &Txn) -> LeaseId {
    txn.then
        .iter()
        .chain(&txn.otherwise)
        .find_map(|op| match op {
            Op::Put {
                lease: Some(lease), ..
            } => Some(*lease),
            _ => None,
        })
        .unwrap_or(0)
}

/// etcd's TTL for `ttl`: whole seconds, rounded up, at least one.
fn ttl_seconds(ttl: Duration) -> i64 {
    let seconds = ttl.as_secs() + u64::from(ttl.subsec_nanos() > 0);
    i64::try_from(seconds.max(1)).unwrap_or(i64::MAX)
}

/// How long a member's status may take when health probes it.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// A member's version and the leader it knows, asked of `endpoint` alone; `None` when it does
/// not answer within [`PROBE_TIMEOUT`].
async fn probe(endpoint: String) -> Option<(String, u64)> {
    let options = ConnectOptions {
        connect_timeout: PROBE_TIMEOUT,
        keep_alive: None,
        require_leader: false,
    };
    let asked = async {
        let client = Rpc::new(&[endpoint], &options).ok()?;
        let status = client.status().await.ok()?;
        Some((status.version, status.leader))
    };
    tokio::time::timeout(PROBE_TIMEOUT * 2, asked)
        .await
        .ok()
        .flatten()
}

impl MetaStore for EtcdStore {
    fn members(&self) -> Result<Vec<StoreMember>, MetaError> {
        self.timed(|shared| async move {
            let list = shared
                .retrying(Retry::Idempotent, |client| async move {
                    client.member_list().await
                })
                .await
                .map_err(|e| unavailable(&e))?;
            let mut members = Vec::new();
            let mut leaders = Vec::new();
            for member in list.members {
                let endpoint = member.client_urls.first().cloned().unwrap_or_default();
                let answer = match endpoint.is_empty() {
                    true => None,
                    false => probe(endpoint.clone()).await,
                };
                if let Some((_, leader)) = &answer {
                    leaders.push(*leader);
                }
                members.push((member.id, member.name, endpoint, answer));
            }
            Ok(members
                .into_iter()
                .map(|(id, name, endpoint, answer)| StoreMember {
                    id: format!("{id:x}"),
                    name,
                    endpoint,
                    reachable: answer.is_some(),
                    leader: leaders.contains(&id),
                    version: answer.map(|(version, _)| version).unwrap_or_default(),
                })
                .collect())
        })
    }

    fn get(&self, key: &str) -> Result<Option<Entry>, MetaError> {
        let key = key.to_string();
        self.timed(|shared| async move {
            let response = shared
                .retrying(Retry::Idempotent, |client| {
                    let request = RangeRequest {
                        key: key.as_bytes().to_vec(),
                        range_end: Vec::new(),
                        revision: 0,
                        count_only: false,
                    };
                    async move { client.range(request).await }
                })
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(response.kvs.first().map(entry))
        })
    }

    fn range(&self, prefix: &str) -> Result<Snapshot, MetaError> {
        let prefix = prefix.to_string();
        self.timed(|shared| async move {
            let response = shared
                .retrying(Retry::Idempotent, |client| {
                    let request = prefix_range(&prefix, 0);
                    async move { client.range(request).await }
                })
                .await
                .map_err(|e| unavailable(&e))?;
            Ok(Snapshot {
                entries: response.kvs.iter().map(entry).collect(),
                revision: response.header.map_or(0, |header| header.revision),
            })
        })
    }

    fn txn(&self, txn: Txn) -> Result<TxnResult, MetaError> {
        self.timed(|shared| async move {
            let request = TxnRequest {
                compare: txn.compares.iter().map(compare).collect(),
                success: txn.then.iter().map(operation).collect(),
                failure: txn.otherwise.iter().map(operation).collect(),
            };
            let response = shared
                .retrying(Retry::OnlyUnsent, |client| {
                    let request = request.clone();
                    async move { client.txn(request).await }
                })
                .await
                .map_err(|e| {
                    if is_lease_not_found(&e) {
                        MetaError::LeaseNotFound(txn_lease(&txn))
                    } else {
                        unavailable(&e)
                    }
                })?;
            Ok(TxnResult {
                succeeded: response.succeeded,
                revision: response.header.map_or(0, |header| header.revision),
            })
        })
    }

    fn watch(&self, prefix: &str, from_revision: Revision) -> Result<Watch, MetaError> {
        let prefix = prefix.to_string();
        let from_revision = from_revision.max(1);
        let (events, receiver) = std::sync::mpsc::channel();
        let (cancel, cancelled) = oneshot::channel::<()>();
        let stream = self.timed({
            let prefix = prefix.clone();
            |shared| async move { open_watch(&shared, &prefix, from_revision).await }
        })?;
        let shared = self.shared.clone();
        self.runtime.get().spawn(async move {
            tokio::select! {
                _ = cancelled => {}
                () = follow_watch(shared, prefix, from_revision, stream, events) => {}
            }
        });
        Ok(Watch::new(receiver, Box::new(cancel)))
    }

    fn grant_lease(&self, ttl: Duration) -> Result<LeaseId, MetaError> {
        let seconds = ttl_seconds(ttl);
        self.timed(|shared| async move {
            shared
                .retrying(Retry::OnlyUnsent, |client| async move {
                    client.lease_grant(seconds).await
                })
                .await
                .map_err(|e| unavailable(&e))
        })
    }

    fn keep_alive(&self, lease: LeaseId) -> Result<(), MetaError> {
        self.timed(|shared| async move {
            // One renewal on a keep-alive stream, and its answer (a TTL of 0: no such lease).
            let renewed = shared
                .retrying(Retry::Idempotent, |client| async move {
                    match client.lease_keep_alive_once(lease).await {
                        Err(e) if is_lease_not_found(&e) => Ok(false),
                        Err(e) => Err(e),
                        Ok(ttl) => Ok(ttl > 0),
                    }
                })
                .await
                .map_err(|e| unavailable(&e))?;
            if renewed {
                Ok(())
            } else {
                Err(MetaError::LeaseNotFound(lease))
            }
        })
    }

    fn revoke_lease(&self, lease: LeaseId) -> Result<(), MetaError> {
        self.timed(|shared| async move {
            shared
                .retrying(Retry::OnlyUnsent, |client| async move {
                    client.lease_revoke(lease).await
                })
                .await
                .map_err(|e| {
                    if is_lease_not_found(&e) {
                        MetaError::LeaseNotFound(lease)
                    } else {
                        unavailable(&e)
                    }
                })
        })
    }
}

/// Why an open watch stream stopped.
enum WatchEnd {
    /// The receiver is gone: stop.
    Dropped,
    /// The stream failed: resume if possible.
    Broken(String),
    /// etcd no longer has the history the watch needs.
    Compacted(Revision),
}

/// An open watch: the stream lives while its request sender does.
struct WatchStream {
    _requests: mpsc::Sender<WatchRequest>,
    answers: Streaming<WatchResponse>,
}

impl WatchStream {
    async fn message(&mut self) -> Result<Option<WatchResponse>, Status> {
        self.answers.message().await
    }
}

/// Opens a watch stream on `prefix` from `from_revision`, answering [`MetaError::Compacted`]
/// when etcd compacted that revision away, and reads etcd's "created" answer.
async fn open_watch(
    shared: &Shared,
    prefix: &str,
    from_revision: Revision,
) -> Result<WatchStream, MetaError> {
    shared
        .retrying(Retry::Idempotent, |client| {
            let (key, range_end) = prefix_bounds(prefix.as_bytes());
            async move {
                // etcd reports a compacted start revision only after the watch was created
                // (as a cancellation): a read at that revision tells at once.
                let check = RangeRequest {
                    key: key.clone(),
                    range_end: range_end.clone(),
                    revision: from_revision,
                    count_only: true,
                };
                let compacted = match client.range(check).await {
                    Ok(_) => false,
                    Err(e) if e.message().contains("compacted") => true,
                    Err(e) if e.message().contains("future revision") => false,
                    Err(e) => return Err(e),
                };
                let (requests, answers) = client.watch(key, range_end, from_revision).await?;
                let mut stream = WatchStream {
                    _requests: requests,
                    answers,
                };
                let mut response = stream.message().await?;
                if compacted && response.as_ref().is_some_and(|r| r.compact_revision == 0) {
                    response = stream.message().await?;
                }
                match response {
                    Some(response) if response.compact_revision > 0 => {
                        Ok(Err(MetaError::Compacted(response.compact_revision)))
                    }
                    Some(response) if response.created && !response.canceled => Ok(Ok(stream)),
                    Some(response) => Err(Status::unavailable(format!(
                        "watch not created: {}",
                        response.cancel_reason
                    ))),
                    None => Err(Status::unavailable(
                        "watch stream closed before it was created",
                    )),
                }
            }
        })
        .await
        .map_err(|e| unavailable(&e))?
}

/// Reads `stream` and sends every batch of events, until the receiver is dropped or the
/// stream stops.
async fn read_watch(
    stream: &mut WatchStream,
    events: &std::sync::mpsc::Sender<Result<Vec<Event>, MetaError>>,
    next_revision: &mut Revision,
) -> WatchEnd {
    loop {
        let response = match stream.message().await {
            Ok(Some(response)) => response,
            Ok(None) => return WatchEnd::Broken("watch stream ended".into()),
            Err(e) => return WatchEnd::Broken(e.to_string()),
        };
        if response.compact_revision > 0 {
            return WatchEnd::Compacted(response.compact_revision);
        }
        if response.canceled {
            return WatchEnd::Broken(format!("watch cancelled: {}", response.cancel_reason));
        }
        let batch: Vec<Event> = response
            .events
            .iter()
            .filter_map(|event| {
                let kv = event.kv.as_ref()?;
                Some(match event.kind {
                    wire::EVENT_DELETE => Event {
                        kind: EventKind::Delete,
                        entry: Entry {
                            key: String::from_utf8_lossy(&kv.key).into_owned(),
                            value: Vec::new(),
                            create_revision: 0,
                            mod_revision: kv.mod_revision,
                            version: 0,
                            lease: 0,
                        },
                    },
                    _ => Event {
                        kind: EventKind::Put,
                        entry: entry(kv),
                    },
                })
            })
            // A resumed stream never repeats, but be strict: nothing before the next revision.
            .filter(|event| event.entry.mod_revision >= *next_revision)
            .collect();
        if let Some(last) = batch.last() {
            *next_revision = last.entry.mod_revision + 1;
            if events.send(Ok(batch)).is_err() {
                return WatchEnd::Dropped;
            }
        }
    }
}

/// Streams of one watch in a row that may break soon after opening, before any event, before
/// the watch gives up; and what "soon" is.
const WATCH_STALLS_MAX: u32 = 50;
const WATCH_STALL_WITHIN: Duration = Duration::from_secs(1);

/// Follows a watch, resuming a broken stream from the revision after the last delivered.
async fn follow_watch(
    shared: Arc<Shared>,
    prefix: String,
    from_revision: Revision,
    mut stream: WatchStream,
    events: std::sync::mpsc::Sender<Result<Vec<Event>, MetaError>>,
) {
    let mut next_revision = from_revision;
    // Streams in a row that broke within WATCH_STALL_WITHIN of opening without delivering
    // anything, and the pause before the next resume: a stream that breaks at once again and
    // again (an answer the client refuses, say) must not spin, and ends the watch with an
    // error after WATCH_STALLS_MAX. A quiet stream that lived longer is no stall.
    let mut stalls = 0;
    let mut pause = RETRY_PAUSE_MIN;
    loop {
        let before = next_revision;
        let opened = tokio::time::Instant::now();
        let reason = match read_watch(&mut stream, &events, &mut next_revision).await {
            WatchEnd::Dropped => return,
            WatchEnd::Compacted(revision) => {
                let _ = events.send(Err(MetaError::Compacted(revision)));
                return;
            }
            WatchEnd::Broken(reason) => reason,
        };
        if next_revision == before && opened.elapsed() < WATCH_STALL_WITHIN {
            stalls += 1;
            if stalls >= WATCH_STALLS_MAX {
                let _ = events.send(Err(MetaError::Unavailable(format!(
                    "etcd watch broke {stalls} times in a row without an event ({reason})"
                ))));
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(RETRY_PAUSE_MAX);
        } else {
            stalls = 0;
            pause = RETRY_PAUSE_MIN;
        }
        let resume = tokio::time::timeout(
            shared.options.call_timeout,
            open_watch(&shared, &prefix, next_revision),
        )
        .await
        .unwrap_or_else(|_| {
            Err(MetaError::Unavailable(format!(
                "etcd watch broke ({reason}) and could not be resumed"
            )))
        });
        match resume {
            Ok(resumed) => stream = resumed,
            Err(error) => {
                let _ = events.send(Err(error));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_normalized_to_http() {
        assert_eq!(
            normalize_endpoint("tcp://127.0.0.1:2379").unwrap(),
            "http://127.0.0.1:2379"
        );
        assert_eq!(normalize_endpoint("http://h:1/").unwrap(), "http://h:1");
        assert_eq!(normalize_endpoint("h:1").unwrap(), "http://h:1");
        assert!(normalize_endpoint("ssl://h:1").is_err());
        assert!(normalize_endpoint("h").is_err());
        assert!(normalize_endpoint("").is_err());
    }

    /// A call to a port nobody listens on fails as "not sent" (so a transaction may be sent
    /// again elsewhere), found through tonic's `ConnectError` rather than the message.
    #[test]
    fn a_refused_connection_counts_as_not_sent() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let status = runtime.block_on(async {
            let options = ConnectOptions {
                connect_timeout: Duration::from_secs(2),
                keep_alive: None,
                require_leader: true,
            };
            let rpc = Rpc::new(&[format!("http://127.0.0.1:{port}")], &options).unwrap();
            rpc.status().await.unwrap_err()
        });
        assert!(connect_failed(&status), "{status:?}");
        assert!(classify(&status) == Failure::Unsent, "{status:?}");
        let MetaError::Unavailable(text) = unavailable(&status) else {
            panic!("not Unavailable")
        };
        assert!(text.to_ascii_lowercase().contains("refused"), "{text}");
    }

    #[test]
    fn an_empty_endpoint_list_is_refused() {
        let options = ConnectOptions {
            connect_timeout: Duration::from_secs(1),
            keep_alive: None,
            require_leader: false,
        };
        assert!(Rpc::new(&[], &options).is_err());
    }

    #[test]
    fn ttls_round_up_to_whole_seconds() {
        assert_eq!(ttl_seconds(Duration::ZERO), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(300)), 1);
        assert_eq!(ttl_seconds(Duration::from_secs(1)), 1);
        assert_eq!(ttl_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(ttl_seconds(Duration::from_secs(3)), 3);
    }
}
