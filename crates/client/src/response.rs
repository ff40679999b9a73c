//! The HTTP/1.x response parser of the client.
//!
//! What it is: a stateless function over the bytes received so far on a connection, used by
//! the blocking [`crate::connection`] and by `quince bench`'s non-blocking lanes alike. It
//! answers "not complete yet" or one whole response: its status, where its body lies (or the
//! decoded body of a chunked response), how many bytes it used, and the few headers the tools
//! read (`x-arango-errors`, `Connection`, the multipart `Content-Type`). Because it is a pure
//! function of a prefix, a response split at any byte boundary parses the same as one read in
//! a single piece (the property test checks exactly that).
//!
//! What it is not: a general HTTP library. It reads only what the tools need; it does
//! not handle `1xx` interim responses (the client never sends `Expect`), nor responses to
//! `HEAD` (the client never sends one).
//!
//! Invariants: the header block is bounded by [`HEAD_MAX`] and a body by [`BODY_MAX`]; a
//! response longer than those is an error, never a bigger buffer.

use std::ops::Range;

/// The largest header block accepted, in bytes.
pub const HEAD_MAX: usize = 64 * 1024;

/// The largest body accepted, in bytes.
pub const BODY_MAX: usize = 256 * 1024 * 1024;

/// A response the parser could not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedResponse(pub &'static str);

impl std::fmt::Display for MalformedResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed response: {}", self.0)
    }
}

/// Where the body of a parsed response is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// These bytes of the receive buffer (Content-Length or close-delimited bodies).
    Range(Range<usize>),
    /// The decoded chunks of a chunked body.
    Decoded(Vec<u8>),
}

/// One complete response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The body.
    pub body: Body,
    /// How many bytes of the buffer this response used.
    pub consumed: usize,
    /// The value of `x-arango-errors` (failed parts of a batch), when present.
    pub arango_errors: Option<u64>,
    /// Whether the server will close the connection after this response.
    pub close: bool,
    /// Where the value of `Content-Type` lies in the buffer, when present.
    pub content_type: Option<Range<usize>>,
}

impl Response {
    /// The body's bytes, given the buffer the response was parsed from.
    pub fn body<'a>(&'a self, buffer: &'a [u8]) -> &'a [u8] {
        match &self.body {
            Body::Range(range) => &buffer[range.clone()],
            Body::Decoded(bytes) => bytes,
        }
    }

    /// The `Content-Type` value, given the buffer the response was parsed from.
    pub fn content_type<'a>(&self, buffer: &'a [u8]) -> &'a [u8] {
        match &self.content_type {
            Some(range) => &buffer[range.clone()],
            None => b"",
        }
    }
}

