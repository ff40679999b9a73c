"""`POST /_api/batch`: multipart bodies built here, as arangob's `--batch-size` sends them,
answered part by part in order; failures counted in `x-arango-errors`; malformed envelopes
and parts refused with 400 before any part runs; a part cannot leave its database."""

from __future__ import annotations

import json
import re

from conftest import unique

BOUNDARY = "XXXarangob-benchmarkXXX"
PART_TYPE = "application/x-arango-batchpart"


def part(method: str, target: str, body=None, *, content_id=None, headers=(), with_length=False) -> str:
    mime = [f"Content-Type: {PART_TYPE}"]
    if content_id is not None:
        mime.append(f"Content-Id: {content_id}")
    payload = "" if body is None else (body if isinstance(body, str) else json.dumps(body))
    request = [f"{method} {target} HTTP/1.1", *headers]
    if with_length:
        request.append(f"Content-Length: {len(payload.encode())}")
    return "\r\n".join(mime) + "\r\n\r\n" + "\r\n".join(request) + "\r\n\r\n" + payload


def envelope(parts, boundary=BOUNDARY) -> bytes:
    text = "".join(f"--{boundary}\r\n{p}\r\n" for p in parts) + f"--{boundary}--\r\n"
    return text.encode()


def post_batch(http, db_name, body, content_type=f"multipart/form-data; boundary={BOUNDARY}"):
    headers = {} if content_type is None else {"Content-Type": content_type}
    return http.post(f"/_db/{db_name}/_api/batch", data=body, headers=headers)


def read_parts(resp):
    """The reply's parts as (mime headers, status, headers, body bytes)."""
    match = re.search(r"boundary=(\S+)", resp.headers["content-type"])
    assert match, resp.headers
    boundary = match.group(1).encode()
    raw = resp.content
    assert raw.endswith(b"--" + boundary + b"--\r\n")
    chunks = raw.split(b"--" + boundary)
    assert chunks[0] == b"" and chunks[-1] == b"--\r\n"
    parsed = []
    for chunk in chunks[1:-1]:
        assert chunk.startswith(b"\r\n") and chunk.endswith(b"\r\n")
        chunk = chunk[2:-2]
        mime_block, _, http_block = chunk.partition(b"\r\n\r\n")
        mime = dict(line.split(": ", 1) for line in mime_block.decode().split("\r\n"))
        head, _, body = http_block.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        version, status, _reason = lines[0].split(" ", 2)
        assert version == "HTTP/1.1"
        headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:])}
        assert int(headers["content-length"]) == len(body)
        parsed.append((mime, int(status), headers, body))
    return parsed


def test_valid_batch_runs_parts_in_order(http, db_name, col):
    body = envelope(
        [
            part("POST", f"/_api/document/{col.name}", {"_key": "one", "v": 1}, content_id="first"),
            part("POST", f"/_api/document?collection={col.name}", {"_key": "two"}, with_length=True),
            part("GET", f"/_api/document/{col.name}/one", content_id="read"),
            part("GET", "/_api/version"),
        ]
    )
    resp = post_batch(http, db_name, body)
    assert resp.status_code == 200, resp.text
    assert "x-arango-errors" not in resp.headers
    parts = read_parts(resp)
    assert [p[1] for p in parts] == [202, 202, 200, 200]
    assert parts[0][0]["Content-Type"] == PART_TYPE
    assert parts[0][0]["Content-Id"] == "first"
    assert "Content-Id" not in parts[1][0]
    assert parts[2][0]["Content-Id"] == "read"
    # Parts run in order: the read sees the first insert.
    assert json.loads(parts[2][3])["v"] == 1
    assert parts[2][2]["etag"].strip('"') == json.loads(parts[2][3])["_rev"]
    assert json.loads(parts[3][3])["server"] == "arango"
    assert col.count() == 2


