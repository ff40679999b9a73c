//! The stored form of a document and its rendering for reads.
//!
//! What it is: [`encode_document`] builds the bytes a collection stores for one version:
//! the JSON object text with `_key` first, then `_rev`, then (edges) `_from` and `_to`, then the
//! user attributes in their order, and without `_id`. [`render_document`] turns those bytes
//! into what a read returns by splicing `"_id":"<collection>/<key>"` after `_key`, without
//! parsing the document (reads by key are the hot path). Edge ends are checked here too.
//!
//! What it is not: a JSON parser. The stored bytes are trusted to be what `encode_document`
//! wrote; the engine's checksums guard them on disk.
//!
//! Invariants: stored bytes start with `{"_key":"<key>","_rev":"<rev>"` where neither the key
//! nor the rev needs JSON escaping (both alphabets exclude `"` and `\`), so their positions are
//! found by scanning for the next quote; `_id` is never stored, so renaming a collection never
//! rewrites its documents.

use quince_errors::{ArangoError, Result, ARANGO_INVALID_EDGE_ATTRIBUTE};
use serde_json::{Map, Value};

use crate::key::parse_handle;
use crate::object_text::{ObjectText, SystemAttribute};
use crate::rev::RevisionId;

/// What every stored document starts with.
const KEY_PREFIX: &[u8] = b"{\"_key\":\"";

/// What follows the key's closing quote.
const REV_PREFIX: &[u8] = b",\"_rev\":\"";

/// The attributes the stored form writes itself, before the user attributes.
fn is_leading_attribute(name: &str, edge: bool) -> bool {
    matches!(name, "_key" | "_id" | "_rev") || (edge && matches!(name, "_from" | "_to"))
}

/// The two ends of an edge, as `<collection>/<key>` handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeEnds<'a> {
    /// `_from`.
    pub from: &'a str,
    /// `_to`.
    pub to: &'a str,
}

/// Checks one edge end (`_from` or `_to`): a string that is a legal document handle.
/// 400/1233 otherwise.
pub fn validate_edge_end(value: Option<&Value>) -> Result<&str> {
    match value {
        Some(Value::String(handle)) if parse_handle(handle).is_ok() => Ok(handle),
        _ => Err(ArangoError::new(ARANGO_INVALID_EDGE_ATTRIBUTE)),
    }
}

/// Reads and checks both edge ends of a document body: 400/1233 when one is missing or bad.
pub fn edge_ends(body: &Map<String, Value>) -> Result<EdgeEnds<'_>> {
    Ok(EdgeEnds {
        from: validate_edge_end(body.get("_from"))?,
        to: validate_edge_end(body.get("_to"))?,
    })
}

/// The start every stored version has, `{"_key":"<key>","_rev":"<rev>"`, in a buffer with room
/// for `capacity` bytes in all.
fn stored_head(key: &str, rev: RevisionId, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    out.extend_from_slice(KEY_PREFIX);
    out.extend_from_slice(key.as_bytes());
    out.push(b'"');
    out.extend_from_slice(REV_PREFIX);
    out.extend_from_slice(rev.encode().as_bytes());
    out.push(b'"');
    out
}

/// The stored bytes of one version of a document. `key` must be a legal key.
pub fn encode_document(
    key: &str,
    rev: RevisionId,
    edge: Option<EdgeEnds<'_>>,
    body: &Map<String, Value>,
) -> Vec<u8> {
    assert!(
        crate::key::is_valid_key(key),
        "encode_document with illegal key {key:?}"
    );
    let mut out = stored_head(key, rev, 64 + body.len() * 16);
    if let Some(ends) = edge {
        out.extend_from_slice(b",\"_from\":");
        write_json(&mut out, &Value::from(ends.from));
        out.extend_from_slice(b",\"_to\":");
        write_json(&mut out, &Value::from(ends.to));
    }
    for (name, value) in body {
        if is_leading_attribute(name, edge.is_some()) {
            continue;
        }
        out.push(b',');
        write_str(&mut out, name);
        out.push(b':');
        write_json(&mut out, value);
    }
    out.push(b'}');
    out
}

