//! Test support for the document and collection families: an engine behind the operations
//! interface (a real catalog on a temporary directory, or the in-memory fake), requests built
//! by hand, and replies read back as status, headers and JSON.
//!
//! What it is: [`Fixture`] (engine + `_system` database, a real catalog shut down on drop) and
//! [`Call`] (one request under construction, sent to a family's `handle`).
//!
//! What it is not: the pipeline. Authentication, database resolution and path decoding are
//! skipped; the request arrives as a family's handler sees it.
//!
//! Invariants: each fixture owns a fresh unique directory; errors are rendered exactly as the
//! pipeline renders them ([`crate::error::error_response`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use quince_db::fake::FakeEngine;
use quince_db::{
    Catalog, CollectionOps, CollectionType, CreateCollection, DatabaseOps, DbConfig, Engine,
};
use serde_json::Value;

use crate::error::error_response;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// A catalog on a temporary directory, its `_system` database, and an API over it (for the
/// families that need the server's state, such as the user accounts).
pub(crate) struct Fixture {
    /// The real catalog, when the fixture has one (shut down on drop).
    pub(crate) catalog: Option<Arc<Catalog>>,
    pub(crate) db: Arc<dyn DatabaseOps>,
    pub(crate) api: Arc<crate::Api>,
    _dir: Option<tempfile::TempDir>,
}

impl Fixture {
    /// A fresh catalog.
    pub(crate) fn new() -> Self {
        Fixture::on(Arc::new(quince_storage::io::OsFileIo::new()))
    }

    /// A fresh catalog whose files go through `io` (a `SimFileIo` for fault and crash tests).
    pub(crate) fn on(io: Arc<dyn quince_storage::io::FileIo>) -> Self {
        Fixture::open(io, None)
    }

    /// A fresh catalog whose collections get their hooks from `hooks`.
    pub(crate) fn with_hooks(hooks: Arc<dyn quince_db::HookFactory>) -> Self {
        Fixture::open(Arc::new(quince_storage::io::OsFileIo::new()), Some(hooks))
    }

    fn open(
        io: Arc<dyn quince_storage::io::FileIo>,
        hooks: Option<Arc<dyn quince_db::HookFactory>>,
    ) -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        let catalog = Catalog::open(DbConfig {
            sync_interval: Duration::from_millis(50),
            hooks,
            ..DbConfig::new(dir.path().to_path_buf(), io)
        })
        .expect("catalog opens");
        let engine: Arc<dyn Engine> = Arc::clone(&catalog) as Arc<dyn Engine>;
        let mut fixture = Fixture::over(engine);
        fixture.catalog = Some(catalog);
        fixture._dir = Some(dir);
        fixture
    }

    /// The in-memory fake engine of the operations interface (computing values with AQL, as
    /// the local engine does).
    pub(crate) fn fake() -> Self {
        Fixture::over(FakeEngine::with_expressions(
            quince_aql::ComputedValueCompiler::shared(),
        ))
    }

    /// An API over any engine (a cluster coordinator's, in the cluster tests).
    pub(crate) fn over(engine: Arc<dyn Engine>) -> Self {
        let db = engine.database("_system").expect("_system exists");
        let api = crate::Api::new(engine, crate::ApiConfig::default());
        Fixture {
            catalog: None,
            db,
            api,
            _dir: None,
        }
    }

    /// Creates a collection with default options.
    pub(crate) fn collection(&self, name: &str, kind: CollectionType) -> Arc<dyn CollectionOps> {
        self.db
            .create_collection(CreateCollection {
                name: name.into(),
                kind,
                wait_for_sync: None,
                is_system: false,
                key_options: None,
                journal_size: None,
                schema: None,
                computed_values: None,
                cache_enabled: None,
            })
            .expect("collection created")
    }

    /// A request to `/_api/<family>/<suffix…>` in `_system`.
    pub(crate) fn call(&self, method: Method, family: &str, suffix: &[&str]) -> Call {
        let mut path = format!("/_api/{family}");
        for segment in suffix {
            path.push('/');
            path.push_str(segment);
        }
        Call {
            request: ApiRequest {
                method,
                database: Arc::clone(&self.db),
                path,
                suffix: suffix.iter().map(|s| s.to_string()).collect(),
                query: Vec::new(),
                headers: HeaderMap::new(),
                body: Bytes::new(),
                user: crate::permission::Caller::superuser(),
                json_depth_max: quince_model::json::JSON_DEPTH_MAX_DEFAULT,
                replies: self.api.replies().clone(),
            },
            api: Arc::clone(&self.api),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(catalog) = &self.catalog {
            let _ = catalog.shutdown();
        }
    }
}

/// One request under construction.
pub(crate) struct Call {
    pub(crate) request: ApiRequest,
    api: Arc<crate::Api>,
}

impl Call {
    /// Adds a query parameter.
    pub(crate) fn query(mut self, name: &str, value: &str) -> Self {
        self.request.query.push((name.into(), value.into()));
        self
    }

    /// Adds a header.
    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Self {
        self.request.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(value).expect("valid header value"),
        );
        self
    }

    /// Sets a JSON body.
    pub(crate) fn json(mut self, body: Value) -> Self {
        self.request.body = Bytes::from(body.to_string());
        self
    }

    /// Sets a raw body.
    pub(crate) fn raw(mut self, body: &'static str) -> Self {
        self.request.body = Bytes::from_static(body.as_bytes());
        self
    }

    /// Sends it to `/_api/document`.
    pub(crate) async fn document(self) -> Reply {
        Reply::from(crate::document::handle(self.request).await)
    }

    /// Sends it to `/_api/collection`.
    pub(crate) async fn collection(self) -> Reply {
        Reply::from(crate::collection::handle(&self.api, self.request).await)
    }

    /// Sends it to `/_api/key-generators`.
    pub(crate) async fn index(self) -> Reply {
        Reply::from(crate::index::handle(self.request).await)
    }

    /// Sends it to `/_api/edges`.
    pub(crate) async fn edges(self) -> Reply {
        Reply::from(crate::edges::handle(self.request).await)
    }

    /// Sends it to `/_api/database`.
    pub(crate) async fn database(self) -> Reply {
        Reply::from(crate::database::handle(&self.api, self.request).await)
    }

    pub(crate) async fn key_generators(self) -> Reply {
        Reply::from(crate::collection::key_generators(self.request).await)
    }
}

/// A reply as a test reads it.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    /// The raw body.
    pub(crate) raw: Bytes,
    /// The body as JSON (`null` when empty).
    pub(crate) body: Value,
}

impl Reply {
    /// A header as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("text header"))
    }

    /// Asserts an error reply with this status and errorNum, and returns its body.
    pub(crate) fn assert_error(&self, status: u16, error_num: u64) -> &Value {
        assert_eq!(self.status, status, "status of {:?}", self.body);
        assert_eq!(self.body["error"], true, "{:?}", self.body);
        assert_eq!(self.body["errorNum"], error_num, "{:?}", self.body);
        assert_eq!(self.body["code"], status, "{:?}", self.body);
        &self.body
    }
}

impl From<ApiResult> for Reply {
    fn from(result: ApiResult) -> Self {
        let response: ApiResponse = result.unwrap_or_else(|err| error_response(&err));
        let body = if response.body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&response.body).expect("reply body is JSON")
        };
        Reply {
            status: response.status.as_u16(),
            headers: response.headers,
            raw: response.body,
            body,
        }
    }
}
