//! The JSON forms of the requests between a shard's leader and its followers
//! (`/_api/replication/...` on DB servers), and of their error replies.
//!
//! What it is: serde types for the bodies ([`ApplyBody`], [`JoinBody`], [`KeysReply`],
//! [`DocumentsReply`]), the encoding of a [`ReplicatedOp`] (`{"put": doc}`,
//! `{"remove": key}`, `{"truncate": true}`), and the conversion of an [`ArangoError`] to and
//! from an ArangoDB-shaped error reply.
//!
//! What it is not: the transport (`transport.rs`) or what the endpoints do.
//!
//! Invariants: a decoded body is bounded by what the api read (`--http.max-body-size`); an
//! error reply always carries `errorNum`, and one that does not parse is 1478 (the peer is not
//! a Quince DB server, or broke).

use quince_errors::{code_by_num, ArangoError, CLUSTER_BACKEND_UNAVAILABLE};
use quince_ops::{InternalReply, ReplicatedOp};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// `POST /_api/replication/apply`: operations for a follower, in order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyBody {
    /// The shard (its database is the request's).
    pub shard: String,
    /// The shard's collection id (to read the shard's Plan key when the epoch is new).
    pub cid: u64,
    /// The sender's epoch.
    pub epoch: u64,
    /// The sender's id.
    pub leader: String,
    /// Sync to disk before answering.
    #[serde(default)]
    pub wait_for_sync: bool,
    /// The operations (see [`encode_op`]).
    pub ops: Vec<Value>,
}

/// `POST /_api/replication/join`: a follower asks its leader to bring it in sync.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JoinBody {
    /// The shard.
    pub shard: String,
    /// The epoch the follower read from Plan.
    pub epoch: u64,
    /// The follower's id.
    pub follower: String,
}

/// The reply to `GET /_api/replication/keys`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct KeysReply {
    /// `[key, rev]` pairs of the requested bucket, sorted by key.
    pub keys: Vec<(String, String)>,
}

/// The reply to `PUT /_api/replication/documents`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct DocumentsReply {
    /// Each requested key's document (`null` when absent), in request order.
    pub documents: Vec<Value>,
}

/// The wire form of one operation.
pub fn encode_op(op: &ReplicatedOp) -> Value {
    match op {
        ReplicatedOp::Put(document) => json!({ "put": document }),
        ReplicatedOp::Remove(key) => json!({ "remove": key }),
        ReplicatedOp::Truncate => json!({ "truncate": true }),
    }
}

/// The wire form of one operation as JSON text: the bytes `serde_json` writes for
/// [`encode_op`]'s value, without building that value (no copy of the document).
pub fn encode_op_text(op: &ReplicatedOp) -> Vec<u8> {
    let mut out = Vec::new();
    match op {
        ReplicatedOp::Put(document) => {
            out.extend_from_slice(b"{\"put\":");
            serde_json::to_writer(&mut out, document).expect("JSON values serialize");
            out.push(b'}');
        }
        ReplicatedOp::Remove(key) => {
            out.extend_from_slice(b"{\"remove\":");
            serde_json::to_writer(&mut out, key).expect("strings serialize");
            out.push(b'}');
        }
        ReplicatedOp::Truncate => out.extend_from_slice(b"{\"truncate\":true}"),
    }
    out
}

/// The text of an [`ApplyBody`] whose `ops` are the operations' texts ([`encode_op_text`]):
/// the bytes `serde_json` writes for that body, built without copying the operations.
pub fn apply_body_text<'a>(
    shard: &str,
    cid: u64,
    epoch: u64,
    leader: &str,
    wait_for_sync: bool,
    ops: impl IntoIterator<Item = &'a [u8]>,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(b"{\"shard\":");
    serde_json::to_writer(&mut out, shard).expect("strings serialize");
    out.extend_from_slice(format!(",\"cid\":{cid},\"epoch\":{epoch},\"leader\":").as_bytes());
    serde_json::to_writer(&mut out, leader).expect("strings serialize");
    out.extend_from_slice(format!(",\"waitForSync\":{wait_for_sync},\"ops\":[").as_bytes());
    for (i, op) in ops.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(op);
    }
    out.extend_from_slice(b"]}");
    out
}

