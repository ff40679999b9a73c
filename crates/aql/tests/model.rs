//! A property test: random documents and random queries (filter, sort, limit, collect), run
//! by the executor over both engines (the local engine, with and without a persistent index
//! on the filtered attribute, and the fake), and compared with an in-memory model computed
//! directly with AQL's value order.
//!
//! It fails if any plan (full scan, index range, index order replacing a SORT, projection
//! from an index entry) gives a different answer from the model.

use crate::engine;

use std::cmp::Ordering;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use quince_aql::{prepare, Control, QueryOptions};
use quince_db::{Catalog, DbConfig};
use quince_model::order::compare_values;
use quince_ops::fake::FakeEngine;
use quince_ops::{DatabaseOps, Engine, WriteKind, WriteOptions, WriteRequest};
use quince_storage::io::OsFileIo;
use serde_json::{json, Map, Value};

fn load(db: &Arc<dyn DatabaseOps>, docs: &[Value], index: Option<bool>) {
    let c = db.create_collection(engine::request("c")).unwrap();
    if let Some(sparse) = index {
        c.create_index(&json!({"type": "persistent", "fields": ["a"], "sparse": sparse}))
            .unwrap();
    }
    let results = c.write(WriteRequest::new(
        WriteKind::Insert,
        docs.to_vec(),
        WriteOptions::default(),
    ));
    assert!(results.items.iter().all(|r| r.is_ok()));
}

fn run(db: &Arc<dyn DatabaseOps>, query: &str, binds: &Map<String, Value>) -> Vec<Value> {
    let prepared = prepare(
        Arc::clone(db),
        query,
        binds.clone(),
        QueryOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{query}: {e:?}"));
    let mut out = Vec::new();
    prepared
        .run(Control::new(None), None, &mut |v| {
            out.push(v);
            Ok(true)
        })
        .unwrap_or_else(|e| panic!("{query}: {e:?}"));
    out
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => (-5i64..5).prop_map(|i| json!(i)),
        1 => Just(Value::Null),
        1 => prop::sample::select(vec!["a", "B", "b", ""]).prop_map(|s| json!(s)),
        1 => any::<bool>().prop_map(|b| json!(b)),
    ]
}

#[derive(Clone, Debug)]
struct Case {
    docs: Vec<Value>,
    op: &'static str,
    bound: Value,
    sort_desc: Option<bool>,
    limit: Option<(u64, u64)>,
    collect: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((value(), -2i64..3, any::<bool>()), 0..30),
        prop::sample::select(vec!["==", "<", "<=", ">", ">=", "IN", "!="]),
        value(),
        prop::option::of(any::<bool>()),
        prop::option::of((0u64..5, 0u64..8)),
        any::<bool>(),
    )
        .prop_map(|(rows, op, bound, sort_desc, limit, collect)| {
            let docs = rows
                .into_iter()
                .enumerate()
                .map(|(i, (a, b, missing))| {
                    if missing && a.is_null() {
                        json!({"_key": format!("k{i:02}"), "b": b})
                    } else {
                        json!({"_key": format!("k{i:02}"), "a": a, "b": b})
                    }
                })
                .collect();
            let bound = if op == "IN" {
                json!([bound, 1, "b"])
            } else {
                bound
            };
            Case {
                docs,
                op,
                bound,
                sort_desc,
                limit,
                collect,
            }
        })
}

fn text(case: &Case) -> String {
    let mut q = format!("FOR d IN c FILTER d.a {} @bound", case.op);
    if case.collect {
        q.push_str(" COLLECT b = d.b WITH COUNT INTO n");
        if let Some(desc) = case.sort_desc {
            q.push_str(if desc { " SORT b DESC" } else { " SORT b" });
        }
    } else if let Some(desc) = case.sort_desc {
        q.push_str(if desc {
            " SORT d.a DESC, d._key DESC"
        } else {
            " SORT d.a, d._key"
        });
    }
    if let Some((offset, count)) = case.limit {
        q.push_str(&format!(" LIMIT {offset}, {count}"));
    }
    q.push_str(if case.collect {
        " RETURN [b, n]"
    } else {
        " RETURN d._key"
    });
    q
}

