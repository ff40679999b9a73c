//! arangodump's directory format (ArangoDB 3.12), as both tools write and read it.
//!
//! What it is: the names and contents of the files of one database's dump:
//! - `dump.json`: `{"database", "lastTickAtDumpStart", "useEnvelope", "useVPack",
//!   "properties"}` ([`dump_json`]); `properties` is the database's (`id`, `name`, `isSystem`,
//!   ...);
//! - `ENCRYPTION`: the encryption type, `none` ([`ENCRYPTION_NONE`]);
//! - per collection `NAME_MD5.structure.json` (`MD5` is the hex MD5 of the name;
//!   [`file_stem`]) holding `{"indexes": [...], "parameters": {...}}` ([`structure`]) with
//!   the collection's properties and its indexes except the primary and edge index;
//!   arangodump in a cluster writes `NAME.structure.json`, which restore reads too;
//! - per collection `NAME_MD5.data.json`, or `NAME_MD5.data.json.gz` when compressed, JSON
//!   Lines of documents ([`data_file`]); arangodump's `--split-files` writes
//!   `NAME_MD5.N.data.json[.gz]`, which restore reads in order of `N`;
//! - with `--all-databases`, one such directory per database, named after the database.
//!
//! A data line is a document object; a dump made with `useEnvelope: true` (every dump before
//! ArangoDB 3.8, which wrote no `useEnvelope` at all) wraps each one as
//! `{"type": 2300, "data": {...}}` and marks removals `{"type": 2302, "data": {"_key": ...}}`
//! ([`decode_line`]).
//!
//! What it is not: I/O (see [`crate::files`]) or HTTP.
//!
//! Invariants: [`file_stem`] is a pure function of the name, so a dump and a restore agree on
//! file names; a definition written by [`index_for_dump`] is accepted by [`index_for_create`].

use md5::{Digest, Md5};
use serde_json::{json, Map, Value};

/// The content of `ENCRYPTION` in a dump that is not encrypted.
pub const ENCRYPTION_NONE: &str = "none";
/// The name of the file that names the encryption.
pub const ENCRYPTION_FILE: &str = "ENCRYPTION";
/// The name of the database's description.
pub const DUMP_JSON: &str = "dump.json";
/// How a structure file's name ends.
pub const STRUCTURE_SUFFIX: &str = ".structure.json";

/// Envelope type of a document (2300) or edge (2301) insertion or update.
const MARKER_DOCUMENT: u64 = 2300;
const MARKER_EDGE: u64 = 2301;
/// Envelope type of a removal.
const MARKER_REMOVE: u64 = 2302;

/// `NAME_MD5`: the name and the hex MD5 of its UTF-8 bytes.
pub fn file_stem(name: &str) -> String {
    let digest = Md5::digest(name.as_bytes());
    let mut stem = String::with_capacity(name.len() + 33);
    stem.push_str(name);
    stem.push('_');
    for byte in digest {
        stem.push_str(&format!("{byte:02x}"));
    }
    stem
}

/// The structure file of collection `name`.
pub fn structure_file(name: &str) -> String {
    format!("{}{STRUCTURE_SUFFIX}", file_stem(name))
}

/// The data file of collection `name`.
pub fn data_file(name: &str, compressed: bool) -> String {
    let gz = if compressed { ".gz" } else { "" };
    format!("{}.data.json{gz}", file_stem(name))
}

/// Whether `file` is one of the data files of the collection with stem `stem`: the index of
/// the split file (0 for an unsplit one) and whether it is compressed.
pub fn data_file_part(file: &str, stem: &str) -> Option<(u64, bool)> {
    let rest = file.strip_prefix(stem)?;
    let (rest, compressed) = match rest.strip_suffix(".gz") {
        Some(rest) => (rest, true),
        None => (rest, false),
    };
    let middle = rest.strip_suffix(".data.json")?;
    if middle.is_empty() {
        return Some((0, compressed));
    }
    let number = middle.strip_prefix('.')?;
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().ok()?, compressed))
}

/// `dump.json` of a database.
pub fn dump_json(database: &str, tick: &str, properties: Value) -> Value {
    json!({
        "database": database,
        "lastTickAtDumpStart": tick,
        "useEnvelope": false,
        "useVPack": false,
        "properties": properties,
    })
}

