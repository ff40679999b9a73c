//! Crate-private parsers of the HTTP surface, opened up for the fuzz targets in `fuzz/` (hidden
//! from docs).
//!
//! What it is: thin wrappers over the `/_api/batch` envelope parser (`batch::multipart`:
//! [`batch_boundary`], [`batch_split`], [`batch_parse_part`]) and the streaming
//! `/_api/import` path (`import::handle_stream`: decoding, splitting into records, converting
//! and writing, as [`import_stream`]), so a fuzzer can drive them without the rest of the
//! pipeline in front of them. Whole requests need nothing from here: [`crate::Api::serve`] is
//! public.
//!
//! What it is not: an API. Nothing outside `fuzz/` may use it; the wrappers change with the
//! code they wrap. They add no checks and no behaviour of their own.
//!
//! Invariants: each wrapper calls exactly one crate-private function and returns its outcome
//! unchanged (a [`BatchPart`] is the fields of the private part type, moved out).

use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::BodyExt;
use hyper::body::Body;
use quince_errors::Result;

use crate::batch::multipart;
use crate::request::ApiRequest;
use crate::response::ApiResult;

/// The most parts one batch may hold.
pub const BATCH_PARTS_MAX: usize = multipart::PARTS_MAX;

/// The most header lines in one MIME or embedded request head of a batch part.
pub const BATCH_HEAD_LINES_MAX: usize = multipart::HEAD_LINES_MAX;

/// One parsed part of a batch body: its `Content-Id` and the request embedded in it.
#[derive(Debug)]
pub struct BatchPart {
    /// The `Content-Id` MIME header.
    pub content_id: Option<String>,
    /// The embedded request's method.
    pub method: Method,
    /// The embedded request's target.
    pub target: String,
    /// The embedded request's headers.
    pub headers: HeaderMap,
    /// The embedded request's body.
    pub body: Bytes,
}

/// The boundary of a batch body (`multipart::boundary`).
pub fn batch_boundary(content_type: Option<&str>, body: &[u8]) -> Result<String> {
    multipart::boundary(content_type, body)
}

/// The raw parts of a batch body (`multipart::split`).
pub fn batch_split(body: &Bytes, boundary: &str) -> Result<Vec<Bytes>> {
    multipart::split(body, boundary)
}

/// One raw part read as a MIME head and an embedded request (`multipart::parse_part`).
pub fn batch_parse_part(raw: &Bytes, index: usize) -> Result<BatchPart> {
    let part = multipart::parse_part(raw, index)?;
    Ok(BatchPart {
        content_id: part.content_id,
        method: part.request.method,
        target: part.request.target,
        headers: part.request.headers,
        body: part.request.body,
    })
}

/// Runs an import whose body arrives as `body`, within `limit` bytes
/// (`import::handle_stream`). `req` says what the pipeline would have resolved: the
/// database, the caller, the query (`collection`, `type`, …) and the headers
/// (`Content-Encoding`). Needs a Tokio runtime (the records are written on its blocking pool).
pub async fn import_stream<B>(req: ApiRequest, body: B, limit: usize) -> ApiResult
where
    B: Body<Data = Bytes> + Send,
    B::Error: std::fmt::Display,
{
    // The body is passed on as the pipeline passes it: pinned, its error as text.
    let body = std::pin::pin!(body.map_err(|err| err.to_string()));
    crate::import::handle_stream(req, body, limit).await
}
