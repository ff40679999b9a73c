"""HTTP/2 by `Upgrade: h2c`, as curl does it (`curl --http2 http://...`), and by prior knowledge.

What it is: curl upgrades its first request on a connection, gets `101 Switching Protocols`,
reads the reply to that request as HTTP/2 stream 1, and sends its next request on the same
connection as another HTTP/2 stream; a request with a body is answered over HTTP/1.1 (curl
still offers the upgrade; the server may ignore it).

What it is not: the frame-level test (crates/server/tests/h2c_upgrade.rs).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import unique
from quince_server import ROOT_PASSWORD


def _curl_has_http2() -> bool:
    if shutil.which("curl") is None:
        return False
    version = subprocess.run(["curl", "-V"], capture_output=True, text=True, timeout=30).stdout
    return "HTTP2" in version


pytestmark = pytest.mark.skipif(not _curl_has_http2(), reason="needs curl with HTTP/2 (nghttp2)")


def curl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["curl", "-sS", "-v", "-u", f"root:{ROOT_PASSWORD}", *args],
                          capture_output=True, text=True, timeout=60)


def test_upgrade_then_a_second_request_on_the_same_connection(url):
    done = curl("--http2", "-w", "\\n%{http_version}\\n", f"{url}/_api/version", f"{url}/_api/version?details=true")
    assert done.returncode == 0, done.stderr
    assert "< HTTP/1.1 101 Switching Protocols" in done.stderr
    assert done.stderr.count("< HTTP/2 200") == 2, done.stderr
    assert "Re-using existing connection" in done.stderr
    lines = [line for line in done.stdout.splitlines() if line]
    assert lines[1] == "2" and lines[3] == "2", done.stdout
    assert json.loads(lines[0])["server"] == "arango"
    assert json.loads(lines[2])["details"]["mode"] == "server"


def test_prior_knowledge_still_works(url):
    done = curl("--http2-prior-knowledge", "-w", "\\n%{http_version}\\n", f"{url}/_api/version")
    assert done.returncode == 0, done.stderr
    assert "101" not in done.stderr
    assert done.stdout.splitlines()[-1] == "2"


def test_a_request_with_a_body_stays_on_http_1_1(url):
    name = unique("h2c_post")
    done = curl("--http2", "-H", "Content-Type: application/json", "-d", json.dumps({"name": name}),
                "-w", "\\n%{http_version}\\n", f"{url}/_api/collection")
    assert done.returncode == 0, done.stderr
    assert "> Upgrade: h2c" in done.stderr
    assert "101" not in done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "1.1"
    assert json.loads(lines[0])["name"] == name
    cleanup = curl("-X", "DELETE", f"{url}/_api/collection/{name}")
    assert cleanup.returncode == 0
