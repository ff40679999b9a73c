//! HTTP/2 by `Upgrade: h2c` (RFC 7540 §3.2; prior knowledge needs nothing here, hyper-util's
//! auto builder serves it).
//!
//! What it is: [`switch`], called first by the listener's service for every request: an
//! HTTP/1.1 request that asks for the upgrade properly (`Upgrade: h2c`, one `HTTP2-Settings`
//! header, `Connection: Upgrade, HTTP2-Settings`) and has no body is answered
//! `101 Switching Protocols`, and what the rest of the connection needs is left in the
//! connection's [`Slot`]. Once hyper's HTTP/1 connection has handed its socket over,
//! [`serve`] runs hyper's HTTP/2 server on it, with the same service. hyper has no h2c
//! upgrade of its own, so the original request becomes HTTP/2 stream 1 this way: after the
//! client's connection preface and its first SETTINGS frame, a HEADERS frame for stream 1 (the
//! request's method, path, authority and headers, HPACK literals without indexing,
//! END_STREAM) is inserted into what hyper reads ([`Injecting`]); hyper answers it as any
//! other request, and the client reads that answer as the reply to its upgrade request.
//!
//! What it is not: used for requests that are not eligible: a request with a body (the RFC lets
//! the server ignore the upgrade, so it is answered over HTTP/1.1 as usual), or one on a
//! connection that already speaks HTTP/2. Nor for TLS connections, where HTTP/2 is chosen by
//! ALPN (RFC 7540 §3.3): a TLS listener must not call [`switch`]. The client's
//! `HTTP2-Settings` are not decoded: its connection preface must start with a SETTINGS frame
//! anyway, and stream 1 is read only after that frame, so the same settings apply.
//!
//! Invariants: the bytes after the client's first SETTINGS frame reach hyper unchanged and in
//! order, after the inserted frames; a request header block that does not fit one frame
//! (16384 bytes, HTTP/2's initial maximum) continues in CONTINUATION frames; the 101 is sent
//! only with a slot to carry the upgrade, so a connection never switches without a server for
//! the new protocol.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::header::{HeaderValue, CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING, UPGRADE};
use http::{Request, Response, StatusCode, Version};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;

use crate::connection::{Close, Connection};

/// HTTP/2's connection preface, which the client sends first after the 101.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The size of a frame header.
const FRAME_HEADER: usize = 9;

/// The largest frame payload a peer must accept before it says otherwise.
const FRAME_PAYLOAD_MAX: usize = 16_384;

/// HTTP/2 frame types and flags used here.
const TYPE_HEADERS: u8 = 0x1;
const TYPE_SETTINGS: u8 = 0x4;
const TYPE_CONTINUATION: u8 = 0x9;
const FLAG_END_STREAM: u8 = 0x1;
const FLAG_END_HEADERS: u8 = 0x4;

/// Headers that belong to the HTTP/1.1 connection, not to the request (RFC 9113 §8.2.2), and
/// `host`, which becomes `:authority`.
const NOT_FORWARDED: [&str; 8] = [
    "connection",
    "upgrade",
    "http2-settings",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "host",
];

/// An upgrade that was answered 101 and waits for the socket.
pub struct Upgrading {
    on_upgrade: OnUpgrade,
    stream_one: Vec<u8>,
}

/// Where a connection's service leaves an accepted upgrade for the connection's task.
#[derive(Clone, Default)]
pub struct Slot(Arc<Mutex<Option<Upgrading>>>);

impl Slot {
    /// The accepted upgrade, if one was.
    pub fn take(&self) -> Option<Upgrading> {
        self.0.lock().take()
    }
}

/// For an eligible HTTP/1.1 upgrade request: the 101 to send (and the upgrade left in `slot`).
/// For any other request: `None`, and the request is served as it came.
pub fn switch<B>(slot: &Slot, req: &mut Request<B>) -> Option<Response<Full<Bytes>>> {
    if !req.headers().contains_key(UPGRADE) || !eligible(req) {
        return None;
    }
    let stream_one = stream_one_frames(req)?;
    let on_upgrade = hyper::upgrade::on(&mut *req);
    *slot.0.lock() = Some(Upgrading {
        on_upgrade,
        stream_one,
    });
    let mut reply = Response::new(Full::new(Bytes::new()));
    *reply.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    reply
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    reply
        .headers_mut()
        .insert(UPGRADE, HeaderValue::from_static("h2c"));
    Some(reply)
}

