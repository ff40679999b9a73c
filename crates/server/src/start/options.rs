//! The command line of `quince start`, with the option names of ArangoDB's starter.
//!
//! What it is: [`StartArgs`] (the starter's own options, parsed by clap) and
//! [`PassThrough`], the options the starter hands on to the processes it runs, written in the
//! starter's style: `--all.<option>=<value>` (every quince server), `--dbservers.<option>=…`,
//! `--coordinators.<option>=…` and `--etcd.<flag>=…` (the etcd members). [`parse`] splits the
//! pass-through options off before clap sees the rest, since their names are open-ended.
//!
//! What it is not: the layout ([`super::plan`]) or the command lines ([`super::command`]).
//!
//! Invariants: a pass-through option never replaces an option the starter sets itself
//! (endpoints, role, directories, the JWT secret): naming one is an error; at most
//! [`PASS_THROUGH_MAX`] pass-through options; every count and port is bounded here.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Parser};

/// The most pass-through options one command line may carry.
pub const PASS_THROUGH_MAX: usize = 256;

/// Options of the quince servers the starter sets itself; `--all.*` and friends may not.
const RESERVED_SERVER_OPTIONS: &[&str] = &[
    "server.endpoint",
    "database.directory",
    "cluster.my-role",
    "cluster.my-address",
    "cluster.agency-endpoint",
    "server.jwt-secret-keyfile",
    "server.jwt-secret-folder",
    "configuration",
];

/// Flags of etcd the starter sets itself (see `quince_meta::etcd_process::etcd_args`).
const RESERVED_ETCD_FLAGS: &[&str] = &[
    "name",
    "data-dir",
    "listen-client-urls",
    "advertise-client-urls",
    "listen-peer-urls",
    "initial-advertise-peer-urls",
    "initial-cluster",
    "initial-cluster-token",
    "initial-cluster-state",
    "config-file",
];

/// `quince start`: runs a cluster (etcd members, DB servers and coordinators) and supervises
/// it, as ArangoDB's starter (`arangodb`) does. Pass-through options:
/// --all.<option>=<value> (every quince server), --dbservers.<option>=<value>,
/// --coordinators.<option>=<value>, --etcd.<flag>=<value> (the etcd members).
#[derive(Parser, Debug, Clone)]
#[command(name = "quince start", version)]
pub struct StartArgs {
    /// Run the whole cluster on this machine, on 127.0.0.1 (the default without
    /// --starter.join).
    #[arg(long = "starter.local", action = ArgAction::SetTrue, conflicts_with = "join")]
    pub local: bool,

    /// The machines of the cluster, as HOST[,HOST…] (repeatable): run this command on each.
    /// The first --cluster.agency-size of them, sorted as text, run an etcd member; every
    /// one runs a DB server and a coordinator.
    #[arg(long = "starter.join", value_name = "HOSTS", action = ArgAction::Append)]
    pub join: Vec<String>,

    /// This machine's address in the --starter.join list (default: the one local interface
    /// address the list names).
    #[arg(long = "starter.address", value_name = "HOST")]
    pub address: Option<String>,

    /// The base port: coordinators, DB servers and etcd members get fixed offsets from it
    /// (+1, +2, +3 and +4, and +5 more per further local instance).
    #[arg(
        long = "starter.port",
        value_name = "PORT",
        default_value_t = 8528,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub port: u16,

    /// The directory holding setup.json, the JWT secret and one subdirectory per process.
    #[arg(long = "starter.data-dir", value_name = "DIR", default_value = ".")]
    pub data_dir: PathBuf,

