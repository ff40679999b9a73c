//! Request bytes: the HTTP/1.1 request line, the headers every request of a tool shares, and a
//! body.
//!
//! What it is: [`RequestHead`], the parts every request of a run shares (database prefix,
//! `Host`, `Authorization`, keep-alive and async headers), and [`RequestHead::write`], which
//! appends one whole request (with any headers of its own) to a reusable buffer so a hot loop
//! allocates nothing;
//! [`encode_segment`] for the names that go into paths and query strings.
//!
//! What it is not: a URL builder. Paths come from the callers already percent-encoded.
//!
//! Invariants: every request with a body carries `Content-Length`; a request without one
//! carries none; paths are rewritten to `/_db/<database>/…` as arangob and arangoimport do.

use std::io::Write;

use base64::Engine;

/// The HTTP methods the tools send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// GET.
    Get,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// PATCH.
    Patch,
    /// DELETE.
    Delete,
}

impl Method {
    /// The method's name on the request line.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// The shared part of every request of a run.
#[derive(Debug, Clone)]
pub struct RequestHead {
    db_prefix: String,
    headers: Vec<u8>,
}

impl RequestHead {
    /// The head for `database` on `host` (as `host:port`), without credentials.
    pub fn new(database: &str, host: &str, keep_alive: bool) -> RequestHead {
        let mut headers = format!("Host: {host}\r\n");
        if !keep_alive {
            headers.push_str("Connection: close\r\n");
        }
        RequestHead {
            db_prefix: format!("/_db/{}", encode_segment(database)),
            headers: headers.into_bytes(),
        }
    }

    /// The same head with HTTP Basic credentials.
    pub fn with_basic_auth(mut self, username: &str, password: &str) -> RequestHead {
        let credentials = base64::engine::general_purpose::STANDARD
            .encode(format!("{username}:{password}").as_bytes());
        self.headers
            .extend_from_slice(format!("Authorization: Basic {credentials}\r\n").as_bytes());
        self
    }

    /// The same head with a token (`Authorization: bearer <token>`).
    pub fn with_bearer(mut self, token: &str) -> RequestHead {
        self.headers
            .extend_from_slice(format!("Authorization: bearer {token}\r\n").as_bytes());
        self
    }

    /// The same head with `x-arango-async: true` (fire-and-forget execution on the server).
    pub fn with_async(mut self) -> RequestHead {
        self.headers.extend_from_slice(b"x-arango-async: true\r\n");
        self
    }

    /// The same head for another database (setup requests that run against `_system`).
    pub fn for_database(&self, database: &str) -> RequestHead {
        RequestHead {
            db_prefix: format!("/_db/{}", encode_segment(database)),
            headers: self.headers.clone(),
        }
    }

    /// Appends one request to `out`: `path` is relative to the database (`/_api/…`).
    pub fn write(
        &self,
        out: &mut Vec<u8>,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<&[u8]>,
    ) {
        self.write_with_headers(out, method, path, "", content_type, body);
    }

    /// Like [`RequestHead::write`], with `extra`: header lines of this request alone, each
    /// ending in CRLF (`x-arango-trx-id: 12\r\n`), or empty.
    pub fn write_with_headers(
        &self,
        out: &mut Vec<u8>,
        method: Method,
        path: &str,
        extra: &str,
        content_type: &str,
        body: Option<&[u8]>,
    ) {
        debug_assert!(extra.is_empty() || extra.ends_with("\r\n"));
        out.extend_from_slice(method.as_str().as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.db_prefix.as_bytes());
        out.extend_from_slice(path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        out.extend_from_slice(&self.headers);
        out.extend_from_slice(extra.as_bytes());
        if let Some(body) = body {
            let _ = write!(
                out,
                "Content-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
                body.len()
            );
            out.extend_from_slice(body);
        } else {
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Percent-encodes one path segment or query value (names may hold any UTF-8 character):
/// everything but the unreserved characters of RFC 3986.
pub fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_the_database_prefix_auth_and_length() {
        let head =
            RequestHead::new("_system", "127.0.0.1:8529", true).with_basic_auth("root", "pw");
        let mut out = Vec::new();
        head.write(
            &mut out,
            Method::Post,
            "/_api/document?collection=c",
            "application/json",
            Some(b"{}"),
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /_db/_system/_api/document?collection=c HTTP/1.1\r\n"));
        assert!(text.contains("Authorization: Basic cm9vdDpwdw==\r\n"));
        assert!(text.ends_with("Content-Length: 2\r\n\r\n{}"));
        assert!(!text.contains("Connection: close"));

        let head = RequestHead::new("db ü", "h:1", false).with_async();
        let mut out = Vec::new();
        head.write(&mut out, Method::Get, "/_api/version", "", None);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("GET /_db/db%20%C3%BC/_api/version HTTP/1.1\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.contains("x-arango-async: true\r\n"));
        assert!(!text.contains("Content-Length"));
        assert!(!text.contains("Authorization"));
        assert!(text.ends_with("\r\n\r\n"));

        let mut out = Vec::new();
        head.write_with_headers(
            &mut out,
            Method::Put,
            "/_api/transaction/12",
            "x-arango-trx-id: 12\r\n",
            "",
            None,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("x-arango-async: true\r\nx-arango-trx-id: 12\r\n\r\n"));
    }

    #[test]
    fn names_are_percent_encoded_except_unreserved_characters() {
        assert_eq!(encode_segment("a b/ü?&="), "a%20b%2F%C3%BC%3F%26%3D");
        assert_eq!(encode_segment("_system-1.x~"), "_system-1.x~");
    }
}