/// Whether a request asks for the h2c upgrade as RFC 7540 §3.2 says, and can have it.
fn eligible<B>(req: &Request<B>) -> bool {
    let headers = req.headers();
    // What HTTP/2 would refuse on stream 1 (and so lose the whole connection) stays on
    // HTTP/1.1, where it is answered: a header list over HTTP/2's bound, or a Host that is not
    // an authority.
    let header_list: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 32)
        .sum();
    let host_ok = headers.get(HOST).is_none_or(|host| {
        !host.is_empty() && http::uri::Authority::try_from(host.as_bytes()).is_ok()
    });
    let tokens = |name: http::header::HeaderName| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    let upgrade = tokens(UPGRADE);
    let connection = tokens(CONNECTION);
    let no_body = !headers.contains_key(TRANSFER_ENCODING)
        && headers
            .get(CONTENT_LENGTH)
            .is_none_or(|v| v.as_bytes() == b"0");
    req.version() == Version::HTTP_11
        && upgrade.iter().any(|t| t == "h2c")
        && headers.get_all("http2-settings").iter().count() == 1
        && connection.iter().any(|t| t == "upgrade")
        && connection.iter().any(|t| t == "http2-settings")
        && no_body
        && header_list <= HEADER_LIST_MAX
        && host_ok
}

/// The largest header list (RFC 9113's size: name, value and 32 bytes per field) an upgraded
/// request may have: hyper's HTTP/2 server refuses larger ones.
const HEADER_LIST_MAX: usize = 16 * 1024;

/// The request as HTTP/2 frames on stream 1: HEADERS (and CONTINUATION) with END_STREAM.
/// `None` when the request cannot be written as HTTP/2 (no path).
fn stream_one_frames<B>(req: &Request<B>) -> Option<Vec<u8>> {
    let mut block = Vec::with_capacity(256);
    let path = req.uri().path_and_query()?.as_str();
    literal(&mut block, b":method", req.method().as_str().as_bytes());
    literal(&mut block, b":scheme", b"http");
    literal(&mut block, b":path", path.as_bytes());
    if let Some(host) = req.headers().get(HOST) {
        literal(&mut block, b":authority", host.as_bytes());
    }
    for (name, value) in req.headers() {
        let name = name.as_str();
        let keep = !NOT_FORWARDED.contains(&name)
            || (name == "te" && value.as_bytes().eq_ignore_ascii_case(b"trailers"));
        if keep {
            literal(&mut block, name.as_bytes(), value.as_bytes());
        }
    }
    let mut frames = Vec::with_capacity(block.len() + 2 * FRAME_HEADER);
    let mut chunks = block.chunks(FRAME_PAYLOAD_MAX).peekable();
    let mut first = true;
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let (kind, mut flags) = match first {
            true => (TYPE_HEADERS, FLAG_END_STREAM),
            false => (TYPE_CONTINUATION, 0),
        };
        if last {
            flags |= FLAG_END_HEADERS;
        }
        frame_header(&mut frames, chunk.len(), kind, flags, 1);
        frames.extend_from_slice(chunk);
        first = false;
    }
    Some(frames)
}

/// An HPACK "literal header field without indexing, new name" (RFC 7541 §6.2.2), strings
/// without Huffman coding.
fn literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    string(out, name);
    string(out, value);
}

fn string(out: &mut Vec<u8>, text: &[u8]) {
    integer(out, text.len(), 7, 0x00);
    out.extend_from_slice(text);
}

/// An HPACK integer with an N-bit prefix (RFC 7541 §5.1); `flags` are the first byte's bits
/// above the prefix.
fn integer(out: &mut Vec<u8>, value: usize, prefix_bits: u32, flags: u8) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        out.push(flags | value as u8);
        return;
    }
    out.push(flags | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        out.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    out.push(rest as u8);
}

