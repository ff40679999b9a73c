//! Geo indexes in the local engine: `Near` and `WithinRectangle` lookups against a
//! brute-force computation over random points (a property test, poles and the antimeridian
//! included), what survives churn, a compaction and a restart, and a stream transaction's view
//! (its own inserts, moves and removals merged into the committed hits, limits kept).

use crate::common;

use std::sync::Arc;

use proptest::prelude::*;
use quince_db::{
    Catalog, CollectionOps, DatabaseOps, IndexLookup, WriteKind, WriteOptions, WriteRequest,
};
use quince_ops::geo::distance_m;
use quince_ops::{Rectangle, TransactionOptions};
use serde_json::{json, Value};

use common::{create, open_os};

fn database(catalog: &Catalog) -> Arc<dyn DatabaseOps> {
    catalog.database("_system").unwrap()
}

fn collection(catalog: &Catalog, name: &str) -> Arc<dyn CollectionOps> {
    let db = database(catalog);
    match db.collection(name) {
        Ok(c) => c,
        Err(_) => db.create_collection(create(name)).unwrap(),
    }
}

fn write(c: &dyn CollectionOps, kind: WriteKind, docs: Vec<Value>) {
    let results = c.write(WriteRequest::new(kind, docs, WriteOptions::default()));
    for item in results.items {
        item.unwrap();
    }
}

/// The hits of a lookup: key and first value.
fn hits(c: &dyn CollectionOps, id: u64, lookup: &IndexLookup) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    c.index_lookup(id, lookup, &mut |hit| {
        let value = hit.values.first().and_then(Value::as_f64).unwrap_or(0.0);
        out.push((hit.key.to_owned(), value));
        true
    })
    .unwrap();
    out
}

fn near(lat: f64, lon: f64, max: Option<f64>, limit: Option<usize>) -> IndexLookup {
    IndexLookup::Near {
        lat,
        lon,
        min_distance: 0.0,
        max_distance: max,
        limit,
    }
}

/// What a `Near` lookup answers, computed from the points alone.
fn brute_near(
    points: &[(String, f64, f64)],
    lat: f64,
    lon: f64,
    max: Option<f64>,
    limit: Option<usize>,
) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = points
        .iter()
        .map(|(key, plat, plon)| (key.clone(), distance_m(lat, lon, *plat, *plon)))
        .filter(|(_, d)| max.is_none_or(|m| *d <= m))
        .collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    if let Some(limit) = limit {
        out.truncate(limit);
    }
    out
}

/// Every document's key, `lat` and `lon` as stored, by key.
fn stored_points(c: &dyn CollectionOps) -> Vec<(String, f64, f64)> {
    let mut points = Vec::new();
    c.scan(&mut |document| {
        let doc: Value = serde_json::from_slice(&document.json).unwrap();
        let number = |name: &str| doc[name].as_f64().unwrap();
        let key = doc["_key"].as_str().unwrap().to_owned();
        points.push((key, number("lat"), number("lon")));
        true
    })
    .unwrap();
    points.sort_by(|a, b| a.0.cmp(&b.0));
    points
}

fn arb_lat() -> impl Strategy<Value = f64> {
    prop_oneof![-90.0..=90.0f64, Just(90.0), Just(-90.0), 85.0..=90.0f64]
}

fn arb_lon() -> impl Strategy<Value = f64> {
    prop_oneof![
        -180.0..=180.0f64,
        Just(180.0),
        Just(-180.0),
        178.0..=180.0f64
    ]
}