/// The stored bytes of one version of a document whose body is checked object text: the same
/// bytes as [`encode_document`] of `body.to_object()` (the user attributes are spliced from the
/// text instead of written from a tree). `key` must be a legal key.
pub fn encode_object_text(
    key: &str,
    rev: RevisionId,
    edge: Option<EdgeEnds<'_>>,
    body: &ObjectText,
) -> Vec<u8> {
    assert!(
        crate::key::is_valid_key(key),
        "encode_object_text with illegal key {key:?}"
    );
    let mut out = stored_head(key, rev, 48 + key.len() + body.text().len());
    let skip: &[SystemAttribute] = if let Some(ends) = edge {
        out.extend_from_slice(b",\"_from\":");
        write_str(&mut out, ends.from);
        out.extend_from_slice(b",\"_to\":");
        write_str(&mut out, ends.to);
        &[
            SystemAttribute::Key,
            SystemAttribute::Id,
            SystemAttribute::Rev,
            SystemAttribute::From,
            SystemAttribute::To,
        ]
    } else {
        &[
            SystemAttribute::Key,
            SystemAttribute::Id,
            SystemAttribute::Rev,
        ]
    };
    body.write_members_except(skip, &mut out);
    out.push(b'}');
    out
}

fn write_json(out: &mut Vec<u8>, value: &Value) {
    // Writing a `Value` into a Vec cannot fail: its keys are strings and there is no I/O.
    serde_json::to_writer(out, value).expect("serialising a JSON value into memory");
}

fn write_str(out: &mut Vec<u8>, text: &str) {
    serde_json::to_writer(out, text).expect("serialising a string into memory");
}

/// The JSON text that starts every `_id` of a collection: a quote, the escaped name and `/`.
/// Computed once per collection name and handed to [`render_document`].
pub fn id_prefix(collection: &str) -> String {
    let quoted = serde_json::to_string(collection).expect("serialising a string into memory");
    let mut prefix = quoted;
    prefix.pop();
    prefix.push('/');
    prefix
}

/// The position just after the key's closing quote.
fn key_end(stored: &[u8]) -> usize {
    assert!(
        stored.starts_with(KEY_PREFIX),
        "stored document does not start with _key"
    );
    let rest = &stored[KEY_PREFIX.len()..];
    let len = rest
        .iter()
        .position(|&b| b == b'"')
        .expect("stored document's key is not terminated");
    KEY_PREFIX.len() + len + 1
}

/// The key of a stored document.
pub fn stored_key(stored: &[u8]) -> &str {
    let end = key_end(stored);
    std::str::from_utf8(&stored[KEY_PREFIX.len()..end - 1]).expect("keys are ASCII")
}

/// The stored document's bytes after `_key` and `_rev`: `_from`, `_to` and user attributes
/// (and the closing brace). Checksums with data hash this.
pub fn stored_data(stored: &[u8]) -> &[u8] {
    let after_key = key_end(stored);
    let rest = &stored[after_key..];
    assert!(
        rest.starts_with(REV_PREFIX),
        "stored document has no _rev after _key"
    );
    let rev_start = after_key + REV_PREFIX.len();
    let rev_len = stored[rev_start..]
        .iter()
        .position(|&b| b == b'"')
        .expect("stored document's rev is not terminated");
    &stored[rev_start + rev_len + 1..]
}

/// The document as a read returns it: `_key`, `_id`, `_rev`, then the rest. `id_prefix` comes
/// from [`id_prefix`] for the collection's current name.
pub fn render_document(stored: &[u8], id_prefix: &str) -> Vec<u8> {
    let split = key_end(stored);
    let key = &stored[KEY_PREFIX.len()..split - 1];
    let mut out = Vec::with_capacity(stored.len() + id_prefix.len() + key.len() + 9);
    out.extend_from_slice(&stored[..split]);
    out.extend_from_slice(b",\"_id\":");
    out.extend_from_slice(id_prefix.as_bytes());
    out.extend_from_slice(key);
    out.push(b'"');
    out.extend_from_slice(&stored[split..]);
    out
}

/// The rendered document as a JSON value (for `new` and `old` in write replies).
pub fn render_value(stored: &[u8], id_prefix: &str) -> Value {
    let rendered = render_document(stored, id_prefix);
    crate::json::parse_stored(&rendered).expect("stored document is valid JSON")
}

