//! The command lines of `quince dump` and `quince restore`, with arangodump's and
//! arangorestore's option names and defaults.
//!
//! What it is: [`ServerArgs`] (the connection options both tools share, as every ArangoDB
//! client tool spells them), [`DumpArgs`] and [`RestoreArgs`], parsed by clap; booleans take
//! ArangoDB's spellings through [`quince_client::parse_bool`] (`--overwrite`, `--overwrite
//! true`, `--overwrite=false`).
//!
//! What it is not: the checks that need more than one option or the file system (those are in
//! [`crate::dump`] and [`crate::restore`]). Unknown options are clap's error, exit status 2.
//!
//! Invariants: `--threads` is 1 to 64; `--batch-size` is at least 1 KiB and at most 1 GiB, so a
//! batch always fits in the client's reply bound.

use std::path::PathBuf;

use clap::{ArgAction, Args};
use quince_client::parse_bool;

/// The smallest `--batch-size`.
pub const BATCH_SIZE_MIN: u64 = 1 << 10;
/// The largest `--batch-size` (below the client's 256 MiB reply bound, with room for a
/// reply's envelope and documents larger than the average).
pub const BATCH_SIZE_MAX: u64 = 1 << 30;

/// The connection options of both tools.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// The server: tcp://HOST:PORT (also http://), or over TLS ssl://HOST:PORT (also https://).
    #[arg(
        long = "server.endpoint",
        value_name = "URL",
        default_value = "tcp://127.0.0.1:8529"
    )]
    pub endpoint: String,

    /// ssl:// endpoints: trust the CA certificates of this PEM file (default: the system's
    /// trusted roots).
    #[arg(long = "ssl.cafile", value_name = "FILE")]
    pub ssl_cafile: Option<std::path::PathBuf>,

    /// The database (default `_system`; not with --all-databases).
    #[arg(long = "server.database", value_name = "NAME")]
    pub database: Option<String>,

    /// The user.
    #[arg(long = "server.username", value_name = "USER", default_value = "root")]
    pub username: String,

    /// The password (default: $QUINCE_ROOT_PASSWORD, else $ARANGO_ROOT_PASSWORD, else empty).
    #[arg(long = "server.password", value_name = "PASSWORD")]
    pub password: Option<String>,

    /// Whether to send credentials.
    #[arg(long = "server.authentication", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub authentication: bool,
}

impl ServerArgs {
    /// The database the options name (`_system` when none).
    pub fn database(&self) -> &str {
        self.database.as_deref().unwrap_or("_system")
    }
}

/// `quince dump`'s options.
#[derive(Args, Debug, Clone)]
pub struct DumpArgs {
    #[command(flatten)]
    pub server: ServerArgs,

    /// Dump only this collection (repeatable; naming a system collection includes it).
    #[arg(long = "collection", value_name = "NAME", action = ArgAction::Append)]
    pub collections: Vec<String>,

    /// Dump every database the user can access, each into a subdirectory.
    #[arg(long = "all-databases", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub all_databases: bool,

    /// Dump system collections (names starting with `_`) too.
    #[arg(long = "include-system-collections", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub include_system_collections: bool,

    /// The directory to write.
    #[arg(long = "output-directory", value_name = "DIR", default_value = "dump")]
    pub output_directory: PathBuf,

    /// Write into an existing directory that is not empty.
    #[arg(long = "overwrite", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub overwrite: bool,

    /// Gzip the data files (`NAME_MD5.data.json.gz`).
    #[arg(long = "compress-output", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub compress_output: bool,

    /// Collections dumped in parallel.
    #[arg(long = "threads", value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,

    /// The size of one batch read from the server, in bytes (approximate).
    #[arg(long = "batch-size", value_name = "BYTES", default_value_t = 16 << 20,
          value_parser = clap::value_parser!(u64).range(BATCH_SIZE_MIN..=BATCH_SIZE_MAX))]
    pub batch_size: u64,

    /// Show a progress display (only ever on a terminal).
    #[arg(long = "progress", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub progress: bool,
}

