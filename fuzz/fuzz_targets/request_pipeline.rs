//! Fuzz target: whole requests through the real pipeline, in process (`Api::serve` over a real
//! catalog; see `quince_fuzz::server`).
//!
//! What it is: each input is one request written like HTTP/1.1 text:
//!
//! ```text
//! <METHOD> <target>\n
//! <name>: <value>\n        (headers, up to 32)
//! \n
//! <body>
//! ```
//!
//! A few header values and names are directives of the harness, not sent as such:
//! `authorization: root` becomes root's Basic credentials and `authorization: super` a
//! superuser token (any other value is sent as it is); `x-fuzz-deep: <n>` wraps the body in
//! `n` (at most 300) levels of `[`…`]`; `x-fuzz-encode: gzip|deflate|raw` compresses the body
//! and sets `Content-Encoding`; `x-fuzz-chunks: <offsets>` (comma-separated) delivers the body
//! in frames cut there. `Content-Length` is always the real length (hyper frames bodies by it),
//! except that a request with `Transfer-Encoding` keeps the input's own `Content-Length`, if
//! any, so the pipeline's smuggling check is reached. A request line or target that hyper
//! would not accept is skipped.
//!
//! What it is not: a test of hyper's parsing or of connections (the listener in
//! `quince-server` owns those), nor deterministic per input: the server is shared by many
//! inputs (rebuilt every [`REQUESTS_PER_SERVER`] inputs and whenever its fixture is broken), so
//! an input's reply can depend on earlier ones.
//!
//! Invariants checked: no panic anywhere in the pipeline or a handler (libFuzzer's panic hook
//! aborts even on panics the pipeline catches) and so never a 500 with errorNum 4. Except in a
//! reply to HEAD: a Content-Length a handler set is its body's length, and every error reply
//! (but a stored job's reply handed back by `/_api/job`) has ArangoDB's shape
//! `{error, errorNum, errorMessage, code}`. A body nested deeper than the depth bound (64) sent
//! to an endpoint that parses its body as JSON never succeeds, and to `POST /_api/document/c` as
//! root or superuser without query parameters it is refused with exactly 400/600.

#![no_main]

use std::io::Write;
use std::sync::{Mutex, OnceLock, PoisonError};

use http::{HeaderName, HeaderValue, Method, Request};
use libfuzzer_sys::fuzz_target;
use quince_fuzz::server::{assert_error_shape, basic_root, superuser_token, Reply, Server};
use quince_fuzz::{json_nesting, ChunkedBody};

/// Inputs one server serves before it is rebuilt.
const REQUESTS_PER_SERVER: u64 = 5000;

/// The most headers read from one input.
const HEADERS_MAX: usize = 32;

/// The server's JSON depth bound (the default).
const DEPTH_MAX: usize = quince_api::limits::JSON_DEPTH_MAX_DEFAULT;

/// The server, kept across inputs. A static, not a thread-local: statics are never dropped,
/// so the runtime is not torn down while the process exits.
static SERVER: Mutex<Option<Server>> = Mutex::new(None);

/// A request as the input describes it.
struct Parsed {
    method: Method,
    target: String,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// `authorization` was `root` or `super`.
    privileged: bool,
    /// The body sent.
    body: Vec<u8>,
    /// The body before the harness compressed it (`x-fuzz-encode`).
    plain_body: Vec<u8>,
    /// The input set `Content-Encoding` itself (so the decoded body is unknown here).
    foreign_encoding: bool,
    cuts: Vec<usize>,
    transfer_encoding: bool,
    declared_length: Option<HeaderValue>,
}

