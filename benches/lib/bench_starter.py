"""A local Quince cluster for the benchmark scripts: one `quince start` process on a free port
range in its own data directory, its ready line awaited with a deadline, its setup.json read
for the coordinators' URLs and each process's pid and role, and the CPU time (utime + stime
from /proc/<pid>/stat) of every process it runs, by role.

What it is not: a test fixture (tests/support/quince_starter.py is) or a measurement; the
scripts measure with `cpu_by_process` snapshots taken around their runs.

Invariants: `stop` ends the starter (SIGTERM, SIGKILL after a bounded wait), and its children
die with it (the starter stops them; their parent-death signal covers a killed starter);
every wait is bounded. Standard library only.
"""

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
import urllib.request

from bench_common import AUTH, ROOT_PASSWORD

READY = re.compile(r"^quince start: ready: (\S+)\s*$")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_base_port(span):
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


def process_cpu_s(pid):
    """utime + stime of `pid` in seconds, or None when it does not run."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


class Cluster:
    """One `quince start --starter.local` with `agency` etcd members, `dbservers` DB servers and
    `coordinators` coordinators; root's password is bench_common's ROOT_PASSWORD."""

    def __init__(self, data_dir, agency, dbservers, coordinators, extra_args=()):
        self.data_dir = data_dir
        self.layout = (agency, dbservers, coordinators)
        self.extra_args = list(extra_args)
        self.proc = None
        self.urls = []
        self._lines = queue.Queue()
        self._log = None
        self._log_offsets = {}

    def start(self, deadline_s=300):
        agency, dbservers, coordinators = self.layout
        base = free_base_port(5 * max(self.layout) + 5)
        self._log = open(os.path.join(self.data_dir, "starter.log"), "wb")
        self.proc = subprocess.Popen(
            [os.environ["QUINCE_BIN"], "start", "--starter.data-dir", self.data_dir, "--starter.port", str(base),
             "--cluster.agency-size", str(agency), "--starter.dbservers", str(dbservers),
             "--starter.coordinators", str(coordinators), "--starter.start-timeout", str(deadline_s),
             f"--all.database.password={ROOT_PASSWORD}", "--all.log.level=warn", *self.extra_args],
            stdout=subprocess.PIPE, stderr=self._log, text=True)
        threading.Thread(target=self._drain, daemon=True).start()
        end = time.monotonic() + deadline_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                self.stop()
                raise RuntimeError(f"quince start: no ready line within {deadline_s} s ({self.log_tail()})")
            try:
                line = self._lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                code = self.proc.wait()
                raise RuntimeError(f"quince start exited ({code}) before it was ready: {self.log_tail()}")
            m = READY.match(line)
            if m:
                self.urls = m.group(1).split(",")
                return self

    def _drain(self):
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def log_tail(self):
        try:
            with open(os.path.join(self.data_dir, "starter.log"), errors="replace") as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def setup(self):
        with open(os.path.join(self.data_dir, "setup.json")) as f:
            return json.load(f)

    def processes(self):
        """[(role, port, pid, data_dir)] of the processes the starter runs, plus the starter."""
        rows = [(p["role"], p["port"], p["pid"], p["dataDir"]) for p in self.setup()["processes"]]
        return rows + [("starter", None, self.proc.pid, self.data_dir)]

    def server_ids(self):
        """{DB server id: port} from each DB server's SERVER_ID file."""
        ids = {}
        for role, port, _, data_dir in self.processes():
            if role == "dbserver":
                with open(os.path.join(data_dir, "SERVER_ID")) as f:
                    ids[f.read().strip()] = port
        return ids

    def cpu_by_process(self):
        """{(role, port): CPU seconds so far} of every running process."""
        return {(role, port): process_cpu_s(pid) or 0.0 for role, port, pid, _ in self.processes() if pid}

    def new_warnings(self):
        """The WARN and ERROR lines each server logged since the last call, as
        [(role, port, line)]."""
        found = []
        for role, port, _, data_dir in self.processes():
            if role not in ("dbserver", "coordinator"):
                continue
            path = os.path.join(os.path.dirname(data_dir), "quince.log")
            try:
                with open(path, errors="replace") as f:
                    f.seek(self._log_offsets.get(path, 0))
                    text = f.read()
                    self._log_offsets[path] = f.tell()
            except OSError:
                continue
            found += [(role, port, line) for line in text.splitlines() if "WARN" in line or "ERROR" in line]
        return found

    def request(self, method, path, body=None, url=None, timeout=300):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request((url or self.urls[0]) + path, data=data, method=method,
                                     headers={"Authorization": AUTH, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read() or b"null")

    def stop(self, deadline_s=90):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=deadline_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self._log:
            self._log.close()
