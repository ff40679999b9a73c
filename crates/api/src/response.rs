//! [`ApiResponse`]: status, headers and a complete body; every handler returns one.

use bytes::Bytes;
use http::header::{HeaderName, HeaderValue, CONTENT_TYPE};
use http::{HeaderMap, StatusCode};
use serde_json::Value;

/// The content type of every JSON reply.
pub const JSON_CONTENT_TYPE: &str = "application/json; charset=utf-8";

/// A complete reply. Bodies are small and whole, so the server always sends a Content-Length.
#[derive(Debug)]
pub struct ApiResponse {
    /// The status code.
    pub status: StatusCode,
    /// Headers set by the handler (the server adds the cross-cutting ones).
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// What every handler returns: a reply, or an ArangoDB error to render.
pub type ApiResult = Result<ApiResponse, quince_errors::ArangoError>;

impl ApiResponse {
    /// A reply with no body.
    pub fn empty(status: u16) -> Self {
        ApiResponse {
            status: status_code(status),
            headers: reply_headers(),
            body: Bytes::new(),
        }
    }

    /// A JSON reply from a value.
    pub fn json(status: u16, value: &Value) -> Self {
        let body = serde_json::to_vec(value).expect("a serde_json::Value always serializes");
        Self::json_bytes(status, body)
    }

    /// A JSON reply from bytes that already hold JSON text.
    pub fn json_bytes(status: u16, body: impl Into<Bytes>) -> Self {
        let mut headers = reply_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON_CONTENT_TYPE));
        ApiResponse {
            status: status_code(status),
            headers,
            body: body.into(),
        }
    }

    /// A reply with a body of the given content type.
    pub fn with_content_type(
        status: u16,
        content_type: &'static str,
        body: impl Into<Bytes>,
    ) -> Self {
        let mut headers = reply_headers();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        ApiResponse {
            status: status_code(status),
            headers,
            body: body.into(),
        }
    }

    /// The same reply with one more header. Values that are not valid header text are dropped
    /// (and a debug assertion fires): handlers only set values they built themselves.
    pub fn with_header(mut self, name: HeaderName, value: &str) -> Self {
        match HeaderValue::from_str(value) {
            Ok(v) => {
                self.headers.insert(name, v);
            }
            Err(_) => debug_assert!(false, "invalid header value {value:?}"),
        }
        self
    }
}

/// An empty header map with room for a reply's usual headers and the ones the pipeline adds
/// to every reply (`server`, `x-content-type-options`, the queue time, `connection`), so that
/// filling it never grows it.
fn reply_headers() -> HeaderMap {
    HeaderMap::with_capacity(REPLY_HEADERS)
}

/// How many headers [`reply_headers`] makes room for.
const REPLY_HEADERS: usize = 12;

fn status_code(status: u16) -> StatusCode {
    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
