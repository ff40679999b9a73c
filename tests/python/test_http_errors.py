"""Curl-level error replies: exact status codes, errorNums and error bodies for bad input,
missing things, unknown paths, wrong methods and limits."""

import json

import pytest

from conftest import Http, unique
from http_checks import assert_error, assert_success
from quince_server import RawConnection, basic_auth_header


@pytest.fixture
def doc_path(db_name, col):
    return f"/_db/{db_name}/_api/document/{col.name}"


def post_raw(http, path, data: bytes, **kw):
    headers = {"content-type": "application/json", **kw.pop("headers", {})}
    return http.post(path, data=data, headers=headers, **kw)


@pytest.mark.parametrize(
    "body",
    [b'{"a":', b"{a:1}", b'{"a":1}}', b'{"a":1} trailing', b"", b"\xff\xfe", b'{"a":"\\x"}', b"[1,]"],
    ids=["truncated", "unquoted", "extra-brace", "trailing", "empty", "not-utf8", "bad-escape", "trailing-comma"],
)
def test_malformed_json_is_600(http, doc_path, body):
    assert_error(post_raw(http, doc_path, body), 400, 600)


def test_duplicate_attribute_names_are_600(http, doc_path, col):
    assert_error(post_raw(http, doc_path, b'{"a":1,"a":2}'), 400, 600)
    assert_error(post_raw(http, doc_path, b'{"o":{"x":1,"x":1}}'), 400, 600)
    assert_error(post_raw(http, doc_path, b'[{"_key":"k","_key":"k"}]'), 400, 600)
    assert col.count() == 0


def test_nesting_too_deep_is_600(http, doc_path, col):
    deep = b'{"a":' + b"[" * 1000 + b"]" * 1000 + b"}"
    assert_error(post_raw(http, doc_path, deep), 400, 600)
    # Moderate nesting is fine.
    ok = b'{"a":' + b"[" * 30 + b"]" * 30 + b"}"
    assert_success(post_raw(http, doc_path, ok), 202)
    assert col.count() == 1


@pytest.mark.parametrize("body", [b"42", b'"text"', b"null", b"true"])
def test_insert_non_object_is_1227(http, doc_path, body):
    assert_error(post_raw(http, doc_path, body), 400, 1227)


def test_single_replace_and_update_with_array_are_1227(http, doc_path, col):
    col.insert({"_key": "k"})
    assert_error(http.put(f"{doc_path}/k", json=[{"a": 1}]), 400, 1227)
    assert_error(http.patch(f"{doc_path}/k", json=[{"a": 1}]), 400, 1227)
    assert_error(http.put(f"{doc_path}/k", data=b"5", headers={"content-type": "application/json"}), 400, 1227)


def test_multi_items_of_wrong_type_are_inline_1227(http, doc_path):
    resp = http.post(doc_path, json=[{"_key": "ok"}, 5, "x"])
    body = assert_success(resp, 202)
    assert body[0]["_key"] == "ok"
    for item in body[1:]:
        assert item["error"] is True and item["errorNum"] == 1227


@pytest.mark.parametrize("key", ["a b", "a/b", "x" * 255, "", "é", 5, None, ["k"]])
def test_invalid_key_is_1221(http, doc_path, key):
    assert_error(http.post(doc_path, json={"_key": key}), 400, 1221)


def test_key_not_allowed_is_1222(http, db_name, db):
    col = db.create_collection(unique("nokeys"), user_keys=False)
    try:
        assert_error(http.post(f"/_db/{db_name}/_api/document/{col.name}", json={"_key": "mine"}), 400, 1222)
    finally:
        db.delete_collection(col.name)


def test_missing_collection_is_1203(http, db_name):
    ghost = unique("ghost")
    assert_error(http.post(f"/_db/{db_name}/_api/document/{ghost}", json={}), 404, 1203)
    assert_error(http.get(f"/_db/{db_name}/_api/document/{ghost}/k"), 404, 1203)
    assert_error(http.get(f"/_db/{db_name}/_api/collection/{ghost}"), 404, 1203)
    assert_error(http.get(f"/_db/{db_name}/_api/collection/{ghost}/properties"), 404, 1203)
    assert_error(http.delete(f"/_db/{db_name}/_api/collection/{ghost}"), 404, 1203)
    assert_error(http.post(f"/_db/{db_name}/_api/document?collection={ghost}", json={}), 404, 1203)


def test_missing_database_is_1228(http):
    ghost = unique("ghostdb")
    assert_error(http.get(f"/_db/{ghost}/_api/collection"), 404, 1228)
    assert_error(http.post(f"/_db/{ghost}/_api/document/c", json={}), 404, 1228)
    assert_error(http.get(f"/_db/{ghost}/_api/version"), 404, 1228)


