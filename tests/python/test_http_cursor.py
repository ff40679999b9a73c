"""The cursor and query-management HTTP API, curl-level: exact status codes, bodies and
errorNums of `/_api/cursor`, `/_api/explain`, `/_api/query...`, `/_api/query-cache...` and
`/_api/aqlfunction`.

What it is: the contract as a client without a driver sees it: batches and their ids, counts,
`extra`, retries, streaming, expiry, the errors of the compile stage (1501 with a position,
1551-1553, 1203), the memory limit (32), kills (1500), the slow log, the results cache and
its invalidation by writes, transactions around data-modification queries.

What it is not: the language's semantics (the Rust query table in `crates/aql/tests`) or the
drivers' view (`test_driver_aql.py`).
"""

from __future__ import annotations

import pytest

from conftest import unique, wait_for


@pytest.fixture
def base(db_name):
    return f"/_db/{db_name}"


@pytest.fixture
def filled(http, base, col):
    docs = [{"_key": f"k{i}", "a": i, "g": i % 3} for i in range(20)]
    r = http.post(f"{base}/_api/document/{col.name}", json=docs)
    assert r.status_code == 202
    return col.name


def cursor(http, base, body, **kw):
    return http.post(f"{base}/_api/cursor", json=body, **kw)


def test_a_single_batch_answers_201_without_an_id(http, base):
    r = cursor(http, base, {"query": "RETURN 1"})
    assert r.status_code == 201
    body = r.json()
    assert body["result"] == [1]
    assert body["hasMore"] is False
    assert "id" not in body
    assert body["cached"] is False
    assert body["error"] is False and body["code"] == 201
    stats = body["extra"]["stats"]
    for name in ("writesExecuted", "writesIgnored", "scannedFull", "scannedIndex", "filtered",
                 "executionTime", "peakMemoryUsage"):
        assert name in stats
    assert body["extra"]["warnings"] == []


def test_batches_ids_and_count(http, base):
    r = cursor(http, base, {"query": "FOR i IN 1..5 RETURN i", "batchSize": 2, "count": True})
    assert r.status_code == 201
    first = r.json()
    assert first["result"] == [1, 2] and first["hasMore"] is True and first["count"] == 5
    cid = first["id"]
    assert isinstance(cid, str)
    second = http.post(f"{base}/_api/cursor/{cid}")
    assert second.status_code == 200
    assert second.json()["result"] == [3, 4] and second.json()["hasMore"] is True
    assert second.json()["id"] == cid
    third = http.put(f"{base}/_api/cursor/{cid}")
    assert third.status_code == 200
    assert third.json()["result"] == [5] and third.json()["hasMore"] is False
    gone = http.post(f"{base}/_api/cursor/{cid}")
    assert gone.status_code == 404
    assert gone.json()["errorNum"] == 1600


def test_delete_a_cursor(http, base):
    first = cursor(http, base, {"query": "FOR i IN 1..10 RETURN i", "batchSize": 1}).json()
    r = http.delete(f"{base}/_api/cursor/{first['id']}")
    assert r.status_code == 202
    assert r.json() == {"id": first["id"], "error": False, "code": 202}
    again = http.delete(f"{base}/_api/cursor/{first['id']}")
    assert again.status_code == 404 and again.json()["errorNum"] == 1600
    assert http.post(f"{base}/_api/cursor/{first['id']}").json()["errorNum"] == 1600
    assert http.post(f"{base}/_api/cursor/notanumber").json()["errorNum"] == 1600


def test_parse_errors_name_line_and_column(http, base):
    r = cursor(http, base, {"query": "FOR x IN [1]\n  FILTER x ==\nRETURN x"})
    assert r.status_code == 400
    body = r.json()
    assert body["errorNum"] == 1501 and body["error"] is True and body["code"] == 400
    assert "3:" in body["errorMessage"] and "syntax error" in body["errorMessage"]
    invalid = cursor(http, base, {"query": "INVALID QUERY"})
    assert invalid.status_code == 400 and invalid.json()["errorNum"] == 1501
    empty = cursor(http, base, {"query": ""})
    assert empty.status_code == 400 and empty.json()["errorNum"] == 1502


