//! The command line of each process the starter runs.
//!
//! What it is: [`etcd_command`] (Debian's `etcd` with `quince_meta::etcd_process::etcd_args`,
//! then the `--etcd.*` pass-through flags) and [`quince_command`] (`quince serve` with the
//! cluster options, then the `--all.*` and role pass-through options), each with the paths
//! of its data directory and log file under the starter's data directory.
//!
//! What it is not: spawning ([`super::child`]) or deciding what runs ([`super::plan`]).
//!
//! Invariants: the options the starter sets come first and pass-through options cannot
//! repeat them ([`super::options`] refuses those); every path is below the data directory
//! except the JWT secret file, which may be the operator's own.

use std::path::{Path, PathBuf};

use quince_meta::etcd_process::etcd_args;

use super::options::{PassThrough, Target};
use super::plan::{Plan, Planned, Role};

/// What the starter runs for one planned process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessCommand {
    /// The binary.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The process's directory (`DATA-DIR/dbserver8530`).
    pub dir: PathBuf,
    /// Its data directory (`DIR/data`).
    pub data_dir: PathBuf,
    /// The file its standard output and error are appended to (`DIR/quince.log`,
    /// `DIR/etcd.log`).
    pub log_file: PathBuf,
}

/// The binaries and files every command refers to.
#[derive(Clone, Debug)]
pub struct Binaries {
    /// `quince` (normally this executable).
    pub quince: PathBuf,
    /// `etcd`.
    pub etcd: PathBuf,
    /// The JWT secret file every quince server gets.
    pub jwt_secret: PathBuf,
    /// The etcd cluster token.
    pub cluster_token: String,
}

/// The command of `process` of `plan`, with its files under `data_dir`.
pub fn command_for(
    plan: &Plan,
    process: &Planned,
    data_dir: &Path,
    binaries: &Binaries,
    pass: &PassThrough,
) -> ProcessCommand {
    match process.role {
        Role::Etcd => etcd_command(plan, process, data_dir, binaries, pass),
        Role::DbServer | Role::Coordinator => {
            quince_command(plan, process, data_dir, binaries, pass)
        }
    }
}

/// The etcd member `process`.
pub fn etcd_command(
    plan: &Plan,
    process: &Planned,
    data_dir: &Path,
    binaries: &Binaries,
    pass: &PassThrough,
) -> ProcessCommand {
    let dir = data_dir.join(&process.dir_name);
    let member_data = dir.join("data");
    let me = &plan.etcd_members[process.member.expect("an etcd process has a member")];
    let mut args = etcd_args(
        me,
        &plan.etcd_members,
        &member_data,
        &binaries.cluster_token,
    );
    args.extend(pass.arguments(&[Target::Etcd]));
    ProcessCommand {
        program: binaries.etcd.clone(),
        args,
        log_file: dir.join("etcd.log"),
        data_dir: member_data,
        dir,
    }
}

