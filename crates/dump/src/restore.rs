//! `quince restore`: reads a dump in arangodump's format and loads it over HTTP.
//!
//! What it is: [`run`]. For the database `--server.database` names (or, with
//! `--all-databases`, for each subdirectory holding a `dump.json`, into the database that
//! file names) it checks the dump (`dump.json` present, `ENCRYPTION` absent or `none`),
//! creates the database when asked (`POST /_api/database`), then `--threads` workers take the
//! collections one at a time:
//! 1. with `--create-collection` (default), the collection is created from its structure
//!    file (`POST /_api/collection`); an existing one is dropped first with `--overwrite`
//!    (default) and is an error without it; a system collection that exists is kept;
//! 2. with `--import-data` (default), the data files are read in order and sent to
//!    `POST /_api/import?type=documents&onDuplicate=replace` in requests of about
//!    `--batch-size` bytes (documents keep their `_key`, and edges their `_from` and `_to`;
//!    the server gives each a new `_rev`); removals of envelope dumps are sent to
//!    `DELETE /_api/document/{collection}` in order with the documents around them;
//! 3. the indexes of the structure file are created (`POST /_api/index`).
//!
//! What it is not: a restore of views (`*.view.json` files are reported and skipped: Quince has
//! no views), of encrypted dumps, or of `_rev` values.
//!
//! Invariants: the documents of one collection are applied in file order; every failure is
//! printed with its collection and makes the exit status 1; at most one batch per worker is
//! held in memory.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use quince_client::{encode_segment as encode, Method};
use serde_json::{json, Map, Value};

use crate::files::LineReader;
use crate::format::{self, Entry};
use crate::options::RestoreArgs;
use crate::progress::{Progress, Task, Totals};
use crate::server::{self, Server};

/// Failed documents printed per collection; later ones are only counted.
const FAILURES_SHOWN_MAX: usize = 20;

/// Runs `quince restore`; the exit status says whether everything was restored.
pub fn run(args: RestoreArgs) -> ExitCode {
    match execute(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("quince restore: {message}");
            ExitCode::from(1)
        }
    }
}

/// One collection of a dump.
struct Collection {
    name: String,
    parameters: Map<String, Value>,
    indexes: Vec<Value>,
    /// The data files, in the order they are applied.
    data: Vec<PathBuf>,
}

fn execute(args: &RestoreArgs) -> Result<bool, String> {
    if args.all_databases && args.server.database.is_some() {
        return Err("cannot use --server.database and --all-databases at the same time".into());
    }
    let input = &args.input_directory;
    if !input.is_dir() {
        return Err(format!(
            "input directory '{}' does not exist",
            input.display()
        ));
    }
    // The probe goes to a database that exists: the target, unless it may still be created.
    let probed = if args.all_databases || args.create_database {
        "_system"
    } else {
        args.server.database()
    };
    let mut server = server::connect(&args.server, probed)?;
    server.check()?;
    let plan = if args.all_databases {
        databases_of(input)?
    } else {
        vec![(input.clone(), args.server.database().to_owned())]
    };
    let totals = Totals::start();
    let progress = Progress::new(args.progress);
    for (directory, database) in &plan {
        if let Err(message) =
            restore_database(&server, directory, database, args, &totals, &progress)
        {
            eprintln!("quince restore: database '{database}': {message}");
            totals.fail();
        }
    }
    println!("{}", totals.summary("Restored"));
    Ok(totals.succeeded())
}

/// The subdirectories of an `--all-databases` dump and the database each one's `dump.json`
/// names, `_system` first.
fn databases_of(input: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let mut plan = Vec::new();
    let entries =
        std::fs::read_dir(input).map_err(|e| format!("cannot read '{}': {e}", input.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot read '{}': {e}", input.display()))?
            .path();
        if !path.join(format::DUMP_JSON).is_file() {
            continue;
        }
        let dump_json = read_json(&path.join(format::DUMP_JSON))?;
        let Some(database) = dump_json["database"].as_str() else {
            return Err(format!(
                "'{}' names no database",
                path.join(format::DUMP_JSON).display()
            ));
        };
        plan.push((path, database.to_owned()));
    }
    if plan.is_empty() {
        return Err(format!(
            "input directory '{}' holds no database dumps (subdirectories with a dump.json)",
            input.display()
        ));
    }
    plan.sort_by_key(|(_, name)| (name != "_system", name.clone()));
    Ok(plan)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("'{}' is not JSON: {e}", path.display()))
}

