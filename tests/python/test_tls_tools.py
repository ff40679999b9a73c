"""`quince bench`, `quince import`, `quince dump` and `quince restore` over `ssl://`, trusting a
CA file made by the test.

What it is: a `quince serve` listening on an `ssl://` endpoint with a certificate for
127.0.0.1 signed by a CA the test makes with the `openssl` command; the tools connect to it with
`--ssl.cafile` (their runs succeed, with one handshake per connection), and without a CA they
trust (their runs fail with a TLS message, before any request).

What it is not: the server's TLS suite (its options, reloads, client certificates), nor the
tools' plain-TCP suites (test_bench_cli.py, test_import_cli.py).

Invariants: every process is bounded in time and stopped at the end.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
import requests

from bench_support import run_bench
from conftest import unique
from quince_server import ROOT_PASSWORD, quince_bin

TIMEOUT_S = 60
START_TIMEOUT_S = 30


pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command makes the test CA")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=TIMEOUT_S)


def make_pki(directory: Path, tag: str) -> tuple[Path, Path]:
    """A CA (`<tag>-ca.pem`) and a server PEM (`<tag>-server.pem`: certificate chain then key)
    for 127.0.0.1 and localhost."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=Quince test CA {tag}",
             "-keyout", f"{tag}-ca.key", "-out", f"{tag}-ca.pem", cwd=directory)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
             "-keyout", f"{tag}-server.key", "-out", f"{tag}-server.csr", cwd=directory)
    (directory / f"{tag}-san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _openssl("x509", "-req", "-in", f"{tag}-server.csr", "-CA", f"{tag}-ca.pem", "-CAkey", f"{tag}-ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", f"{tag}-san.ext", "-out", f"{tag}-server.crt", cwd=directory)
    bundle = directory / f"{tag}-server.pem"
    bundle.write_text((directory / f"{tag}-server.crt").read_text() + (directory / f"{tag}-server.key").read_text())
    return directory / f"{tag}-ca.pem", bundle


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _handshake_works(port: int, cafile: Path) -> bool:
    context = ssl.create_default_context(cafile=str(cafile))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1"):
                return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    """A `quince serve` on ssl://127.0.0.1:PORT; yields (endpoint, https url, CA file, other CA file)."""
    base = tmp_path_factory.mktemp("quince-tls-tools")
    cafile, keyfile = make_pki(base, "good")
    other_ca, _ = make_pki(base, "other")
    port = _free_port()
    command = [str(quince_bin()), "serve", "--server.endpoint", f"ssl://127.0.0.1:{port}",
               "--ssl.keyfile", str(keyfile), "--database.directory", str(base / "data"),
               "--database.password", ROOT_PASSWORD, "--server.authentication", "true"]
    log = open(base / "server.log", "wb")
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _handshake_works(port, cafile):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"TLS server did not come up:\n{(base / 'server.log').read_text()[-4000:]}")
            time.sleep(0.05)
        yield f"ssl://127.0.0.1:{port}", f"https://127.0.0.1:{port}", cafile, other_ca
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=TIMEOUT_S)
        log.close()


def test_bench_over_tls_with_the_ca_file(tls_server):
    endpoint, _, cafile, _ = tls_server
    run = run_bench(None, "--server.endpoint", endpoint, "--ssl.cafile", str(cafile),
                    "--test-case", "version", "--requests", "400", "--concurrency", "4")
    assert run.code == 0, run.explain()
    assert run.report["results"]["failures"] == 0 and run.report["errors"] == []
    assert run.report["endpoints"] == [endpoint]
    # Keep-alive over TLS: one connection (one handshake) per lane.
    assert run.report["connectionsOpened"] == 4
    assert run.report["serviceTime"]["count"] == 400


def test_bench_with_documents_over_tls(tls_server):
    endpoint, _, cafile, _ = tls_server
    run = run_bench(None, "--server.endpoint", endpoint, "--ssl.cafile", str(cafile),
                    "--test-case", "document", "--requests", "300", "--concurrency", "3",
                    "--complexity", "200", "--collection", unique("benchtls"))
    assert run.code == 0, run.explain()
    assert run.report["results"]["failures"] == 0


