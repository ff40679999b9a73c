//! Unit tests of the index rules every engine shares: definitions (parse, aliases, defaults,
//! identity), the entries a document gives, and the matching and order of sorted lookups.

use std::ops::Bound;

use serde_json::{json, Value};

use super::*;

fn parse(body: Value) -> quince_errors::Result<IndexDefinition> {
    IndexDefinition::parse(&body)
}

#[test]
fn aliases_become_persistent_with_arangodb_defaults() {
    for alias in ["persistent", "hash", "skiplist"] {
        let d = parse(json!({"type": alias, "fields": ["a", "b.c"]})).unwrap();
        assert_eq!(d.kind, IndexType::Persistent);
        assert!(!d.unique && !d.sparse && d.deduplicate && d.estimates && !d.cache_enabled);
    }
}

#[test]
fn bad_definitions_are_400_with_errornum_10_naming_the_problem() {
    let cases = [
        (json!({"fields": ["a"]}), "type"),
        (json!({"type": "mdi", "fields": ["a"]}), "'mdi'"),
        (json!({"type": "inverted", "fields": ["a"]}), "'inverted'"),
        (json!({"type": "geo", "fields": ["a", "b", "c"]}), "geo"),
        (json!({"type": "geo", "fields": ["a[*]"]}), "geo"),
        (
            json!({"type": "fulltext", "fields": ["a", "b"]}),
            "fulltext",
        ),
        (
            json!({"type": "fulltext", "fields": ["a"], "minLength": 0}),
            "minLength",
        ),
        (
            json!({"type": "geo", "fields": ["a"], "bestIndexedLevel": 99}),
            "bestIndexedLevel",
        ),
        (json!({"type": "banana", "fields": ["a"]}), "'banana'"),
        (json!({"type": "persistent"}), "fields"),
        (json!({"type": "persistent", "fields": []}), "fields"),
        (json!({"type": "persistent", "fields": [1]}), "fields"),
        (json!({"type": "persistent", "fields": ["a..b"]}), "a..b"),
        (
            json!({"type": "persistent", "fields": ["a", "a"]}),
            "duplicate",
        ),
        (
            json!({"type": "persistent", "fields": ["a[*]", "b[*]"]}),
            "[*]",
        ),
        (json!({"type": "ttl", "fields": ["a"]}), "expireAfter"),
        (
            json!({"type": "ttl", "fields": ["a"], "expireAfter": -1}),
            "expireAfter",
        ),
        (
            json!({"type": "ttl", "fields": ["a", "b"], "expireAfter": 1}),
            "one",
        ),
        (
            json!({"type": "ttl", "fields": ["a"], "expireAfter": 1, "unique": true}),
            "unique",
        ),
    ];
    for (body, needle) in cases {
        let error = parse(body.clone()).unwrap_err();
        assert_eq!(error.num(), 10, "{body}");
        assert!(error.message.contains(needle), "{body}: {}", error.message);
    }
    let bad_name = parse(json!({"type": "persistent", "fields": ["a"], "name": "a/b"}));
    assert_eq!(bad_name.unwrap_err().num(), 1208);
}

#[test]
fn id_fields_are_refused_on_create_but_read_back_from_storage() {
    for fields in [
        json!(["_id"]),
        json!(["a", "_id"]),
        json!(["a._id"]),
        json!(["a[*]._id"]),
    ] {
        for kind in ["persistent", "hash", "fulltext"] {
            let error = parse(json!({"type": kind, "fields": fields})).unwrap_err();
            assert_eq!(error.num(), 10, "{kind} {fields}");
            assert_eq!(error.message, "_id attribute cannot be indexed");
        }
    }
    for fields in [
        json!(["user_id"]),
        json!(["_key"]),
        json!(["_idx"]),
        json!(["_id[*]"]),
    ] {
        assert!(
            parse(json!({"type": "persistent", "fields": fields})).is_ok(),
            "{fields}"
        );
    }
    // A definition an older version stored still loads.
    let stored = json!({"type": "persistent", "fields": ["_id"], "id": "5", "name": "idx_5"});
    assert_eq!(
        IndexDefinition::from_stored(&stored).unwrap().fields,
        ["_id"]
    );
    // Non-boolean flags read as their defaults, as ArangoDB reads them.
    let d = parse(json!({"type": "persistent", "fields": ["a"], "unique": "yes", "sparse": 1}));
    let d = d.unwrap();
    assert!(!d.unique && !d.sparse);
}

