//! The one HTTP client of Quince's own tools, and the ArangoDB spellings their command lines
//! share.
//!
//! What it is: a blocking HTTP/1.1 keep-alive [`connection`] over `std::net::TcpStream`, plain
//! or TLS ([`tls`]: rustls with the ring provider, trusting `--ssl.cafile FILE` or the
//! system's roots, ALPN `http/1.1`), the
//! request bytes it sends ([`request`]: a head shared by every request of a tool, written into
//! a reusable buffer), and a response parser that is a pure function of the bytes received
//! ([`response`]), which `quince bench`'s non-blocking lanes use directly. Alongside them, the
//! option syntax ArangoDB's tools and arangod share: server endpoints ([`endpoint`]:
//! `tcp://HOST:PORT`, `ssl://HOST:PORT` and their aliases), booleans ([`boolean`]: true/false,
//! yes/no, on/off, 1/0) and the password rule ([`password`]: the option, then the environment).
//! Every `quince` command parses its options with these, so a spelling accepted by one is
//! accepted by all.
//!
//! What it is not: a general HTTP client (no pipelining, no redirects, no retries, no client
//! certificates, no way to skip certificate verification), nor
//! part of the server: it depends on no other Quince crate, so a tool built on it measures or
//! loads Quince and ArangoDB the same way. The server's api crate does not use it either; query
//! parameters follow a different, never-failing boolean rule that lives with the api.
//!
//! Invariants: every response is bounded (header block [`response::HEAD_MAX`], body
//! [`response::BODY_MAX`]); every socket has read and write timeouts; a parsed endpoint always
//! has a port; a TLS connection verifies the server's certificate against the trusted roots
//! and the endpoint's host.

pub mod boolean;
pub mod connection;
pub mod endpoint;
pub mod password;
pub mod request;
pub mod response;
pub mod tls;

pub use boolean::parse_bool;
pub use connection::{Connection, Timeouts, TransportError};
pub use endpoint::Endpoint;
pub use password::password;
pub use request::{encode_segment, Method, RequestHead};
pub use response::Response;
pub use tls::{Target, TlsClient};
