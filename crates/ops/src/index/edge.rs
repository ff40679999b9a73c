//! The edge index as every engine shares it: its id, its description, the two directions of a
//! lookup ([`EdgeDirection`]) and how an edge's ends are read from its stored bytes.
//!
//! What it is: ArangoDB's automatic index of an edge collection (type 3): id 1, name `edge`,
//! type `edge`, over `["_from", "_to"]`, neither unique nor sparse, listed right after the
//! primary index. A lookup names a direction and a vertex (`IndexLookup::Edge`): `Out` finds
//! the edges whose `_from` is the vertex, `In` those whose `_to` is. A client can neither
//! create it (400/10, as for every type it cannot create) nor drop it (403/11, ArangoDB's
//! "forbidden" for an index that cannot be dropped).
//!
//! What it is not: the index's structure (the local engine keeps two ordered sets; the fake
//! scans), nor the `_from`/`_to` rules for writes (`quince_model::document::edge_ends`).
//!
//! Invariants: every document of an edge collection has string `_from` and `_to` (the write
//! path refuses others with 1233), so each edge gives exactly one entry per direction; an
//! edge lookup matches by exact string equality, which is AQL's `==` on strings (the
//! collation breaks ties by bytes); hits come in the order of the edges' keys (bytes), and a
//! hit's values are `[the matched vertex, the edge's other end]` (so a graph search that needs
//! no edge data never reads the edge document).

use quince_model::document::stored_object;
use serde_json::{json, Value};

use super::{IndexDescription, IndexType};

/// The id of the edge index in every edge collection (the primary index is 0).
pub const EDGE_INDEX_ID: u64 = 1;

/// The name of the edge index.
pub const EDGE_INDEX_NAME: &str = "edge";

/// Which end of an edge a lookup matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeDirection {
    /// Outbound edges: `_from` is the vertex.
    Out,
    /// Inbound edges: `_to` is the vertex.
    In,
}

impl EdgeDirection {
    /// The attribute this direction matches (`_from` or `_to`).
    pub fn attribute(self) -> &'static str {
        match self {
            EdgeDirection::Out => "_from",
            EdgeDirection::In => "_to",
        }
    }

    /// The direction that matches `attribute` (`_from`: out, `_to`: in).
    pub fn of_attribute(attribute: &str) -> Option<EdgeDirection> {
        match attribute {
            "_from" => Some(EdgeDirection::Out),
            "_to" => Some(EdgeDirection::In),
            _ => None,
        }
    }

    /// The end of `ends` (`(from, to)`) this direction matches.
    pub fn pick(self, ends: &(String, String)) -> &str {
        match self {
            EdgeDirection::Out => &ends.0,
            EdgeDirection::In => &ends.1,
        }
    }

    /// The end of `ends` (`(from, to)`) this direction leads to (the one it does not match).
    pub fn other(self, ends: &(String, String)) -> &str {
        match self {
            EdgeDirection::Out => &ends.1,
            EdgeDirection::In => &ends.0,
        }
    }

    /// An edge-index hit's values for an edge with `ends` found in this direction:
    /// `[matched vertex, other end]`.
    pub fn hit_values(self, ends: &(String, String)) -> Box<[Value]> {
        vec![
            Value::String(self.pick(ends).to_owned()),
            Value::String(self.other(ends).to_owned()),
        ]
        .into_boxed_slice()
    }
}

impl IndexDescription {
    /// The edge index of edge collection `collection`, with its current `selectivity`
    /// (between 0 and 1).
    pub fn edge(collection: &str, selectivity: f64) -> IndexDescription {
        let fields = vec!["_from".to_owned(), "_to".to_owned()];
        IndexDescription {
            id: EDGE_INDEX_ID,
            name: EDGE_INDEX_NAME.to_owned(),
            kind: IndexType::Edge,
            fields: fields.clone(),
            unique: false,
            sparse: false,
            json: json!({
                "fields": fields,
                "id": format!("{collection}/{EDGE_INDEX_ID}"),
                "name": EDGE_INDEX_NAME,
                "selectivityEstimate": super::definition::number(selectivity),
                "sparse": false,
                "type": "edge",
                "unique": false,
            }),
        }
    }
}