#[test]
fn stored_form_round_trips_and_describes() {
    let mut d =
        parse(json!({"type": "hash", "fields": ["a"], "unique": true, "name": "u"})).unwrap();
    d.id = 17;
    let back = IndexDefinition::from_stored(&d.to_stored()).unwrap();
    assert_eq!(back, d);
    let description = d.describe("c", 0.5);
    assert_eq!(
        description.json,
        json!({"cacheEnabled": false, "deduplicate": true, "estimates": true,
               "fields": ["a"], "id": "c/17", "name": "u", "selectivityEstimate": 1,
               "sparse": false, "type": "persistent", "unique": true})
    );
    let mut ttl = parse(json!({"type": "ttl", "fields": ["t"], "expireAfter": 60})).unwrap();
    ttl.id = 3;
    ttl.name = "idx_3".into();
    assert_eq!(
        ttl.describe("c", 1.0).json,
        json!({"expireAfter": 60, "fields": ["t"], "id": "c/3", "name": "idx_3",
               "sparse": true, "type": "ttl", "unique": false})
    );
    assert_eq!(IndexDefinition::from_stored(&ttl.to_stored()).unwrap(), ttl);
}

#[test]
fn geo_and_fulltext_describe_as_arangodb_does() {
    let mut geo = parse(json!({"type": "geo", "fields": ["loc"], "unique": true})).unwrap();
    geo.id = 5;
    geo.name = "idx_5".into();
    assert_eq!(
        geo.describe("c", 1.0).json,
        json!({"bestIndexedLevel": 17, "fields": ["loc"], "geoJson": false, "id": "c/5",
               "legacyPolygons": false, "maxNumCoverCells": 8, "name": "idx_5",
               "sparse": true, "type": "geo", "unique": false, "worstIndexedLevel": 4})
    );
    assert_eq!(IndexDefinition::from_stored(&geo.to_stored()).unwrap(), geo);
    let json_geo = parse(json!({"type": "geo1", "fields": ["loc"], "geoJson": true})).unwrap();
    assert!(!json_geo.same_index(&geo) && json_geo.geo.unwrap().geo_json);
    let mut text = parse(json!({"type": "fulltext", "fields": ["text"]})).unwrap();
    text.id = 6;
    text.name = "idx_6".into();
    assert_eq!(
        text.describe("c", 1.0).json,
        json!({"fields": ["text"], "id": "c/6", "minLength": 2, "name": "idx_6",
               "sparse": true, "type": "fulltext", "unique": false})
    );
    assert_eq!(
        IndexDefinition::from_stored(&text.to_stored()).unwrap(),
        text
    );
    let three = parse(json!({"type": "fulltext", "fields": ["text"], "minLength": 3})).unwrap();
    assert!(!three.same_index(&text));
}

#[test]
fn geo_and_fulltext_entries() {
    let pair = spec(json!({"type": "geo", "fields": ["loc"]}));
    let got = entries(&pair, json!({"loc": [52.5, 13.4]}));
    assert_eq!(got.len(), 1);
    assert_eq!(geo::entry_location(&got[0]), Some((52.5, 13.4)));
    assert!(entries(&pair, json!({"loc": [91, 0]})).is_empty());
    assert!(entries(&pair, json!({})).is_empty());
    let two = spec(json!({"type": "geo", "fields": ["lat", "lon"]}));
    assert_eq!(entries(&two, json!({"lat": 1, "lon": 2})).len(), 1);
    assert!(entries(&two, json!({"lat": 1})).is_empty());
    let text = spec(json!({"type": "fulltext", "fields": ["t"], "minLength": 3}));
    let words: Vec<String> = entries(&text, json!({"t": "The cat sat on THE mat, ok"}))
        .iter()
        .map(|e| fulltext::decode_word(&e[0]).unwrap())
        .collect();
    assert_eq!(words, ["cat", "mat", "sat", "the"]);
    assert!(entries(&text, json!({"t": 7})).is_empty());
}

