//! [`FieldPath`] (one indexed attribute path: `a.b`, `tags[*]`, `items[*].sku`) and
//! [`IndexSpec`] (a definition with its paths parsed): the entries a document gives an index.
//!
//! What it is: the one function every engine uses to turn a document into index entries, so
//! the local engine, the fake and a transaction's view of its own writes agree.
//!
//! What it is not: an index. Nothing is kept here.
//!
//! Invariants: entries are tuples with one value per field, in field order; a sparse index
//! gets none for a document with a null or missing indexed value; an array field gives one
//! entry per element, and none when the attribute is not an array; with `deduplicate` a
//! document's entries are distinct (by `compare_values`); a ttl index's one value is the
//! document's date in seconds since the epoch (a number), and a document whose attribute is
//! not a date gives none.

use std::cmp::Ordering;

use std::borrow::Cow;
use std::fmt;

use quince_errors::{ArangoError, Result, BAD_PARAMETER, INTERNAL, RESOURCE_LIMIT};
use quince_model::order::compare_values;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

use super::definition::{IndexDefinition, IndexType, ENTRIES_PER_DOCUMENT_MAX};
use super::lookup::compare_entries;
use super::time::ttl_seconds;
use super::{fulltext, geo};

/// The marker of array expansion in an attribute path.
const EXPANSION: &str = "[*]";

/// One attribute path of an index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldPath {
    /// The attribute names down to the value (or to the array, for an expansion).
    before: Vec<String>,
    /// True for `path[*]...`: each element of the array is indexed.
    expands: bool,
    /// The attribute names inside each element, after `[*]` (often none).
    after: Vec<String>,
}

fn bad_path(path: &str) -> ArangoError {
    ArangoError::with_message(
        BAD_PARAMETER,
        format!("invalid attribute path '{path}' in index fields"),
    )
}

impl FieldPath {
    /// Parses `a.b`, `a[*]` or `a[*].b`: non-empty names separated by dots, at most one `[*]`
    /// directly after a name.
    pub fn parse(path: &str) -> Result<FieldPath> {
        let names = |text: &str| -> Result<Vec<String>> {
            text.split('.')
                .map(|name| {
                    if name.is_empty() || name.contains('[') || name.contains(']') {
                        Err(bad_path(path))
                    } else {
                        Ok(name.to_owned())
                    }
                })
                .collect()
        };
        match path.split_once(EXPANSION) {
            None => Ok(FieldPath {
                before: names(path)?,
                expands: false,
                after: Vec::new(),
            }),
            Some((head, tail)) => {
                let after = match tail {
                    "" => Vec::new(),
                    _ => names(tail.strip_prefix('.').ok_or_else(|| bad_path(path))?)?,
                };
                Ok(FieldPath {
                    before: names(head)?,
                    expands: true,
                    after,
                })
            }
        }
    }

    /// True for an array field (`[*]`).
    pub fn expands(&self) -> bool {
        self.expands
    }

    /// The attribute names down to the value of a path without `[*]` (`None` for an array
    /// field).
    pub fn attributes(&self) -> Option<&[String]> {
        (!self.expands).then_some(self.before.as_slice())
    }
}

/// The value at `names` below `value`, if every step is an object holding the name.
fn walk<'v>(mut value: &'v Value, names: &[String]) -> Option<&'v Value> {
    for name in names {
        value = value.as_object()?.get(name)?;
    }
    Some(value)
}

