//! Requests for cursors and stream transactions that another coordinator holds: a client that
//! spreads its requests over coordinators (python-arango's round-robin hosts, arangojs's
//! load balancing for transactions) reaches the one that created them through this one.
//!
//! What it is: [`forward`], which sends the client's request (method, path and query, body,
//! `Content-Type`, `x-arango-trx-id`) to each other live coordinator in turn, as the cluster's
//! superuser naming the user it acts for ([`FORWARDED_FOR`]) and marked as forwarded
//! ([`FORWARDED`]), and answers the first reply that is not "no such cursor" (1600) or "no
//! such transaction" (1655).
//!
//! What it is not: routing by id (ids do not say which coordinator made them; with the few
//! coordinators of a cluster, asking each is cheap, and only requests this coordinator cannot
//! answer are forwarded), nor a pool: each forward opens its connection.
//!
//! Invariants: a forwarded request is never forwarded again (the api answers a request that
//! carries [`FORWARDED`] itself); the receiving api honours [`FORWARDED_FOR`] only from a
//! caller holding the cluster's superuser token; a reply's status, `Content-Type` and body
//! reach the client as the holder sent them.

use std::time::Duration;

use quince_client::connection::{Connection, Timeouts};
use quince_client::endpoint::Endpoint;
use quince_client::request::{Method, RequestHead};
use quince_errors::{ArangoError, Result, CLUSTER_BACKEND_UNAVAILABLE};
use quince_ops::{ForwardedReply, ForwardedRequest, FORWARDED, FORWARDED_FOR};
use serde_json::Value;

use crate::admin::coordinator_endpoints;
use crate::node::Node;

/// The error numbers that mean "not held here": try the next coordinator.
const NOT_HERE: [u64; 2] = [1600, 1655];

/// Sends `request` to the other coordinators in turn (see the module documentation), signed
/// with `token` (none: a cluster without authentication).
pub fn forward(
    node: &Node,
    token: Option<&str>,
    timeout: Duration,
    request: &ForwardedRequest,
) -> Result<Option<ForwardedReply>> {
    let Some(method) = method(&request.method) else {
        return Ok(None);
    };
    let own = &node.config.my_address;
    let others: Vec<String> = coordinator_endpoints(node)?
        .into_iter()
        .filter(|endpoint| endpoint != own)
        .collect();
    let mut extra = format!("{FORWARDED}: true\r\n");
    if let Some(user) = &request.user {
        extra.push_str(&format!("{FORWARDED_FOR}: {}\r\n", header_value(user)?));
    }
    if let Some(trx) = &request.trx {
        extra.push_str(&format!("x-arango-trx-id: {}\r\n", header_value(trx)?));
    }
    let content_type = request
        .content_type
        .as_deref()
        .map(header_value)
        .transpose()?
        .unwrap_or("application/json");
    let body = (!request.body.is_empty() || matches!(method, Method::Post | Method::Put))
        .then_some(request.body.as_slice());
    for endpoint in others {
        let parsed = Endpoint::parse(&endpoint)
            .map_err(|e| ArangoError::with_message(CLUSTER_BACKEND_UNAVAILABLE, e))?;
        let timeouts = Timeouts {
            connect: timeout.min(Duration::from_secs(3)),
            request: timeout,
        };
        let Ok(mut connection) = Connection::open(&parsed, None, timeouts) else {
            continue;
        };
        if connection.connect().is_err() {
            continue;
        }
        let mut head = RequestHead::new(&request.database, &connection.addr().to_string(), false);
        if let Some(token) = token {
            head = head.with_bearer(token);
        }
        let mut bytes = Vec::new();
        head.write_with_headers(
            &mut bytes,
            method,
            &request.path,
            &extra,
            content_type,
            body,
        );
        let response = connection.exchange(&bytes).map_err(|e| {
            ArangoError::with_message(
                CLUSTER_BACKEND_UNAVAILABLE,
                format!("forwarding to the coordinator at {endpoint}: {e}"),
            )
        })?;
        let buffer = connection.buffer();
        let reply_body = response.body(buffer).to_vec();
        if response.status == 404 && not_here(&reply_body) {
            continue;
        }
        let content_type = response
            .content_type
            .as_ref()
            .map(|_| String::from_utf8_lossy(response.content_type(buffer)).into_owned());
        return Ok(Some(ForwardedReply {
            status: response.status,
            content_type,
            body: reply_body,
        }));
    }
    Ok(None)
}

fn method(name: &str) -> Option<Method> {
    Some(match name {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        _ => return None,
    })
}

/// True for an error body that says the cursor or transaction is not held there.
fn not_here(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| v.get("errorNum").and_then(Value::as_u64))
        .is_some_and(|num| NOT_HERE.contains(&num))
}

/// `value` when it can be sent as a header value (no line breaks or other control
/// characters), else 400.
fn header_value(value: &str) -> Result<&str> {
    if value.chars().any(|c| c.is_control()) {
        return Err(ArangoError::with_message(
            quince_errors::BAD_PARAMETER,
            "a header value holds a control character",
        ));
    }
    Ok(value)
}
