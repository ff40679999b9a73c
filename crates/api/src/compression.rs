//! Response compression, as arangod 3.12 has it: `--http.compress-response-threshold N`.
//!
//! What it is: [`negotiate`] reads the request's `Accept-Encoding` (with its q-values: `q=0`
//! refuses a coding, `*` stands for any coding not named, ties go to gzip) and picks gzip or
//! deflate (the zlib format, as HTTP's `deflate` is defined); [`apply`] compresses a reply's
//! body with that coding when the threshold is on (above 0), the body has at least that many
//! bytes and compression makes it smaller, and sets `Content-Encoding`. Every reply that could
//! have been compressed for another `Accept-Encoding` carries `Vary: Accept-Encoding`.
//!
//! What it is not: request decompression (`crate::body` undoes a request's `Content-Encoding`,
//! bounded by the body size limit after decoding), nor streaming compression: replies are
//! whole, so a body is compressed in one call (on the blocking pool when it is large, see
//! [`BLOCKING_FROM`]).
//!
//! Invariants: never compressed: a reply to HEAD, a 1xx, 204, 206 or 304, a reply that already
//! has a `Content-Encoding` or a `Content-Range`, a body under the threshold, or one that does
//! not shrink. With the threshold 0 (the default) replies are untouched, headers included.

use std::io::Write;

use bytes::Bytes;
use flate2::write::{GzEncoder, ZlibEncoder};
use flate2::Compression;
use http::header::{
    HeaderValue, ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, VARY,
};
use http::{HeaderMap, Method, StatusCode};

/// A coding the server can compress a reply with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip` (RFC 1952).
    Gzip,
    /// `deflate`: the zlib format (RFC 1950), as HTTP defines it.
    Deflate,
}

impl Coding {
    /// The `Content-Encoding` token.
    pub fn token(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
        }
    }
}

/// Bodies of at least this many bytes are compressed on the blocking pool rather than on a
/// runtime worker.
pub const BLOCKING_FROM: usize = 256 * 1024;

/// How many `Accept-Encoding` elements are looked at (the header block is bounded anyway); a
/// header with more gets an uncompressed reply, since a refusal (`q=0`) past the bound would go
/// unseen.
const ELEMENTS_MAX: usize = 64;

/// The coding the client prefers among gzip and deflate, if it accepts either.
pub fn negotiate(headers: &HeaderMap) -> Option<Coding> {
    // q-values in thousandths; None: not named.
    let (mut gzip, mut deflate, mut any) = (None, None, None);
    let elements = headers
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|text| text.split(','))
        .take(ELEMENTS_MAX + 1)
        .collect::<Vec<_>>();
    if elements.len() > ELEMENTS_MAX {
        return None;
    }
    for element in elements {
        let mut parts = element.split(';');
        let coding = parts.next().unwrap_or_default().trim();
        let mut q = Some(1000);
        for parameter in parts {
            if let Some((name, value)) = parameter.split_once('=') {
                if name.trim().eq_ignore_ascii_case("q") {
                    q = qvalue(value.trim());
                }
            }
        }
        // An element whose q-value cannot be read is ignored.
        let Some(q) = q else { continue };
        let slot = if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            &mut gzip
        } else if coding.eq_ignore_ascii_case("deflate") {
            &mut deflate
        } else if coding == "*" {
            &mut any
        } else {
            continue;
        };
        *slot = Some(slot.map_or(q, |old: u16| old.max(q)));
    }
    let gzip = gzip.or(any).unwrap_or(0);
    let deflate = deflate.or(any).unwrap_or(0);
    match (gzip, deflate) {
        (0, 0) => None,
        (g, d) if g >= d => Some(Coding::Gzip),
        _ => Some(Coding::Deflate),
    }
}

/// A q-value (`0`, `1`, `0.5`, `1.000`, at most three decimals) in thousandths.
fn qvalue(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = format!("{fraction:0<3}").parse::<u16>().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// Whether a reply is one that compression may touch at all (before its size is looked at).
fn eligible(method: &Method, status: StatusCode, headers: &HeaderMap) -> bool {
    *method != Method::HEAD
        && !status.is_informational()
        && !matches!(status.as_u16(), 204 | 206 | 304)
        && !headers.contains_key(CONTENT_ENCODING)
        && !headers.contains_key(CONTENT_RANGE)
}

/// What [`apply`] decided for one reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Plan {
    /// Send the body as it is.
    Keep,
    /// Compress the body with this coding.
    Compress(Coding),
}

