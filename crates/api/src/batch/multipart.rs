//! The multipart envelope of `/_api/batch`: finding the boundary, splitting the body into
//! parts, reading each part's MIME headers and embedded HTTP request, and writing the
//! multipart reply.
//!
//! What it is: pure functions over bytes ([`boundary`], [`split`], [`parse_part`],
//! [`render`]).
//!
//! What it is not: execution (`super::handle` runs the parts).
//!
//! Invariants: every malformed input is a 400 error value, never a panic; at most
//! [`PARTS_MAX`] parts and [`HEAD_LINES_MAX`] header lines per head are read; a part's
//! embedded body is exactly `Content-Length` bytes when that header is present (more or
//! fewer bytes are malformed) and otherwise the rest of the part; the line break before a
//! delimiter belongs to the delimiter.

use bytes::{BufMut, Bytes, BytesMut};
use http::header::{HeaderName, HeaderValue, CONTENT_LENGTH};
use http::{HeaderMap, Method};
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER};

use crate::response::ApiResponse;

/// The most parts one batch may hold.
pub(crate) const PARTS_MAX: usize = 8192;

/// The most header lines in one MIME or embedded request head.
pub(crate) const HEAD_LINES_MAX: usize = 256;

/// The longest boundary RFC 2046 allows.
const BOUNDARY_LEN_MAX: usize = 70;

/// The content type every part must declare.
pub(crate) const PART_CONTENT_TYPE: &str = "application/x-arango-batchpart";

/// One part of the envelope.
#[derive(Debug)]
pub(crate) struct Part {
    /// The `Content-Id` MIME header, echoed in the reply.
    pub content_id: Option<String>,
    /// The embedded request.
    pub request: PartRequest,
}

/// The HTTP request inside a part.
#[derive(Debug)]
pub(crate) struct PartRequest {
    pub method: Method,
    /// The request target (`/_api/document/c?x=1`).
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// 400 with a message naming what is wrong.
pub(crate) fn malformed(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(
        HTTP_BAD_PARAMETER,
        format!("invalid multipart message received: {}", message.into()),
    )
}

/// The boundary: from `Content-Type: multipart/form-data; boundary=…`, else from the body's
/// first line (`--boundary`).
pub(crate) fn boundary(content_type: Option<&str>, body: &[u8]) -> Result<String> {
    let from_header = content_type.and_then(|ct| {
        ct.split(';').skip(1).find_map(|param| {
            let (name, value) = param.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("boundary")
                .then(|| value.trim().trim_matches('"').to_string())
        })
    });
    let boundary = match from_header {
        Some(b) => b,
        None => {
            let line_end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
            let line = trim_cr(&body[..line_end]);
            let Some(rest) = line.strip_prefix(b"--") else {
                return Err(malformed(
                    "no boundary in the content type or the first line",
                ));
            };
            String::from_utf8(rest.trim_ascii_end().to_vec())
                .map_err(|_| malformed("the boundary is not UTF-8"))?
        }
    };
    if boundary.is_empty()
        || boundary.len() > BOUNDARY_LEN_MAX
        || boundary.bytes().any(|b| b.is_ascii_control())
    {
        return Err(malformed("invalid boundary"));
    }
    Ok(boundary)
}

/// Splits the body into the raw bytes of each part (between delimiters).
pub(crate) fn split(body: &Bytes, boundary: &str) -> Result<Vec<Bytes>> {
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let Some(first) = find(body, delimiter, 0) else {
        return Err(malformed("no delimiter found"));
    };
    let mut parts = Vec::new();
    let mut pos = first + delimiter.len();
    loop {
        if body[pos..].starts_with(b"--") {
            return Ok(parts);
        }
        // The rest of the delimiter line may hold only spaces before its line break.
        let mut start = pos;
        while start < body.len() && (body[start] == b' ' || body[start] == b'\t') {
            start += 1;
        }
        start = match &body[start..] {
            [b'\r', b'\n', ..] => start + 2,
            [b'\n', ..] => start + 1,
            _ => return Err(malformed("a delimiter is not followed by a line break")),
        };
        let mut next_delimiter = Vec::with_capacity(delimiter.len() + 1);
        next_delimiter.push(b'\n');
        next_delimiter.extend_from_slice(delimiter);
        let Some(newline) = find(body, &next_delimiter, start) else {
            return Err(malformed("the last part is not closed by a delimiter"));
        };
        let end = if newline > start && body[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        if parts.len() == PARTS_MAX {
            return Err(malformed(format!("more than {PARTS_MAX} parts")));
        }
        parts.push(body.slice(start..end.max(start)));
        pos = newline + next_delimiter.len();
    }
}

/// Reads one part: its MIME headers (a batch-part content type is mandatory) and the HTTP
/// request inside it.
pub(crate) fn parse_part(raw: &Bytes, index: usize) -> Result<Part> {
    let (mime, offset) = read_head(raw, 0, index)?;
    let content_type = mime
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.as_str());
    let declared = content_type
        .and_then(|ct| ct.split(';').next())
        .is_some_and(|ct| ct.trim().eq_ignore_ascii_case(PART_CONTENT_TYPE));
    if !declared {
        return Err(malformed(format!(
            "part {index} does not have Content-Type {PART_CONTENT_TYPE}"
        )));
    }
    let content_id = mime
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-id"))
        .map(|(_, value)| value.clone());

    let line_end = find(raw, b"\n", offset)
        .ok_or_else(|| malformed(format!("part {index} has no request line")))?;
    let line = std::str::from_utf8(trim_cr(&raw[offset..line_end]))
        .map_err(|_| malformed(format!("part {index}: request line is not UTF-8")))?;
    let mut words = line.split_ascii_whitespace();
    let (Some(method), Some(target)) = (words.next(), words.next()) else {
        return Err(malformed(format!(
            "part {index}: bad request line '{line}'"
        )));
    };
    let version_ok = words
        .next()
        .is_none_or(|v| v.starts_with("HTTP/1.") && words.next().is_none());
    if !version_ok || !target.starts_with('/') {
        return Err(malformed(format!(
            "part {index}: bad request line '{line}'"
        )));
    }
    let method = Method::from_bytes(method.as_bytes())
        .map_err(|_| malformed(format!("part {index}: bad method '{method}'")))?;

    let (lines, body_start) = read_head(raw, line_end + 1, index)?;
    let mut headers = HeaderMap::new();
    for (name, value) in lines {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| malformed(format!("part {index}: bad header name '{name}'")))?;
        let value = HeaderValue::from_str(&value)
            .map_err(|_| malformed(format!("part {index}: bad header value")))?;
        headers.append(name, value);
    }
    let rest = raw.slice(body_start.min(raw.len())..);
    let body = match headers.get(CONTENT_LENGTH) {
        None => rest,
        Some(value) => {
            let length = value
                .to_str()
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| malformed(format!("part {index}: bad Content-Length")))?;
            if length > rest.len() || !rest[length..].iter().all(u8::is_ascii_whitespace) {
                return Err(malformed(format!(
                    "part {index}: Content-Length {length} does not match its body of {} bytes",
                    rest.len()
                )));
            }
            rest.slice(..length)
        }
    };
    Ok(Part {
        content_id,
        request: PartRequest {
            method,
            target: target.to_string(),
            headers,
            body,
        },
    })
}

