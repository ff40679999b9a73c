//! Request extensions: what the listener knows about a request and its connection.
//!
//! What it is: [`Received`], [`ConnectionTrust`] and [`Peer`], which the `quince` binary puts
//! into each request's extensions and the pipeline and some handlers read.
//!
//! What it is not: required. A request without them (tests, jobs, batch parts) is served as
//! well: its queue time starts when the pipeline sees it, no connection is marked trusted, and
//! the client's address is unknown.
//!
//! Invariants: [`ConnectionTrust`] is set only after a request on its connection authenticated;
//! nothing in the API trusts a request because of an extension.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// Request extension: when the listener received the request (its queue time starts here).
#[derive(Clone, Copy, Debug)]
pub struct Received(pub Instant);

/// Request extension: the trust flag of the connection the request came on. The pipeline sets
/// it once a request on the connection authenticated, so the listener knows which connections
/// proved who they are (those it never closes to make room for others).
#[derive(Clone, Debug)]
pub struct ConnectionTrust(pub Arc<std::sync::atomic::AtomicBool>);

/// Request extension: the two ends of the connection the request came on.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    /// The client's address.
    pub client: SocketAddr,
    /// The server's address.
    pub server: SocketAddr,
}