/// Decides whether a reply is compressed, and marks it `Vary: Accept-Encoding` when its
/// encoding depends on that header. `threshold` 0 leaves every reply alone.
pub fn plan(
    threshold: u64,
    coding: Option<Coding>,
    method: &Method,
    status: StatusCode,
    headers: &mut HeaderMap,
    body_len: usize,
) -> Plan {
    if threshold == 0 || (body_len as u64) < threshold || !eligible(method, status, headers) {
        return Plan::Keep;
    }
    headers.append(VARY, HeaderValue::from_static("Accept-Encoding"));
    match coding {
        Some(coding) => Plan::Compress(coding),
        None => Plan::Keep,
    }
}

/// The body compressed with `coding`, or `None` when that does not make it smaller.
pub fn compress(coding: Coding, body: &[u8]) -> Option<Vec<u8>> {
    // Speed over ratio: the CPU spent here is taken from serving requests.
    let level = Compression::fast();
    let out = Vec::with_capacity(body.len() / 4 + 64);
    let compressed = match coding {
        Coding::Gzip => {
            let mut encoder = GzEncoder::new(out, level);
            encoder.write_all(body).ok()?;
            encoder.finish().ok()?
        }
        Coding::Deflate => {
            let mut encoder = ZlibEncoder::new(out, level);
            encoder.write_all(body).ok()?;
            encoder.finish().ok()?
        }
    };
    (compressed.len() < body.len()).then_some(compressed)
}

/// Sets the headers of a body that was compressed with `coding`.
pub fn mark(headers: &mut HeaderMap, coding: Coding) {
    headers.insert(CONTENT_ENCODING, HeaderValue::from_static(coding.token()));
    // The length is the compressed body's, which the server computes.
    headers.remove(CONTENT_LENGTH);
}

