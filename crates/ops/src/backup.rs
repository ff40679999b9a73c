//! Hot backups in the operations interface: what a backup request asks for and what a backup
//! is, in ArangoDB 3.12's terms (`/_admin/backup/*`).
//!
//! What it is: [`BackupRequest`] (the create body's options) and [`BackupInfo`] (one backup as
//! `/_admin/backup/create` and `/_admin/backup/list` describe it). The [`crate::Engine`]
//! methods that use them answer 501 (errorNum 9, not implemented) unless an engine provides
//! backups.
//!
//! What it is not: a backup's files or their layout (the engine's own), or HTTP.
//!
//! Invariants: an id names at most one backup; a backup listed is complete.

use std::time::Duration;

/// How `POST /_admin/backup/create` asks for a backup.
#[derive(Clone, Debug, PartialEq)]
pub struct BackupRequest {
    /// Appended to the id (`<datetime>_<label>`); a random one when absent.
    pub label: Option<String>,
    /// Take a backup that may be inconsistent across collections when the write barrier
    /// cannot be had within `timeout` (else the request fails with 408).
    pub allow_inconsistent: bool,
    /// ArangoDB aborts running transactions to get its lock; accepted, and nothing to abort
    /// where stream transactions hold no lock until they commit.
    pub force: bool,
    /// How long to wait for the barrier.
    pub timeout: Duration,
}

/// The default of [`BackupRequest::timeout`] (ArangoDB's 120 s).
pub const BACKUP_TIMEOUT_DEFAULT: Duration = Duration::from_secs(120);

/// The longest [`BackupRequest::timeout`] accepted.
pub const BACKUP_TIMEOUT_MAX: Duration = Duration::from_secs(3600);

/// One backup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackupInfo {
    /// `<datetime>_<label>`.
    pub id: String,
    /// When it was taken, ISO 8601 in UTC (`2026-11-25T20:55:12Z`).
    pub datetime: String,
    /// True when it was taken without the write barrier (`allowInconsistent`).
    pub potentially_inconsistent: bool,
    /// Bytes of its files (files shared with the live data by hard links counted whole).
    pub size_in_bytes: u64,
    /// Its files.
    pub nr_files: u64,
    /// Servers it spans (1 for a single server).
    pub nr_db_servers: u64,
}
