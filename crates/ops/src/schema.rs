//! A collection's `schema`: a JSON Schema rule, the level at which it applies, and the message
//! a violation answers, as ArangoDB 3.12 defines them ("Schema Validation").
//!
//! What it is: [`Schema::parse`] (a `schema` property as a client sends it, to a compiled rule:
//! 400/1621 for anything that is not one), [`Schema::to_json`] (the property as ArangoDB
//! reports it: `message`, `level`, `type: "json"`, `rule`), and [`Schema::check`], the rule of
//! the levels: `none` never validates, `new` validates inserts, `moderate` inserts and the
//! updates and replaces of documents that were valid before, `strict` every insert, update and
//! replace. Removals are never validated. A violation is 400/1620 with the schema's message.
//!
//! What it is not: where a write calls it. Both engines call it through
//! [`crate::WriteRules`], after computed values were applied, on the document as it will be
//! stored.
//!
//! Invariants: the system attributes `_key`, `_id`, `_rev`, `_from` and `_to` at the top level
//! are invisible to the rule (in document and edge collections alike), so a rule with
//! `additionalProperties: false` need not name them; remote `$ref`s are never fetched (the
//! validator is built without any retriever, so such a rule is refused when set); the rule is
//! compiled once, when the property is set or the collection is opened.

use quince_errors::{ArangoError, Result, VALIDATION_BAD_PARAMETER, VALIDATION_FAILED};
use serde_json::{Map, Value};

/// The attributes a rule never sees (ArangoDB's system attributes).
const SYSTEM_ATTRIBUTES: [&str; 5] = ["_key", "_id", "_rev", "_from", "_to"];

/// When a schema's rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaLevel {
    /// Never: the rule is kept but inactive.
    None,
    /// Inserts only.
    New,
    /// Inserts, and updates and replaces of documents that passed the rule before.
    Moderate,
    /// Every insert, update and replace (the default).
    Strict,
}

impl SchemaLevel {
    /// The name ArangoDB uses.
    pub fn name(self) -> &'static str {
        match self {
            SchemaLevel::None => "none",
            SchemaLevel::New => "new",
            SchemaLevel::Moderate => "moderate",
            SchemaLevel::Strict => "strict",
        }
    }

    fn parse(name: &str) -> Option<SchemaLevel> {
        [
            SchemaLevel::None,
            SchemaLevel::New,
            SchemaLevel::Moderate,
            SchemaLevel::Strict,
        ]
        .into_iter()
        .find(|level| level.name() == name)
    }
}

/// The kind of write a rule is asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteEvent {
    /// A new document (an insert that did not find its key).
    Insert,
    /// A merge into an existing document (update, or an insert with `overwriteMode: update`).
    Update,
    /// A new version of an existing document (replace, or an insert with `overwriteMode:
    /// replace`).
    Replace,
}

/// A compiled `schema` property.
pub struct Schema {
    level: SchemaLevel,
    /// The error message of a violation (empty when none was given: the violation then answers
    /// the error's default text).
    message: String,
    /// The rule as given, reported back verbatim.
    rule: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("level", &self.level)
            .field("message", &self.message)
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

fn bad_schema(message: String) -> ArangoError {
    ArangoError::with_message(VALIDATION_BAD_PARAMETER, message)
}

impl Schema {
    /// The schema a `schema` property asks for: `None` for `null` and `{}` (no schema), else
    /// an object with `rule` (a JSON Schema object, compiled here as draft 4), optional
    /// `level` (default `strict`), optional `message` (a non-string is ignored, as ArangoDB
    /// ignores it) and optional `type` (only `"json"`). 400/1621 otherwise.
    pub fn parse(property: &Value) -> Result<Option<Schema>> {
        let object = match property {
            Value::Null => return Ok(None),
            Value::Object(object) if object.is_empty() => return Ok(None),
            Value::Object(object) => object,
            _ => return Err(bad_schema("Schema description is not an object.".into())),
        };
        let building = |detail: String| bad_schema(format!("Error when building schema: {detail}"));
        match object.get("type") {
            None | Some(Value::Null) => {}
            Some(Value::String(kind)) if kind == "json" => {}
            Some(other) => {
                return Err(building(format!(
                    "unknown schema type {other}: the only type is \"json\""
                )))
            }
        }
        let level = match object.get("level") {
            None | Some(Value::Null) => SchemaLevel::Strict,
            Some(Value::String(name)) => SchemaLevel::parse(name).ok_or_else(|| {
                building("Valid validation levels are: none, new, moderate, strict".into())
            })?,
            Some(_) => {
                return Err(building(
                    "Valid validation levels are: none, new, moderate, strict".into(),
                ))
            }
        };
        let message = match object.get("message") {
            Some(Value::String(message)) => message.clone(),
            _ => String::new(),
        };
        let rule = match object.get("rule") {
            Some(rule @ Value::Object(_)) => rule.clone(),
            _ => {
                return Err(building(format!(
                    "No valid schema in rule attribute given (no object): {property}"
                )))
            }
        };
        let validator = jsonschema::draft4::new(&rule)
            .map_err(|e| building(format!("invalid rule {rule}: {e}")))?;
        Ok(Some(Schema {
            level,
            message,
            rule,
            validator,
        }))
    }

    /// The level.
    pub fn level(&self) -> SchemaLevel {
        self.level
    }

    /// The property as ArangoDB reports it.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("message".into(), Value::String(self.message.clone()));
        object.insert("level".into(), Value::String(self.level.name().into()));
        object.insert("type".into(), Value::String("json".into()));
        object.insert("rule".into(), self.rule.clone());
        Value::Object(object)
    }

