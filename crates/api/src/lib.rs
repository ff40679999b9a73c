//! Quince's HTTP surface: ArangoDB 3.12's REST API over the database layer.
//!
//! What it is: the request pipeline of ArangoDB's HTTP API documentation, "General request
//! handling" ([`Api::serve`]: stopping, URL length, credentials, database prefix, access,
//! queue time, in-flight bound, body size and encoding), the router, and one module per
//! endpoint family. Family handlers take an [`ApiRequest`] and return an [`ApiResult`]; errors
//! are [`quince_errors::ArangoError`] values rendered in one place ([`error::error_response`]).
//!
//! What it is not: the listener. The `quince` binary (crate `quince-server`) owns sockets,
//! hyper connections, signals and shutdown, and calls [`Api::serve`] per request.
//!
//! Layers, each importing only the ones before it (no import circle):
//!
//! 1. **Bottom: values and shared state.** `state` ([`Api`], which every connection shares,
//!    and what it holds: [`ApiConfig`], the request extensions [`Received`], [`Peer`] and
//!    [`ConnectionTrust`], the queue bound's `Admission`, the job table `state::job_store`,
//!    the operation mode `state::server_mode`), `error` (the error body, and the errors every
//!    layer shares: unknown path, method not allowed, unauthorized), `request`, `response`,
//!    `limits` (bounds and defaults), `path` (the `/_db/{name}/` prefix and percent-decoding),
//!    `body` (size bound and decompression), `compression` (`--http.compress-response-threshold`:
//!    gzip or deflate by `Accept-Encoding`, applied by the pipeline), `credentials` (reading Basic and JWT
//!    credentials), `auth` (the pipeline's authentication steps over the state), `permission`
//!    (who the caller is, what they may do), `metrics` (counters), `reply_budget`, `blocking`
//!    and `static_files` (`--http.static-dir`, served by the pipeline before routing).
//! 2. **Endpoint families**, one module each, importing the bottom and never the router or
//!    the pipeline (`database` and `token` also use `user`'s account helpers): `document`,
//!    `collection`, `database` (`/_api/database`), `user` (`/_api/user`), `token`
//!    (`/_api/token`), `open_auth` (`/_open/auth`), `server_mode` (`/_admin/server/mode`),
//!    `admin` (version, engine, status, echo, metrics…), `job` (`/_api/job`, `/_admin/job`,
//!    `/_admin/sleep`), `batch` (`/_api/batch`) and `import` (`/_api/import`, whose body
//!    streams).
//! 3. **Router** (`router`): one table with a row per family: prefix, handler, permission
//!    policy, body policy, credentials, lane. It is the only module that names the families.
//! 4. **Pipeline** (`pipeline`, with `async_exec`, the `x-arango-async` step and the job
//!    runners): the order of checks and the headers of every reply. It reads a route's
//!    policies from the router and names no family.
//!
//! The one call back up: a batch part or a job re-enters the pipeline's post-check half
//! through `Api::execute`, a method the pipeline layer defines on the state's type, so no
//! module below imports the pipeline.
//!
//! Invariants: every error body has ArangoDB's shape; no success body carries `errorNum`;
//! every reply has a Content-Length (bodies are whole).

pub mod compression;
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
mod credentials;
mod database;
mod document;
mod edges;
mod forwarding;
mod gharial;
mod import;
mod index;
mod job;
mod metrics;
mod open_auth;
mod path;
mod pipeline;
mod query;
mod replication;
mod router;
mod server_mode;
mod state;
pub mod static_files;
mod tasks;
mod token;
mod transaction;
mod user;

pub use metrics::OpenConnection;
pub use request::ApiRequest;
pub use response::{ApiResponse, ApiResult};
pub use state::{
    AdminHooks, Api, ApiConfig, ApiPolicy, ConnectionTrust, LogControl, LogLine, Peer, Received,
    SecretSource, ServerOptions, TlsControl,
};
