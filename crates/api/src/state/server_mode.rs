//! [`ServerMode`]: the server's operation mode, `default` or `readonly`, as the API holds it.
//!
//! What it is: one flag, read by the pipeline for every request (it copies it into the
//! caller, so every write check sees it) and set by `PUT /_admin/server/mode`.
//!
//! What it is not: the endpoint (`crate::server_mode`) or persistent: like ArangoDB's, the mode
//! lasts until the process ends.
//!
//! Invariants: a request sees the mode as it was when the pipeline admitted it.

use std::sync::atomic::{AtomicBool, Ordering};

/// The operation mode.
#[derive(Debug, Default)]
pub struct ServerMode {
    /// True in `readonly` mode; false (the start) in `default` mode.
    read_only: AtomicBool,
}

impl ServerMode {
    /// True in `readonly` mode.
    pub fn is_read_only(&self) -> bool {
        self.read_only.load(Ordering::Acquire)
    }

    /// ArangoDB's name of the mode.
    pub fn name(&self) -> &'static str {
        if self.is_read_only() {
            "readonly"
        } else {
            "default"
        }
    }

    /// Switches between `readonly` and `default`.
    pub(crate) fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::Release);
    }
}
