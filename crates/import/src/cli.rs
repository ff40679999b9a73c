//! `quince import`: options as arangoimport spells them, and the run of one import.
//!
//! What it is: [`ImportArgs`] and [`run`]. One reader (the calling thread) cuts the input into
//! batches of about `--batch-size` bytes (`batch`); `--threads` senders, each with its own
//! keep-alive connection, post them to `/_api/import` with `details=true` and add up the
//! replies (`report`). Progress (`progress`) counts the documents of the batches the server
//! answered: a bar on a terminal, else a line on stderr at most every `--progress-interval`
//! seconds. At the end the first failed records (the [`FAILURES_SHOWN`] lowest input lines,
//! each with the server's message, then how many more failed) are printed to stderr, and then
//! the summary line (`created: N, errors: N, updated: N, ignored: N`) to stdout. The exit
//! status is 0 only when no document failed and nothing else went wrong.
//!
//! `--complete true` sends `complete=true` with every request: each batch is all or nothing on
//! the server, and the first batch that fails stops the import (earlier batches stay
//! imported; a batch is the unit of atomicity, as with arangoimport's requests).
//!
//! What it is not: a server client library; it knows only the import, collection create,
//! lookup and truncate calls.
//!
//! Invariants: at most `2 × threads` batches exist at once (queued or in flight), plus one
//! request's bytes kept by each sender's connection, so memory is bounded by the batch size,
//! not the input; every record is counted once; a failed request is reported, never resent.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{ArgAction, Args, ValueEnum};
use quince_client::{
    encode_segment as encode, parse_bool, Connection, Endpoint, Method, RequestHead, Target,
    Timeouts, TransportError,
};
use serde_json::Value;

use crate::batch::{self, Batch, Layout};
use crate::csv::Dialect;
use crate::input;
use crate::progress::Progress;
use crate::report::{map_details, Failure, FirstFailures, Totals};

/// Failed records kept for printing; later ones are only counted.
/// The failed records listed at the end (those with the lowest input lines); the rest are
/// counted.
pub const FAILURES_SHOWN: usize = 10;

/// How long connecting and each read or write may take: arangoimport's defaults
/// (`--server.connection-timeout 5`, `--server.request-timeout 1200`).
const TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    request: Duration::from_secs(1200),
};

/// The input formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputType {
    /// One JSON array of objects, or JSON Lines (decided by the first character).
    Json,
    /// JSON Lines: one object per line.
    Jsonl,
    /// Comma-separated values with a header line.
    Csv,
    /// Tab-separated values with a header line.
    Tsv,
}

/// The kinds of collection `--create-collection` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CollectionKind {
    Document,
    Edge,
}

/// What to do with a document whose `_key` exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnDuplicate {
    Error,
    Update,
    Replace,
    Ignore,
}

/// The options of `quince import`.
#[derive(Args, Debug, Clone)]
pub struct ImportArgs {
    /// The input file (`-` for stdin); gzip-compressed input is recognised and decompressed.
    #[arg(long = "file", value_name = "PATH")]
    pub file: PathBuf,

    /// The input format.
    #[arg(long = "type", value_enum, default_value = "json")]
    pub input_type: InputType,

    /// The collection to import into.
    #[arg(long = "collection", value_name = "NAME")]
    pub collection: String,

    /// Create the collection when it does not exist.
    #[arg(long = "create-collection", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub create_collection: bool,

