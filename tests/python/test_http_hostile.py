"""Hostile HTTP: requests and connections that try to take the server down or learn what they
should not, each a regression test of a defect found by trying (counts and times bounded).

What it is: raw-socket and `requests` tests against real servers started for the purpose:
connection floods and slow senders (the governor), malformed HTTP, database-name probing,
tokens without `exp`, grants that outlive their collection, replies amplified far beyond their
request, bodies read for paths nobody serves, JSON nesting at the bound, echo memory, and the
descriptor limit.

What it is not: a load test (the soak benchmark is `benches/soak.sh`) or a fuzzer (`fuzz/`).

Invariants: every server runs on a free port with its own data directory; every wait is
bounded; connections a test opens are closed by the test.
"""

from __future__ import annotations

import gzip
import json
import resource
import socket
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
import requests

from conftest import Http
from quince_server import JWT_SECRET, RawConnection, make_jwt

CONNECTIONS = 128  # the servers of the flood tests allow this many connections


def connect(srv, timeout_s: float = 10.0) -> socket.socket:
    return socket.create_connection(srv.host_port, timeout=timeout_s)


def admin_gets_in(srv, within_s: float = 3.0) -> float:
    """An authenticated client connects and gets an answer; returns how long it took."""
    started = time.monotonic()
    resp = requests.get(srv.url + "/_api/version", auth=("root", "quince-test-pw"), timeout=within_s)
    assert resp.status_code == 200, resp.text
    return time.monotonic() - started


def closed_within(sock: socket.socket, wait_s: float) -> bool:
    """True when the server closes `sock` within `wait_s` (whatever it sent first)."""
    sock.settimeout(0.5)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if sock.recv(65536) == b"":
                return True
        except (socket.timeout, TimeoutError):
            continue
        except ConnectionError:
            return True
    return False


@pytest.fixture
def small_server(server_factory):
    return server_factory(extra_args=["--server.max-connections", str(CONNECTIONS)])


# -- connections ------------------------------------------------------------------------------


def test_idle_connections_cannot_lock_out_an_administrator(small_server):
    """Regression: 4,300 idle TCP connections blocked every new client for as long as they
    stayed open; the server closed almost none of them."""
    with ExitStack() as stack:
        for _ in range(CONNECTIONS + 64):
            stack.enter_context(connect(small_server))
        took = admin_gets_in(small_server)
        assert took < 3.0
        # And again: places keep being made.
        admin_gets_in(small_server)


def test_slow_bodies_on_an_open_path_cannot_lock_out_an_administrator(small_server):
    """Regression: connections trickling a request body to an open path held the server."""
    head = (
        "POST /_open/auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 4000\r\n\r\n{"
    ).encode()
    with ExitStack() as stack:
        for _ in range(CONNECTIONS + 64):
            sock = stack.enter_context(connect(small_server))
            sock.sendall(head)
        admin_gets_in(small_server)


def test_a_trickled_head_is_cut(small_server):
    """Slowloris: a request head sent a byte at a time is cut after the head timeout (10 s)."""
    sock = connect(small_server)
    with sock:
        started = time.monotonic()
        closed = False
        for byte in b"GET /_api/version HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionError):
                closed = True
                break
            if closed_within(sock, 0.5):
                closed = True
                break
        assert closed, "the trickled head was never cut"
        assert time.monotonic() - started < 20


def test_a_trickled_body_is_cut_with_an_error(small_server):
    """A body arriving slower than 1 KiB/s is cut once the server waited 10 s for it: the
    request answers 400 (the body could not be read) and the connection closes."""
    sock = connect(small_server, timeout_s=30)
    with sock:
        sock.sendall(
            b"POST /_open/auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2000\r\n\r\n{"
        )
        started = time.monotonic()
        reply = b""
        sock.settimeout(0.5)
        while time.monotonic() - started < 25:
            try:
                sock.sendall(b" ")
            except (BrokenPipeError, ConnectionError):
                break
            try:
                data = sock.recv(65536)
            except (socket.timeout, TimeoutError):
                continue
            except ConnectionError:
                break
            if not data:
                break
            reply += data
        assert reply.startswith(b"HTTP/1.1 400"), reply[:200]
        assert 9 < time.monotonic() - started < 25


