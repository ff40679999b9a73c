"""AQL through python-arango: `db.aql` (execute, cursors, explain, validate, query tracking,
kill, slow queries, the results cache, user functions) and the collection methods that run
on `POST /_api/cursor` (`all`, `find`, `ids`, `keys`, `random`, `find_in_range`,
`update_match`, `replace_match`, `delete_match`).

What it is: the driver's view of the query API. Each test fails if the driver cannot use the
feature against Quince as it would against ArangoDB.

What it is not: the exact HTTP replies (`test_http_cursor.py`), or the language's semantics
(the query table in `crates/aql/tests/queries.rs`). The geo and fulltext methods
(`find_near`, `find_in_radius`, `find_in_box`, `find_by_text`) are in `test_driver_geo.py`.
"""

from __future__ import annotations

import threading

import pytest
from arango.exceptions import (
    AQLFunctionCreateError,
    AQLQueryExecuteError,
    AQLQueryKillError,
    AQLQueryValidateError,
    CursorNextError,
)

from conftest import wait_for


@pytest.fixture
def people(col):
    col.insert_many([
        {"_key": "ann", "name": "Ann", "age": 31, "city": "Oslo"},
        {"_key": "bob", "name": "Bob", "age": 25, "city": "Rome"},
        {"_key": "cid", "name": "Cid", "age": 40, "city": "Oslo", "address": {"zip": "0150"}},
        {"_key": "dee", "name": "Dee", "age": 25, "city": "Lima"},
    ])
    return col


def test_execute_iterates_every_batch(db):
    cursor = db.aql.execute("FOR i IN 1..2500 RETURN i", batch_size=1000, count=True)
    assert cursor.count() == 2500
    assert cursor.has_more() is True
    assert list(cursor) == list(range(1, 2501))
    assert cursor.has_more() is False


def test_bind_vars_statistics_and_full_count(db, people):
    cursor = db.aql.execute(
        "FOR p IN @@c FILTER p.age >= @min SORT p.name LIMIT 1 RETURN p.name",
        bind_vars={"@c": people.name, "min": 26},
        full_count=True,
    )
    assert list(cursor) == ["Ann"]
    stats = cursor.statistics()
    assert stats["scanned_full"] == 4
    assert stats["fullCount"] == 2
    assert cursor.warnings() == []


def test_fetch_and_close(db):
    cursor = db.aql.execute("FOR i IN 1..10 RETURN i", batch_size=3)
    assert cursor.batch() is not None and len(cursor.batch()) == 3
    fetched = cursor.fetch()
    assert list(fetched["batch"]) == [4, 5, 6] and fetched["has_more"] is True
    assert cursor.close() is True
    with pytest.raises(CursorNextError) as error:
        cursor.fetch()
    assert error.value.error_code == 1600


def test_stream_cursor(db):
    cursor = db.aql.execute("FOR i IN 1..100000 RETURN i", stream=True, batch_size=100)
    first = [next(cursor) for _ in range(250)]
    assert first == list(range(1, 251))
    cursor.close(ignore_missing=True)


def test_parse_errors_and_validate(db):
    with pytest.raises(AQLQueryExecuteError) as error:
        db.aql.execute("INVALID QUERY")
    assert error.value.error_code == 1501 and error.value.http_code == 400
    parsed = db.aql.validate("FOR d IN @@c FILTER d.a == @a RETURN d")
    assert parsed["parsed"] is True
    assert sorted(parsed["bind_vars"]) == ["@c", "a"]
    with pytest.raises(AQLQueryValidateError):
        db.aql.validate("FOR d IN")


def test_explain(db, people):
    plan = db.aql.explain(f"FOR p IN {people.name} FILTER p._key == 'ann' RETURN p")
    types = [n["type"] for n in plan["nodes"]]
    assert "IndexNode" in types
    plans = db.aql.explain(f"FOR p IN {people.name} RETURN p", all_plans=True)
    assert isinstance(plans, list) and plans[0]["nodes"]


