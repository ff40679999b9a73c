//! [`Stats`]: counters of what the file system served, for the test's log.
//!
//! What it is: plain counters, bumped under the model's lock and reported by the control
//! channel's `stats` command as one JSON object.
//!
//! What it is not: a measure of time or throughput.
//!
//! Invariants: counters only grow, across cuts too (a cut counts itself in `cuts`).

use serde_json::{json, Value};

/// Counters since the file system was mounted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// `write` requests.
    pub writes: u64,
    /// Bytes they carried.
    pub bytes_written: u64,
    /// Length changes (`ftruncate`, `O_TRUNC`).
    pub set_lens: u64,
    /// `fsync` of a file (full).
    pub fsyncs: u64,
    /// `fdatasync` of a file.
    pub fdatasyncs: u64,
    /// fsyncs of a directory.
    pub fsyncdirs: u64,
    /// Renames within one directory.
    pub renames: u64,
    /// Renames from one directory into another.
    pub cross_dir_renames: u64,
    /// Files and directories created.
    pub creates: u64,
    /// Files and directories removed.
    pub removes: u64,
    /// Power cuts.
    pub cuts: u64,
    /// Model states a cut found impossible (an inode durable under two names); always 0
    /// unless the model itself is wrong.
    pub anomalies: u64,
}

impl Stats {
    /// The counters as a JSON object.
    pub fn to_json(&self) -> Value {
        json!({
            "writes": self.writes,
            "bytes_written": self.bytes_written,
            "set_lens": self.set_lens,
            "fsyncs": self.fsyncs,
            "fdatasyncs": self.fdatasyncs,
            "fsyncdirs": self.fsyncdirs,
            "renames": self.renames,
            "cross_dir_renames": self.cross_dir_renames,
            "creates": self.creates,
            "removes": self.removes,
            "cuts": self.cuts,
            "anomalies": self.anomalies,
        })
    }
}