def test_an_idle_unauthenticated_connection_is_closed_sooner_than_keep_alive(server_factory):
    srv = server_factory(extra_args=["--http.keep-alive-timeout", "2"])
    with connect(srv) as idle:
        assert closed_within(idle, 6.0)
    # An authenticated keep-alive connection stays for its keep-alive time, then closes.
    with RawConnection(srv.host_port) as raw:
        raw.send(b"GET /_api/version HTTP/1.1\r\nHost: x\r\nAuthorization: Basic cm9vdDpxdWluY2UtdGVzdC1wdw==\r\n\r\n")
        assert raw.read().status == 200
        assert raw.peer_closed(wait_s=6.0)


# -- malformed HTTP ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"GARBAGE\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /_api/version HTTP/1.1\r\nHost x\r\n\r\n",
        b"POST /_api/version HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        b"POST /_api/version HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
        b"POST /_open/auth HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
        b"POST /_open/auth HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
    ids=["request-line", "version", "header", "content-length", "two-lengths", "chunk-size", "cl+te"],
)
def test_malformed_http_gets_a_400_before_the_close(server, payload):
    """Regression: hyper wrote its 400 for an unparsable request but never flushed it."""
    with RawConnection(server.host_port) as raw:
        raw.send(payload)
        resp = raw.read()
        assert resp.status == 400, (resp.status, resp.body)
        assert raw.peer_closed(wait_s=5.0)


# -- what an unauthenticated caller may learn -----------------------------------------------------


def test_database_names_cannot_be_probed_without_credentials(server, sys_db):
    """Regression: an existing and a missing database answered differently on open paths and
    unknown paths, before any credentials."""
    existing = "probe_target"
    sys_db.create_database(existing)
    try:
        anonymous = Http(server.url, auth=None)
        for path, method, body in [
            ("/_admin/server/availability", "GET", None),
            ("/_open/auth", "POST", {"username": "nobody", "password": "x"}),
            ("/_open/auth", "POST", {"username": "root", "password": "wrong"}),
            ("/nothing/here", "GET", None),
            ("/_api/collection", "GET", None),
            ("/_api/nothing", "GET", None),
        ]:
            answers = []
            for name in (existing, "no_such_database_xyz"):
                resp = anonymous.request(method, f"/_db/{name}{path}", json=body)
                answers.append((resp.status_code, resp.json()))
            assert answers[0] == answers[1], (path, answers)
    finally:
        sys_db.delete_database(existing)


def test_a_user_token_without_exp_is_refused(server):
    """Regression: a signed JWT without `exp` was accepted for ever."""
    forever = make_jwt({"alg": "HS256", "typ": "JWT"}, {"iss": "arangodb", "preferred_username": "root"}, JWT_SECRET)
    resp = requests.get(server.url + "/_api/version", headers={"Authorization": f"bearer {forever}"}, timeout=10)
    assert resp.status_code == 401
    now = int(time.time())
    bounded = make_jwt(
        {"alg": "HS256", "typ": "JWT"},
        {"iss": "arangodb", "preferred_username": "root", "iat": now, "exp": now + 60},
        JWT_SECRET,
    )
    resp = requests.get(server.url + "/_api/version", headers={"Authorization": f"bearer {bounded}"}, timeout=10)
    assert resp.status_code == 200