fuzz_target!(|data: &[u8]| {
    let Some(parsed) = parse(data) else {
        return;
    };
    {
        let mut slot = SERVER.lock().unwrap_or_else(PoisonError::into_inner);
        if slot
            .as_ref()
            .is_none_or(|s| s.served >= REQUESTS_PER_SERVER)
        {
            *slot = None;
            *slot = Some(Server::new());
        }
        let server = slot.as_mut().expect("built above");
        server.served += 1;
        let reply = send(server, &parsed);
        if trace() {
            eprintln!(
                "{} {} -> {} {}",
                parsed.method,
                parsed.target,
                reply.status,
                String::from_utf8_lossy(&reply.body[..reply.body.len().min(160)])
            );
        }
        check(&parsed, &reply);
        let locked_out = parsed.privileged && matches!(reply.status, 401 | 403);
        if locked_out || !server.fixture_intact() {
            // Root's password changed, the server went read-only, or `c`, `e` or `db1` is
            // gone: later inputs would only see refusals.
            server.served = REQUESTS_PER_SERVER;
        }
    }
});

/// `QUINCE_FUZZ_TRACE=1` prints every request and the start of its reply (to see what a
/// corpus reaches: `cargo fuzz run request_pipeline <dir> -- -runs=0`).
fn trace() -> bool {
    static TRACE: OnceLock<bool> = OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("QUINCE_FUZZ_TRACE").is_some())
}

fn parse(data: &[u8]) -> Option<Parsed> {
    let (head, body) = match find(data, b"\n\n") {
        Some(at) => (&data[..at], &data[at + 2..]),
        None => (data, &[][..]),
    };
    let head = std::str::from_utf8(head).ok()?;
    let mut lines = head.lines();
    let request_line = lines.next()?.trim_end_matches('\r');
    let (method, target) = request_line.split_once(' ')?;
    let method = Method::from_bytes(method.as_bytes()).ok()?;
    let target = target.trim().to_string();
    target.parse::<http::Uri>().ok()?;

    let mut parsed = Parsed {
        method,
        target,
        headers: Vec::new(),
        privileged: false,
        body: body.to_vec(),
        plain_body: Vec::new(),
        foreign_encoding: false,
        cuts: Vec::new(),
        transfer_encoding: false,
        declared_length: None,
    };
    let mut deep = 0usize;
    let mut encode = None;
    for line in lines.take(HEADERS_MAX) {
        let Some((name, value)) = line.trim_end_matches('\r').split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
        match name.as_str() {
            "x-fuzz-deep" => deep = value.parse::<usize>().unwrap_or(0).min(300),
            "x-fuzz-encode" => encode = Some(value.to_string()),
            "x-fuzz-chunks" => {
                parsed.cuts = value
                    .split(',')
                    .filter_map(|c| c.trim().parse().ok())
                    .collect();
            }
            "content-length" => parsed.declared_length = HeaderValue::from_str(value).ok(),
            "authorization" if value == "root" || value == "super" => {
                parsed.privileged = true;
                let credentials = if value == "root" {
                    basic_root()
                } else {
                    superuser_token()
                };
                let value = HeaderValue::from_str(&credentials).expect("valid credentials");
                parsed.headers.push((http::header::AUTHORIZATION, value));
            }
            _ => {
                let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) else {
                    continue;
                };
                if name == http::header::TRANSFER_ENCODING {
                    parsed.transfer_encoding = true;
                }
                if name == http::header::CONTENT_ENCODING {
                    parsed.foreign_encoding = true;
                }
                parsed.headers.push((name, value));
            }
        }
    }
    if deep > 0 {
        let mut wrapped = Vec::with_capacity(parsed.body.len() + 2 * deep);
        wrapped.resize(deep, b'[');
        wrapped.extend_from_slice(&parsed.body);
        wrapped.resize(wrapped.len() + deep, b']');
        parsed.body = wrapped;
    }
    parsed.plain_body = parsed.body.clone();
    if let Some(encoding) = encode {
        let (name, body) = match encoding.as_str() {
            "gzip" => ("gzip", compress(&parsed.body, 0)),
            "deflate" => ("deflate", compress(&parsed.body, 1)),
            "raw" => ("deflate", compress(&parsed.body, 2)),
            _ => return None,
        };
        parsed.body = body;
        parsed.headers.push((
            http::header::CONTENT_ENCODING,
            HeaderValue::from_static(name),
        ));
    }
    Some(parsed)
}

