"""python-arango and `requests` against a server on an ssl:// endpoint.

What it covers: a CRUD and AQL round trip through python-arango over HTTPS, trusting a CA that
the test makes with the `openssl` command; `GET /_admin/server/tls` (ArangoDB's shape, the
file's SHA-256) and `POST` reload through python-arango's `tls()` / `reload_tls()` with a
superuser token (root's password is refused for the reload, as in arangod); a new connection
after a reload sees the new certificate; plain HTTP on the TLS port gets no HTTP reply and the
server keeps serving.

Invariants: every certificate is made in the test's own temporary directory; no network
beyond loopback.
"""

from __future__ import annotations

import hashlib
import shutil
import socket
import ssl
import subprocess
from pathlib import Path

import pytest
import requests
from arango import ArangoClient
from conftest import REQUEST_TIMEOUT_S, unique
from http_checks import assert_error
from quince_server import ROOT_PASSWORD, superuser_jwt

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


class Certs:
    """A CA and server keyfiles it signed, in `directory`."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Quince test CA",
            cwd=directory,
        )
        self.ca = directory / "ca.pem"

    def keyfile(self, name: str) -> tuple[Path, bytes]:
        """A keyfile (certificate + key, PEM) for 127.0.0.1 and localhost, and the
        certificate's DER."""
        openssl(
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", "/CN=localhost",
            cwd=self.dir,
        )
        (self.dir / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", f"{name}.ext",
            cwd=self.dir,
        )
        openssl("x509", "-in", f"{name}.crt", "-outform", "DER", "-out", f"{name}.der", cwd=self.dir)
        keyfile = self.dir / f"{name}.pem"
        keyfile.write_bytes((self.dir / f"{name}.crt").read_bytes() + (self.dir / f"{name}.key").read_bytes())
        return keyfile, (self.dir / f"{name}.der").read_bytes()


@pytest.fixture
def certs(tmp_path, monkeypatch) -> Certs:
    # `requests` lets these variables override a session's own CA file (python-arango's
    # `verify_override`); the test's CA must be the one used.
    for variable in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(variable, raising=False)
    directory = tmp_path / "certs"
    directory.mkdir()
    return Certs(directory)


def start_tls(server_factory, keyfile: Path):
    srv = server_factory(extra_args=["--server.endpoint", "ssl://127.0.0.1:0", "--ssl.keyfile", str(keyfile)])
    assert srv.url.startswith("https://127.0.0.1:")
    return srv


def served_certificate(port: int, ca: Path) -> bytes:
    """The DER of the certificate a new TLS connection is served."""
    context = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT_S) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            return tls.getpeercert(binary_form=True)


def test_python_arango_round_trip_over_tls(server_factory, certs):
    keyfile, _ = certs.keyfile("server")
    srv = start_tls(server_factory, keyfile)
    client = ArangoClient(hosts=srv.url, verify_override=str(certs.ca), request_timeout=REQUEST_TIMEOUT_S)
    try:
        db = client.db("_system", username="root", password=ROOT_PASSWORD, verify=True)
        name = unique("tls")
        col = db.create_collection(name)
        meta = col.insert({"_key": "a", "value": 1})
        assert meta["_key"] == "a"
        assert col.get("a")["value"] == 1
        cursor = db.aql.execute("FOR d IN @@c FILTER d.value == 1 RETURN d._key", bind_vars={"@c": name})
        assert list(cursor) == ["a"]
        db.delete_collection(name)
    finally:
        client.close()

    # A client that does not trust the CA refuses the server.
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(srv.url + "/_api/version", auth=("root", ROOT_PASSWORD), timeout=REQUEST_TIMEOUT_S)


