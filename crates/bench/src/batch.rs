//! Batches: several operations in one HTTP request.
//!
//! What it is: arangob's multipart `POST /_api/batch` body (one `application/x-arango-batchpart`
//! part per operation, holding an embedded request line and body), the opt-in array body for
//! `POST /_api/document`, and the reading of per-part failures from a batch reply (the
//! `x-arango-errors` header gives the count; the parts give status and errorNum).
//!
//! What it is not: a general multipart library; it reads the replies of ArangoDB-compatible
//! servers, whose parts are embedded HTTP responses.
//!
//! Invariants: the boundary is arangob's (`XXXarangob-benchmarkXXX`); part URLs are relative
//! to the batch request's database, as the server resolves them.

use quince_client::response::{self, find};

use crate::cases::Op;

/// arangob's multipart boundary.
pub const BOUNDARY: &str = "XXXarangob-benchmarkXXX";

/// The `Content-Type` of a multipart batch.
pub fn multipart_content_type() -> String {
    format!("multipart/form-data; boundary={BOUNDARY}")
}

/// Appends one operation as a part of a multipart batch body.
pub fn append_part(body: &mut Vec<u8>, op: &Op) {
    let method = op.method.expect("an operation has a method");
    body.extend_from_slice(b"--");
    body.extend_from_slice(BOUNDARY.as_bytes());
    body.extend_from_slice(b"\r\nContent-Type: application/x-arango-batchpart\r\n\r\n");
    body.extend_from_slice(method.as_str().as_bytes());
    body.push(b' ');
    body.extend_from_slice(op.path.as_bytes());
    body.extend_from_slice(b" HTTP/1.1\r\n\r\n");
    if op.has_body {
        body.extend_from_slice(&op.body);
    }
    body.extend_from_slice(b"\r\n");
}

/// Appends the closing boundary of a multipart batch body.
pub fn finish_multipart(body: &mut Vec<u8>) {
    body.extend_from_slice(b"--");
    body.extend_from_slice(BOUNDARY.as_bytes());
    body.extend_from_slice(b"--\r\n");
}

/// Appends one insert's document to an array body (`[` before the first, `,` between).
pub fn append_array_element(body: &mut Vec<u8>, op: &Op, first: bool) {
    body.push(if first { b'[' } else { b',' });
    body.extend_from_slice(&op.body);
}

/// Closes an array body.
pub fn finish_array(body: &mut Vec<u8>) {
    if body.is_empty() {
        body.push(b'[');
    }
    body.push(b']');
}

/// A failed part: its HTTP status (0 when the part could not be read) and errorNum.
pub type PartError = (u16, Option<i64>);

/// The failed parts of a multipart batch reply, read from the parts themselves.
pub fn multipart_failures(content_type: &[u8], body: &[u8]) -> Vec<PartError> {
    let Some(at) = find(&content_type.to_ascii_lowercase(), b"boundary=") else {
        return Vec::new();
    };
    let boundary = content_type[at + 9..]
        .split(|b| *b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii();
    let boundary = boundary
        .strip_prefix(b"\"")
        .and_then(|b| b.strip_suffix(b"\""))
        .unwrap_or(boundary);
    if boundary.is_empty() {
        return Vec::new();
    }
    let mut delimiter = b"--".to_vec();
    delimiter.extend_from_slice(boundary);
    let mut failures = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, &delimiter) {
        rest = &rest[start + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let end = find(rest, &delimiter).unwrap_or(rest.len());
        let part = &rest[..end];
        // The part's own headers end at the first empty line; the embedded response follows.
        if let Some(head_end) = find(part, b"\r\n\r\n") {
            let embedded = &part[head_end + 4..];
            match response::parse(embedded, true) {
                Ok(Some(reply)) if reply.status >= 400 => {
                    failures.push((reply.status, error_num(reply.body(embedded))));
                }
                Ok(Some(_)) => {}
                _ => failures.push((0, None)),
            }
        }
        rest = &rest[end..];
    }
    failures
}

/// The failed elements of an array reply (`{"error":true,"errorNum":…}` elements).
pub fn array_failures(status: u16, body: &[u8]) -> Vec<PartError> {
    let Ok(serde_json::Value::Array(items)) = serde_json::from_slice::<serde_json::Value>(body)
    else {
        return Vec::new();
    };
    items
        .iter()
        .filter(|item| item.get("error").and_then(|e| e.as_bool()) == Some(true))
        .map(|item| {
            let code = item
                .get("code")
                .and_then(|c| c.as_u64())
                .and_then(|c| u16::try_from(c).ok())
                .unwrap_or(status);
            (code, item.get("errorNum").and_then(|n| n.as_i64()))
        })
        .collect()
}

/// The errorNum of an ArangoDB error body, if it is one.
pub fn error_num(body: &[u8]) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    value.get("errorNum")?.as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::{Position, TestCase, ThreadState, Workload};

    fn ops(name: &str, count: u64) -> Vec<Op> {
        let w = Workload::new(TestCase::from_name(name).unwrap(), "C", 1, 100, 0, 0, 0);
        (0..count)
            .map(|g| {
                let mut op = Op::default();
                let at = Position {
                    thread: 0,
                    thread_counter: g,
                    global: g,
                    ticket: g,
                };
                w.op(at, &mut ThreadState::default(), &mut op);
                op
            })
            .collect()
    }

    #[test]
    fn multipart_body_is_arangobs() {
        let mut body = Vec::new();
        for op in ops("crud-write-read", 2) {
            append_part(&mut body, &op);
        }
        finish_multipart(&mut body);
        let expected =
            "--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\n\r\n\
POST /_api/document?collection=C HTTP/1.1\r\n\r\n{\"_key\":\"testkey0\",\"value1\":true}\r\n\
--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\n\r\n\
GET /_api/document/C/testkey0 HTTP/1.1\r\n\r\n\r\n\
--XXXarangob-benchmarkXXX--\r\n";
        assert_eq!(String::from_utf8(body).unwrap(), expected);
    }

    #[test]
    fn array_body_joins_the_documents() {
        let mut body = Vec::new();
        for (i, op) in ops("document", 2).iter().enumerate() {
            assert!(op.is_insert());
            append_array_element(&mut body, op, i == 0);
        }
        finish_array(&mut body);
        let value: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(value.as_array().unwrap().len(), 2);
    }

    #[test]
    fn failed_parts_and_elements_are_read() {
        let reply = "--B\r\nContent-Type: application/x-arango-batchpart\r\n\r\n\
HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\n{}\r\n\
--B\r\nContent-Type: application/x-arango-batchpart\r\n\r\n\
HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\n\r\n{\"errorNum\":12}\r\n\
--B--\r\n";
        let failures = multipart_failures(b"multipart/form-data; boundary=B", reply.as_bytes());
        assert_eq!(failures, vec![(404, Some(12))]);
        let array = br#"[{"_key":"a"},{"error":true,"errorNum":1210,"code":409}]"#;
        assert_eq!(array_failures(202, array), vec![(409, Some(1210))]);
        assert_eq!(error_num(br#"{"error":true,"errorNum":11}"#), Some(11));
        assert_eq!(error_num(b"not json"), None);
    }
}
