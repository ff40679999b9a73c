//! Reading only some top-level attributes of a stored document.
//!
//! What it is: [`project`], which walks a document's JSON text once and builds an object of
//! just the named attributes, skipping every other value without building it (the
//! `reduce-extraction-to-projection` rule asks for it when a loop's variable is only read as
//! `x.name` for those names).
//!
//! What it is not: a JSON validator beyond what the skip needs: stored documents are valid
//! JSON objects written by the engine.
//!
//! Invariants: the object holds exactly the named attributes the document has, with the
//! values a full parse would give; a name the document lacks is absent (reading it gives
//! `null`, as it would from the whole document).

use std::fmt;

use quince_errors::{ArangoError, Result};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};

/// The attributes `names` of the JSON object `json`.
pub fn project(json: &[u8], names: &[String]) -> Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_slice(json);
    Projection(names)
        .deserialize(&mut deserializer)
        .map_err(|e| {
            ArangoError::with_message(
                quince_errors::INTERNAL,
                format!("a stored document is not valid JSON: {e}"),
            )
        })
}

struct Projection<'n>(&'n [String]);

impl<'de> DeserializeSeed<'de> for Projection<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Projection<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut out = Map::new();
        let mut left = self.0.len();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            let wanted = left > 0 && self.0.iter().any(|n| n.as_str() == key.as_str());
            if wanted {
                let value: Value = map.next_value()?;
                out.insert(key.as_str().to_owned(), value);
                left -= 1;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(Value::Object(out))
    }
}

/// An attribute name, borrowed from the input when it has no escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an attribute name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> std::result::Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E>(self, v: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> std::result::Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_exactly_the_named_attributes() {
        let doc = br#"{"_key":"k1","a":{"x":[1,2,{"y":"z"}]},"b":"s\"q","c":null,"d\u0065":5}"#;
        let names = vec![
            "a".to_owned(),
            "c".to_owned(),
            "de".to_owned(),
            "missing".to_owned(),
        ];
        assert_eq!(
            project(doc, &names).unwrap(),
            json!({"a": {"x": [1, 2, {"y": "z"}]}, "c": null, "de": 5})
        );
        assert_eq!(project(doc, &[]).unwrap(), json!({}));
    }
}
