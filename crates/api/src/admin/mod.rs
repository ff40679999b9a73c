//! `/_api/version`, `/_api/engine` and `/_admin/*`: what the server says about itself (<https://docs.arangodb.com/3.12/develop/http-api/administration/>).
//!
//! What it is: [`server`] (version, engine, role, availability, time, license, metrics), [`status`] (`/_admin/status`), [`statistics`] (`/_admin/statistics` and its description) and [`echo`] (`/_admin/echo`);
//! and the operator's calls: [`log`] (`/_admin/log*`: recent lines, levels, structured
//! parameters), [`maintenance`] (compaction, routing reload, target version), [`support_info`],
//! [`options`] (`/_admin/options*`), [`jwt`] (`/_admin/server/jwt`), [`tls`]
//! (`/_admin/server/tls`), [`api_calls`] (`/_admin/server/api-calls`) and [`backup`]
//! (`/_admin/backup/*`: hot backups taken, restored and deleted).
//!
//! What it is not: the logging, the options, the secret files or the certificates themselves,
//! which belong to the binary and reach these handlers through `crate::state::AdminHooks` and
//! `crate::state::TlsControl`.
//!
//! Invariants: success bodies never carry `errorNum`; Quince reports ArangoDB's version
//! ([`crate::limits::ARANGODB_VERSION`]) so drivers enable 3.12 behaviour, and names itself
//! (and its own version) in the details.

pub(crate) mod api_calls;
pub(crate) mod backup;
pub(crate) mod cluster;
pub(crate) mod echo;
pub(crate) mod jwt;
pub(crate) mod log;
pub(crate) mod maintenance;
pub(crate) mod options;
pub(crate) mod server;
pub(crate) mod statistics;
pub(crate) mod status;
pub(crate) mod support_info;
pub(crate) mod tls;

/// The machine's host name, for status replies ("localhost" when it cannot be read).
pub(crate) fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}