def test_tls_data_and_reload(server_factory, certs):
    keyfile, first_der = certs.keyfile("first")
    srv = start_tls(server_factory, keyfile)
    url = srv.url + "/_admin/server/tls"

    resp = requests.get(url, auth=("root", ROOT_PASSWORD), verify=str(certs.ca), timeout=REQUEST_TIMEOUT_S)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["error"] is False and body["code"] == 200
    described = body["result"]["keyfile"]
    assert described["sha256"] == hashlib.sha256(keyfile.read_bytes()).hexdigest()
    assert described["certificates"] == [(certs.dir / "first.crt").read_text().strip()]
    assert len(described["privateKeySha256"]) == 64
    assert body["result"]["clientCA"] == {}
    assert "SNI" not in body["result"]

    # Root's password does not reload TLS data; a superuser does (as in arangod).
    resp = requests.post(url, auth=("root", ROOT_PASSWORD), verify=str(certs.ca), timeout=REQUEST_TIMEOUT_S)
    assert resp.status_code == 403, resp.text
    assert resp.json()["errorNum"] == 11

    client = ArangoClient(hosts=srv.url, verify_override=str(certs.ca), request_timeout=REQUEST_TIMEOUT_S)
    try:
        db = client.db("_system", superuser_token=superuser_jwt())
        assert db.tls()["keyfile"]["sha256"] == described["sha256"]
        assert served_certificate(srv.port, certs.ca) == first_der

        second, second_der = certs.keyfile("second")
        shutil.copyfile(second, keyfile)
        reloaded = db.reload_tls()
        assert reloaded["keyfile"]["sha256"] == hashlib.sha256(second.read_bytes()).hexdigest()
        assert served_certificate(srv.port, certs.ca) == second_der

        # A broken keyfile: 400 with errorNum 34, and the server keeps the certificate it had.
        keyfile.write_text("not a keyfile\n")
        resp = requests.post(
            url,
            headers={"Authorization": f"bearer {superuser_jwt()}"},
            verify=str(certs.ca),
            timeout=REQUEST_TIMEOUT_S,
        )
        assert resp.status_code == 400, resp.text
        assert resp.json()["errorNum"] == 34
        assert served_certificate(srv.port, certs.ca) == second_der
        assert db.tls()["keyfile"]["sha256"] == reloaded["keyfile"]["sha256"]
    finally:
        client.close()


def test_plain_http_on_the_tls_port_fails_cleanly(server_factory, certs):
    keyfile, _ = certs.keyfile("server")
    srv = start_tls(server_factory, keyfile)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=REQUEST_TIMEOUT_S) as raw:
        raw.sendall(b"GET /_api/version HTTP/1.1\r\nHost: localhost\r\n\r\n")
        answer = b""
        while True:
            try:
                chunk = raw.recv(4096)
            except ConnectionResetError:
                # Closed with request bytes still unread: the kernel resets the connection.
                break
            if not chunk:
                break
            answer += chunk
    assert not answer.startswith(b"HTTP/"), answer
    if shutil.which("curl"):
        plain = subprocess.run(
            ["curl", "-sS", "--max-time", "10", f"http://127.0.0.1:{srv.port}/_api/version"],
            capture_output=True,
            timeout=30,
        )
        assert plain.returncode != 0
    resp = requests.get(srv.url + "/_api/version", auth=("root", ROOT_PASSWORD), verify=str(certs.ca),
                        timeout=REQUEST_TIMEOUT_S)
    assert resp.status_code == 200
    assert resp.json()["server"] == "arango"


def test_tls_data_without_tls(http):
    """A plain (tcp://) server has no TLS data: an empty `result`, as arangod answers."""
    resp = http.get("/_admin/server/tls")
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"error": False, "code": 200, "result": {}}
    assert_error(http.post("/_admin/server/tls"), 403, 11)
    resp = requests.post(http.url + "/_admin/server/tls", headers={"Authorization": f"bearer {superuser_jwt()}"},
                         timeout=REQUEST_TIMEOUT_S)
    assert resp.status_code == 200, resp.text
    assert resp.json()["result"] == {}
    assert_error(http.put("/_admin/server/tls"), 403, 11)
    assert requests.get(http.url + "/_admin/server/tls", timeout=REQUEST_TIMEOUT_S).status_code == 401
