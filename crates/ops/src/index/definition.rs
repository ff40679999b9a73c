//! [`IndexDefinition`]: what a client asks for in `POST /_api/index`, validated, and how it is
//! stored and described.
//!
//! What it is: the parser of a create body (ArangoDB's attributes and defaults; the aliases
//! `hash` and `skiplist` become `persistent`), the stored form an engine persists (the same
//! attributes plus `id` and `name`), the identity rule that makes a repeated create return the
//! existing index, and the description `GET /_api/index` renders.
//!
//! What it is not: the index itself, nor the choice of ids (the engine's).
//!
//! Invariants: a definition that parsed is valid: `fields` is non-empty, every path parses,
//! array expansion appears in at most one field and only in a persistent index, a ttl index has
//! exactly one field, is not unique, is sparse and has `expireAfter >= 0`; a geo index has one
//! or two fields and its [`GeoOptions`]; a fulltext index has one field and a `minLength`
//! between 1 and [`super::fulltext::WORD_CHARS_MAX`]; both are sparse and never unique. No
//! created index has `_id` (or a path ending in `._id`) among its fields.

use quince_errors::{ArangoError, Result, ARANGO_ILLEGAL_NAME, BAD_PARAMETER};
use serde_json::{Map, Number, Value};

use super::field::FieldPath;
use super::fulltext::WORD_CHARS_MAX;
use super::geo::GeoOptions;
use super::IndexDescription;

/// The most entries one document may give one index (an array field's elements): beyond it
/// the write is refused, so one document cannot make an index grow without bound.
pub const ENTRIES_PER_DOCUMENT_MAX: usize = 65_536;

/// The longest index name, in bytes (as collection names).
const NAME_BYTES_MAX: usize = 256;

/// The index types ArangoDB names. `Primary` (implicit), `Persistent`, `Ttl`, `Geo` and
/// `Fulltext` exist in this server; the others are refused at create with a message naming
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexType {
    /// The primary index over `_key` (every collection has it, id 0).
    Primary,
    /// The edge index over `_from` and `_to` (automatic in every edge collection, id 1).
    Edge,
    /// A sorted index over one or more attribute paths (`hash` and `skiplist` are aliases).
    Persistent,
    /// A time-to-live index: documents expire `expireAfter` seconds after their date.
    Ttl,
    /// A geo index over a location (one attribute) or a latitude and a longitude (two).
    Geo,
    /// A fulltext index over the words of one attribute.
    Fulltext,
    /// A multi-dimensional index (not supported).
    Mdi,
    /// A prefixed multi-dimensional index (not supported).
    MdiPrefixed,
    /// The old name of the multi-dimensional index (not supported).
    Zkd,
    /// An inverted index (not supported).
    Inverted,
    /// A vector index (not supported).
    Vector,
}

impl IndexType {
    /// The name ArangoDB uses in descriptions.
    pub fn name(self) -> &'static str {
        match self {
            IndexType::Primary => "primary",
            IndexType::Edge => "edge",
            IndexType::Persistent => "persistent",
            IndexType::Ttl => "ttl",
            IndexType::Geo => "geo",
            IndexType::Fulltext => "fulltext",
            IndexType::Mdi => "mdi",
            IndexType::MdiPrefixed => "mdi-prefixed",
            IndexType::Zkd => "zkd",
            IndexType::Inverted => "inverted",
            IndexType::Vector => "vector",
        }
    }

    /// The type a create body's `type` names, aliases resolved (`hash`, `skiplist`:
    /// persistent; `geo1`, `geo2`: geo); `None` for a name ArangoDB does not know.
    pub fn parse(name: &str) -> Option<IndexType> {
        Some(match name {
            "primary" => IndexType::Primary,
            "edge" => IndexType::Edge,
            "persistent" | "hash" | "skiplist" | "rocksdb" => IndexType::Persistent,
            "ttl" => IndexType::Ttl,
            "geo" | "geo1" | "geo2" => IndexType::Geo,
            "fulltext" => IndexType::Fulltext,
            "mdi" => IndexType::Mdi,
            "mdi-prefixed" => IndexType::MdiPrefixed,
            "zkd" => IndexType::Zkd,
            "inverted" => IndexType::Inverted,
            "vector" => IndexType::Vector,
            _ => return None,
        })
    }

    /// True for the types a client can create here.
    pub fn is_supported(self) -> bool {
        matches!(
            self,
            IndexType::Persistent | IndexType::Ttl | IndexType::Geo | IndexType::Fulltext
        )
    }
}

