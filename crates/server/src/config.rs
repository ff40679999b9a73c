//! The command line and the configuration file of `quince`.
//!
//! What it is: the clap definition of `quince serve` with ArangoDB's dotted option names
//! (`--server.endpoint`, `--database.directory`, …), each taking `--opt value` or `--opt=value`;
//! ArangoDB's boolean spellings (true/false, yes/no, on/off, 1/0); and arangod's INI-style
//! configuration file (`--configuration FILE` or `-c FILE`: `[section]` headers, `key = value`
//! lines, `#` and `;` comments), whose options are placed before the command line's so that
//! the command line wins.
//!
//! What it is not: the defaults' meaning. [`crate::serve`] turns [`ServeArgs`] into the
//! settings of the catalog, the API and the listener.
//!
//! Invariants: an unknown option, on the command line or in the file, is an error with exit
//! code 2; bounds are checked here (journal size at least 1 MiB, queue and connection limits
//! at least 1), so later stages only see valid numbers.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::{ArgAction, Args, Parser, Subcommand};
use quince_client::parse_bool;

/// The smallest journal ArangoDB accepts (1 MiB).
pub const JOURNAL_SIZE_MIN: u64 = 1024 * 1024;

/// `quince`: an ArangoDB-compatible document server.
#[derive(Parser, Debug)]
#[command(
    name = "quince",
    version,
    about = "An ArangoDB-compatible document server"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands. `quince --help` lists them all; the tools' own options are parsed by their
/// crates, so `quince bench --help` and `quince import --help` print those crates' help.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Starts the server.
    #[command(args_override_self = true)]
    Serve(Box<ServeArgs>),
    /// Benchmarks a server over HTTP, as arangobench does.
    ///
    /// Its options, with arangobench's names: quince bench --help.
    #[command(disable_help_flag = true)]
    Bench(ToolArgs),
    /// Imports JSON, JSON Lines, CSV or TSV over HTTP, as arangoimport does.
    ///
    /// Its options, with arangoimport's names: quince import --help.
    #[command(disable_help_flag = true)]
    Import(ToolArgs),
    /// Draws the SVG charts of the benchmark scripts.
    #[command(hide = true, disable_help_flag = true)]
    BenchChart(ToolArgs),
    /// Dumps collections over HTTP into a directory, as arangodump does.
    ///
    /// Its options, with arangodump's names: quince dump --help.
    #[command(disable_help_flag = true)]
    Dump(ToolArgs),
    /// Restores a dump directory over HTTP, as arangorestore does.
    ///
    /// Its options, with arangorestore's names: quince restore --help.
    #[command(disable_help_flag = true)]
    Restore(ToolArgs),
    /// Starts a cluster (etcd members, DB servers, coordinators) and supervises it, as
    /// ArangoDB's starter does.
    ///
    /// Its options, with the starter's names: quince start --help.
    #[command(disable_help_flag = true)]
    Start(ToolArgs),
}

/// The arguments of a tool subcommand, passed on untouched (`--help` included) to the crate
/// that parses them.
#[derive(Args, Debug, Clone)]
pub struct ToolArgs {
    /// The tool's options.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

/// The options of `quince serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// A configuration file in arangod's INI style; command-line options override it.
    #[arg(long = "configuration", short = 'c', value_name = "FILE")]
    pub configuration: Option<PathBuf>,