    /// True when `event` is validated at this level (a moderate update or replace also needs
    /// the old version: see [`Schema::check`]).
    pub fn validates(&self, event: WriteEvent) -> bool {
        match self.level {
            SchemaLevel::None => false,
            SchemaLevel::New => event == WriteEvent::Insert,
            SchemaLevel::Moderate | SchemaLevel::Strict => true,
        }
    }

    /// True when `document` (its system attributes ignored) passes the rule. The map is
    /// borrowed mutably only to lend it to the validator without a copy; it is left as it was.
    pub fn is_valid(&self, document: &mut Map<String, Value>) -> bool {
        if SYSTEM_ATTRIBUTES.iter().any(|a| document.contains_key(*a)) {
            let visible: Map<String, Value> = document
                .iter()
                .filter(|(name, _)| !SYSTEM_ATTRIBUTES.contains(&name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect();
            return self.validator.is_valid(&Value::Object(visible));
        }
        // The common case: the validator takes a `&Value`, so the map moves into one for the
        // call and back out after it.
        let value = Value::Object(std::mem::take(document));
        let valid = self.validator.is_valid(&value);
        let Value::Object(back) = value else {
            unreachable!("built as an object above")
        };
        *document = back;
        valid
    }

    /// The level's rule for one write: `new` is the document as it will be stored, `old`
    /// gives the version it replaces (asked for only by a moderate update or replace whose
    /// new version fails). 400/1620 with the schema's message when the write must not happen.
    pub fn check(
        &self,
        event: WriteEvent,
        new: &mut Map<String, Value>,
        old: &mut dyn FnMut() -> Result<Map<String, Value>>,
    ) -> Result<()> {
        if !self.validates(event) || self.is_valid(new) {
            return Ok(());
        }
        if self.level == SchemaLevel::Moderate && event != WriteEvent::Insert {
            // An invalid document may stay invalid; a valid one may not become invalid.
            if !self.is_valid(&mut old()?) {
                return Ok(());
            }
        }
        Err(self.violation())
    }

    /// The error of a violation.
    pub fn violation(&self) -> ArangoError {
        if self.message.is_empty() {
            ArangoError::new(VALIDATION_FAILED)
        } else {
            ArangoError::with_message(VALIDATION_FAILED, self.message.clone())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(o) => o,
            _ => panic!("not an object"),
        }
    }

    fn schema(level: &str) -> Schema {
        Schema::parse(&json!({
            "rule": {"type": "object", "properties": {"n": {"type": "number"}},
                     "required": ["n"], "additionalProperties": false},
            "level": level,
            "message": "n must be a number",
        }))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn null_and_empty_objects_mean_no_schema() {
        assert!(Schema::parse(&Value::Null).unwrap().is_none());
        assert!(Schema::parse(&json!({})).unwrap().is_none());
    }

    #[test]
    fn bad_schemas_are_1621() {
        for bad in [
            json!(1),
            json!("x"),
            json!([]),
            json!({"rule": 1}),
            json!({"level": "strict"}),
            json!({"rule": {}, "level": "sometimes"}),
            json!({"rule": {}, "level": 3}),
            json!({"rule": {"type": 5}}),
            json!({"rule": {}, "type": "bool"}),
        ] {
            let error = Schema::parse(&bad).unwrap_err();
            assert_eq!(error.num(), 1621, "{bad}: {error:?}");
        }
    }

    #[test]
    fn reported_as_arangodb_does() {
        let parsed = Schema::parse(&json!({"rule": {"type": "object"}}))
            .unwrap()
            .unwrap();
        assert_eq!(
            parsed.to_json(),
            json!({"message": "", "level": "strict", "type": "json", "rule": {"type": "object"}})
        );
    }

    #[test]
    fn system_attributes_are_invisible() {
        let s = schema("strict");
        let mut doc = object(
            json!({"_key": "k", "_id": "c/k", "_rev": "1", "_from": "a/b",
                                "_to": "a/c", "n": 1}),
        );
        let before = doc.clone();
        assert!(s.is_valid(&mut doc));
        assert_eq!(doc, before);
        assert!(!s.is_valid(&mut object(json!({"_key": "k", "n": "one"}))));
        let mut plain = object(json!({"n": 1, "m": 2}));
        assert!(!s.is_valid(&mut plain));
        assert_eq!(plain, object(json!({"n": 1, "m": 2})));
    }

    #[test]
    fn levels() {
        let mut good = object(json!({"n": 1}));
        let mut bad = object(json!({"n": "x"}));
        let mut old_good = || Ok(object(json!({"n": 2})));
        let mut old_bad = || Ok(object(json!({"m": 2})));
        let none = schema("none");
        assert!(none
            .check(WriteEvent::Insert, &mut bad, &mut old_good)
            .is_ok());
        let new = schema("new");
        let error = new
            .check(WriteEvent::Insert, &mut bad, &mut old_good)
            .unwrap_err();
        assert_eq!(
            (error.num(), error.message.as_ref()),
            (1620, "n must be a number")
        );
        assert!(new
            .check(WriteEvent::Update, &mut bad, &mut old_good)
            .is_ok());
        let moderate = schema("moderate");
        assert!(moderate
            .check(WriteEvent::Insert, &mut bad, &mut old_bad)
            .is_err());
        assert!(moderate
            .check(WriteEvent::Replace, &mut bad, &mut old_bad)
            .is_ok());
        assert!(moderate
            .check(WriteEvent::Update, &mut bad, &mut old_good)
            .is_err());
        assert!(moderate
            .check(WriteEvent::Update, &mut good, &mut old_bad)
            .is_ok());
        let strict = schema("strict");
        assert!(strict
            .check(WriteEvent::Replace, &mut bad, &mut old_bad)
            .is_err());
    }
}