/// `quince restore`'s options.
#[derive(Args, Debug, Clone)]
pub struct RestoreArgs {
    #[command(flatten)]
    pub server: ServerArgs,

    /// Restore only this collection (repeatable; naming a system collection includes it).
    #[arg(long = "collection", value_name = "NAME", action = ArgAction::Append)]
    pub collections: Vec<String>,

    /// Restore every database of a dump made with --all-databases, each into the database its
    /// dump.json names.
    #[arg(long = "all-databases", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub all_databases: bool,

    /// Restore system collections (names starting with `_`) too.
    #[arg(long = "include-system-collections", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub include_system_collections: bool,

    /// The dump to read.
    #[arg(long = "input-directory", value_name = "DIR", default_value = "dump")]
    pub input_directory: PathBuf,

    /// Drop and recreate collections that exist (system collections are kept and their
    /// documents replaced).
    #[arg(long = "overwrite", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub overwrite: bool,

    /// Create the database when it does not exist.
    #[arg(long = "create-database", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub create_database: bool,

    /// Create the collections (and their indexes) from the structure files.
    #[arg(long = "create-collection", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub create_collection: bool,

    /// Load the documents of the data files.
    #[arg(long = "import-data", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub import_data: bool,

    /// Collections restored in parallel.
    #[arg(long = "threads", value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,

    /// The size of one import request, in bytes.
    #[arg(long = "batch-size", value_name = "BYTES", default_value_t = 8 << 20,
          value_parser = clap::value_parser!(u64).range(BATCH_SIZE_MIN..=BATCH_SIZE_MAX))]
    pub batch_size: u64,

    /// Show a progress display (only ever on a terminal).
    #[arg(long = "progress", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub progress: bool,
}

/// `quince dump`'s command line.
#[derive(clap::Parser, Debug)]
#[command(
    name = "quince dump",
    about = "Dumps the collections of a Quince (or ArangoDB) database into a directory, in arangodump's format"
)]
pub struct DumpCommand {
    #[command(flatten)]
    pub args: DumpArgs,
}

/// `quince restore`'s command line.
#[derive(clap::Parser, Debug)]
#[command(
    name = "quince restore",
    about = "Restores a dump made by quince dump or arangodump into a Quince (or ArangoDB) database"
)]
pub struct RestoreCommand {
    #[command(flatten)]
    pub args: RestoreArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn defaults_are_arangodumps_and_arangorestores() {
        let dump = DumpCommand::try_parse_from(["x"]).unwrap().args;
        assert!(dump.compress_output && !dump.overwrite && !dump.all_databases);
        assert_eq!(dump.output_directory, PathBuf::from("dump"));
        assert_eq!(dump.server.endpoint, "tcp://127.0.0.1:8529");
        assert_eq!(dump.server.database(), "_system");
        assert_eq!(dump.server.username, "root");
        let restore = RestoreCommand::try_parse_from(["x"]).unwrap().args;
        assert!(restore.overwrite && restore.create_collection && restore.import_data);
        assert!(!restore.create_database);
    }

    #[test]
    fn booleans_repeats_and_unknown_options() {
        let dump = DumpCommand::try_parse_from([
            "x",
            "--collection",
            "a",
            "--collection=b",
            "--compress-output",
            "false",
            "--overwrite",
            "--threads",
            "4",
        ])
        .unwrap()
        .args;
        assert_eq!(dump.collections, ["a", "b"]);
        assert!(!dump.compress_output && dump.overwrite);
        assert_eq!(dump.threads, 4);
        assert!(DumpCommand::try_parse_from(["x", "--no-such-option"]).is_err());
        assert!(RestoreCommand::try_parse_from(["x", "--threads", "0"]).is_err());
        assert!(RestoreCommand::try_parse_from(["x", "--batch-size", "10"]).is_err());
    }
}
