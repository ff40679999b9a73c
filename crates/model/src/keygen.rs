//! Key generators: how a collection picks `_key` when an insert brings none.
//!
//! What it is: [`KeyOptions`] (the `keyOptions` of a collection, parsed and checked) and
//! [`KeyGenerator`] (the options plus the generator's state, `lastValue`). Four types:
//! `traditional` (decimal, increasing), `autoincrement` (decimal, `offset` + n * `increment`),
//! `padded` (16 lowercase hex digits, increasing, so they sort as text) and `uuid` (random v4).
//!
//! What it is not: persistence. The database layer stores [`KeyGenerator::report`] with the
//! collection's parameters and, on open, also [`KeyGenerator::track`]s every stored key, so
//! `lastValue` never falls behind a key that exists.
//!
//! Invariants: a generated key is a legal key; `lastValue` only grows; a generated
//! traditional, padded or autoincrement key is greater than every tracked user key of the
//! same shape, so generated keys do not collide with user keys.

use std::sync::atomic::{AtomicU64, Ordering};

use quince_errors::{
    ArangoError, Result, ARANGO_DOCUMENT_KEY_BAD, ARANGO_DOCUMENT_KEY_UNEXPECTED,
    ARANGO_INVALID_KEY_GENERATOR, ARANGO_OUT_OF_KEYS,
};
use serde_json::{json, Map, Value};

use crate::key::validate_key;

/// The largest `increment` of an autoincrement generator.
pub const AUTOINCREMENT_INCREMENT_MAX: u64 = 65_535;

/// The names of the generator types, as `GET /_api/key-generators` lists them.
pub const KEY_GENERATOR_NAMES: [&str; 4] = ["padded", "autoincrement", "traditional", "uuid"];

/// Which generator, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyGeneratorType {
    /// Increasing decimal numbers.
    Traditional,
    /// Decimal numbers `offset + n * increment`.
    Autoincrement {
        /// The step between keys (1..=65535).
        increment: u64,
        /// The first key.
        offset: u64,
    },
    /// Increasing numbers as 16 lowercase hex digits.
    Padded,
    /// Random (v4) UUIDs.
    Uuid,
}

impl KeyGeneratorType {
    /// The name used in `keyOptions.type`.
    pub fn name(self) -> &'static str {
        match self {
            KeyGeneratorType::Traditional => "traditional",
            KeyGeneratorType::Autoincrement { .. } => "autoincrement",
            KeyGeneratorType::Padded => "padded",
            KeyGeneratorType::Uuid => "uuid",
        }
    }
}

/// A collection's `keyOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyOptions {
    /// The generator.
    pub kind: KeyGeneratorType,
    /// Whether inserts may bring their own `_key` (1222 otherwise).
    pub allow_user_keys: bool,
}

impl Default for KeyOptions {
    fn default() -> Self {
        KeyOptions {
            kind: KeyGeneratorType::Traditional,
            allow_user_keys: true,
        }
    }
}

fn invalid(detail: &str) -> ArangoError {
    ArangoError::with_message(
        ARANGO_INVALID_KEY_GENERATOR,
        format!("invalid key generator: {detail}"),
    )
}

