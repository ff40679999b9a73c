"""Geo and fulltext queries through python-arango: `find_near`, `find_in_radius`,
`find_in_box` and `find_by_text` (the AQL they send: `NEAR(@collection, ...)`,
`WITHIN(@@collection, ...)`, a `GEO_CONTAINS` filter over the first geo index's attributes,
`FULLTEXT(@collection, @field, @query, @limit)`), the AQL functions inside a stream
transaction, and the errors without an index.

What it is: the driver's view. Each test fails if the driver cannot use the feature against
Quince as it would against ArangoDB.

What it is not: the index structures (`crates/db/tests/geo_index.rs`,
`crates/db/tests/fulltext_index.rs`) or the exact create bodies (`test_http_indexes.py`).
"""

from __future__ import annotations

import warnings

import pytest
from arango.exceptions import DocumentGetError, IndexMissingError

# (key, latitude, longitude)
CITIES = [
    ("berlin", 52.52, 13.40),
    ("potsdam", 52.39, 13.06),
    ("hamburg", 53.55, 9.99),
    ("paris", 48.86, 2.35),
    ("rome", 41.90, 12.50),
]


@pytest.fixture
def places(col):
    """A collection with a geo index over `loc` = [latitude, longitude]."""
    col.add_index({"type": "geo", "fields": ["loc"]})
    col.insert_many([{"_key": k, "loc": [lat, lon]} for k, lat, lon in CITIES])
    col.insert({"_key": "nowhere", "loc": "not a place"})
    return col


@pytest.fixture
def lonlat(col):
    """A collection with a GeoJSON geo index over `loc` = [longitude, latitude]."""
    col.add_index({"type": "geo", "fields": ["loc"], "geoJson": True})
    col.insert_many([{"_key": k, "loc": [lon, lat]} for k, lat, lon in CITIES])
    return col


def keys(cursor) -> list[str]:
    return [doc["_key"] for doc in cursor]


def quietly(call, *args, **kwargs):
    """Calls a driver method that warns it is deprecated."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return call(*args, **kwargs)


def test_find_near_returns_the_nearest_first(places):
    cursor = quietly(places.find_near, 52.5, 13.4, limit=3)
    assert keys(cursor) == ["berlin", "potsdam", "hamburg"]
    everything = quietly(places.find_near, 41.9, 12.5)
    assert keys(everything)[0] == "rome" and len(keys(quietly(places.find_near, 0, 0))) == 5


def test_find_in_radius_adds_the_distance(places):
    cursor = quietly(places.find_in_radius, 52.52, 13.40, 300_000, "distance")
    found = [(doc["_key"], round(doc["distance"] / 1000)) for doc in cursor]
    assert found == [("berlin", 0), ("potsdam", 27), ("hamburg", 255)]
    plain = list(quietly(places.find_in_radius, 52.52, 13.40, 1_000))
    assert [doc["_key"] for doc in plain] == ["berlin"] and "distance" not in plain[0]


def test_find_in_box_filters_with_geo_contains(lonlat):
    # The driver builds `GEO_CONTAINS(rect, doc.loc)`: with `geoJson`, `loc` is [lon, lat].
    cursor = lonlat.find_in_box(latitude1=50, longitude1=5, latitude2=54, longitude2=14)
    assert sorted(keys(cursor)) == ["berlin", "hamburg", "potsdam"]
    limited = lonlat.find_in_box(latitude1=40, longitude1=0, latitude2=60, longitude2=20, skip=1, limit=2)
    assert len(keys(limited)) == 2


def test_within_rectangle_and_geojson_points(db, lonlat):
    lonlat.insert({"_key": "point", "loc": {"type": "Point", "coordinates": [13.0, 52.0]}})
    cursor = db.aql.execute(
        "FOR d IN WITHIN_RECTANGLE(@@c, 51, 12, 53, 14) SORT d._key RETURN d._key",
        bind_vars={"@c": lonlat.name},
    )
    assert list(cursor) == ["berlin", "point", "potsdam"]
    near = db.aql.execute(
        "FOR d IN NEAR(@@c, 52, 13, 1, 'm') RETURN [d._key, d.m]", bind_vars={"@c": lonlat.name}
    )
    assert list(near) == [["point", 0]]


def test_find_by_text(col):
    col.add_index({"type": "fulltext", "fields": ["text"]})
    col.insert_many([
        {"_key": "a", "text": "Hello Alice, how are you doing?"},
        {"_key": "b", "text": "Hello Bob"},
        {"_key": "c", "text": ["Goodbye", "all"]},
    ])
    assert keys(col.find_by_text("text", "hello")) == ["a", "b"]
    assert keys(col.find_by_text("text", "hello,-bob")) == ["a"]
    assert keys(col.find_by_text("text", "prefix:al,|goodbye")) == ["a", "c"]
    assert keys(col.find_by_text("text", "hello", limit=1)) == ["a"]
    with pytest.raises(DocumentGetError) as info:
        col.find_by_text("other", "hello")
    assert info.value.error_code == 1571


def test_missing_geo_index(col):
    col.insert({"loc": [1, 2]})
    with pytest.raises(DocumentGetError) as info:
        quietly(col.find_near, 1, 2)
    assert (info.value.http_code, info.value.error_code) == (400, 1570)
    with pytest.raises(IndexMissingError):
        col.find_in_box(latitude1=0, longitude1=0, latitude2=1, longitude2=1)


def test_a_transaction_sees_its_own_places(db, places):
    trx = db.begin_transaction(write=places.name)
    try:
        inside = trx.collection(places.name)
        inside.insert({"_key": "mitte", "loc": [52.521, 13.401]})
        inside.delete("berlin")
        cursor = trx.aql.execute(
            "FOR d IN NEAR(@@c, 52.52, 13.40, 2) RETURN d._key", bind_vars={"@c": places.name}
        )
        assert list(cursor) == ["mitte", "potsdam"]
    finally:
        trx.abort_transaction()
    outside = db.aql.execute("FOR d IN NEAR(@@c, 52.52, 13.40, 1) RETURN d._key", bind_vars={"@c": places.name})
    assert list(outside) == ["berlin"]
