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
//! its bytes in the `{"type":"Buffer","data":[…]}` form ArangoDB's JavaScript layer produced;
//! the reply is written straight into one buffer whose size is computed first and checked
//! against the reply budget before anything is allocated (no JSON value per byte of the body,
//! no text copy of it), so an echo costs at most the reply bound on top of the body.

use std::io::Write;

use http::{Extensions, Uri};
use serde_json::{json, Map, Value};

use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::{Api, Peer};

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
    let before = json!({
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
    });
    let after = json!({
        "parameters": parameters,
        "cookies": {},
        "suffix": req.suffix,
        "rawSuffix": req.suffix,
        "path": format!("/{}", req.suffix.join("/")),
    });
    let before = serde_json::to_vec(&before).expect("JSON values serialise");
    let after = serde_json::to_vec(&after).expect("JSON values serialise");
    // `{…before…,"requestBody":<text>,"rawRequestBody":{"type":"Buffer","data":[…]},…after…}`:
    // the two objects without their closing and opening brace, the body's two forms between.
    let size = (before.len() - 1)
        + r#","requestBody":"#.len()
        + lossy_json_len(&req.body)
        + r#","rawRequestBody":{"type":"Buffer","data":["#.len()
        + byte_list_len(&req.body)
        + "]},".len()
        + (after.len() - 1);
    let mut budget = req.replies.budget();
    budget.grow(size)?;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&before[..before.len() - 1]);
    out.extend_from_slice(br#","requestBody":"#);
    write_lossy_json(&mut out, &req.body);
    out.extend_from_slice(br#","rawRequestBody":{"type":"Buffer","data":["#);
    for (i, byte) in req.body.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write!(out, "{byte}").expect("writing into a Vec cannot fail");
    }
    out.extend_from_slice(b"]},");
    out.extend_from_slice(&after[1..]);
    debug_assert_eq!(out.len(), size, "the reply's size was computed exactly");
    Ok(ApiResponse::json_bytes(200, out))
}

/// The replacement of each invalid UTF-8 sequence, as `String::from_utf8_lossy` has it.
const REPLACEMENT: &str = "\u{fffd}";

/// The length of `bytes` as a JSON string of their UTF-8 text, invalid sequences replaced by
/// U+FFFD (what [`write_lossy_json`] writes), computed without building the text.
fn lossy_json_len(bytes: &[u8]) -> usize {
    let mut counter = Counter(0);
    write_lossy_json(&mut counter, bytes);
    counter.0
}

/// Writes `bytes` as a JSON string of their UTF-8 text, invalid sequences replaced by U+FFFD,
/// without holding the text in memory: valid runs are escaped as they are written, exactly as
/// serde_json escapes a string.
fn write_lossy_json(out: &mut impl Write, bytes: &[u8]) {
    let mut write = |b: &[u8]| out.write_all(b).expect("writing into memory cannot fail");
    write(b"\"");
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid().as_bytes();
        let mut start = 0;
        for (i, &b) in valid.iter().enumerate() {
            let escaped: Option<&[u8]> = match b {
                b'"' => Some(br#"\""#),
                b'\\' => Some(br"\\"),
                b'\n' => Some(br"\n"),
                b'\r' => Some(br"\r"),
                b'\t' => Some(br"\t"),
                0x08 => Some(br"\b"),
                0x0c => Some(br"\f"),
                _ => None,
            };
            if escaped.is_none() && b >= 0x20 {
                continue;
            }
            write(&valid[start..i]);
            match escaped {
                Some(text) => write(text),
                None => write(format!("\\u{b:04x}").as_bytes()),
            }
            start = i + 1;
        }
        write(&valid[start..]);
        if !chunk.invalid().is_empty() {
            write(REPLACEMENT.as_bytes());
        }
    }
    write(b"\"");
}

/// The length of `bytes` as comma-separated decimal numbers.
fn byte_list_len(bytes: &[u8]) -> usize {
    let digits: usize = bytes
        .iter()
        .map(|b| match b {
            0..=9 => 1,
            10..=99 => 2,
            _ => 3,
        })
        .sum();
    digits + bytes.len().saturating_sub(1)
}

/// A writer that only counts.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_written_as_serde_json_writes_the_lossy_string() {
        let samples: [&[u8]; 5] = [
            b"plain",
            b"a\"b\\c\n\r\t\x08\x0c\x01\x1f",
            b"caf\xc3\xa9 \xff\xfe broken \xe2\x82",
            &[0u8, 200, 65, 0x80],
            b"",
        ];
        for sample in samples {
            let expected = serde_json::to_vec(&String::from_utf8_lossy(sample)).unwrap();
            let mut written = Vec::new();
            write_lossy_json(&mut written, sample);
            assert_eq!(written, expected, "{sample:?}");
            assert_eq!(lossy_json_len(sample), expected.len());
        }
        let all: Vec<u8> = (0..=255).collect();
        let mut written = Vec::new();
        write_lossy_json(&mut written, &all);
        assert_eq!(
            written,
            serde_json::to_vec(&String::from_utf8_lossy(&all)).unwrap()
        );
    }

    #[test]
    fn sizes_are_exact() {
        assert_eq!(byte_list_len(&[]), 0);
        assert_eq!(byte_list_len(&[0, 10, 255]), "0,10,255".len());
    }
}