/// The DB server or coordinator `process`.
pub fn quince_command(
    plan: &Plan,
    process: &Planned,
    data_dir: &Path,
    binaries: &Binaries,
    pass: &PassThrough,
) -> ProcessCommand {
    let dir = data_dir.join(&process.dir_name);
    let server_data = dir.join("data");
    let (role, role_target) = match process.role {
        Role::DbServer => ("DBSERVER", Target::DbServers),
        _ => ("COORDINATOR", Target::Coordinators),
    };
    let mut args = vec![
        "serve".to_string(),
        "--server.endpoint".into(),
        process.endpoint(),
        "--database.directory".into(),
        server_data.display().to_string(),
        "--cluster.my-role".into(),
        role.into(),
        "--cluster.my-address".into(),
        process.endpoint(),
    ];
    for member in &plan.etcd_members {
        args.push("--cluster.agency-endpoint".into());
        args.push(format!("tcp://{}:{}", member.host, member.client_port));
    }
    args.push("--server.jwt-secret-keyfile".into());
    args.push(binaries.jwt_secret.display().to_string());
    args.extend(pass.arguments(&[Target::All, role_target]));
    ProcessCommand {
        program: binaries.quince.clone(),
        args,
        log_file: dir.join("quince.log"),
        data_dir: server_data,
        dir,
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::start::options::split_pass_through;
    use crate::start::plan::{plan, Layout, Mode};

    fn binaries() -> Binaries {
        Binaries {
            quince: "/bin/quince".into(),
            etcd: "/usr/bin/etcd".into(),
            jwt_secret: "/d/jwt-secret".into(),
            cluster_token: "quince-t".into(),
        }
    }

    fn local_plan() -> Plan {
        plan(&Layout {
            mode: Mode::Local {
                dbservers: 2,
                coordinators: 1,
            },
            port: 8528,
            agency_size: 3,
        })
        .unwrap()
    }

    #[test]
    fn a_db_server_gets_the_cluster_options_then_the_pass_through() {
        let plan = local_plan();
        let (pass, _) = split_pass_through(&[
            OsString::from("--all.log.level=debug"),
            OsString::from("--dbservers.server.threads=2"),
            OsString::from("--coordinators.server.threads=3"),
        ])
        .unwrap();
        let db = plan.of(Role::DbServer).nth(1).unwrap();
        let command = command_for(&plan, db, Path::new("/d"), &binaries(), &pass);
        assert_eq!(command.program, PathBuf::from("/bin/quince"));
        assert_eq!(
            command.args,
            vec![
                "serve",
                "--server.endpoint",
                "tcp://127.0.0.1:8535",
                "--database.directory",
                "/d/dbserver8535/data",
                "--cluster.my-role",
                "DBSERVER",
                "--cluster.my-address",
                "tcp://127.0.0.1:8535",
                "--cluster.agency-endpoint",
                "tcp://127.0.0.1:8531",
                "--cluster.agency-endpoint",
                "tcp://127.0.0.1:8536",
                "--cluster.agency-endpoint",
                "tcp://127.0.0.1:8541",
                "--server.jwt-secret-keyfile",
                "/d/jwt-secret",
                "--log.level=debug",
                "--server.threads=2",
            ]
        );
        assert_eq!(
            command.log_file,
            PathBuf::from("/d/dbserver8535/quince.log")
        );
        let coordinator = plan.of(Role::Coordinator).next().unwrap();
        let command = command_for(&plan, coordinator, Path::new("/d"), &binaries(), &pass);
        assert!(command.args.contains(&"COORDINATOR".to_string()));
        assert!(command.args.ends_with(&[
            "--log.level=debug".to_string(),
            "--server.threads=3".to_string()
        ]));
    }

    #[test]
    fn an_etcd_member_gets_the_static_bootstrap_and_its_pass_through() {
        let plan = local_plan();
        let (pass, _) = split_pass_through(&[
            OsString::from("--etcd.quota-backend-bytes=1000000"),
            OsString::from("--all.log.level=debug"),
        ])
        .unwrap();
        let member = plan.of(Role::Etcd).nth(2).unwrap();
        let command = command_for(&plan, member, Path::new("/d"), &binaries(), &pass);
        assert_eq!(command.program, PathBuf::from("/usr/bin/etcd"));
        assert!(command.args.contains(&"--name=etcd8541".to_string()));
        assert!(command
            .args
            .contains(&"--data-dir=/d/etcd8541/data".to_string()));
        assert!(command
            .args
            .contains(&"--initial-cluster-token=quince-t".to_string()));
        assert_eq!(
            command.args.last().map(String::as_str),
            Some("--quota-backend-bytes=1000000")
        );
        assert!(!command.args.iter().any(|a| a.contains("log.level")));
        assert_eq!(command.log_file, PathBuf::from("/d/etcd8541/etcd.log"));
    }
}
