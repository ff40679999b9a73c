"""Static files (`--http.static-dir`, mounted at `--http.static-prefix`): content types,
ETag and Last-Modified with 304 answers, single ranges (206/416), HEAD, no credentials
needed, a changed file served changed, and traversal attempts refused. Traversal requests go
over a raw socket so no client normalises `..` away."""

from __future__ import annotations

import os
import time

import pytest
import requests

from quince_server import RawConnection

INDEX = b"<!doctype html><title>quince</title>\n"
SCRIPT = b"console.log('quince');\n"
DATA = bytes(range(256)) * 40  # 10240 bytes


@pytest.fixture(scope="module")
def static_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_bytes(INDEX)
    (root / "js").mkdir()
    (root / "js" / "app.js").write_bytes(SCRIPT)
    (root / "style.css").write_bytes(b"body{}")
    (root / "logo.svg").write_bytes(b"<svg/>")
    (root / "data.bin").write_bytes(DATA)
    (root / "a file.json").write_bytes(b"{}")
    (root / "empty.txt").write_bytes(b"")
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_bytes(b"secret")
    os.symlink(outside / "secret.txt", root / "escape.txt")
    os.symlink(outside, root / "escape-dir")
    os.symlink(root / "index.html", root / "alias.html")
    return root


@pytest.fixture(scope="module")
def site_server(static_site, tmp_path_factory):
    from quince_server import QuinceServer

    base = tmp_path_factory.mktemp("static-server")
    srv = QuinceServer(base / "data", extra_args=["--http.static-dir", str(static_site)])
    srv.start()
    yield srv
    assert srv.stop() == 0


def get(srv, path, **kw):
    kw.setdefault("timeout", 30)
    return requests.get(srv.url + path, **kw)


