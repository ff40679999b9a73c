//! [`WriteRules`]: the per-document rules a collection's properties add to its writes,
//! computed values and then the schema, in the one place every engine calls.
//!
//! What it is: the compiled `schema` and `computedValues` of one collection, built when the
//! properties are set (or the collection is opened), and [`WriteRules::apply`], which an
//! engine calls for each insert, update and replace once it knows the document it is about to
//! store (after merges, with its new `_rev`) and before it encodes it.
//!
//! What it is not: a lock or a place. The engine decides under which lock `apply` runs (the
//! local engine: inside the store's mutate closure, so the old version it validates against
//! is the one it replaces). Removals never reach it.
//!
//! Invariants: an empty set of rules changes nothing and costs one branch; computed values
//! come first, so the schema sees them (ArangoDB's order); a write the rules refuse writes
//! nothing; the rules are immutable (a property change builds new ones and swaps the `Arc`).

use std::borrow::Cow;
use std::sync::Arc;

use quince_errors::{ArangoError, Result, NOT_IMPLEMENTED};
use serde_json::{Map, Value};

use crate::computed::{ComputedValues, ExpressionCompiler};
use crate::schema::{Schema, WriteEvent};

/// A collection's compiled `schema` and `computedValues`.
#[derive(Debug, Default)]
pub struct WriteRules {
    schema: Option<Schema>,
    computed: Option<ComputedValues>,
}

/// What one write tells the rules.
pub struct RuleInput<'a> {
    /// Insert, update or replace (an insert that overwrites is an update or a replace).
    pub event: WriteEvent,
    /// The document's `_key`.
    pub key: &'a str,
    /// Its `_id`.
    pub id: &'a str,
    /// Its new `_rev`.
    pub rev: &'a str,
    /// What the client sent for this document (an update's patch).
    pub written: &'a Map<String, Value>,
    /// `skipDocumentValidation`: the schema is not consulted (computed values still are).
    pub skip_validation: bool,
}

impl WriteRules {
    /// The rules of a collection whose `schema` and `computedValues` properties are these
    /// values (`null` for none). 400/1621 for a bad schema, 400/10 for bad computed values;
    /// computed values need `compiler` (an engine without one refuses them with 501/9).
    pub fn parse(
        schema: &Value,
        computed_values: &Value,
        compiler: Option<&dyn ExpressionCompiler>,
    ) -> Result<WriteRules> {
        let schema = Schema::parse(schema)?;
        let computed = match compiler {
            Some(compiler) => ComputedValues::parse(computed_values, compiler)?,
            None => match computed_values {
                Value::Null => None,
                Value::Array(entries) if entries.is_empty() => None,
                _ => {
                    return Err(ArangoError::with_message(
                        NOT_IMPLEMENTED,
                        "this engine has no expression compiler: computed values cannot be \
                         evaluated",
                    ))
                }
            },
        };
        Ok(WriteRules { schema, computed })
    }

    /// The rules after a property change: each property given replaces its rule (`null`, `{}`
    /// and `[]` remove it), the others are kept.
    pub fn updated(
        &self,
        schema: Option<&Value>,
        computed_values: Option<&Value>,
        compiler: Option<&dyn ExpressionCompiler>,
    ) -> Result<Arc<WriteRules>> {
        let schema = match schema {
            Some(value) => value.clone(),
            None => self.schema_json(),
        };
        let computed = match computed_values {
            Some(value) => value.clone(),
            None => self.computed_values_json(),
        };
        Ok(Arc::new(WriteRules::parse(&schema, &computed, compiler)?))
    }

    /// True when no rule applies to any write.
    pub fn is_empty(&self) -> bool {
        self.schema.is_none() && self.computed.is_none()
    }

    /// True when a write of `event` has something to compute or validate.
    pub fn applies_to(&self, event: WriteEvent) -> bool {
        self.computed.as_ref().is_some_and(|c| c.computes_on(event))
            || self.schema.as_ref().is_some_and(|s| s.validates(event))
    }

    /// The `schema` property as reported (`null` when none).
    pub fn schema_json(&self) -> Value {
        self.schema.as_ref().map_or(Value::Null, Schema::to_json)
    }

    /// The `computedValues` property as reported (`null` when none).
    pub fn computed_values_json(&self) -> Value {
        self.computed
            .as_ref()
            .map_or(Value::Null, ComputedValues::to_json)
    }

    /// Applies the rules to one write: `body` is the document about to be stored (after an
    /// update's merge; system attributes may be in it and are ignored), `old` gives the
    /// version it replaces (asked for only by a moderate schema). The document to store, or
    /// the error that refuses the write (1620, or an expression's failure).
    pub fn apply<'b>(
        &self,
        input: &RuleInput<'_>,
        body: Cow<'b, Map<String, Value>>,
        old: &mut dyn FnMut() -> Result<Map<String, Value>>,
    ) -> Result<Cow<'b, Map<String, Value>>> {
        if !self.applies_to(input.event) {
            return Ok(body);
        }
        let mut body = body.into_owned();
        if let Some(computed) = self
            .computed
            .as_ref()
            .filter(|c| c.computes_on(input.event))
        {
            let system = (input.key, input.id, input.rev);
            computed.apply(input.event, system, &mut body, input.written)?;
        }
        if let Some(schema) = self.schema.as_ref().filter(|_| !input.skip_validation) {
            schema.check(input.event, &mut body, old)?;
        }
        Ok(Cow::Owned(body))
    }
}
