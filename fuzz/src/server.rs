//! The in-process server `request_pipeline` and `import_parsers` send requests to: a real
//! [`Catalog`] (the local engine) in a temporary directory, an [`Api`] over it, and a current-thread Tokio
//! runtime with a paused clock.
//!
//! What it is: [`Server`], built with a fixture every seed relies on — collections `c`
//! (documents, holding `c/k1` and `c/k2`) and `e` (edges, holding `e/x`) in `_system`, and a
//! database `db1` — plus the credentials the seeds name ([`basic_root`], [`superuser_token`]).
//! The directory is made in `$QUINCE_FUZZ_TMPDIR` when that is set (`scripts/fuzz.sh` sets it
//! to a directory it removes when it ends), else on `/dev/shm` when there is one, so fsyncs
//! cost nothing, else in the system's temporary directory.
//!
//! What it is not: isolated per input. A server serves many inputs, which may change it (drop
//! `c`, change root's password, switch the server to read-only); the targets rebuild it every
//! so many inputs and whenever [`Server::fixture_intact`] fails, so a crash can depend on the
//! inputs run before it (reproduce with the fuzzer's own log and `-runs`, or minimise).
//!
//! Invariants: the clock is paused, so timers (`/_admin/sleep`) fire as soon as the runtime
//! idles and no input waits in real time for one; dropping a server shuts its API and catalog
//! down and removes its directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::BodyExt;
use hyper::body::Body;
use quince_api::{Api, ApiConfig};
use quince_db::{Catalog, DbConfig};

/// Root's password.
pub const PASSWORD: &str = "pw";

/// The token secret.
pub const SECRET: &[u8] = b"quince-fuzz-secret";

/// `Authorization` for root with [`PASSWORD`].
pub fn basic_root() -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("root:{PASSWORD}"));
    format!("Basic {encoded}")
}

/// `Authorization` with a superuser token signed by [`SECRET`] (valid whatever happens to the
/// accounts).
pub fn superuser_token() -> String {
    let claims = serde_json::json!({ "iss": "arangodb", "server_id": "fuzz" });
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET),
    )
    .expect("HS256 signing cannot fail");
    format!("bearer {token}")
}

/// The prefix of a server's directory, followed by the process id.
const DIR_PREFIX: &str = "quince-fuzz-";

/// The directory servers make their own directories in (see the module's header).
fn parent_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("QUINCE_FUZZ_TMPDIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Removes the directories of servers whose process is gone. The targets keep their server in
/// a static, which is never dropped (libFuzzer leaves through `exit`), so the last server of a
/// process leaves its directory behind; the next process to build a server in the same place
/// removes it.
fn remove_orphans(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(DIR_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A reply, read whole.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// A catalog, an API over it and the runtime that serves it.
pub struct Server {
    /// The API.
    pub api: Arc<Api>,
    /// The catalog under it.
    pub catalog: Arc<Catalog>,
    /// Current-thread, clock paused.
    pub runtime: tokio::runtime::Runtime,
    /// Inputs served since it was built (the targets use it to rebuild).
    pub served: u64,
    _dir: tempfile::TempDir,
}

impl Server {
    /// A server with authentication on and the fixture in place.
    pub fn new() -> Server {
        let parent = parent_dir();
        std::fs::create_dir_all(&parent).expect("the servers' parent directory");
        remove_orphans(&parent);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{DIR_PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
            .expect("a temporary directory");
        let catalog = Catalog::open(DbConfig {
            sync_interval: Duration::from_millis(50),
            ..DbConfig::new(
                dir.path().to_path_buf(),
                Arc::new(quince_storage::io::OsFileIo::new()),
            )
        })
        .expect("the catalog opens");
        let config = ApiConfig {
            root_password: PASSWORD.to_string(),
            jwt_secret: SECRET.to_vec(),
            ..ApiConfig::default()
        };
        let api = Api::new(Arc::clone(&catalog) as Arc<dyn quince_db::Engine>, config);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("a runtime");
        let server = Server {
            api,
            catalog,
            runtime,
            served: 0,
            _dir: dir,
        };
        server.set_up();
        server
    }

    fn set_up(&self) {
        let steps: [(&str, &str, u16); 6] = [
            ("/_api/collection", r#"{"name":"c"}"#, 200),
            ("/_api/collection", r#"{"name":"e","type":3}"#, 200),
            ("/_api/database", r#"{"name":"db1"}"#, 201),
            ("/_api/document/c", r#"{"_key":"k1","a":1,"s":"x"}"#, 202),
            (
                "/_api/document/c",
                r#"{"_key":"k2","a":[1,{"b":null}]}"#,
                202,
            ),
            (
                "/_api/document/e",
                r#"{"_key":"x","_from":"c/k1","_to":"c/k2"}"#,
                202,
            ),
        ];
        for (target, body, status) in steps {
            let req = Request::builder()
                .method(Method::POST)
                .uri(target)
                .header("authorization", basic_root())
                .header("content-length", body.len())
                .body(http_body_util::Full::new(Bytes::from_static(
                    body.as_bytes(),
                )))
                .expect("a valid request");
            let reply = self.send(req);
            assert_eq!(
                reply.status, status,
                "fixture step {target} {body}: {reply:?}"
            );
        }
    }

    /// Sends a request and reads the reply whole.
    pub fn send<B>(&self, req: Request<B>) -> Reply
    where
        B: Body<Data = Bytes> + Send,
        B::Error: std::fmt::Display,
    {
        self.runtime.block_on(async {
            let reply = self.api.serve(req).await;
            let (parts, body) = reply.into_parts();
            let body = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(never) => match never {},
            };
            Reply {
                status: parts.status.as_u16(),
                headers: parts.headers,
                body,
            }
        })
    }

    /// True while the fixture the seeds rely on is there: `_system` with `c` and `e`, `db1`.
    pub fn fixture_intact(&self) -> bool {
        let Some(system) = self.catalog.database("_system") else {
            return false;
        };
        system.collection("c").is_ok()
            && system.collection("e").is_ok()
            && self.catalog.database("db1").is_some()
    }
}

impl Default for Server {
    fn default() -> Self {
        Server::new()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.api.begin_shutdown();
        self.runtime
            .block_on(self.api.finish_jobs(Duration::from_secs(1)));
        let _ = self.catalog.shutdown();
    }
}

/// Asserts that `body` is an ArangoDB error body for `status`:
/// `{"error":true,"errorNum":<n>,"errorMessage":<text>,"code":<status>}` (more attributes may
/// follow), and that it is not the pipeline's answer to a handler panic (500 with errorNum 4).
pub fn assert_error_shape(status: u16, body: &[u8]) {
    let value: serde_json::Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(e) => panic!(
            "error reply {status} is not JSON ({e}): {:?}",
            String::from_utf8_lossy(body)
        ),
    };
    let shaped = value["error"] == serde_json::Value::Bool(true)
        && value["errorNum"].is_u64()
        && value["errorMessage"].is_string()
        && value["code"].as_u64() == Some(u64::from(status));
    assert!(
        shaped,
        "error reply {status} without ArangoDB's shape: {value}"
    );
    assert!(
        !(status == 500 && value["errorNum"].as_u64() == Some(4)),
        "a handler panicked (500, errorNum 4): {value}"
    );
}