/// The edge index's `selectivityEstimate`: the mean of the two directions' distinct vertices
/// per edge (1 when there are no edges), as ArangoDB reports its two halves as one index.
pub fn edge_selectivity(edges: u64, distinct_from: u64, distinct_to: u64) -> f64 {
    if edges == 0 {
        return 1.0;
    }
    (distinct_from as f64 + distinct_to as f64) / (2.0 * edges as f64)
}

/// The `(_from, _to)` of a stored edge document; `None` when it has no string ends (never the
/// case for a document an edge collection accepted).
///
/// The stored form puts `_from` and `_to` right after `_key` and `_rev`
/// (`quince_model::document::encode_document`), so they are read there without parsing the
/// rest; anything else falls back to parsing the whole object.
pub fn stored_edge_ends(stored: &[u8]) -> Option<(String, String)> {
    leading_ends(stored).or_else(|| {
        let object = stored_object(stored);
        match (object.get("_from"), object.get("_to")) {
            (Some(Value::String(from)), Some(Value::String(to))) => {
                Some((from.clone(), to.clone()))
            }
            _ => None,
        }
    })
}

/// The fast path of [`stored_edge_ends`].
fn leading_ends(stored: &[u8]) -> Option<(String, String)> {
    // `{"_key":"<key>","_rev":"<rev>"` holds no quote or escape: keys and revisions are
    // plain ASCII without `"`.
    let rest = stored.strip_prefix(b"{\"_key\":\"")?;
    let rest = skip_past_quote(rest)?.strip_prefix(b",\"_rev\":\"")?;
    let rest = skip_past_quote(rest)?.strip_prefix(b",\"_from\":")?;
    let (from, used) = json_string(rest)?;
    let rest = rest[used..].strip_prefix(b",\"_to\":")?;
    let (to, _) = json_string(rest)?;
    Some((from, to))
}

/// What follows the first `"` of `bytes`.
fn skip_past_quote(bytes: &[u8]) -> Option<&[u8]> {
    let at = bytes.iter().position(|&b| b == b'"')?;
    Some(&bytes[at + 1..])
}

/// The JSON string at the start of `bytes`, and how many bytes it took.
fn json_string(bytes: &[u8]) -> Option<(String, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<String>();
    let value = stream.next()?.ok()?;
    Some((value, stream.byte_offset()))
}

#[cfg(test)]
mod tests {
    use quince_model::document::{encode_document, EdgeEnds};
    use quince_model::rev::RevisionId;
    use serde_json::Map;

    use super::*;

    #[test]
    fn stored_ends_are_read_with_escapes_and_without_the_fast_path() {
        let body: Map<String, Value> =
            serde_json::from_value(json!({"x": 1, "_from": "v/\"a", "_to": "w/é"})).unwrap();
        let ends = EdgeEnds {
            from: "v/\"a",
            to: "w/é",
        };
        let stored = encode_document("k", RevisionId(7), Some(ends), &body);
        let expected = Some(("v/\"a".to_owned(), "w/é".to_owned()));
        assert_eq!(leading_ends(&stored), expected);
        let other = br#"{"_key":"k","_rev":"_x","a":1,"_to":"b/2","_from":"a/1"}"#;
        assert_eq!(leading_ends(other), None);
        assert_eq!(
            stored_edge_ends(other),
            Some(("a/1".to_owned(), "b/2".to_owned()))
        );
        assert_eq!(stored_edge_ends(br#"{"_key":"k","_rev":"_x"}"#), None);
    }

    #[test]
    fn the_description_is_arangodbs() {
        let d = IndexDescription::edge("e", 0.5);
        assert_eq!(d.json["id"], "e/1");
        assert_eq!(d.json["fields"], json!(["_from", "_to"]));
        assert_eq!(d.json["selectivityEstimate"], json!(0.5));
        assert_eq!(
            IndexDescription::edge("e", 1.0).json["selectivityEstimate"],
            1
        );
    }
}