    /// The endpoint to listen on: tcp://HOST:PORT (also http+tcp:// and http://), or
    /// ssl://HOST:PORT (also http+ssl:// and https://) for TLS with --ssl.keyfile; port 0
    /// picks a free port.
    #[arg(
        long = "server.endpoint",
        value_name = "URL",
        default_value = "tcp://127.0.0.1:8529"
    )]
    pub endpoint: String,

    /// The data directory.
    #[arg(
        long = "database.directory",
        value_name = "DIR",
        default_value = "./quince-data"
    )]
    pub data_dir: PathBuf,

    /// The default maximal journal size of new collections, in bytes (at least 1 MiB).
    #[arg(
        long = "database.maximal-journal-size",
        value_name = "BYTES",
        default_value_t = 32 * 1024 * 1024,
        value_parser = clap::value_parser!(u64).range(JOURNAL_SIZE_MIN..)
    )]
    pub journal_size: u64,

    /// The default `waitForSync` of new collections.
    #[arg(
        long = "database.wait-for-sync",
        value_name = "BOOL",
        default_value = "false",
        value_parser = parse_bool,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub wait_for_sync: bool,

    /// How long unsynced writes may wait for the background fsync, in milliseconds.
    #[arg(
        long = "database.sync-interval",
        value_name = "MS",
        default_value_t = 100,
        value_parser = clap::value_parser!(u64).range(1..=60_000)
    )]
    pub sync_interval_ms: u64,

    /// Open collections whose files are damaged by salvaging every record that still
    /// verifies (the damaged files are kept beside them as `*.corrupt`), instead of refusing
    /// to start. An operator's decision: the damaged records are lost.
    #[arg(
        long = "database.ignore-datafile-errors",
        value_name = "BOOL",
        default_value = "false",
        value_parser = parse_bool,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub ignore_datafile_errors: bool,

    /// Seconds a stream transaction may stay idle (no operation) before it is aborted.
    #[arg(
        long = "transaction.streaming-idle-timeout",
        value_name = "SECONDS",
        default_value_t = 60.0,
        value_parser = parse_idle_timeout
    )]
    pub transaction_idle_timeout: f64,

    /// Milliseconds between two passes that remove the documents ttl indexes say expired.
    #[arg(
        long = "ttl.frequency",
        value_name = "MILLISECONDS",
        default_value_t = 30_000,
        value_parser = clap::value_parser!(u64).range(1..=86_400_000)
    )]
    pub ttl_frequency_ms: u64,

    /// Root's password (else $QUINCE_ROOT_PASSWORD, else $ARANGO_ROOT_PASSWORD, else empty);
    /// also spelled --server.password, as the tools spell it.
    #[arg(
        long = "database.password",
        alias = "server.password",
        value_name = "PASSWORD"
    )]
    pub password: Option<String>,

    /// Whether requests must authenticate; when false every request runs as root.
    #[arg(
        long = "server.authentication",
        value_name = "BOOL",
        default_value = "true",
        value_parser = parse_bool,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub authentication: bool,

    /// When true, only paths starting with `/_` need credentials (ArangoDB's default).
    #[arg(
        long = "server.authentication-system-only",
        value_name = "BOOL",
        default_value = "true",
        value_parser = parse_bool,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub authentication_system_only: bool,

    /// A file holding the HS256 secret for tokens; a random secret when neither this nor
    /// `--server.jwt-secret-folder` is given.
    #[arg(
        long = "server.jwt-secret-keyfile",
        value_name = "FILE",
        conflicts_with = "jwt_secret_folder"
    )]
    pub jwt_secret_keyfile: Option<PathBuf>,

    /// A folder of HS256 secret files, for rotation: the first file (by name) signs tokens,
    /// every file verifies them.
    #[arg(long = "server.jwt-secret-folder", value_name = "DIR")]
    pub jwt_secret_folder: Option<PathBuf>,

    /// Requests queued or in flight at once; more get 503 (errorNum 21003).
    #[arg(
        long = "server.maximal-queue-size",
        value_name = "N",
        default_value_t = 4096,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000)
    )]
    pub queue_size: u64,

    /// Worker threads of the async runtime (default: the number of cores).
    #[arg(
        long = "server.threads",
        value_name = "N",
        value_parser = clap::value_parser!(u64).range(1..=1024)
    )]
    pub threads: Option<u64>,

    /// Open client connections at once; further clients wait in the listen backlog.
    #[arg(
        long = "server.max-connections",
        value_name = "N",
        default_value_t = 4096,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000)
    )]
    pub max_connections: u64,

    /// The fewest open files (the descriptor limit, after the soft limit was raised to the
    /// hard one) the server starts with; below it, it refuses to start. 0: no minimum.
    #[arg(
        long = "server.descriptors-minimum",
        value_name = "N",
        default_value_t = 1024,
        value_parser = clap::value_parser!(u64).range(0..=(1u64 << 30))
    )]
    pub descriptors_minimum: u64,

    /// How long an authenticated connection may stay idle, in seconds (unauthenticated ones:
    /// at most 30 s).
    #[arg(
        long = "http.keep-alive-timeout",
        value_name = "SECONDS",
        default_value_t = 300,
        value_parser = clap::value_parser!(u64).range(1..=86_400)
    )]
    pub keep_alive_timeout_s: u64,

    /// The largest request body, in bytes, before and after decompression.
    #[arg(
        long = "http.max-body-size",
        value_name = "BYTES",
        default_value_t = 512 * 1024 * 1024,
        value_parser = clap::value_parser!(u64).range(1..=(4u64 << 30))
    )]
    pub max_body_size: u64,

    /// The largest reply, in bytes (a bulk read, a batch, an echo); larger ones are refused
    /// with 400 (errorNum 32). Four times this bounds all large replies being built at once.
    #[arg(
        long = "http.max-reply-size",
        value_name = "BYTES",
        default_value_t = 512 * 1024 * 1024,
        value_parser = clap::value_parser!(u64).range(65_536..=(4u64 << 30))
    )]
    pub max_reply_size: u64,

    /// The most memory one AQL query may hold, in bytes (its results, sorts, groups); a query
    /// beyond it fails with 400 (errorNum 32). 0 means no limit. A query's own `memoryLimit`
    /// may only lower it.
    #[arg(
        long = "query.memory-limit",
        value_name = "BYTES",
        default_value_t = quince_api::limits::QUERY_MEMORY_LIMIT_DEFAULT
    )]
    pub query_memory_limit: u64,

    /// The most memory all AQL queries may hold together, in bytes (with the results their
    /// cursors keep); a query that grows while they hold more fails with 400 (errorNum 32).
    /// 0 means no limit. The default is 90 % of the machine's memory.
    #[arg(
        long = "query.global-memory-limit",
        value_name = "BYTES",
        default_value_t = crate::memory::global_query_memory_default()
    )]
    pub query_global_memory_limit: u64,

    /// The largest `POST /_api/import` body, in bytes, before and after decompression.
    /// Imports stream into the collection, so this bounds their length, not memory.
    #[arg(
        long = "http.max-import-size",
        value_name = "BYTES",
        default_value_t = 16u64 << 30,
        value_parser = clap::value_parser!(u64).range(1..=(1u64 << 50))
    )]
    pub max_import_size: u64,

    /// The deepest nesting of a JSON body (at most 256: what every step that handles a
    /// document can recurse through on a worker's stack).
    #[arg(
        long = "http.max-json-depth",
        value_name = "N",
        default_value_t = 64,
        value_parser = clap::value_parser!(u64).range(1..=256)
    )]
    pub max_json_depth: u64,

    /// A directory whose files are served, without authentication, below
    /// `--http.static-prefix`.
    #[arg(long = "http.static-dir", value_name = "DIR")]
    pub static_dir: Option<PathBuf>,

    /// The path below which `--http.static-dir` is served.
    #[arg(
        long = "http.static-prefix",
        value_name = "PATH",
        default_value = quince_api::static_files::PREFIX_DEFAULT,
        value_parser = parse_static_prefix
    )]
    pub static_prefix: String,

    /// Compress replies whose body has at least this many bytes with gzip or deflate when
    /// the client's Accept-Encoding allows it (0: never).
    #[arg(
        long = "http.compress-response-threshold",
        value_name = "BYTES",
        default_value_t = 0
    )]
    pub compress_response_threshold: u64,

    /// The log level: fatal, error, warning, info, debug or trace for every topic, or
    /// TOPIC=LEVEL for one (repeatable, or comma-separated: --log.level info,queries=debug).
    #[arg(
        long = "log.level",
        value_name = "LEVEL",
        default_value = "info",
        action = ArgAction::Append
    )]
    pub log_level: Vec<String>,

    /// Keep the most recent API calls for GET /_admin/server/api-calls.
    #[arg(
        long = "server.api-call-recording",
        value_name = "BOOL",
        default_value = "true",
        value_parser = parse_bool,
        action = ArgAction::Set,
        num_args = 0..=1,
        default_missing_value = "true"
    )]
    pub api_call_recording: bool,

    /// Who may read GET /_admin/options and /_admin/options-description: disabled, jwt (a
    /// superuser JWT only), admin (administrators too) or public (anyone reaching _system).
    #[arg(
        long = "server.options-api",
        value_name = "POLICY",
        default_value = "jwt",
        value_parser = ["disabled", "jwt", "admin", "public"]
    )]
    pub options_api: String,

    /// Who may read GET /_admin/support-info: disabled, jwt, admin or public.
    #[arg(
        long = "server.support-info-api",
        value_name = "POLICY",
        default_value = "admin",
        value_parser = ["disabled", "jwt", "admin", "public"]
    )]
    pub support_info_api: String,

    /// Who may use /_admin/log*: true (administrators), jwt (a superuser JWT only) or false.
    #[arg(
        long = "log.api-enabled",
        value_name = "SWITCH",
        default_value = "true",
        value_parser = ["true", "jwt", "false"]
    )]
    pub log_api: String,

    /// Who may read GET /_admin/server/api-calls: true (administrators), jwt or false.
    #[arg(
        long = "log.recording-api-enabled",
        value_name = "SWITCH",
        default_value = "true",
        value_parser = ["true", "jwt", "false"]
    )]
    pub recording_api: String,

    /// For an ssl:// endpoint: a PEM file holding the server's certificate chain and its
    /// private key (required there, ignored for tcp://).
    #[arg(long = "ssl.keyfile", value_name = "FILE")]
    pub ssl_keyfile: Option<PathBuf>,

    /// A PEM file of CA certificates for client certificates: a client that presents one
    /// must present one these CAs issued; a client that presents none is still accepted.
    #[arg(long = "ssl.cafile", value_name = "FILE")]
    pub ssl_cafile: Option<PathBuf>,

    /// The TLS protocol, with arangod's numbers: 5 = TLS 1.2 only, 6 = TLS 1.3 only,
    /// 9 = TLS 1.2 or 1.3, negotiated (SSLv2, SSLv3 and TLS 1.0, numbers 1 to 4, are not
    /// offered).
    #[arg(
        long = "ssl.protocol",
        value_name = "N",
        default_value_t = 9,
        value_parser = parse_ssl_protocol
    )]
    pub ssl_protocol: u64,

    /// An extra keyfile for clients that ask for this host name (SNI), as HOST=FILE;
    /// repeatable. Other names get --ssl.keyfile.
    #[arg(
        long = "ssl.server-name-indication",
        value_name = "HOST=FILE",
        action = ArgAction::Append,
        value_parser = parse_server_name_indication
    )]
    pub ssl_server_names: Vec<(String, PathBuf)>,

    /// The server's role in a cluster and the cluster's settings.
    #[command(flatten)]
    pub cluster: crate::cluster_options::ClusterArgs,
}

