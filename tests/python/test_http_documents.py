"""Curl-level document replies: status codes, headers (etag, location, x-arango-error-codes),
conditional requests, HEAD, boolean parameters, the legacy ?collection= form and /_db/ prefixes."""

import json
import re
from urllib.parse import quote

import pytest

from conftest import unique
from http_checks import assert_common_headers, assert_error, assert_success, error_codes_header
from quince_server import RawConnection, basic_auth_header

REV = re.compile(r"^[-_A-Za-z0-9]{1,11}$")


@pytest.fixture
def doc_path(db_name, col):
    return f"/_db/{db_name}/_api/document/{col.name}"


def test_insert_reply(http, db_name, col, doc_path):
    resp = http.post(doc_path, json={"_key": "k1", "a": 1})
    body = assert_success(resp, 202)
    assert set(body) == {"_id", "_key", "_rev"}
    assert body["_id"] == f"{col.name}/k1"
    assert REV.match(body["_rev"])
    assert resp.headers["etag"] == f'"{body["_rev"]}"'
    assert resp.headers["location"] == f"/_db/{db_name}/_api/document/{col.name}/k1"


def test_insert_with_wait_for_sync_is_201(http, doc_path):
    assert_success(http.post(f"{doc_path}?waitForSync=true", json={"_key": "s"}), 201)


def test_sync_collection_answers_201_and_query_cannot_disable(http, db_name, db):
    col = db.create_collection(unique("synced"), sync=True)
    try:
        path = f"/_db/{db_name}/_api/document/{col.name}"
        assert_success(http.post(path, json={"_key": "a"}), 201)
        assert_success(http.post(f"{path}?waitForSync=false", json={"_key": "b"}), 201)
        assert_success(http.patch(f"{path}/a", json={"x": 1}), 201)
        assert_success(http.put(f"{path}/a", json={"x": 2}), 201)
        assert_success(http.delete(f"{path}/a"), 200)
    finally:
        db.delete_collection(col.name)


def test_get_reply_and_etag(http, doc_path, col):
    meta = col.insert({"_key": "g", "a": [1, 2]})
    resp = http.get(f"{doc_path}/g")
    body = assert_success(resp, 200)
    assert body == {"_key": "g", "_id": f"{col.name}/g", "_rev": meta["_rev"], "a": [1, 2]}
    assert list(body)[:3] == ["_key", "_id", "_rev"]
    assert resp.headers["etag"] == f'"{meta["_rev"]}"'


def test_update_replace_delete_replies(http, db_name, doc_path, col):
    first = col.insert({"_key": "u", "a": 1})
    resp = http.patch(f"{doc_path}/u", json={"b": 2})
    body = assert_success(resp, 202)
    assert set(body) == {"_id", "_key", "_rev", "_oldRev"}
    assert body["_oldRev"] == first["_rev"]
    assert resp.headers["etag"] == f'"{body["_rev"]}"'
    assert resp.headers["location"] == f"/_db/{db_name}/_api/document/{col.name}/u"

    resp = http.put(f"{doc_path}/u", json={"c": 3, "_key": "ignored-because-url-wins"})
    body2 = assert_success(resp, 202)
    assert body2["_key"] == "u" and body2["_oldRev"] == body["_rev"]
    assert resp.headers["location"] == f"/_db/{db_name}/_api/document/{col.name}/u"
    assert col.get("u") == {"_key": "u", "_id": f"{col.name}/u", "_rev": body2["_rev"], "c": 3}

    resp = http.delete(f"{doc_path}/u")
    body3 = assert_success(resp, 202)
    assert set(body3) == {"_id", "_key", "_rev"}
    assert body3["_rev"] == body2["_rev"]