/// A secondary index's definition: what was asked for, with ArangoDB's defaults filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexDefinition {
    /// The numeric id (0 until the engine assigns one).
    pub id: u64,
    /// The name (empty until the engine assigns `idx_<id>` when the client chose none).
    pub name: String,
    /// `Persistent`, `Ttl`, `Geo` or `Fulltext`.
    pub kind: IndexType,
    /// The attribute paths, as given.
    pub fields: Vec<String>,
    /// `unique` (default false; never for ttl).
    pub unique: bool,
    /// `sparse` (default false; always true for ttl).
    pub sparse: bool,
    /// `deduplicate` (default true): equal array elements of one document give one entry.
    pub deduplicate: bool,
    /// `estimates` (default true): whether `selectivityEstimate` is reported.
    pub estimates: bool,
    /// `cacheEnabled` (default false; accepted and reported, there is no cache).
    pub cache_enabled: bool,
    /// `storedValues`: extra attribute paths (accepted and reported; not covered yet).
    pub stored_values: Vec<String>,
    /// `expireAfter` in seconds (ttl only).
    pub expire_after: Option<f64>,
    /// `geoJson`, `legacyPolygons` and the cover levels (geo only).
    pub geo: Option<GeoOptions>,
    /// `minLength`: the shortest word indexed, in characters (fulltext only).
    pub min_length: Option<u32>,
}

pub(super) fn bad(message: impl Into<String>) -> ArangoError {
    ArangoError::with_message(BAD_PARAMETER, message.into())
}

impl IndexDefinition {
    /// Parses and validates a create body (`POST /_api/index`): 400 with errorNum 10 for a
    /// missing, unknown or not yet supported `type` (the message names it) and for bad fields
    /// or options; 1208 for a bad `name`. `inBackground` is accepted and ignored (creation
    /// blocks the collection's writers while it builds). A field that is `_id`, or a path
    /// ending in `._id`, is refused (400/10, as ArangoDB: the handle is not stored with the
    /// document); a `unique`, `sparse` or other flag that is not a boolean reads as its
    /// default, as ArangoDB reads it.
    pub fn parse(body: &Value) -> Result<IndexDefinition> {
        IndexDefinition::parse_body(body, true)
    }