/// `--ssl.protocol`: arangod's numbers for the protocols rustls speaks (5, 6 and 9); the
/// older ones are refused with the reason.
pub fn parse_ssl_protocol(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n @ (5 | 6 | 9)) => Ok(n),
        Ok(n @ 1..=4) => {
            let name =
                ["SSLv2", "SSLv2/3", "SSLv3", "TLS 1.0"][usize::try_from(n - 1).unwrap_or(0)];
            Err(format!(
                "{n} ({name}) is not supported: the minimum is TLS 1.2; use 5 (TLS 1.2), \
                 6 (TLS 1.3) or 9 (TLS 1.2 or 1.3, negotiated)"
            ))
        }
        _ => Err(format!(
            "'{text}' is not a protocol: use 5 (TLS 1.2), 6 (TLS 1.3) or 9 (TLS 1.2 or 1.3, \
             negotiated)"
        )),
    }
}

/// `--ssl.server-name-indication HOST=FILE`: a host name (compared without regard to case)
/// and its keyfile.
pub fn parse_server_name_indication(text: &str) -> Result<(String, PathBuf), String> {
    let Some((host, file)) = text.split_once('=') else {
        return Err(format!("'{text}' is not HOST=FILE"));
    };
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let file = file.trim();
    if host.is_empty() || file.is_empty() || host.len() > 253 {
        return Err(format!("'{text}' is not HOST=FILE"));
    }
    Ok((host, PathBuf::from(file)))
}