def test_silent_replies(http, doc_path, col):
    assert assert_success(http.post(f"{doc_path}?silent=true", json={"_key": "s"}), 202) == {}
    assert assert_success(http.patch(f"{doc_path}/s?silent=true", json={"a": 1}), 202) == {}
    assert assert_success(http.delete(f"{doc_path}/s?silent=true"), 202) == {}
    resp = http.post(f"{doc_path}?silent=true", json=[{"_key": "m"}, {"_key": "m"}, {"_key": "bad key"}])
    body = assert_success(resp, 202)
    assert len(body) == 2
    assert [item["errorNum"] for item in body] == [1210, 1221]
    assert error_codes_header(resp) == {"1210": 1, "1221": 1}


def test_multi_reply_and_error_codes_header(http, doc_path, col):
    col.insert({"_key": "taken"})
    resp = http.post(doc_path, json=[{"_key": "taken"}, {"_key": "new1"}, {"_key": "taken"}, {"_key": "a b"}])
    body = assert_success(resp, 202)
    assert len(body) == 4
    assert body[1]["_key"] == "new1" and "error" not in body[1]
    for index, num in ((0, 1210), (2, 1210), (3, 1221)):
        item = body[index]
        assert item["error"] is True and item["errorNum"] == num
        assert isinstance(item["errorMessage"], str)
        assert "code" not in item
    assert error_codes_header(resp) == {"1210": 2, "1221": 1}


def test_multi_without_errors_has_no_error_codes_header(http, doc_path):
    resp = http.post(doc_path, json=[{"_key": "a"}, {"_key": "b"}])
    assert_success(resp, 202)
    assert "x-arango-error-codes" not in resp.headers


def test_multi_update_replace_remove_and_onlyget(http, doc_path, col):
    metas = col.insert_many([{"_key": "a", "v": 1}, {"_key": "b", "v": 1}])
    resp = http.patch(doc_path, json=[{"_key": "a", "v": 2}, {"_key": "zz", "v": 2}, {"v": 3}])
    body = assert_success(resp, 202)
    assert body[0]["_oldRev"] == metas[0]["_rev"]
    assert body[1]["errorNum"] == 1202
    assert body[2]["error"] is True
    codes = error_codes_header(resp)
    assert codes.get("1202") == 1

    resp = http.put(f"{doc_path}?ignoreRevs=false", json=[{"_key": "b", "_rev": body[0]["_rev"], "v": 5}])
    body = assert_success(resp, 202)
    assert body[0]["errorNum"] == 1200
    assert error_codes_header(resp) == {"1200": 1}

    resp = http.put(f"{doc_path}?onlyget=true", json=["a", {"_key": "b"}, "missing"])
    body = assert_success(resp, 200)
    assert body[0]["v"] == 2 and body[1]["v"] == 1
    assert body[2]["error"] is True and body[2]["errorNum"] == 1202
    assert assert_success(http.put(f"{doc_path}?onlyget=true", json=[]), 200) == []

    resp = http.delete(doc_path, json=["a", "missing"])
    body = assert_success(resp, 202)
    assert body[0]["_key"] == "a"
    assert body[1]["errorNum"] == 1202
    assert error_codes_header(resp) == {"1202": 1}


def test_legacy_collection_parameter(http, db_name, col):
    resp = http.post(f"/_db/{db_name}/_api/document?collection={col.name}", json={"_key": "legacy"})
    assert_success(resp, 202)
    assert col.get("legacy")["_key"] == "legacy"


@pytest.mark.parametrize("value", ["true", "TRUE", "yes", "on", "y", "1", " True "])
def test_boolean_parameters_true(http, doc_path, value):
    body = assert_success(http.post(doc_path, params={"returnNew": value}, json={"x": 1}), 202)
    assert body["new"]["x"] == 1


@pytest.mark.parametrize("value", ["false", "no", "0", "off", "nonsense", ""])
def test_boolean_parameters_false(http, doc_path, value):
    body = assert_success(http.post(doc_path, params={"returnNew": value}, json={"x": 1}), 202)
    assert "new" not in body


