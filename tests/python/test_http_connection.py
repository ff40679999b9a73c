"""Connection handling on the wire: HTTP/1.0 keep-alive (as `ab -k` uses it), HTTP/1.1
pipelining, Content-Length on small replies, and gzip/deflate request bodies."""

import gzip
import json
import zlib

from http_checks import assert_success
from quince_server import RawConnection, basic_auth_header


def request_bytes(method, target, *, version="HTTP/1.1", headers=(), body=b""):
    lines = [f"{method} {target} {version}", "Host: 127.0.0.1", f"Authorization: {basic_auth_header()}"]
    lines += list(headers)
    if body or method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_http10_keep_alive(server):
    with RawConnection(server.host_port) as conn:
        for _ in range(2):
            conn.send(request_bytes("GET", "/_api/version", version="HTTP/1.0", headers=["Connection: Keep-Alive"]))
            resp = conn.read()
            assert resp.status == 200
            assert resp.headers.get("connection", "").lower() == "keep-alive", resp.headers
            assert int(resp.headers["content-length"]) == len(resp.body)
            assert resp.json()["server"] == "arango"


def test_http10_without_keep_alive_closes(server):
    with RawConnection(server.host_port) as conn:
        conn.send(request_bytes("GET", "/_api/version", version="HTTP/1.0"))
        resp = conn.read()
        assert resp.status == 200
        assert "content-length" in resp.headers
        assert conn.peer_closed()


def test_http11_keep_alive_and_pipelining(server):
    with RawConnection(server.host_port) as conn:
        conn.send(
            request_bytes("GET", "/_api/version")
            + request_bytes("GET", "/_admin/server/role")
            + request_bytes("GET", "/_api/no-such-path")
        )
        first, second, third = conn.read(), conn.read(), conn.read()
        assert first.status == 200 and first.json()["server"] == "arango"
        assert second.status == 200 and second.json()["role"] == "SINGLE"
        assert third.status == 404 and third.json()["errorNum"] == 404
        for resp in (first, second, third):
            assert "content-length" in resp.headers
        # The connection stays open for more.
        conn.send(request_bytes("GET", "/_api/version"))
        assert conn.read().status == 200


def test_http11_connection_close(server):
    with RawConnection(server.host_port) as conn:
        conn.send(request_bytes("GET", "/_api/version", headers=["Connection: close"]))
        assert conn.read().status == 200
        assert conn.peer_closed()


def test_pipelined_writes_in_order(server, http):
    name = "pipeline_col"
    assert_success(http.post("/_api/collection", json={"name": name}), 200)
    try:
        with RawConnection(server.host_port) as conn:
            batch = b"".join(
                request_bytes(
                    "POST", f"/_api/document/{name}", headers=["Content-Type: application/json"],
                    body=json.dumps({"_key": f"p{i}"}).encode(),
                )
                for i in range(10)
            )
            conn.send(batch)
            keys = [conn.read().json()["_key"] for _ in range(10)]
        assert keys == [f"p{i}" for i in range(10)]
    finally:
        http.delete(f"/_api/collection/{name}")


def test_gzip_and_deflate_bodies(http, db_name, col):
    path = f"/_db/{db_name}/_api/document/{col.name}"
    payload = json.dumps({"_key": "gz", "text": "quince " * 500}).encode()
    resp = http.post(path, data=gzip.compress(payload),
                     headers={"content-encoding": "gzip", "content-type": "application/json"})
    assert_success(resp, 202)
    assert col.get("gz")["text"] == "quince " * 500

    payload = json.dumps([{"_key": "df1"}, {"_key": "df2", "n": 2}]).encode()
    resp = http.post(path, data=zlib.compress(payload),
                     headers={"content-encoding": "deflate", "content-type": "application/json"})
    body = assert_success(resp, 202)
    assert [item["_key"] for item in body] == ["df1", "df2"]
    assert col.get("df2")["n"] == 2


def test_corrupt_compressed_body_is_rejected(http, db_name, col):
    path = f"/_db/{db_name}/_api/document/{col.name}"
    resp = http.post(path, data=b"definitely not gzip", headers={"content-encoding": "gzip"})
    assert 400 <= resp.status_code < 500
    assert resp.json()["error"] is True
    assert col.count() == 0
