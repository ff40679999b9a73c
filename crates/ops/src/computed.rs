//! A collection's `computedValues`: attributes an AQL expression computes on insert, update
//! or replace, as ArangoDB 3.12 defines them ("Computed Values").
//!
//! What it is: [`ComputedValues::parse`] (the property as a client sends it, checked entry by
//! entry and each expression compiled once through an [`ExpressionCompiler`]; 400/10 for
//! anything that is not one), [`ComputedValues::to_json`] (the property as ArangoDB reports
//! it, every option spelled out), and [`ComputedValues::apply`], which computes the values of
//! one write event into the document about to be stored.
//!
//! What it is not: AQL. Parsing and evaluating expressions is `quince-aql`'s (which depends on
//! this crate, so the evaluator comes in through the two traits here); and not the order of the
//! rules of a write ([`crate::WriteRules`] computes, then validates the schema).
//!
//! Invariants (ArangoDB's): every expression of one event sees the same `@doc`: the document
//! as it will be stored before any value of that event is computed, with `_key`, `_id` and
//! `_rev` (and `_from`/`_to` in an edge collection); `_key`, `_id`, `_rev`, `_from` and `_to`
//! are never computed; names are unique; with `overwrite: false` an attribute the client
//! wrote in this very request is kept, and with `keepNull: false` a `null` result leaves the
//! attribute unset (removing a stored one only when `overwrite` is true); a warning fails the
//! write only with `failOnWarning`.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use serde_json::{Map, Value};

use crate::schema::WriteEvent;

/// One compiled expression: `RETURN <expr>` over the bind parameter `@doc`.
pub trait ComputedExpression: Send + Sync {
    /// The expression's value with `@doc` bound to `doc`. A warning is an error when
    /// `fail_on_warning`, and is dropped otherwise.
    fn evaluate(&self, doc: &Value, fail_on_warning: bool) -> Result<Value>;
}

/// Compiles the text of computed-value expressions (implemented over AQL by `quince-aql`).
pub trait ExpressionCompiler: Send + Sync {
    /// The compiled expression, or why `text` is not a computed-value expression: not AQL, not
    /// a single `RETURN`, another bind parameter than `@doc`, a collection, a subquery or a
    /// function that reads data. The error's message is the reason; its code does not matter
    /// (every definition error is reported as 400/10).
    fn compile(&self, text: &str) -> Result<Arc<dyn ComputedExpression>>;
}

/// One computed value.
struct ComputedValue {
    /// The top-level attribute written.
    name: String,
    /// The expression's text, reported back.
    expression: String,
    compiled: Arc<dyn ComputedExpression>,
    /// True: the computed value replaces what the client wrote.
    overwrite: bool,
    /// Computed on insert, update, replace (in that order).
    compute_on: [bool; 3],
    /// False: a `null` result leaves the attribute unset.
    keep_null: bool,
    /// True: a warning fails the write.
    fail_on_warning: bool,
}

/// The compiled `computedValues` of a collection (never empty: no entries is no property).
pub struct ComputedValues {
    values: Vec<ComputedValue>,
}

impl std::fmt::Debug for ComputedValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.values.iter().map(|v| &v.name))
            .finish()
    }
}

const EVENTS: [(WriteEvent, &str); 3] = [
    (WriteEvent::Insert, "insert"),
    (WriteEvent::Update, "update"),
    (WriteEvent::Replace, "replace"),
];

fn event_index(event: WriteEvent) -> usize {
    match event {
        WriteEvent::Insert => 0,
        WriteEvent::Update => 1,
        WriteEvent::Replace => 2,
    }
}

/// A definition error, worded as ArangoDB words it.
fn bad_entry(detail: &str) -> ArangoError {
    ArangoError::with_message(
        BAD_PARAMETER,
        format!("Error when validating computedValues: invalid 'computedValues' entry: {detail}"),
    )
}

impl ComputedValues {
    /// The computed values a `computedValues` property asks for: `None` for `null` and `[]`,
    /// else each entry checked (`name` a non-empty string other than a system attribute and
    /// not repeated; `expression` a string that `compiler` accepts; `overwrite` a boolean;
    /// `computeOn` absent or a non-empty array of `insert`, `update`, `replace`; `keepNull`
    /// and `failOnWarning` booleans when given). 400/10 otherwise.
    pub fn parse(
        property: &Value,
        compiler: &dyn ExpressionCompiler,
    ) -> Result<Option<ComputedValues>> {
        let entries = match property {
            Value::Null => return Ok(None),
            Value::Array(entries) if entries.is_empty() => return Ok(None),
            Value::Array(entries) => entries,
            _ => {
                return Err(ArangoError::with_message(
                    BAD_PARAMETER,
                    "Computed values description is not an array.",
                ))
            }
        };
        let mut values: Vec<ComputedValue> = Vec::with_capacity(entries.len());
        for entry in entries {
            let value = parse_entry(entry, compiler)?;
            if values.iter().any(|v| v.name == value.name) {
                return Err(bad_entry(&format!(
                    "duplicate attribute name '{}'",
                    value.name
                )));
            }
            values.push(value);
        }
        Ok(Some(ComputedValues { values }))
    }

