//! Test support for the pipeline suites: an [`Api`] over a real catalog in a temporary
//! directory, requests built by hand, replies read back as status, headers and JSON.
//!
//! What it is: [`Server`] (catalog + API, catalog shut down on drop) and helpers to build
//! requests with root's Basic credentials or none.
//!
//! What it is not: a socket. Requests go straight to [`Api::serve`], so these tests cover the
//! pipeline's order and the handlers, not hyper.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http::{Method, Request, Response};
use http_body_util::{BodyExt, Full};
use quince_api::{Api, ApiConfig};
use quince_db::{Catalog, DbConfig};
use serde_json::Value;

/// Root's password in these tests.
pub const PASSWORD: &str = "pw";

/// The token secret in these tests.
pub const SECRET: &[u8] = b"secret";

/// A catalog on a fresh directory and an API over it.
pub struct Server {
    pub api: Arc<Api>,
    pub catalog: Arc<Catalog>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// A server with the default settings (authentication on).
    pub fn new() -> Self {
        Self::with(|_| {})
    }

    /// A server whose settings `adjust` changes first.
    pub fn with(adjust: impl FnOnce(&mut ApiConfig)) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let catalog = Catalog::open(DbConfig {
            sync_interval: Duration::from_millis(50),
            ..DbConfig::new(
                dir.path().to_path_buf(),
                Arc::new(quince_storage::io::OsFileIo::new()),
            )
        })
        .expect("catalog opens");
        let mut config = ApiConfig {
            root_password: PASSWORD.to_string(),
            jwt_secret: SECRET.to_vec(),
            ..ApiConfig::default()
        };
        adjust(&mut config);
        Server {
            api: Api::new(catalog.clone(), config),
            catalog,
            _dir: dir,
        }
    }

    /// Sends a request.
    pub async fn send(&self, req: Request<Full<Bytes>>) -> Reply {
        Reply::from(self.api.serve(req).await).await
    }

    /// Sends a request as root (Basic).
    pub async fn root(&self, method: Method, target: &str, body: &str) -> Reply {
        self.send(as_root(request(method, target, body))).await
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.catalog.shutdown();
    }
}

/// A request without credentials.
pub fn request(method: Method, target: &str, body: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(method)
        .uri(target)
        .header("content-length", body.len())
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("valid request")
}

/// The same request with root's Basic credentials.
pub fn as_root(mut req: Request<Full<Bytes>>) -> Request<Full<Bytes>> {
    let value = basic("root", PASSWORD);
    req.headers_mut()
        .insert("authorization", value.parse().unwrap());
    req
}

/// A Basic `Authorization` value.
pub fn basic(user: &str, password: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {encoded}")
}

/// A reply, read whole.
pub struct Reply {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    async fn from(resp: Response<Full<Bytes>>) -> Reply {
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.expect("whole body").to_bytes();
        Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        }
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", String::from_utf8_lossy(&self.body)))
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Asserts an ArangoDB error body with this status and errorNum; returns the message.
    pub fn assert_error(&self, status: u16, error_num: u64) -> String {
        let body = self.json();
        assert_eq!(
            (self.status, body["errorNum"].as_u64()),
            (status, Some(error_num)),
            "{body}"
        );
        assert_eq!(body["error"], Value::Bool(true), "{body}");
        assert_eq!(body["code"].as_u64(), Some(u64::from(status)), "{body}");
        body["errorMessage"].as_str().expect("message").to_string()
    }

    /// Asserts a success status and a body without `errorNum`; returns the body.
    pub fn assert_success(&self, status: u16) -> Value {
        assert_eq!(
            self.status,
            status,
            "{:?}",
            String::from_utf8_lossy(&self.body)
        );
        let body = self.json();
        assert!(body.get("errorNum").is_none(), "{body}");
        body
    }
}