def test_a_dropped_collections_grants_do_not_pass_to_a_new_one(http, sys_db):
    """Regression: a collection-level grant survived the drop, so a new collection created later
    under the same name inherited it."""
    user = "heir"
    assert http.post("/_api/user", json={"user": user, "passwd": "h"}).status_code == 201
    try:
        assert http.put(f"/_api/user/{user}/database/_system", json={"grant": "ro"}).status_code == 200
        assert http.post("/_api/collection", json={"name": "inherited"}).status_code == 200
        assert http.put(f"/_api/user/{user}/database/_system/inherited", json={"grant": "rw"}).status_code == 200
        assert http.delete("/_api/collection/inherited").status_code == 200
        assert http.post("/_api/collection", json={"name": "inherited"}).status_code == 200
        level = http.get(f"/_api/user/{user}/database/_system/inherited").json()["result"]
        assert level == "ro", "the new collection must fall back to the database's level"
        heir = Http(http.url, auth=(user, "h"))
        assert heir.post("/_api/document/inherited", json={}).status_code == 403
    finally:
        http.delete("/_api/collection/inherited")
        http.delete(f"/_api/user/{user}")


# -- amplification and bodies --------------------------------------------------------------------


@pytest.fixture
def reply_bounded(server_factory):
    srv = server_factory(extra_args=["--http.max-reply-size", str(4 << 20)])
    http = Http(srv.url)
    assert http.post("/_api/collection", json={"name": "big"}).status_code == 200
    assert http.post("/_api/document/big", json={"_key": "big", "pad": "x" * 200_000}).status_code == 202
    return srv, http


def test_a_bulk_read_cannot_build_a_huge_reply(reply_bounded):
    """Regression: `PUT /_api/document/c?onlyget=true` with ["big"] * 3000 (a 20 KB body)
    built a 3 GB reply and aborted the process."""
    srv, http = reply_bounded
    started = time.monotonic()
    resp = http.put("/_api/document/big?onlyget=true", json=["big"] * 3000)
    assert resp.status_code == 400 and resp.json()["errorNum"] == 32, resp.text[:300]
    assert time.monotonic() - started < 10
    ok = http.put("/_api/document/big?onlyget=true", json=["big"] * 5)
    assert ok.status_code == 200 and len(ok.json()) == 5
    assert http.get("/_api/version").status_code == 200


