"""Monitoring: `/_admin/metrics/v2` (Quince's and ArangoDB's families), `/_admin/statistics` and
its description, the metrics table of `docs/operations.md` and the Grafana dashboard in `docs/`.

What it is: scrapes with and without credentials, counters that move when requests are made
and documents written, histogram invariants, the connection gauge against sockets the test
opens and closes, the statistics shapes through python-arango and raw HTTP, and two
consistency checks: every emitted family is in the docs table (and the reverse), and every
metric the dashboard queries is emitted.

What it is not: the Rust rendering tests (`crates/api/src/metrics`).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import requests

from conftest import REQUEST_TIMEOUT_S, unique, wait_for

REPO = Path(__file__).resolve().parents[2]
OPERATIONS_MD = REPO / "docs" / "operations.md"
DASHBOARD = REPO / "docs" / "grafana" / "quince-dashboard.json"
ROLE = 'role="SINGLE"'


def families(text: str) -> dict[str, str]:
    """Family name to type, from the `# TYPE` lines; every family must also have `# HELP`."""
    helped = {line.split(" ")[2] for line in text.splitlines() if line.startswith("# HELP ")}
    types = {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert name in helped, f"{name} has no HELP line"
            assert name not in types, f"{name} is declared twice"
            types[name] = kind
    return types


def samples(text: str) -> dict[str, float]:
    """Series (name with labels, as written) to value."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            values[series] = float(value)
    return values


def scrape(http) -> str:
    resp = http.get("/_admin/metrics/v2")
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"].startswith("text/plain")
    return resp.text


def value(values: dict[str, float], name: str) -> float:
    return values[f"{name}{{{ROLE}}}"]


def histogram(values: dict[str, float], name: str, labels: str = ROLE):
    """(bucket bounds and cumulative counts in order, sum, count) of one histogram."""
    prefix = f"{name}_bucket{{{labels},le=" if labels else f"{name}_bucket{{le="
    buckets = []
    for series, v in values.items():
        if series.startswith(prefix):
            le = series[len(prefix) :].strip('"}')
            buckets.append((float("inf") if le == "+Inf" else float(le), v))
    suffix = f"{{{labels}}}" if labels else ""
    return sorted(buckets), values[f"{name}_sum{suffix}"], values[f"{name}_count{suffix}"]


def docs_table() -> dict[str, str]:
    """Metric name to type, from the table of the `## Metrics` section of operations.md."""
    text = OPERATIONS_MD.read_text()
    section = text.split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = re.match(r"\|\s*`([a-z_:][a-z0-9_:]*)`\s*\|\s*(\w+)\s*\|", line)
        if match:
            assert match[1] not in rows, f"{match[1]} is listed twice"
            rows[match[1]] = match[2]
    return rows


def test_scrape_needs_credentials_and_works_with_them(url, http):
    for path in ("/_admin/metrics", "/_admin/metrics/v2"):
        anonymous = requests.get(url + path, timeout=REQUEST_TIMEOUT_S)
        assert anonymous.status_code == 401, anonymous.text
        assert anonymous.json()["errorNum"] == 11
        wrong = requests.get(url + path, auth=("root", "not-the-password"), timeout=REQUEST_TIMEOUT_S)
        assert wrong.status_code == 401
        text = http.get(path).text
        assert "# TYPE arangodb_http_request_statistics_total_requests_total counter" in text
        assert "# TYPE quince_http_requests_total counter" in text
    token = requests.post(
        url + "/_open/auth",
        json={"username": "root", "password": http.session.auth[1]},
        timeout=REQUEST_TIMEOUT_S,
    ).json()["jwt"]
    bearer = requests.get(
        url + "/_admin/metrics/v2", headers={"Authorization": f"bearer {token}"}, timeout=REQUEST_TIMEOUT_S
    )
    assert bearer.status_code == 200
    assert value(samples(bearer.text), "arangodb_server_statistics_server_uptime_total") >= 0


