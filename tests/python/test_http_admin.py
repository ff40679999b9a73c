"""Curl-level server endpoints: version, engine, role, status, time, echo, availability, license,
metrics (Prometheus text) and key generators."""

import re
import time

import pytest

from conftest import unique
from http_checks import assert_common_headers, assert_success


def test_version(http):
    body = assert_success(http.get("/_api/version"), 200)
    assert body["server"] == "arango"
    assert re.fullmatch(r"3\.12\.\d+.*", body["version"]), body
    assert body["license"] in ("community", "enterprise")
    assert "details" not in body
    assert "error" not in body and "code" not in body


@pytest.mark.parametrize("flag", ["true", "1", "yes"])
def test_version_details_name_quince(http, flag):
    body = assert_success(http.get(f"/_api/version?details={flag}"), 200)
    details = body["details"]
    assert isinstance(details, dict)
    assert "quince" in repr(details).lower(), details


def test_engine(http):
    body = assert_success(http.get("/_api/engine"), 200)
    # The name 3.12 clients expect, and what the engine really is under Quince's own attribute.
    assert body["name"] == "rocksdb"
    assert body["quince"]["engine"] == "journal"
    assert isinstance(body["supports"], dict)
    # Only the index types that exist are advertised.
    assert body["supports"]["indexes"] == [
        "primary", "edge", "persistent", "hash", "skiplist", "ttl", "geo", "fulltext",
    ]
    assert body["supports"]["aliases"] == {
        "indexes": {"hash": "persistent", "skiplist": "persistent", "geo1": "geo", "geo2": "geo"}
    }


def test_role(http):
    body = assert_success(http.get("/_admin/server/role"), 200)
    assert body == {"error": False, "code": 200, "role": "SINGLE", "mode": "default"}


def test_status(http):
    body = assert_success(http.get("/_admin/status"), 200)
    assert body["server"] == "arango"
    assert body["version"].startswith("3.12.")
    assert body["mode"] in ("server", "default")
    assert isinstance(body["pid"], int) and body["pid"] > 0
    assert body["serverInfo"]["role"] == "SINGLE"
    assert body["serverInfo"]["writeOpsEnabled"] is True
    assert body["serverInfo"]["readOnly"] is False


def test_time(http):
    before = time.time()
    body = assert_success(http.get("/_admin/time"), 200)
    after = time.time()
    assert body["error"] is False and body["code"] == 200
    assert isinstance(body["time"], float)
    assert before - 5 <= body["time"] <= after + 5


def test_echo(http):
    body = assert_success(http.get("/_admin/echo?flavour=quince"), 200)
    assert body["requestType"] == "GET"
    assert body["parameters"]["flavour"] == "quince"
    assert body["user"] == "root"
    assert body["protocol"] == "http"
    assert body["database"] == "_system"
    text = '{"hello": "quince"}'
    body = assert_success(http.post("/_admin/echo", data=text.encode()), 200)
    assert body["requestType"] == "POST"
    assert body["requestBody"] == text


def test_availability(http):
    body = assert_success(http.get("/_admin/server/availability"), 200)
    assert body["mode"] == "default"


def test_license(http):
    body = assert_success(http.get("/_admin/license"), 200)
    assert body == {"license": "none"}


def test_key_generators(http):
    body = assert_success(http.get("/_api/key-generators"), 200)
    assert sorted(body["keyGenerators"]) == ["autoincrement", "padded", "traditional", "uuid"]


def parse_metrics(text: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, _, value = line.rpartition(" ")
        values[name_labels] = float(value)
    return values


def metric_sum(values: dict[str, float], pattern: str) -> tuple[float, list[str]]:
    names = [name for name in values if re.search(pattern, name.split("{")[0])]
    return sum(values[n] for n in names), names


@pytest.mark.parametrize("path", ["/_admin/metrics", "/_admin/metrics/v2"])
def test_metrics(http, path, db_name, col):
    first = http.get(path)
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("text/plain")
    assert_common_headers(first)
    text = first.text
    assert "# HELP " in text and "# TYPE " in text
    before = parse_metrics(text)
    requests_before, request_names = metric_sum(before, r"request")
    assert request_names, "no request metric"
    _, document_names = metric_sum(before, r"document")
    assert document_names, "no document metric"
    bytes_before, byte_names = metric_sum(before, r"journal.*bytes|bytes.*journal")
    assert byte_names, "no journal byte metric"
    syncs_before, sync_names = metric_sum(before, r"sync")
    assert sync_names, "no sync metric"

    for i in range(5):
        resp = http.post(f"/_db/{db_name}/_api/document/{col.name}?waitForSync=true", json={"i": i, "pad": "x" * 100})
        assert resp.status_code == 201

    after = parse_metrics(http.get(path).text)
    assert metric_sum(after, r"request")[0] > requests_before
    assert metric_sum(after, r"journal.*bytes|bytes.*journal")[0] >= bytes_before + 5 * 100
    assert metric_sum(after, r"sync")[0] > syncs_before


def test_success_bodies_have_no_error_num(http, db_name):
    name = unique("nerr")
    for method, path, kwargs in (
        ("GET", "/_api/database", {}),
        ("GET", "/_api/database/current", {}),
        ("GET", "/_api/database/user", {}),
        ("GET", "/_api/collection", {}),
        ("POST", f"/_db/{db_name}/_api/collection", {"json": {"name": name}}),
        ("GET", f"/_db/{db_name}/_api/collection/{name}/properties", {}),
        ("POST", f"/_db/{db_name}/_api/document/{name}", {"json": {"_key": "k"}}),
        ("GET", f"/_db/{db_name}/_api/document/{name}/k", {}),
        ("DELETE", f"/_db/{db_name}/_api/collection/{name}", {}),
    ):
        resp = http.request(method, path, **kwargs)
        assert 200 <= resp.status_code < 300, (method, path, resp.text)
        assert "errorNum" not in resp.json(), (method, path, resp.text)
        assert_common_headers(resp)
