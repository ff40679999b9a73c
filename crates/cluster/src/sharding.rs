//! Which shard a document belongs to.
//!
//! What it is: [`shard_index`], a hash of the document's shard-key values (a missing attribute
//! counts as `null`) taken modulo the number of shards, as ArangoDB does with its fixed shard
//! list; equal JSON values hash alike whatever their spelling (`1`, `1.0` and `1e0` are one
//! number; object members in any order are one object).
//!
//! What it is not: ArangoDB's VelocyPack hash bit for bit. Clients ask
//! `PUT /_api/collection/{c}/responsibleShard` rather than hash themselves, and shard-level
//! interchange with ArangoDB's files is not a goal.
//!
//! Invariants: deterministic across processes, versions and platforms (the bytes hashed are
//! defined here, not by a library's `Hash`); a document's shard changes only when a shard-key
//! value changes.

use serde_json::{Map, Value};

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(FNV_PRIME);
        }
    }

    fn tag(&mut self, tag: u8) {
        self.bytes(&[tag]);
    }

    fn len(&mut self, len: usize) {
        self.bytes(&(len as u64).to_le_bytes());
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Null => self.tag(0),
            Value::Bool(false) => self.tag(1),
            Value::Bool(true) => self.tag(2),
            Value::Number(number) => {
                self.tag(3);
                let float = number.as_f64().unwrap_or(0.0);
                let float = if float == 0.0 { 0.0 } else { float };
                self.bytes(&float.to_bits().to_le_bytes());
            }
            Value::String(text) => {
                self.tag(4);
                self.len(text.len());
                self.bytes(text.as_bytes());
            }
            Value::Array(items) => {
                self.tag(5);
                self.len(items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(members) => {
                self.tag(6);
                self.len(members.len());
                let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(b.0));
                for (name, member) in sorted {
                    self.len(name.len());
                    self.bytes(name.as_bytes());
                    self.value(member);
                }
            }
        }
    }
}

/// The final mix (splitmix64's), so that consecutive keys spread over the shards.
fn mix(mut hash: u64) -> u64 {
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// The hash of a document's shard-key values.
pub fn shard_hash(shard_keys: &[String], document: &Map<String, Value>) -> u64 {
    let mut fnv = Fnv(FNV_OFFSET);
    for key in shard_keys {
        fnv.value(document.get(key).unwrap_or(&Value::Null));
    }
    mix(fnv.0)
}

/// The index (into the collection's shard list) of the shard that holds `document`.
pub fn shard_index(
    shard_keys: &[String],
    number_of_shards: usize,
    document: &Map<String, Value>,
) -> usize {
    assert!(number_of_shards > 0, "a collection has at least one shard");
    (shard_hash(shard_keys, document) % number_of_shards as u64) as usize
}

/// True when `document` has every shard key (updates, replacements and removals need them to
/// find their shard without asking every one: 1468 otherwise).
pub fn has_all_shard_keys(shard_keys: &[String], document: &Map<String, Value>) -> bool {
    shard_keys.iter().all(|key| document.contains_key(key))
}

/// True for the default shard keys (`["_key"]`): only then may a client choose `_key` (1466).
pub fn is_default_shard_keys(shard_keys: &[String]) -> bool {
    shard_keys.len() == 1 && shard_keys[0] == "_key"
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().expect("an object").clone()
    }

    #[test]
    fn equal_values_hash_alike_whatever_their_spelling() {
        let keys = vec!["a".to_string(), "b".to_string()];
        let one: Map<String, Value> =
            serde_json::from_str(r#"{"a":1,"b":{"x":1,"y":[0]}}"#).unwrap();
        let other: Map<String, Value> =
            serde_json::from_str(r#"{"b":{"y":[-0.0],"x":1.0},"a":1e0}"#).unwrap();
        assert_eq!(shard_hash(&keys, &one), shard_hash(&keys, &other));
        let missing = object(json!({"a": 1}));
        let null = object(json!({"a": 1, "b": null}));
        assert_eq!(shard_hash(&keys, &missing), shard_hash(&keys, &null));
    }

    #[test]
    fn the_hash_is_fixed_across_builds() {
        // A change here moves every existing document to another shard: never change it.
        let keys = vec!["_key".to_string()];
        assert_eq!(
            shard_hash(&keys, &object(json!({"_key": "abc"}))),
            0x3b52_89c8_8cb1_070c_u64
        );
    }

    proptest! {
        #[test]
        fn keys_spread_over_the_shards(start in 0u64..1_000_000) {
            let keys = vec!["_key".to_string()];
            let mut counts = [0usize; 4];
            for n in start..start + 4000 {
                let document = object(json!({"_key": n.to_string()}));
                counts[shard_index(&keys, 4, &document)] += 1;
            }
            for count in counts {
                prop_assert!((800..1200).contains(&count), "{counts:?}");
            }
        }
    }
}
