"""Starting, stopping and killing `quince serve` processes for the test suites.

What it is: the one place that knows how to launch the server binary on a free port, learn
its URL from the ready line, and end it (SIGTERM for a graceful stop, SIGKILL for a crash).
It also mints superuser JWTs and speaks raw HTTP/1.x over a socket where exactness matters.

What it is not: a client library. Tests talk to the server through python-arango, `requests`
or the raw helpers here; nothing in this module interprets API semantics.

Invariants: every server runs on 127.0.0.1 with port 0 and its own data directory; its stdout
is drained by a thread for its whole life (so the pipe never fills) and its stderr goes to a log
file beside the data directory, whose tail is shown whenever something goes wrong. Every wait
is bounded.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import json
import os
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ROOT_PASSWORD = "quince-test-pw"
JWT_SECRET = "secret"
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 30.0
READY_LINE = re.compile(r"^quince: listening on (https?://127\.0\.0\.1:(\d+))\s*$")
# The same line for a server on any IPv4 address (the cluster tests' network namespaces).
READY_LINE_ANY_HOST = re.compile(r"^quince: listening on (https?://(\d+\.\d+\.\d+\.\d+):(\d+))\s*$")


def quince_bin() -> Path:
    """The server binary: `$QUINCE_BIN`, else `target/debug/quince` of this checkout."""
    configured = os.environ.get("QUINCE_BIN")
    path = Path(configured) if configured else Path("target/debug/quince")
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path


class ServerError(RuntimeError):
    """The server did not start, or did not stop, as the harness expected."""


class QuinceServer:
    """One `quince serve` process over one data directory (restartable on the same one)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        password: str = ROOT_PASSWORD,
        jwt_keyfile: Path | None = None,
        extra_args: tuple[str, ...] | list[str] = (),
        log_path: Path | None = None,
        preexec_fn=None,
        host: str = "127.0.0.1",
        netns: str | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        # Runs in the child before the server starts (to lower its descriptor limit, say).
        self.preexec_fn = preexec_fn
        # The address it listens on, and the network namespace it runs in (`ip netns exec`).
        self.host = host
        self.netns = netns
        self.password = password
        self.jwt_keyfile = jwt_keyfile
        self.extra_args = list(extra_args)
        self.log_path = log_path or self.data_dir.with_name(self.data_dir.name + ".log")
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self.port: int | None = None
        self.stdout_lines: list[str] = []
        self._lines: queue.Queue = queue.Queue()

    # -- life cycle -----------------------------------------------------------------------

    def command(self) -> list[str]:
        prefix = ["ip", "netns", "exec", self.netns] if self.netns else []
        args = prefix + [
            str(quince_bin()),
            "serve",
            "--server.endpoint",
            f"tcp://{self.host}:0",
            "--database.directory",
            str(self.data_dir),
            "--database.password",
            self.password,
            "--server.authentication",
            "true",
        ]
        if self.jwt_keyfile is not None:
            args += ["--server.jwt-secret-keyfile", str(self.jwt_keyfile)]
        return args + self.extra_args

    def start(self, timeout_s: float = START_TIMEOUT_S) -> "QuinceServer":
        """Starts the process and waits for its ready line; raises `ServerError` otherwise."""
        assert self.proc is None or self.proc.poll() is not None, "server already running"
        binary = quince_bin()
        if not binary.exists():
            raise ServerError(f"server binary {binary} does not exist (cargo build -p quince-server)")
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self.url = None
        self.port = None
        self._lines = queue.Queue()
        with open(self.log_path, "ab") as log:
            log.write(f"\n==== start {time.strftime('%H:%M:%S')}: {' '.join(self.command())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                preexec_fn=self.preexec_fn,
            )
        threading.Thread(target=self._drain_stdout, args=(self.proc, self._lines), daemon=True).start()

        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise ServerError(
                    f"server did not print its ready line within {timeout_s:.0f} s\n"
                    f"stdout: {self.stdout_lines!r}\nstderr tail:\n{self.stderr_tail()}"
                )
            try:
                line = self._lines.get(timeout=min(remaining, 0.25))
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.wait(timeout=STOP_TIMEOUT_S)
                raise ServerError(
                    f"server exited with code {code} before it was ready\n"
                    f"stdout: {self.stdout_lines!r}\nstderr tail:\n{self.stderr_tail()}"
                )
            match = READY_LINE_ANY_HOST.match(line)
            if match and match.group(2) == self.host:
                self.url = match.group(1)
                self.port = int(match.group(3))
                return self

    def _drain_stdout(self, proc: subprocess.Popen, lines: queue.Queue) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            self.stdout_lines.append(text)
            lines.put(text)
        lines.put(None)

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> int:
        """SIGTERM, then waits; returns the exit code. Kills and raises if it hangs."""
        assert self.proc is not None, "server never started"
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
                raise ServerError(
                    f"server did not exit within {timeout_s:.0f} s of SIGTERM\n{self.stderr_tail()}"
                ) from None
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL (a crash): nothing is flushed, nothing is closed."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=STOP_TIMEOUT_S)

    def stderr_tail(self, limit: int = 6000) -> str:
        try:
            data = self.log_path.read_bytes()
        except OSError:
            return "(no log)"
        return data[-limit:].decode("utf-8", "replace")

    @property
    def host_port(self) -> tuple[str, int]:
        assert self.port is not None, "server not started"
        return (self.host, self.port)