/// Points in a few clusters (so caps find many) and anywhere.
fn arb_point() -> impl Strategy<Value = (f64, f64)> {
    prop_oneof![
        (arb_lat(), arb_lon()),
        (52.0..53.0f64, 13.0..14.0f64),
        (-1.0..1.0f64, 179.0..=180.0f64),
        (-1.0..1.0f64, -180.0..-179.0f64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every `Near` and `WithinRectangle` lookup answers what the brute force does.
    #[test]
    fn lookups_equal_brute_force(
        points in prop::collection::vec(arb_point(), 0..120),
        centres in prop::collection::vec(arb_point(), 1..6),
        radius in prop_oneof![Just(None), (1.0..3.0e7f64).prop_map(Some)],
        limit in prop_oneof![Just(None), (0usize..30).prop_map(Some)],
        corners in (arb_point(), arb_point()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        let (index, _) = c.create_index(&json!({"type": "geo", "fields": ["lat", "lon"]})).unwrap();
        let points: Vec<(String, f64, f64)> = points
            .iter()
            .enumerate()
            .map(|(i, (lat, lon))| (format!("k{i:03}"), *lat, *lon))
            .collect();
        let docs = points.iter().map(|(k, lat, lon)| json!({"_key": k, "lat": lat, "lon": lon}));
        write(&*c, WriteKind::Insert, docs.collect());
        // The brute force reads the coordinates back: JSON text may not round-trip the last
        // bit of a double.
        let points = stored_points(&*c);
        for (lat, lon) in &centres {
            let got = hits(&*c, index.id, &near(*lat, *lon, radius, limit));
            let expected = brute_near(&points, *lat, *lon, radius, limit);
            prop_assert_eq!(got, expected, "near {} {} {:?} {:?}", lat, lon, radius, limit);
        }
        let ((lat1, lon1), (lat2, lon2)) = corners;
        let rectangle = Rectangle::from_corners(lat1, lon1, lat2, lon2).unwrap();
        let lookup = IndexLookup::WithinRectangle { rectangle, limit: None };
        let got: Vec<String> = hits(&*c, index.id, &lookup).into_iter().map(|h| h.0).collect();
        let expected: Vec<String> = points
            .iter()
            .filter(|(_, lat, lon)| rectangle.contains(*lat, *lon))
            .map(|(k, _, _)| k.clone())
            .collect();
        prop_assert_eq!(got, expected);
        catalog.shutdown().unwrap();
    }
}

#[test]
fn churn_compaction_and_restart_keep_the_index_true() {
    let dir = tempfile::tempdir().unwrap();
    let id;
    let expected;
    {
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        id = c
            .create_index(&json!({"type": "geo", "fields": ["loc"], "name": "where"}))
            .unwrap()
            .0
            .id;
        let place = |i: u32, round: u32| {
            let lat = f64::from((i * 7 + round * 13) % 170) - 85.0;
            let lon = f64::from((i * 11 + round * 5) % 350) - 175.0;
            (lat, lon)
        };
        for round in 0..4 {
            let docs = (0..200)
                .map(|i| {
                    let (lat, lon) = place(i, round);
                    json!({"_key": format!("k{i}"), "loc": [lat, lon]})
                })
                .collect();
            let kind = if round == 0 {
                WriteKind::Insert
            } else {
                WriteKind::Replace
            };
            write(&*c, kind, docs);
        }
        write(&*c, WriteKind::Remove, vec![json!("k0"), json!("k1")]);
        c.compact().unwrap();
        let points: Vec<(String, f64, f64)> = (2..200)
            .map(|i| {
                let (lat, lon) = place(i, 3);
                (format!("k{i}"), lat, lon)
            })
            .collect();
        expected = brute_near(&points, 10.0, 20.0, None, Some(25));
        assert_eq!(hits(&*c, id, &near(10.0, 20.0, None, Some(25))), expected);
        let figures = c.figures();
        assert_eq!(figures.indexes[1].kind, "geo");
        assert_eq!(figures.indexes[1].count, 198);
        catalog.shutdown().unwrap();
    }
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let description = &c.indexes()[1];
    assert_eq!(
        (description.name.as_str(), description.json["type"].as_str()),
        ("where", Some("geo"))
    );
    assert_eq!(hits(&*c, id, &near(10.0, 20.0, None, Some(25))), expected);
    c.truncate(false).unwrap();
    assert!(hits(&*c, id, &near(0.0, 0.0, None, None)).is_empty());
    catalog.shutdown().unwrap();
}

#[test]
fn a_transaction_sees_its_own_writes_within_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    let id = c
        .create_index(&json!({"type": "geo", "fields": ["loc"], "geoJson": true}))
        .unwrap()
        .0
        .id;
    // Points east of the origin, one degree apart.
    let docs = (1..=6)
        .map(|i| json!({"_key": format!("p{i}"), "loc": [f64::from(i), 0.0]}))
        .collect();
    write(&*c, WriteKind::Insert, docs);
    let trx = database(&catalog)
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("c").unwrap();
    // Remove the nearest two, move the third far away, add one nearer than all.
    write(&*inside, WriteKind::Remove, vec![json!("p1"), json!("p2")]);
    write(
        &*inside,
        WriteKind::Update,
        vec![json!({"_key": "p3", "loc": [100.0, 0.0]})],
    );
    write(
        &*inside,
        WriteKind::Insert,
        vec![json!({"_key": "new", "loc": [0.5, 0.0]})],
    );
    let keys = |c: &dyn CollectionOps, lookup: &IndexLookup| -> Vec<String> {
        hits(c, id, lookup).into_iter().map(|h| h.0).collect()
    };
    let three = near(0.0, 0.0, None, Some(3));
    assert_eq!(keys(&*inside, &three), ["new", "p4", "p5"]);
    assert_eq!(keys(&*c, &three), ["p1", "p2", "p3"]);
    let pacific = Rectangle::from_corners(-1.0, 90.0, 1.0, 110.0).unwrap();
    let boxed = IndexLookup::WithinRectangle {
        rectangle: pacific,
        limit: None,
    };
    assert_eq!(keys(&*inside, &boxed), ["p3"]);
    assert!(keys(&*c, &boxed).is_empty());
    trx.commit().unwrap();
    assert_eq!(keys(&*c, &three), ["new", "p4", "p5"]);
    catalog.shutdown().unwrap();
}