/// Parses the response at the start of `buffer`. `eof` says the peer has closed the
/// connection, which completes a body that has neither a length nor chunks. Returns
/// `Ok(None)` while more bytes are needed.
pub fn parse(buffer: &[u8], eof: bool) -> Result<Option<Response>, MalformedResponse> {
    let Some(head_end) = find(buffer, b"\r\n\r\n") else {
        if buffer.len() > HEAD_MAX {
            return Err(MalformedResponse("header block too long"));
        }
        return Ok(None);
    };
    if head_end > HEAD_MAX {
        return Err(MalformedResponse("header block too long"));
    }
    let body_start = head_end + 4;
    let mut lines = buffer[..head_end].split(|b| *b == b'\n');
    let status_line = trim_cr(lines.next().unwrap_or_default());
    let (status, http10) = parse_status_line(status_line)?;

    let mut content_length: Option<usize> = None;
    let mut chunked = false;
    let mut arango_errors = None;
    let mut connection_close = http10;
    let mut content_type = None;
    let mut offset = status_line.len() + 2;
    for raw in lines {
        let line = trim_cr(raw);
        let line_start = offset;
        offset += raw.len() + 1;
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            return Err(MalformedResponse("header line without a colon"));
        };
        let name = &line[..colon];
        let value = trim(&line[colon + 1..]);
        if name.eq_ignore_ascii_case(b"content-length") {
            let length = parse_decimal(value).ok_or(MalformedResponse("bad Content-Length"))?;
            content_length = Some(length);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            chunked = contains_ignore_case(value, b"chunked");
        } else if name.eq_ignore_ascii_case(b"connection") {
            if contains_ignore_case(value, b"close") {
                connection_close = true;
            } else if contains_ignore_case(value, b"keep-alive") {
                connection_close = false;
            }
        } else if name.eq_ignore_ascii_case(b"x-arango-errors") {
            arango_errors = parse_decimal(value).map(|n| n as u64);
        } else if name.eq_ignore_ascii_case(b"content-type") {
            let start = line_start + (value.as_ptr() as usize - line.as_ptr() as usize);
            content_type = Some(start..start + value.len());
        }
    }

    let complete = |body: Body, consumed: usize, close: bool| Response {
        status,
        body,
        consumed,
        arango_errors,
        close,
        content_type: content_type.clone(),
    };
    if chunked {
        return Ok(decode_chunked(&buffer[body_start..])?.map(|(body, used)| {
            complete(Body::Decoded(body), body_start + used, connection_close)
        }));
    }
    if let Some(length) = content_length {
        if length > BODY_MAX {
            return Err(MalformedResponse("body too long"));
        }
        let end = body_start + length;
        if buffer.len() < end {
            return Ok(None);
        }
        return Ok(Some(complete(
            Body::Range(body_start..end),
            end,
            connection_close,
        )));
    }
    if status == 204 || status == 304 {
        return Ok(Some(complete(
            Body::Range(body_start..body_start),
            body_start,
            connection_close,
        )));
    }
    // Neither a length nor chunks: the body runs until the server closes the connection.
    if buffer.len() - body_start > BODY_MAX {
        return Err(MalformedResponse("body too long"));
    }
    if !eof {
        return Ok(None);
    }
    Ok(Some(complete(
        Body::Range(body_start..buffer.len()),
        buffer.len(),
        true,
    )))
}

/// Decodes a chunked body from its start; returns the body and the bytes used, or `None`
/// while incomplete.
fn decode_chunked(data: &[u8]) -> Result<Option<(Vec<u8>, usize)>, MalformedResponse> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(line_end) = find(&data[at..], b"\r\n") else {
            if data.len() - at > 1024 {
                return Err(MalformedResponse("chunk size line too long"));
            }
            return Ok(None);
        };
        let line = &data[at..at + line_end];
        let digits = match line.iter().position(|b| *b == b';') {
            Some(semicolon) => &line[..semicolon],
            None => line,
        };
        let size = parse_hex(trim(digits)).ok_or(MalformedResponse("bad chunk size"))?;
        at += line_end + 2;
        if size == 0 {
            // Trailers (usually none), each ending in CRLF, then an empty line.
            loop {
                let Some(trailer_end) = find(&data[at..], b"\r\n") else {
                    return Ok(None);
                };
                at += trailer_end + 2;
                if trailer_end == 0 {
                    return Ok(Some((body, at)));
                }
            }
        }
        if body.len() + size > BODY_MAX {
            return Err(MalformedResponse("body too long"));
        }
        if data.len() < at + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&data[at..at + size]);
        if &data[at + size..at + size + 2] != b"\r\n" {
            return Err(MalformedResponse("chunk without its CRLF"));
        }
        at += size + 2;
    }
}

fn parse_status_line(line: &[u8]) -> Result<(u16, bool), MalformedResponse> {
    let bad = MalformedResponse("bad status line");
    if line.len() < 12 || !line.starts_with(b"HTTP/1.") || line[8] != b' ' {
        return Err(bad);
    }
    let http10 = line[7] == b'0';
    let code = &line[9..12];
    if !code.iter().all(u8::is_ascii_digit) || line.get(12).is_some_and(|b| *b != b' ') {
        return Err(bad);
    }
    let status = code.iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    Ok((status, http10))
}

fn parse_decimal(text: &[u8]) -> Option<usize> {
    if text.is_empty() || text.len() > 15 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        text.iter()
            .fold(0usize, |n, d| n * 10 + usize::from(d - b'0')),
    )
}