fn frame_header(out: &mut Vec<u8>, length: usize, kind: u8, flags: u8, stream: u32) {
    let length = length as u32;
    out.extend_from_slice(&length.to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
}

/// Serves the rest of an upgraded connection with hyper's HTTP/2 server and `service`, until
/// it ends, the server stops (`stop`) or the governor closes it (`connection`), as the
/// listener serves an HTTP/1 connection.
pub async fn serve<S>(
    upgrading: Upgrading,
    service: S,
    stop: &mut watch::Receiver<bool>,
    connection: &Connection,
) -> Result<(), hyper::Error>
where
    S: hyper::service::Service<Request<Incoming>, Response = Response<Full<Bytes>>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let upgraded = upgrading.on_upgrade.await?;
    let io = Injecting::new(TokioIo::new(upgraded), upgrading.stream_one);
    let http = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
        .timer(TokioTimer::new())
        .serve_connection(TokioIo::new(io), service);
    let mut http = std::pin::pin!(http);
    tokio::select! {
        outcome = http.as_mut() => outcome,
        _ = stopped(stop) => {
            http.as_mut().graceful_shutdown();
            http.await
        }
        how = connection.closed(Close::No) => match how {
            Close::Now => Ok(()),
            _ => {
                http.as_mut().graceful_shutdown();
                http.await
            }
        }
    }
}

/// Completes once the stop flag is true (or its sender is gone); the guard `wait_for` returns
/// is dropped here, so no lock is held across an await.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopping| *stopping).await.map(|_| ());
}

/// Where the reader is in the client's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Passing the preface and the first frame's header: `boundary` is where they end.
    Preface,
    /// Passing the first SETTINGS frame's payload, which ends at `boundary`.
    Settings,
    /// Handing out the inserted frames.
    Inserting,
    /// Passing everything through.
    Through,
}

/// A socket whose read side gets frames inserted after the client's first SETTINGS frame.
pub struct Injecting<T> {
    inner: T,
    phase: Phase,
    /// Bytes passed through so far (until `Through`).
    passed: usize,
    /// Where the current phase ends (in passed bytes).
    boundary: usize,
    /// The preface and first frame header as they passed, to check them.
    seen: Vec<u8>,
    /// The frames to insert, and how many were handed out.
    insert: Vec<u8>,
    inserted: usize,
}

impl<T> Injecting<T> {
    /// `inner`, with `insert` placed after the client's preface and first SETTINGS frame.
    pub fn new(inner: T, insert: Vec<u8>) -> Injecting<T> {
        Injecting {
            inner,
            phase: Phase::Preface,
            passed: 0,
            boundary: PREFACE.len() + FRAME_HEADER,
            seen: Vec::with_capacity(PREFACE.len() + FRAME_HEADER),
            insert,
            inserted: 0,
        }
    }

