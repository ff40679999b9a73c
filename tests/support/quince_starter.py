"""`quince start` for the process tests: running a starter, reading its state file, probing
the processes it runs.

What it is: `Starter` (one `quince start` process: its stdout drained by a thread, its ready
line awaited with a deadline, its setup.json read on demand, SIGTERM or SIGKILL to end it),
`free_base_port` (a base port whose whole port range is free), `pid_alive` and
`version_status` (GET /_api/version with a superuser token signed with the cluster's secret),
and `needs_cluster_serve`, the skip mark for tests that need `quince serve` to accept the
`--cluster.*` options the starter passes; and the `starters` fixture, which the test modules
import.

What it is not: assertions about the starter's behaviour (they live in the test modules).

Invariants: every starter started here is ended at the end of its test (SIGTERM, then SIGKILL
after a bounded wait: its children die with it by their parent-death signal); every wait is
bounded and polls a condition.
"""

from __future__ import annotations

import json
import os
import queue
import random
import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
import requests

from quince_server import quince_bin, superuser_jwt

READY = re.compile(r"^quince start: ready: (\S+)\s*$")
START_DEADLINE_S = 60.0
STOP_DEADLINE_S = 60.0


def serve_accepts_cluster_options() -> bool:
    """Whether `quince serve` knows --cluster.my-role (the serve side of the cluster)."""
    try:
        out = subprocess.run(
            [str(quince_bin()), "serve", "--help"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--cluster.my-role" in out.stdout and "--cluster.agency-endpoint" in out.stdout


needs_cluster_serve = pytest.mark.skipif(
    not serve_accepts_cluster_options(),
    reason="quince serve does not accept --cluster.my-role / --cluster.agency-endpoint yet "
    "(the serve side of issue 14); quince start passes them to every server",
)


def free_base_port(span: int) -> int:
    """A base port P such that P .. P+span are all free on 127.0.0.1 now."""
    for _ in range(200):
        base = random.randrange(20000, 60000 - span)
        sockets = []
        try:
            for port in range(base, base + span + 1):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
                sockets.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no free port range")


def pid_alive(pid: int, marker: str) -> bool:
    """Whether `pid` is a live (not zombie) process whose command line mentions `marker`
    (so a reused pid does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[1].split()[0]
    return state not in ("Z", "X") and marker in cmdline


def version_status(url: str, secret: str) -> int | None:
    """The status of GET url/_api/version with a superuser token, or None without an answer."""
    try:
        r = requests.get(
            f"{url}/_api/version",
            headers={"Authorization": f"bearer {superuser_jwt(secret)}"},
            timeout=5,
        )
    except requests.RequestException:
        return None
    return r.status_code


def superuser_jwt_header(secret: str) -> str:
    return f"Authorization: bearer {superuser_jwt(secret)}"


def wait_until(predicate, what: str, deadline_s: float):
    end = time.monotonic() + deadline_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Starter:
    """One `quince start` process."""

    def __init__(
        self, data_dir: Path, args: list[str], prefix: list[str] | None = None, env: dict | None = None
    ) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.stderr_path = self.data_dir.parent / (self.data_dir.name + ".starter.log")
        command = list(prefix or []) + [
            str(quince_bin()),
            "start",
            "--starter.data-dir",
            str(self.data_dir),
            *args,
        ]
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self._stderr, text=True,
            env=None if env is None else os.environ | env,
        )
        self.lines: queue.Queue = queue.Queue()
        self.stdout: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.stdout.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def log_tail(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def wait_ready(self, deadline_s: float = START_DEADLINE_S) -> list[str]:
        """The coordinator URLs of the ready line."""
        end = time.monotonic() + deadline_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no ready line in time; starter log:\n{self.log_tail()}")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(
                    f"the starter exited ({self.proc.wait()}) before it was ready:\n{self.log_tail()}"
                )
            match = READY.match(line)
            if match:
                return match.group(1).split(",")

    def setup(self) -> dict:
        return json.loads((self.data_dir / "setup.json").read_text())

    def secret(self) -> str:
        return Path(self.setup()["jwtSecretFile"]).read_text().strip()

    def stop(self, sig=signal.SIGTERM, deadline_s: float = STOP_DEADLINE_S) -> int:
        """Sends `sig` and returns the exit code (killing the starter after the deadline)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the starter did not exit after {sig}:\n{self.log_tail()}")
        finally:
            self._stderr.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_DEADLINE_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._stderr.closed:
            self._stderr.close()


def is_root() -> bool:
    return os.geteuid() == 0


@pytest.fixture
def starters():
    """Starts starters: `start(data_dir, args, prefix=None, env=None)` (`env`: variables added
    to the test's environment); all ended at the end of the test.
    (A fixture here, imported by the test modules, rather than in a conftest.py of their
    folder: a second `conftest` module would hide the suite's own from `from conftest import`.)"""
    started: list[Starter] = []

    def start(data_dir, args, prefix=None, env=None) -> Starter:
        starter = Starter(data_dir, args, prefix, env)
        started.append(starter)
        return starter

    yield start
    for starter in started:
        starter.close()

