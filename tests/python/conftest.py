"""Fixtures for the python suites: one real `quince serve` per session, extra servers on demand.

What it is: the session server (port 0, its own temp data directory, root password
`quince-test-pw`, a JWT keyfile holding `secret`), python-arango handles on it (`client`,
`sys_db`, a fresh database per module, a fresh collection per test), a `requests`-based raw
client (`http`), and `server_factory` for tests that must stop, restart or configure a server
of their own.

What it is not: a place for assertions about the API; those live in the test modules.

Invariants: every name a test creates is unique (uuid suffix); every server started here is
stopped at the end, and a server stopped by SIGTERM must exit with code 0.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from arango import ArangoClient  # noqa: E402
from quince_server import JWT_SECRET, ROOT_PASSWORD, QuinceServer  # noqa: E402

REQUEST_TIMEOUT_S = 30


def wait_for(predicate, what: str, deadline_s: float = 30.0):
    """Polls `predicate` until it returns a truthy value (and returns it); fails after the
    deadline. The condition polled is what the test observes, never the passing of time."""
    end = time.monotonic() + deadline_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


class Http:
    """A thin `requests` wrapper: paths relative to the server, root's Basic auth by default."""

    def __init__(self, url: str, auth=("root", ROOT_PASSWORD)) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.auth = auth

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        kwargs.setdefault("timeout", REQUEST_TIMEOUT_S)
        return self.session.request(method, self.url + path, **kwargs)

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def put(self, path, **kw):
        return self.request("PUT", path, **kw)

    def patch(self, path, **kw):
        return self.request("PATCH", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def head(self, path, **kw):
        return self.request("HEAD", path, **kw)


def write_keyfile(directory: Path) -> Path:
    keyfile = directory / "jwt-secret"
    keyfile.write_text(JWT_SECRET)
    return keyfile


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    base = tmp_path_factory.mktemp("quince-session")
    srv = QuinceServer(base / "data", jwt_keyfile=write_keyfile(base))
    srv.start()
    yield srv
    code = srv.stop()
    assert code == 0, f"session server exited with {code} on SIGTERM\n{srv.stderr_tail()}"


@pytest.fixture(scope="session")
def url(server) -> str:
    return server.url


@pytest.fixture(scope="session")
def client(url):
    return ArangoClient(hosts=url, request_timeout=REQUEST_TIMEOUT_S)


@pytest.fixture(scope="session")
def sys_db(client):
    return client.db("_system", username="root", password=ROOT_PASSWORD)


@pytest.fixture(scope="session")
def http(url) -> Http:
    return Http(url)


@pytest.fixture(scope="module")
def db_name(sys_db):
    name = unique("test_db")
    assert sys_db.create_database(name) is True
    yield name
    sys_db.delete_database(name, ignore_missing=True)


@pytest.fixture(scope="module")
def db(client, db_name):
    return client.db(db_name, username="root", password=ROOT_PASSWORD)


@pytest.fixture
def col(db):
    name = unique("col")
    collection = db.create_collection(name)
    yield collection
    db.delete_collection(collection.name, ignore_missing=True)


@pytest.fixture
def ecol(db):
    name = unique("edges")
    collection = db.create_collection(name, edge=True)
    yield collection
    db.delete_collection(collection.name, ignore_missing=True)


@pytest.fixture
def server_factory(tmp_path):
    """Starts extra servers: `start(data_dir=None, extra_args=(), jwt=True)`; all stopped at the end."""
    started: list[QuinceServer] = []

    def start(data_dir: Path | None = None, extra_args=(), jwt: bool = True) -> QuinceServer:
        directory = Path(data_dir) if data_dir is not None else tmp_path / unique("data")
        keyfile = write_keyfile(tmp_path) if jwt else None
        srv = QuinceServer(directory, jwt_keyfile=keyfile, extra_args=tuple(extra_args))
        srv.start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        if srv.running():
            code = srv.stop()
            assert code == 0, f"server exited with {code} on SIGTERM\n{srv.stderr_tail()}"