/// Whether the data lines of a dump are wrapped in envelopes: what `useEnvelope` says, and
/// true when it is absent (dumps before ArangoDB 3.8).
pub fn uses_envelope(dump_json: &Value) -> bool {
    dump_json
        .get("useEnvelope")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

/// A structure file's content.
pub fn structure(parameters: Value, indexes: Vec<Value>) -> Value {
    json!({"indexes": indexes, "parameters": parameters})
}

/// An index of `GET /_api/index` as arangodump writes it: `None` for the primary and edge
/// indexes, which every collection of the type has; the id without the collection's name;
/// without the figures and estimates of the moment.
pub fn index_for_dump(index: &Value) -> Option<Value> {
    let mut index = index.as_object()?.clone();
    match index.get("type").and_then(Value::as_str) {
        Some("primary" | "edge") | None => return None,
        Some(_) => {}
    }
    if let Some(Value::String(id)) = index.get("id") {
        let bare = id.rsplit('/').next().unwrap_or(id).to_owned();
        index.insert("id".into(), Value::String(bare));
    }
    for volatile in [
        "selectivityEstimate",
        "figures",
        "isNewlyCreated",
        "error",
        "code",
    ] {
        index.remove(volatile);
    }
    Some(Value::Object(index))
}

/// The body of `POST /_api/index` for an index of a structure file: `None` for a primary or
/// edge index (arangodump does not write them; a hand-made dump may).
pub fn index_for_create(index: &Value) -> Option<Value> {
    let mut index = index_for_dump(index)?;
    let object = index.as_object_mut().expect("index_for_dump gives objects");
    object.remove("id");
    Some(index)
}

/// The body of `POST /_api/collection` that recreates a collection from its structure's
/// `parameters`: the properties a single server keeps; ids, status, cluster attributes and
/// the key generator's `lastValue` are left out.
pub fn collection_create_body(parameters: &Map<String, Value>) -> Value {
    let mut body = Map::new();
    for attribute in [
        "name",
        "type",
        "waitForSync",
        "isSystem",
        "schema",
        "computedValues",
        "cacheEnabled",
        "journalSize",
    ] {
        if let Some(value) = parameters.get(attribute) {
            if !value.is_null() || matches!(attribute, "schema" | "computedValues") {
                body.insert(attribute.into(), value.clone());
            }
        }
    }
    if let Some(Value::Object(key_options)) = parameters.get("keyOptions") {
        let mut key_options = key_options.clone();
        key_options.remove("lastValue");
        body.insert("keyOptions".into(), Value::Object(key_options));
    }
    Value::Object(body)
}

/// One entry of a data file.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A document to store (insert, or replace the one with its `_key`).
    Document(Map<String, Value>),
    /// The removal of the document with this `_key` (envelope dumps only).
    Removal(String),
}

