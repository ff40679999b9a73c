//! [`ApiCallLog`]: the recent API calls (`GET /_admin/server/api-calls`, ArangoDB 3.12.5).
//!
//! What it is: a bounded ring of the most recent requests that passed authentication and
//! found their database (time, method, path without the `/_db/{name}` prefix, database),
//! filled by the pipeline when `--server.api-call-recording` is on (the default, as in
//! arangod); and the `requests` topic's debug line for each such request, which carries the
//! structured log parameters `database`, `username` and `url`.
//!
//! What it is not: an audit log. It keeps no bodies, no query strings, no credentials and no
//! outcome.
//!
//! Invariants: at most [`API_CALLS_MAX`] calls are kept (the oldest go first); a recorded path
//! is at most [`PATH_BYTES_MAX`] bytes; recording off keeps the ring empty.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

/// The most calls kept.
pub const API_CALLS_MAX: usize = 1024;

/// The longest path kept, in bytes (longer ones are cut at a character boundary).
pub const PATH_BYTES_MAX: usize = 1024;

/// One recorded call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiCall {
    /// Unix seconds when the call was recorded.
    pub unix_secs: u64,
    /// The HTTP method.
    pub method: String,
    /// The path, without the database prefix.
    pub path: String,
    /// The database.
    pub database: String,
}

/// The ring of recent calls.
pub struct ApiCallLog {
    enabled: bool,
    calls: Mutex<VecDeque<ApiCall>>,
}

impl ApiCallLog {
    /// A log that records when `enabled`.
    pub fn new(enabled: bool) -> Self {
        ApiCallLog {
            enabled,
            calls: Mutex::new(VecDeque::new()),
        }
    }

    /// Records one call (when enabled) and logs it on the `requests` topic at debug level.
    pub fn record(&self, method: &str, path: &str, database: &str, username: &str) {
        tracing::debug!(
            event = "request",
            method,
            database,
            username,
            url = path,
            "request received"
        );
        if !self.enabled {
            return;
        }
        let mut cut = path.len().min(PATH_BYTES_MAX);
        while !path.is_char_boundary(cut) {
            cut -= 1;
        }
        let unix_secs = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut calls = self.calls.lock();
        // A full ring reuses its oldest entry's buffers: no allocation per request.
        let mut call = match calls.len() == API_CALLS_MAX {
            true => calls.pop_front().expect("a full ring has an oldest call"),
            false => ApiCall {
                unix_secs,
                method: String::new(),
                path: String::new(),
                database: String::new(),
            },
        };
        call.unix_secs = unix_secs;
        for (field, value) in [
            (&mut call.method, method),
            (&mut call.path, &path[..cut]),
            (&mut call.database, database),
        ] {
            field.clear();
            field.push_str(value);
        }
        calls.push_back(call);
    }

    /// The recorded calls, newest first (as arangod lists them).
    pub fn newest_first(&self) -> Vec<ApiCall> {
        self.calls.lock().iter().rev().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_is_bounded_and_lists_newest_first() {
        let log = ApiCallLog::new(true);
        for i in 0..API_CALLS_MAX + 5 {
            // The later calls reuse the oldest entries: each must carry its own fields.
            let (method, database) = match i < API_CALLS_MAX {
                true => ("GET", "_system"),
                false => ("DELETE", "d"),
            };
            log.record(method, &format!("/_api/version/{i}"), database, "root");
        }
        let calls = log.newest_first();
        assert_eq!(calls.len(), API_CALLS_MAX);
        assert_eq!(
            calls[0].path,
            format!("/_api/version/{}", API_CALLS_MAX + 4)
        );
        assert_eq!(
            (calls[0].method.as_str(), calls[0].database.as_str()),
            ("DELETE", "d")
        );
        assert_eq!(
            (calls[5].method.as_str(), calls[5].database.as_str()),
            ("GET", "_system")
        );
        assert_eq!(calls.last().unwrap().path, "/_api/version/5");
    }

    #[test]
    fn long_paths_are_cut_and_recording_off_keeps_nothing() {
        let log = ApiCallLog::new(true);
        let long = format!("/{}", "é".repeat(PATH_BYTES_MAX));
        log.record("PUT", &long, "db", "u");
        let path = &log.newest_first()[0].path;
        assert!(path.len() <= PATH_BYTES_MAX && long.starts_with(path.as_str()));
        let off = ApiCallLog::new(false);
        off.record("GET", "/_api/version", "_system", "root");
        assert!(off.newest_first().is_empty());
    }
}