def test_bench_refuses_a_server_it_does_not_trust(tls_server):
    endpoint, _, _, other_ca = tls_server
    run = run_bench(None, "--server.endpoint", endpoint, "--ssl.cafile", str(other_ca), "--requests", "10")
    assert run.code == 2, run.explain()
    assert "TLS" in run.stderr and "certificate" in run.stderr, run.stderr


def _run_import(endpoint: str, *args: str):
    command = [str(quince_bin()), "import", "--server.endpoint", endpoint,
               "--server.password", ROOT_PASSWORD, "--progress", "false", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)


def test_import_over_tls_with_the_ca_file(tls_server, tmp_path):
    endpoint, url, cafile, _ = tls_server
    name = unique("importtls")
    data = tmp_path / "docs.jsonl"
    data.write_text("".join(json.dumps({"_key": f"k{i}", "n": i, "pad": "x" * 200}) + "\n" for i in range(3000)))
    proc = _run_import(endpoint, "--ssl.cafile", str(cafile), "--file", str(data), "--type", "jsonl",
                       "--collection", name, "--create-collection", "true", "--batch-size", "65536")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "created: 3000, errors: 0, updated: 0, ignored: 0"
    reply = requests.get(f"{url}/_api/collection/{name}/count", auth=("root", ROOT_PASSWORD),
                         verify=str(cafile), timeout=TIMEOUT_S)
    assert reply.status_code == 200 and reply.json()["count"] == 3000


def test_import_refuses_a_server_it_does_not_trust(tls_server, tmp_path):
    endpoint, _, _, other_ca = tls_server
    data = tmp_path / "docs.jsonl"
    data.write_text('{"a":1}\n')
    proc = _run_import(endpoint, "--ssl.cafile", str(other_ca), "--file", str(data), "--type", "jsonl",
                       "--collection", unique("never"), "--create-collection", "true")
    assert proc.returncode == 1
    assert "TLS" in proc.stderr and "certificate" in proc.stderr, proc.stderr


def test_dump_and_restore_over_tls(tls_server, tmp_path):
    endpoint, url, cafile, other_ca = tls_server
    source, target = unique("dumptls"), unique("restoretls")
    auth = ("root", ROOT_PASSWORD)
    for name in (source, target):
        reply = requests.post(f"{url}/_api/database", json={"name": name}, auth=auth, verify=str(cafile),
                              timeout=TIMEOUT_S)
        assert reply.status_code == 201, reply.text
    reply = requests.post(f"{url}/_db/{source}/_api/collection", json={"name": "c"}, auth=auth,
                          verify=str(cafile), timeout=TIMEOUT_S)
    assert reply.status_code == 200, reply.text
    documents = [{"_key": f"k{i}", "n": i} for i in range(500)]
    reply = requests.post(f"{url}/_db/{source}/_api/document/c", json=documents, auth=auth, verify=str(cafile),
                          timeout=TIMEOUT_S)
    assert reply.status_code == 202, reply.text

    def tool(*args: str):
        command = [str(quince_bin()), *args, "--server.endpoint", endpoint, "--server.password", ROOT_PASSWORD]
        return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)

    out = tmp_path / "dump"
    refused = tool("dump", "--server.database", source, "--output-directory", str(out), "--ssl.cafile",
                   str(other_ca))
    assert refused.returncode != 0 and "certificate" in refused.stderr, refused.stderr
    dumped = tool("dump", "--server.database", source, "--output-directory", str(out), "--overwrite", "true",
                  "--ssl.cafile", str(cafile))
    assert dumped.returncode == 0, dumped.stderr
    restored = tool("restore", "--server.database", target, "--input-directory", str(out), "--ssl.cafile",
                    str(cafile))
    assert restored.returncode == 0, restored.stderr
    reply = requests.put(f"{url}/_db/{target}/_api/document/c?onlyget=true", json=[d["_key"] for d in documents],
                         auth=auth, verify=str(cafile), timeout=TIMEOUT_S)
    assert reply.status_code == 200, reply.text
    assert [{"_key": d["_key"], "n": d["n"]} for d in reply.json()] == documents