def test_bind_parameter_errors(http, base, filled):
    missing = cursor(http, base, {"query": "RETURN @x"})
    assert missing.status_code == 400 and missing.json()["errorNum"] == 1551
    undeclared = cursor(http, base, {"query": "RETURN 1", "bindVars": {"x": 1}})
    assert undeclared.status_code == 400 and undeclared.json()["errorNum"] == 1552
    wrong = cursor(http, base, {"query": "FOR d IN @@c RETURN d", "bindVars": {"@c": 12}})
    assert wrong.status_code == 400 and wrong.json()["errorNum"] == 1553
    bad = cursor(http, base, {"query": "RETURN 1", "bindVars": [1]})
    assert bad.status_code == 400 and bad.json()["errorNum"] == 1550
    ok = cursor(http, base, {"query": "FOR d IN @@c FILTER d.a == @a RETURN d._key",
                             "bindVars": {"@c": filled, "a": 3}})
    assert ok.status_code == 201 and ok.json()["result"] == ["k3"]


def test_unknown_collection_is_1203(http, base):
    r = cursor(http, base, {"query": "FOR d IN no_such_collection RETURN d"})
    assert r.status_code == 404 and r.json()["errorNum"] == 1203


def test_unknown_function_and_wrong_arity(http, base):
    r = cursor(http, base, {"query": "RETURN NO_SUCH_FUNCTION(1)"})
    assert r.status_code == 400 and r.json()["errorNum"] == 1540
    r = cursor(http, base, {"query": "RETURN LENGTH(1, 2, 3)"})
    assert r.status_code == 400 and r.json()["errorNum"] == 1541


def test_memory_limit_is_32(http, base):
    r = cursor(http, base, {"query": "FOR i IN 1..100000 RETURN {i, s: CONCAT('x', i)}",
                            "memoryLimit": 100000})
    assert r.status_code == 400
    assert r.json()["errorNum"] == 32


def test_full_count(http, base, filled):
    r = cursor(http, base, {"query": f"FOR d IN {filled} LIMIT 2 RETURN d",
                            "options": {"fullCount": True}})
    body = r.json()
    assert len(body["result"]) == 2
    assert body["extra"]["stats"]["fullCount"] == 20


def test_retry_the_latest_batch(http, base):
    first = cursor(http, base, {"query": "FOR i IN 1..5 RETURN i", "batchSize": 2,
                                "options": {"allowRetry": True}}).json()
    assert first["nextBatchId"] == "2"
    cid = first["id"]
    second = http.post(f"{base}/_api/cursor/{cid}/2").json()
    assert second["result"] == [3, 4] and second["nextBatchId"] == "3"
    again = http.post(f"{base}/_api/cursor/{cid}/2").json()
    assert again["result"] == [3, 4]
    third = http.post(f"{base}/_api/cursor/{cid}/3").json()
    assert third["result"] == [5] and third["hasMore"] is False
    assert http.delete(f"{base}/_api/cursor/{cid}").status_code == 202


def test_stream_cursor_answers_before_the_query_ends(http, base):
    r = cursor(http, base, {"query": "FOR i IN 1..1000000 RETURN i", "batchSize": 10,
                            "options": {"stream": True}})
    assert r.status_code == 201
    body = r.json()
    assert body["result"] == list(range(1, 11)) and body["hasMore"] is True
    assert "extra" not in body
    nxt = http.post(f"{base}/_api/cursor/{body['id']}").json()
    assert nxt["result"] == list(range(11, 21))
    assert http.delete(f"{base}/_api/cursor/{body['id']}").status_code == 202


def test_stream_cursor_gives_extra_with_its_last_batch(http, base):
    body = cursor(http, base, {"query": "FOR i IN 1..3 RETURN i", "batchSize": 2,
                               "options": {"stream": True}}).json()
    assert body["hasMore"] is True and "extra" not in body
    last = http.post(f"{base}/_api/cursor/{body['id']}").json()
    assert last["result"] == [3] and last["hasMore"] is False
    assert "stats" in last["extra"]


def test_cursor_expires_after_its_ttl(http, base):
    body = cursor(http, base, {"query": "FOR i IN 1..3 RETURN i", "batchSize": 1, "ttl": 1}).json()
    wait_for(lambda: http.post(f"{base}/_api/cursor/{body['id']}").status_code == 404,
             "the cursor to expire", deadline_s=10)


def test_a_failing_modification_query_writes_nothing(http, base, col):
    r = cursor(http, base, {"query": f"FOR i IN [1, 2, 1] INSERT {{_key: TO_STRING(i)}} INTO {col.name}"})
    assert r.status_code == 409
    assert r.json()["errorNum"] == 1210
    assert http.get(f"{base}/_api/collection/{col.name}/count").json()["count"] == 0