def test_missing_document_is_1202(http, doc_path):
    assert_error(http.get(f"{doc_path}/nope"), 404, 1202, message_prefix="document not found")
    assert_error(http.patch(f"{doc_path}/nope", json={"a": 1}), 404, 1202)
    assert_error(http.put(f"{doc_path}/nope", json={"a": 1}), 404, 1202)
    assert_error(http.delete(f"{doc_path}/nope"), 404, 1202)


def test_head_missing_document_has_no_body(http, doc_path):
    resp = http.head(f"{doc_path}/nope")
    assert resp.status_code == 404
    assert resp.content == b""


def test_unknown_path_is_404(http):
    body = assert_error(http.get("/_api/no-such-thing"), 404, 404)
    assert body["errorMessage"].startswith("unknown path")
    assert "/_api/no-such-thing" in body["errorMessage"]
    assert_error(http.get("/definitely/not/here"), 404, 404)


@pytest.mark.parametrize(
    "method,path",
    [("DELETE", "/_api/version"), ("PUT", "/_api/engine"), ("POST", "/_admin/time"), ("PATCH", "/_api/key-generators")],
)
def test_wrong_method_is_405(http, method, path):
    assert_error(http.request(method, path), 405, 405)


def test_unique_violation_body_is_exact(http, doc_path):
    assert_success(http.post(doc_path, json={"_key": "dup"}), 202)
    resp = http.post(doc_path, json={"_key": "dup"})
    body = assert_error(resp, 409, 1210, message_prefix="unique constraint violated")
    assert set(body) == {"code", "error", "errorNum", "errorMessage"}
    assert resp.reason == "Conflict"


def test_bad_document_handle(http, db_name, col):
    # A selector naming another collection does not find the document.
    col.insert({"_key": "k"})
    resp = http.put(f"/_db/{db_name}/_api/document/{col.name}?onlyget=true", json=["other/k", f"{col.name}/k"])
    body = assert_success(resp, 200)
    assert body[0]["error"] is True and body[0]["errorNum"] in (1202, 1205)
    assert body[1]["_key"] == "k"


def test_collection_create_errors(http, db_name):
    base = f"/_db/{db_name}/_api/collection"
    assert_error(http.post(base, json={"name": "bad/name"}), 400, 1208)
    assert_error(http.post(base, json={}), 400, 1208)
    name = unique("c")
    assert_success(http.post(base, json={"name": name}), 200)
    assert_error(http.post(base, json={"name": name}), 409, 1207)
    assert_error(post_raw(http, base, b'{"name":'), 400, 600)


def test_database_create_errors(http):
    assert_error(http.post("/_api/database", json={"name": "bad/name"}), 400, 1229)
    name = unique("dbx")
    assert_success(http.post("/_api/database", json={"name": name}), 201)
    try:
        assert_error(http.post("/_api/database", json={"name": name}), 409, 1207)
        assert_error(http.post(f"/_db/{name}/_api/database", json={"name": unique("n")}), 403, 1230)
    finally:
        assert_success(http.delete(f"/_api/database/{name}"), 200)
    assert_error(http.delete(f"/_api/database/{name}"), 404, 1228)


def test_oversized_body_is_413(server_factory):
    srv = server_factory(extra_args=["--http.max-body-size", "4096"])
    http = Http(srv.url)
    assert_success(http.post("/_api/collection", json={"name": "small"}), 200)
    big = json.dumps({"fill": "x" * 10000}).encode()
    resp = post_raw(http, "/_api/document/small", big)
    assert resp.status_code == 413, resp.text
    if resp.content:
        assert resp.json()["error"] is True
    # Within the limit all is well.
    assert_success(http.post("/_api/document/small", json={"fill": "x" * 1000}), 202)


def test_url_too_long_is_414(server):
    with RawConnection(server.host_port) as conn:
        target = "/_api/version?x=" + "a" * 20000
        conn.send(f"GET {target} HTTP/1.1\r\nHost: t\r\nAuthorization: {basic_auth_header()}\r\n\r\n".encode())
        assert conn.read().status == 414


def test_headers_too_large_is_431(server):
    with RawConnection(server.host_port) as conn:
        huge = "".join(f"X-Filler-{i}: {'v' * 1000}\r\n" for i in range(200))
        conn.send(f"GET /_api/version HTTP/1.1\r\nHost: t\r\n{huge}Authorization: {basic_auth_header()}\r\n\r\n".encode())
        try:
            status = conn.read().status
        except ConnectionError:
            status = None
        assert status == 431, status
