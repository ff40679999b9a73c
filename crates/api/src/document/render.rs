//! Renders document replies: the `{"_id","_key","_rev",…}` meta of a write, the multi-document
//! result array with its `x-arango-error-codes` header, and the `etag` / `location` headers.
//!
//! What it is: small writers straight into a byte buffer, because a single insert or read is the
//! server's hot path and a `serde_json::Value` tree per reply would be pure overhead.
//!
//! What it is not: the error body of a failed single request (that is [`crate::error`]).
//!
//! Invariants: every buffer written here is one complete JSON value; ETags are quoted; a
//! multi-document array has exactly one entry per input item, unless the request was silent,
//! in which case it holds only the failed items.

use std::collections::BTreeMap;

use http::header::{HeaderName, ETAG, LOCATION};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use quince_errors::ArangoError;
use quince_ops::WriteOutcome;
use serde::Serialize;

use crate::error::item_error;
use crate::reply_budget::ReplyBudget;
use crate::response::ApiResponse;

use super::params::WriteKind;

/// The header naming the error codes of failed items of a multi-document request.
pub(crate) const ERROR_CODES_HEADER: HeaderName = HeaderName::from_static("x-arango-error-codes");

/// Characters left as they are in a path segment of a `location` header: RFC 3986 unreserved.
const PATH_SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Writes any serializable value (strings, JSON values) into the buffer.
fn write_json<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) {
    serde_json::to_writer(&mut *buf, value).expect("writing JSON into a Vec cannot fail");
}

/// Writes the reply object of one successful write: `_id`, `_key`, `_rev`, then `_oldRev`
/// (not for removals), `new` and `old` when present.
pub(crate) fn write_outcome(buf: &mut Vec<u8>, outcome: &WriteOutcome, kind: WriteKind) {
    buf.extend_from_slice(b"{\"_id\":");
    write_json(buf, &outcome.id);
    buf.extend_from_slice(b",\"_key\":");
    write_json(buf, &outcome.key);
    buf.extend_from_slice(b",\"_rev\":");
    write_json(buf, &outcome.rev);
    if kind != WriteKind::Remove {
        if let Some(old_rev) = &outcome.old_rev {
            buf.extend_from_slice(b",\"_oldRev\":");
            write_json(buf, old_rev);
        }
    }
    if let Some(new) = &outcome.new {
        buf.extend_from_slice(b",\"new\":");
        write_json(buf, new);
    }
    if let Some(old) = &outcome.old {
        buf.extend_from_slice(b",\"old\":");
        write_json(buf, old);
    }
    buf.push(b'}');
}

/// The success status of a write: 201 (200 for removals) when it was synced, else 202.
pub(crate) fn write_status(kind: WriteKind, synced: bool) -> u16 {
    match (synced, kind) {
        (false, _) => 202,
        (true, WriteKind::Remove) => 200,
        (true, _) => 201,
    }
}

/// The `etag` header value of a revision: the revision in double quotes.
pub(crate) fn etag_value(rev: &str) -> String {
    let mut etag = String::with_capacity(rev.len() + 2);
    etag.push('"');
    etag.push_str(rev);
    etag.push('"');
    etag
}

/// The `location` of a document: `/_db/<db>/_api/document/<collection>/<key>`, each part
/// percent-encoded.
pub(crate) fn location_value(database: &str, document_id: &str) -> String {
    let (collection, key) = document_id
        .split_once('/')
        .expect("a document id is <collection>/<key>");
    format!(
        "/_db/{}/_api/document/{}/{}",
        utf8_percent_encode(database, PATH_SEGMENT),
        utf8_percent_encode(collection, PATH_SEGMENT),
        utf8_percent_encode(key, PATH_SEGMENT),
    )
}

/// The reply to a successful single-document write.
pub(crate) fn single_write_reply(
    database: &str,
    outcome: &WriteOutcome,
    kind: WriteKind,
    silent: bool,
) -> ApiResponse {
    let status = write_status(kind, outcome.synced);
    if silent {
        return ApiResponse::json_bytes(status, &b"{}"[..]);
    }
    let mut body = Vec::with_capacity(96);
    write_outcome(&mut body, outcome, kind);
    let reply = ApiResponse::json_bytes(status, body).with_header(ETAG, &etag_value(&outcome.rev));
    if kind == WriteKind::Remove {
        reply
    } else {
        reply.with_header(LOCATION, &location_value(database, &outcome.id))
    }
}

/// The result array of a multi-document request, built item by item in input order, within
/// the reply's memory budget.
pub(crate) struct MultiReply {
    body: Vec<u8>,
    items: usize,
    silent: bool,
    /// How many items failed with each errorNum, for `x-arango-error-codes`.
    error_counts: BTreeMap<u32, u64>,
    /// The reply's share of the server's reply memory.
    budget: ReplyBudget,
    /// Set once the reply outgrew its budget: nothing more is added, and `finish` fails.
    overflow: Option<ArangoError>,
}

impl MultiReply {
    /// An empty result array. A silent reply lists only the failed items.
    pub(crate) fn new(silent: bool, items_expected: usize, budget: ReplyBudget) -> Self {
        let mut body = Vec::with_capacity(2 + items_expected.saturating_mul(80).min(1 << 20));
        body.push(b'[');
        MultiReply {
            body,
            items: 0,
            silent,
            error_counts: BTreeMap::new(),
            budget,
            overflow: None,
        }
    }

