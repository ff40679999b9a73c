"""`POST /_api/import` over raw HTTP: each body type, each request error, and streaming.

What it is: requests as arangojs and curl send them (JSON Lines with `\\r\\n`, arrays,
`type=auto`, the header-line format with `type=` empty, `application/octet-stream`), the
error replies of §4, and a body twenty times larger than the server's `--http.max-body-size`,
which must stream into the collection.

What it is not: the driver suite (`test_import_driver.py`).
"""

from __future__ import annotations

import gzip
import json

from conftest import Http, unique
from http_checks import assert_error, assert_success

OCTETS = {"content-type": "application/octet-stream"}


def counters(body: dict) -> tuple[int, int, int, int, int]:
    return (body["created"], body["errors"], body["empty"], body["updated"], body["ignored"])


def imp(http, db_name, query, data, headers=OCTETS):
    return http.post(f"/_db/{db_name}/_api/import?{query}", data=data, headers=headers)


def test_json_lines_with_crlf_as_arangojs_sends_them(http, db_name, col):
    data = '{"_key":"a","v":1}\r\n{"_key":"b","v":2}\r\n\r\n'
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=documents", data), 201)
    assert counters(body) == (2, 0, 1, 0, 0)
    assert body["error"] is False and "details" not in body
    assert col.get("b")["v"] == 2


def test_array_and_auto_types(http, db_name, col):
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=list", '[{"x":1},{"x":2}]'), 201)
    assert counters(body) == (2, 0, 0, 0, 0)
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=auto", ' [{"x":3}]'), 201)
    assert counters(body) == (1, 0, 0, 0, 0)
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=auto", '{"x":4}\n{"x":5}'), 201)
    assert counters(body) == (2, 0, 0, 0, 0)
    resp = imp(http, db_name, f"collection={col.name}&type=array", '{"x":1}')
    assert_error(resp, 400, 400)
    assert col.count() == 5


def test_header_line_format(http, db_name, col):
    data = '["_key","name","age"]\n["p1","Ann",31]\n["p2","Bob",null]\n\n["p3"]\n'
    resp = imp(http, db_name, f"collection={col.name}&type=&details=true", data)
    body = assert_success(resp, 201)
    assert counters(body) == (2, 1, 1, 0, 0)
    assert body["details"] == ["at position 4: wrong number of JSON values (got 1, expected 3)"]
    p2 = col.get("p2")
    assert p2["name"] == "Bob" and "age" not in p2
    resp = imp(http, db_name, f"collection={col.name}", '{"not": "a header"}\n["x"]\n')
    assert_error(resp, 400, 400)


def test_request_errors(http, db_name, col):
    assert_error(imp(http, db_name, "type=documents", "{}"), 400, 1204)
    assert_error(imp(http, db_name, f"collection={unique('missing')}&type=documents", "{}"), 404, 1203)
    assert_error(imp(http, db_name, f"collection={col.name}&type=yaml", "{}"), 400, 400)
    resp = http.get(f"/_db/{db_name}/_api/import?collection={col.name}")
    assert_error(resp, 405, 405)


def test_details_name_positions_as_arangodb_does(http, db_name, col):
    col.insert({"_key": "jan"})
    data = '{"_key":"new"}\n{"_key":"jan","name":"Jan2"}\n7\n'
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=documents&details=true", data), 201)
    # Records that are no documents first, then failed writes (as ArangoDB orders them).
    assert body["details"] == [
        "at position 3: invalid JSON type (expecting object), offending document: 7",
        "at position 1: creating document failed with error 'unique constraint violated', "
        'offending document: {"_key":"jan","name":"Jan2"}',
    ]


def test_complete_rolls_back_on_a_bad_document(http, db_name, col):
    data = '{"_key":"one"}\n{"_key":"two"}\n"scalar"\n'
    resp = imp(http, db_name, f"collection={col.name}&type=documents&complete=true", data)
    assert_error(resp, 400, 1227)
    assert col.count() == 0


def test_gzip_bodies(http, db_name, col):
    data = gzip.compress(b"".join(b'{"i":%d}\n' % i for i in range(1000)))
    headers = {**OCTETS, "content-encoding": "gzip"}
    body = assert_success(imp(http, db_name, f"collection={col.name}&type=documents", data, headers), 201)
    assert body["created"] == 1000


def test_imports_stream_past_the_body_size_limit(server_factory):
    srv = server_factory(extra_args=("--http.max-body-size", str(1 << 20)))
    http = Http(srv.url)
    name = unique("big")
    assert_success(http.post("/_api/collection", json={"name": name}), 200)
    line = json.dumps({"payload": "x" * 180, "n": 0}).encode()
    count = (20 << 20) // (len(line) + 1) + 1

    def body():
        # Sent chunked by requests: a generator body, 20 MiB in all.
        chunk = []
        for i in range(count):
            chunk.append(line.replace(b'"n": 0', b'"n": %d' % i))
            if len(chunk) == 2000:
                yield b"\n".join(chunk) + b"\n"
                chunk = []
        if chunk:
            yield b"\n".join(chunk) + b"\n"

    resp = http.post(f"/_api/import?collection={name}&type=documents", data=body(), headers=OCTETS)
    reply = assert_success(resp, 201)
    assert reply["created"] == count
    assert count * (len(line) + 1) > 20 * (1 << 20)
    counted = assert_success(http.get(f"/_api/collection/{name}/count"), 200)
    assert counted["count"] == count
    # An ordinary request of that size is refused.
    big = b"[" + b",".join([line] * 8000) + b"]"
    assert http.post(f"/_api/document/{name}", data=big).status_code == 413