def test_collection_methods_on_aql(people):
    assert sorted(d["_key"] for d in people.all()) == ["ann", "bob", "cid", "dee"]
    assert len(list(people.all(skip=1, limit=2))) == 2
    assert sorted(people.ids()) == [f"{people.name}/{k}" for k in ["ann", "bob", "cid", "dee"]]
    assert sorted(people.keys()) == ["ann", "bob", "cid", "dee"]
    assert people.random()["_key"] in {"ann", "bob", "cid", "dee"}
    found = people.find({"city": "Oslo"}, sort=[{"sort_by": "age", "sort_order": "DESC"}])
    assert [d["name"] for d in found] == ["Cid", "Ann"]
    assert [d["_key"] for d in people.find({"address.zip": "0150"})] == ["cid"]
    assert sorted(d["_key"] for d in people.find_in_range("age", 25, 31)) == ["bob", "dee"]


def test_match_methods(people):
    assert people.update_match({"city": "Oslo"}, {"visited": True}) == 2
    assert people.get("ann")["visited"] is True
    assert people.replace_match({"name": "Bob"}, {"name": "Bobby"}) == 1
    assert "age" not in people.get("bob")
    assert people.delete_match({"city": "Lima"}) == 1
    assert people.count() == 3
    assert people.update_match({"city": "Oslo"}, {"visited": None}, keep_none=False, limit=1) == 1


def test_query_in_a_stream_transaction(db, col):
    txn = db.begin_transaction(write=[col.name])
    txn.aql.execute(f"FOR i IN 1..3 INSERT {{_key: TO_STRING(i)}} INTO {col.name}")
    assert list(txn.aql.execute(f"RETURN LENGTH({col.name})")) == [3]
    assert col.count() == 0
    txn.commit_transaction()
    assert col.count() == 3


def test_tracking_kill_and_slow_queries(db):
    tracking = db.aql.tracking()
    assert tracking["enabled"] is True
    result = {}

    def run():
        try:
            db.aql.execute("RETURN SLEEP(20)")
        except AQLQueryExecuteError as e:
            result["error"] = e

    runner = threading.Thread(target=run)
    runner.start()
    running = wait_for(lambda: [q for q in db.aql.queries() if "SLEEP(20)" in q["query"]],
                       "the query to be listed")
    assert db.aql.kill(running[0]["id"]) is True
    runner.join(timeout=30)
    assert result["error"].error_code == 1500
    with pytest.raises(AQLQueryKillError):
        db.aql.kill("123456789")
    try:
        db.aql.set_tracking(slow_query_threshold=0)
        db.aql.execute("RETURN 'slow one'")
        assert any("slow one" in q["query"] for q in db.aql.slow_queries())
        assert db.aql.clear_slow_queries() is True
    finally:
        db.aql.set_tracking(slow_query_threshold=10)


def test_results_cache(db, people):
    cache = db.aql.cache
    try:
        assert cache.configure(mode="demand")["mode"] == "demand"
        query = f"FOR p IN {people.name} FILTER p.age > 30 RETURN p.name"
        assert db.aql.execute(query, cache=True).cached() is False
        assert db.aql.execute(query, cache=True).cached() is True
        assert db.aql.execute(query).cached() is False
        assert [e["query"] for e in cache.entries()] == [query]
        assert cache.clear() is True
        assert cache.entries() == []
    finally:
        cache.configure(mode="off")


def test_user_functions_are_disabled(db):
    assert db.aql.functions() == []
    with pytest.raises(AQLFunctionCreateError) as error:
        db.aql.create_function("my::f", "function () { return 1; }")
    assert error.value.error_code == 36
    assert db.aql.delete_function("my::f", ignore_missing=True) is False


def test_query_rules(db):
    names = [r["name"] for r in db.aql.query_rules()]
    assert "use-indexes" in names
