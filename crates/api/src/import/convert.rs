//! From one record of an import body to one document, or to the reason it is not one.
//!
//! What it is: [`Conversion`], which turns a JSON Lines line or array element (an object), or
//! a header-line row (an array of values, named by the header), into a document, applies the
//! `_from`/`_to` prefixes of edge collections and checks the edge ends; and the text of
//! ArangoDB's detail strings for records that fail those steps (`at position <i>: …`).
//!
//! What it is not: the write. Key rules, uniqueness and sizes are the database layer's; the
//! detail strings of write failures are built by the writer.
//!
//! Invariants: converting the same bytes twice gives the same document (the writer relies on
//! it to show a failed document without keeping a copy of every one); excerpts of documents in
//! details are at most [`EXCERPT_MAX`] bytes plus `...`.

use quince_errors::{ArangoError, ARANGO_DOCUMENT_TYPE_INVALID, ARANGO_INVALID_EDGE_ATTRIBUTE};
use quince_errors::{HTTP_BAD_PARAMETER, HTTP_CORRUPTED_JSON};
use quince_model::object_text::ObjectText;
use serde_json::{Map, Value};

/// The longest excerpt of a document or line quoted in a detail string, as in ArangoDB.
pub(crate) const EXCERPT_MAX: usize = 255;

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecordKind {
    /// A JSON object (JSON Lines, array element).
    Object,
    /// A JSON array of values named by the header line.
    Values,
}

/// A record that is not a document.
#[derive(Debug)]
pub(crate) struct Invalid {
    /// The detail string (`at position <i>: …`).
    pub detail: String,
    /// The error an all-or-nothing import answers with; its message is the detail.
    pub error: ArangoError,
}

impl Invalid {
    fn new(code: quince_errors::ErrorCode, detail: String) -> Invalid {
        Invalid {
            error: ArangoError::with_message(code, detail.clone()),
            detail,
        }
    }
}

/// How records become documents in one import.
#[derive(Debug)]
pub(crate) struct Conversion {
    /// The target is an edge collection: `_from` and `_to` are prefixed and checked.
    pub edge: bool,
    /// `fromPrefix` with its `/` (empty: none).
    pub from_prefix: String,
    /// `toPrefix` with its `/` (empty: none).
    pub to_prefix: String,
    /// `overwriteCollectionPrefix`.
    pub overwrite_collection_prefix: bool,
    /// `ignoreMissing`: rows may have fewer or more values than the header has names.
    pub ignore_missing: bool,
    /// The nesting bound of each record.
    pub depth_max: usize,
    /// The header line's attribute names (header-line format, once read).
    pub header: Option<Vec<String>>,
}

/// A converted record, as the writer takes it.
#[derive(Debug)]
pub(crate) enum Converted {
    /// Checked object text (the fast route: a JSON object bound for a document collection
    /// whose text can be stored as is; see `quince_model::object_text`).
    Text(ObjectText),
    /// The document as an object.
    Object(Map<String, Value>),
}

impl Converted {
    /// The document as an object, whichever route it took.
    pub fn into_object(self) -> Map<String, Value> {
        match self {
            Converted::Text(text) => text.to_object(),
            Converted::Object(object) => object,
        }
    }
}

impl Conversion {
    /// Converts a record for the writer: by the fast route when it can take it (an object
    /// record for a document collection, so no prefix or edge check applies), else as
    /// [`Conversion::convert`] does, with the same result.
    pub fn document(
        &self,
        kind: RecordKind,
        raw: &[u8],
        position: u64,
    ) -> Result<Converted, Invalid> {
        if kind == RecordKind::Object && !self.edge {
            if let Some(text) = ObjectText::scan(raw, self.depth_max) {
                return Ok(Converted::Text(text));
            }
        }
        self.convert(kind, raw, position).map(Converted::Object)
    }

    /// Converts a record of either kind; `position` is what details call it.
    pub fn convert(
        &self,
        kind: RecordKind,
        raw: &[u8],
        position: u64,
    ) -> Result<Map<String, Value>, Invalid> {
        match kind {
            RecordKind::Object => self.object(raw, position),
            RecordKind::Values => self.values(raw, position),
        }
    }