    /// The property as ArangoDB reports it.
    pub fn to_json(&self) -> Value {
        let entries = self
            .values
            .iter()
            .map(|v| {
                let on: Vec<Value> = EVENTS
                    .iter()
                    .filter(|(event, _)| v.compute_on[event_index(*event)])
                    .map(|(_, name)| Value::String((*name).into()))
                    .collect();
                let mut object = Map::new();
                object.insert("name".into(), Value::String(v.name.clone()));
                object.insert("expression".into(), Value::String(v.expression.clone()));
                object.insert("computeOn".into(), Value::Array(on));
                object.insert("overwrite".into(), Value::Bool(v.overwrite));
                object.insert("failOnWarning".into(), Value::Bool(v.fail_on_warning));
                object.insert("keepNull".into(), Value::Bool(v.keep_null));
                Value::Object(object)
            })
            .collect();
        Value::Array(entries)
    }

    /// True when some value is computed on `event`.
    pub fn computes_on(&self, event: WriteEvent) -> bool {
        let at = event_index(event);
        self.values.iter().any(|v| v.compute_on[at])
    }

    /// Computes the values of `event` into `body`, the document about to be stored (without
    /// `_key`, `_id` and `_rev`, which `system` gives: `(key, id, rev)`). `written` is what the
    /// client sent in this request (the patch of an update), for `overwrite: false`.
    pub fn apply(
        &self,
        event: WriteEvent,
        system: (&str, &str, &str),
        body: &mut Map<String, Value>,
        written: &Map<String, Value>,
    ) -> Result<()> {
        let at = event_index(event);
        let mut doc: Option<Value> = None;
        let mut results = Vec::new();
        for value in self.values.iter().filter(|v| v.compute_on[at]) {
            if !value.overwrite && written.contains_key(&value.name) {
                continue;
            }
            // Every value of the event sees the document as it was before any of them.
            let doc = doc.get_or_insert_with(|| document_for(system, body));
            let result = value
                .compiled
                .evaluate(doc, value.fail_on_warning)
                .map_err(|e| {
                    let message = format!(
                        "computed values runtime error for attribute '{}': {}",
                        value.name, e.message
                    );
                    ArangoError::with_message(e.code, message).with_status(e.status)
                })?;
            results.push((value, result));
        }
        for (value, result) in results {
            if result.is_null() && !value.keep_null {
                if value.overwrite {
                    body.shift_remove(&value.name);
                }
                continue;
            }
            body.insert(value.name.clone(), result);
        }
        Ok(())
    }
}

/// `@doc`: the system attributes first, then the body's own attributes.
fn document_for(system: (&str, &str, &str), body: &Map<String, Value>) -> Value {
    let (key, id, rev) = system;
    let mut doc = Map::new();
    doc.insert("_key".into(), Value::String(key.into()));
    doc.insert("_id".into(), Value::String(id.into()));
    doc.insert("_rev".into(), Value::String(rev.into()));
    for (name, value) in body {
        if !matches!(name.as_str(), "_key" | "_id" | "_rev") {
            doc.insert(name.clone(), value.clone());
        }
    }
    Value::Object(doc)
}

