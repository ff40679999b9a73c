//! The setup before a run: the connectivity check, the database, the collections, the
//! index and the docs1m preload.
//!
//! What it is: arangob's `setUp` as requests: `GET /_api/version` on every endpoint,
//! optionally `POST /_api/database`, then per collection `DELETE /_api/collection/<name>`
//! (404 is fine) and `POST /_api/collection` with the type, replication factor, number of
//! shards and waitForSync; `POST /_api/index` for the index cases; for docs1m the preloaded
//! documents `K0 …` in array bodies of [`PRELOAD_BATCH`].
//!
//! What it is not: part of the measurement. Nothing here is timed.
//!
//! Invariants: an endpoint that cannot be reached is [`SetupError::Unreachable`] (exit 2);
//! a refused collection or database request is [`SetupError::Refused`] (exit 1); a refused
//! index request does not stop the run: it is returned as an error to count, because the
//! rest of the case still works without the index.

use quince_client::{encode_segment, Connection, Method, RequestHead, Target, Timeouts};

use crate::batch::{array_failures, error_num};
use crate::cases::{docs1m_preload_document, Kind, Workload};
use crate::options::Settings;
use crate::runner::ErrorKey;

/// How many documents one preload request inserts.
pub const PRELOAD_BATCH: u64 = 1000;

/// Why the run cannot start.
#[derive(Debug)]
pub enum SetupError {
    /// An endpoint could not be resolved or reached.
    Unreachable(String),
    /// The server refused a setup request the case cannot do without.
    Refused(String),
}

/// A setup request's reply: status, errorNum and message.
struct Reply {
    status: u16,
    body: Vec<u8>,
}

impl Reply {
    fn describe(&self, what: &str) -> String {
        let message = serde_json::from_slice::<serde_json::Value>(&self.body)
            .ok()
            .and_then(|v| {
                v.get("errorMessage")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        match error_num(&self.body) {
            Some(num) => format!(
                "{what} answered {} (errorNum {num}): {message}",
                self.status
            ),
            None => format!("{what} answered {}", self.status),
        }
    }
}

struct Client<'a> {
    connection: Connection,
    head: &'a RequestHead,
}

impl Client<'_> {
    fn send(
        &mut self,
        head: Option<&RequestHead>,
        method: Method,
        path: &str,
        body: Option<&[u8]>,
    ) -> Result<Reply, SetupError> {
        let head = head.unwrap_or(self.head);
        let endpoint = self.connection.addr();
        let reply = self
            .connection
            .send(head, method, path, "application/json", body)
            .map_err(|e| SetupError::Unreachable(format!("{endpoint}: {method:?} {path}: {e}")))?;
        Ok(Reply {
            status: reply.status,
            body: reply.body(self.connection.buffer()).to_vec(),
        })
    }
}

/// Resolves every endpoint (with its TLS settings for ssl://: one client configuration for
/// the run, built from `--ssl.cafile` or the system's roots) and checks that each answers
/// `GET /_api/version` (any status: a 401 is counted by the run itself).
pub fn resolve_and_check(
    settings: &Settings,
    head: &RequestHead,
) -> Result<Vec<Target>, SetupError> {
    let config =
        quince_client::tls::config_for(&settings.endpoints, settings.ssl_cafile.as_deref())
            .map_err(SetupError::Unreachable)?;
    let mut targets = Vec::new();
    for endpoint in &settings.endpoints {
        let target =
            Target::resolve_with(endpoint, config.as_ref()).map_err(SetupError::Unreachable)?;
        let mut client = Client {
            connection: Connection::to(target.clone(), timeouts(settings)),
            head,
        };
        client
            .send(None, Method::Get, "/_api/version", None)
            .map_err(|e| match e {
                SetupError::Unreachable(m) => SetupError::Unreachable(format!(
                    "endpoint '{}' is not reachable: {m}",
                    endpoint.text
                )),
                other => other,
            })?;
        targets.push(target);
    }
    Ok(targets)
}

fn timeouts(settings: &Settings) -> Timeouts {
    Timeouts {
        connect: settings.connection_timeout,
        request: settings.request_timeout,
    }
}

/// Prepares the server for the case; returns the setup requests that failed without
/// stopping the run (the index of the index cases), to be counted as errors.
pub fn prepare(
    settings: &Settings,
    workload: &Workload,
    head: &RequestHead,
    target: &Target,
) -> Result<Vec<ErrorKey>, SetupError> {
    let mut client = Client {
        connection: Connection::to(target.clone(), timeouts(settings)),
        head,
    };
    let mut soft_errors = Vec::new();
    if settings.create_database {
        let system = head.for_database("_system");
        let body = serde_json::json!({"name": settings.database}).to_string();
        let reply = client.send(
            Some(&system),
            Method::Post,
            "/_api/database",
            Some(body.as_bytes()),
        )?;
        if !(reply.status < 300 || reply.status == 409) {
            return Err(SetupError::Refused(reply.describe("POST /_api/database")));
        }
    }
    if !settings.create_collection {
        return Ok(soft_errors);
    }
    for (name, kind) in workload.collections() {
        let path = format!("/_api/collection/{}", encode_segment(&name));
        let reply = client.send(None, Method::Delete, &path, None)?;
        if reply.status >= 300 && reply.status != 404 {
            return Err(SetupError::Refused(
                reply.describe(&format!("DELETE {path}")),
            ));
        }
        let body = serde_json::json!({
            "name": name,
            "type": kind,
            "replicationFactor": settings.replication_factor,
            "numberOfShards": settings.number_of_shards,
            "waitForSync": settings.wait_for_sync,
        })
        .to_string();
        let reply = client.send(
            None,
            Method::Post,
            "/_api/collection",
            Some(body.as_bytes()),
        )?;
        if reply.status >= 300 {
            return Err(SetupError::Refused(reply.describe("POST /_api/collection")));
        }
    }
    if let Kind::Indexed(index_type) = workload.case.kind {
        let path = format!(
            "/_api/index?collection={}",
            encode_segment(&workload.collection)
        );
        let body = serde_json::json!({"type": index_type, "fields": ["value"], "unique": false})
            .to_string();
        let reply = client.send(None, Method::Post, &path, Some(body.as_bytes()))?;
        if reply.status >= 300 {
            soft_errors.push(ErrorKey::Setup(reply.describe(&format!("POST {path}"))));
        }
    }
    if workload.case.kind == Kind::Docs1m {
        preload(&mut client, workload)?;
    }
    Ok(soft_errors)
}

/// Inserts docs1m's documents `K0 … K<preload-1>`.
fn preload(client: &mut Client<'_>, workload: &Workload) -> Result<(), SetupError> {
    let path = format!(
        "/_api/document?collection={}",
        encode_segment(&workload.collection)
    );
    let mut first = 0;
    while first < workload.preload {
        let last = (first + PRELOAD_BATCH).min(workload.preload);
        let documents: Vec<serde_json::Value> = (first..last)
            .map(|i| docs1m_preload_document(i, workload.complexity))
            .collect();
        let body = serde_json::to_vec(&documents).expect("JSON values serialise");
        let reply = client.send(None, Method::Post, &path, Some(&body))?;
        if reply.status >= 300 {
            return Err(SetupError::Refused(
                reply.describe("preload POST /_api/document"),
            ));
        }
        let failed = array_failures(reply.status, &reply.body);
        if let Some((status, num)) = failed.first() {
            return Err(SetupError::Refused(format!(
                "preload: {} of {} documents refused (first: status {status}, errorNum {num:?})",
                failed.len(),
                last - first
            )));
        }
        first = last;
    }
    Ok(())
}