/// A static mount point: an absolute path other than `/`, outside the API's own prefixes;
/// a trailing slash is dropped.
pub fn parse_static_prefix(text: &str) -> Result<String, String> {
    let prefix = text.trim().trim_end_matches('/');
    if !prefix.starts_with('/') || prefix.contains(['?', '#', '%', '\\']) {
        return Err(format!("'{text}' is not an absolute path such as /_static"));
    }
    let first = prefix[1..].split('/').next().unwrap_or("");
    if ["_api", "_db", "_admin", "_open"].contains(&first) {
        return Err(format!("'{text}' would hide the API below /{first}"));
    }
    Ok(prefix.to_string())
}

/// Parses the command line, merging the configuration file if one is named. Prints the error
/// and exits with code 2 on any problem (clap's convention for usage errors).
pub fn parse_or_exit() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    match merge_configuration(args) {
        Ok(merged) => Cli::parse_from(merged),
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    }
}

/// Inserts the options of the configuration file (if `-c`/`--configuration` names one) right
/// after the subcommand, so options given on the command line come later and win. Only
/// `quince serve` reads one: the tools' arguments are never looked at here.
pub fn merge_configuration(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let at = 1;
    if args.get(at).and_then(|command| command.to_str()) != Some("serve") {
        return Ok(args);
    }
    let Some(file) = configuration_file(&args) else {
        return Ok(args);
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read configuration file {}: {e}", file.display()))?;
    let from_file = parse_ini(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut merged = args[..=at].to_vec();
    merged.extend(from_file.into_iter().map(OsString::from));
    merged.extend_from_slice(&args[at + 1..]);
    Ok(merged)
}

/// The configuration file named on the command line, if any (the last one wins).
fn configuration_file(args: &[OsString]) -> Option<PathBuf> {
    let mut found = None;
    let mut iter = args.iter().skip(1);
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        if text == "-c" || text == "--configuration" {
            found = iter.next().map(PathBuf::from);
        } else if let Some(path) = text.strip_prefix("--configuration=") {
            found = Some(PathBuf::from(path));
        } else if let Some(path) = text.strip_prefix("-c=") {
            found = Some(PathBuf::from(path));
        }
    }
    found
}

/// Turns arangod's INI text into `--section.key=value` arguments.
pub fn parse_ini(text: &str) -> Result<Vec<String>, String> {
    let mut section = String::new();
    let mut out = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(inner) = line.strip_prefix('[') {
            let Some(name) = inner.strip_suffix(']') else {
                return Err(format!("line {}: unterminated section header", number + 1));
            };
            section = name.trim().to_string();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected 'key = value'", number + 1));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("line {}: empty option name", number + 1));
        }
        let value = unquote(value.trim());
        let name = if section.is_empty() || key.contains('.') {
            key.to_string()
        } else {
            format!("{section}.{key}")
        };
        out.push(format!("--{name}={value}"));
    }
    Ok(out)
}

