//! [`TlsControl`]: how the API reaches the listener's TLS settings without knowing the
//! listener.
//!
//! What it is: a small trait the `quince` binary implements over its rustls configuration and
//! installs with [`crate::Api::install_tls`]; `GET`/`POST /_admin/server/tls` call it.
//!
//! What it is not: TLS itself. This crate reads no certificate and opens no socket (it cannot
//! depend on the server crate, which depends on it).
//!
//! Invariants: both methods answer ArangoDB's `result` object for the TLS data (`keyfile`,
//! `clientCA`, and `SNI` when extra host names are configured); a failed reload leaves the
//! configuration in use unchanged.

use serde_json::Value;

/// The listener's TLS configuration, as the admin API sees it.
pub trait TlsControl: Send + Sync {
    /// The TLS data in use: ArangoDB's `result` object of `GET /_admin/server/tls`.
    fn describe(&self) -> Value;

    /// Reads every file again (keyfile, CA file, SNI keyfiles) and, when all of them make a
    /// valid configuration, uses it for new connections (open ones keep theirs); answers the
    /// new TLS data. On failure nothing changes and the message says what is wrong. It reads
    /// files, so it is called off the async workers.
    fn reload(&self) -> Result<Value, String>;
}
