//! Reading a request body whole, within a bound, and undoing `Content-Encoding`.
//!
//! What it is: [`read_bounded`] (collects a body, refusing it with 413 as soon as the declared
//! `Content-Length` or the bytes received pass the bound) and [`decode_content`] (gzip and
//! deflate, with the same bound on the decompressed size, so a small "zip bomb" cannot
//! allocate more than a plain body could); and [`BodyStream`], the type of a body handed
//! unread to a route that streams it (see `crate::router`).
//!
//! What it is not: JSON parsing ([`crate::ApiRequest::json_body`] does that).
//!
//! Invariants: no function here ever holds more than `limit` body bytes (plus one chunk in
//! flight); a body that arrives in one chunk is handed on without a copy.

use std::io::Read;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use flate2::read::{DeflateDecoder, GzDecoder, ZlibDecoder};
use http::HeaderMap;
use http_body_util::BodyExt;
use hyper::body::Body;
use quince_errors::{
    ArangoError, Result, HTTP_BAD_PARAMETER, HTTP_REQUEST_ENTITY_TOO_LARGE,
    HTTP_UNSUPPORTED_MEDIA_TYPE,
};

/// A request body not read yet, whatever the listener's body type: the pipeline pins the
/// body in place and maps its read error to text, so no allocation is needed to pass it on.
pub(crate) type BodyStream<'a> = Pin<&'a mut (dyn Body<Data = Bytes, Error = String> + Send + 'a)>;

/// The 413 for a body over the bound.
pub fn too_large(limit: usize) -> ArangoError {
    ArangoError::with_message(
        HTTP_REQUEST_ENTITY_TOO_LARGE,
        format!("request body too large (limit is {limit} bytes)"),
    )
}

/// Refuses a request early when its declared `Content-Length` is over the bound.
pub fn check_declared_length(headers: &HeaderMap, limit: usize) -> Result<()> {
    let Some(value) = headers.get(http::header::CONTENT_LENGTH) else {
        return Ok(());
    };
    let declared = value
        .to_str()
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > limit as u64 => Err(too_large(limit)),
        Some(_) => Ok(()),
        None => Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "invalid Content-Length header",
        )),
    }
}

/// Collects a body of at most `limit` bytes.
pub async fn read_bounded<B>(body: B, limit: usize) -> Result<Bytes>
where
    B: Body<Data = Bytes>,
    B::Error: std::fmt::Display,
{
    // A body of known length (Content-Length) is collected into a buffer of exactly that size,
    // so a large body never costs a doubling reallocation on top of itself.
    let exact = body
        .size_hint()
        .exact()
        .and_then(|n| usize::try_from(n).ok())
        .filter(|n| *n <= limit);
    let mut body = std::pin::pin!(body);
    let mut first: Option<Bytes> = None;
    let mut rest: Option<BytesMut> = None;
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("could not read the request body: {e}"),
            )
        })?;
        let Ok(chunk) = frame.into_data() else {
            // Trailers carry no body bytes.
            continue;
        };
        total = total.saturating_add(chunk.len());
        if total > limit {
            return Err(too_large(limit));
        }
        match (&mut first, &mut rest) {
            (None, _) => first = Some(chunk),
            (Some(head), None) => {
                let mut buf = BytesMut::with_capacity(exact.unwrap_or(total).max(total));
                buf.extend_from_slice(head);
                buf.extend_from_slice(&chunk);
                rest = Some(buf);
            }
            (Some(_), Some(buf)) => buf.extend_from_slice(&chunk),
        }
    }
    Ok(match (first, rest) {
        (_, Some(buf)) => buf.freeze(),
        (Some(head), None) => head,
        (None, None) => Bytes::new(),
    })
}

/// Undoes the request's `Content-Encoding` (gzip, deflate, identity), keeping the decoded
/// size within `limit`.
pub fn decode_content(headers: &HeaderMap, body: Bytes, limit: usize) -> Result<Bytes> {
    let Some(value) = headers.get(http::header::CONTENT_ENCODING) else {
        return Ok(body);
    };
    let encoding = value.to_str().unwrap_or("").trim().to_ascii_lowercase();
    match encoding.as_str() {
        "" | "identity" => Ok(body),
        "gzip" | "x-gzip" => inflate(GzDecoder::new(&body[..]), limit),
        // HTTP's "deflate" is the zlib format; some clients send a raw deflate stream, so
        // that is tried when the zlib header does not check out.
        "deflate" => inflate(ZlibDecoder::new(&body[..]), limit).or_else(|e| {
            if e.status == 413 {
                Err(e)
            } else {
                inflate(DeflateDecoder::new(&body[..]), limit)
            }
        }),
        other => Err(ArangoError::with_message(
            HTTP_UNSUPPORTED_MEDIA_TYPE,
            format!("unsupported content-encoding '{other}'"),
        )),
    }
}

