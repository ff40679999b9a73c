//! `quince dump`: reads collections over HTTP and writes them in arangodump's format.
//!
//! What it is: [`run`]. For each database (the one `--server.database` names, or with
//! `--all-databases` each one `GET /_api/database/user` lists, in a subdirectory), it writes
//! `dump.json` and `ENCRYPTION`, then `--threads` workers, each with its own connection, take
//! the collections one at a time: the structure from `GET /_api/collection/{name}/properties`
//! and `GET /_api/index`, the documents from one streaming AQL cursor
//! (`FOR d IN @@c RETURN d`).
//!
//! Consistency. A read of a whole collection by the server is not a snapshot (writes made
//! during the read may or may not be seen), so each collection's read is checked: the
//! collection's revision (`GET …/revision`) and the live and dead record counters of its
//! figures (`GET …/figures`), which every applied write changes, are read before and after,
//! and the documents read are counted against `GET …/count` after. When a mark moved or the
//! counts differ, the read is thrown away and made again, up to [`OPTIMISTIC_ATTEMPTS`]
//! times; a collection that changed during every attempt is reported as failed (with exit
//! status 1) and gets no data file, rather than an inconsistent one. The dump never locks a collection: Quince's exclusive
//! stream-transaction lock refuses other writers and can wait on a running transaction's
//! writes until its `lockTimeout`, which a backup tool must not impose. Collections are read
//! one after another (or in parallel), each at its own moment: the dump is consistent per
//! collection, not across collections.
//!
//! What it is not: a server-side snapshot, or a hot backup.
//!
//! Invariants: a data file appears under its name only when its collection was read
//! consistently (see [`crate::files::DataWriter`]); the exit status is 0 only when every
//! collection of every database was dumped; at most `--threads` connections are open.

use std::collections::VecDeque;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Mutex;

use quince_client::{encode_segment as encode, Method};
use serde_json::{json, Map, Value};

use crate::files::DataWriter;
use crate::format;
use crate::options::DumpArgs;
use crate::progress::{Progress, Task, Totals};
use crate::server::{self, Server};

/// Reads of a collection before the dump gives up on it.
pub const OPTIMISTIC_ATTEMPTS: u32 = 5;

/// The most documents a cursor batch asks for, whatever their size.
const BATCH_DOCUMENTS_MAX: u64 = 100_000;

/// Runs `quince dump`; the exit status says whether everything was dumped.
pub fn run(args: DumpArgs) -> ExitCode {
    match execute(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("quince dump: {message}");
            ExitCode::from(1)
        }
    }
}

fn execute(args: &DumpArgs) -> Result<bool, String> {
    if args.all_databases && args.server.database.is_some() {
        return Err("cannot use --server.database and --all-databases at the same time".into());
    }
    let mut server = server::connect(&args.server, args.server.database())?;
    server.check()?;
    let databases = if args.all_databases {
        list_databases(&mut server)?
    } else {
        vec![args.server.database().to_owned()]
    };
    prepare_directory(&args.output_directory, args.overwrite)?;
    let totals = Totals::start();
    let progress = Progress::new(args.progress);
    for database in &databases {
        let mut connection = server.another(database);
        let directory = if args.all_databases {
            let properties = database_properties(&mut connection)?;
            let id = properties.get("id").and_then(Value::as_str).unwrap_or("0");
            let directory = args.output_directory.join(directory_name(database, id));
            prepare_directory(&directory, args.overwrite)?;
            directory
        } else {
            args.output_directory.clone()
        };
        if let Err(message) = dump_database(connection, &directory, args, &totals, &progress) {
            eprintln!("quince dump: database '{database}': {message}");
            totals.fail();
        }
    }
    println!("{}", totals.summary("Dumped"));
    Ok(totals.succeeded())
}