/// The stored document as an object, without `_id` (for merging and comparisons).
pub fn stored_object(stored: &[u8]) -> Map<String, Value> {
    match crate::json::parse_stored(stored) {
        Ok(Value::Object(object)) => object,
        _ => panic!("stored document is not a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    #[test]
    fn documents_as_deep_as_the_limit_render_and_merge() {
        let depth = crate::json::JSON_DEPTH_LIMIT;
        let mut text = String::new();
        for _ in 0..depth - 1 {
            text.push_str("{\"a\":");
        }
        text.push('1');
        for _ in 0..depth - 1 {
            text.push('}');
        }
        let body = obj(crate::json::parse(text.as_bytes(), depth).unwrap());
        let stored = encode_document("k", RevisionId(5), None, &body);
        // serde_json's own bound (128) would refuse these; the stored form must not.
        assert!(serde_json::from_slice::<Value>(&stored).is_err());
        let value = render_value(&stored, &id_prefix("c"));
        assert_eq!(value["_id"], "c/k");
        let object = stored_object(&stored);
        let merged = crate::merge::merge_patch(
            &object,
            &object,
            crate::merge::MergeOptions {
                keep_null: true,
                merge_objects: true,
            },
        );
        assert_eq!(merged.len(), object.len());
    }

    #[test]
    fn stored_form_puts_key_and_rev_first_and_drops_id() {
        let body = obj(json!({"a": 1, "_id": "x/y", "_rev": "old", "_key": "ignored", "b": "s"}));
        let bytes = encode_document("k1", RevisionId(64), None, &body);
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            r#"{"_key":"k1","_rev":"_-","a":1,"b":"s"}"#
        );
        assert_eq!(stored_key(&bytes), "k1");
        assert_eq!(stored_data(&bytes), br#","a":1,"b":"s"}"#);
    }

    #[test]
    fn rendering_splices_the_id_after_the_key() {
        let bytes = encode_document("k", RevisionId(1), None, &obj(json!({"x": [1]})));
        let out = render_document(&bytes, &id_prefix("users"));
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            r#"{"_key":"k","_id":"users/k","_rev":"_","x":[1]}"#
        );
        let empty = encode_document("e", RevisionId(1), None, &Map::new());
        assert_eq!(
            render_value(&empty, &id_prefix("c")),
            json!({"_key": "e", "_id": "c/e", "_rev": "_"})
        );
    }

    #[test]
    fn collection_names_are_escaped_in_ids() {
        let bytes = encode_document("k", RevisionId(1), None, &Map::new());
        let value = render_value(&bytes, &id_prefix("we\"ird \\ ✓"));
        assert_eq!(value["_id"], json!("we\"ird \\ ✓/k"));
    }

    #[test]
    fn edges_store_their_ends_after_the_rev() {
        let body = obj(json!({"w": 1, "_to": "b/2", "_from": "a/1"}));
        let ends = edge_ends(&body).unwrap();
        let bytes = encode_document("e", RevisionId(2), Some(ends), &body);
        assert_eq!(
            std::str::from_utf8(&bytes).unwrap(),
            r#"{"_key":"e","_rev":"A","_from":"a/1","_to":"b/2","w":1}"#
        );
    }

    #[test]
    fn bad_edge_ends_answer_1233() {
        for body in [
            json!({}),
            json!({"_from": "a/1"}),
            json!({"_from": "a/1", "_to": 5}),
            json!({"_from": "a", "_to": "b/1"}),
            json!({"_from": "a/1", "_to": "b/bad key"}),
        ] {
            assert_eq!(
                edge_ends(&obj(body.clone())).unwrap_err().num(),
                1233,
                "{body}"
            );
        }
    }

    proptest! {
        #[test]
        fn render_equals_insert_of_id(
            key in "[A-Za-z0-9_.@()+,=;$!*'%:-]{1,40}",
            rev in 1u64..,
            coll in "\\PC{1,20}",
            attrs in proptest::collection::btree_map("\\PC{1,8}", any::<i64>(), 0..6),
        ) {
            let body: Map<String, Value> =
                attrs.iter().map(|(k, v)| (k.clone(), Value::from(*v))).collect();
            let bytes = encode_document(&key, RevisionId(rev), None, &body);
            let rendered = render_value(&bytes, &id_prefix(&coll));
            let mut expected = Map::new();
            expected.insert("_key".into(), Value::from(key.clone()));
            expected.insert("_id".into(), Value::from(format!("{coll}/{key}")));
            expected.insert("_rev".into(), Value::from(RevisionId(rev).encode()));
            for (k, v) in &body {
                if !matches!(k.as_str(), "_key" | "_id" | "_rev") {
                    expected.insert(k.clone(), v.clone());
                }
            }
            prop_assert_eq!(rendered, Value::Object(expected));
            prop_assert_eq!(stored_key(&bytes), key.as_str());
        }
    }
}