    /// The type of a collection created by `--create-collection`.
    #[arg(
        long = "create-collection-type",
        value_enum,
        default_value = "document"
    )]
    pub create_collection_type: CollectionKind,

    /// The size of one request body, in bytes.
    #[arg(long = "batch-size", value_name = "BYTES", default_value_t = 8 << 20,
          value_parser = clap::value_parser!(u64).range(1..=(1u64 << 32)))]
    pub batch_size: u64,

    /// Requests sent in parallel.
    #[arg(long = "threads", value_name = "N", default_value_t = 2,
          value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,

    /// What to do with a document whose `_key` exists.
    #[arg(long = "on-duplicate", value_enum, default_value = "error")]
    pub on_duplicate: OnDuplicate,

    /// A collection name put in front of `_from` values that name none.
    #[arg(long = "from-collection-prefix", value_name = "NAME")]
    pub from_prefix: Option<String>,

    /// A collection name put in front of `_to` values that name none.
    #[arg(long = "to-collection-prefix", value_name = "NAME")]
    pub to_prefix: Option<String>,

    /// Put the prefixes in front of `_from`/`_to` values even when they name a collection.
    #[arg(long = "overwrite-collection-prefix", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub overwrite_collection_prefix: bool,

    /// Remove every document of the collection before importing.
    #[arg(long = "overwrite", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub overwrite: bool,

    /// Each request all or nothing; the first failed request stops the import.
    #[arg(long = "complete", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub complete: bool,

    /// CSV/TSV rows may have fewer or more values than the header has names.
    #[arg(long = "ignore-missing", value_name = "BOOL", default_value = "false",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub ignore_missing: bool,

    /// The CSV field separator (one character).
    #[arg(long = "separator", value_name = "CHAR", default_value = ",")]
    pub separator: String,

    /// Show progress: a bar on a terminal, else lines on stderr.
    #[arg(long = "progress", value_name = "BOOL", default_value = "true",
          value_parser = parse_bool, action = ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true")]
    pub progress: bool,

    /// Off a terminal: the least time between two progress lines, in seconds (0: a line for
    /// every answered batch).
    #[arg(long = "progress-interval", value_name = "SECONDS", default_value = "1",
          value_parser = parse_interval)]
    pub progress_interval: Duration,

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

    /// The database.
    #[arg(
        long = "server.database",
        value_name = "NAME",
        default_value = "_system"
    )]
    pub database: String,

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

/// A connection to the server and the head of every request sent on it.
struct Client<'a> {
    /// The connection, opened on the first request.
    connection: Connection,
    /// The database prefix, `Host` and credentials every request carries.
    head: &'a RequestHead,
}

impl Client<'_> {
    /// Sends one request to `path` (relative to the database); returns the reply's status and
    /// body (import replies are small: counts, and details of failed records only).
    fn send(
        &mut self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<&[u8]>,
    ) -> Result<(u16, Vec<u8>), TransportError> {
        let reply = self
            .connection
            .send(self.head, method, path, content_type, body)?;
        Ok((reply.status, reply.body(self.connection.buffer()).to_vec()))
    }
}

/// What the senders share.
struct Shared {
    totals: Totals,
    /// The failed records with the lowest lines, and how many more failed.
    failures: FirstFailures,
    /// Why the import stopped early, if it did.
    fatal: Option<String>,
}

/// `quince import`'s command line.
#[derive(clap::Parser, Debug)]
#[command(
    name = "quince import",
    about = "Imports JSON, JSON Lines, CSV or TSV into a collection of a Quince (or ArangoDB) server"
)]
struct ImportCommand {
    #[command(flatten)]
    args: ImportArgs,
}

/// The entry point of `quince import`: `args` are the arguments after `import`.
pub fn import_main(args: &[std::ffi::OsString]) -> ExitCode {
    use clap::Parser;
    let command =
        std::iter::once(std::ffi::OsString::from("quince import")).chain(args.iter().cloned());
    run(ImportCommand::parse_from(command).args)
}

/// Runs one import; the exit status says whether every document went in.
pub fn run(args: ImportArgs) -> ExitCode {
    match execute(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("quince import: {message}");
            ExitCode::from(1)
        }
    }
}