    /// The number of etcd members (odd, 1 to 9).
    #[arg(
        long = "cluster.agency-size",
        value_name = "N",
        default_value_t = 3,
        value_parser = parse_agency_size
    )]
    pub agency_size: u16,

    /// The number of DB servers in local mode (1 to 64).
    #[arg(
        long = "starter.dbservers",
        value_name = "N",
        default_value_t = 3,
        value_parser = clap::value_parser!(u16).range(1..=64)
    )]
    pub dbservers: u16,

    /// The number of coordinators in local mode (1 to 64).
    #[arg(
        long = "starter.coordinators",
        value_name = "N",
        default_value_t = 2,
        value_parser = clap::value_parser!(u16).range(1..=64)
    )]
    pub coordinators: u16,

    /// A file holding the JWT secret every server is given (required with --starter.join,
    /// the same file on every machine); default: DATA-DIR/jwt-secret, generated on the first
    /// start.
    #[arg(long = "auth.jwt-secret", value_name = "FILE")]
    pub jwt_secret: Option<PathBuf>,

    /// The quince binary the servers run (default: this executable).
    #[arg(long = "server.quince", value_name = "PATH")]
    pub quince_binary: Option<PathBuf>,

    /// The etcd binary the members run.
    #[arg(long = "server.etcd", value_name = "PATH", default_value = "etcd")]
    pub etcd_binary: PathBuf,

    /// How long, in seconds, the processes may take to answer before the start fails.
    #[arg(
        long = "starter.start-timeout",
        value_name = "SECONDS",
        default_value_t = 120,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub start_timeout_s: u64,

    /// How long, in seconds, a process may take to exit after SIGTERM before it is killed.
    #[arg(
        long = "starter.stop-timeout",
        value_name = "SECONDS",
        default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600)
    )]
    pub stop_timeout_s: u64,
}

/// An odd agency size from 1 to 9 (an even one tolerates no more failures than the odd one
/// below it).
fn parse_agency_size(text: &str) -> Result<u16, String> {
    match text.trim().parse::<u16>() {
        Ok(n) if (1..=9).contains(&n) && n % 2 == 1 => Ok(n),
        _ => Err(format!("'{text}' is not an odd number from 1 to 9")),
    }
}

/// Which processes a pass-through option is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `--all.*`: every quince server.
    All,
    /// `--dbservers.*`.
    DbServers,
    /// `--coordinators.*`.
    Coordinators,
    /// `--etcd.*`.
    Etcd,
}

/// One pass-through option: its name without the prefix, and its value if it has one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassOption {
    /// For whom.
    pub target: Target,
    /// The option's name (`log.level`).
    pub name: String,
    /// The value (`debug`), or none for a bare flag.
    pub value: Option<String>,
}

impl PassOption {
    /// The argument handed on: `--name=value` or `--name`.
    pub fn argument(&self) -> String {
        match &self.value {
            Some(value) => format!("--{}={value}", self.name),
            None => format!("--{}", self.name),
        }
    }
}

/// The pass-through options of a command line, in the order given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassThrough {
    /// Every option, in command-line order.
    pub options: Vec<PassOption>,
}

impl PassThrough {
    /// The arguments for a process that takes the options of `targets`, in command-line order.
    pub fn arguments(&self, targets: &[Target]) -> Vec<String> {
        self.options
            .iter()
            .filter(|o| targets.contains(&o.target))
            .map(PassOption::argument)
            .collect()
    }
}

/// The prefixes of pass-through options.
const PREFIXES: &[(&str, Target)] = &[
    ("--all.", Target::All),
    ("--dbservers.", Target::DbServers),
    ("--coordinators.", Target::Coordinators),
    ("--etcd.", Target::Etcd),
];

