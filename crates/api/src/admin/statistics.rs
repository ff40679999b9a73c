//! `GET /_admin/statistics` and `GET /_admin/statistics-description`: ArangoDB 3.12's
//! statistics shapes, filled from the same snapshot as the metrics.
//!
//! What it is: [`statistics`] (`time`, `enabled`, `system`, `client`, `http`, `server`) and
//! [`description`] (`groups` and `figures`: each figure's group, identifier, name,
//! description, type, units and, for distributions, its cuts). Distributions are
//! `{sum, count, counts}` with one count between each pair of consecutive cuts
//! (`cuts.len() + 1` counts, not cumulative), as ArangoDB reports them.
//!
//! What it is not: ArangoDB's every figure. As in an ArangoDB without JavaScript there is no
//! `server.v8Context`; there is no `clientUser` group and no `http.requestsSuperuser` or
//! `http.requestsUser` (Quince does not split traffic by superuser), and
//! `server.transactions.intermediateCommits` is always 0 (Quince never commits a transaction
//! in parts). `docs/operations.md` says so.
//!
//! Invariants: every figure [`description`] lists is in [`statistics`] under its group, and the
//! reverse (but for `server.transactions` and `server.threads`, which ArangoDB does not
//! describe either); each distribution has exactly `cuts.len() + 1` counts, which sum to its count.

use std::time::{SystemTime, UNIX_EPOCH};

use http::Method;
use quince_errors::ArangoError;
use serde_json::{json, Map, Value};

use crate::error::method_not_allowed;
use crate::metrics::requests::{
    BytesKind, Histogram, TimeKind, ARANGODB_REQUEST_TIME_CUTS, BYTES_CUTS, METHODS,
};
use crate::metrics::{Snapshot, CONNECTION_TIME_CUTS};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

fn only_get(req: &ApiRequest) -> Result<(), ArangoError> {
    match req.method {
        Method::GET => Ok(()),
        _ => Err(method_not_allowed()),
    }
}

/// `GET /_admin/statistics`.
pub(crate) fn statistics(api: &Api, req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let snapshot = api.metrics_snapshot();
    let time = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut body = figures(&snapshot);
    body.insert("time".into(), json!(time));
    body.insert("enabled".into(), json!(true));
    body.insert("error".into(), json!(false));
    body.insert("code".into(), json!(200));
    Ok(ApiResponse::json(200, &Value::Object(body)))
}

/// `GET /_admin/statistics-description`.
pub(crate) fn description(req: &ApiRequest) -> ApiResult {
    only_get(req)?;
    let groups: Vec<Value> = GROUPS
        .iter()
        .map(|(group, name, description)| {
            json!({"group": group, "name": name, "description": description})
        })
        .collect();
    let figures: Vec<Value> = FIGURES.iter().map(Figure::to_json).collect();
    Ok(ApiResponse::json(
        200,
        &json!({"groups": groups, "figures": figures, "error": false, "code": 200}),
    ))
}

/// A distribution as `/_admin/statistics` reports it.
fn distribution(h: &Histogram, cuts: &[f64]) -> Value {
    json!({"sum": h.sum, "count": h.count(), "counts": h.counts_between(cuts)})
}