# -- JWT ----------------------------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def make_jwt(header: dict, claims: dict, secret: str | None) -> str:
    """A compact JWT; HS256-signed with `secret`, or with an empty signature when None."""
    signing_input = _b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + _b64url(
        json.dumps(claims, separators=(",", ":")).encode()
    )
    if secret is None:
        return signing_input + "."
    signature = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + _b64url(signature)


def superuser_jwt(secret: str = JWT_SECRET, *, lifetime_s: int = 3600, alg: str = "HS256") -> str:
    """A superuser token as ArangoDB's tools mint it: `iss`, `server_id`, `iat`, `exp`."""
    now = int(time.time())
    claims = {"iss": "arangodb", "server_id": "quince-tests", "iat": now, "exp": now + lifetime_s}
    if alg == "none":
        return make_jwt({"alg": "none", "typ": "JWT"}, claims, None)
    return make_jwt({"alg": alg, "typ": "JWT"}, claims, secret)


def basic_auth_header(user: str = "root", password: str = ROOT_PASSWORD) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


# -- raw HTTP/1.x ---------------------------------------------------------------------------


class JsonClient:
    """One keep-alive connection to a server that sends JSON bodies with `authorization`.

    `call` returns the status and the parsed body (None when empty; the start of the text when
    it is not JSON); connection errors are raised (`OSError`, `http.client.HTTPException`)."""

    def __init__(self, host_port: tuple[str, int], authorization: str, timeout_s: float) -> None:
        self.conn = http.client.HTTPConnection(*host_port, timeout=timeout_s)
        self.authorization = authorization

    def call(self, method: str, path: str, body=None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body)
        self.conn.request(method, path, body=data, headers={"Authorization": self.authorization,
                                                             "Content-Type": "application/json"})
        resp = self.conn.getresponse()
        payload = resp.read()
        try:
            return resp.status, (json.loads(payload) if payload else None)
        except ValueError:
            return resp.status, payload.decode("utf-8", "replace")[:300]

    def close(self) -> None:
        self.conn.close()


class RawResponse:
    """One response read off a socket: status line, headers (lower-cased names), body bytes."""

    def __init__(self, version: str, status: int, reason: str, headers: list[tuple[str, str]], body: bytes):
        self.version = version
        self.status = status
        self.reason = reason
        self.header_list = headers
        self.headers = {name: value for name, value in headers}
        self.body = body

    def json(self):
        return json.loads(self.body)


def read_response(sock_file, *, head: bool = False) -> RawResponse:
    """Reads exactly one response; its length must be known from Content-Length (or HEAD/304)."""
    status_line = sock_file.readline(65536)
    if not status_line:
        raise ConnectionError("connection closed before a response")
    version, status, *reason = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers: list[tuple[str, str]] = []
    while True:
        line = sock_file.readline(65536)
        if not line:
            raise ConnectionError("connection closed inside the headers")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip().lower(), value.strip()))
    names = {name for name, _ in headers}
    code = int(status)
    body = b""
    if not head and code not in (204, 304) and not 100 <= code < 200:
        if "content-length" in names:
            length = int(dict(headers)["content-length"])
            assert 0 <= length <= 64 * 1024 * 1024, "response too large for a test"
            body = sock_file.read(length)
            if len(body) != length:
                raise ConnectionError("connection closed inside the body")
        elif dict(headers).get("transfer-encoding", "").lower() == "chunked":
            body = _read_chunked(sock_file)
        else:
            raise AssertionError(f"response without Content-Length: {status_line!r} {headers!r}")
    return RawResponse(version, code, reason[0] if reason else "", headers, body)


def _read_chunked(sock_file) -> bytes:
    out = bytearray()
    while True:
        size = int(sock_file.readline(1024).split(b";")[0].strip(), 16)
        if size == 0:
            while sock_file.readline(1024) not in (b"\r\n", b"\n", b""):
                pass
            return bytes(out)
        out += sock_file.read(size)
        sock_file.readline(16)


class RawConnection:
    """One TCP connection that sends bytes as given and reads whole responses back."""

    def __init__(self, host_port: tuple[str, int], timeout_s: float = 15.0) -> None:
        self.sock = socket.create_connection(host_port, timeout=timeout_s)
        self.file = self.sock.makefile("rb")

    def send(self, payload: bytes) -> None:
        self.sock.sendall(payload)

    def read(self, *, head: bool = False) -> RawResponse:
        return read_response(self.file, head=head)

    def peer_closed(self, wait_s: float = 5.0) -> bool:
        """True when the server closes the connection within `wait_s` (no bytes may arrive)."""
        self.sock.settimeout(wait_s)
        try:
            data = self.file.read(1)
        except (socket.timeout, TimeoutError):
            return False
        except ConnectionError:
            return True
        assert not data, f"unexpected bytes after the last response: {data!r}"
        return True

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> "RawConnection":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