fn spec(body: Value) -> IndexSpec {
    IndexSpec::new(parse(body).unwrap()).unwrap()
}

fn entries(spec: &IndexSpec, doc: Value) -> Vec<Vec<Value>> {
    let Value::Object(doc) = doc else { panic!() };
    spec.entries(&doc)
        .unwrap()
        .into_iter()
        .map(|e| e.into_vec())
        .collect()
}

#[test]
fn entries_follow_sparse_and_array_rules() {
    let plain = spec(json!({"type": "persistent", "fields": ["a", "b.c"]}));
    assert_eq!(
        entries(&plain, json!({"a": 1})),
        vec![vec![json!(1), json!(null)]]
    );
    assert_eq!(
        entries(&plain, json!({"a": 1, "b": {"c": "x"}})),
        vec![vec![json!(1), json!("x")]]
    );
    let sparse = spec(json!({"type": "persistent", "fields": ["a", "b"], "sparse": true}));
    assert!(entries(&sparse, json!({"a": 1})).is_empty());
    assert!(entries(&sparse, json!({"a": 1, "b": null})).is_empty());
    assert_eq!(entries(&sparse, json!({"a": 1, "b": 2})).len(), 1);

    let tags = spec(json!({"type": "persistent", "fields": ["tags[*]", "n"]}));
    assert_eq!(
        entries(&tags, json!({"tags": ["b", "a", "b"], "n": 1})),
        vec![vec![json!("a"), json!(1)], vec![json!("b"), json!(1)]]
    );
    assert!(entries(&tags, json!({"tags": "a"})).is_empty());
    assert!(entries(&tags, json!({"tags": []})).is_empty());
    let keep = spec(json!({"type": "persistent", "fields": ["t[*].k"], "deduplicate": false}));
    assert_eq!(
        entries(&keep, json!({"t": [{"k": 1}, {"k": 1}, {}]})),
        vec![vec![json!(null)], vec![json!(1)], vec![json!(1)]]
    );
}

#[test]
fn ttl_entries_are_seconds() {
    let ttl = spec(json!({"type": "ttl", "fields": ["at"], "expireAfter": 0}));
    assert_eq!(
        entries(&ttl, json!({"at": "1970-01-02"})),
        vec![vec![json!(86400.0)]]
    );
    assert!(entries(&ttl, json!({"at": "soon"})).is_empty());
    assert!(entries(&ttl, json!({})).is_empty());
}

#[test]
fn lookups_match_by_aql_order() {
    let lookup = IndexLookup::Sorted {
        prefix: vec![json!(1)],
        low: Bound::Excluded(json!(null)),
        high: Bound::Included(json!(5)),
        reverse: false,
    };
    assert!(lookup.matches(&[json!(1.0), json!(false)]));
    assert!(lookup.matches(&[json!(1), json!(5)]));
    assert!(!lookup.matches(&[json!(1), json!(null)]));
    assert!(!lookup.matches(&[json!(1), json!("5")]));
    assert!(!lookup.matches(&[json!(2), json!(3)]));
    assert!(lookup.check(2).is_ok());
    assert_eq!(lookup.check(1).unwrap_err().num(), 10);
    assert!(IndexLookup::all().matches(&[json!("anything")]));
}

#[test]
fn edge_lookups_match_one_end_exactly_and_only_the_edge_index_takes_them() {
    let lookup = IndexLookup::Edge {
        direction: EdgeDirection::Out,
        vertex: "v/1".to_owned(),
    };
    assert!(lookup.matches(&[json!("v/1")]));
    assert!(!lookup.matches(&[json!("v/10")]));
    assert!(!lookup.matches(&[json!(1)]));
    assert!(!lookup.reverse());
    assert_eq!(lookup.check(2).unwrap_err().num(), 10);
    assert_eq!(EdgeDirection::of_attribute("_to"), Some(EdgeDirection::In));
    assert_eq!(EdgeDirection::Out.attribute(), "_from");
}