/// The figures by group.
fn figures(s: &Snapshot) -> Map<String, Value> {
    let p = &s.process;
    let r = &s.requests;
    let time_cuts = &ARANGODB_REQUEST_TIME_CUTS;
    let system = json!({
        "minorPageFaults": p.minor_page_faults,
        "majorPageFaults": p.major_page_faults,
        "userTime": p.user_time,
        "systemTime": p.system_time,
        "numberOfThreads": p.threads,
        "residentSize": p.resident_size,
        "residentSizePercent": p.resident_share(),
        "virtualSize": p.virtual_size,
    });
    let client = json!({
        "httpConnections": s.connections_open,
        "connectionTime": distribution(&s.connection_times, &CONNECTION_TIME_CUTS),
        "totalTime": distribution(r.time(TimeKind::Total), time_cuts),
        "requestTime": distribution(r.time(TimeKind::Request), time_cuts),
        "queueTime": distribution(r.time(TimeKind::Queue), time_cuts),
        "ioTime": distribution(r.time(TimeKind::Io), time_cuts),
        "bytesSent": distribution(r.bytes(BytesKind::Sent), &BYTES_CUTS),
        "bytesReceived": distribution(r.bytes(BytesKind::Received), &BYTES_CUTS),
    });
    let mut http = Map::new();
    http.insert("requestsTotal".into(), json!(r.total()));
    http.insert("requestsAsync".into(), json!(r.asynchronous));
    for (index, method) in METHODS.iter().enumerate() {
        let mut name = method.to_ascii_lowercase();
        name[..1].make_ascii_uppercase();
        http.insert(format!("requests{name}"), json!(r.by_method(index)));
    }
    let c = &s.catalog;
    let server = json!({
        "uptime": s.uptime.as_secs_f64(),
        "physicalMemory": p.physical_memory,
        "transactions": {
            "started": c.transactions_started,
            "aborted": c.transactions_aborted,
            "committed": c.transactions_committed,
            "intermediateCommits": 0,
        },
        "threads": {
            "scheduler-threads": s.worker_threads,
            "in-progress": s.in_flight,
            "queued": 0,
        },
    });
    let mut body = Map::new();
    body.insert("system".into(), system);
    body.insert("client".into(), client);
    body.insert("http".into(), Value::Object(http));
    body.insert("server".into(), server);
    body
}

/// The groups: identifier, name, description.
const GROUPS: [(&str, &str, &str); 4] = [
    (
        "system",
        "Process Statistics",
        "Figures of the server process.",
    ),
    (
        "client",
        "Client Connection Statistics",
        "Figures of client connections and their requests.",
    ),
    (
        "http",
        "HTTP Request Statistics",
        "HTTP requests by method.",
    ),
    (
        "server",
        "Server Statistics",
        "Figures of the server as a whole.",
    ),
];