/// An operation from its wire form (400 for anything else).
pub fn decode_op(value: Value) -> Result<ReplicatedOp, ArangoError> {
    let bad = || {
        ArangoError::with_message(
            quince_errors::HTTP_BAD_PARAMETER,
            "a replicated operation is {put: document}, {remove: key} or {truncate: true}",
        )
    };
    let Value::Object(mut object) = value else {
        return Err(bad());
    };
    if object.len() != 1 {
        return Err(bad());
    }
    match (
        object.remove("put"),
        object.remove("remove"),
        object.remove("truncate"),
    ) {
        (Some(Value::Object(document)), None, None) => Ok(ReplicatedOp::Put(document)),
        (None, Some(Value::String(key)), None) => Ok(ReplicatedOp::Remove(key)),
        (None, None, Some(Value::Bool(true))) => Ok(ReplicatedOp::Truncate),
        _ => Err(bad()),
    }
}

/// A successful reply with this JSON body.
pub fn ok_reply(body: &Value) -> InternalReply {
    InternalReply {
        status: 200,
        body: serde_json::to_vec(body).expect("JSON values serialize"),
    }
}

/// The ArangoDB-shaped error reply of `error`.
pub fn error_reply(error: &ArangoError) -> InternalReply {
    let mut body = Map::new();
    body.insert("error".into(), Value::Bool(true));
    body.insert("code".into(), Value::from(error.status));
    body.insert("errorNum".into(), Value::from(error.num()));
    body.insert("errorMessage".into(), Value::from(error.message.as_ref()));
    InternalReply {
        status: error.status,
        body: serde_json::to_vec(&Value::Object(body)).expect("JSON values serialize"),
    }
}

/// The error an error reply carries (1478 when it carries none that is known).
pub fn reply_error(status: u16, body: &[u8]) -> ArangoError {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let num = parsed
        .as_ref()
        .and_then(|v| v.get("errorNum"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok());
    let message = parsed
        .as_ref()
        .and_then(|v| v.get("errorMessage"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    match num.and_then(code_by_num) {
        Some(code) => ArangoError::with_message(code, message).with_status(status),
        None => ArangoError::with_message(
            CLUSTER_BACKEND_UNAVAILABLE,
            format!("a peer answered {status} without an ArangoDB error"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_and_errors_survive_the_wire() {
        let document = json!({"_key": "k", "_rev": "_r", "a": 1});
        for op in [
            ReplicatedOp::Put(document.as_object().unwrap().clone()),
            ReplicatedOp::Remove("k".into()),
            ReplicatedOp::Truncate,
        ] {
            assert_eq!(decode_op(encode_op(&op)).unwrap(), op);
        }
        assert!(decode_op(json!({"put": 1})).is_err());
        assert!(decode_op(json!({"remove": "k", "truncate": true})).is_err());
        let error = ArangoError::new(quince_errors::CLUSTER_SHARD_LEADER_RESIGNED);
        let reply = error_reply(&error);
        let back = reply_error(reply.status, &reply.body);
        assert_eq!((back.num(), back.status), (1491, 503));
        assert_eq!(reply_error(502, b"<html>").num(), 1478);
    }

    #[test]
    fn operation_and_body_texts_are_what_serde_writes() {
        let document =
            json!({"_key": "k\"\u{e9}", "_rev": "_r", "a": [1, 2.5, null], "b": {"c": "\n"}});
        let ops = [
            ReplicatedOp::Put(document.as_object().unwrap().clone()),
            ReplicatedOp::Remove("k/\"x".into()),
            ReplicatedOp::Truncate,
        ];
        let texts: Vec<Vec<u8>> = ops.iter().map(encode_op_text).collect();
        for (op, text) in ops.iter().zip(&texts) {
            assert_eq!(*text, serde_json::to_vec(&encode_op(op)).unwrap());
        }
        for (sync, count) in [(false, 0), (true, 3), (false, 1)] {
            let body = ApplyBody {
                shard: "s1\"".into(),
                cid: 17,
                epoch: u64::MAX,
                leader: "PRMR-\u{e9}".into(),
                wait_for_sync: sync,
                ops: ops[..count].iter().map(encode_op).collect(),
            };
            let text = apply_body_text(
                &body.shard,
                body.cid,
                body.epoch,
                &body.leader,
                sync,
                texts[..count].iter().map(Vec::as_slice),
            );
            assert_eq!(text, serde_json::to_vec(&body).unwrap());
        }
    }
}
