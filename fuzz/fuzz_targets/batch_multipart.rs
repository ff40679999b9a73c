//! Fuzz target: the multipart envelope parser of `/_api/batch` (`boundary`, `split`,
//! `parse_part` in `crates/api/src/batch/multipart.rs`).
//!
//! What it is: input `[flags][content-type length: u8][content type][body]`. Flag bit 0 passes
//! the content type as the request's `Content-Type` (else there is none and the boundary comes
//! from the body's first line); bit 1 makes the content type
//! `multipart/form-data; boundary=<content type bytes>`, so short inputs reach `split` with a
//! boundary that occurs in the body. Every part `split` returns goes through `parse_part`.
//!
//! What it is not: execution of the parts (the `request_pipeline` target sends whole batch
//! requests through the server).
//!
//! Invariants checked: no panic on any input; a boundary is 1..=70 bytes without control
//! characters; `split` returns at most `PARTS_MAX` parts, each a piece of the body; a part that
//! parses has a target starting with `/`, at most `HEAD_LINES_MAX` headers, and a body of
//! exactly its `Content-Length` when it declares one.

#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use quince_api::fuzzing::{
    batch_boundary, batch_parse_part, batch_split, BATCH_HEAD_LINES_MAX, BATCH_PARTS_MAX,
};
use quince_fuzz::Input;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let flags = input.u8();
    let ct_len = usize::from(input.u8());
    let ct_raw = String::from_utf8_lossy(input.bytes(ct_len)).into_owned();
    let body = Bytes::copy_from_slice(input.rest());
    let content_type = match (flags & 1 != 0, flags & 2 != 0) {
        (_, true) => Some(format!("multipart/form-data; boundary={ct_raw}")),
        (true, false) => Some(ct_raw),
        (false, false) => None,
    };

    let Ok(boundary) = batch_boundary(content_type.as_deref(), &body) else {
        return;
    };
    assert!(!boundary.is_empty() && boundary.len() <= 70, "{boundary:?}");
    assert!(
        !boundary.bytes().any(|b| b.is_ascii_control()),
        "{boundary:?}"
    );

    let Ok(parts) = batch_split(&body, &boundary) else {
        return;
    };
    assert!(parts.len() <= BATCH_PARTS_MAX);
    let total: usize = parts.iter().map(Bytes::len).sum();
    assert!(total <= body.len(), "parts hold more bytes than the body");
    for (index, raw) in parts.iter().enumerate() {
        let Ok(part) = batch_parse_part(raw, index) else {
            continue;
        };
        assert!(part.target.starts_with('/'), "{:?}", part.target);
        assert!(part.headers.len() <= BATCH_HEAD_LINES_MAX);
        assert!(part.body.len() <= raw.len());
        if let Some(declared) = part.headers.get(http::header::CONTENT_LENGTH) {
            let declared: usize = declared
                .to_str()
                .expect("a Content-Length that was accepted is text")
                .trim()
                .parse()
                .expect("a Content-Length that was accepted is a number");
            assert_eq!(part.body.len(), declared);
        }
        let _ = (part.content_id, part.method);
    }
});