fn unquote(value: &str) -> &str {
    let quoted = value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"'))
            || (value.starts_with('\'') && value.ends_with('\'')));
    if quoted {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

/// The most secret files `--server.jwt-secret-folder` may hold.
pub const JWT_SECRET_FILES_MAX: usize = 64;

/// The token secrets: the keyfile's, or every file's of the folder sorted by name (the first
/// signs); none when neither is given.
pub fn read_jwt_secrets(
    keyfile: Option<&Path>,
    folder: Option<&Path>,
) -> Result<Vec<Vec<u8>>, String> {
    if let Some(path) = keyfile {
        return Ok(vec![read_jwt_secret(path)?]);
    }
    let Some(dir) = folder else {
        return Ok(Vec::new());
    };
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read JWT secret folder {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| format!("cannot read JWT secret folder {}: {e}", dir.display()))?;
        if entry.file_type().map(|t| t.is_file()).unwrap_or(false) {
            files.push(entry.path());
        }
    }
    files.sort();
    if files.is_empty() || files.len() > JWT_SECRET_FILES_MAX {
        return Err(format!(
            "JWT secret folder {} must hold 1 to {JWT_SECRET_FILES_MAX} secret files",
            dir.display()
        ));
    }
    files.iter().map(|path| read_jwt_secret(path)).collect()
}