/// The databases the user may read, `_system` first, then by name (as arangodump orders them).
fn list_databases(server: &mut Server) -> Result<Vec<String>, String> {
    let reply = server.json(Method::Get, "/_api/database/user", None)?;
    if !reply.ok() {
        return Err(format!("cannot list the databases: {}", reply.error()));
    }
    let mut names: Vec<String> = reply.body["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    names.sort_by_key(|name| (name != "_system", name.clone()));
    Ok(names)
}

/// A database's subdirectory in an `--all-databases` dump: its name when it is a traditional
/// name (safe on every file system), else its id, as arangodump does.
pub fn directory_name(database: &str, id: &str) -> String {
    let traditional = database == "_system"
        || (database.len() <= 64
            && database.starts_with(|c: char| c.is_ascii_alphabetic())
            && database
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'));
    if traditional {
        database.to_owned()
    } else {
        id.to_owned()
    }
}

/// Creates the output directory, or checks that it is empty unless `overwrite`.
fn prepare_directory(directory: &Path, overwrite: bool) -> Result<(), String> {
    match std::fs::read_dir(directory) {
        Ok(mut entries) => {
            if entries.next().is_some() && !overwrite {
                return Err(format!(
                    "output directory '{}' already exists and is not empty; use --overwrite true to overwrite data in it",
                    directory.display()
                ));
            }
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(directory)
            .map_err(|e| format!("cannot create '{}': {e}", directory.display())),
        Err(e) => Err(format!("cannot read '{}': {e}", directory.display())),
    }
}

fn database_properties(server: &mut Server) -> Result<Value, String> {
    let reply = server.json(Method::Get, "/_api/database/current", None)?;
    if !reply.ok() {
        return Err(format!(
            "cannot read database '{}': {}",
            server.database(),
            reply.error()
        ));
    }
    Ok(reply.body["result"].clone())
}

/// Dumps one database into `directory`; the collections' failures are counted in `totals`.
fn dump_database(
    mut server: Server,
    directory: &Path,
    args: &DumpArgs,
    totals: &Totals,
    progress: &Progress,
) -> Result<(), String> {
    let database = server.database().to_owned();
    let properties = database_properties(&mut server)?;
    let names = select_collections(&mut server, args)?;
    let write = |name: &str, content: &[u8]| {
        std::fs::write(directory.join(name), content)
            .map_err(|e| format!("cannot write '{}': {e}", directory.join(name).display()))
    };
    let dump_json = format::dump_json(&database, "0", properties);
    write(format::DUMP_JSON, dump_json.to_string().as_bytes())?;
    write(format::ENCRYPTION_FILE, format::ENCRYPTION_NONE.as_bytes())?;

    let queue = Mutex::new(names.into_iter().collect::<VecDeque<String>>());
    let threads = usize::try_from(args.threads).expect("bounded by the parser");
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let mut connection = server.another(&database);
            let queue = &queue;
            let database = &database;
            scope.spawn(move || loop {
                let Some(name) = queue.lock().expect("queue lock").pop_front() else {
                    return;
                };
                let task = progress.task(&format!("{database}/{name}"));
                match dump_collection(&mut connection, &name, directory, args, &task) {
                    Ok((documents, bytes)) => totals.add_collection(documents, bytes),
                    Err(message) => {
                        eprintln!("quince dump: collection '{database}/{name}': {message}");
                        totals.fail();
                    }
                }
            });
        }
    });
    Ok(())
}

/// The collections to dump: all (system ones with `--include-system-collections`, or when
/// named), or those `--collection` names; a named one that does not exist is a warning, none
/// found an error.
fn select_collections(server: &mut Server, args: &DumpArgs) -> Result<Vec<String>, String> {
    let reply = server.json(Method::Get, "/_api/collection?excludeSystem=false", None)?;
    if !reply.ok() {
        return Err(format!("cannot list the collections: {}", reply.error()));
    }
    let existing: Vec<String> = reply.body["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["name"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    if args.collections.is_empty() {
        let mut names: Vec<String> = existing
            .into_iter()
            .filter(|n| args.include_system_collections || !n.starts_with('_'))
            .collect();
        names.sort();
        return Ok(names);
    }
    let mut names = Vec::new();
    for wanted in &args.collections {
        if existing.contains(wanted) {
            if !names.contains(wanted) {
                names.push(wanted.clone());
            }
        } else {
            eprintln!(
                "quince dump: requested collection '{wanted}' not found in database '{}'",
                server.database()
            );
        }
    }
    if names.is_empty() {
        return Err("none of the requested collections were found in the database".into());
    }
    Ok(names)
}