def test_a_batch_cannot_build_a_huge_reply(reply_bounded):
    """Regression: `/_api/batch` with thousands of GET parts amplified the same way."""
    srv, http = reply_bounded
    boundary = "XbX"
    part = (
        f"--{boundary}\r\nContent-Type: application/x-arango-batchpart\r\n\r\n"
        "GET /_api/document/big/big HTTP/1.1\r\n\r\n\r\n"
    )
    body = (part * 200 + f"--{boundary}--\r\n").encode()
    resp = http.post(
        "/_api/batch", data=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    assert resp.status_code == 200
    assert len(resp.content) < 5 << 20
    failed = int(resp.headers["x-arango-errors"])
    assert 150 < failed < 200, failed
    assert b"not run" in resp.content


def test_a_path_nobody_serves_does_not_read_its_body(server):
    """The route is known before the body is read: a 404 comes at once, though the declared
    body never arrives."""
    with RawConnection(server.host_port, timeout_s=5) as raw:
        raw.send(
            b"POST /_api/no/such/family HTTP/1.1\r\nHost: x\r\n"
            b"Authorization: Basic cm9vdDpxdWluY2UtdGVzdC1wdw==\r\nContent-Length: 100000000\r\n\r\n"
        )
        resp = raw.read()
        assert resp.status == 404 and resp.json()["errorNum"] == 404


def test_an_unauthenticated_body_is_small(server):
    """Open paths take little body from a caller who did not authenticate."""
    resp = requests.post(server.url + "/_open/auth", data=b"x" * (128 * 1024), timeout=10)
    assert resp.status_code == 413


def memory_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process: its memory now and its peak so far."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields["VmRSS"], fields["VmHWM"]


def test_echo_and_a_gzip_bomb_stay_within_twice_the_body_limit(server_factory):
    """`/_admin/echo` used to build a JSON value per byte of the body; a large body (or a gzip
    bomb) may not raise the server's memory by more than twice the body limit (its peak, over
    what it held just before the request)."""
    limit = 24 << 20
    srv = server_factory(
        extra_args=["--http.max-body-size", str(limit), "--http.max-reply-size", str(limit)]
    )
    http = Http(srv.url)
    assert http.get("/_api/version").status_code == 200

    def bounded(send):
        rss_before, peak_before = memory_kib(srv.proc.pid)
        resp = send()
        _, peak_after = memory_kib(srv.proc.pid)
        if peak_after > peak_before:
            grown = (peak_after - rss_before) * 1024
            assert grown <= 2 * limit + (8 << 20), f"memory grew by {grown >> 20} MiB"
        return resp

    big = bytes(range(256)) * (limit // 256)
    resp = bounded(lambda: http.post("/_admin/echo", data=big))
    assert resp.status_code == 400 and resp.json()["errorNum"] == 32, resp.text[:200]
    fits = bytes(range(256)) * (limit // 256 // 10)
    resp = bounded(lambda: http.post("/_admin/echo", data=fits))
    assert resp.status_code == 200 and len(resp.json()["rawRequestBody"]["data"]) == len(fits)
    bomb = gzip.compress(b"\0" * (limit + (1 << 20)))
    resp = bounded(lambda: http.post("/_admin/echo", data=bomb, headers={"Content-Encoding": "gzip"}))
    assert resp.status_code == 413


def nested(depth: int) -> str:
    """An object nested `depth` levels deep (a flat object is 1)."""
    return '{"a":' * depth + "1" + "}" * depth


def test_json_at_the_depth_bound_is_stored_read_and_merged(server_factory):
    """Regression: `--http.max-json-depth` accepted up to 10,000 (deeper than what parse,
    render and drop can recurse on a worker's stack), and a stored document deeper than 128
    could not be rendered."""
    srv = server_factory(extra_args=["--http.max-json-depth", "256"])
    http = Http(srv.url)
    assert http.post("/_api/collection", json={"name": "deep"}).status_code == 200
    resp = http.post("/_api/document/deep?returnNew=true", data=nested(256).replace("{", '{"_key":"d",', 1))
    assert resp.status_code == 202, resp.text[:300]
    assert http.get("/_api/document/deep/d").status_code == 200
    patch = http.patch("/_api/document/deep/d?returnOld=true&returnNew=true", data='{"b": 2}')
    assert patch.status_code == 202, patch.text[:300]
    too_deep = http.post("/_api/document/deep", data=nested(257))
    assert too_deep.status_code == 400 and too_deep.json()["errorNum"] == 600


def test_the_depth_bound_cannot_be_set_past_what_the_stack_holds(server_factory, tmp_path):
    from quince_server import quince_bin
    import subprocess

    done = subprocess.run(
        [str(quince_bin()), "serve", "--http.max-json-depth", "1000", "--database.directory", str(tmp_path / "d")],
        capture_output=True,
        timeout=30,
    )
    assert done.returncode == 2, done.stderr


# -- descriptors ---------------------------------------------------------------------------------


def test_more_collections_than_the_descriptor_limit(tmp_path):
    """Regression: the engine kept a descriptor per journal and datafile for ever; under a limit
    of 1,024 open files, creating about the 1,010th collection failed with 500/1305."""
    from quince_server import QuinceServer

    shm = Path("/dev/shm")
    base = Path(__import__("tempfile").mkdtemp(dir=shm if shm.is_dir() else tmp_path))

    def limit_descriptors():
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))

    srv = QuinceServer(base / "data", preexec_fn=limit_descriptors)
    srv.start()
    try:
        session = requests.Session()
        session.auth = ("root", "quince-test-pw")
        for i in range(1100):
            assert session.post(srv.url + "/_api/collection", json={"name": f"c{i}"}).status_code == 200, i
            resp = session.post(srv.url + f"/_api/document/c{i}", json={"_key": "k", "i": i})
            assert resp.status_code == 202, (i, resp.text)
        for i in range(0, 1100, 7):
            assert session.get(srv.url + f"/_api/document/c{i}/k").json()["i"] == i
    finally:
        srv.stop()
        __import__("shutil").rmtree(base, ignore_errors=True)