def test_unknown_parameters_are_ignored(http, doc_path):
    assert_success(http.post(doc_path, params={"refillCaches": "1", "whatever": "x"}, json={}), 202)


def test_if_none_match(http, doc_path, col):
    meta = col.insert({"_key": "c"})
    for tag in (f'"{meta["_rev"]}"', meta["_rev"]):
        resp = http.get(f"{doc_path}/c", headers={"If-None-Match": tag})
        assert resp.status_code == 304
        assert resp.content == b""
        assert_common_headers(resp)
        resp = http.head(f"{doc_path}/c", headers={"If-None-Match": tag})
        assert resp.status_code == 304
    resp = http.get(f"{doc_path}/c", headers={"If-None-Match": '"_other_rev"'})
    assert_success(resp, 200)


def test_if_match(http, doc_path, col):
    meta = col.insert({"_key": "c", "v": 1})
    for tag in (f'"{meta["_rev"]}"', meta["_rev"]):
        assert_success(http.get(f"{doc_path}/c", headers={"If-Match": tag}), 200)
    current = col.update({"_key": "c", "v": 2})["_rev"]

    expected_extra = {"_id", "_key", "_rev"}
    for method, kwargs in (
        ("GET", {}),
        ("PATCH", {"json": {"v": 3}}),
        ("PUT", {"json": {"v": 3}}),
        ("DELETE", {}),
    ):
        resp = http.request(method, f"{doc_path}/c", headers={"If-Match": f'"{meta["_rev"]}"'}, **kwargs)
        body = assert_error(resp, 412, 1200, extra_keys=expected_extra)
        assert body["_rev"] == current
        assert body["_key"] == "c"
        assert body["_id"] == f"{col.name}/c"
    assert col.get("c")["v"] == 2

    resp = http.head(f"{doc_path}/c", headers={"If-Match": meta["_rev"]})
    assert resp.status_code == 412
    assert resp.content == b""
    assert resp.headers["etag"] == f'"{current}"'

    # An impossible revision is a failed precondition.
    resp = http.get(f"{doc_path}/c", headers={"If-Match": "not a revision at all!"})
    assert resp.status_code == 412
    assert_success(http.delete(f"{doc_path}/c", headers={"If-Match": current}), 202)


def test_ignore_revs_false_uses_rev_in_body(http, doc_path, col):
    meta = col.insert({"_key": "r", "v": 1})
    col.update({"_key": "r", "v": 2})
    resp = http.patch(f"{doc_path}/r?ignoreRevs=false", json={"_rev": meta["_rev"], "v": 3})
    assert_error(resp, 412, 1200, extra_keys={"_id", "_key", "_rev"})
    resp = http.patch(f"{doc_path}/r?ignoreRevs=true", json={"_rev": meta["_rev"], "v": 3})
    assert_success(resp, 202)
    assert col.get("r")["v"] == 3


def test_head_has_etag_and_no_body(server, http, doc_path, col):
    meta = col.insert({"_key": "h", "payload": "x" * 100})
    resp = http.head(f"{doc_path}/h")
    assert resp.status_code == 200
    assert resp.headers["etag"] == f'"{meta["_rev"]}"'
    assert_common_headers(resp)
    # On the wire: a HEAD reply followed by a GET reply on one connection parses cleanly only if
    # the HEAD reply carried no body bytes.
    auth = basic_auth_header()
    with RawConnection(server.host_port) as conn:
        conn.send(
            f"HEAD {doc_path}/h HTTP/1.1\r\nHost: t\r\nAuthorization: {auth}\r\n\r\n"
            f"GET /_api/version HTTP/1.1\r\nHost: t\r\nAuthorization: {auth}\r\n\r\n".encode()
        )
        head = conn.read(head=True)
        assert head.status == 200
        follow = conn.read()
        assert follow.status == 200
        assert follow.json()["server"] == "arango"


