//! [`Transport`]: how a coordinator's requests reach DB servers.
//!
//! What it is: one call, a request to a named server at its endpoint answered with the
//! server's whole reply, or a [`PeerError`] that says whether the request can have reached it.
//! [`PeersTransport`] sends over HTTP with [`Peers`] (pooled connections, the cluster's
//! superuser token); tests answer for DB servers in process (`testing.rs`).
//!
//! What it is not: routing or retries (`shard_requests.rs`).
//!
//! Invariants: [`PeerError::NotSent`] only when the request surely did not reach the server.

use crate::layout::ServerId;
use crate::peers::{PeerError, PeerReply, PeerRequest, Peers};

/// Requests to DB servers (see the module documentation).
pub trait Transport: Send + Sync {
    /// Sends `request` to `server`, reachable at `endpoint`, and answers its reply.
    fn send(
        &self,
        server: &ServerId,
        endpoint: &str,
        request: &PeerRequest<'_>,
    ) -> Result<PeerReply, PeerError>;
}

/// The real transport: HTTP over [`Peers`].
pub struct PeersTransport(pub Peers);

impl Transport for PeersTransport {
    fn send(
        &self,
        _server: &ServerId,
        endpoint: &str,
        request: &PeerRequest<'_>,
    ) -> Result<PeerReply, PeerError> {
        self.0.send(endpoint, request)
    }
}
