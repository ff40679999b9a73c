//! [`ApiRequest`]: one request after the cross-cutting steps (database resolved, user
//! authenticated, body decompressed and bounded, path decoded), as handlers see it.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method};
use quince_errors::{ArangoError, Result};
use quince_ops::DatabaseOps;
use serde_json::Value;

use crate::permission::Caller;

/// One request, ready for a handler.
pub struct ApiRequest {
    /// The HTTP method.
    pub method: Method,
    /// The database the request runs in (`/_db/{name}/`, or `_system`).
    pub database: Arc<dyn DatabaseOps>,
    /// The decoded path without the `/_db/{name}` prefix, for messages (`/_api/document/c/k`).
    pub path: String,
    /// The percent-decoded path segments after the family's prefix: for
    /// `/_api/document/coll/key` the document family sees `["coll", "key"]`.
    pub suffix: Vec<String>,
    /// The percent-decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    /// The request headers.
    pub headers: HeaderMap,
    /// The body, decompressed and within the configured bound.
    pub body: Bytes,
    /// Who sent the request and what they may do (see [`crate::permission`]: handlers check
    /// with [`ApiRequest::require`] and its siblings).
    pub user: Caller,
    /// The JSON nesting bound for bodies.
    pub json_depth_max: usize,
    /// The bounds on the memory of replies (handlers building large replies take a budget).
    pub replies: crate::reply_budget::ReplyLimits,
}

impl ApiRequest {
    /// The first value of a query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when the query parameter is present, whatever its value.
    pub fn has_param(&self, name: &str) -> bool {
        self.query.iter().any(|(k, _)| k == name)
    }

    /// A boolean query parameter, parsed as ArangoDB does: after trimming, `true`, `yes`, `on`,
    /// `y` and `1` (case-insensitive) are true, anything else false; `default` when absent.
    pub fn bool_param(&self, name: &str, default: bool) -> bool {
        match self.param(name) {
            Some(v) => parse_bool(v),
            None => default,
        }
    }

    /// A header as text (None when absent or not visible ASCII).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON: duplicate attribute names and nesting beyond the bound are rejected
    /// with 400/600, like malformed JSON.
    pub fn json_body(&self) -> Result<Value> {
        quince_model::json::parse(&self.body, self.json_depth_max)
    }

    /// The body as JSON, or 400 when it is empty.
    pub fn required_json_body(&self) -> Result<Value> {
        if self.body.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(ArangoError::with_message(
                quince_errors::HTTP_CORRUPTED_JSON,
                "request body is empty",
            ));
        }
        self.json_body()
    }
}

/// ArangoDB's boolean parsing of query values: a true spelling (`true`, `yes`, `on`, `y`, `1`,
/// in any case) is true and anything else is false, never an error. Command-line options follow
/// the stricter rule of quince-client's `parse_bool`, which refuses unknown words; the api keeps
/// its own because the rules differ and the api does not depend on the tools' client.
pub fn parse_bool(value: &str) -> bool {
    let v = value.trim();
    ["true", "yes", "on", "y", "1"]
        .iter()
        .any(|t| v.eq_ignore_ascii_case(t))
}

#[cfg(test)]
mod tests {
    use super::parse_bool;

    #[test]
    fn booleans_parse_like_arangodb() {
        for t in ["true", "TRUE", " yes ", "on", "Y", "1"] {
            assert!(parse_bool(t), "{t:?} should be true");
        }
        for f in ["false", "0", "no", "", "2", "truth"] {
            assert!(!parse_bool(f), "{f:?} should be false");
        }
    }
}