fn holds(op: &str, a: &Value, bound: &Value) -> bool {
    let order = compare_values(a, bound);
    match op {
        "==" => order == Ordering::Equal,
        "!=" => order != Ordering::Equal,
        "<" => order == Ordering::Less,
        "<=" => order != Ordering::Greater,
        ">" => order == Ordering::Greater,
        ">=" => order != Ordering::Less,
        "IN" => bound
            .as_array()
            .unwrap()
            .iter()
            .any(|b| compare_values(a, b) == Ordering::Equal),
        _ => unreachable!(),
    }
}

/// The model: the answer, and whether its order is defined (without SORT it is not).
fn model(case: &Case) -> (Vec<Value>, bool) {
    let null = Value::Null;
    let mut rows: Vec<&Value> = case
        .docs
        .iter()
        .filter(|d| holds(case.op, d.get("a").unwrap_or(&null), &case.bound))
        .collect();
    let mut out: Vec<Value> = if case.collect {
        let mut groups: Vec<(Value, u64)> = Vec::new();
        for d in &rows {
            let b = d["b"].clone();
            match groups.iter_mut().find(|(g, _)| *g == b) {
                Some((_, n)) => *n += 1,
                None => groups.push((b, 1)),
            }
        }
        groups.sort_by(|x, y| compare_values(&x.0, &y.0));
        if case.sort_desc == Some(true) {
            groups.reverse();
        }
        groups.into_iter().map(|(b, n)| json!([b, n])).collect()
    } else {
        if let Some(desc) = case.sort_desc {
            rows.sort_by(|x, y| {
                let order =
                    compare_values(x.get("a").unwrap_or(&null), y.get("a").unwrap_or(&null))
                        .then_with(|| compare_values(&x["_key"], &y["_key"]));
                if desc {
                    order.reverse()
                } else {
                    order
                }
            });
        }
        rows.iter().map(|d| d["_key"].clone()).collect()
    };
    let ordered = case.collect || case.sort_desc.is_some();
    if let Some((offset, count)) = case.limit {
        if !ordered {
            // Which rows a LIMIT keeps without a SORT is not defined: compare sizes only.
            let n = out
                .len()
                .saturating_sub(offset as usize)
                .min(count as usize);
            return (out.into_iter().take(n).collect(), false);
        }
        out = out
            .into_iter()
            .skip(offset as usize)
            .take(count as usize)
            .collect();
    }
    (out, ordered)
}

fn sorted(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by(compare_values);
    v
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn queries_agree_with_the_model(case in case()) {
        let query = text(&case);
        let mut binds = Map::new();
        binds.insert("bound".into(), case.bound.clone());
        let (expected, ordered) = model(&case);
        #[allow(clippy::type_complexity)]
        let mut engines: Vec<(String, Arc<dyn DatabaseOps>, Option<(tempfile::TempDir, Arc<Catalog>)>)> = Vec::new();
        let fake = FakeEngine::new().database("_system").unwrap();
        load(&fake, &case.docs, None);
        engines.push(("fake".into(), fake, None));
        for index in [None, Some(false), Some(true)] {
            let dir = tempfile::tempdir().unwrap();
            let config = DbConfig {
                sync_interval: Duration::from_millis(50),
                ..DbConfig::new(dir.path().to_path_buf(), Arc::new(OsFileIo::new()))
            };
            let catalog = Catalog::open(config).unwrap();
            let db: Arc<dyn DatabaseOps> = Engine::database(&*catalog, "_system").unwrap();
            load(&db, &case.docs, index);
            engines.push((format!("local, index {index:?}"), db, Some((dir, catalog))));
        }
        for (name, db, _dir) in &engines {
            let got = run(db, &query, &binds);
            if ordered {
                prop_assert_eq!(&got, &expected, "{} on {}", query, name);
            } else if case.limit.is_some() {
                prop_assert_eq!(got.len(), expected.len(), "{} on {}", query, name);
            } else {
                prop_assert_eq!(sorted(got), sorted(expected.clone()), "{} on {}", query, name);
            }
        }
    }
}