fn parse_entry(entry: &Value, compiler: &dyn ExpressionCompiler) -> Result<ComputedValue> {
    let name = match entry.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => return Err(bad_entry("invalid attribute name")),
    };
    if matches!(name.as_str(), "_key" | "_id" | "_rev" | "_from" | "_to") {
        return Err(bad_entry(&format!(
            "'{name}' attribute must not be computed via computation expression"
        )));
    }
    let overwrite = match entry.get("overwrite") {
        Some(Value::Bool(b)) => *b,
        _ => return Err(bad_entry("'overwrite' must be a boolean")),
    };
    let compute_on = match entry.get("computeOn") {
        None => [true; 3],
        Some(Value::Array(names)) => {
            let mut on = [false; 3];
            for name in names {
                let Value::String(name) = name else {
                    return Err(bad_entry("invalid 'computeOn' value"));
                };
                let Some((event, _)) = EVENTS.iter().find(|(_, n)| n == name) else {
                    return Err(bad_entry(&format!("invalid 'computeOn' value: '{name}'")));
                };
                on[event_index(*event)] = true;
            }
            if on == [false; 3] {
                return Err(bad_entry("empty 'computeOn' value"));
            }
            on
        }
        Some(_) => return Err(bad_entry("invalid 'computeOn' value")),
    };
    let expression = match entry.get("expression") {
        Some(Value::String(text)) => text.clone(),
        _ => return Err(bad_entry("invalid 'expression' value")),
    };
    let compiled = compiler
        .compile(&expression)
        .map_err(|e| bad_entry(&e.message))?;
    let flag = |name: &str, default: bool| match entry.get(name) {
        Some(Value::Bool(b)) => *b,
        _ => default,
    };
    Ok(ComputedValue {
        name,
        expression,
        compiled,
        overwrite,
        compute_on,
        keep_null: flag("keepNull", true),
        fail_on_warning: flag("failOnWarning", false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Expressions of the form `RETURN @doc.<name>` or `RETURN <json>`.
    struct Toy;

    struct Attribute(String);
    struct Constant(Value);

    impl ComputedExpression for Attribute {
        fn evaluate(&self, doc: &Value, _: bool) -> Result<Value> {
            Ok(doc.get(&self.0).cloned().unwrap_or(Value::Null))
        }
    }

    impl ComputedExpression for Constant {
        fn evaluate(&self, _: &Value, _: bool) -> Result<Value> {
            Ok(self.0.clone())
        }
    }

    impl ExpressionCompiler for Toy {
        fn compile(&self, text: &str) -> Result<Arc<dyn ComputedExpression>> {
            let rest = text
                .strip_prefix("RETURN ")
                .ok_or_else(|| ArangoError::with_message(BAD_PARAMETER, "needs RETURN"))?;
            if let Some(name) = rest.strip_prefix("@doc.") {
                return Ok(Arc::new(Attribute(name.into())));
            }
            let value = serde_json::from_str(rest)
                .map_err(|_| ArangoError::with_message(BAD_PARAMETER, "syntax error"))?;
            Ok(Arc::new(Constant(value)))
        }
    }

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(o) => o,
            _ => panic!("not an object"),
        }
    }

    fn parse(value: Value) -> Result<Option<ComputedValues>> {
        ComputedValues::parse(&value, &Toy)
    }

    #[test]
    fn definitions_are_checked() {
        assert!(parse(Value::Null).unwrap().is_none());
        assert!(parse(json!([])).unwrap().is_none());
        let cases = [
            (json!({}), "Computed values description is not an array."),
            (
                json!([{"expression": "RETURN 1", "overwrite": true}]),
                "invalid attribute name",
            ),
            (
                json!([{"name": "_key", "expression": "RETURN 1", "overwrite": true}]),
                "'_key' attribute must not be computed",
            ),
            (
                json!([{"name": "a", "expression": "RETURN 1"}]),
                "'overwrite' must be a boolean",
            ),
            (
                json!([{"name": "a", "expression": "RETURN 1", "overwrite": true,
                        "computeOn": []}]),
                "empty 'computeOn' value",
            ),
            (
                json!([{"name": "a", "expression": "RETURN 1", "overwrite": true,
                        "computeOn": ["upsert"]}]),
                "invalid 'computeOn' value: 'upsert'",
            ),
            (
                json!([{"name": "a", "overwrite": true}]),
                "invalid 'expression' value",
            ),
            (
                json!([{"name": "a", "expression": "1", "overwrite": true}]),
                "needs RETURN",
            ),
            (
                json!([{"name": "a", "expression": "RETURN 1", "overwrite": true},
                       {"name": "a", "expression": "RETURN 2", "overwrite": true}]),
                "duplicate attribute name 'a'",
            ),
        ];
        for (property, wanted) in cases {
            let error = parse(property.clone()).unwrap_err();
            assert_eq!(error.num(), 10, "{property}");
            assert!(error.message.contains(wanted), "{property}: {error:?}");
        }
    }

    #[test]
    fn reported_with_every_option() {
        let values = parse(
            json!([{"name": "a", "expression": "RETURN 1", "overwrite": false,
                                   "computeOn": ["replace", "insert"]}]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            values.to_json(),
            json!([{"name": "a", "expression": "RETURN 1", "computeOn": ["insert", "replace"],
                    "overwrite": false, "failOnWarning": false, "keepNull": true}])
        );
        assert!(values.computes_on(WriteEvent::Insert));
        assert!(!values.computes_on(WriteEvent::Update));
    }

    #[test]
    fn overwrite_keep_null_and_one_doc_per_event() {
        let values = parse(json!([
            {"name": "k", "expression": "RETURN @doc._key", "overwrite": true},
            {"name": "kept", "expression": "RETURN 7", "overwrite": false},
            {"name": "gone", "expression": "RETURN null", "overwrite": true, "keepNull": false},
            {"name": "stays", "expression": "RETURN null", "overwrite": false,
             "keepNull": false},
            {"name": "sees", "expression": "RETURN @doc.k", "overwrite": true},
        ]))
        .unwrap()
        .unwrap();
        let written = object(json!({"kept": 1, "k": "mine"}));
        let mut body = object(json!({"kept": 1, "k": "mine", "gone": 2, "stays": 3}));
        values
            .apply(
                WriteEvent::Insert,
                ("key1", "c/key1", "_r"),
                &mut body,
                &written,
            )
            .unwrap();
        assert_eq!(
            Value::Object(body),
            // `sees` read `k` as the client wrote it, not as computed in the same event.
            json!({"kept": 1, "k": "key1", "stays": 3, "sees": "mine"})
        );
    }
}
