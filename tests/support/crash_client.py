"""One keep-alive HTTP connection for the crash harnesses (kill -9 loop, transaction crash test).

What it is: `Conn`, a thin wrapper over `http.client` that sends a request as root, parses the
JSON reply, and raises `Gone` when the server is not there (killed under the request); while
a request is out, `busy` says since when and what, so a harness can tell a hung server from a
killed one. `job` is the same for an asynchronous job a harness is waiting for.

What it is not: a client library or a judge. It interprets no API semantics; the harnesses
decide what a reply means.

Invariants: every request has a bound (`REQUEST_TIMEOUT_S`); a connection that failed once is
closed (the next request opens a new one).
"""

from __future__ import annotations

import http.client
import json
import time

from quince_server import ROOT_PASSWORD, basic_auth_header

REQUEST_TIMEOUT_S = 20.0
AUTH = basic_auth_header("root", ROOT_PASSWORD)


class Gone(Exception):
    """The server went away under a request (the request stays in flight)."""


class Conn:
    """One keep-alive connection; `call` raises `Gone` when the server is not there."""

    def __init__(self, host_port: tuple[str, int], registry: list | None = None) -> None:
        self.conn = http.client.HTTPConnection(*host_port, timeout=REQUEST_TIMEOUT_S)
        self.busy: tuple[float, str] | None = None  # (since, what) while a request is out
        self.job: tuple[float, str] | None = None  # (since, what) while a job is not done
        if registry is not None:
            registry.append(self)

    def call(self, method: str, path: str, body=None, *, raw: bytes | None = None,
             headers: dict | None = None) -> tuple[int, dict, object]:
        """Sends one request; the status, the headers (lower-case names) and the parsed body
        (JSON, else the first 300 characters of the text, else None when empty)."""
        data = raw if raw is not None else (None if body is None else json.dumps(body))
        all_headers = {"Authorization": AUTH, "Content-Type": "application/json"}
        all_headers.update(headers or {})
        self.busy = (time.monotonic(), f"{method} {path}")
        try:
            self.conn.request(method, path, body=data, headers=all_headers)
            resp = self.conn.getresponse()
            payload = resp.read()
        except (OSError, http.client.HTTPException) as err:
            self.conn.close()
            raise Gone(repr(err)) from None
        finally:
            self.busy = None
        parsed = None
        if payload:
            try:
                parsed = json.loads(payload)
            except ValueError:
                parsed = payload.decode("utf-8", "replace")[:300]
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, parsed

    def close(self) -> None:
        self.conn.close()