/// Reads `name: value` lines from `start` up to an empty line; returns them and the offset
/// after the empty line. A head that ends with the input (no empty line) ends there.
fn read_head(raw: &[u8], start: usize, index: usize) -> Result<(Vec<(String, String)>, usize)> {
    let mut lines = Vec::new();
    let mut pos = start;
    while pos < raw.len() {
        let end = find(raw, b"\n", pos).unwrap_or(raw.len());
        let line = trim_cr(&raw[pos..end]);
        pos = (end + 1).min(raw.len());
        if line.is_empty() {
            return Ok((lines, pos));
        }
        if lines.len() == HEAD_LINES_MAX {
            return Err(malformed(format!("part {index}: too many header lines")));
        }
        let text = std::str::from_utf8(line)
            .map_err(|_| malformed(format!("part {index}: header line is not UTF-8")))?;
        let Some((name, value)) = text.split_once(':') else {
            return Err(malformed(format!("part {index}: bad header line '{text}'")));
        };
        lines.push((name.trim().to_string(), value.trim().to_string()));
    }
    Ok((lines, raw.len()))
}

/// Appends one reply part to a multipart reply being built.
pub(crate) fn render_part(
    out: &mut BytesMut,
    boundary: &str,
    content_id: Option<&str>,
    reply: &ApiResponse,
) {
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"\r\nContent-Type: ");
    out.put_slice(PART_CONTENT_TYPE.as_bytes());
    out.put_slice(b"\r\n");
    if let Some(id) = content_id {
        out.put_slice(b"Content-Id: ");
        out.put_slice(id.as_bytes());
        out.put_slice(b"\r\n");
    }
    out.put_slice(b"\r\n");
    let status = reply.status;
    out.put_slice(
        format!(
            "HTTP/1.1 {} {}\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or("Unknown")
        )
        .as_bytes(),
    );
    for (name, value) in &reply.headers {
        if name == CONTENT_LENGTH {
            continue;
        }
        out.put_slice(name.as_str().as_bytes());
        out.put_slice(b": ");
        out.put_slice(value.as_bytes());
        out.put_slice(b"\r\n");
    }
    out.put_slice(format!("Content-Length: {}\r\n\r\n", reply.body.len()).as_bytes());
    out.put_slice(&reply.body);
    out.put_slice(b"\r\n");
}

/// Closes a multipart reply.
pub(crate) fn render_end(out: &mut BytesMut, boundary: &str) {
    out.put_slice(b"--");
    out.put_slice(boundary.as_bytes());
    out.put_slice(b"--\r\n");
}

