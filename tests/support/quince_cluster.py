"""A Quince cluster on loopback for the process-level cluster tests: etcd members, DB servers
and coordinators, each a process the test can kill, restart or cut off.

What it is: `EtcdMember` (one `etcd` process with the arguments `quince start` gives it) and
`Cluster`, which starts the members, then the DB servers, then the coordinators (each a
`QuinceServer` with `--cluster.*` options), waits until every DB server is GOOD in
`/_admin/cluster/health`, and stops everything at the end. Supervision runs with short
timeouts by default (`FAST_SUPERVISION`) so failover tests stay short; pass
`supervision=()` for ArangoDB's defaults.

What it is not: `quince start` (its own tests start the cluster that way); the harness starts
processes itself so that a test controls each one.

Invariants: every process runs on 127.0.0.1 with its own data directory under the test's
temp directory; quince processes listen on port 0 (a restarted DB server may come back on
another port: the cluster knows servers by id, not by endpoint); etcd gets free ports picked
just before it starts; `stop()` ends every process, also after a failed start.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from quince_server import JWT_SECRET, ROOT_PASSWORD, QuinceServer, ServerError, superuser_jwt

# Detection within about 3 s: heartbeat lease 1 s, BAD after 1 s, FAILED after 2 s.
FAST_SUPERVISION = (
    "--cluster.heartbeat-ttl", "1",
    "--agency.supervision-frequency", "0.25",
    "--agency.supervision-ok-threshold", "1",
    "--agency.supervision-grace-period", "2",
    "--cluster.follower-timeout", "1",
)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def etcd_binary() -> str | None:
    return shutil.which("etcd")


def wait_until(predicate, what: str, deadline_s: float = 30.0):
    end = time.monotonic() + deadline_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class EtcdMember:
    """One etcd process of a statically bootstrapped cluster."""

    def __init__(self, name: str, data_dir: Path, host: str = "127.0.0.1") -> None:
        self.name = name
        self.data_dir = data_dir
        self.host = host
        self.client_port = free_port(host)
        self.peer_port = free_port(host)
        self.proc: subprocess.Popen | None = None
        self.log_path = data_dir.with_name(data_dir.name + ".log")

    @property
    def client_url(self) -> str:
        return f"http://{self.host}:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://{self.host}:{self.peer_port}"

    def args(self, members: list["EtcdMember"], token: str) -> list[str]:
        initial = ",".join(f"{m.name}={m.peer_url}" for m in members)
        return [
            etcd_binary() or "etcd",
            f"--name={self.name}",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={self.client_url}",
            f"--advertise-client-urls={self.client_url}",
            f"--listen-peer-urls={self.peer_url}",
            f"--initial-advertise-peer-urls={self.peer_url}",
            f"--initial-cluster={initial}",
            f"--initial-cluster-token={token}",
            "--initial-cluster-state=new",
            "--heartbeat-interval=100",
            "--election-timeout=1000",
            "--logger=zap",
            "--log-outputs=stderr",
        ]

    def start(self, members: list["EtcdMember"], token: str) -> None:
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args(members, token), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log)

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(self.client_url + "/health", timeout=1) as reply:
                return json.loads(reply.read()).get("health") == "true"
        except (OSError, ValueError):
            return False

    def is_leader(self) -> bool:
        """Whether this member is etcd's Raft leader (its v3 maintenance status)."""
        request = urllib.request.Request(self.client_url + "/v3/maintenance/status", data=b"{}", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=1) as reply:
                status = json.loads(reply.read())
        except (OSError, ValueError):
            return False
        return status.get("leader") == status.get("header", {}).get("member_id")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