/// Decodes one line of a data file; `None` for an empty line or an envelope of another type
/// (markers that are not about documents).
pub fn decode_line(line: &[u8], envelope: bool) -> Result<Option<Entry>, String> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Ok(None);
    }
    let value: Value =
        serde_json::from_slice(line).map_err(|e| format!("a line is not JSON: {e}"))?;
    let Value::Object(mut object) = value else {
        return Err("a line is not a JSON object".into());
    };
    if !envelope {
        return Ok(Some(Entry::Document(object)));
    }
    let kind = object.get("type").and_then(Value::as_u64);
    let data = match object.remove("data") {
        Some(Value::Object(data)) => data,
        _ => return Err("an envelope line has no \"data\" object".into()),
    };
    match kind {
        Some(MARKER_DOCUMENT | MARKER_EDGE) => Ok(Some(Entry::Document(data))),
        Some(MARKER_REMOVE) => {
            let key = data
                .get("_key")
                .or_else(|| object.get("key"))
                .and_then(Value::as_str)
                .ok_or("a removal line has no _key")?;
            Ok(Some(Entry::Removal(key.to_owned())))
        }
        Some(_) => Ok(None),
        None => Err("an envelope line has no numeric \"type\"".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_carry_the_md5_of_the_name() {
        // md5("users") = 9bc65c2abec141778ffaa729489f3e87
        assert_eq!(file_stem("users"), "users_9bc65c2abec141778ffaa729489f3e87");
        assert_eq!(
            structure_file("users"),
            "users_9bc65c2abec141778ffaa729489f3e87.structure.json"
        );
        assert_eq!(
            data_file("users", true),
            "users_9bc65c2abec141778ffaa729489f3e87.data.json.gz"
        );
        assert_eq!(
            data_file("users", false),
            "users_9bc65c2abec141778ffaa729489f3e87.data.json"
        );
    }

    #[test]
    fn data_file_parts_plain_compressed_and_split() {
        let stem = file_stem("c");
        assert_eq!(
            data_file_part(&format!("{stem}.data.json"), &stem),
            Some((0, false))
        );
        assert_eq!(
            data_file_part(&format!("{stem}.data.json.gz"), &stem),
            Some((0, true))
        );
        assert_eq!(
            data_file_part(&format!("{stem}.12.data.json"), &stem),
            Some((12, false))
        );
        assert_eq!(
            data_file_part(&format!("{stem}.structure.json"), &stem),
            None
        );
        assert_eq!(data_file_part(&format!("{stem}.x.data.json"), &stem), None);
        assert_eq!(data_file_part(&format!("{stem}x.data.json"), &stem), None);
    }

    #[test]
    fn plain_and_envelope_lines() {
        let doc = br#"{"_key":"a","type":2302,"data":1}"#;
        let Some(Entry::Document(d)) = decode_line(doc, false).unwrap() else {
            panic!("a plain line is a document whatever its attributes")
        };
        assert_eq!(d["_key"], "a");
        let wrapped = br#"{"type":2300,"data":{"_key":"b","x":1}}"#;
        assert!(matches!(
            decode_line(wrapped, true).unwrap(),
            Some(Entry::Document(d)) if d["x"] == 1
        ));
        let removal = br#"{"type":2302,"data":{"_key":"b","_rev":"_x"}}"#;
        assert_eq!(
            decode_line(removal, true).unwrap(),
            Some(Entry::Removal("b".into()))
        );
        assert_eq!(decode_line(b"  \r", true).unwrap(), None);
        assert_eq!(
            decode_line(br#"{"type":2000,"data":{}}"#, true).unwrap(),
            None
        );
        assert!(decode_line(b"[1]", false).is_err());
        assert!(decode_line(b"{", false).is_err());
        assert!(decode_line(br#"{"_key":"a"}"#, true).is_err());
    }

    #[test]
    fn envelope_unless_dump_json_says_otherwise() {
        assert!(uses_envelope(&json!({"database": "d"})));
        assert!(!uses_envelope(&dump_json("d", "0", json!({}))));
        assert!(uses_envelope(&json!({"useEnvelope": true})));
    }

    #[test]
    fn indexes_lose_ids_and_estimates_and_the_built_in_ones() {
        let primary = json!({"id": "c/0", "type": "primary", "fields": ["_key"]});
        assert_eq!(index_for_dump(&primary), None);
        assert_eq!(index_for_dump(&json!({"id": "c/1", "type": "edge"})), None);
        let persistent = json!({"id": "c/12", "type": "persistent", "fields": ["a"],
            "unique": true, "sparse": false, "name": "byA", "selectivityEstimate": 1});
        let dumped = index_for_dump(&persistent).unwrap();
        assert_eq!(
            dumped,
            json!({"id": "12", "type": "persistent", "fields": ["a"], "unique": true,
                   "sparse": false, "name": "byA"})
        );
        let create = index_for_create(&dumped).unwrap();
        assert!(create.get("id").is_none() && create["name"] == "byA");
    }

    #[test]
    fn create_bodies_keep_what_a_single_server_keeps() {
        let parameters = json!({"name": "c", "type": 3, "id": "77", "status": 3,
            "waitForSync": true, "keyOptions": {"type": "autoincrement", "increment": 5,
            "offset": 0, "allowUserKeys": true, "lastValue": 10}, "schema": null,
            "numberOfShards": 3, "cacheEnabled": false});
        let body = collection_create_body(parameters.as_object().unwrap());
        assert_eq!(
            body,
            json!({"name": "c", "type": 3, "waitForSync": true, "schema": null,
                   "cacheEnabled": false, "keyOptions": {"type": "autoincrement",
                   "increment": 5, "offset": 0, "allowUserKeys": true}})
        );
    }
}