    /// [`IndexDefinition::parse`]; `creating` is false for a definition read back from
    /// storage, which keeps an `_id` field an older version accepted.
    fn parse_body(body: &Value, creating: bool) -> Result<IndexDefinition> {
        let Value::Object(body) = body else {
            return Err(bad("expecting a JSON object as index definition"));
        };
        let kind = match body.get("type") {
            Some(Value::String(name)) => match IndexType::parse(name) {
                Some(kind) if kind.is_supported() => kind,
                Some(_) => {
                    return Err(bad(format!(
                        "index type '{name}' is not supported by this server yet"
                    )))
                }
                None => return Err(bad(format!("invalid index type '{name}'"))),
            },
            _ => {
                return Err(bad(
                    "invalid index type definition: 'type' must be a string",
                ))
            }
        };
        let fields = string_list(body.get("fields"), "fields")?;
        if fields.is_empty() {
            return Err(bad(
                "index 'fields' must be a non-empty array of attribute paths",
            ));
        }
        let mut expansions = 0;
        for (i, field) in fields.iter().enumerate() {
            let path = FieldPath::parse(field)?;
            expansions += usize::from(path.expands());
            if fields[..i].contains(field) {
                return Err(bad(format!(
                    "duplicate attribute name '{field}' in index fields list"
                )));
            }
            if creating && names_id(field) {
                return Err(bad("_id attribute cannot be indexed"));
            }
        }
        let flag =
            |name: &str, default: bool| body.get(name).and_then(Value::as_bool).unwrap_or(default);
        let stored_values = match body.get("storedValues") {
            None | Some(Value::Null) => Vec::new(),
            some => string_list(some, "storedValues")?,
        };
        for path in &stored_values {
            FieldPath::parse(path)?;
        }
        let mut definition = IndexDefinition {
            id: 0,
            name: String::new(),
            kind,
            fields,
            unique: flag("unique", false),
            sparse: flag("sparse", false),
            deduplicate: flag("deduplicate", true),
            estimates: flag("estimates", true),
            cache_enabled: flag("cacheEnabled", false),
            stored_values,
            expire_after: None,
            geo: None,
            min_length: None,
        };
        match kind {
            IndexType::Persistent => {
                if expansions > 1 {
                    return Err(bad("at most one index field may use array expansion '[*]'"));
                }
            }
            IndexType::Ttl => {
                if definition.fields.len() != 1 {
                    return Err(bad(
                        "a ttl index must have exactly one attribute in 'fields'",
                    ));
                }
                if expansions > 0 {
                    return Err(bad("a ttl index does not support array expansion '[*]'"));
                }
                if definition.unique {
                    return Err(bad("a ttl index cannot be unique"));
                }
                let expire_after = body.get("expireAfter").and_then(Value::as_f64);
                match expire_after {
                    Some(seconds) if seconds >= 0.0 && seconds.is_finite() => {
                        definition.expire_after = Some(seconds);
                    }
                    _ => {
                        return Err(bad(
                            "a ttl index needs 'expireAfter', a number of seconds >= 0",
                        ))
                    }
                }
                definition.sparse = true;
                definition.deduplicate = false;
                definition.estimates = false;
                definition.stored_values.clear();
            }
            IndexType::Geo => {
                if !(1..=2).contains(&definition.fields.len()) || expansions > 0 {
                    return Err(bad(
                        "a geo index needs one or two attribute paths in 'fields', without '[*]'",
                    ));
                }
                definition.geo = Some(GeoOptions::parse(body)?);
                definition.special_defaults();
            }
            IndexType::Fulltext => {
                if definition.fields.len() != 1 || expansions > 0 {
                    return Err(bad(
                        "a fulltext index needs exactly one attribute path in 'fields', without \
                         '[*]'",
                    ));
                }
                definition.min_length = Some(parse_min_length(body.get("minLength"))?);
                definition.special_defaults();
            }
            _ => unreachable!("only supported types pass"),
        }
        if let Some(name) = body.get("name") {
            let Value::String(name) = name else {
                return Err(ArangoError::with_message(
                    ARANGO_ILLEGAL_NAME,
                    "illegal index name",
                ));
            };
            check_name(name)?;
            definition.name = name.clone();
        }
        Ok(definition)
    }

    /// Reads a definition an engine stored with [`IndexDefinition::to_stored`].
    pub fn from_stored(stored: &Value) -> Result<IndexDefinition> {
        let mut definition = IndexDefinition::parse_body(stored, false)?;
        definition.id = match stored.get("id") {
            Some(Value::String(id)) => id.parse().ok(),
            Some(id) => id.as_u64(),
            None => None,
        }
        .ok_or_else(|| bad("a stored index definition has no numeric 'id'"))?;
        Ok(definition)
    }

    /// The stored form: the create body's attributes with ArangoDB's defaults, plus `id`
    /// (a decimal string) and `name`.
    pub fn to_stored(&self) -> Value {
        let mut object = self.attributes();
        object.insert("id".into(), Value::String(self.id.to_string()));
        Value::Object(object)
    }

    /// True when `other` (a parsed create body) asks for this index: same type, fields,
    /// uniqueness, sparsity (and `expireAfter`, `storedValues`), whatever the name. A create
    /// that asks for an existing index gets that index back.
    pub fn same_index(&self, other: &IndexDefinition) -> bool {
        self.kind == other.kind
            && self.fields == other.fields
            && self.unique == other.unique
            && self.sparse == other.sparse
            && self.expire_after == other.expire_after
            && self.stored_values == other.stored_values
            && self.geo.map(|g| g.geo_json) == other.geo.map(|g| g.geo_json)
            && self.min_length == other.min_length
    }

    /// What geo and fulltext indexes always are: sparse, not unique, without estimates,
    /// deduplication or stored values (ArangoDB ignores those attributes for them).
    fn special_defaults(&mut self) {
        self.unique = false;
        self.sparse = true;
        self.deduplicate = false;
        self.estimates = false;
        self.cache_enabled = false;
        self.stored_values.clear();
    }