def test_percent_encoded_names(http, client, sys_db):
    from quince_server import ROOT_PASSWORD

    db_name = f"Quince ü {unique('db')}"
    sys_db.create_database(db_name)
    try:
        db = client.db(db_name, username="root", password=ROOT_PASSWORD)
        col_name = f"Äpfel {unique('c')}"
        db.create_collection(col_name)
        prefix = f"/_db/{quote(db_name, safe='')}"
        body = assert_success(http.get(f"{prefix}/_api/database/current"), 200)
        assert body["result"]["name"] == db_name
        col_path = f"{prefix}/_api/document/{quote(col_name, safe='')}"
        key = "a%b:c"
        resp = http.post(col_path, json={"_key": key, "v": 1})
        created = assert_success(resp, 202)
        assert created["_id"] == f"{col_name}/{key}"
        body = assert_success(http.get(f"{col_path}/{quote(key, safe='')}"), 200)
        assert body["_key"] == key and body["v"] == 1
    finally:
        sys_db.delete_database(db_name)


def test_plain_path_means_system(http):
    name = unique("sysc")
    assert_success(http.post("/_api/collection", json={"name": name}), 200)
    try:
        assert_success(http.post(f"/_api/document/{name}", json={"_key": "k"}), 202)
        assert_success(http.get(f"/_db/_system/_api/document/{name}/k"), 200)
    finally:
        assert_success(http.delete(f"/_api/collection/{name}"), 200)


def test_collection_endpoints_shapes(http, db_name):
    base = f"/_db/{db_name}/_api/collection"
    name = unique("shape")
    created = assert_success(
        http.post(base, json={"name": name, "type": 3, "waitForSync": True, "keyOptions": {"type": "padded"}}), 200
    )
    for key in ("id", "name", "type", "status", "isSystem", "globallyUniqueId", "waitForSync", "keyOptions"):
        assert key in created, key
    assert created["type"] == 3 and created["waitForSync"] is True
    assert created["keyOptions"]["type"] == "padded"
    assert created["error"] is False and created["code"] == 200

    info = assert_success(http.get(f"{base}/{name}"), 200)
    assert info["name"] == name and info["id"] == created["id"]
    listed = assert_success(http.get(base), 200)["result"]
    assert name in [c["name"] for c in listed]
    count = assert_success(http.get(f"{base}/{name}/count"), 200)
    assert count["count"] == 0
    figures = assert_success(http.get(f"{base}/{name}/figures"), 200)["figures"]
    for key in ("indexes", "documentsSize", "alive", "dead", "datafiles", "journals", "compactors"):
        assert key in figures, key
    revision = assert_success(http.get(f"{base}/{name}/revision"), 200)["revision"]
    assert isinstance(revision, str)
    checksum = assert_success(http.get(f"{base}/{name}/checksum"), 200)
    assert checksum["checksum"] == "0" and isinstance(checksum["revision"], str)
    assert assert_success(http.put(f"{base}/{name}/truncate"), 200)["name"] == name
    assert assert_success(http.put(f"{base}/{name}/load"), 200)["count"] == 0
    assert_success(http.put(f"{base}/{name}/unload"), 200)
    assert_success(http.put(f"{base}/{name}/compact"), 200)
    recalculated = assert_success(http.put(f"{base}/{name}/recalculateCount"), 200)
    assert recalculated["result"] is True
    assert assert_success(http.put(f"{base}/{name}/rename", json={"name": name}), 200)["name"] == name
    dropped = assert_success(http.delete(f"{base}/{name}"), 200)
    assert dropped["id"] == created["id"]


def test_json_body_with_any_content_type(http, doc_path):
    for content_type in ("text/plain", "application/octet-stream", None):
        headers = {"content-type": content_type} if content_type else {}
        resp = http.post(doc_path, data=json.dumps({"ct": str(content_type)}).encode(), headers=headers)
        assert_success(resp, 202)
