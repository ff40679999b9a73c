//! The catalog's metadata files: their layout in the data directory, their contents, and how
//! they are written (atomically) and read.
//!
//! What it is: [`DatabaseParams`] and [`CollectionParams`] (the `parameter.json` of a database
//! and of a collection), [`CatalogParams`] (the server-wide id counter), the directory names,
//! and [`write_atomic`] / [`read_json`] over the catalog's [`FileIo`].
//!
//! What it is not: documents. A collection's documents live in its storage `Store`, in the same
//! directory as its `parameter.json`.
//!
//! Invariants: a metadata file is replaced by writing a temporary file, syncing it, renaming it
//! over the old one and syncing the directory, so a crash leaves either the old or the new
//! contents, never a mix. Every metadata file carries a `checksum` (CRC32C of the compact JSON
//! of its other attributes), so a damaged file is refused (1101) rather than read as different
//! parameters. Which directories are debris, and why, is `crate::debris`.

use std::path::{Path, PathBuf};

use quince_errors::{
    ArangoError, Result, ARANGO_FILESYSTEM_FULL, ARANGO_ILLEGAL_PARAMETER_FILE, ARANGO_IO_ERROR,
};
use quince_storage::io::FileIo;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{Map, Value};

/// The name of every metadata file.
pub(crate) const PARAMETER_FILE: &str = "parameter.json";

/// The largest metadata file we read back (a schema is the biggest part).
const PARAMETER_FILE_BYTES_MAX: u64 = 16 * 1024 * 1024;

/// `<data>/databases`.
pub(crate) fn databases_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("databases")
}

/// `<data>/databases/database-<id>`.
pub(crate) fn database_dir(data_dir: &Path, id: u64) -> PathBuf {
    databases_dir(data_dir).join(format!("database-{id}"))
}

/// `<database dir>/collection-<id>`.
pub(crate) fn collection_dir(database_dir: &Path, id: u64) -> PathBuf {
    database_dir.join(format!("collection-{id}"))
}

/// `<data>/catalog.json`: the id counter.
pub(crate) fn catalog_file(data_dir: &Path) -> PathBuf {
    data_dir.join("catalog.json")
}

/// What `<data>/catalog.json` holds.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CatalogParams {
    /// The highest id handed out to a database or collection, so ids are never reused, not
    /// even those of dropped collections.
    pub id_last: u64,
}

/// A database's `parameter.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DatabaseParams {
    /// The numeric id (also in the directory name).
    pub id: u64,
    /// The name.
    pub name: String,
}

/// A collection's `parameter.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CollectionParams {
    /// The numeric id (also in the directory name).
    pub id: u64,
    /// The current name (renames rewrite this file only).
    pub name: String,
    /// 2 document, 3 edge.
    #[serde(rename = "type")]
    pub kind: u64,
    /// `waitForSync`.
    pub wait_for_sync: bool,
    /// `journalSize` in bytes.
    pub journal_size: u64,
    /// `keyOptions` with `lastValue`, as the key generator reports them.
    pub key_options: Value,
    /// `schema`.
    #[serde(default)]
    pub schema: Value,
    /// `computedValues`.
    #[serde(default)]
    pub computed_values: Value,
    /// `cacheEnabled`.
    #[serde(default)]
    pub cache_enabled: bool,
    /// Whether the name marks a system collection.
    pub is_system: bool,
    /// `globallyUniqueId`.
    pub globally_unique_id: String,
    /// The secondary indexes' definitions in creation order (`IndexDefinition::to_stored`);
    /// absent in files written before indexes existed, and when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub indexes: Vec<Value>,
}

/// Turns an I/O error on a metadata file into the client-visible error: a full disk is
/// `ARANGO_FILESYSTEM_FULL` (1104), as it is for data files; anything else `ARANGO_IO_ERROR`.
pub(crate) fn io_error(path: &Path, error: std::io::Error) -> ArangoError {
    if error.kind() == std::io::ErrorKind::StorageFull {
        return ArangoError::with_message(
            ARANGO_FILESYSTEM_FULL,
            format!("filesystem full while writing {}", path.display()),
        );
    }
    ArangoError::with_message(
        ARANGO_IO_ERROR,
        format!("I/O error on {}: {error}", path.display()),
    )
}

/// The attribute that holds a metadata file's checksum.
const CHECKSUM_ATTRIBUTE: &str = "checksum";

/// The checksum of a metadata object: CRC32C of its compact JSON text.
fn checksum_of(object: &Map<String, Value>) -> u32 {
    crc32c::crc32c(&serde_json::to_vec(object).expect("a JSON object serialises"))
}

/// The name the temporary file of `path` is written under.
pub(crate) fn temp_path(path: &Path) -> PathBuf {
    path.with_extension("json.tmp")
}

/// Replaces `path` with `value` as JSON (with its checksum), atomically and durably.
pub(crate) fn write_atomic<T: Serialize>(io: &dyn FileIo, path: &Path, value: &T) -> Result<()> {
    let Value::Object(mut object) = serde_json::to_value(value).expect("metadata serialises")
    else {
        panic!("metadata is a JSON object");
    };
    let checksum = checksum_of(&object);
    object.insert(CHECKSUM_ATTRIBUTE.to_owned(), Value::from(checksum));
    let bytes = serde_json::to_vec_pretty(&object).expect("metadata serialises");
    let temp = temp_path(path);
    let fail = |e| io_error(&temp, e);
    if io.exists(&temp) {
        // A temporary file of an interrupted earlier write; its contents never counted.
        io.remove_file(&temp).map_err(fail)?;
    }
    let written = io.create_new(&temp).and_then(|file| {
        file.write_all_at(&bytes, 0)?;
        file.sync_data()
    });
    if let Err(e) = written {
        // The temporary file never counted; leaving it would only take space (a full disk).
        let _ = io.remove_file(&temp);
        return Err(fail(e));
    }
    io.rename(&temp, path).map_err(|e| io_error(path, e))?;
    sync_parent(io, path)
}