def test_modification_stats_and_ignore_errors(http, base, col):
    r = cursor(http, base, {"query": f"FOR i IN [1, 2, 1] INSERT {{_key: TO_STRING(i)}} INTO {col.name} "
                                     "OPTIONS {ignoreErrors: true}"})
    assert r.status_code == 201
    stats = r.json()["extra"]["stats"]
    assert stats["writesExecuted"] == 2 and stats["writesIgnored"] == 1


def test_query_in_a_stream_transaction(http, base, col):
    begin = http.post(f"{base}/_api/transaction/begin", json={"collections": {"write": [col.name]}})
    trx = begin.json()["result"]["id"]
    headers = {"x-arango-trx-id": trx}
    r = cursor(http, base, {"query": f"INSERT {{_key: 'in'}} INTO {col.name}"}, headers=headers)
    assert r.status_code == 201
    seen = cursor(http, base, {"query": f"FOR d IN {col.name} RETURN d._key"}, headers=headers).json()
    assert seen["result"] == ["in"]
    outside = cursor(http, base, {"query": f"FOR d IN {col.name} RETURN d._key"}).json()
    assert outside["result"] == []
    assert http.put(f"{base}/_api/transaction/{trx}").status_code == 200
    after = cursor(http, base, {"query": f"FOR d IN {col.name} RETURN d._key"}).json()
    assert after["result"] == ["in"]


def test_kill_a_running_query(http, base):
    job = http.post(f"{base}/_api/cursor", json={"query": "RETURN SLEEP(20)"},
                    headers={"x-arango-async": "store"})
    assert job.status_code == 202
    job_id = job.headers["x-arango-async-id"]
    running = wait_for(lambda: [q for q in http.get(f"{base}/_api/query/current").json()
                                if "SLEEP(20)" in q["query"]], "the query to run")
    query = running[0]
    assert query["state"] == "executing" and query["stream"] is False
    killed = http.delete(f"{base}/_api/query/{query['id']}")
    assert killed.status_code == 200 and killed.json() == {"error": False, "code": 200}
    # A Response is falsy for a 4xx status, so the poll wraps it.
    (result,) = wait_for(lambda: (lambda r: (r,) if r.status_code != 204 else None)(
        http.put(f"{base}/_api/job/{job_id}")), "the killed query's job")
    assert result.status_code == 410 and result.json()["errorNum"] == 1500
    missing = http.delete(f"{base}/_api/query/999999999")
    assert missing.status_code == 404 and missing.json()["errorNum"] == 1591


def test_max_runtime_stops_a_query(http, base):
    r = cursor(http, base, {"query": "RETURN SLEEP(20)", "options": {"maxRuntime": 0.2}})
    assert r.status_code == 410 and r.json()["errorNum"] == 1500


def test_extreme_numbers_in_options_and_function_calls_never_answer_500(http, base):
    """Issue 34, item 7: `maxRuntime: 1e300` (a deadline past what a clock holds: none, as
    in ArangoDB, which reads it as a double) and `batchSize: 1e300` on a streaming cursor
    used to panic (500); a date function with a huge amount answers null with its warning."""
    for body in (
        {"query": "RETURN 1", "options": {"maxRuntime": 1e300}},
        {"query": "RETURN 1", "options": {"maxRuntime": 1.8e19}},
        {"query": "FOR i IN 1..3 RETURN i", "batchSize": 1e300, "options": {"stream": True}},
        {"query": "FOR i IN 1..3 RETURN i", "batchSize": 1e300},
        {"query": "RETURN 1", "ttl": 1e300, "memoryLimit": 1e300,
         "options": {"maxWarningCount": 1e300}},
    ):
        r = cursor(http, base, body)
        assert r.status_code == 201, (body, r.text)
        assert r.json()["hasMore"] is False, r.text
    r = cursor(http, base, {"query": "RETURN [DATE_ADD('2019-01-01', 1e300, 'years'), "
                                     "DATE_SUBTRACT('2019-01-01', @n, 'days')]",
                            "bindVars": {"n": 1e300}})
    assert r.status_code == 201, r.text
    body = r.json()
    assert body["result"] == [[None, None]]
    assert [w["code"] for w in body["extra"]["warnings"]] == [1572, 1572]