fn restore_database(
    server: &Server,
    directory: &Path,
    database: &str,
    args: &RestoreArgs,
    totals: &Totals,
    progress: &Progress,
) -> Result<(), String> {
    let dump_json_path = directory.join(format::DUMP_JSON);
    if !dump_json_path.is_file() {
        return Err(format!(
            "'{}' has no {}: not a dump directory",
            directory.display(),
            format::DUMP_JSON
        ));
    }
    let envelope = format::uses_envelope(&read_json(&dump_json_path)?);
    check_encryption(directory)?;
    ensure_database(server, database, args.create_database)?;
    let collections = read_collections(directory, args)?;

    let queue = Mutex::new(collections.into_iter().collect::<VecDeque<Collection>>());
    let threads = usize::try_from(args.threads).expect("bounded by the parser");
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let mut connection = server.another(database);
            let queue = &queue;
            scope.spawn(move || loop {
                let Some(collection) = queue.lock().expect("queue lock").pop_front() else {
                    return;
                };
                let task = progress.task(&format!("{database}/{}", collection.name));
                match restore_collection(&mut connection, &collection, args, envelope, &task) {
                    Ok((documents, bytes)) => totals.add_collection(documents, bytes),
                    Err(message) => {
                        eprintln!(
                            "quince restore: collection '{database}/{}': {message}",
                            collection.name
                        );
                        totals.fail();
                    }
                }
            });
        }
    });
    Ok(())
}

