//! `/_api/version`, `/_api/engine` and `/_admin/*`: what the server says about itself (`reference/arangodb-http-api.md` §7.2).
//!
//! What it is: [`server`] (version, engine, role, availability, time, license, metrics), [`status`] (`/_admin/status`), [`echo`] (`/_admin/echo`) and [`backup`] (`/_admin/backup/*`, hot backups).
//!
//! What it is not: configuration. These handlers report; they change nothing, but for
//! `backup`, which takes, restores and deletes hot backups.
//!
//! Invariants: success bodies never carry `errorNum`; Quince reports ArangoDB's version
//! ([`crate::limits::ARANGODB_VERSION`]) so drivers enable 3.12 behaviour, and names itself
//! (and its own version) in the details.

pub(crate) mod backup;
pub(crate) mod echo;
pub(crate) mod server;
pub(crate) mod status;

/// The machine's host name, for status replies ("localhost" when it cannot be read).
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
