//! Update (PATCH) semantics: how a patch is merged into a stored document, and the 3.12
//! `versionAttribute` rule that decides whether a write happens at all.
//!
//! What it is: [`merge_patch`] with `keepNull` and `mergeObjects`, [`strip_nulls`] and
//! [`version_allows_write`].
//!
//! What it is not: preconditions (`_rev`, `If-Match`) or edge validation; the database layer
//! checks those before it merges.
//!
//! Invariants: `_key`, `_id` and `_rev` of the stored document are never changed by a patch
//! (they are immutable); `_from` and `_to` are ordinary attributes here, so an update may change
//! them. Attribute order is kept: existing attributes stay where they are, new ones are
//! appended in patch order.

use serde_json::{Map, Value};

/// Top-level attributes that neither replace nor update may change.
pub const IMMUTABLE_ATTRIBUTES: [&str; 3] = ["_key", "_id", "_rev"];

/// The update options that shape a merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeOptions {
    /// False: an attribute whose patch value is null is removed (top level and inside nested
    /// objects, never inside arrays).
    pub keep_null: bool,
    /// False: an object value in the patch replaces the stored value instead of merging into it.
    pub merge_objects: bool,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            keep_null: true,
            merge_objects: true,
        }
    }
}

/// The document after applying `patch` to `stored`.
pub fn merge_patch(
    stored: &Map<String, Value>,
    patch: &Map<String, Value>,
    options: MergeOptions,
) -> Map<String, Value> {
    let mut merged = stored.clone();
    merge_into(&mut merged, patch, options, true);
    merged
}

fn merge_into(
    target: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    options: MergeOptions,
    top_level: bool,
) {
    for (name, value) in patch {
        if top_level && IMMUTABLE_ATTRIBUTES.contains(&name.as_str()) {
            continue;
        }
        match value {
            Value::Null if !options.keep_null => {
                // `shift_remove` keeps the order of the remaining attributes.
                target.shift_remove(name);
            }
            Value::Object(patch_object) => {
                if options.merge_objects {
                    if let Some(Value::Object(existing)) = target.get_mut(name) {
                        merge_into(existing, patch_object, options, false);
                        continue;
                    }
                }
                let mut fresh = patch_object.clone();
                if !options.keep_null {
                    strip_nulls(&mut fresh);
                }
                target.insert(name.clone(), Value::Object(fresh));
            }
            other => {
                target.insert(name.clone(), other.clone());
            }
        }
    }
}

/// Removes null-valued attributes from `object` and from objects nested in it (not from
/// arrays), as `keepNull=false` does for values it writes.
pub fn strip_nulls(object: &mut Map<String, Value>) {
    object.retain(|_, value| !value.is_null());
    for value in object.values_mut() {
        if let Value::Object(nested) = value {
            strip_nulls(nested);
        }
    }
}

/// The 3.12 `versionAttribute` rule: the write happens only when the new version is greater
/// than the stored one. It happens unconditionally when either value is missing, not a number
/// or negative. Fractional versions compare by their integer part.
pub fn version_allows_write(
    stored: &Map<String, Value>,
    incoming: &Map<String, Value>,
    attribute: &str,
) -> bool {
    let version = |doc: &Map<String, Value>| {
        doc.get(attribute)
            .and_then(Value::as_f64)
            .filter(|v| *v >= 0.0)
            .map(f64::floor)
    };
    match (version(stored), version(incoming)) {
        (Some(stored), Some(incoming)) => incoming > stored,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn merge(stored: Value, patch: Value, keep_null: bool, merge_objects: bool) -> Value {
        let options = MergeOptions {
            keep_null,
            merge_objects,
        };
        Value::Object(merge_patch(&obj(stored), &obj(patch), options))
    }

    #[test]
    fn merges_deeply_and_keeps_order() {
        let out = merge(
            json!({"_key": "k", "a": 1, "o": {"x": 1, "y": 2}, "z": 0}),
            json!({"o": {"y": 3, "w": 4}, "a": 2, "new": true}),
            true,
            true,
        );
        assert_eq!(
            out,
            json!({"_key": "k", "a": 2, "o": {"x": 1, "y": 3, "w": 4}, "z": 0, "new": true})
        );
        let keys: Vec<_> = out.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["_key", "a", "o", "z", "new"]);
    }

    #[test]
    fn keep_null_false_removes_nulls_but_not_in_arrays() {
        let out = merge(
            json!({"a": 1, "b": 2, "o": {"x": 1, "y": 2}}),
            json!({"a": null, "o": {"x": null}, "n": {"p": null, "q": 1}, "arr": [null, {"r": null}]}),
            false,
            true,
        );
        assert_eq!(
            out,
            json!({"b": 2, "o": {"y": 2}, "n": {"q": 1}, "arr": [null, {"r": null}]})
        );
        let kept = merge(json!({"a": 1}), json!({"a": null}), true, true);
        assert_eq!(kept, json!({"a": null}));
    }

    #[test]
    fn merge_objects_false_replaces_objects() {
        let out = merge(
            json!({"o": {"x": 1, "y": 2}}),
            json!({"o": {"y": 3}}),
            true,
            false,
        );
        assert_eq!(out, json!({"o": {"y": 3}}));
    }

    #[test]
    fn system_attributes_are_immutable_but_edges_may_move() {
        let out = merge(
            json!({"_key": "k", "_rev": "r", "_from": "a/1", "_to": "b/1"}),
            json!({"_key": "other", "_id": "c/other", "_rev": "x", "_from": "a/2"}),
            true,
            true,
        );
        assert_eq!(
            out,
            json!({"_key": "k", "_rev": "r", "_from": "a/2", "_to": "b/1"})
        );
    }

    #[test]
    fn version_attribute_rule() {
        let stored = obj(json!({"v": 5}));
        assert!(version_allows_write(&stored, &obj(json!({"v": 6})), "v"));
        assert!(!version_allows_write(&stored, &obj(json!({"v": 5})), "v"));
        assert!(!version_allows_write(&stored, &obj(json!({"v": 5.9})), "v"));
        assert!(!version_allows_write(&stored, &obj(json!({"v": 4})), "v"));
        assert!(version_allows_write(&stored, &obj(json!({})), "v"));
        assert!(version_allows_write(&stored, &obj(json!({"v": "9"})), "v"));
        assert!(version_allows_write(&stored, &obj(json!({"v": -1})), "v"));
        assert!(version_allows_write(
            &obj(json!({})),
            &obj(json!({"v": 1})),
            "v"
        ));
    }

    fn flat_object() -> impl Strategy<Value = Map<String, Value>> {
        proptest::collection::btree_map("[a-e]", proptest::option::of(0i64..5), 0..5).prop_map(
            |m| {
                m.into_iter()
                    .map(|(k, v)| (k, v.map_or(Value::Null, Value::from)))
                    .collect()
            },
        )
    }

    proptest! {
        #[test]
        fn every_patched_attribute_has_its_patch_value(
            stored in flat_object(), patch in flat_object(), keep_null: bool,
        ) {
            let out = merge_patch(&stored, &patch, MergeOptions { keep_null, merge_objects: true });
            for (name, value) in &patch {
                if value.is_null() && !keep_null {
                    prop_assert!(!out.contains_key(name));
                } else {
                    prop_assert_eq!(out.get(name), Some(value));
                }
            }
            for (name, value) in &stored {
                if !patch.contains_key(name) {
                    prop_assert_eq!(out.get(name), Some(value));
                }
            }
        }
    }
}