    /// Notes bytes that passed, and moves to the next phase at a boundary.
    fn passed_bytes(&mut self, bytes: &[u8]) {
        if self.phase == Phase::Preface {
            self.seen.extend_from_slice(bytes);
        }
        self.passed += bytes.len();
        if self.passed < self.boundary {
            return;
        }
        match self.phase {
            Phase::Preface => {
                let header = &self.seen[PREFACE.len()..];
                let length = usize::from(header[0]) << 16
                    | usize::from(header[1]) << 8
                    | usize::from(header[2]);
                if &self.seen[..PREFACE.len()] != PREFACE || header[3] != TYPE_SETTINGS {
                    // Not HTTP/2 as promised: hyper will say so; nothing is inserted.
                    self.phase = Phase::Through;
                    self.seen = Vec::new();
                    return;
                }
                self.seen = Vec::new();
                self.boundary += length;
                self.phase = match length {
                    0 => Phase::Inserting,
                    _ => Phase::Settings,
                };
            }
            Phase::Settings => self.phase = Phase::Inserting,
            Phase::Inserting | Phase::Through => {}
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Injecting<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match this.phase {
            Phase::Through => Pin::new(&mut this.inner).poll_read(cx, buf),
            Phase::Inserting => {
                let rest = &this.insert[this.inserted..];
                let n = rest.len().min(buf.remaining());
                buf.put_slice(&rest[..n]);
                this.inserted += n;
                if this.inserted == this.insert.len() {
                    this.phase = Phase::Through;
                    this.insert = Vec::new();
                }
                Poll::Ready(Ok(()))
            }
            Phase::Preface | Phase::Settings => {
                // Read no further than the boundary, through a small buffer of our own, so
                // that the inserted frames go exactly there.
                let want = (this.boundary - this.passed).min(buf.remaining()).min(4096);
                let mut scratch = [0u8; 4096];
                let mut limited = ReadBuf::new(&mut scratch[..want]);
                match Pin::new(&mut this.inner).poll_read(cx, &mut limited) {
                    Poll::Ready(Ok(())) => {
                        let filled = limited.filled();
                        buf.put_slice(filled);
                        let filled = filled.to_vec();
                        this.passed_bytes(&filled);
                        Poll::Ready(Ok(()))
                    }
                    other => other,
                }
            }
        }
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Injecting<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn upgrade_request(extra: &[(&str, &str)]) -> Request<()> {
        let mut builder = Request::builder()
            .uri("/_api/version?details=true")
            .header("host", "127.0.0.1:8529")
            .header("connection", "Upgrade, HTTP2-Settings")
            .header("upgrade", "h2c")
            .header("http2-settings", "AAMAAABkAAQCAAAAAAIAAAAA")
            .header("authorization", "Basic cm9vdDo=");
        for (name, value) in extra {
            builder = builder.header(*name, *value);
        }
        builder.body(()).unwrap()
    }

    #[test]
    fn requests_http2_would_refuse_stay_on_http_1_1() {
        let big = "x".repeat(HEADER_LIST_MAX);
        assert!(!eligible(&upgrade_request(&[("x-big", big.as_str())])));
        let mut empty_host = upgrade_request(&[]);
        empty_host
            .headers_mut()
            .insert(HOST, HeaderValue::from_static(""));
        assert!(!eligible(&empty_host));
        let mut spaced_host = upgrade_request(&[]);
        spaced_host
            .headers_mut()
            .insert(HOST, HeaderValue::from_static("a b"));
        assert!(!eligible(&spaced_host));
    }

    #[test]
    fn only_proper_bodyless_http_1_1_upgrade_requests_are_eligible() {
        assert!(eligible(&upgrade_request(&[])));
        assert!(eligible(&upgrade_request(&[("content-length", "0")])));
        assert!(!eligible(&upgrade_request(&[("content-length", "5")])));
        assert!(!eligible(&upgrade_request(&[(
            "transfer-encoding",
            "chunked"
        )])));
        let mut http2 = upgrade_request(&[]);
        *http2.version_mut() = Version::HTTP_2;
        assert!(!eligible(&http2));
        let mut no_settings = upgrade_request(&[]);
        no_settings.headers_mut().remove("http2-settings");
        assert!(!eligible(&no_settings));
        let mut websocket = upgrade_request(&[]);
        websocket
            .headers_mut()
            .insert(UPGRADE, HeaderValue::from_static("websocket"));
        assert!(!eligible(&websocket));
        let mut no_connection_token = upgrade_request(&[]);
        no_connection_token
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("Upgrade"));
        assert!(!eligible(&no_connection_token));
    }

    #[test]
    fn hpack_integers_follow_rfc_7541() {
        // RFC 7541 C.1: 10 and 1337 with a 5-bit prefix, 42 with an 8-bit prefix.
        let mut out = Vec::new();
        integer(&mut out, 10, 5, 0);
        assert_eq!(out, [0x0a]);
        out.clear();
        integer(&mut out, 1337, 5, 0);
        assert_eq!(out, [0x1f, 0x9a, 0x0a]);
        out.clear();
        integer(&mut out, 42, 8, 0);
        assert_eq!(out, [0x2a]);
    }

    /// Decodes the literal-without-indexing header block written by [`stream_one_frames`].
    fn decode_block(mut block: &[u8]) -> Vec<(String, String)> {
        fn int(block: &mut &[u8]) -> usize {
            let first = usize::from(block[0] & 0x7f);
            *block = &block[1..];
            if first < 0x7f {
                return first;
            }
            let (mut value, mut shift) = (first, 0);
            loop {
                let byte = block[0];
                *block = &block[1..];
                value += usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte & 0x80 == 0 {
                    return value;
                }
            }
        }
        let mut fields = Vec::new();
        while !block.is_empty() {
            assert_eq!(block[0], 0x00);
            block = &block[1..];
            let mut text = || {
                let n = int(&mut block);
                let s = String::from_utf8(block[..n].to_vec()).unwrap();
                block = &block[n..];
                s
            };
            let name = text();
            let value = text();
            fields.push((name, value));
        }
        fields
    }

    #[test]
    fn the_request_becomes_stream_one_without_connection_headers() {
        let frames = stream_one_frames(&upgrade_request(&[("te", "trailers")])).unwrap();
        let length =
            usize::from(frames[0]) << 16 | usize::from(frames[1]) << 8 | usize::from(frames[2]);
        assert_eq!(length + FRAME_HEADER, frames.len());
        assert_eq!(frames[3], TYPE_HEADERS);
        assert_eq!(frames[4], FLAG_END_STREAM | FLAG_END_HEADERS);
        assert_eq!(&frames[5..9], &[0, 0, 0, 1]);
        let fields = decode_block(&frames[9..]);
        let get = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get(":method"), Some("GET"));
        assert_eq!(get(":scheme"), Some("http"));
        assert_eq!(get(":path"), Some("/_api/version?details=true"));
        assert_eq!(get(":authority"), Some("127.0.0.1:8529"));
        assert_eq!(get("authorization"), Some("Basic cm9vdDo="));
        assert_eq!(get("te"), Some("trailers"));
        for gone in ["connection", "upgrade", "http2-settings", "host"] {
            assert_eq!(get(gone), None, "{gone}");
        }
    }