def test_every_emitted_family_is_documented_and_every_documented_one_emitted(http):
    emitted = families(scrape(http))
    documented = docs_table()
    assert sorted(set(emitted) - set(documented)) == [], "emitted but not in docs/operations.md"
    assert sorted(set(documented) - set(emitted)) == [], "in docs/operations.md but not emitted"
    for name, kind in emitted.items():
        assert documented[name] == kind, f"{name}: emitted as {kind}, documented as {documented[name]}"


def test_arangodb_families_have_arangodb_types_and_the_role_label(http):
    text = scrape(http)
    types = families(text)
    for name, kind in types.items():
        if not name.startswith("arangodb_"):
            continue
        if kind == "counter":
            assert name.endswith("_total"), name
        for line in text.splitlines():
            if line.startswith(name) and not line.startswith("#") and line[len(name)] in "{_ ":
                series = line.split(" ")[0]
                if series.split("{")[0] in (name, f"{name}_bucket", f"{name}_sum", f"{name}_count"):
                    assert "{" + ROLE in series, line
    expected = {
        "arangodb_http_request_statistics_http_get_requests_total": "counter",
        "arangodb_client_connection_statistics_client_connections": "gauge",
        "arangodb_client_connection_statistics_total_time": "histogram",
        "arangodb_client_connection_statistics_request_time": "histogram",
        "arangodb_client_connection_statistics_queue_time": "histogram",
        "arangodb_client_connection_statistics_io_time": "histogram",
        "arangodb_client_connection_statistics_bytes_sent": "histogram",
        "arangodb_document_writes_total": "counter",
        "arangodb_process_statistics_resident_set_size": "gauge",
        "arangodb_server_statistics_server_uptime_total": "counter",
    }
    for name, kind in expected.items():
        assert types.get(name) == kind, name


def test_counters_move_with_requests_and_writes(http, db_name):
    name = unique("metrics")
    base = f"/_db/{db_name}"
    assert http.post(f"{base}/_api/collection", json={"name": name}).status_code == 200
    before = samples(scrape(http))

    for i in range(4):
        assert http.post(f"{base}/_api/document/{name}", json={"_key": f"k{i}", "i": i}).status_code in (201, 202)
    assert http.put(f"{base}/_api/document/{name}/k0", json={"i": 10}).status_code in (201, 202)
    assert http.patch(f"{base}/_api/document/{name}/k1", json={"j": 1}).status_code in (201, 202)
    assert http.delete(f"{base}/_api/document/{name}/k2").status_code in (200, 202)
    assert http.post(f"{base}/_api/document/{name}", json={"_key": "k3"}).status_code == 409
    assert http.head(f"{base}/_api/document/{name}/k3").status_code == 200
    assert http.request("OPTIONS", "/_api/version").status_code in (200, 204, 405)
    trx = http.post(f"{base}/_api/transaction/begin", json={"collections": {"write": [name]}}).json()["result"]["id"]
    assert http.post(
        f"{base}/_api/document/{name}", json={"_key": "t"}, headers={"x-arango-trx-id": trx}
    ).status_code in (201, 202)
    assert http.put(f"{base}/_api/transaction/{trx}").status_code == 200
    aborted = http.post(f"{base}/_api/transaction/begin", json={"collections": {"write": [name]}}).json()
    assert http.delete(f"{base}/_api/transaction/{aborted['result']['id']}").status_code == 200
    assert http.post(f"{base}/_api/cursor", json={"query": "FOR d IN @@c RETURN d", "bindVars": {"@c": name}}).status_code == 201
    assert http.put(f"{base}/_api/collection/{name}/truncate").status_code == 200
    job = http.get("/_api/version", headers={"x-arango-async": "true"})
    assert job.status_code == 202

    after = samples(scrape(http))

    def grew(metric: str) -> float:
        return value(after, metric) - value(before, metric)

    stats = "arangodb_http_request_statistics_"
    assert grew(f"{stats}http_post_requests_total") >= 5 + 2 + 1  # documents, begins, cursor
    assert grew(f"{stats}http_put_requests_total") >= 3
    assert grew(f"{stats}http_patch_requests_total") >= 1
    assert grew(f"{stats}http_delete_requests_total") >= 2
    assert grew(f"{stats}http_head_requests_total") >= 1
    assert grew(f"{stats}http_options_requests_total") >= 1
    assert grew(f"{stats}http_get_requests_total") >= 2  # the async job and the scrape before
    assert grew(f"{stats}async_requests_total") >= 1
    assert grew(f"{stats}total_requests_total") >= 17  # every request above
    # Inserts (4, the failed one not counted), replace, update, remove, and the transaction's insert.
    assert grew("arangodb_document_writes_total") >= 8
    assert grew("arangodb_collection_truncates_total") >= 1
    assert grew("arangodb_transactions_started_total") >= 2
    assert grew("arangodb_transactions_committed_total") >= 1
    assert grew("arangodb_transactions_aborted_total") >= 1
    assert grew("arangodb_aql_all_query_total") >= 1
    assert histogram(after, "arangodb_aql_query_time")[2] - histogram(before, "arangodb_aql_query_time")[2] >= 1
    assert value(after, "arangodb_metadata_number_of_collections") >= 1
    assert value(after, "arangodb_metadata_number_of_databases") >= 2
    assert value(after, "arangodb_process_statistics_resident_set_size") > 0
    assert value(after, "arangodb_process_statistics_virtual_memory_size") >= value(
        after, "arangodb_process_statistics_resident_set_size"
    )
    assert 0 < value(after, "arangodb_process_statistics_resident_set_size_percent") < 1
    assert value(after, "arangodb_server_statistics_physical_memory") > 0
    assert value(after, "arangodb_server_statistics_cpu_cores") >= 1
    assert value(after, "arangodb_process_statistics_number_of_threads") >= 1
    _, _, body_count = histogram(after, "arangodb_client_connection_statistics_bytes_received")
    _, _, body_count_before = histogram(before, "arangodb_client_connection_statistics_bytes_received")
    assert body_count > body_count_before
    http.delete(f"{base}/_api/collection/{name}")


