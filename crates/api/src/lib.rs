//! Quince's HTTP surface: ArangoDB 3.12's REST API over the database layer.
//!
//! What it is: the request pipeline of `reference/arangodb-http-api.md` §1.1 (database
//! prefix, authentication, limits, routing) and one module per endpoint family, each an
//! `async fn handle(&Ctx, ApiRequest) -> ApiResult`. Errors are [`quince_errors::ArangoError`]
//! values rendered in one place ([`error::error_response`]).
//!
//! What it is not: the listener. The `quince` binary (crate `quince-server`) owns sockets,
//! hyper connections, signals and shutdown, and calls [`Api::serve`] per request.
//!
//! Invariants: every error body has ArangoDB's shape; no success body carries `errorNum`;
//! every reply has a Content-Length (bodies are whole).

pub mod error;
pub mod request;
pub mod response;

mod collection;
mod document;

pub use request::ApiRequest;
pub use response::{ApiResponse, ApiResult};
