//! `quince start`: the one-command cluster deployment, modelled on ArangoDB's starter
//! (`arangodb --starter.local`, `arangodb --starter.join A,B,C`).
//!
//! What it is: [`start_main`], which reads the options ([`options`]), takes the data
//! directory's lock ([`lock`]), reuses the layout of an existing `setup.json` ([`state`]) or
//! builds one (local mode on 127.0.0.1, or join mode: this machine's part of a list of
//! machines, [`address`]), computes the processes and their ports ([`plan`]) and command
//! lines ([`command`]), makes sure of the JWT secret ([`secret`]) and hands everything to the
//! [`supervisor`], which starts, watches, restarts and stops the children ([`child`],
//! [`probe`], [`signals`]). docs/cluster.md ("Deployment: quince start") is its manual.
//!
//! What it is not: a server (the starter listens on no port) or a tool that changes a running
//! cluster's membership: a second start on the same data directory brings back the same
//! layout.
//!
//! Invariants: the starter exits 0 after SIGTERM or SIGINT and 1 when the start fails, and
//! in every case no child outlives it; the layout in setup.json wins over the command line's
//! layout options (a difference is reported).

mod address;
mod child;
mod command;
mod lock;
mod options;
mod plan;
mod probe;
mod secret;
mod signals;
mod state;
mod supervisor;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use sha2::{Digest, Sha256};

use command::{command_for, Binaries};
use options::StartArgs;
use plan::{Layout, Mode, Role};
use state::{ProcessRecord, ProcessState, SetupFile, SETUP_VERSION};
use supervisor::{log, Supervisor};

/// Runs `quince start` with the arguments after `start`.
pub fn start_main(args: &[OsString]) -> ExitCode {
    let (start, pass) = options::parse(args);
    let signals = match signals::Signals::install() {
        Ok(signals) => signals,
        Err(e) => {
            log(&format!("cannot install the signal handlers: {e}"));
            return ExitCode::FAILURE;
        }
    };
    match prepare(&start, &pass, signals) {
        Ok((mut supervisor, _lock)) => {
            match supervisor.run(Duration::from_secs(start.start_timeout_s)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            }
        }
        Err(message) => {
            log(&message);
            ExitCode::FAILURE
        }
    }
}

/// Everything before the first process starts: the directory, its lock, the layout, the
/// secret, the commands and the state file.
fn prepare(
    start: &StartArgs,
    pass: &options::PassThrough,
    signals: signals::Signals,
) -> Result<(Supervisor, lock::DataDirLock), String> {
    std::fs::create_dir_all(&start.data_dir)
        .map_err(|e| format!("cannot create {}: {e}", start.data_dir.display()))?;
    let data_dir = start
        .data_dir
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", start.data_dir.display()))?;
    let lock = lock::DataDirLock::take(&data_dir)?;
    let previous = state::read(&data_dir)?;
    let layout = match &previous {
        Some(setup) => {
            if let Ok(asked) = layout_from_args(start) {
                if asked != setup.layout {
                    log(&format!(
                        "using the layout of {} (the command line's layout options differ and are ignored)",
                        data_dir.join(state::SETUP_FILE).display()
                    ));
                }
            }
            setup.layout.clone()
        }
        None => layout_from_args(start)?,
    };
    let plan = plan::plan(&layout)?;
    let jwt_secret = match (&start.jwt_secret, &previous) {
        (Some(file), _) => absolute(file)?,
        (None, Some(setup)) => setup.jwt_secret_file.clone(),
        (None, None) => {
            if matches!(layout.mode, Mode::Join { .. }) {
                return Err(
                    "--starter.join needs --auth.jwt-secret FILE (the same secret on every machine)"
                        .into(),
                );
            }
            let file = data_dir.join(secret::SECRET_FILE);
            secret::ensure_secret_file(&file)?;
            file
        }
    };
    let secret_bytes = secret::read_secret(&jwt_secret)?;
    let cluster_token = match &previous {
        Some(setup) => setup.cluster_token.clone(),
        None => cluster_token(&layout, &data_dir),
    };
    let quince = match &start.quince_binary {
        Some(path) => absolute(path)?,
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find the quince executable: {e}"))?,
    };
    let binaries = Binaries {
        quince,
        etcd: start.etcd_binary.clone(),
        jwt_secret: jwt_secret.clone(),
        cluster_token: cluster_token.clone(),
    };
    let mut processes = Vec::new();
    let mut records = Vec::new();
    for planned in &plan.processes {
        let command = command_for(&plan, planned, &data_dir, &binaries, pass);
        records.push(ProcessRecord {
            role: planned.role,
            host: planned.host.clone(),
            port: planned.port,
            peer_port: planned.member.map(|m| plan.etcd_members[m].peer_port),
            data_dir: command.data_dir.clone(),
            log_file: command.log_file.clone(),
            pid: None,
            state: ProcessState::Stopped,
            restarts: 0,
        });
        processes.push((planned.clone(), command));
    }
    let setup = SetupFile {
        version: SETUP_VERSION,
        layout,
        cluster_token,
        jwt_secret_file: jwt_secret,
        coordinators: plan.of(Role::Coordinator).map(|p| p.url()).collect(),
        processes: records,
    };
    state::write(&data_dir, &setup)?;
    let supervisor = Supervisor::new(
        processes,
        setup,
        data_dir,
        secret_bytes,
        plan.etcd_members.clone(),
        Duration::from_secs(start.stop_timeout_s),
        signals,
    );
    Ok((supervisor, lock))
}

/// The layout the command line asks for.
fn layout_from_args(start: &StartArgs) -> Result<Layout, String> {
    let mode = if start.join.is_empty() {
        Mode::Local {
            dbservers: start.dbservers,
            coordinators: start.coordinators,
        }
    } else {
        let hosts = plan::sorted_hosts(&start.join)?;
        let me = address::own_address(
            &hosts,
            start.address.as_deref(),
            &address::local_entries(&hosts),
        )?;
        Mode::Join { hosts, me }
    };
    Ok(Layout {
        mode,
        port: start.port,
        agency_size: start.agency_size,
    })
}

/// The etcd cluster token: from the join list and port in join mode (so every machine
/// computes the same one), from the data directory and port in local mode.
fn cluster_token(layout: &Layout, data_dir: &Path) -> String {
    let mut hash = Sha256::new();
    match &layout.mode {
        Mode::Local { .. } => hash.update(format!("local {}", data_dir.display())),
        Mode::Join { hosts, .. } => hash.update(format!("join {}", hosts.join(","))),
    }
    hash.update(format!(" {}", layout.port));
    let digest = hash.finalize();
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("quince-{hex}")
}

fn absolute(path: &Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("bad path {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_of_a_join_computes_the_same_token() {
        let join = |me: &str| Layout {
            mode: Mode::Join {
                hosts: vec!["10.0.0.1".into(), "10.0.0.2".into()],
                me: me.into(),
            },
            port: 8528,
            agency_size: 1,
        };
        let a = cluster_token(&join("10.0.0.1"), Path::new("/a"));
        let b = cluster_token(&join("10.0.0.2"), Path::new("/b"));
        assert_eq!(a, b);
        let local = Layout {
            mode: Mode::Local {
                dbservers: 1,
                coordinators: 1,
            },
            port: 8528,
            agency_size: 1,
        };
        assert_ne!(
            cluster_token(&local, Path::new("/a")),
            cluster_token(&local, Path::new("/b"))
        );
    }
}
