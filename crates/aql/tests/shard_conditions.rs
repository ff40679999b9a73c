//! Conditions written back as AQL for a shard (`plan::aql_text`): for each condition over a
//! loop variable `@d` (and an outer variable `@o`), the rendered text, run as a query's filter
//! with its bind parameters, keeps exactly the documents the original condition keeps; and the
//! conditions a shard must not evaluate (the variable whole, its `_id`, volatile or
//! server-bound functions, subqueries, expansions) are not rendered.
//!
//! It fails if the renderer writes an operator, a quantifier, a literal, an attribute name or
//! a parameter wrongly, or renders a condition that a shard would answer differently.

use crate::common;
use crate::engine;

use std::sync::Arc;

use quince_aql::plan::aql_text::{render, Param, Rendered};
use quince_aql::plan::compile_expression;
use quince_ops::fake::FakeEngine;
use quince_ops::{DatabaseOps, Engine, SCAN_VARIABLE};
use serde_json::{json, Map, Value};

fn database() -> Arc<dyn DatabaseOps> {
    let engine = FakeEngine::new();
    let db = engine.database("_system").unwrap();
    let c = engine::create(&db, "c");
    let mut docs = Vec::new();
    for n in 0..40i64 {
        docs.push(json!({
            "_key": format!("k{n}"),
            "n": n,
            "s": format!("name-{}", n % 7),
            "tags": (0..(n % 4)).map(|t| format!("t{t}")).collect::<Vec<_>>(),
            "nested": {"x": n % 5, "y": if n % 3 == 0 { Value::Null } else { json!(n) }},
            "odd `name\\": n % 2 == 1,
            "f": n as f64 / 4.0,
        }));
    }
    docs.push(json!({"_key": "bare"}));
    engine::insert(&c, docs);
    db
}

/// The keys a condition keeps, written over `d` in a query with `@o` bound to `outer`.
fn original(db: &Arc<dyn DatabaseOps>, condition: &str, outer: &Value) -> Vec<Value> {
    let text = condition.replace("@d", "d");
    let query = format!("FOR d IN c FILTER {text} SORT d._key RETURN d._key");
    let binds = if text.contains("@o") {
        json!({ "o": outer })
    } else {
        json!({})
    };
    engine::results(db, &query, binds)
}

/// The condition rendered (slot 0 is `@d`, slot 1 is `@o`), or `None`.
fn rendered(db: &Arc<dyn DatabaseOps>, condition: &str) -> Option<Rendered> {
    let expr = common::expr_of(condition);
    let (compiled, _) = compile_expression(&expr, db, &["d", "o"]).unwrap();
    let mut out = Rendered::default();
    render(&compiled, 0, &mut out).map(|()| out)
}

/// The keys the rendered condition keeps, its parameters bound (`@o`'s slot from `outer`).
fn through_text(db: &Arc<dyn DatabaseOps>, rendered: &Rendered, outer: &Value) -> Vec<Value> {
    let query = format!(
        "FOR {SCAN_VARIABLE} IN c FILTER {} SORT {SCAN_VARIABLE}._key RETURN {SCAN_VARIABLE}._key",
        rendered.text
    );
    let mut binds = Map::new();
    for (name, param) in &rendered.params {
        let value = match param {
            Param::Const(value) => value.clone(),
            Param::Slot(1) => outer.clone(),
            Param::Slot(other) => panic!("slot {other} in {}", rendered.text),
        };
        binds.insert(name.clone(), value);
    }
    engine::results(db, &query, Value::Object(binds))
}

#[test]
fn rendered_conditions_keep_what_the_originals_keep() {
    let db = database();
    let outer = json!({"lim": 12, "names": ["name-1", "name-3"], "key": "k5"});
    let conditions = [
        "@d.n > 10",
        "@d.n >= 10 && @d.n < 20",
        "@d.n < 3 || @d.n == 39",
        "!(@d.n != 4)",
        "NOT @d.`odd \\`name\\\\`",
        "@d.n IN [1, 2, 3, 100]",
        "@d.n NOT IN 5..35",
        "@d.s LIKE 'name-1%'",
        "@d.s NOT LIKE '%3'",
        "@d.s =~ '^name-[24]$'",
        "@d.s !~ '[0-5]$'",
        "@d.n + 2 * 3 == 16",
        "-@d.n < -30",
        "+@d.n % 5 == 0 && @d.f / 2 > 3",
        "@d.nested.x == 2",
        "@d.nested.y == null",
        "@d['n'] == 7",
        "@d.tags[1] == 't1'",
        "@d.tags[-1] == 't2'",
        "@d.tags ALL == 't0'",
        "@d.tags ANY == 't2'",
        "@d.tags NONE == 't1'",
        "@d.tags AT LEAST (2) IN ['t0', 't1', 't2']",
        "@d.tags ANY IN ['t2', 'x']",
        "@d.n > 5 ? @d.n < 8 : @d.n == 1",
        "(@d.missing ?: @d.n) == 9",
        "LENGTH(@d.tags) == 3 && CONCAT(@d.s, '!') == 'name-2!'",
        "TO_NUMBER(@d.n) IN [1, 2] || IS_NULL(@d.n)",
        "{a: @d.n, 'b c': [@d.s]} == {a: 3, 'b c': ['name-3']}",
        "[@d.n, 'x'][0] == 4",
        "@d.n > @o.lim",
        "@d.s IN @o.names",
        "@d._key == @o.key",
        "@d._key IN ['k1', 'bare']",
        "@d.n == 'quoted \"text\" \\\\ \\n'",
    ];
    for condition in conditions {
        let text = rendered(&db, condition).unwrap_or_else(|| panic!("{condition}: not rendered"));
        let want = original(&db, condition, &outer);
        let got = through_text(&db, &text, &outer);
        assert_eq!(got, want, "{condition} rendered as {}", text.text);
    }
    // The conditions keep different documents: the comparisons are not vacuous.
    assert_eq!(original(&db, "@d.n > 10", &outer).len(), 29);
    assert_eq!(original(&db, "@d.tags ANY == 't2'", &outer).len(), 10);
}

#[test]
fn conditions_a_shard_would_answer_differently_are_not_rendered() {
    let db = database();
    for condition in [
        "@d == null",
        "@d._id == 'c/k1'",
        "HAS(@d, 'n')",
        "@d[@o.key] == 1",
        "RAND() > 0.5",
        "CURRENT_USER() == null",
        "CURRENT_DATABASE() == '_system'",
        "LENGTH(FOR x IN c RETURN x) > 0",
        "@d.tags[* FILTER CURRENT == 't1'] == ['t1']",
        "@d.n > 1 && @d._id != ''",
    ] {
        assert!(
            rendered(&db, condition).is_none(),
            "{condition} must not be rendered"
        );
    }
}

#[test]
fn a_failed_render_leaves_the_text_as_it_was() {
    let db = database();
    let good = compile_expression(&common::expr_of("@d.n == 1"), &db, &["d", "o"])
        .unwrap()
        .0;
    let bad = compile_expression(
        &common::expr_of("@d.n == 2 && @d._id == 'c/x'"),
        &db,
        &["d", "o"],
    )
    .unwrap()
    .0;
    let mut out = Rendered::default();
    render(&good, 0, &mut out).unwrap();
    let before = out.clone();
    assert!(render(&bad, 0, &mut out).is_none());
    assert_eq!(out, before);
}