/// The first position of `needle` in `haystack` at or after `from`.
fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > haystack.len() || needle.is_empty() {
        return None;
    }
    let first = needle[0];
    let mut pos = from;
    while pos + needle.len() <= haystack.len() {
        let offset = haystack[pos..].iter().position(|&b| b == first)?;
        pos += offset;
        if haystack[pos..].starts_with(needle) {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARANGOB: &[u8] = b"--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\n\r\nPOST /_api/document?collection=c HTTP/1.1\r\n\r\n{\"a\":1}\r\n--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\nContent-Id: two\r\n\r\nGET /_api/version HTTP/1.1\r\nx-test: yes\r\nContent-Length: 0\r\n\r\n\r\n--XXXarangob-benchmarkXXX--\r\n";

    #[test]
    fn arangob_bodies_split_into_requests() {
        let body = Bytes::from_static(ARANGOB);
        let b = boundary(
            Some("multipart/form-data; boundary=XXXarangob-benchmarkXXX"),
            &body,
        )
        .unwrap();
        assert_eq!(b, "XXXarangob-benchmarkXXX");
        assert_eq!(boundary(None, &body).unwrap(), b);
        let raw = split(&body, &b).unwrap();
        assert_eq!(raw.len(), 2);
        let first = parse_part(&raw[0], 0).unwrap();
        assert_eq!(first.content_id, None);
        assert_eq!(first.request.method, Method::POST);
        assert_eq!(first.request.target, "/_api/document?collection=c");
        assert_eq!(&first.request.body[..], b"{\"a\":1}");
        let second = parse_part(&raw[1], 1).unwrap();
        assert_eq!(second.content_id.as_deref(), Some("two"));
        assert_eq!(second.request.headers["x-test"], "yes");
        assert!(second.request.body.is_empty());
    }

    #[test]
    fn lf_only_bodies_and_quoted_boundaries_work() {
        let body = Bytes::from_static(
            b"--b\nContent-Type: application/x-arango-batchpart\n\nDELETE /x HTTP/1.1\n\n--b--\n",
        );
        let b = boundary(Some("multipart/form-data; boundary=\"b\""), &body).unwrap();
        let raw = split(&body, &b).unwrap();
        let part = parse_part(&raw[0], 0).unwrap();
        assert_eq!(part.request.method, Method::DELETE);
        assert!(part.request.body.is_empty());
    }

    #[test]
    fn malformed_envelopes_and_parts_are_400() {
        assert_eq!(boundary(None, b"no boundary").unwrap_err().status, 400);
        let unterminated = Bytes::from_static(b"--b\r\nContent-Type: x\r\n\r\nGET / HTTP/1.1\r\n");
        assert_eq!(split(&unterminated, "b").unwrap_err().status, 400);
        assert_eq!(
            split(&Bytes::from_static(b"nothing"), "b")
                .unwrap_err()
                .status,
            400
        );
        let wrong_type =
            Bytes::from_static(b"Content-Type: text/plain\r\n\r\nGET / HTTP/1.1\r\n\r\n");
        assert_eq!(parse_part(&wrong_type, 0).unwrap_err().status, 400);
        let no_type = Bytes::from_static(b"\r\nGET / HTTP/1.1\r\n\r\n");
        assert_eq!(parse_part(&no_type, 0).unwrap_err().status, 400);
        let bad_line = Bytes::from_static(
            b"Content-Type: application/x-arango-batchpart\r\n\r\nnonsense\r\n\r\n",
        );
        assert_eq!(parse_part(&bad_line, 0).unwrap_err().status, 400);
        let long_body = Bytes::from_static(
            b"Content-Type: application/x-arango-batchpart\r\n\r\nPOST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc",
        );
        assert_eq!(parse_part(&long_body, 0).unwrap_err().status, 400);
    }

    fn render(boundary: &str, replies: &[(Option<String>, ApiResponse)]) -> Bytes {
        let mut out = BytesMut::new();
        for (content_id, reply) in replies {
            render_part(&mut out, boundary, content_id.as_deref(), reply);
        }
        render_end(&mut out, boundary);
        out.freeze()
    }

    #[test]
    fn replies_render_as_multipart() {
        let replies = vec![
            (Some("1".to_string()), ApiResponse::json_bytes(201, "{}")),
            (None, ApiResponse::empty(404)),
        ];
        let out = render("B", &replies);
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with("--B\r\nContent-Type: application/x-arango-batchpart\r\nContent-Id: 1\r\n\r\nHTTP/1.1 201 Created\r\n"));
        assert!(text.contains("Content-Length: 2\r\n\r\n{}\r\n--B\r\n"));
        assert!(text.contains("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n\r\n"));
        assert!(text.ends_with("--B--\r\n"));
        // What we render, we can read back as an envelope with the same number of parts.
        assert_eq!(split(&out, "B").unwrap().len(), 2);
    }
}