impl KeyOptions {
    /// Parses `keyOptions` as a client sent them (absent or null: the defaults). An unknown
    /// type, or `increment`/`offset` for a type other than autoincrement, is 400/1232.
    /// A `lastValue` in the request is ignored.
    pub fn parse(value: Option<&Value>) -> Result<KeyOptions> {
        let object = match value {
            None | Some(Value::Null) => return Ok(KeyOptions::default()),
            Some(Value::Object(object)) => object,
            Some(_) => return Err(invalid("keyOptions must be an object")),
        };
        let allow_user_keys = object
            .get("allowUserKeys")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let type_name = match object.get("type") {
            None | Some(Value::Null) => "traditional",
            Some(Value::String(name)) => name.as_str(),
            Some(_) => return Err(invalid("type must be a string")),
        };
        let increment = number_field(object, "increment")?;
        let offset = number_field(object, "offset")?;
        let kind = match type_name {
            "autoincrement" => {
                let increment = increment.unwrap_or(1);
                if increment == 0 || increment > AUTOINCREMENT_INCREMENT_MAX {
                    return Err(invalid("increment must be between 1 and 65535"));
                }
                let offset = offset.unwrap_or(0);
                if offset == u64::MAX {
                    return Err(invalid("offset is too large"));
                }
                KeyGeneratorType::Autoincrement { increment, offset }
            }
            other => {
                if increment.is_some() || offset.is_some() {
                    return Err(invalid(
                        "increment and offset are only valid for autoincrement",
                    ));
                }
                match other {
                    "traditional" => KeyGeneratorType::Traditional,
                    "padded" => KeyGeneratorType::Padded,
                    "uuid" => KeyGeneratorType::Uuid,
                    _ => return Err(invalid(&format!("unknown type '{other}'"))),
                }
            }
        };
        Ok(KeyOptions {
            kind,
            allow_user_keys,
        })
    }
}

/// A non-negative integer option, absent when missing or null.
fn number_field(object: &Map<String, Value>, name: &str) -> Result<Option<u64>> {
    match object.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => {
            let number = value.as_u64().or_else(|| {
                // Clients in languages without integers send 5.0 for 5.
                value
                    .as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
                    .map(|f| f as u64)
            });
            number
                .map(Some)
                .ok_or_else(|| invalid(&format!("{name} must be a non-negative integer")))
        }
    }
}

/// A collection's key generator: options plus `lastValue`. Thread-safe.
#[derive(Debug)]
pub struct KeyGenerator {
    options: KeyOptions,
    /// The highest numeric key generated or tracked (0 for none; unused by uuid).
    last_value: AtomicU64,
}

impl KeyGenerator {
    /// A generator that continues after `last_value`.
    pub fn new(options: KeyOptions, last_value: u64) -> KeyGenerator {
        KeyGenerator {
            options,
            last_value: AtomicU64::new(last_value),
        }
    }

    /// A generator from the form [`KeyGenerator::report`] wrote (parameters on disk).
    pub fn from_stored(value: &Value) -> Result<KeyGenerator> {
        let options = KeyOptions::parse(Some(value))?;
        let last_value = value.get("lastValue").and_then(Value::as_u64).unwrap_or(0);
        Ok(KeyGenerator::new(options, last_value))
    }

    /// The options.
    pub fn options(&self) -> KeyOptions {
        self.options
    }

    /// The highest numeric key generated or tracked so far.
    pub fn last_value(&self) -> u64 {
        self.last_value.load(Ordering::Acquire)
    }

    /// A new key. 500/1225 when the numeric space is used up.
    pub fn generate(&self) -> Result<String> {
        match self.options.kind {
            KeyGeneratorType::Traditional => {
                Ok(self.advance(|last| last.checked_add(1))?.to_string())
            }
            KeyGeneratorType::Padded => Ok(format!(
                "{:016x}",
                self.advance(|last| last.checked_add(1))?
            )),
            KeyGeneratorType::Autoincrement { increment, offset } => {
                let next = self.advance(|last| {
                    if last < offset {
                        Some(offset)
                    } else {
                        (last - offset)
                            .checked_div(increment)
                            .and_then(|steps| steps.checked_add(1))
                            .and_then(|steps| steps.checked_mul(increment))
                            .and_then(|delta| delta.checked_add(offset))
                    }
                })?;
                Ok(next.to_string())
            }
            KeyGeneratorType::Uuid => Ok(uuid::Uuid::new_v4().to_string()),
        }
    }

    /// Moves `lastValue` to `step(lastValue)` atomically and returns the new value.
    fn advance(&self, step: impl Fn(u64) -> Option<u64>) -> Result<u64> {
        let mut last = self.last_value.load(Ordering::Acquire);
        loop {
            let next = step(last).ok_or_else(|| ArangoError::new(ARANGO_OUT_OF_KEYS))?;
            assert!(
                next > last,
                "key generator went backwards: {last} -> {next}"
            );
            match self.last_value.compare_exchange_weak(
                last,
                next,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok(next),
                Err(current) => last = current,
            }
        }
    }