/// [`plan`], [`compress`] and [`mark`] in one call, on the calling thread.
pub fn apply(
    threshold: u64,
    coding: Option<Coding>,
    method: &Method,
    status: StatusCode,
    headers: &mut HeaderMap,
    body: Bytes,
) -> Bytes {
    match plan(threshold, coding, method, status, headers, body.len()) {
        Plan::Keep => body,
        Plan::Compress(coding) => match compress(coding, &body) {
            Some(compressed) => {
                mark(headers, coding);
                Bytes::from(compressed)
            }
            None => body,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::{GzDecoder, ZlibDecoder};
    use std::io::Read;

    fn accept(value: &str) -> Option<Coding> {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        negotiate(&headers)
    }

    #[test]
    fn a_refusal_past_the_element_bound_is_never_overridden() {
        let many = format!("*, {}gzip;q=0", "br, ".repeat(ELEMENTS_MAX));
        assert_eq!(accept(&many), None);
        let few = format!("*, {}gzip;q=0", "br, ".repeat(ELEMENTS_MAX - 3));
        assert_eq!(accept(&few), Some(Coding::Deflate));
    }

    #[test]
    fn accept_encoding_with_q_values() {
        assert_eq!(negotiate(&HeaderMap::new()), None);
        assert_eq!(accept("gzip, deflate"), Some(Coding::Gzip));
        assert_eq!(accept("deflate"), Some(Coding::Deflate));
        assert_eq!(accept("GZIP"), Some(Coding::Gzip));
        assert_eq!(accept("x-gzip"), Some(Coding::Gzip));
        assert_eq!(accept("gzip;q=0.5, deflate"), Some(Coding::Deflate));
        assert_eq!(accept("gzip;q=0, deflate;q=0"), None);
        assert_eq!(accept("gzip;q=0"), None);
        assert_eq!(accept("*"), Some(Coding::Gzip));
        assert_eq!(accept("*;q=0"), None);
        assert_eq!(accept("gzip;q=0, *"), Some(Coding::Deflate));
        assert_eq!(accept("identity, br"), None);
        assert_eq!(accept("br;q=1, deflate ; q=0.001"), Some(Coding::Deflate));
        // An unreadable q-value drops its element.
        assert_eq!(accept("gzip;q=2, deflate;q=0.9"), Some(Coding::Deflate));
        assert_eq!(accept("gzip;q=0.1234"), None);
        assert_eq!(accept("gzip;q=1.0"), Some(Coding::Gzip));
    }

    fn decode(coding: Coding, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        match coding {
            Coding::Gzip => GzDecoder::new(body).read_to_end(&mut out).unwrap(),
            Coding::Deflate => ZlibDecoder::new(body).read_to_end(&mut out).unwrap(),
        };
        out
    }

    #[test]
    fn compresses_bodies_at_or_over_the_threshold_that_shrink() {
        let body =
            Bytes::from("{\"a\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}".repeat(20));
        for coding in [Coding::Gzip, Coding::Deflate] {
            let mut headers = HeaderMap::new();
            let out = apply(
                body.len() as u64,
                Some(coding),
                &Method::GET,
                StatusCode::OK,
                &mut headers,
                body.clone(),
            );
            assert_eq!(headers[CONTENT_ENCODING], coding.token());
            assert_eq!(headers[VARY], "Accept-Encoding");
            assert!(out.len() < body.len());
            assert_eq!(decode(coding, &out), body);
        }
        // One byte under the threshold: untouched, and no Vary either.
        let mut headers = HeaderMap::new();
        let out = apply(
            body.len() as u64 + 1,
            Some(Coding::Gzip),
            &Method::GET,
            StatusCode::OK,
            &mut headers,
            body.clone(),
        );
        assert_eq!(out, body);
        assert!(headers.is_empty());
    }

    #[test]
    fn never_compressed() {
        let body = Bytes::from(vec![b'a'; 4096]);
        type Case = (Method, u16, Option<(http::HeaderName, &'static str)>);
        let cases: Vec<Case> = vec![
            (Method::HEAD, 200, None),
            (Method::GET, 204, None),
            (Method::GET, 304, None),
            (Method::GET, 206, None),
            (Method::GET, 200, Some((CONTENT_ENCODING, "br"))),
            (Method::GET, 200, Some((CONTENT_RANGE, "bytes 0-4095/9000"))),
        ];
        for (method, status, header) in cases {
            let mut headers = HeaderMap::new();
            if let Some((name, value)) = &header {
                headers.insert(name.clone(), HeaderValue::from_static(value));
            }
            let before = headers.clone();
            let out = apply(
                1,
                Some(Coding::Gzip),
                &method,
                StatusCode::from_u16(status).unwrap(),
                &mut headers,
                body.clone(),
            );
            assert_eq!(out, body, "{method} {status} {header:?}");
            assert_eq!(headers, before, "{method} {status} {header:?}");
        }
        // Threshold 0: off, whatever the client accepts.
        let mut headers = HeaderMap::new();
        let out = apply(
            0,
            Some(Coding::Gzip),
            &Method::GET,
            StatusCode::OK,
            &mut headers,
            body.clone(),
        );
        assert_eq!(out, body);
        assert!(headers.is_empty());
    }

    #[test]
    fn a_body_that_does_not_shrink_is_sent_as_it_is_but_varies() {
        // Random bytes do not compress.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..2000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let body = Bytes::from(noise);
        let mut headers = HeaderMap::new();
        let out = apply(
            1,
            Some(Coding::Deflate),
            &Method::GET,
            StatusCode::OK,
            &mut headers,
            body.clone(),
        );
        assert_eq!(out, body);
        assert!(!headers.contains_key(CONTENT_ENCODING));
        assert_eq!(headers[VARY], "Accept-Encoding");
    }

    #[test]
    fn a_client_that_accepts_nothing_gets_vary_only() {
        let body = Bytes::from(vec![b'a'; 4096]);
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("4096"));
        let out = apply(
            100,
            None,
            &Method::GET,
            StatusCode::OK,
            &mut headers,
            body.clone(),
        );
        assert_eq!(out, body);
        assert_eq!(headers[VARY], "Accept-Encoding");
        assert_eq!(headers[CONTENT_LENGTH], "4096");
    }
}
