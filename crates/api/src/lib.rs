//! Quince's HTTP surface: ArangoDB 3.12's REST API over the database layer.
//!
//! What it is: the request pipeline of `reference/arangodb-http-api.md` §1.1 ([`Api`]:
//! stopping, URL length, credentials, database prefix, access, queue time, in-flight bound,
//! body size and encoding), the router, and one module per endpoint family. Family handlers
//! take an [`ApiRequest`] and return an [`ApiResult`]; errors are
//! [`quince_errors::ArangoError`] values rendered in one place ([`error::error_response`]).
//!
//! What it is not: the listener. The `quince` binary (crate `quince-server`) owns sockets,
//! hyper connections, signals and shutdown, and calls [`Api::serve`] per request.
//!
//! Layout: `pipeline` (the order of checks and the headers of every reply), `path` (the
//! `/_db/{name}/` prefix and percent-decoding), `auth` (Basic and JWT), `body` (size bound and
//! decompression), `router` (prefix table), `database` (`/_api/database`), `open_auth`
//! (`/_open/auth`), `permission` (who the caller is, what they may do), `user`
//! (`/_api/user`), `token` (`/_api/token`), `server_mode` (`/_admin/server/mode`), `admin` (version, engine, status, echo, metrics…), `metrics` (counters),
//! `limits` (bounds and defaults); `document` and `collection` are the document and
//! collection families; `async_exec` (the `x-arango-async` step and the job workers), `job`
//! (`/_api/job`, `/_admin/job`, `/_admin/sleep`), `batch` (`/_api/batch`) and
//! `static_files` (`--http.static-dir`); `import` (`/_api/import`, whose body streams).
//!
//! Invariants: every error body has ArangoDB's shape; no success body carries `errorNum`;
//! every reply has a Content-Length (bodies are whole).

pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod limits;
pub mod permission;
pub mod reply_budget;
pub mod request;
pub mod response;

mod admin;
mod async_exec;
mod auth;
mod batch;
mod blocking;
mod body;
mod collection;
mod database;
mod document;
mod import;
mod job;
mod metrics;
mod open_auth;
mod path;
mod pipeline;
mod router;
mod server_mode;
pub mod static_files;
mod token;
mod user;

pub use pipeline::{Api, ApiConfig, ConnectionTrust, Peer, Received};
pub use request::ApiRequest;
pub use response::{ApiResponse, ApiResult};