def test_max_runtime_stops_a_long_function_even_on_constant_arguments(http, base):
    """Issue 34: `LEVENSHTEIN_DISTANCE` of two long bind values was folded at plan time,
    where no kill and no `maxRuntime` reached it (and its table took the product of the
    lengths in memory); now folding gives up after a moment and the run is stopped."""
    r = cursor(http, base, {"query": "RETURN LEVENSHTEIN_DISTANCE(@a, @b)",
                            "bindVars": {"a": "ab" * 15000, "b": "ba" * 15000},
                            "options": {"maxRuntime": 0.3}})
    assert r.status_code == 410 and r.json()["errorNum"] == 1500, r.text[:300]


def test_slow_query_log(http, base):
    props = http.get(f"{base}/_api/query/properties").json()
    assert props["enabled"] is True and props["slowQueryThreshold"] == 10
    try:
        changed = http.put(f"{base}/_api/query/properties", json={"slowQueryThreshold": 0})
        assert changed.status_code == 200 and changed.json()["slowQueryThreshold"] == 0
        marker = unique("slow")
        cursor(http, base, {"query": f"RETURN '{marker}'"})
        slow = http.get(f"{base}/_api/query/slow").json()
        assert any(marker in q["query"] for q in slow)
        assert http.delete(f"{base}/_api/query/slow").status_code == 200
        assert not any(marker in q["query"] for q in http.get(f"{base}/_api/query/slow").json())
    finally:
        http.put(f"{base}/_api/query/properties", json={"slowQueryThreshold": 10})


def test_results_cache_is_invalidated_by_writes(http, base, filled):
    assert http.get(f"{base}/_api/query-cache/properties").json()["mode"] == "off"
    try:
        on = http.put(f"{base}/_api/query-cache/properties", json={"mode": "on"})
        assert on.status_code == 200 and on.json()["mode"] == "on"
        query = {"query": f"FOR d IN {filled} COLLECT WITH COUNT INTO n RETURN n"}
        first = cursor(http, base, query).json()
        assert first["result"] == [20] and first["cached"] is False
        second = cursor(http, base, query).json()
        assert second["result"] == [20] and second["cached"] is True
        entries = http.get(f"{base}/_api/query-cache/entries").json()
        assert any(e["query"] == query["query"] and e["hits"] >= 1 for e in entries)
        http.post(f"{base}/_api/document/{filled}", json={"a": 99})
        third = cursor(http, base, query).json()
        assert third["result"] == [21] and third["cached"] is False
        opted_out = cursor(http, base, {**query, "cache": False}).json()
        assert opted_out["cached"] is False
        assert http.delete(f"{base}/_api/query-cache/entries").status_code == 200
        assert http.get(f"{base}/_api/query-cache/entries").json() == []
    finally:
        http.put(f"{base}/_api/query-cache/properties", json={"mode": "off"})


def test_explain_shows_the_primary_index(http, base, filled):
    r = http.post(f"{base}/_api/explain",
                  json={"query": f"FOR d IN {filled} FILTER d._key == 'k1' RETURN d"})
    assert r.status_code == 200
    plan = r.json()["plan"]
    types = [n["type"] for n in plan["nodes"]]
    assert types[0] == "SingletonNode" and "IndexNode" in types and types[-1] == "ReturnNode"
    assert "use-indexes" in plan["rules"]
    assert plan["collections"] == [{"name": filled, "type": "read"}]
    scan = http.post(f"{base}/_api/explain", json={"query": f"FOR d IN {filled} RETURN d"}).json()
    assert "EnumerateCollectionNode" in [n["type"] for n in scan["plan"]["nodes"]]


def test_parse_only(http, base, filled):
    r = http.post(f"{base}/_api/query", json={"query": f"FOR d IN {filled} FILTER d.a == @a RETURN d"})
    assert r.status_code == 200
    body = r.json()
    assert body["parsed"] is True
    assert body["collections"] == [filled]
    assert body["bindVars"] == ["a"]
    assert isinstance(body["ast"], list) and body["ast"][0]["type"] == "root"
    bad = http.post(f"{base}/_api/query", json={"query": "FOR d IN"})
    assert bad.status_code == 400 and bad.json()["errorNum"] == 1501


def test_user_functions_need_javascript(http, base):
    listed = http.get(f"{base}/_api/aqlfunction")
    assert listed.status_code == 200 and listed.json()["result"] == []
    created = http.post(f"{base}/_api/aqlfunction", json={"name": "my::f", "code": "function () {}"})
    assert created.status_code == 403 and created.json()["errorNum"] == 36
    deleted = http.delete(f"{base}/_api/aqlfunction/my::f")
    assert deleted.status_code == 404 and deleted.json()["errorNum"] == 1582
