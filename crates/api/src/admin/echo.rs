//! `/_admin/echo`: the request as the server understood it, for any method.
//!
//! What it is: one handler returning the documented attributes (`authorized`, `user`,
//! `isAdminUser`, `database`, `url`, `protocol`, `portType`, `server`, `client`, `internals`,
//! `prefix`, `headers`, `requestType`, `requestBody`, `rawRequestBody`, `parameters`,
//! `cookies`, `suffix`, `rawSuffix`, `path`).
//!
//! What it is not: a proxy or a debugging hook; it has no side effects.
//!
//! Invariants: `requestBody` is the body as text (invalid UTF-8 replaced), `rawRequestBody`
//! its bytes in the `{"type":"Buffer","data":[…]}` form ArangoDB's JavaScript layer produced.

use http::{Extensions, Uri};
use serde_json::{json, Map, Value};

use crate::pipeline::{Api, Peer};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// `/_admin/echo` (every method).
pub(crate) fn echo(api: &Api, req: &ApiRequest, uri: &Uri, extensions: &Extensions) -> ApiResult {
    let mut headers = Map::new();
    for (name, value) in &req.headers {
        let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
        headers.insert(name.as_str().to_string(), Value::String(text));
    }
    let mut parameters = Map::new();
    for (key, value) in &req.query {
        parameters.insert(key.clone(), Value::String(value.clone()));
    }
    let peer = extensions.get::<Peer>();
    let (server, client) = match peer {
        Some(p) => (
            json!({"address": p.server.ip().to_string(), "port": p.server.port(), "endpoint": api.config().endpoint}),
            json!({"address": p.client.ip().to_string(), "port": p.client.port(), "id": ""}),
        ),
        None => (
            json!({"address": "", "port": 0, "endpoint": api.config().endpoint}),
            json!({"address": "", "port": 0, "id": ""}),
        ),
    };
    let body = json!({
        "authorized": req.user.is_authenticated(),
        "user": req.user.name(),
        "isAdminUser": req.user.is_admin(),
        "database": req.database.name(),
        "url": uri.path_and_query().map_or("/", |pq| pq.as_str()),
        "protocol": "http",
        "portType": "tcp/ip",
        "server": server,
        "client": client,
        "internals": {},
        "prefix": "/",
        "headers": headers,
        "requestType": req.method.as_str(),
        "requestBody": String::from_utf8_lossy(&req.body),
        "rawRequestBody": {"type": "Buffer", "data": req.body.as_ref()},
        "parameters": parameters,
        "cookies": {},
        "suffix": req.suffix,
        "rawSuffix": req.suffix,
        "path": format!("/{}", req.suffix.join("/")),
    });
    Ok(ApiResponse::json(200, &body))
}
