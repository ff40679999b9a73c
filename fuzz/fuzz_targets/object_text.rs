//! Fuzz target: the insert fast route's one-pass object check (`ObjectText::scan`,
//! `ObjectText::scan_array` in `crates/model/src/object_text.rs`) against the parser it stands
//! in for (`quince_model::json::parse`), and its spliced stored form (`encode_object_text`)
//! against `encode_document`.
//!
//! What it is: input `[flags][body]`. The low three bits of `flags` pick the nesting bound
//! (1, 2, 3, 4, 8, 16, 64 or 256); the body is scanned as an object, as an array of objects,
//! and wrapped in `[` `]` as an array.
//!
//! What it is not: the HTTP handlers (`request_pipeline` sends inserts through the server);
//! a check that the fast route takes every body it could (a refusal only costs speed).
//!
//! Invariants checked: no panic on any input; when `scan` accepts a body, `json::parse`
//! accepts it too as an object `v`, the text is `serde_json`'s compact text of `v`,
//! `to_object()` is `v`, each system attribute reads back as `v`'s, and the stored bytes of
//! the text equal `encode_document`'s of `v`, as a document and (when `v` has legal
//! `_from`/`_to`) as an edge; when `scan_array` accepts a body, `json::parse` reads a
//! non-empty array of objects, each matching its text as above.

#![no_main]

use libfuzzer_sys::fuzz_target;
use quince_model::document::{encode_document, encode_object_text, validate_edge_end, EdgeEnds};
use quince_model::json;
use quince_model::object_text::{ObjectText, SystemAttribute};
use quince_model::rev::RevisionId;
use serde_json::{Map, Value};

const DEPTHS: [usize; 8] = [1, 2, 3, 4, 8, 16, 64, 256];

const SYSTEM: [(SystemAttribute, &str); 5] = [
    (SystemAttribute::Key, "_key"),
    (SystemAttribute::Id, "_id"),
    (SystemAttribute::Rev, "_rev"),
    (SystemAttribute::From, "_from"),
    (SystemAttribute::To, "_to"),
];

/// Everything the fast route relies on for one accepted object.
fn check_object(text: &ObjectText, object: &Map<String, Value>) {
    let compact = serde_json::to_vec(object).expect("an object serializes");
    assert_eq!(
        text.text(),
        &compact[..],
        "text differs from the parser's: {}",
        String::from_utf8_lossy(text.text())
    );
    assert_eq!(&text.to_object(), object);
    for (attribute, name) in SYSTEM {
        assert_eq!(
            text.attribute(attribute).as_ref(),
            object.get(name),
            "{name}"
        );
    }
    let rev = RevisionId(1_700_000_000_000_000);
    assert_eq!(
        encode_object_text("k1", rev, None, text),
        encode_document("k1", rev, None, object),
        "document form"
    );
    if let (Ok(from), Ok(to)) = (
        validate_edge_end(object.get("_from")),
        validate_edge_end(object.get("_to")),
    ) {
        let ends = EdgeEnds { from, to };
        assert_eq!(
            encode_object_text("k1", rev, Some(ends), text),
            encode_document("k1", rev, Some(ends), object),
            "edge form"
        );
    }
}

fn check_array(body: &[u8], depth_max: usize) {
    let Some(texts) = ObjectText::scan_array(body, depth_max) else {
        return;
    };
    let parsed = json::parse(body, depth_max);
    let Ok(Value::Array(items)) = parsed else {
        panic!("scan_array accepted what the parser reads as {parsed:?}");
    };
    assert!(!items.is_empty(), "scan_array accepted an empty array");
    assert_eq!(texts.len(), items.len());
    for (text, item) in texts.iter().zip(&items) {
        let Value::Object(object) = item else {
            panic!("scan_array accepted a non-object element {item:?}");
        };
        check_object(text, object);
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let depth_max = DEPTHS[usize::from(flags & 7)];
    if let Some(text) = ObjectText::scan(body, depth_max) {
        let parsed = json::parse(body, depth_max);
        let Ok(Value::Object(object)) = parsed else {
            panic!("scan accepted what the parser reads as {parsed:?}");
        };
        check_object(&text, &object);
    }
    check_array(body, depth_max);
    let mut wrapped = Vec::with_capacity(body.len() + 2);
    wrapped.push(b'[');
    wrapped.extend_from_slice(body);
    wrapped.push(b']');
    check_array(&wrapped, depth_max);
});