    /// The description in collection `collection`, with `selectivity` (between 0 and 1) where
    /// the index reports one (`estimates` on or unique; never for ttl).
    pub fn describe(&self, collection: &str, selectivity: f64) -> IndexDescription {
        let mut object = self.attributes();
        object.insert(
            "id".into(),
            Value::String(format!("{collection}/{}", self.id)),
        );
        if self.kind == IndexType::Persistent && (self.estimates || self.unique) {
            let estimate = if self.unique { 1.0 } else { selectivity };
            object.insert("selectivityEstimate".into(), number(estimate));
        }
        object.sort_keys();
        IndexDescription {
            id: self.id,
            name: self.name.clone(),
            kind: self.kind,
            fields: self.fields.clone(),
            unique: self.unique,
            sparse: self.sparse,
            json: Value::Object(object),
        }
    }

    /// The attributes every form shares (sorted by name, as ArangoDB renders them).
    fn attributes(&self) -> Map<String, Value> {
        let mut object = Map::new();
        let strings = |list: &[String]| Value::from(list.to_vec());
        if self.kind == IndexType::Persistent {
            object.insert("cacheEnabled".into(), Value::Bool(self.cache_enabled));
            object.insert("deduplicate".into(), Value::Bool(self.deduplicate));
            object.insert("estimates".into(), Value::Bool(self.estimates));
        }
        if let Some(seconds) = self.expire_after {
            object.insert("expireAfter".into(), number(seconds));
        }
        if let Some(geo) = &self.geo {
            geo.describe(&mut object);
        }
        if let Some(min_length) = self.min_length {
            object.insert("minLength".into(), Value::from(min_length));
        }
        object.insert("fields".into(), strings(&self.fields));
        object.insert("name".into(), Value::String(self.name.clone()));
        object.insert("sparse".into(), Value::Bool(self.sparse));
        if !self.stored_values.is_empty() {
            object.insert("storedValues".into(), strings(&self.stored_values));
        }
        object.insert("type".into(), Value::String(self.kind.name().to_owned()));
        object.insert("unique".into(), Value::Bool(self.unique));
        object
    }
}

/// A number as JSON: an integer when it is one (`600`, not `600.0`).
pub(super) fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        Value::from(value as i64)
    } else {
        Number::from_f64(value).map_or(Value::Null, Value::Number)
    }
}

/// A fulltext index's `minLength`: an integer from 1 to [`WORD_CHARS_MAX`], 2 when absent or
/// null (a larger value is capped, as no longer word is indexed).
/// True for `_id` and a path that ends in `._id` (ArangoDB's `^(.+\.)?_id$`).
fn names_id(field: &str) -> bool {
    field == "_id" || (field.len() > "._id".len() && field.ends_with("._id"))
}

fn parse_min_length(value: Option<&Value>) -> Result<u32> {
    match value {
        None | Some(Value::Null) => Ok(2),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(length) if length >= 1.0 => Ok((length as u32).min(WORD_CHARS_MAX as u32)),
            _ => Err(bad("a fulltext index's 'minLength' must be a number >= 1")),
        },
        Some(_) => Err(bad("a fulltext index's 'minLength' must be a number >= 1")),
    }
}

/// A list of non-empty strings, or 400/10 naming `what`.
fn string_list(value: Option<&Value>, what: &str) -> Result<Vec<String>> {
    let message = || {
        bad(format!(
            "index '{what}' must be an array of attribute paths"
        ))
    };
    let Some(Value::Array(items)) = value else {
        return Err(message());
    };
    items
        .iter()
        .map(|item| match item {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            _ => Err(message()),
        })
        .collect()
}

/// An index name: 1 to 256 bytes, no `/`, no control characters, not all digits (a name of
/// digits could not be told from an id).
fn check_name(name: &str) -> Result<()> {
    let fine = !name.is_empty()
        && name.len() <= NAME_BYTES_MAX
        && !name.contains('/')
        && !name.chars().any(char::is_control)
        && !name.bytes().all(|b| b.is_ascii_digit());
    if fine {
        Ok(())
    } else {
        Err(ArangoError::with_message(
            ARANGO_ILLEGAL_NAME,
            format!("illegal index name '{name}'"),
        ))
    }
}