/// What one field gives a document: the candidate values of that position of an entry.
enum Candidates<'v> {
    One(&'v Value),
    Many(Vec<&'v Value>),
}

/// A definition with its paths parsed: what an engine keeps per index.
#[derive(Clone, Debug)]
pub struct IndexSpec {
    /// The definition.
    pub definition: IndexDefinition,
    /// The parsed `fields`, in order.
    paths: Vec<FieldPath>,
}

/// The null a missing attribute is indexed as.
static NULL: Value = Value::Null;

impl IndexSpec {
    /// Parses the paths of a valid definition.
    pub fn new(definition: IndexDefinition) -> Result<IndexSpec> {
        let paths = definition
            .fields
            .iter()
            .map(|field| FieldPath::parse(field))
            .collect::<Result<Vec<_>>>()?;
        Ok(IndexSpec { definition, paths })
    }

    /// The entries `document` (a stored document's object) gives this index, sorted in index
    /// order (duplicates kept unless `deduplicate`). 32 when they exceed
    /// [`ENTRIES_PER_DOCUMENT_MAX`].
    pub fn entries(&self, document: &Map<String, Value>) -> Result<Vec<Box<[Value]>>> {
        match self.definition.kind {
            IndexType::Ttl => return Ok(self.ttl_entry(document).into_iter().collect()),
            IndexType::Geo => return Ok(self.geo_entry(document).into_iter().collect()),
            IndexType::Fulltext => return self.fulltext_entries(document),
            _ => {}
        }
        let sparse = self.definition.sparse;
        let mut positions: Vec<Candidates<'_>> = Vec::with_capacity(self.paths.len());
        for path in &self.paths {
            let root = walk_object(document, &path.before);
            if path.expands {
                let Some(Value::Array(items)) = root else {
                    return Ok(Vec::new());
                };
                let values: Vec<&Value> = items
                    .iter()
                    .filter_map(|item| match walk(item, &path.after) {
                        Some(Value::Null) | None if sparse => None,
                        Some(value) => Some(value),
                        None => Some(&NULL),
                    })
                    .collect();
                if values.is_empty() {
                    return Ok(Vec::new());
                }
                positions.push(Candidates::Many(values));
            } else {
                match root {
                    Some(Value::Null) | None if sparse => return Ok(Vec::new()),
                    Some(value) => positions.push(Candidates::One(value)),
                    None => positions.push(Candidates::One(&NULL)),
                }
            }
        }
        // At most one field expands, so the entries are that field's elements with the
        // other fields' one value each.
        let count = positions
            .iter()
            .map(|p| match p {
                Candidates::One(_) => 1,
                Candidates::Many(values) => values.len(),
            })
            .max()
            .unwrap_or(1);
        if count > ENTRIES_PER_DOCUMENT_MAX {
            return Err(ArangoError::with_message(
                RESOURCE_LIMIT,
                format!(
                    "a document gives index '{}' {count} entries, more than the {} allowed",
                    self.definition.name, ENTRIES_PER_DOCUMENT_MAX
                ),
            ));
        }
        let mut entries: Vec<Box<[Value]>> = (0..count)
            .map(|i| {
                positions
                    .iter()
                    .map(|p| match p {
                        Candidates::One(value) => (*value).clone(),
                        Candidates::Many(values) => values[i].clone(),
                    })
                    .collect()
            })
            .collect();
        if entries.len() > 1 {
            entries.sort_by(|a, b| compare_entries(a, b));
            if self.definition.deduplicate {
                entries.dedup_by(|a, b| compare_entries(a, b) == Ordering::Equal);
            }
        }
        Ok(entries)
    }

    /// [`IndexSpec::entries`] of a stored document's JSON text, reading only the top-level
    /// attributes the index needs (the others are skipped unparsed): what rebuilding an index
    /// over every document costs is mostly this.
    pub fn entries_of_json(&self, json: &[u8]) -> Result<Vec<Box<[Value]>>> {
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let document = Needed(&self.paths)
            .deserialize(&mut deserializer)
            .map_err(|e| {
                ArangoError::with_message(INTERNAL, format!("a stored document is not JSON: {e}"))
            })?;
        self.entries(&document)
    }

    /// A ttl index's entry: the date in seconds, if the attribute holds one.
    fn ttl_entry(&self, document: &Map<String, Value>) -> Option<Box<[Value]>> {
        let value = walk_object(document, &self.paths[0].before)?;
        let seconds = ttl_seconds(value)?;
        let number = serde_json::Number::from_f64(seconds)?;
        Some(vec![Value::Number(number)].into_boxed_slice())
    }

    /// A geo index's entry: `[cell, latitude, longitude]`, if the attributes hold a location.
    fn geo_entry(&self, document: &Map<String, Value>) -> Option<Box<[Value]>> {
        let values = self
            .paths
            .iter()
            .map(|path| walk_object(document, &path.before))
            .collect::<Option<Vec<&Value>>>()?;
        let geo_json = self.definition.geo.is_some_and(|g| g.geo_json);
        let (lat, lon) = geo::location(&values, geo_json)?;
        geo::entry(lat, lon)
    }

    /// A fulltext index's entries: `[word]` for each distinct word, in word order. 32 when
    /// there are more than [`ENTRIES_PER_DOCUMENT_MAX`].
    fn fulltext_entries(&self, document: &Map<String, Value>) -> Result<Vec<Box<[Value]>>> {
        let Some(value) = walk_object(document, &self.paths[0].before) else {
            return Ok(Vec::new());
        };
        let mut words = std::collections::BTreeSet::new();
        let min_length = self.definition.min_length.unwrap_or(2) as usize;
        fulltext::words(value, min_length, &mut words);
        if words.len() > ENTRIES_PER_DOCUMENT_MAX {
            return Err(ArangoError::with_message(
                RESOURCE_LIMIT,
                format!(
                    "a document gives index '{}' {} words, more than the {} allowed",
                    self.definition.name,
                    words.len(),
                    ENTRIES_PER_DOCUMENT_MAX
                ),
            ));
        }
        Ok(words
            .iter()
            .map(|word| vec![fulltext::word_value(word)].into_boxed_slice())
            .collect())
    }

    /// True when the entries of one document conflict with each other in a unique index
    /// (only possible without `deduplicate`: an array with equal elements).
    pub fn self_conflict(&self, entries: &[Box<[Value]>]) -> bool {
        self.definition.unique
            && entries
                .windows(2)
                .any(|w| compare_entries(&w[0], &w[1]) == Ordering::Equal)
    }
}

/// Reads a JSON object keeping only the attributes the paths start with.
struct Needed<'p>(&'p [FieldPath]);

impl Needed<'_> {
    fn wants(&self, name: &str) -> bool {
        self.0
            .iter()
            .any(|path| path.before.first().is_some_and(|first| first == name))
    }
}

impl<'de> DeserializeSeed<'de> for Needed<'_> {
    type Value = Map<String, Value>;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Needed<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        let mut document = Map::new();
        while let Some(Name(name)) = map.next_key::<Name<'de>>()? {
            if self.wants(&name) {
                let value: Value = map.next_value()?;
                document.insert(name.into_owned(), value);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(document)
    }
}

/// An attribute name, borrowed from the input when it has no escapes.
struct Name<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Name<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an attribute name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(NameVisitor)
    }
}

/// [`walk`] from a document's top-level object.
fn walk_object<'v>(document: &'v Map<String, Value>, names: &[String]) -> Option<&'v Value> {
    let (first, rest) = names.split_first()?;
    walk(document.get(first)?, rest)
}

/// True when two values are equal in AQL's order.
pub(crate) fn equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}