/// Reads a decoder to its end, refusing output beyond `limit`.
fn inflate(decoder: impl Read, limit: usize) -> Result<Bytes> {
    let mut out = Vec::new();
    let read = decoder
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| {
            ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("could not decompress the request body: {e}"),
            )
        })?;
    if read > limit {
        return Err(too_large(limit));
    }
    Ok(Bytes::from(out))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use http::HeaderValue;
    use http_body_util::Full;
    use hyper::body::Frame;

    use super::*;

    fn encoded(name: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(
            http::header::CONTENT_ENCODING,
            HeaderValue::from_str(name).unwrap(),
        );
        h
    }

    fn gzip(data: &[u8]) -> Bytes {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        Bytes::from(e.finish().unwrap())
    }

    /// A body that yields the given chunks one frame at a time.
    struct Chunked(std::collections::VecDeque<Bytes>);

    impl Body for Chunked {
        type Data = Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<std::result::Result<Frame<Bytes>, std::io::Error>>> {
            std::task::Poll::Ready(self.0.pop_front().map(|c| Ok(Frame::data(c))))
        }
    }

    fn chunks(parts: &[&'static [u8]]) -> Chunked {
        Chunked(parts.iter().map(|p| Bytes::from_static(p)).collect())
    }

    #[tokio::test]
    async fn bodies_within_the_bound_are_read_whole() {
        let b = read_bounded(chunks(&[b"ab", b"cd", b"e"]), 5)
            .await
            .unwrap();
        assert_eq!(&b[..], b"abcde");
        let one = read_bounded(Full::new(Bytes::from_static(b"xyz")), 3)
            .await
            .unwrap();
        assert_eq!(&one[..], b"xyz");
        let empty = read_bounded(Full::new(Bytes::new()), 0).await.unwrap();
        assert!(empty.is_empty());
    }

    #[tokio::test]
    async fn bodies_over_the_bound_are_413_while_streaming() {
        let err = read_bounded(chunks(&[b"ab", b"cd", b"ef"]), 5)
            .await
            .unwrap_err();
        assert_eq!((err.status, err.num()), (413, 413));
    }

    #[test]
    fn declared_length_is_checked_before_reading() {
        let mut h = HeaderMap::new();
        h.insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("11"));
        assert_eq!(check_declared_length(&h, 10).unwrap_err().status, 413);
        assert!(check_declared_length(&h, 11).is_ok());
        h.insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("x"));
        assert_eq!(check_declared_length(&h, 10).unwrap_err().status, 400);
    }

    #[test]
    fn gzip_and_both_deflate_forms_are_decoded() {
        let data = br#"{"a":1}"#;
        let g = decode_content(&encoded("gzip"), gzip(data), 100).unwrap();
        assert_eq!(&g[..], data);

        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        z.write_all(data).unwrap();
        let d = decode_content(&encoded("deflate"), z.finish().unwrap().into(), 100).unwrap();
        assert_eq!(&d[..], data);

        let mut raw = DeflateEncoder::new(Vec::new(), Compression::default());
        raw.write_all(data).unwrap();
        let r = decode_content(&encoded("Deflate"), raw.finish().unwrap().into(), 100).unwrap();
        assert_eq!(&r[..], data);

        let plain = decode_content(&HeaderMap::new(), Bytes::from_static(data), 100).unwrap();
        assert_eq!(&plain[..], data);
    }

    #[test]
    fn decompressed_size_is_bounded() {
        let bomb = gzip(&vec![b' '; 1_000_000]);
        assert!(bomb.len() < 10_000);
        let err = decode_content(&encoded("gzip"), bomb.clone(), 999_999).unwrap_err();
        assert_eq!(err.status, 413);
        assert!(decode_content(&encoded("gzip"), bomb, 1_000_000).is_ok());
    }

    #[test]
    fn corrupt_or_unknown_encodings_are_refused() {
        let err = decode_content(&encoded("gzip"), Bytes::from_static(b"nope"), 100).unwrap_err();
        assert_eq!(err.status, 400);
        let err = decode_content(&encoded("br"), Bytes::from_static(b"x"), 100).unwrap_err();
        assert_eq!(err.status, 415);
    }
}