/// Dumps one collection: its structure file, then its data file; the documents and bytes.
fn dump_collection(
    server: &mut Server,
    name: &str,
    directory: &Path,
    args: &DumpArgs,
    task: &Task,
) -> Result<(u64, u64), String> {
    let encoded = encode(name);
    let reply = server.json(
        Method::Get,
        &format!("/_api/collection/{encoded}/properties"),
        None,
    )?;
    if !reply.ok() {
        return Err(format!("cannot read the properties: {}", reply.error()));
    }
    let mut parameters: Map<String, Value> = reply.body.as_object().cloned().unwrap_or_default();
    for reply_only in ["error", "code"] {
        parameters.remove(reply_only);
    }
    let reply = server.json(
        Method::Get,
        &format!("/_api/index?collection={encoded}"),
        None,
    )?;
    if !reply.ok() {
        return Err(format!("cannot read the indexes: {}", reply.error()));
    }
    let indexes: Vec<Value> = reply.body["indexes"]
        .as_array()
        .map(|a| a.iter().filter_map(format::index_for_dump).collect())
        .unwrap_or_default();
    let data = directory.join(format::data_file(name, args.compress_output));
    let batch = batch_documents(server, name, args.batch_size)?;
    let written = read_consistently(server, name, &data, args.compress_output, batch, task)?;
    // Written last, so that a collection that failed leaves no structure without its data.
    let structure = format::structure(Value::Object(parameters), indexes);
    let path = directory.join(format::structure_file(name));
    std::fs::write(&path, structure.to_string())
        .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    Ok(written)
}

/// How many documents a cursor batch asks for: `--batch-size` over the collection's average
/// document size.
fn batch_documents(server: &mut Server, name: &str, batch_size: u64) -> Result<u64, String> {
    let reply = server.json(
        Method::Get,
        &format!("/_api/collection/{}/figures", encode(name)),
        None,
    )?;
    let size = reply.body["figures"]["documentsSize"].as_u64().unwrap_or(0);
    let count = reply.body["count"]
        .as_u64()
        .or_else(|| reply.body["figures"]["alive"]["count"].as_u64())
        .unwrap_or(0);
    let average = size.checked_div(count).unwrap_or(0).max(64);
    Ok((batch_size / average).clamp(1, BATCH_DOCUMENTS_MAX))
}

/// Reads the collection into `path` so that the file holds one state of the collection (see
/// the module's doc); the documents and bytes written.
fn read_consistently(
    server: &mut Server,
    name: &str,
    path: &Path,
    gzip: bool,
    batch: u64,
    task: &Task,
) -> Result<(u64, u64), String> {
    for _ in 0..OPTIMISTIC_ATTEMPTS {
        let before = marks(server, name)?;
        let writer = read_all(server, name, path, gzip, batch, task)?;
        let count = collection_value(server, name, "count")?;
        let after = marks(server, name)?;
        if before == after && count.as_u64() == Some(writer.lines) {
            return finish(writer);
        }
        writer.discard();
    }
    Err(format!(
        "the collection changed during each of {OPTIMISTIC_ATTEMPTS} reads, so no consistent copy of it was written; dump it again when writes to it pause (a hot backup is consistent under writes)"
    ))
}

fn finish(writer: DataWriter) -> Result<(u64, u64), String> {
    let (lines, bytes) = (writer.lines, writer.bytes);
    writer
        .finish()
        .map_err(|e| format!("cannot write the data file: {e}"))?;
    Ok((lines, bytes))
}