/// Reads the JWT secret from a keyfile, without its trailing newline.
pub fn read_jwt_secret(path: &Path) -> Result<Vec<u8>, String> {
    let text = std::fs::read(path)
        .map_err(|e| format!("cannot read JWT secret keyfile {}: {e}", path.display()))?;
    let mut secret = text;
    while secret.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        secret.pop();
    }
    if secret.is_empty() {
        return Err(format!("JWT secret keyfile {} is empty", path.display()));
    }
    Ok(secret)
}

/// A stream transaction's idle timeout in seconds: a positive number of at most a day.
fn parse_idle_timeout(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= 86_400.0 => Ok(seconds),
        _ => Err(format!(
            "'{text}' is not a number of seconds between 0 and 86400"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        let mut full = vec!["quince", "serve"];
        full.extend_from_slice(args);
        Cli::try_parse_from(full).map(|cli| match cli.command {
            Command::Serve(a) => *a,
            other => panic!("not serve: {other:?}"),
        })
    }

    #[test]
    fn defaults_are_arangodbs() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.endpoint, "tcp://127.0.0.1:8529");
        assert_eq!(a.data_dir, PathBuf::from("./quince-data"));
        assert_eq!(a.journal_size, 33_554_432);
        assert!(!a.wait_for_sync);
        assert!(a.authentication);
        assert_eq!(a.queue_size, 4096);
        assert_eq!(a.max_connections, 4096);
        assert_eq!(a.max_body_size, 512 * 1024 * 1024);
        assert_eq!(a.max_json_depth, 64);
        assert_eq!(a.sync_interval_ms, 100);
        assert_eq!(a.threads, None);
        assert_eq!(a.static_dir, None);
        assert_eq!(a.static_prefix, "/_static");
        assert_eq!(a.transaction_idle_timeout, 60.0);
        assert_eq!(a.ttl_frequency_ms, 30_000);
    }

    #[test]
    fn the_ttl_frequency_is_a_positive_number_of_milliseconds() {
        let frequency = |v: &str| parse(&["--ttl.frequency", v]);
        assert_eq!(frequency("250").unwrap().ttl_frequency_ms, 250);
        for bad in ["0", "-1", "soon", "86400001"] {
            assert!(frequency(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn the_idle_timeout_is_a_positive_number_of_seconds_up_to_a_day() {
        let timeout = |v: &str| parse(&["--transaction.streaming-idle-timeout", v]);
        assert_eq!(timeout("0.5").unwrap().transaction_idle_timeout, 0.5);
        assert_eq!(timeout("86400").unwrap().transaction_idle_timeout, 86_400.0);
        for bad in ["0", "-1", "86401", "soon", "NaN", "inf"] {
            assert!(timeout(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn static_prefixes_are_paths_outside_the_api() {
        let a = parse(&[
            "--http.static-dir",
            "/srv/www",
            "--http.static-prefix",
            "/ui/",
        ])
        .unwrap();
        assert_eq!(a.static_dir, Some(PathBuf::from("/srv/www")));
        assert_eq!(a.static_prefix, "/ui");
        for bad in ["ui", "/", "/_api", "/_db/x", "/a%2f"] {
            assert!(parse(&["--http.static-prefix", bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn dotted_options_take_both_forms() {
        let a = parse(&[
            "--server.endpoint",
            "tcp://0.0.0.0:0",
            "--database.directory=/tmp/x",
            "--database.maximal-journal-size",
            "2097152",
            "--server.authentication=off",
            "--database.wait-for-sync",
            "yes",
            "--server.threads=3",
        ])
        .unwrap();
        assert_eq!(a.endpoint, "tcp://0.0.0.0:0");
        assert_eq!(a.data_dir, PathBuf::from("/tmp/x"));
        assert_eq!(a.journal_size, 2_097_152);
        assert!(!a.authentication);
        assert!(a.wait_for_sync);
        assert_eq!(a.threads, Some(3));
    }

    #[test]
    fn booleans_accept_arangodb_spellings() {
        for (text, value) in [("No", false), ("on", true), ("0", false), ("y", true)] {
            let a = parse(&["--server.authentication", text]).unwrap();
            assert_eq!(a.authentication, value, "{text}");
        }
        assert!(parse(&["--server.authentication", "maybe"]).is_err());
        // A bare boolean option means true.
        assert!(parse(&["--database.wait-for-sync"]).unwrap().wait_for_sync);
    }

    #[test]
    fn bounds_and_unknown_options_are_usage_errors() {
        let small = parse(&["--database.maximal-journal-size", "1048575"]).unwrap_err();
        assert_eq!(small.exit_code(), 2);
        let unknown = parse(&["--server.no-such-option", "1"]).unwrap_err();
        assert_eq!(unknown.exit_code(), 2);
        assert!(parse(&["--server.maximal-queue-size", "0"]).is_err());
    }

    #[test]
    fn later_options_override_earlier_ones() {
        let a = parse(&["--http.max-json-depth", "10", "--http.max-json-depth=20"]).unwrap();
        assert_eq!(a.max_json_depth, 20);
    }

    #[test]
    fn ini_sections_become_dotted_options() {
        let text = "# comment\n[server]\nendpoint = tcp://127.0.0.1:9000\n authentication = false\n\n; more\n[database]\ndirectory = \"/data dir\"\nlog.level = debug\n";
        let args = parse_ini(text).unwrap();
        assert_eq!(
            args,
            [
                "--server.endpoint=tcp://127.0.0.1:9000",
                "--server.authentication=false",
                "--database.directory=/data dir",
                "--log.level=debug",
            ]
        );
        assert!(parse_ini("[server\nx=1").is_err());
        assert!(parse_ini("[server]\nnot an option").is_err());
    }

    #[test]
    fn command_line_overrides_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("quince.conf");
        std::fs::write(
            &file,
            "[server]\nendpoint = tcp://127.0.0.1:9000\nthreads = 2\n",
        )
        .unwrap();
        let args: Vec<OsString> = [
            "quince",
            "serve",
            "-c",
            file.to_str().unwrap(),
            "--server.endpoint",
            "tcp://127.0.0.1:9001",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let merged = merge_configuration(args).unwrap();
        let Command::Serve(a) = Cli::try_parse_from(merged).unwrap().command else {
            panic!("serve was named");
        };
        assert_eq!(a.endpoint, "tcp://127.0.0.1:9001");
        assert_eq!(a.threads, Some(2));
    }

    #[test]
    fn tool_arguments_pass_through_untouched() {
        let parsed = |args: &[&str]| {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            let merged = merge_configuration(args).unwrap();
            Cli::try_parse_from(merged).unwrap().command
        };
        let os = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        // A tool's `--help` is the tool's, and `-c` is not the server's configuration file.
        let Command::Bench(tool) = parsed(&["quince", "bench", "--help", "-c", "/nonexistent"])
        else {
            panic!("bench");
        };
        assert_eq!(tool.args, os(&["--help", "-c", "/nonexistent"]));
        let Command::Import(tool) = parsed(&["quince", "import", "--file=x", "--type", "csv"])
        else {
            panic!("import");
        };
        assert_eq!(tool.args, os(&["--file=x", "--type", "csv"]));
        let Command::BenchChart(tool) = parsed(&["quince", "bench-chart"]) else {
            panic!("bench-chart");
        };
        assert!(tool.args.is_empty());
        let Command::Dump(tool) = parsed(&["quince", "dump", "--collection", "c", "--help"]) else {
            panic!("dump");
        };
        assert_eq!(tool.args, os(&["--collection", "c", "--help"]));
        let Command::Restore(tool) = parsed(&["quince", "restore", "--overwrite=false"]) else {
            panic!("restore");
        };
        assert_eq!(tool.args, os(&["--overwrite=false"]));
    }

    #[test]
    fn unknown_options_in_the_file_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bad.conf");
        std::fs::write(&file, "[server]\nbogus = 1\n").unwrap();
        let args: Vec<OsString> = ["quince", "serve", "--configuration", file.to_str().unwrap()]
            .iter()
            .map(OsString::from)
            .collect();
        let merged = merge_configuration(args).unwrap();
        assert_eq!(Cli::try_parse_from(merged).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn jwt_folder_secrets_are_sorted_by_file_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b-old"), "old\n").unwrap();
        std::fs::write(dir.path().join("a-new"), "new").unwrap();
        let secrets = read_jwt_secrets(None, Some(dir.path())).unwrap();
        assert_eq!(secrets, vec![b"new".to_vec(), b"old".to_vec()]);
        assert!(read_jwt_secrets(None, None).unwrap().is_empty());
        let empty = tempfile::tempdir().unwrap();
        assert!(read_jwt_secrets(None, Some(empty.path())).is_err());
        assert!(read_jwt_secrets(None, Some(&dir.path().join("missing"))).is_err());
        assert!(parse(&[
            "--server.jwt-secret-keyfile",
            "k",
            "--server.jwt-secret-folder",
            "d"
        ])
        .is_err());
        let a = parse(&["--server.authentication-system-only", "false"]).unwrap();
        assert!(!a.authentication_system_only);
        assert!(parse(&[]).unwrap().authentication_system_only);
    }

    #[test]
    fn ssl_options_take_arangods_names_and_numbers() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.ssl_protocol, 9);
        assert!(a.ssl_keyfile.is_none() && a.ssl_cafile.is_none());
        assert!(a.ssl_server_names.is_empty());
        let a = parse(&[
            "--ssl.keyfile",
            "/k.pem",
            "--ssl.cafile=/ca.pem",
            "--ssl.protocol",
            "6",
            "--ssl.server-name-indication",
            "A.example.com=/a.pem",
            "--ssl.server-name-indication=b.example.com=/b.pem",
        ])
        .unwrap();
        assert_eq!(a.ssl_keyfile, Some(PathBuf::from("/k.pem")));
        assert_eq!(a.ssl_cafile, Some(PathBuf::from("/ca.pem")));
        assert_eq!(a.ssl_protocol, 6);
        // Repeated, not overridden; host names compare without regard to case.
        assert_eq!(
            a.ssl_server_names,
            vec![
                ("a.example.com".to_string(), PathBuf::from("/a.pem")),
                ("b.example.com".to_string(), PathBuf::from("/b.pem")),
            ]
        );
        for ok in ["5", "6", "9"] {
            assert!(parse(&["--ssl.protocol", ok]).is_ok(), "{ok}");
        }
        for old in ["1", "2", "3", "4"] {
            let message = parse_ssl_protocol(old).unwrap_err();
            assert!(message.contains("minimum is TLS 1.2"), "{message}");
            assert_eq!(parse(&["--ssl.protocol", old]).unwrap_err().exit_code(), 2);
        }
        for bad in ["0", "7", "10", "tls"] {
            assert!(parse(&["--ssl.protocol", bad]).is_err(), "{bad}");
        }
        for bad in ["host", "=file", "host=", ""] {
            assert!(
                parse(&["--ssl.server-name-indication", bad]).is_err(),
                "{bad}"
            );
        }
        let args = parse_ini("[ssl]\nkeyfile = /k.pem\nprotocol = 5\nserver-name-indication = a=/a.pem\nserver-name-indication = b=/b.pem\n").unwrap();
        assert_eq!(
            args,
            [
                "--ssl.keyfile=/k.pem",
                "--ssl.protocol=5",
                "--ssl.server-name-indication=a=/a.pem",
                "--ssl.server-name-indication=b=/b.pem",
            ]
        );
    }

    #[test]
    fn jwt_keyfile_loses_its_trailing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("secret");
        std::fs::write(&file, "secret\n").unwrap();
        assert_eq!(read_jwt_secret(&file).unwrap(), b"secret");
        std::fs::write(&file, "\n").unwrap();
        assert!(read_jwt_secret(&file).is_err());
        assert!(read_jwt_secret(&dir.path().join("missing")).is_err());
    }
}