def raw(srv, target: str, method: str = "GET"):
    with RawConnection(srv.host_port) as conn:
        conn.send(f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        return conn.read(head=method == "HEAD")


def test_files_are_served_without_credentials_with_types(site_server):
    cases = {
        "/_static/index.html": ("text/html; charset=utf-8", INDEX),
        "/_static/js/app.js": ("application/javascript; charset=utf-8", SCRIPT),
        "/_static/style.css": ("text/css; charset=utf-8", b"body{}"),
        "/_static/logo.svg": ("image/svg+xml", b"<svg/>"),
        "/_static/data.bin": ("application/octet-stream", DATA),
        "/_static/a%20file.json": ("application/json; charset=utf-8", b"{}"),
        "/_static/alias.html": ("text/html; charset=utf-8", INDEX),
        "/_static/empty.txt": ("text/plain; charset=utf-8", b""),
    }
    for path, (content_type, body) in cases.items():
        resp = get(site_server, path)
        assert resp.status_code == 200, (path, resp.text)
        assert resp.headers["content-type"] == content_type, path
        assert resp.content == body, path
        assert resp.headers["content-length"] == str(len(body))
        assert resp.headers["accept-ranges"] == "bytes"
        assert resp.headers["etag"].startswith('"')
        assert resp.headers["last-modified"].endswith("GMT")
        assert resp.headers["x-content-type-options"] == "nosniff"
    # The API beside the mount still wants credentials.
    assert get(site_server, "/_api/version").status_code == 401


def test_missing_files_directories_and_methods(site_server):
    for path in ("/_static/nope.html", "/_static/js", "/_static/", "/_static"):
        resp = get(site_server, path)
        assert resp.status_code == 404, path
        assert resp.json()["errorNum"] == 404
    resp = requests.post(site_server.url + "/_static/index.html", data=b"x", timeout=30)
    assert resp.status_code == 405
    # Outside the prefix nothing is served from the directory.
    assert get(site_server, "/_staticx/index.html").status_code in (401, 404)


def test_validators_give_304(site_server):
    first = get(site_server, "/_static/index.html")
    etag, modified = first.headers["etag"], first.headers["last-modified"]
    again = get(site_server, "/_static/index.html")
    assert again.headers["etag"] == etag, "the tag is stable while the file is unchanged"
    for headers in ({"If-None-Match": etag}, {"If-None-Match": f'"other", {etag}'}, {"If-Modified-Since": modified}):
        resp = get(site_server, "/_static/index.html", headers=headers)
        assert resp.status_code == 304, headers
        assert resp.content == b""
        assert resp.headers["etag"] == etag
    stale = get(site_server, "/_static/index.html", headers={"If-None-Match": '"other"'})
    assert stale.status_code == 200 and stale.content == INDEX
    old = get(site_server, "/_static/index.html", headers={"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"})
    assert old.status_code == 200


def test_ranges(site_server):
    cases = [("bytes=0-9", 0, 9), ("bytes=10200-", 10200, 10239), ("bytes=-16", 10224, 10239), ("bytes=100-99999", 100, 10239)]
    for spec, start, end in cases:
        resp = get(site_server, "/_static/data.bin", headers={"Range": spec})
        assert resp.status_code == 206, spec
        assert resp.content == DATA[start : end + 1], spec
        assert resp.headers["content-range"] == f"bytes {start}-{end}/{len(DATA)}"
        assert resp.headers["content-length"] == str(end - start + 1)
    unsatisfiable = get(site_server, "/_static/data.bin", headers={"Range": "bytes=10240-"})
    assert unsatisfiable.status_code == 416
    assert unsatisfiable.headers["content-range"] == f"bytes */{len(DATA)}"
    # More than one range, or a range for an older version of the file: the whole file.
    for headers in ({"Range": "bytes=0-1,5-6"}, {"Range": "bytes=0-1", "If-Range": '"old"'}):
        resp = get(site_server, "/_static/data.bin", headers=headers)
        assert resp.status_code == 200 and resp.content == DATA


def test_head(site_server):
    resp = raw(site_server, "/_static/data.bin", method="HEAD")
    assert resp.status == 200
    assert resp.headers["content-length"] == str(len(DATA))
    assert resp.headers["content-type"] == "application/octet-stream"
    assert resp.body == b""
    with RawConnection(site_server.host_port) as conn:
        # After a HEAD the connection carries on with the next request: no body was sent.
        conn.send(b"HEAD /_static/index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /_static/index.html HTTP/1.1\r\nHost: x\r\n\r\n")
        head = conn.read(head=True)
        body = conn.read()
        assert head.status == 200 and head.headers["content-length"] == str(len(INDEX))
        assert body.status == 200 and body.body == INDEX


def test_keep_alive_http10_as_ab_sends_it(site_server):
    with RawConnection(site_server.host_port) as conn:
        for _ in range(3):
            conn.send(b"GET /_static/index.html HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: x\r\n\r\n")
            resp = conn.read()
            assert resp.status == 200 and resp.body == INDEX
            assert resp.headers["connection"].lower() == "keep-alive"


@pytest.mark.parametrize(
    "target",
    [
        "/_static/../index.html",
        "/_static/js/../../etc/passwd",
        "/_static/%2e%2e/%2e%2e/etc/passwd",
        "/_static/js%2f..%2findex.html",
        "/_static/js%2F..%2F..%2Fetc%2Fpasswd",
        "/_static/..%5c..%5cetc%5cpasswd",
        "/_static/index.html%00.txt",
        "/_static/escape.txt",
        "/_static/escape-dir/secret.txt",
        "/_static/./index.html",
    ],
)
def test_traversal_is_refused(site_server, target):
    resp = raw(site_server, target)
    assert resp.status in (403, 404), (target, resp.status)
    assert b"secret" not in resp.body and b"root:" not in resp.body


def test_a_changed_file_is_served_changed(site_server, static_site):
    path = static_site / "changing.txt"
    path.write_bytes(b"one")
    first = get(site_server, "/_static/changing.txt")
    assert first.content == b"one"
    path.write_bytes(b"second version")
    # Entries are trusted for a second; poll until the new content shows, within a bound.
    deadline = time.monotonic() + 10
    while True:
        resp = get(site_server, "/_static/changing.txt")
        if resp.content == b"second version":
            break
        assert resp.content == b"one"
        assert time.monotonic() < deadline, "the change never showed"
        time.sleep(0.05)
    assert resp.headers["etag"] != first.headers["etag"]
    path.unlink()
    deadline = time.monotonic() + 10
    while get(site_server, "/_static/changing.txt").status_code != 404:
        assert time.monotonic() < deadline, "the deletion never showed"
        time.sleep(0.05)


def test_custom_prefix(server_factory, static_site):
    srv = server_factory(extra_args=["--http.static-dir", str(static_site), "--http.static-prefix", "/ui/"])
    assert requests.get(srv.url + "/ui/index.html", timeout=30).content == INDEX
    assert requests.get(srv.url + "/_static/index.html", timeout=30).status_code in (401, 404)