    #[test]
    fn a_large_header_block_continues_in_continuation_frames() {
        let big = "x".repeat(40_000);
        let frames = stream_one_frames(&upgrade_request(&[("x-big", &big)])).unwrap();
        let mut at = 0;
        let mut kinds = Vec::new();
        let mut block = Vec::new();
        while at < frames.len() {
            let length = usize::from(frames[at]) << 16
                | usize::from(frames[at + 1]) << 8
                | usize::from(frames[at + 2]);
            assert!(length <= FRAME_PAYLOAD_MAX);
            kinds.push((frames[at + 3], frames[at + 4]));
            block.extend_from_slice(&frames[at + FRAME_HEADER..at + FRAME_HEADER + length]);
            at += FRAME_HEADER + length;
        }
        assert_eq!(kinds.first(), Some(&(TYPE_HEADERS, FLAG_END_STREAM)));
        assert_eq!(kinds.last(), Some(&(TYPE_CONTINUATION, FLAG_END_HEADERS)));
        assert!(kinds.len() >= 3);
        let fields = decode_block(&block);
        assert!(fields
            .iter()
            .any(|(n, v)| n == "x-big" && v.len() == 40_000));
    }

    #[tokio::test]
    async fn frames_go_in_after_the_first_settings_frame_whatever_the_read_sizes() {
        let mut client = PREFACE.to_vec();
        // SETTINGS with one setting (6 bytes), then a PING frame.
        client.extend_from_slice(&[0, 0, 6, TYPE_SETTINGS, 0, 0, 0, 0, 0]);
        client.extend_from_slice(&[0, 3, 0, 0, 0, 100]);
        let ping = [0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        client.extend_from_slice(&ping);
        let insert = b"INSERTED".to_vec();
        let mut expected = client[..PREFACE.len() + FRAME_HEADER + 6].to_vec();
        expected.extend_from_slice(&insert);
        expected.extend_from_slice(&ping);
        for chunk in [1, 3, 7, 64] {
            // The client's bytes arrive in pieces of `chunk` bytes.
            let (mut writer, reader) = tokio::io::duplex(chunk);
            let bytes = client.clone();
            let feeding = tokio::spawn(async move {
                use tokio::io::AsyncWriteExt;
                for piece in bytes.chunks(chunk) {
                    writer.write_all(piece).await.unwrap();
                }
            });
            let mut injecting = Injecting::new(reader, insert.clone());
            let mut got = Vec::new();
            injecting.read_to_end(&mut got).await.unwrap();
            feeding.await.unwrap();
            assert_eq!(got, expected, "chunk {chunk}");
        }
    }

    #[tokio::test]
    async fn a_client_that_does_not_speak_http_2_gets_nothing_inserted() {
        let client = b"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n".to_vec();
        let mut injecting = Injecting::new(&client[..], b"INSERTED".to_vec());
        let mut got = Vec::new();
        injecting.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, client);
    }
}