fn send(server: &Server, parsed: &Parsed) -> Reply {
    let mut builder = Request::builder()
        .method(parsed.method.clone())
        .uri(parsed.target.as_str());
    for (name, value) in &parsed.headers {
        builder = builder.header(name, value);
    }
    if !parsed.transfer_encoding {
        builder = builder.header(http::header::CONTENT_LENGTH, parsed.body.len());
    } else if let Some(declared) = &parsed.declared_length {
        builder = builder.header(http::header::CONTENT_LENGTH, declared);
    }
    let req = builder
        .body(ChunkedBody::new(&parsed.body, &parsed.cuts))
        .expect("method, target and headers were checked");
    server.send(req)
}

fn check(parsed: &Parsed, reply: &Reply) {
    let panicked = reply.status == 500
        && serde_json::from_slice::<serde_json::Value>(&reply.body)
            .is_ok_and(|v| v["errorNum"].as_u64() == Some(4));
    assert!(!panicked, "a handler panicked: {reply:?}");
    if parsed.method == Method::HEAD {
        return;
    }
    // hyper writes Content-Length from the whole body; one set by a handler must agree.
    if let Some(length) = reply.headers.get(http::header::CONTENT_LENGTH) {
        let length = length.to_str().ok().and_then(|v| v.parse::<usize>().ok());
        assert_eq!(
            length,
            Some(reply.body.len()),
            "Content-Length of {reply:?}"
        );
    }
    let stored_job_reply = reply.headers.contains_key("x-arango-async-id");
    if reply.status >= 400 && !stored_job_reply {
        assert_error_shape(reply.status, &reply.body);
    }
    let is_async = parsed.headers.iter().any(|(n, _)| n == "x-arango-async");
    // The body the handler sees: the harness knows it unless the input set its own encoding.
    let deep = !parsed.foreign_encoding && json_nesting(&parsed.plain_body) > DEPTH_MAX;
    if deep && !is_async && parses_json_body(&parsed.method, &parsed.target) {
        assert!(
            !(200..300).contains(&reply.status),
            "a body nested deeper than {DEPTH_MAX} was accepted: {reply:?}"
        );
        let plain_insert = parsed.method == Method::POST
            && parsed.target == "/_api/document/c"
            && parsed.privileged
            && !parsed.foreign_encoding;
        // 401 and 403: an earlier input changed root's password or made the server
        // read-only (the loop then starts a new server).
        if plain_insert && !matches!(reply.status, 401 | 403) {
            let body: serde_json::Value =
                serde_json::from_slice(&reply.body).expect("an error body is JSON");
            assert_eq!(
                (reply.status, body["errorNum"].as_u64()),
                (400, Some(600)),
                "a body nested deeper than {DEPTH_MAX}: {body}"
            );
        }
    }
}

/// True for the endpoints whose every success parses the body as JSON (so a body the parser
/// refuses can never succeed), by the raw target (percent-encoded paths are not recognised,
/// which only skips the check).
fn parses_json_body(method: &Method, target: &str) -> bool {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let mut segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if segments.first() == Some(&"_db") && segments.len() >= 2 {
        segments.drain(..2);
    }
    matches!(
        (method.as_str(), segments.as_slice()),
        ("POST", ["_api", "document", ..])
            | (
                "PUT" | "PATCH",
                ["_api", "document", _] | ["_api", "document", _, _]
            )
            | ("DELETE", ["_api", "document", _])
            | ("POST", ["_api", "collection"] | ["_api", "database"])
    )
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn compress(plain: &[u8], kind: u8) -> Vec<u8> {
    let level = flate2::Compression::fast();
    let result = match kind {
        0 => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
            e.write_all(plain).and_then(|()| e.finish())
        }
        1 => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), level);
            e.write_all(plain).and_then(|()| e.finish())
        }
        _ => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), level);
            e.write_all(plain).and_then(|()| e.finish())
        }
    };
    result.expect("compression in memory")
}