def test_mixed_results_count_errors(http, db_name, col):
    col.insert({"_key": "taken"})
    body = envelope(
        [
            part("POST", f"/_api/document/{col.name}", {"_key": "taken"}),
            part("GET", f"/_api/document/{col.name}/missing"),
            part("POST", f"/_api/document/{col.name}", {"_key": "fresh"}),
            part("GET", "/_api/no-such-path"),
        ]
    )
    resp = post_batch(http, db_name, body)
    assert resp.status_code == 200
    assert resp.headers["x-arango-errors"] == "3"
    parts = read_parts(resp)
    assert [p[1] for p in parts] == [409, 404, 202, 404]
    assert json.loads(parts[0][3])["errorNum"] == 1210
    assert json.loads(parts[1][3])["errorNum"] == 1202
    assert col.has("fresh")


def test_boundary_from_the_first_line_and_lf_bodies(http, db_name, col):
    body = envelope([part("POST", f"/_api/document/{col.name}", {"_key": "lf"})], boundary="b0und")
    resp = post_batch(http, db_name, body, content_type=None)
    assert resp.status_code == 200, resp.text
    assert [p[1] for p in read_parts(resp)] == [202]
    lf_only = body.replace(b"\r\n", b"\n")
    resp = post_batch(http, db_name, lf_only.replace(b'"lf"', b'"lf2"'), content_type="multipart/form-data; boundary=b0und")
    assert resp.status_code == 200, resp.text
    assert col.has("lf") and col.has("lf2")


def test_a_part_cannot_leave_its_database(http, sys_db, db_name, col):
    other = unique("other_db")
    assert sys_db.create_database(other)
    try:
        http.post(f"/_db/{other}/_api/collection", json={"name": col.name})
        body = envelope([part("POST", f"/_db/{other}/_api/document/{col.name}", {"_key": "here"})])
        resp = post_batch(http, db_name, body)
        assert resp.status_code == 200
        assert [p[1] for p in read_parts(resp)] == [202]
        assert col.has("here"), "the part ran in the batch's own database"
        assert http.get(f"/_db/{other}/_api/document/{col.name}/here").status_code == 404
    finally:
        sys_db.delete_database(other)


def test_malformed_batches_are_400_and_run_nothing(http, db_name, col):
    good = part("POST", f"/_api/document/{col.name}", {"_key": "nope"})
    wrong_type = good.replace(PART_TYPE, "text/plain")
    no_type = good.split("\r\n", 1)[1]
    bad_request_line = part("NONSENSE", "", None)
    cases = [
        envelope([good, wrong_type]),
        envelope([good, no_type]),
        envelope([good, bad_request_line]),
        f"--{BOUNDARY}\r\n{good}".encode(),  # never closed
        b"just some text",
        envelope([part("POST", f"/_api/document/{col.name}", '{"a":1}', headers=["Content-Length: 99"])]),
    ]
    for body in cases:
        resp = post_batch(http, db_name, body)
        assert resp.status_code == 400, (body, resp.text)
        assert resp.json()["errorNum"] == 400
    assert post_batch(http, db_name, b"no boundary here", content_type="multipart/form-data").status_code == 400
    assert col.count() == 0, "no part of a malformed batch ran"
    wrong_method = http.get(f"/_db/{db_name}/_api/batch")
    assert wrong_method.status_code == 405 and wrong_method.json()["errorNum"] == 405


def test_nested_batch_part_fails_alone(http, db_name):
    body = envelope([part("POST", "/_api/batch", "x"), part("GET", "/_api/version")])
    resp = post_batch(http, db_name, body)
    assert resp.status_code == 200
    assert resp.headers["x-arango-errors"] == "1"
    assert [p[1] for p in read_parts(resp)] == [400, 200]


def test_batches_need_credentials(server, db_name):
    import requests

    resp = requests.post(
        f"{server.url}/_db/{db_name}/_api/batch",
        data=envelope([part("GET", "/_api/version")]),
        headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
        timeout=30,
    )
    assert resp.status_code == 401