class Cluster:
    """etcd members, DB servers and coordinators on loopback (see the module docstring)."""

    def __init__(self, root: Path, *, agents: int = 3, dbservers: int = 3, coordinators: int = 1,
                 supervision: tuple[str, ...] = FAST_SUPERVISION, extra_args: tuple[str, ...] = (),
                 host: str = "127.0.0.1", placements: dict[int, tuple[str, str]] | None = None) -> None:
        """`host` is the address every process listens on; `placements` moves DB server `i`
        into network namespace `ns` at address `addr` (`{i: (ns, addr)}`)."""
        self.root = Path(root)
        self.host = host
        self.root.mkdir(parents=True, exist_ok=True)
        self.keyfile = self.root / "jwt-secret"
        self.keyfile.write_text(JWT_SECRET)
        self.token = f"quince-test-{os.getpid()}-{time.monotonic_ns()}"
        self.etcd = [EtcdMember(f"agent{i}", self.root / f"agent{i}", host) for i in range(agents)]
        common = list(supervision) + list(extra_args)
        placements = placements or {}
        self.dbservers = [self._server("DBSERVER", self.root / f"dbserver{i}", common, *placements.get(i, (None, host)))
                          for i in range(dbservers)]
        self.coordinators = [self._server("COORDINATOR", self.root / f"coordinator{i}", common, None, host)
                             for i in range(coordinators)]

    def _server(self, role: str, data_dir: Path, common: list[str], netns: str | None, host: str) -> QuinceServer:
        args = ["--cluster.my-role", role]
        for member in self.etcd:
            args += ["--cluster.agency-endpoint", f"tcp://{member.host}:{member.client_port}"]
        return QuinceServer(data_dir, jwt_keyfile=self.keyfile, extra_args=args + common, host=host, netns=netns)

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> "Cluster":
        if etcd_binary() is None:
            raise ServerError("the etcd binary is missing (apt-get install etcd-server)")
        try:
            for member in self.etcd:
                member.start(self.etcd, self.token)
            wait_until(lambda: all(m.healthy() for m in self.etcd), "etcd members healthy")
            for server in self.dbservers:
                server.start(timeout_s=60)
            for server in self.coordinators:
                server.start(timeout_s=60)
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def wait_healthy(self, deadline_s: float = 30.0) -> dict:
        """Waits until every running DB server and coordinator is GOOD; the health reply."""
        def good():
            health = self.health()
            if health is None:
                return None
            running = sum(1 for s in self.dbservers + self.coordinators if s.running())
            members = health.get("Health", {})
            ok = [h for h in members.values() if h.get("Status") == "GOOD"]
            return health if len(ok) >= running else None
        return wait_until(good, "every member GOOD", deadline_s)

    def health(self) -> dict | None:
        for coordinator in self.coordinators:
            if not coordinator.running():
                continue
            try:
                reply = self.request(coordinator, "GET", "/_admin/cluster/health")
            except OSError:
                continue
            if reply[0] == 200:
                return reply[1]
        return None

    def stop(self) -> None:
        for server in self.coordinators + self.dbservers:
            if server.proc is not None:
                try:
                    server.stop(timeout_s=20)
                except ServerError:
                    pass
        for member in self.etcd:
            member.stop()

    # -- requests -------------------------------------------------------------------------

    @property
    def coordinator_urls(self) -> list[str]:
        return [c.url for c in self.coordinators if c.url]

    def request(self, server: QuinceServer, method: str, path: str, body=None, timeout: float = 30.0):
        """A request as the cluster's superuser; (status, parsed JSON body)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(server.url + path, data=data, method=method)
        request.add_header("Authorization", "bearer " + superuser_jwt())
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as reply:
                return reply.status, json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def server_id(self, server: QuinceServer) -> str:
        status, body = self.request(server, "GET", "/_admin/server/id")
        assert status == 200, body
        return body["id"]

    def dbserver_by_id(self, server_id: str) -> QuinceServer:
        for server in self.dbservers:
            if server.running() and self.server_id(server) == server_id:
                return server
        raise AssertionError(f"no running DB server has id {server_id}")

    def shards(self, database: str, collection: str) -> dict:
        """`{shard: [leader, followers...]}` from a coordinator."""
        status, body = self.request(self.coordinators[0], "GET",
                                    f"/_db/{database}/_api/collection/{collection}/shards?details=true")
        assert status == 200, body
        return body["shards"]


__all__ = ["Cluster", "EtcdMember", "FAST_SUPERVISION", "ROOT_PASSWORD", "etcd_binary", "wait_until"]
