//! Random sequences of document operations agree with a `BTreeMap` model, before and after a
//! restart: every key holds the value the model says, with the revision of its last write.

use crate::common;

use std::collections::BTreeMap;

use common::{collection, open_sim, opts};
use proptest::prelude::*;
use quince_db::{OverwriteMode, WriteOptions};
use quince_storage::io::SimFileIo;
use serde_json::{json, Value};

#[derive(Clone, Debug)]
enum Op {
    Insert(u8, i64),
    Upsert(u8, i64),
    Replace(u8, i64),
    Update(u8, i64),
    Remove(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u8..6;
    prop_oneof![
        (key.clone(), any::<i64>()).prop_map(|(k, v)| Op::Insert(k, v)),
        (key.clone(), any::<i64>()).prop_map(|(k, v)| Op::Upsert(k, v)),
        (key.clone(), any::<i64>()).prop_map(|(k, v)| Op::Replace(k, v)),
        (key.clone(), any::<i64>()).prop_map(|(k, v)| Op::Update(k, v)),
        key.prop_map(Op::Remove),
    ]
}

/// What the model holds per key: the attributes `a` and `b` (if set) and the revision.
type Model = BTreeMap<String, (Value, String)>;

fn check(c: &quince_db::Collection, model: &Model) -> Result<(), TestCaseError> {
    prop_assert_eq!(c.count(), model.len() as u64);
    for k in 0..6u8 {
        let key = format!("k{k}");
        match model.get(&key) {
            None => prop_assert_eq!(c.read(&key).unwrap_err().num(), 1202),
            Some((body, rev)) => {
                let stored = c.read(&key).unwrap();
                prop_assert_eq!(&stored.rev, rev);
                let mut doc: Value = serde_json::from_slice(&stored.json).unwrap();
                let doc = doc.as_object_mut().unwrap();
                for system in ["_key", "_id", "_rev"] {
                    doc.remove(system);
                }
                prop_assert_eq!(&Value::Object(doc.clone()), body);
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn operations_agree_with_a_map(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().unwrap();
        let sim = SimFileIo::new();
        let mut model: Model = BTreeMap::new();
        {
            let catalog = open_sim(dir.path(), &sim);
            let c = collection(&catalog, "c");
            for op in &ops {
                match op {
                    Op::Insert(k, v) | Op::Upsert(k, v) => {
                        let key = format!("k{k}");
                        let upsert = matches!(op, Op::Upsert(..));
                        let options = WriteOptions {
                            overwrite_mode: if upsert { OverwriteMode::Update } else { OverwriteMode::Conflict },
                            ..opts()
                        };
                        let result = c.insert(json!({"_key": key, "a": v}), &options);
                        match (model.get_mut(&key), upsert) {
                            (Some(_), false) => prop_assert_eq!(result.unwrap_err().num(), 1210),
                            (Some((body, rev)), true) => {
                                let out = result.unwrap();
                                body["a"] = json!(v);
                                *rev = out.rev;
                            }
                            (None, _) => {
                                let out = result.unwrap();
                                model.insert(key, (json!({"a": v}), out.rev));
                            }
                        }
                    }
                    Op::Replace(k, v) | Op::Update(k, v) => {
                        let key = format!("k{k}");
                        let result = if matches!(op, Op::Replace(..)) {
                            c.replace(&key, json!({"a": v}), &opts())
                        } else {
                            c.update(&key, json!({"b": v}), &opts())
                        };
                        match model.get_mut(&key) {
                            None => prop_assert_eq!(result.unwrap_err().num(), 1202),
                            Some((body, rev)) => {
                                let out = result.unwrap();
                                prop_assert_eq!(out.old_rev.as_ref(), Some(&*rev));
                                if matches!(op, Op::Replace(..)) {
                                    *body = json!({"a": v});
                                } else {
                                    body["b"] = json!(v);
                                }
                                *rev = out.rev;
                            }
                        }
                    }
                    Op::Remove(k) => {
                        let key = format!("k{k}");
                        let result = c.remove(&key, None, &opts());
                        match model.remove(&key) {
                            None => prop_assert_eq!(result.unwrap_err().num(), 1202),
                            Some((_, rev)) => prop_assert_eq!(result.unwrap().rev, rev),
                        }
                    }
                }
            }
            check(&c, &model)?;
            catalog.shutdown().unwrap();
        }
        let catalog = open_sim(dir.path(), &sim);
        let c = catalog.database("_system").unwrap().collection("c").unwrap();
        check(&c, &model)?;
    }
}