    /// A JSON Lines line or an array element.
    fn object(&self, raw: &[u8], position: u64) -> Result<Map<String, Value>, Invalid> {
        match quince_model::json::parse(raw, self.depth_max) {
            Ok(Value::Object(map)) => self.finish(map, position),
            Ok(other) => Err(Invalid::new(
                ARANGO_DOCUMENT_TYPE_INVALID,
                format!(
                    "at position {position}: invalid JSON type (expecting object), \
                     offending document: {}",
                    excerpt(&render(&other))
                ),
            )),
            Err(_) => Err(parse_error(raw, position)),
        }
    }

    /// A header-line row: values by position, named by the header; `null` values are left out.
    fn values(&self, raw: &[u8], position: u64) -> Result<Map<String, Value>, Invalid> {
        let names = self
            .header
            .as_deref()
            .expect("rows are converted only after the header line");
        let values = match quince_model::json::parse(raw, self.depth_max) {
            Ok(Value::Array(values)) => values,
            Ok(other) => {
                return Err(Invalid::new(
                    ARANGO_DOCUMENT_TYPE_INVALID,
                    format!(
                        "at position {position}: invalid JSON type (expecting array), \
                         offending document: {}",
                        excerpt(&render(&other))
                    ),
                ))
            }
            Err(_) => return Err(parse_error(raw, position)),
        };
        if values.len() != names.len() && !self.ignore_missing {
            return Err(Invalid::new(
                HTTP_BAD_PARAMETER,
                format!(
                    "at position {position}: wrong number of JSON values (got {}, expected {})",
                    values.len(),
                    names.len()
                ),
            ));
        }
        let mut map = Map::with_capacity(names.len());
        for (name, value) in names.iter().zip(values) {
            if !value.is_null() {
                map.insert(name.clone(), value);
            }
        }
        self.finish(map, position)
    }

    /// Prefixes and checks the edge ends of a document bound for an edge collection.
    fn finish(
        &self,
        mut map: Map<String, Value>,
        position: u64,
    ) -> Result<Map<String, Value>, Invalid> {
        if !self.edge {
            return Ok(map);
        }
        let overwrite = self.overwrite_collection_prefix;
        add_prefix(&mut map, "_from", &self.from_prefix, overwrite);
        add_prefix(&mut map, "_to", &self.to_prefix, overwrite);
        // Only presence is checked here, as ArangoDB does; whether the handles are legal is
        // the write's question (a failure there is a write error with its own detail).
        let ends_ok = matches!(map.get("_from"), Some(Value::String(_)))
            && matches!(map.get("_to"), Some(Value::String(_)));
        if !ends_ok {
            return Err(Invalid::new(
                ARANGO_INVALID_EDGE_ATTRIBUTE,
                format!(
                    "at position {position}: missing '_from' or '_to' attribute, \
                     offending document: {}",
                    excerpt(&render_map(&map))
                ),
            ));
        }
        Ok(map)
    }
}

/// Puts `prefix` in front of an edge end that names no collection (or, with `overwrite`,
/// in place of the collection it names); numbers become keys in that collection.
fn add_prefix(map: &mut Map<String, Value>, attribute: &str, prefix: &str, overwrite: bool) {
    if prefix.is_empty() {
        return;
    }
    let Some(value) = map.get_mut(attribute) else {
        return;
    };
    let prefixed = match value {
        Value::String(handle) => match handle.split_once('/') {
            None => format!("{prefix}{handle}"),
            Some((_, key)) if overwrite => format!("{prefix}{key}"),
            Some(_) => return,
        },
        Value::Number(n) if n.is_u64() => format!("{prefix}{n}"),
        _ => return,
    };
    *value = Value::String(prefixed);
}

/// The detail of a record that is not JSON.
fn parse_error(raw: &[u8], position: u64) -> Invalid {
    let text = String::from_utf8_lossy(raw);
    Invalid::new(
        HTTP_CORRUPTED_JSON,
        format!(
            "at position {position}: invalid JSON type (expecting object, probably parse error), \
             offending context: {}",
            excerpt(text.trim())
        ),
    )
}

/// Compact JSON text of a value.
pub(crate) fn render(value: &Value) -> String {
    serde_json::to_string(value).expect("a serde_json::Value always serializes")
}