def test_a_bodiless_get_moves_the_sums_of_every_client_histogram(http):
    """As in ArangoDB: a GET has a head to receive and a body to read, however small."""
    before = samples(scrape(http))
    http.get("/_api/version")
    after = samples(scrape(http))
    for name in ("total_time", "request_time", "queue_time", "io_time", "bytes_sent", "bytes_received"):
        family = f"arangodb_client_connection_statistics_{name}"
        _, sum_before, count_before = histogram(before, family)
        _, sum_after, count_after = histogram(after, family)
        assert count_after >= count_before + 2, name
        assert sum_after > sum_before, name


def test_histograms_are_cumulative_and_consistent(http):
    http.get("/_api/version")
    text = scrape(http)
    values = samples(text)
    for name, kind in families(text).items():
        if kind != "histogram":
            continue
        labels = ROLE if name.startswith("arangodb_") else ""
        buckets, total, count = histogram(values, name, labels)
        assert buckets and buckets[-1][0] == float("inf"), name
        counts = [c for _, c in buckets]
        assert counts == sorted(counts), f"{name} buckets are not cumulative: {buckets}"
        assert buckets[-1][1] == count, f"{name}: +Inf {buckets[-1][1]} != count {count}"
        assert total >= 0, name
    requests_total = value(values, "arangodb_http_request_statistics_total_requests_total")
    for name in ("total_time", "request_time", "queue_time", "io_time", "bytes_sent", "bytes_received"):
        _, _, count = histogram(values, f"arangodb_client_connection_statistics_{name}")
        assert count == requests_total, name
    _, quince_sum, quince_count = histogram(values, "quince_http_request_duration_seconds", "")
    _, arango_sum, _ = histogram(values, "arangodb_client_connection_statistics_total_time")
    assert quince_count == requests_total
    assert abs(quince_sum - arango_sum) < 1e-6
    parts = sum(
        histogram(values, f"arangodb_client_connection_statistics_{n}")[1]
        for n in ("request_time", "queue_time", "io_time")
    )
    assert parts <= arango_sum + 1e-3