fn parse_hex(text: &[u8]) -> Option<usize> {
    if text.is_empty() || text.len() > 12 {
        return None;
    }
    text.iter().try_fold(0usize, |n, d| {
        let digit = (*d as char).to_digit(16)? as usize;
        Some(n * 16 + digit)
    })
}

/// The position of `needle` in `haystack`.
pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn trim(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len());
    let end = text
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &text[start..end]
}

fn contains_ignore_case(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn body_of(text: &[u8]) -> (u16, Vec<u8>, usize) {
        let r = parse(text, false).unwrap().expect("complete");
        (r.status, r.body(text).to_vec(), r.consumed)
    }

    #[test]
    fn content_length_response() {
        let text = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nx-arango-errors: 2\r\n\r\nhello";
        let r = parse(text, false).unwrap().unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body(text), b"hello");
        assert_eq!(r.arango_errors, Some(2));
        assert!(!r.close);
        assert!(parse(&text[..text.len() - 1], false).unwrap().is_none());
    }

    #[test]
    fn chunked_response_with_extension_and_trailer() {
        let text = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n";
        assert_eq!(body_of(text), (404, b"abcde".to_vec(), text.len()));
    }

    #[test]
    fn http10_and_close_delimited_bodies() {
        let text = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close";
        assert!(parse(text, false).unwrap().is_none());
        let r = parse(text, true).unwrap().unwrap();
        assert_eq!(r.body(text), b"until close");
        assert!(r.close);
        assert_eq!(r.content_type(text), b"text/plain");
        let keep = b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n";
        assert!(!parse(keep, false).unwrap().unwrap().close);
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(parse(b"HTTX/1.1 200 OK\r\n\r\n", false).is_err());
        assert!(parse(b"HTTP/1.1 2x0 OK\r\n\r\n", false).is_err());
        assert!(parse(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false).is_err());
        assert!(parse(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", false).is_err());
        let chunk = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
        assert!(parse(chunk, false).is_err());
        let long = vec![b'a'; HEAD_MAX + 1];
        assert!(parse(&long, false).is_err());
    }

    /// A response as the server could send it: status, body, chunked or not, chunk sizes.
    fn response_strategy() -> impl Strategy<Value = (u16, Vec<u8>, bool, Vec<usize>)> {
        (
            100u16..600,
            proptest::collection::vec(any::<u8>(), 0..300),
            any::<bool>(),
            proptest::collection::vec(1usize..50, 1..10),
        )
    }

    fn serialise(status: u16, body: &[u8], chunked: bool, sizes: &[usize]) -> Vec<u8> {
        let mut out = format!("HTTP/1.1 {status} Whatever\r\nServer: test\r\n").into_bytes();
        if chunked {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
            let mut rest = body;
            let mut i = 0;
            while !rest.is_empty() {
                let n = sizes[i % sizes.len()].min(rest.len());
                out.extend_from_slice(format!("{n:x}\r\n").as_bytes());
                out.extend_from_slice(&rest[..n]);
                out.extend_from_slice(b"\r\n");
                rest = &rest[n..];
                i += 1;
            }
            out.extend_from_slice(b"0\r\n\r\n");
        } else {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(body);
        }
        out
    }

    proptest! {
        /// Every proper prefix is incomplete, the whole is the response, and a second response
        /// behind it (pipelined bytes) is left untouched.
        #[test]
        fn split_at_any_byte_boundary((status, body, chunked, sizes) in response_strategy()) {
            let text = serialise(status, &body, chunked, &sizes);
            for cut in 0..text.len() {
                prop_assert_eq!(parse(&text[..cut], false).unwrap(), None, "cut at {}", cut);
            }
            let mut two = text.clone();
            two.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            let r = parse(&two, false).unwrap().unwrap();
            prop_assert_eq!(r.status, status);
            prop_assert_eq!(r.body(&two), &body[..]);
            prop_assert_eq!(r.consumed, text.len());
            let second = parse(&two[r.consumed..], false).unwrap().unwrap();
            prop_assert_eq!(second.body(&two[r.consumed..]), b"ok");
        }
    }
}
