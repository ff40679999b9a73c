//! The state file, `setup.json` in the starter's data directory (as ArangoDB's starter keeps
//! one): the layout, and every process with its ports, directories and current pid.
//!
//! What it is: [`SetupFile`] (its JSON form), [`read`] and [`write`]. The starter rewrites it
//! whenever a process starts, exits or is given up; a second `quince start` on the same data
//! directory reads the layout from it, so the cluster comes back on the same ports with the
//! same directories (and so with its data).
//!
//! What it is not: a lock (the data directory's `starter.lock` is, see [`super::lock`]) or a
//! record of the pass-through options (those come from each command line).
//!
//! Invariants: the file is replaced whole (written beside it, then renamed), so a reader sees
//! the old or the new version, never a mix; a file of another `version` is refused.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::plan::{Layout, Role};

/// The file's name in the data directory.
pub const SETUP_FILE: &str = "setup.json";

/// The format version this starter writes and reads.
pub const SETUP_VERSION: u32 = 1;

/// The largest state file read (a layout of at most a few hundred processes).
const SETUP_FILE_MAX: u64 = 1024 * 1024;

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetupFile {
    /// [`SETUP_VERSION`].
    pub version: u32,
    /// The layout; reused by the next start.
    pub layout: Layout,
    /// The etcd cluster token (names the cluster; kept so a restart rejoins it).
    pub cluster_token: String,
    /// The JWT secret file every quince server was given.
    pub jwt_secret_file: PathBuf,
    /// The coordinators' URLs, for clients.
    pub coordinators: Vec<String>,
    /// Every process this starter runs, in start order.
    pub processes: Vec<ProcessRecord>,
}

/// What the starter knows of one process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProcessRecord {
    /// `etcd`, `dbserver` or `coordinator`.
    pub role: Role,
    /// Its host.
    pub host: String,
    /// Its HTTP port (etcd: the client port).
    pub port: u16,
    /// etcd's peer port.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub peer_port: Option<u16>,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// Its log file.
    pub log_file: PathBuf,
    /// Its pid while it runs.
    pub pid: Option<u32>,
    /// `starting`, `running`, `restarting`, `failed` (given up) or `stopped`.
    pub state: ProcessState,
    /// How many times the starter restarted it.
    pub restarts: u32,
}

/// Where a process stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProcessState {
    /// Started, not answering yet.
    Starting,
    /// Answered.
    Running,
    /// Exited; a restart is scheduled.
    Restarting,
    /// Exited too often; not restarted any more.
    Failed,
    /// Stopped by the starter.
    Stopped,
}

/// Reads `dir/setup.json`; `Ok(None)` when there is none.
pub fn read(dir: &Path) -> Result<Option<SetupFile>, String> {
    let path = dir.join(SETUP_FILE);
    let bytes = match std::fs::metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        Ok(meta) if meta.len() > SETUP_FILE_MAX => {
            return Err(format!("{} is too large", path.display()))
        }
        Ok(_) => {
            std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?
        }
    };
    let setup: SetupFile = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a starter state file: {e}", path.display()))?;
    if setup.version != SETUP_VERSION {
        return Err(format!(
            "{} has version {}, this starter reads version {SETUP_VERSION}",
            path.display(),
            setup.version
        ));
    }
    Ok(Some(setup))
}

/// Replaces `dir/setup.json` with `setup`.
pub fn write(dir: &Path, setup: &SetupFile) -> Result<(), String> {
    let path = dir.join(SETUP_FILE);
    let temporary = dir.join(format!("{SETUP_FILE}.tmp"));
    let mut text = serde_json::to_vec_pretty(setup).map_err(|e| e.to_string())?;
    text.push(b'\n');
    std::fs::write(&temporary, &text)
        .and_then(|()| std::fs::rename(&temporary, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::start::plan::Mode;

    fn sample() -> SetupFile {
        SetupFile {
            version: SETUP_VERSION,
            layout: Layout {
                mode: Mode::Join {
                    hosts: vec!["10.0.0.1".into(), "10.0.0.2".into()],
                    me: "10.0.0.2".into(),
                },
                port: 8528,
                agency_size: 1,
            },
            cluster_token: "quince-abc".into(),
            jwt_secret_file: "/s/jwt".into(),
            coordinators: vec!["http://10.0.0.2:8529".into()],
            processes: vec![ProcessRecord {
                role: Role::DbServer,
                host: "10.0.0.2".into(),
                port: 8530,
                peer_port: None,
                data_dir: "/d/dbserver8530/data".into(),
                log_file: "/d/dbserver8530/quince.log".into(),
                pid: Some(42),
                state: ProcessState::Running,
                restarts: 1,
            }],
        }
    }

    #[test]
    fn the_state_file_round_trips_and_reads_as_documented() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read(dir.path()).unwrap(), None);
        write(dir.path(), &sample()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), Some(sample()));
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.path().join(SETUP_FILE)).unwrap()).unwrap();
        assert_eq!(json["layout"]["mode"], "join");
        assert_eq!(json["layout"]["me"], "10.0.0.2");
        assert_eq!(json["processes"][0]["role"], "dbserver");
        assert_eq!(json["processes"][0]["pid"], 42);
        assert_eq!(json["processes"][0]["state"], "running");
        assert!(!dir.path().join("setup.json.tmp").exists());
    }

    #[test]
    fn other_versions_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut other = sample();
        other.version = 2;
        write(dir.path(), &other).unwrap();
        assert!(read(dir.path()).is_err());
        std::fs::write(dir.path().join(SETUP_FILE), b"{").unwrap();
        assert!(read(dir.path()).is_err());
    }
}
