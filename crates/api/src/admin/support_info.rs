//! `GET /_admin/support-info`: what a support engineer asks first, in ArangoDB 3.12's shape
//! for a single server.
//!
//! What it is: `{date, deployment, host}` with figures the server really has: the deployment
//! type (`single`) and its databases, collections and documents; the host's role, version,
//! engine, operation mode, uptime, physical memory and cores (from `/proc` and the standard
//! library), the process's resident and virtual memory, threads and open files (`/proc/self`),
//! and the engine's bytes on disk (the sum of every collection's datafiles, journals and
//! compaction files).
//!
//! What it is not: a cluster report (Quince is a single server) or metrics.
//!
//! Invariants: only in `_system` (403/1230 elsewhere) and only for whom
//! `--server.support-info-api` lets through (default `admin`, as in arangod; 403/11 otherwise);
//! a figure that cannot be read (no `/proc`) is 0, never invented.

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, ARANGO_USE_SYSTEM_DATABASE};
use serde_json::json;

use crate::blocking::blocking;
use crate::error::method_not_allowed;
use crate::limits::ARANGODB_VERSION;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `GET /_admin/support-info`.
pub(crate) async fn support_info(api: &Api, req: &ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(method_not_allowed());
    }
    if req.database.name() != crate::path::SYSTEM_DATABASE {
        return Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE));
    }
    api.config().support_info_api.check(&req.user)?;
    let stats = api.engine().stats();
    let engine = Arc::clone(api.engine());
    let disk_bytes = blocking(move || {
        let mut bytes = 0u64;
        for name in engine.database_names() {
            let Some(database) = engine.database(&name) else {
                continue;
            };
            for collection in database.collections() {
                let f = collection.figures().storage;
                bytes += f.datafiles_file_size + f.journals_file_size + f.compactors_file_size;
            }
        }
        Ok(bytes)
    })
    .await?;
    let now = std::time::SystemTime::now();
    let process = ProcessFigures::read();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    Ok(ApiResponse::json(
        200,
        &json!({
            "date": quince_aql::service::registry::iso8601(now),
            "deployment": {
                "type": "single",
                "databases": stats.databases,
                "collections": stats.collections,
                "documents": stats.documents,
            },
            "host": {
                "role": "SINGLE",
                "maintenance": false,
                "readOnly": api.server_mode().is_read_only(),
                "version": ARANGODB_VERSION,
                "quinceVersion": env!("CARGO_PKG_VERSION"),
                "license": "community",
                "engine": "rocksdb",
                "quinceEngine": "journal",
                "os": std::env::consts::OS,
                "platform": std::env::consts::OS,
                "architecture": std::env::consts::ARCH,
                "hostname": super::hostname(),
                "physicalMemory": {"value": meminfo_total_bytes(), "overridden": false},
                "numberOfCores": {"value": cores, "overridden": false},
                "processStats": {
                    "processUptime": api.uptime().as_secs_f64(),
                    "residentSetSize": process.resident_bytes,
                    "virtualSize": process.virtual_bytes,
                    "numberOfThreads": process.threads,
                    "fileDescriptors": process.open_files,
                },
                "engineStats": {
                    "diskBytes": disk_bytes,
                    "journalBytesWritten": stats.journal_bytes_written,
                    "syncs": stats.syncs,
                    "compactions": stats.compactions,
                },
            },
        }),
    ))
}

/// What `/proc/self` says about the process (0 where it cannot be read).
#[derive(Default)]
struct ProcessFigures {
    resident_bytes: u64,
    virtual_bytes: u64,
    threads: u64,
    open_files: u64,
}

impl ProcessFigures {
    fn read() -> ProcessFigures {
        let mut figures = ProcessFigures::default();
        if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
            for line in status.lines() {
                let value = |line: &str| {
                    line.split_whitespace()
                        .nth(1)
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                if line.starts_with("VmRSS:") {
                    figures.resident_bytes = value(line) * 1024;
                } else if line.starts_with("VmSize:") {
                    figures.virtual_bytes = value(line) * 1024;
                } else if line.starts_with("Threads:") {
                    figures.threads = value(line);
                }
            }
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            figures.open_files = entries.count() as u64;
        }
        figures
    }
}

/// `MemTotal` of `/proc/meminfo`, in bytes (0 where it cannot be read).
fn meminfo_total_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}