/// What changes when the collection does: its revision (the highest `_rev` written, raised by
/// every plain write and truncate) and the live and dead record counters of its figures
/// (changed by every applied write, a transaction's commit included, whose documents may
/// carry revisions lower than the collection's); `Null` where a server reports no such
/// counters (ArangoDB's RocksDB engine), leaving the revision.
fn marks(server: &mut Server, name: &str) -> Result<Value, String> {
    let revision = collection_value(server, name, "revision")?;
    let figures = collection_value(server, name, "figures")?;
    Ok(json!([revision, figures["alive"], figures["dead"]]))
}

/// `GET /_api/collection/{name}/{what}`'s attribute `what` (`count`, `revision`, `figures`).
fn collection_value(server: &mut Server, name: &str, what: &str) -> Result<Value, String> {
    let path = format!("/_api/collection/{}/{what}", encode(name));
    let reply = server.json(Method::Get, &path, None)?;
    if !reply.ok() {
        return Err(format!("cannot read the {what}: {}", reply.error()));
    }
    Ok(reply.body[what].clone())
}

/// Reads every document with one streaming cursor into a new data file (not yet finished).
fn read_all(
    server: &mut Server,
    name: &str,
    path: &Path,
    gzip: bool,
    batch: u64,
    task: &Task,
) -> Result<DataWriter, String> {
    let mut writer = DataWriter::create(path, gzip)
        .map_err(|e| format!("cannot create '{}': {e}", path.display()))?;
    match read_into(server, name, &mut writer, batch, task) {
        Ok(()) => Ok(writer),
        Err(message) => {
            writer.discard();
            Err(message)
        }
    }
}

fn read_into(
    server: &mut Server,
    name: &str,
    writer: &mut DataWriter,
    batch: u64,
    task: &Task,
) -> Result<(), String> {
    let query = json!({
        "query": "FOR d IN @@c RETURN d",
        "bindVars": {"@c": name},
        "batchSize": batch,
        "options": {"stream": true},
    });
    let body = query.to_string();
    let mut reply = server.send(
        Method::Post,
        "/_api/cursor",
        "application/json",
        Some(body.as_bytes()),
        None,
    )?;
    let mut line = Vec::new();
    loop {
        if !reply.ok() {
            return Err(format!("reading the documents failed: {}", reply.error()));
        }
        for document in reply.body["result"].as_array().into_iter().flatten() {
            line.clear();
            serde_json::to_writer(&mut line, document).expect("a JSON value serializes");
            writer
                .write_line(&line)
                .map_err(|e| format!("cannot write the data file: {e}"))?;
        }
        task.update(writer.lines, writer.bytes);
        if reply.body["hasMore"].as_bool() != Some(true) {
            return Ok(());
        }
        let Some(id) = reply.body["id"].as_str().map(String::from) else {
            return Err("the server's cursor has more documents but no id".into());
        };
        reply = server.json(Method::Post, &format!("/_api/cursor/{}", encode(&id)), None)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traditional_database_names_name_their_directory() {
        assert_eq!(directory_name("_system", "1"), "_system");
        assert_eq!(directory_name("shop-2", "7"), "shop-2");
        assert_eq!(directory_name("Ünïcode", "7"), "7");
        assert_eq!(directory_name("a b", "9"), "9");
        assert_eq!(directory_name("1abc", "9"), "9");
    }

    #[test]
    fn a_non_empty_directory_needs_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        prepare_directory(&out, false).unwrap();
        assert!(out.is_dir());
        prepare_directory(&out, false).unwrap();
        std::fs::write(out.join("x"), b"x").unwrap();
        let error = prepare_directory(&out, false).unwrap_err();
        assert!(error.contains("--overwrite"), "{error}");
        prepare_directory(&out, true).unwrap();
    }
}