def test_connection_gauge_follows_open_connections(server, http):
    gauge = "arangodb_client_connection_statistics_client_connections"

    def connections() -> float:
        return value(samples(scrape(http)), gauge)

    base = connections()
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sockets = [socket.create_connection((host, int(port)), timeout=REQUEST_TIMEOUT_S) for _ in range(5)]
    try:
        wait_for(lambda: connections() >= base + 5, "five more open connections")
    finally:
        for s in sockets:
            s.close()
    wait_for(lambda: connections() <= base, "the closed connections to leave the gauge")
    closed = histogram(samples(scrape(http)), "arangodb_client_connection_statistics_connection_time")[2]
    assert closed >= 5


def test_statistics_through_python_arango(sys_db):
    first = sys_db.statistics()
    sys_db.version()
    stats = sys_db.statistics()
    assert stats["enabled"] is True
    assert stats["time"] > 1.7e9
    assert stats["http"]["requestsTotal"] > first["http"]["requestsTotal"]
    assert stats["http"]["requestsGet"] >= 3
    assert stats["client"]["httpConnections"] >= 1
    assert stats["system"]["residentSize"] > 0
    assert stats["server"]["physicalMemory"] > 0
    assert stats["server"]["uptime"] > 0
    assert {"started", "committed", "aborted"} <= set(stats["server"]["transactions"])
    description = sys_db.statistics(description=True)
    assert {g["group"] for g in description["groups"]} == {"system", "client", "http", "server"}
    assert len(description["figures"]) >= 20


def test_statistics_shapes_match_their_description(http):
    resp = http.get("/_admin/statistics")
    assert resp.status_code == 200
    stats = resp.json()
    assert stats["error"] is False and stats["code"] == 200
    for group in ("system", "client", "http", "server"):
        assert isinstance(stats[group], dict), group
    assert "v8Context" not in stats["server"]
    description = http.get("/_admin/statistics-description").json()
    assert description["error"] is False
    for figure in description["figures"]:
        assert {"group", "identifier", "name", "description", "type", "units"} <= set(figure), figure
        reported = stats[figure["group"]][figure["identifier"]]
        if figure["type"] == "distribution":
            assert len(reported["counts"]) == len(figure["cuts"]) + 1, figure["identifier"]
            assert sum(reported["counts"]) == reported["count"], figure["identifier"]
            assert reported["sum"] >= 0
        else:
            assert isinstance(reported, (int, float)), figure["identifier"]
    described = {(f["group"], f["identifier"]) for f in description["figures"]}
    for group in ("system", "client", "http"):
        for key in stats[group]:
            assert (group, key) in described, f"{group}.{key}"
    assert stats["client"]["totalTime"]["count"] == stats["http"]["requestsTotal"]
    assert http.post("/_admin/statistics").status_code == 405


def test_dashboard_queries_only_emitted_metrics(http):
    emitted = families(scrape(http))
    allowed = set()
    for name, kind in emitted.items():
        allowed.add(name)
        if kind == "histogram":
            allowed |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    dashboard = json.loads(DASHBOARD.read_text())
    expressions = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
    for variable in dashboard["templating"]["list"]:
        if isinstance(variable.get("query"), dict):
            expressions.append(variable["query"]["query"])
    assert len(expressions) >= 10
    used = set()
    for expr in expressions:
        used |= set(re.findall(r"\b(?:arangodb|quince)_[a-z0-9_]+\b", expr))
    assert sorted(used - allowed) == [], "the dashboard queries metrics the server does not emit"
    for needed in (
        "quince_http_requests_total",
        "quince_http_request_duration_seconds_bucket",
        "arangodb_client_connection_statistics_client_connections",
        "arangodb_document_writes_total",
        "arangodb_metadata_number_of_collections",
        "arangodb_process_statistics_resident_set_size",
        "arangodb_server_statistics_server_uptime_total",
    ):
        assert needed in used, needed