    /// Checks a key an insert brought: 1222 when user keys are not allowed, 1221 when illegal
    /// (for autoincrement also when not all digits). A legal key is tracked.
    pub fn accept_user_key(&self, key: &str) -> Result<()> {
        if !self.options.allow_user_keys {
            return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_UNEXPECTED));
        }
        validate_key(key)?;
        if matches!(self.options.kind, KeyGeneratorType::Autoincrement { .. })
            && !key.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD));
        }
        self.track(key);
        Ok(())
    }

    /// Makes later generated keys exceed `key` when it has the generator's shape (decimal for
    /// traditional and autoincrement, 16 lowercase hex digits for padded).
    pub fn track(&self, key: &str) {
        let value = match self.options.kind {
            KeyGeneratorType::Traditional | KeyGeneratorType::Autoincrement { .. } => {
                if key.bytes().all(|b| b.is_ascii_digit()) {
                    key.parse::<u64>().ok()
                } else {
                    None
                }
            }
            KeyGeneratorType::Padded => {
                if key.len() == 16 && key.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
                    u64::from_str_radix(key, 16).ok()
                } else {
                    None
                }
            }
            KeyGeneratorType::Uuid => None,
        };
        if let Some(value) = value {
            self.last_value.fetch_max(value, Ordering::AcqRel);
        }
    }

    /// Makes later generated keys exceed `value` (a `lastValue` recorded earlier).
    pub fn observe(&self, value: u64) {
        self.last_value.fetch_max(value, Ordering::AcqRel);
    }

    /// `keyOptions` as properties report them (and as they are stored):
    /// `{type, allowUserKeys, lastValue[, increment, offset]}`; uuid has no `lastValue`.
    pub fn report(&self) -> Value {
        let mut out = Map::new();
        out.insert("type".into(), json!(self.options.kind.name()));
        out.insert("allowUserKeys".into(), json!(self.options.allow_user_keys));
        match self.options.kind {
            KeyGeneratorType::Uuid => {}
            KeyGeneratorType::Autoincrement { increment, offset } => {
                out.insert("increment".into(), json!(increment));
                out.insert("offset".into(), json!(offset));
                out.insert("lastValue".into(), json!(self.last_value()));
            }
            _ => {
                out.insert("lastValue".into(), json!(self.last_value()));
            }
        }
        Value::Object(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::is_valid_key;
    use proptest::prelude::*;

    fn generator(options: Value) -> KeyGenerator {
        KeyGenerator::new(KeyOptions::parse(Some(&options)).unwrap(), 0)
    }

    #[test]
    fn defaults_are_traditional_with_user_keys() {
        assert_eq!(KeyOptions::parse(None).unwrap(), KeyOptions::default());
        assert_eq!(
            KeyOptions::parse(Some(&Value::Null)).unwrap(),
            KeyOptions::default()
        );
        let g = generator(json!({}));
        assert_eq!(g.generate().unwrap(), "1");
        assert_eq!(g.generate().unwrap(), "2");
        assert_eq!(
            g.report(),
            json!({"type": "traditional", "allowUserKeys": true, "lastValue": 2})
        );
    }

    #[test]
    fn traditional_tracks_numeric_user_keys() {
        let g = generator(json!({"type": "traditional"}));
        g.accept_user_key("100").unwrap();
        g.accept_user_key("abc").unwrap();
        assert_eq!(g.generate().unwrap(), "101");
        g.accept_user_key("50").unwrap();
        assert_eq!(g.generate().unwrap(), "102");
    }

    #[test]
    fn autoincrement_steps_from_the_offset() {
        let g = generator(json!({"type": "autoincrement", "increment": 5, "offset": 10}));
        assert_eq!(g.generate().unwrap(), "10");
        assert_eq!(g.generate().unwrap(), "15");
        g.accept_user_key("17").unwrap();
        assert_eq!(g.generate().unwrap(), "20");
        assert_eq!(g.accept_user_key("abc").unwrap_err().num(), 1221);
        assert_eq!(
            g.report(),
            json!({"type": "autoincrement", "allowUserKeys": true, "increment": 5, "offset": 10,
                   "lastValue": 20})
        );
        let plain = generator(json!({"type": "autoincrement"}));
        assert_eq!(plain.generate().unwrap(), "1");
        assert_eq!(plain.generate().unwrap(), "2");
    }

    #[test]
    fn padded_keys_are_sixteen_hex_digits_and_sort() {
        let g = generator(json!({"type": "padded"}));
        let a = g.generate().unwrap();
        assert_eq!(a, "0000000000000001");
        g.accept_user_key("00000000000000ff").unwrap();
        let b = g.generate().unwrap();
        assert_eq!(b, "0000000000000100");
        assert!(a < b);
    }

    #[test]
    fn uuid_keys_are_canonical() {
        let g = generator(json!({"type": "uuid"}));
        let k = g.generate().unwrap();
        assert_eq!(k.len(), 36);
        assert!(k
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f' | b'-')));
        assert_ne!(k, g.generate().unwrap());
        assert_eq!(g.report(), json!({"type": "uuid", "allowUserKeys": true}));
    }

    #[test]
    fn user_keys_can_be_forbidden() {
        let g = generator(json!({"allowUserKeys": false}));
        assert_eq!(g.accept_user_key("x").unwrap_err().num(), 1222);
        let open = generator(json!({}));
        assert_eq!(open.accept_user_key("a b").unwrap_err().num(), 1221);
    }

    #[test]
    fn bad_options_answer_1232() {
        for bad in [
            json!({"type": "nope"}),
            json!({"type": "traditional", "increment": 2}),
            json!({"type": "padded", "offset": 2}),
            json!({"type": "autoincrement", "increment": 0}),
            json!({"type": "autoincrement", "increment": 70000}),
            json!({"type": "autoincrement", "offset": -1}),
            json!("traditional"),
        ] {
            let err = KeyOptions::parse(Some(&bad)).unwrap_err();
            assert_eq!(err.num(), 1232, "{bad}");
            assert_eq!(err.status, 400);
        }
    }

    #[test]
    fn stored_form_restores_last_value() {
        let g = generator(json!({"type": "padded", "allowUserKeys": false}));
        g.generate().unwrap();
        g.generate().unwrap();
        let again = KeyGenerator::from_stored(&g.report()).unwrap();
        assert_eq!(again.options(), g.options());
        assert_eq!(again.generate().unwrap(), "0000000000000003");
    }

    #[test]
    fn running_out_of_keys_is_an_error() {
        let g = KeyGenerator::new(KeyOptions::default(), u64::MAX);
        assert_eq!(g.generate().unwrap_err().num(), 1225);
    }

    proptest! {
        #[test]
        fn autoincrement_keys_follow_the_formula(
            increment in 1u64..1000, offset in 0u64..1000, user in 0u64..100_000,
        ) {
            let g = generator(json!({"type": "autoincrement", "increment": increment,
                                     "offset": offset}));
            g.accept_user_key(&user.to_string()).unwrap();
            let next: u64 = g.generate().unwrap().parse().unwrap();
            prop_assert!(next > user || (user < offset && next == offset));
            prop_assert!(next >= offset);
            prop_assert_eq!((next - offset) % increment, 0);
        }

        #[test]
        fn generated_keys_are_legal_and_increasing(kind in 0usize..3, n in 1usize..50) {
            let name = ["traditional", "padded", "autoincrement"][kind];
            let g = generator(json!({"type": name}));
            let mut last = 0u64;
            for _ in 0..n {
                let key = g.generate().unwrap();
                prop_assert!(is_valid_key(&key));
                let value = if name == "padded" {
                    u64::from_str_radix(&key, 16).unwrap()
                } else {
                    key.parse().unwrap()
                };
                prop_assert!(value > last);
                last = value;
            }
        }
    }
}