/// Compact JSON text of an object.
pub(crate) fn render_map(map: &Map<String, Value>) -> String {
    let mut out = Vec::with_capacity(64);
    serde_json::to_writer(&mut out, map).expect("a JSON object always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// At most [`EXCERPT_MAX`] bytes of `text` (cut at a character boundary), then `...` when cut.
pub(crate) fn excerpt(text: &str) -> String {
    if text.len() <= EXCERPT_MAX {
        return text.to_owned();
    }
    let mut end = EXCERPT_MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn conversion(edge: bool) -> Conversion {
        Conversion {
            edge,
            from_prefix: "v/".into(),
            to_prefix: "w/".into(),
            overwrite_collection_prefix: false,
            ignore_missing: false,
            depth_max: 64,
            header: Some(vec!["_key".into(), "a".into(), "b".into()]),
        }
    }

    #[test]
    fn objects_pass_and_other_json_is_a_type_error() {
        let c = conversion(false);
        let doc = c.convert(RecordKind::Object, br#"{"x": 1}"#, 1).unwrap();
        assert_eq!(Value::Object(doc), json!({"x": 1}));
        let bad = c.convert(RecordKind::Object, b"[1, 2]", 3).unwrap_err();
        assert_eq!(
            bad.detail,
            "at position 3: invalid JSON type (expecting object), offending document: [1,2]"
        );
        assert_eq!(bad.error.num(), 1227);
        let broken = c.convert(RecordKind::Object, b" {\"x\": ", 4).unwrap_err();
        assert_eq!(
            broken.detail,
            "at position 4: invalid JSON type (expecting object, probably parse error), \
             offending context: {\"x\":"
        );
        assert_eq!((broken.error.num(), broken.error.status), (600, 400));
    }

    #[test]
    fn rows_are_named_by_the_header_and_nulls_left_out() {
        let c = conversion(false);
        let doc = c
            .convert(RecordKind::Values, br#"["k1", null, [true]]"#, 2)
            .unwrap();
        assert_eq!(Value::Object(doc), json!({"_key": "k1", "b": [true]}));
        let short = c.convert(RecordKind::Values, br#"["k1"]"#, 5).unwrap_err();
        assert_eq!(
            short.detail,
            "at position 5: wrong number of JSON values (got 1, expected 3)"
        );
        let lenient = Conversion {
            ignore_missing: true,
            ..conversion(false)
        };
        let doc = lenient
            .convert(RecordKind::Values, br#"["k1", 2, 3, 4]"#, 1)
            .unwrap();
        assert_eq!(Value::Object(doc), json!({"_key": "k1", "a": 2, "b": 3}));
    }

    #[test]
    fn edge_ends_are_prefixed_and_checked() {
        let c = conversion(true);
        let doc = c
            .convert(RecordKind::Object, br#"{"_from": "a", "_to": 7}"#, 1)
            .unwrap();
        assert_eq!(Value::Object(doc), json!({"_from": "v/a", "_to": "w/7"}));
        let kept = c
            .convert(RecordKind::Object, br#"{"_from": "x/a", "_to": "y/b"}"#, 1)
            .unwrap();
        assert_eq!(Value::Object(kept), json!({"_from": "x/a", "_to": "y/b"}));
        let forced = Conversion {
            overwrite_collection_prefix: true,
            ..conversion(true)
        };
        let doc = forced
            .convert(RecordKind::Object, br#"{"_from": "x/a", "_to": "y/b"}"#, 1)
            .unwrap();
        assert_eq!(Value::Object(doc), json!({"_from": "v/a", "_to": "w/b"}));
        let none = Conversion {
            from_prefix: String::new(),
            to_prefix: String::new(),
            ..conversion(true)
        };
        let bad = none
            .convert(RecordKind::Object, br#"{"_from": "a"}"#, 9)
            .unwrap_err();
        assert_eq!(
            bad.detail,
            "at position 9: missing '_from' or '_to' attribute, offending document: {\"_from\":\"a\"}"
        );
        assert_eq!(bad.error.num(), 1233);
    }

    #[test]
    fn excerpts_are_cut_at_255_bytes_on_a_character_boundary() {
        let long = "é".repeat(200);
        let cut = excerpt(&long);
        assert!(cut.ends_with("..."));
        assert!(cut.len() <= EXCERPT_MAX + 3);
        assert_eq!(excerpt("short"), "short");
    }
}