/// What a figure measures over time.
#[derive(Clone, Copy)]
enum Kind {
    Current,
    Accumulated,
    Distribution(&'static [f64]),
}

/// One figure of the description.
struct Figure {
    group: &'static str,
    identifier: &'static str,
    name: &'static str,
    description: &'static str,
    kind: Kind,
    units: &'static str,
}

impl Figure {
    fn to_json(&self) -> Value {
        let mut figure = json!({
            "group": self.group,
            "identifier": self.identifier,
            "name": self.name,
            "description": self.description,
        });
        let (kind, cuts) = match self.kind {
            Kind::Current => ("current", None),
            Kind::Accumulated => ("accumulated", None),
            Kind::Distribution(cuts) => ("distribution", Some(cuts)),
        };
        figure["type"] = json!(kind);
        if let Some(cuts) = cuts {
            figure["cuts"] = json!(cuts);
        }
        figure["units"] = json!(self.units);
        figure
    }
}

const fn figure(
    group: &'static str,
    identifier: &'static str,
    name: &'static str,
    description: &'static str,
    kind: Kind,
    units: &'static str,
) -> Figure {
    Figure {
        group,
        identifier,
        name,
        description,
        kind,
        units,
    }
}

const TIME: Kind = Kind::Distribution(&ARANGODB_REQUEST_TIME_CUTS);
const BYTES: Kind = Kind::Distribution(&BYTES_CUTS);

/// Every figure, in ArangoDB's order. (As in ArangoDB, `server.transactions` and
/// `server.threads` are reported but not described.)
#[rustfmt::skip]
const FIGURES: [Figure; 28] = [
    figure("system", "userTime", "User Time", "CPU time of the process in user mode.", Kind::Accumulated, "seconds"),
    figure("system", "systemTime", "System Time", "CPU time of the process in kernel mode.", Kind::Accumulated, "seconds"),
    figure("system", "numberOfThreads", "Number of Threads", "Threads of the process.", Kind::Current, "number"),
    figure("system", "residentSize", "Resident Set Size", "Resident memory of the process.", Kind::Current, "bytes"),
    figure("system", "residentSizePercent", "Resident Set Size", "Resident memory of the process as a share of physical memory (0 to 1).", Kind::Current, "percent"),
    figure("system", "virtualSize", "Virtual Memory Size", "Virtual memory of the process.", Kind::Current, "bytes"),
    figure("system", "minorPageFaults", "Minor Page Faults", "Page faults that needed no disk read.", Kind::Accumulated, "number"),
    figure("system", "majorPageFaults", "Major Page Faults", "Page faults that read a page from disk.", Kind::Accumulated, "number"),
    figure("client", "httpConnections", "Client Connections", "Client connections open now.", Kind::Current, "number"),
    figure("client", "totalTime", "Total Time", "Time from a request's arrival to its reply.", TIME, "seconds"),
    figure("client", "requestTime", "Request Time", "Time a request's handler ran.", TIME, "seconds"),
    figure("client", "queueTime", "Queue Time", "Time a request waited before its handler ran.", TIME, "seconds"),
    figure("client", "ioTime", "IO Time", "Time spent reading a request's body.", TIME, "seconds"),
    figure("client", "bytesSent", "Bytes Sent", "Reply bytes per request (status line, headers, body).", BYTES, "bytes"),
    figure("client", "bytesReceived", "Bytes Received", "Request bytes per request (request line, headers, body).", BYTES, "bytes"),
    figure("client", "connectionTime", "Connection Time", "How long closed client connections were open.", Kind::Distribution(&CONNECTION_TIME_CUTS), "seconds"),
    figure("http", "requestsTotal", "Total requests", "HTTP requests answered.", Kind::Accumulated, "number"),
    figure("http", "requestsAsync", "Async requests", "HTTP requests run as asynchronous jobs.", Kind::Accumulated, "number"),
    figure("http", "requestsGet", "HTTP GET requests", "HTTP GET requests.", Kind::Accumulated, "number"),
    figure("http", "requestsHead", "HTTP HEAD requests", "HTTP HEAD requests.", Kind::Accumulated, "number"),
    figure("http", "requestsPost", "HTTP POST requests", "HTTP POST requests.", Kind::Accumulated, "number"),
    figure("http", "requestsPut", "HTTP PUT requests", "HTTP PUT requests.", Kind::Accumulated, "number"),
    figure("http", "requestsPatch", "HTTP PATCH requests", "HTTP PATCH requests.", Kind::Accumulated, "number"),
    figure("http", "requestsDelete", "HTTP DELETE requests", "HTTP DELETE requests.", Kind::Accumulated, "number"),
    figure("http", "requestsOptions", "HTTP OPTIONS requests", "HTTP OPTIONS requests.", Kind::Accumulated, "number"),
    figure("http", "requestsOther", "other HTTP requests", "HTTP requests with any other method.", Kind::Accumulated, "number"),
    figure("server", "uptime", "Server Uptime", "Seconds since the server started.", Kind::Current, "seconds"),
    figure("server", "physicalMemory", "Physical Memory", "Physical memory of the machine.", Kind::Current, "bytes"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    #[test]
    fn every_described_figure_is_reported_and_distributions_fit_their_cuts() {
        let snapshot = Metrics::default().snapshot(Default::default());
        let body = figures(&snapshot);
        for f in FIGURES.iter() {
            let value = body
                .get(f.group)
                .and_then(|g| g.get(f.identifier))
                .unwrap_or_else(|| panic!("{}.{} missing", f.group, f.identifier));
            if let Kind::Distribution(cuts) = f.kind {
                let counts = value["counts"].as_array().unwrap();
                assert_eq!(counts.len(), cuts.len() + 1, "{}", f.identifier);
            }
        }
        for (group, figures) in &body {
            for name in figures.as_object().unwrap().keys() {
                let undescribed =
                    group == "server" && (name == "transactions" || name == "threads");
                assert!(
                    undescribed
                        || FIGURES
                            .iter()
                            .any(|f| f.group == group && f.identifier == name),
                    "{group}.{name} is not described"
                );
            }
        }
    }
}