/// Refuses an encrypted dump.
fn check_encryption(directory: &Path) -> Result<(), String> {
    let path = directory.join(format::ENCRYPTION_FILE);
    match std::fs::read_to_string(&path) {
        Ok(kind) if kind.trim() == format::ENCRYPTION_NONE => Ok(()),
        Ok(kind) => Err(format!(
            "the dump is encrypted ({} says '{}'); quince restore reads only unencrypted dumps",
            path.display(),
            kind.trim()
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot read '{}': {e}", path.display())),
    }
}

/// Checks that the database exists, creating it when `create` says so.
fn ensure_database(server: &Server, database: &str, create: bool) -> Result<(), String> {
    let mut connection = server.another(database);
    let reply = connection.json(Method::Get, "/_api/database/current", None)?;
    if reply.ok() {
        return Ok(());
    }
    if reply.status != 404 {
        return Err(format!("cannot read the database: {}", reply.error()));
    }
    if !create {
        return Err(format!(
            "database '{database}' does not exist (use --create-database true to create it)"
        ));
    }
    let mut system = server.another("_system");
    let reply = system.json(
        Method::Post,
        "/_api/database",
        Some(&json!({"name": database})),
    )?;
    if !reply.ok() {
        return Err(format!("cannot create the database: {}", reply.error()));
    }
    Ok(())
}

/// The collections of a dump directory that the options select, by name.
fn read_collections(directory: &Path, args: &RestoreArgs) -> Result<Vec<Collection>, String> {
    let mut files: Vec<String> = std::fs::read_dir(directory)
        .map_err(|e| format!("cannot read '{}': {e}", directory.display()))?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    files.sort();
    let mut collections = Vec::new();
    for file in &files {
        if file.ends_with(".view.json") {
            eprintln!("quince restore: skipping view '{file}': Quince has no views");
            continue;
        }
        if !file.ends_with(format::STRUCTURE_SUFFIX) {
            continue;
        }
        let structure = read_json(&directory.join(file))?;
        let Some(parameters) = structure["parameters"].as_object().cloned() else {
            return Err(format!("'{file}' has no \"parameters\" object"));
        };
        let Some(name) = parameters
            .get("name")
            .and_then(Value::as_str)
            .map(String::from)
        else {
            return Err(format!("'{file}' names no collection"));
        };
        let selected = if args.collections.is_empty() {
            args.include_system_collections || !name.starts_with('_')
        } else {
            args.collections.contains(&name)
        };
        if !selected {
            continue;
        }
        let indexes = structure["indexes"].as_array().cloned().unwrap_or_default();
        let data = data_files(&files, directory, &name);
        collections.push(Collection {
            name,
            parameters,
            indexes,
            data,
        });
    }
    for wanted in &args.collections {
        if !collections.iter().any(|c| &c.name == wanted) {
            eprintln!("quince restore: requested collection '{wanted}' not found in the dump");
        }
    }
    if !args.collections.is_empty() && collections.is_empty() {
        return Err("none of the requested collections were found in the dump".into());
    }
    Ok(collections)
}

/// The data files of collection `name`, in order: those of `NAME_MD5`, else of `NAME`.
fn data_files(files: &[String], directory: &Path, name: &str) -> Vec<PathBuf> {
    for stem in [format::file_stem(name), name.to_owned()] {
        let mut parts: Vec<(u64, &String)> = files
            .iter()
            .filter_map(|f| format::data_file_part(f, &stem).map(|(n, _)| (n, f)))
            .collect();
        if !parts.is_empty() {
            parts.sort();
            return parts.into_iter().map(|(_, f)| directory.join(f)).collect();
        }
    }
    Vec::new()
}

/// Restores one collection; the documents and bytes loaded.
fn restore_collection(
    server: &mut Server,
    collection: &Collection,
    args: &RestoreArgs,
    envelope: bool,
    task: &Task,
) -> Result<(u64, u64), String> {
    if args.create_collection {
        create_collection(server, collection, args.overwrite)?;
    }
    let mut loaded = (0, 0);
    if args.import_data {
        loaded = load_data(server, collection, args.batch_size, envelope, task)?;
    }
    if args.create_collection {
        for index in collection
            .indexes
            .iter()
            .filter_map(format::index_for_create)
        {
            let reply = server.json(
                Method::Post,
                &format!("/_api/index?collection={}", encode(&collection.name)),
                Some(&index),
            )?;
            if !reply.ok() {
                return Err(format!("cannot create index {index}: {}", reply.error()));
            }
        }
    }
    Ok(loaded)
}

fn create_collection(
    server: &mut Server,
    collection: &Collection,
    overwrite: bool,
) -> Result<(), String> {
    let path = format!("/_api/collection/{}", encode(&collection.name));
    let exists = server.json(Method::Get, &path, None)?.ok();
    if exists {
        if collection.name.starts_with('_') {
            return Ok(());
        }
        if !overwrite {
            return Err(
                "the collection exists (use --overwrite true to drop and recreate it)".into(),
            );
        }
        let reply = server.json(Method::Delete, &path, None)?;
        if !reply.ok() {
            return Err(format!("cannot drop the collection: {}", reply.error()));
        }
    }
    let body = format::collection_create_body(&collection.parameters);
    let reply = server.json(Method::Post, "/_api/collection", Some(&body))?;
    if !reply.ok() {
        return Err(format!("cannot create the collection: {}", reply.error()));
    }
    Ok(())
}

/// What is waiting to be sent: documents (JSON Lines) or removals (keys), never both, so the
/// order of the file is kept.
struct Pending {
    documents: Vec<u8>,
    document_count: u64,
    removals: Vec<String>,
    removal_bytes: usize,
}

/// The counts of a collection's load.
#[derive(Default)]
struct Loaded {
    documents: u64,
    bytes: u64,
    failures: u64,
    shown: usize,
}

fn load_data(
    server: &mut Server,
    collection: &Collection,
    batch_size: u64,
    envelope: bool,
    task: &Task,
) -> Result<(u64, u64), String> {
    let batch_size = usize::try_from(batch_size).expect("bounded by the parser");
    let mut pending = Pending {
        documents: Vec::new(),
        document_count: 0,
        removals: Vec::new(),
        removal_bytes: 0,
    };
    let mut loaded = Loaded::default();
    let mut line = Vec::new();
    for path in &collection.data {
        let mut reader =
            LineReader::open(path).map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
        let mut number = 0u64;
        loop {
            let more = reader
                .next_line(&mut line)
                .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
            if !more {
                break;
            }
            number += 1;
            let entry = format::decode_line(&line, envelope)
                .map_err(|e| format!("{}, line {number}: {e}", path.display()))?;
            match entry {
                None => {}
                Some(Entry::Document(mut document)) => {
                    if !pending.removals.is_empty() {
                        flush(server, collection, &mut pending, &mut loaded)?;
                    }
                    document.remove("_id");
                    document.remove("_rev");
                    serde_json::to_writer(&mut pending.documents, &document)
                        .expect("a JSON object serializes");
                    pending.documents.push(b'\n');
                    pending.document_count += 1;
                    loaded.bytes += line.len() as u64 + 1;
                }
                Some(Entry::Removal(key)) => {
                    if !pending.documents.is_empty() {
                        flush(server, collection, &mut pending, &mut loaded)?;
                    }
                    pending.removal_bytes += key.len() + 3;
                    pending.removals.push(key);
                }
            }
            if pending.documents.len() >= batch_size || pending.removal_bytes >= batch_size {
                flush(server, collection, &mut pending, &mut loaded)?;
                task.update(loaded.documents, loaded.bytes);
            }
        }
    }
    flush(server, collection, &mut pending, &mut loaded)?;
    task.update(loaded.documents, loaded.bytes);
    if loaded.failures > 0 {
        return Err(format!(
            "{} documents could not be imported",
            loaded.failures
        ));
    }
    Ok((loaded.documents, loaded.bytes))
}

/// Sends what is pending.
fn flush(
    server: &mut Server,
    collection: &Collection,
    pending: &mut Pending,
    loaded: &mut Loaded,
) -> Result<(), String> {
    let name = encode(&collection.name);
    if !pending.documents.is_empty() {
        let path = format!(
            "/_api/import?collection={name}&type=documents&onDuplicate=replace&details=true"
        );
        let reply = server.send(
            Method::Post,
            &path,
            "application/x-ldjson",
            Some(&pending.documents),
            None,
        )?;
        if !reply.ok() {
            return Err(format!(
                "the import of {} documents failed: {}",
                pending.document_count,
                reply.error()
            ));
        }
        let count = |what: &str| reply.body[what].as_u64().unwrap_or(0);
        loaded.documents += count("created") + count("updated");
        loaded.failures += count("errors");
        for detail in reply.body["details"].as_array().into_iter().flatten() {
            if loaded.shown < FAILURES_SHOWN_MAX {
                loaded.shown += 1;
                eprintln!(
                    "quince restore: collection '{}': {}",
                    collection.name,
                    detail.as_str().unwrap_or_default()
                );
            }
        }
        pending.documents.clear();
        pending.document_count = 0;
    }
    if !pending.removals.is_empty() {
        let keys = Value::from(std::mem::take(&mut pending.removals));
        let reply = server.json(
            Method::Delete,
            &format!("/_api/document/{name}"),
            Some(&keys),
        )?;
        if !reply.ok() {
            return Err(format!("removing documents failed: {}", reply.error()));
        }
        // Items that are not found (1202) were removed already or never restored: both fine.
        pending.removal_bytes = 0;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name)
    }

    fn args(extra: &[&str]) -> RestoreArgs {
        let mut argv = vec!["x"];
        argv.extend_from_slice(extra);
        crate::options::RestoreCommand::try_parse_from(argv)
            .unwrap()
            .args
    }

    #[test]
    fn the_arangodump_fixture_has_two_collections_and_their_data_files() {
        let directory = fixture("arangodump-3.12");
        let collections = read_collections(&directory, &args(&[])).unwrap();
        let names: Vec<&str> = collections.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["customers", "knows"]);
        let knows = &collections[1];
        assert_eq!(knows.parameters["type"], 3);
        assert_eq!(knows.indexes.len(), 1);
        assert_eq!(
            knows.data,
            [directory.join(format!("{}.data.json.gz", format::file_stem("knows")))]
        );
        assert!(collections[0].data[0]
            .to_str()
            .unwrap()
            .ends_with(".data.json"));
        check_encryption(&directory).unwrap();
        let only = read_collections(&directory, &args(&["--collection", "knows"])).unwrap();
        assert_eq!(only.len(), 1);
        assert!(read_collections(&directory, &args(&["--collection", "nope"])).is_err());
    }

    #[test]
    fn every_line_of_the_fixtures_decodes() {
        for (name, envelope, documents, removals) in [
            ("arangodump-3.12", false, 7, 0),
            ("arangodump-envelope", true, 5, 2),
        ] {
            let directory = fixture(name);
            let dump_json = read_json(&directory.join(format::DUMP_JSON)).unwrap();
            assert_eq!(format::uses_envelope(&dump_json), envelope);
            let (mut seen_documents, mut seen_removals) = (0, 0);
            for collection in read_collections(&directory, &args(&[])).unwrap() {
                for path in &collection.data {
                    let mut reader = LineReader::open(path).unwrap();
                    let mut line = Vec::new();
                    while reader.next_line(&mut line).unwrap() {
                        match format::decode_line(&line, envelope).unwrap() {
                            Some(Entry::Document(d)) => {
                                assert!(d["_key"].is_string());
                                seen_documents += 1;
                            }
                            Some(Entry::Removal(_)) => seen_removals += 1,
                            None => {}
                        }
                    }
                }
            }
            assert_eq!(
                (seen_documents, seen_removals),
                (documents, removals),
                "{name}"
            );
        }
    }

    #[test]
    fn an_encrypted_dump_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(format::ENCRYPTION_FILE), "aes-256-ctr").unwrap();
        let error = check_encryption(dir.path()).unwrap_err();
        assert!(error.contains("encrypted"), "{error}");
    }
}