/// Makes the entries of `path`'s directory durable.
pub(crate) fn sync_parent(io: &dyn FileIo, path: &Path) -> Result<()> {
    let parent = path.parent().expect("metadata paths have a parent");
    io.sync_dir(parent).map_err(|e| io_error(parent, e))
}

/// Reads a JSON metadata file. `Ok(None)` when it does not exist; 1101 when it is unreadable.
pub(crate) fn read_json<T: DeserializeOwned>(io: &dyn FileIo, path: &Path) -> Result<Option<T>> {
    if !io.exists(path) {
        return Ok(None);
    }
    let file = io.open(path).map_err(|e| io_error(path, e))?;
    let len = file.len().map_err(|e| io_error(path, e))?;
    if len > PARAMETER_FILE_BYTES_MAX {
        return Err(bad_parameter_file(path, "file too large"));
    }
    let mut bytes = vec![0u8; len as usize];
    file.read_exact_at(&mut bytes, 0)
        .map_err(|e| io_error(path, e))?;
    let bad = |detail: &str| bad_parameter_file(path, detail);
    let mut object: Map<String, Value> =
        serde_json::from_slice(&bytes).map_err(|e| bad(&e.to_string()))?;
    // The checksum is the last attribute written, so removing it keeps the others' order.
    let stored = object
        .shift_remove(CHECKSUM_ATTRIBUTE)
        .and_then(|v| v.as_u64())
        .ok_or_else(|| bad("no checksum"))?;
    if stored != u64::from(checksum_of(&object)) {
        return Err(bad("checksum mismatch: the file is damaged"));
    }
    serde_json::from_value(Value::Object(object))
        .map(Some)
        .map_err(|e| bad(&e.to_string()))
}

fn bad_parameter_file(path: &Path, detail: &str) -> ArangoError {
    ArangoError::with_message(
        ARANGO_ILLEGAL_PARAMETER_FILE,
        format!(
            "illegal or unreadable parameter file {}: {detail}",
            path.display()
        ),
    )
}

/// The numeric id in a directory name like `collection-17`, if it has that shape.
pub(crate) fn id_from_dir_name(name: &Path, prefix: &str) -> Option<u64> {
    name.to_str()?.strip_prefix(prefix)?.parse().ok()
}

impl crate::debris::DirParams for DatabaseParams {
    fn id(&self) -> u64 {
        self.id
    }
}

impl crate::debris::DirParams for CollectionParams {
    fn id(&self) -> u64 {
        self.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quince_storage::io::SimFileIo;

    #[test]
    fn atomic_writes_survive_a_crash_whole() {
        let sim = SimFileIo::new();
        let dir = Path::new("/data");
        sim.create_dir_all(dir).unwrap();
        let path = dir.join("catalog.json");
        write_atomic(&sim, &path, &CatalogParams { id_last: 7 }).unwrap();
        let after = sim.crash(1, true);
        let read: CatalogParams = read_json(&after, &path).unwrap().unwrap();
        assert_eq!(read.id_last, 7);
        write_atomic(&sim, &path, &CatalogParams { id_last: 8 }).unwrap();
        let read: CatalogParams = read_json(&sim.crash(2, true), &path).unwrap().unwrap();
        assert_eq!(read.id_last, 8);
    }

    #[test]
    fn every_flipped_byte_is_refused_or_harmless() {
        let sim = SimFileIo::new();
        let dir = Path::new("/p");
        sim.create_dir_all(dir).unwrap();
        let path = dir.join("parameter.json");
        let params = DatabaseParams {
            id: 17,
            name: "customers".into(),
        };
        write_atomic(&sim, &path, &params).unwrap();
        let len = sim.read_file(&path).unwrap().len() as u64;
        for at in 0..len {
            let copy = sim.crash(0, false);
            copy.flip_byte(&path, at);
            // Either refused, or (a flip in whitespace) read back unchanged.
            if let Ok(Some(read)) = read_json::<DatabaseParams>(&copy, &path) {
                assert_eq!(
                    (read.id, read.name.as_str()),
                    (17, "customers"),
                    "flip at {at}"
                );
            }
        }
    }

    #[test]
    fn missing_and_garbled_files() {
        let sim = SimFileIo::new();
        let dir = Path::new("/d");
        sim.create_dir_all(dir).unwrap();
        let path = dir.join("p.json");
        assert!(read_json::<CatalogParams>(&sim, &path).unwrap().is_none());
        let f = sim.create_new(&path).unwrap();
        f.write_all_at(b"{not json", 0).unwrap();
        assert_eq!(
            read_json::<CatalogParams>(&sim, &path).unwrap_err().num(),
            1101
        );
    }

    #[test]
    fn directory_ids() {
        assert_eq!(
            id_from_dir_name(Path::new("collection-12"), "collection-"),
            Some(12)
        );
        assert_eq!(
            id_from_dir_name(Path::new("collection-x"), "collection-"),
            None
        );
        assert_eq!(id_from_dir_name(Path::new("LOCK"), "collection-"), None);
    }
}