/// Imports; Ok(true) when no document failed.
fn execute(args: &ImportArgs) -> Result<bool, String> {
    let endpoint = Endpoint::parse(&args.endpoint)?;
    // Resolved, and for ssl:// its TLS configuration built, once for every connection.
    let target = Target::resolve(&endpoint, args.ssl_cafile.as_deref())?;
    let mut head = RequestHead::new(&args.database, &endpoint.host_port, true);
    if args.authentication {
        let password = quince_client::password(args.password.clone()).unwrap_or_default();
        head = head.with_basic_auth(&args.username, &password);
    }
    let mut setup = Client {
        connection: Connection::to(target.clone(), TIMEOUTS),
        head: &head,
    };
    prepare_collection(&mut setup, args)?;
    let import_target = |layout: Layout| import_target(args, layout);

    let opened =
        input::open(&args.file).map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let progress = progress(args, opened.size);
    let threads = usize::try_from(args.threads).expect("bounded by the parser");
    let batch_size = usize::try_from(args.batch_size).expect("bounded by the parser");
    let shared = Arc::new(Mutex::new(Shared {
        totals: Totals::default(),
        failures: FirstFailures::new(FAILURES_SHOWN),
        fatal: None,
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = sync_channel::<Batch>(threads);
    let receiver = Arc::new(Mutex::new(receiver));
    let started = Instant::now();

    let read_result = std::thread::scope(|scope| {
        for _ in 0..threads {
            let receiver = Arc::clone(&receiver);
            let shared = Arc::clone(&shared);
            let stop = Arc::clone(&stop);
            let client = Client {
                connection: Connection::to(target.clone(), TIMEOUTS),
                head: &head,
            };
            let import_target = &import_target;
            let complete = args.complete;
            let progress = &progress;
            scope.spawn(move || {
                send_batches(
                    client,
                    &receiver,
                    import_target,
                    complete,
                    &shared,
                    &stop,
                    progress,
                )
            });
        }
        let counter = Arc::clone(&opened.progress);
        let mut sink = |batch: Batch| -> bool {
            if stop.load(Ordering::Acquire) {
                return false;
            }
            progress.read(counter.load(Ordering::Relaxed), opened.size);
            sender.send(batch).is_ok()
        };
        let result = read_input(opened.reader, args, batch_size, &mut sink);
        // Closing the channel ends the senders once they have sent what is queued.
        drop(sender);
        result
    });
    progress.finish();
    let shared = Arc::try_unwrap(shared)
        .ok()
        .expect("the senders are done")
        .into_inner()
        .expect("no sender panicked holding the lock");
    print_failures(&shared);
    let totals = shared.totals;
    println!("{}", totals.summary());
    eprintln!(
        "quince import: {} documents acknowledged in {:.2} s",
        progress.count(),
        started.elapsed().as_secs_f64()
    );
    if let Some(fatal) = shared.fatal {
        return Err(fatal);
    }
    read_result.map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    Ok(totals.errors == 0)
}

/// Creates, checks and truncates the collection as the options ask.
fn prepare_collection(client: &mut Client<'_>, args: &ImportArgs) -> Result<(), String> {
    let collection = encode(&args.collection);
    let io = |e: TransportError| format!("cannot reach the server at {}: {e}", args.endpoint);
    let json = "application/json";
    if args.create_collection {
        let kind = match args.create_collection_type {
            CollectionKind::Document => 2,
            CollectionKind::Edge => 3,
        };
        let body = serde_json::json!({"name": args.collection, "type": kind}).to_string();
        let path = "/_api/collection";
        let (status, body) = client
            .send(Method::Post, path, json, Some(body.as_bytes()))
            .map_err(io)?;
        // 409 is "duplicate name": the collection is there already, which is what we want.
        if !matches!(status, 200 | 201 | 409) {
            return Err(server_error("cannot create the collection", &body));
        }
    }
    let path = format!("/_api/collection/{collection}");
    let (status, body) = client.send(Method::Get, &path, json, None).map_err(io)?;
    match status {
        200 => {}
        404 => {
            return Err(format!(
                "collection '{}' not found (use --create-collection true to create it)",
                args.collection
            ))
        }
        _ => return Err(server_error("cannot look up the collection", &body)),
    }
    if args.overwrite {
        let path = format!("/_api/collection/{collection}/truncate");
        let (status, body) = client.send(Method::Put, &path, json, None).map_err(io)?;
        if status != 200 {
            return Err(server_error("cannot truncate the collection", &body));
        }
    }
    Ok(())
}

/// The import request's path (relative to the database) for a batch of `layout`.
fn import_target(args: &ImportArgs, layout: Layout) -> String {
    let on_duplicate = match args.on_duplicate {
        OnDuplicate::Error => "error",
        OnDuplicate::Update => "update",
        OnDuplicate::Replace => "replace",
        OnDuplicate::Ignore => "ignore",
    };
    let mut target = format!(
        "/_api/import?collection={}&type={}&details=true&onDuplicate={on_duplicate}",
        encode(&args.collection),
        layout.type_param()
    );
    for (name, value) in [
        ("fromPrefix", &args.from_prefix),
        ("toPrefix", &args.to_prefix),
    ] {
        if let Some(prefix) = value {
            target.push_str(&format!("&{name}={}", encode(prefix)));
        }
    }
    for (name, on) in [
        ("complete", args.complete),
        (
            "overwriteCollectionPrefix",
            args.overwrite_collection_prefix,
        ),
        ("ignoreMissing", args.ignore_missing),
    ] {
        if on {
            target.push_str(&format!("&{name}=true"));
        }
    }
    target
}

/// Reads the whole input into batches.
fn read_input(
    reader: Box<dyn std::io::BufRead + Send>,
    args: &ImportArgs,
    batch_size: usize,
    sink: &mut batch::Sink<'_>,
) -> std::io::Result<()> {
    match args.input_type {
        InputType::Jsonl => batch::json_lines(reader, batch_size, sink),
        InputType::Json => {
            let (first, reader) = input::sniff(reader)?;
            if first == Some(b'[') {
                batch::json_array(reader, batch_size, sink)
            } else {
                batch::json_lines(reader, batch_size, sink)
            }
        }
        InputType::Csv => {
            let separator = match args.separator.as_bytes() {
                [b] => *b,
                _ => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        "--separator must be one character",
                    ))
                }
            };
            batch::delimited(reader, Dialect::Csv(separator), batch_size, sink)
        }
        InputType::Tsv => batch::delimited(reader, Dialect::Tsv, batch_size, sink),
    }
}