    /// True once the reply outgrew its budget (a read can stop early).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflow.is_some()
    }

    /// Adds one entry with `write`, unless the reply already outgrew its budget.
    fn add(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        if self.overflowed() {
            return;
        }
        if self.items > 0 {
            self.body.push(b',');
        }
        self.items += 1;
        write(&mut self.body);
        if let Err(err) = self.budget.grow(self.body.len()) {
            self.overflow = Some(err);
            self.body = Vec::new();
        }
    }

    /// Adds the result of one successful write.
    pub(crate) fn push_outcome(&mut self, outcome: &WriteOutcome, kind: WriteKind) {
        if self.silent {
            return;
        }
        self.add(|body| write_outcome(body, outcome, kind));
    }

    /// Adds one item that already is JSON text (a document read by `onlyget`).
    pub(crate) fn push_raw(&mut self, json: &[u8]) {
        self.add(|body| body.extend_from_slice(json));
    }

    /// Adds the inline error object of one failed item.
    pub(crate) fn push_error(&mut self, err: &ArangoError) {
        *self.error_counts.entry(err.num()).or_insert(0) += 1;
        self.add(|body| write_json(body, &item_error(err)));
    }

    /// Adds one item's result, whichever it is.
    pub(crate) fn push_result(
        &mut self,
        result: &Result<WriteOutcome, ArangoError>,
        kind: WriteKind,
    ) {
        match result {
            Ok(outcome) => self.push_outcome(outcome, kind),
            Err(err) => self.push_error(err),
        }
    }

    /// The finished reply, with `x-arango-error-codes` (`{"1210":2}`) when an item failed; the
    /// budget's error when it outgrew its budget.
    pub(crate) fn finish(mut self, status: u16) -> Result<ApiResponse, ArangoError> {
        if let Some(err) = self.overflow.take() {
            return Err(err);
        }
        self.body.push(b']');
        let body = std::mem::take(&mut self.body);
        let reply = ApiResponse::json_bytes(status, body);
        if self.error_counts.is_empty() {
            return Ok(reply);
        }
        let counts: serde_json::Map<String, serde_json::Value> = self
            .error_counts
            .iter()
            .map(|(num, count)| (num.to_string(), (*count).into()))
            .collect();
        let header = serde_json::Value::Object(counts).to_string();
        Ok(reply.with_header(ERROR_CODES_HEADER, &header))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply_budget::ReplyLimits;

    fn outcome() -> WriteOutcome {
        WriteOutcome {
            id: "c/k".into(),
            key: "k".into(),
            rev: "_r---".into(),
            old_rev: Some("_q---".into()),
            new: Some(serde_json::json!({"a": 1})),
            old: None,
            synced: false,
        }
    }

    #[test]
    fn meta_has_old_rev_except_for_removals() {
        let mut buf = Vec::new();
        write_outcome(&mut buf, &outcome(), WriteKind::Replace);
        assert_eq!(
            std::str::from_utf8(&buf).unwrap(),
            r#"{"_id":"c/k","_key":"k","_rev":"_r---","_oldRev":"_q---","new":{"a":1}}"#
        );
        buf.clear();
        write_outcome(&mut buf, &outcome(), WriteKind::Remove);
        assert_eq!(
            std::str::from_utf8(&buf).unwrap(),
            r#"{"_id":"c/k","_key":"k","_rev":"_r---","new":{"a":1}}"#
        );
    }

    #[test]
    fn location_percent_encodes_each_part() {
        assert_eq!(
            location_value("my db", "c ö/a:b@c"),
            "/_db/my%20db/_api/document/c%20%C3%B6/a%3Ab%40c"
        );
    }

    #[test]
    fn a_reply_over_its_budget_fails_and_frees_its_body() {
        let limits = ReplyLimits::new(1000);
        let mut reply = MultiReply::new(false, 100, limits.budget());
        for _ in 0..100 {
            reply.push_raw(br#"{"_key":"big","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#);
        }
        assert!(reply.overflowed());
        assert!(
            reply.body.capacity() == 0,
            "the partial body is freed at once"
        );
        let err = reply.finish(200).unwrap_err();
        assert_eq!((err.status, err.num()), (400, 32));
    }

    #[test]
    fn silent_multi_reply_keeps_only_errors_and_counts_them() {
        let mut reply = MultiReply::new(true, 3, ReplyLimits::new(1 << 20).budget());
        reply.push_outcome(&outcome(), WriteKind::Insert);
        let err = ArangoError::new(quince_errors::ARANGO_UNIQUE_CONSTRAINT_VIOLATED);
        reply.push_error(&err);
        reply.push_error(&err);
        let response = reply.finish(202).unwrap();
        let body: serde_json::Value = serde_json::from_slice(&response.body).unwrap();
        assert_eq!(body.as_array().unwrap().len(), 2);
        assert_eq!(body[0]["errorNum"], 1210);
        assert_eq!(response.headers[ERROR_CODES_HEADER], r#"{"1210":2}"#);
    }
}
