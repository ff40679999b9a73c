//! The JSON body parser: serde_json, plus two rules ArangoDB enforces on bodies.
//!
//! - Duplicate attribute names in one object are rejected (at any depth).
//! - Nesting deeper than the configured bound is rejected before it can exhaust the stack.
//!
//! Both answer 400 with errorNum 600 (`HTTP_CORRUPTED_JSON`), like malformed JSON. The whole
//! body must be one JSON value; trailing non-whitespace is an error.

use std::fmt;

use quince_errors::{ArangoError, Result, HTTP_CORRUPTED_JSON};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The default nesting bound for request bodies.
pub const JSON_DEPTH_MAX_DEFAULT: usize = 64;

/// The deepest nesting the server ever parses, renders, merges or drops: the most the bound for
/// request bodies may be set to, and the bound for stored documents. Every one of those steps
/// recurses once per level; at this depth they need well under a megabyte of stack even in an
/// unoptimised build (measured: 512 levels fit in a 2 MiB thread unoptimised, 2,000 optimised),
/// and the server's threads have 4 MiB.
pub const JSON_DEPTH_LIMIT: usize = 256;

/// Parses a request body. `depth_max` counts nested arrays and objects (a flat object is 1).
pub fn parse(bytes: &[u8], depth_max: usize) -> Result<Value> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    // Our own depth bound replaces serde_json's fixed one, which is lower than some callers want
    // and answers with a message that does not name the bound.
    de.disable_recursion_limit();
    let value = ValueSeed {
        depth_left: depth_max,
    }
    .deserialize(&mut de)
    .map_err(|e| corrupted(&e.to_string()))?;
    de.end().map_err(|e| corrupted(&e.to_string()))?;
    Ok(value)
}

/// Parses a stored document (its text was checked when it was written, with a bound of at
/// most [`JSON_DEPTH_LIMIT`], so whatever the bound for bodies is now, it parses).
pub fn parse_stored(bytes: &[u8]) -> Result<Value> {
    parse(bytes, JSON_DEPTH_LIMIT)
}

fn corrupted(detail: &str) -> ArangoError {
    ArangoError::with_message(HTTP_CORRUPTED_JSON, format!("VPackError error: {detail}"))
}

struct ValueSeed {
    depth_left: usize,
}

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor {
            depth_left: self.depth_left,
        })
    }
}

struct ValueVisitor {
    depth_left: usize,
}

impl ValueVisitor {
    fn nested<E: de::Error>(&self) -> Result<usize, E> {
        self.depth_left
            .checked_sub(1)
            .ok_or_else(|| E::custom("nesting too deep"))
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth_left = self.nested()?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(ValueSeed { depth_left })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth_left = self.nested()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate attribute name: '{key}'"
                )));
            }
            let value = map.next_value_seed(ValueSeed { depth_left })?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ordinary_json_and_keeps_attribute_order() {
        let v = parse(br#" {"b":1,"a":[true,null,"x",1.5,-3]} "#, 8).unwrap();
        let keys: Vec<_> = v.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(v["a"][4], Value::from(-3));
    }

    #[test]
    fn rejects_duplicate_attributes_at_any_depth() {
        for body in [
            &br#"{"a":1,"a":2}"#[..],
            br#"{"x":{"y":1,"y":1}}"#,
            br#"[{"k":1,"k":1}]"#,
        ] {
            let err = parse(body, 8).unwrap_err();
            assert_eq!(err.num(), 600);
            assert_eq!(err.status, 400);
            assert!(err.message.contains("duplicate"), "{}", err.message);
        }
    }

    #[test]
    fn bounds_nesting() {
        assert!(parse(b"[[[1]]]", 3).is_ok());
        assert_eq!(parse(b"[[[1]]]", 2).unwrap_err().num(), 600);
        let deep = "[".repeat(100_000);
        assert_eq!(parse(deep.as_bytes(), 64).unwrap_err().num(), 600);
    }

    #[test]
    fn rejects_malformed_and_trailing_input() {
        for body in [&b"{"[..], b"{\"a\":}", b"{} x", b"", b"nul"] {
            assert_eq!(parse(body, 8).unwrap_err().num(), 600, "{:?}", body);
        }
    }
}