/// One sender: posts batches until there are none, or the import stops.
fn send_batches(
    mut client: Client<'_>,
    receiver: &Mutex<Receiver<Batch>>,
    import_target: &(dyn Fn(Layout) -> String + Sync),
    complete: bool,
    shared: &Mutex<Shared>,
    stop: &AtomicBool,
    progress: &Progress,
) {
    loop {
        let next = receiver.lock().expect("receiver lock").recv();
        let Ok(batch) = next else {
            return;
        };
        if stop.load(Ordering::Acquire) {
            continue;
        }
        let content_type = match batch.layout {
            Layout::Array => "application/json",
            _ => "application/octet-stream",
        };
        let target = import_target(batch.layout);
        let reply = client.send(Method::Post, &target, content_type, Some(&batch.body));
        if reply.is_ok() {
            progress.acknowledged(batch.lines.len() as u64);
        }
        let mut state = shared.lock().expect("shared lock");
        match reply {
            Err(e) => {
                state.fatal.get_or_insert(format!("request failed: {e}"));
                stop.store(true, Ordering::Release);
            }
            Ok((201, body)) => {
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                state.totals.add_reply(&body);
                let details: Vec<String> = body
                    .get("details")
                    .and_then(Value::as_array)
                    .map(|d| {
                        d.iter()
                            .filter_map(|s| s.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                for failure in map_details(&details, &batch.lines) {
                    keep_failure(&mut state, failure);
                }
            }
            Ok((400 | 409, body)) if complete => {
                // The whole batch was refused (and rolled back); its message names the record.
                let message = error_message(&body);
                let mut failures = map_details(&[message], &batch.lines);
                let mut failure = failures.pop().expect("one detail, one failure");
                if failure.line.is_none() {
                    failure.line = batch.lines.first().copied();
                }
                failure.message = format!(
                    "{} (the batch of {} documents from line {} was not imported)",
                    failure.message,
                    batch.lines.len(),
                    batch.lines.first().copied().unwrap_or(0)
                );
                keep_failure(&mut state, failure);
                state.totals.errors += batch.lines.len() as u64;
                stop.store(true, Ordering::Release);
            }
            Ok((_, body)) => {
                state
                    .fatal
                    .get_or_insert(server_error("the import request failed", &body));
                stop.store(true, Ordering::Release);
            }
        }
    }
}

fn keep_failure(state: &mut Shared, failure: Failure) {
    state.failures.add(failure);
}

/// The `errorMessage` of an error reply (or its raw text).
fn error_message(body: &[u8]) -> String {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| {
            v.get("errorMessage")
                .and_then(Value::as_str)
                .map(String::from)
        })
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned())
}

fn server_error(what: &str, body: &[u8]) -> String {
    format!("{what}: {}", error_message(body))
}

/// Prints the failed records, by input line.
fn print_failures(shared: &Shared) {
    for line in shared.failures.lines() {
        eprintln!("{line}");
    }
}

/// Where progress goes: nowhere, a bar on a terminal, else lines on stderr.
fn progress(args: &ImportArgs, size: Option<u64>) -> Progress {
    if !args.progress {
        Progress::hidden()
    } else if std::io::stderr().is_terminal() {
        Progress::bar(size)
    } else {
        Progress::lines(Box::new(std::io::stderr()), args.progress_interval)
    }
}

/// `--progress-interval`: seconds, at least 0, at most a day.
fn parse_interval(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("'{text}' is not between 0 and 86400 seconds"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ImportArgs,
    }

    #[test]
    fn options_take_arangoimport_spellings() {
        let cli = Cli::try_parse_from([
            "x",
            "--file",
            "in.csv",
            "--type",
            "csv",
            "--collection",
            "c",
            "--create-collection",
            "true",
            "--create-collection-type=edge",
            "--on-duplicate",
            "update",
            "--server.endpoint",
            "http://h:1",
        ])
        .unwrap();
        let a = cli.args;
        assert_eq!(a.input_type, InputType::Csv);
        assert!(a.create_collection);
        assert_eq!(a.create_collection_type, CollectionKind::Edge);
        assert_eq!(a.batch_size, 8 << 20);
        assert_eq!(a.threads, 2);
        assert_eq!(a.on_duplicate, OnDuplicate::Update);
        assert_eq!(
            import_target(&a, Layout::HeaderLine),
            "/_api/import?collection=c&type=&details=true&onDuplicate=update"
        );
        assert!(
            Cli::try_parse_from(["x", "--file", "f", "--collection", "c", "--type", "xml"])
                .is_err()
        );
    }

    /// A TLS server (certificate for 127.0.0.1 from a CA made here) that logs each request
    /// line and answers like Quince: the collection exists, an import creates one document
    /// per line of its body.
    fn tls_server(dir: &std::path::Path) -> (String, Arc<Mutex<Vec<String>>>) {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        use std::io::{Read, Write};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into());
        let config = Arc::new(
            rustls::ServerConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(vec![cert.der().clone()], key)
                .unwrap(),
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&log);
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                let Ok(socket) = socket else { return };
                let (config, log) = (Arc::clone(&config), Arc::clone(&log));
                std::thread::spawn(move || {
                    let session = rustls::ServerConnection::new(config).unwrap();
                    let mut tls = rustls::StreamOwned::new(session, socket);
                    let mut buffer = Vec::new();
                    let mut chunk = [0u8; 16384];
                    loop {
                        let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") else {
                            match tls.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        };
                        let head = String::from_utf8_lossy(&buffer[..end]).to_string();
                        let length: usize = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length: ")
                                    .map(str::to_string)
                            })
                            .map_or(0, |v| v.trim().parse().unwrap());
                        if buffer.len() < end + 4 + length {
                            match tls.read(&mut chunk) {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                            continue;
                        }
                        let body: Vec<u8> =
                            buffer.drain(..end + 4 + length).skip(end + 4).collect();
                        let line = head.lines().next().unwrap_or_default().to_string();
                        let import = line.starts_with("POST /_db/_system/_api/import");
                        let reply = if import {
                            let created = body
                                .split(|b| *b == b'\n')
                                .filter(|l| !l.is_empty())
                                .count();
                            format!("{{\"error\":false,\"created\":{created},\"errors\":0,\"empty\":0,\"updated\":0,\"ignored\":0,\"details\":[]}}")
                        } else {
                            "{\"error\":false,\"code\":200}".to_string()
                        };
                        log.lock().unwrap().push(line);
                        let reply = format!(
                            "HTTP/1.1 {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{reply}",
                            if import { "201 Created" } else { "200 OK" },
                            reply.len()
                        );
                        if tls
                            .write_all(reply.as_bytes())
                            .and_then(|()| tls.flush())
                            .is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        (format!("ssl://127.0.0.1:{port}"), seen)
    }

    #[test]
    fn imports_over_tls_trusting_the_ca_file() {
        let dir = tempfile::tempdir().unwrap();
        let (endpoint, log) = tls_server(dir.path());
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, "{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n").unwrap();
        let cafile = dir.path().join("ca.pem");
        let cli = Cli::try_parse_from([
            "x",
            "--file",
            input.to_str().unwrap(),
            "--type",
            "jsonl",
            "--collection",
            "c",
            "--progress",
            "false",
            "--server.endpoint",
            &endpoint,
            "--ssl.cafile",
            cafile.to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(execute(&cli.args), Ok(true));
        let log = log.lock().unwrap();
        assert!(
            log.iter()
                .any(|l| l.starts_with("GET /_db/_system/_api/collection/c ")),
            "{log:?}"
        );
        assert!(
            log.iter()
                .any(|l| l.starts_with("POST /_db/_system/_api/import?")),
            "{log:?}"
        );
    }

    #[test]
    fn an_untrusted_tls_server_is_refused_before_any_request() {
        let dir = tempfile::tempdir().unwrap();
        let (endpoint, log) = tls_server(dir.path());
        let input = dir.path().join("in.jsonl");
        std::fs::write(&input, "{\"a\":1}\n").unwrap();
        // Trust another CA than the one that signed the server's certificate.
        let other = tempfile::tempdir().unwrap();
        let _ = tls_server(other.path());
        let cafile = other.path().join("ca.pem");
        let cli = Cli::try_parse_from([
            "x",
            "--file",
            input.to_str().unwrap(),
            "--collection",
            "c",
            "--server.endpoint",
            &endpoint,
            "--ssl.cafile",
            cafile.to_str().unwrap(),
        ])
        .unwrap();
        let error = execute(&cli.args).unwrap_err();
        assert!(error.contains("TLS: "), "{error}");
        assert!(log.lock().unwrap().is_empty());
    }
}