/// Splits the pass-through options off `args` (the arguments after `start`); the rest is
/// returned for clap. `--all.log.level=debug` and `--all.log.level debug` both work; a
/// pass-through option followed by another option (or nothing) is a bare flag.
pub fn split_pass_through(args: &[OsString]) -> Result<(PassThrough, Vec<OsString>), String> {
    let mut pass = PassThrough::default();
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let text = args[i].to_string_lossy();
        let Some((prefix, target)) = PREFIXES.iter().find(|(p, _)| text.starts_with(p)) else {
            rest.push(args[i].clone());
            i += 1;
            continue;
        };
        let body = &text[prefix.len()..];
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => match args.get(i + 1).map(|a| a.to_string_lossy()) {
                Some(next) if !next.starts_with('-') => {
                    i += 1;
                    (body.to_string(), Some(next.into_owned()))
                }
                _ => (body.to_string(), None),
            },
        };
        check_name(*target, &name, &text)?;
        if pass.options.len() == PASS_THROUGH_MAX {
            return Err(format!(
                "at most {PASS_THROUGH_MAX} pass-through options (--all.*, --dbservers.*, --coordinators.*, --etcd.*)"
            ));
        }
        pass.options.push(PassOption {
            target: *target,
            name,
            value,
        });
        i += 1;
    }
    Ok((pass, rest))
}

/// Refuses empty names, odd characters and the options the starter sets itself.
fn check_name(target: Target, name: &str, text: &str) -> Result<(), String> {
    let well_formed = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
    if !well_formed {
        return Err(format!("'{text}' does not name an option"));
    }
    let reserved = match target {
        Target::Etcd => RESERVED_ETCD_FLAGS,
        _ => RESERVED_SERVER_OPTIONS,
    };
    if reserved.contains(&name) {
        return Err(format!(
            "'{text}': quince start sets --{name} itself and cannot pass it on"
        ));
    }
    Ok(())
}

/// Parses the arguments after `start`: the pass-through options, then the starter's own.
/// `--help` and bad options end the process as clap does (exit 0 and 2).
pub fn parse(args: &[OsString]) -> (StartArgs, PassThrough) {
    let (pass, rest) = match split_pass_through(args) {
        Ok(split) => split,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let argv = std::iter::once(OsString::from("quince start")).chain(rest);
    match StartArgs::try_parse_from(argv) {
        Ok(start) => (start, pass),
        Err(error) => error.exit(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn pass_through_options_are_split_off_in_both_spellings() {
        let (pass, rest) = split_pass_through(&os(&[
            "--all.log.level=debug",
            "--starter.port",
            "9000",
            "--dbservers.server.threads",
            "4",
            "--coordinators.server.authentication-system-only",
            "--etcd.snapshot-count=1000",
        ]))
        .unwrap();
        assert_eq!(rest, os(&["--starter.port", "9000"]));
        assert_eq!(
            pass.arguments(&[Target::All, Target::DbServers]),
            vec!["--log.level=debug", "--server.threads=4"]
        );
        assert_eq!(
            pass.arguments(&[Target::All, Target::Coordinators]),
            vec!["--log.level=debug", "--server.authentication-system-only"]
        );
        assert_eq!(
            pass.arguments(&[Target::Etcd]),
            vec!["--snapshot-count=1000"]
        );
    }

    #[test]
    fn options_the_starter_sets_cannot_be_passed_on() {
        for bad in [
            "--all.server.endpoint=tcp://0.0.0.0:1",
            "--dbservers.database.directory=/x",
            "--coordinators.cluster.my-role=DBSERVER",
            "--etcd.data-dir=/x",
            "--all.=1",
            "--all.log level=1",
        ] {
            assert!(split_pass_through(&os(&[bad])).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_starter_options_have_arangodb_defaults() {
        let args = StartArgs::try_parse_from(["quince start"]).unwrap();
        assert_eq!(args.port, 8528);
        assert_eq!(args.agency_size, 3);
        assert_eq!(args.data_dir, PathBuf::from("."));
        assert!(args.join.is_empty());
        assert!(StartArgs::try_parse_from(["quince start", "--cluster.agency-size", "2"]).is_err());
        assert!(StartArgs::try_parse_from([
            "quince start",
            "--starter.local",
            "--starter.join",
            "a,b"
        ])
        .is_err());
    }
}
