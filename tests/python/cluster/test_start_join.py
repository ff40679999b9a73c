"""`quince start --starter.join` across three network namespaces: each namespace is one
machine with one 10.x address on a shared bridge, runs one starter, and finds its own
address in the join list by itself; the first three (all) run an etcd member.

Needs root (`ip netns`); skipped otherwise. Runs with `quince serve` (once it accepts the
cluster options) and with the stand-in servers of tests/support/standin_server.py. Every namespace, and with them every link and the
bridge, is removed at the end, also when the test fails."""

from __future__ import annotations

import random
import signal
import subprocess
import uuid

import pytest

from quince_server import REPO_ROOT
from quince_starter import starters  # noqa: F401 (a fixture)
from quince_starter import is_root, needs_cluster_serve, superuser_jwt_header

STANDIN = str(REPO_ROOT / "tests" / "support" / "standin_server.py")
SERVERS = [
    pytest.param([], id="quince", marks=needs_cluster_serve),
    pytest.param(["--server.quince", STANDIN], id="stand-in"),
]

MACHINES = 3
BASE_PORT = 8528


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


class Network:
    """Three namespaces wired to a bridge that lives in a fourth (the hub)."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.hub = f"qsh{tag}"
        self.names = [f"qs{tag}n{i}" for i in range(MACHINES)]
        prefix = f"10.{random.randrange(64, 250)}.{random.randrange(0, 250)}"
        self.addresses = [f"{prefix}.{i + 1}" for i in range(MACHINES)]
        self.created: list[str] = []

    def build(self) -> None:
        for ns in [self.hub, *self.names]:
            ip("netns", "add", ns)
            self.created.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        ip("-n", self.hub, "link", "add", "br0", "type", "bridge")
        ip("-n", self.hub, "link", "set", "br0", "up")
        for i, (ns, address) in enumerate(zip(self.names, self.addresses)):
            # Created inside the hub, one end moved to the machine's namespace.
            ip("-n", self.hub, "link", "add", f"h{i}", "type", "veth", "peer", "name", "eth0")
            ip("-n", self.hub, "link", "set", "eth0", "netns", ns)
            ip("-n", self.hub, "link", "set", f"h{i}", "master", "br0")
            ip("-n", self.hub, "link", "set", f"h{i}", "up")
            ip("-n", ns, "addr", "add", f"{address}/24", "dev", "eth0")
            ip("-n", ns, "link", "set", "eth0", "up")

    def remove(self) -> None:
        for ns in reversed(self.created):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.created.clear()


@pytest.fixture
def network():
    if not is_root():
        pytest.skip("the join test creates network namespaces (ip netns) and needs root")
    net = Network()
    try:
        net.build()
        yield net
    finally:
        net.remove()


def status_from(ns: str, url: str, secret: str) -> int | None:
    """GET url/_api/version from inside namespace `ns` (curl), or None without an answer."""
    done = subprocess.run(
        ["ip", "netns", "exec", ns, "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
         "--max-time", "5", "-H", superuser_jwt_header(secret), f"{url}/_api/version"],
        capture_output=True, text=True, timeout=30,
    )
    return int(done.stdout) if done.stdout.strip().isdigit() and done.stdout != "000" else None


@pytest.mark.parametrize("servers", SERVERS)
def test_three_machines_join_into_one_cluster(tmp_path, network, starters, servers):
    secret_file = tmp_path / "jwt-secret"
    secret_file.write_text("join-test-secret\n")
    join = ",".join(reversed(network.addresses))  # any order: every machine sorts the list
    running = []
    for ns in network.names:
        running.append(
            starters(
                tmp_path / ns,
                ["--starter.join", join, "--auth.jwt-secret", str(secret_file),
                 "--starter.port", str(BASE_PORT), "--starter.stop-timeout", "20", *servers],
                prefix=["ip", "netns", "exec", ns],
            )
        )
    coordinators = []
    for starter, address in zip(running, network.addresses):
        urls = starter.wait_ready()
        assert urls == [f"http://{address}:{BASE_PORT + 1}"]
        coordinators += urls
        setup = starter.setup()
        assert setup["layout"]["me"] == address
        assert [p["role"] for p in setup["processes"]] == ["etcd", "dbserver", "coordinator"]
    # Every coordinator answers, also from another machine.
    for url in coordinators:
        assert status_from(network.names[0], url, "join-test-secret") == 200
    # The cluster's etcd has all three members.
    members = subprocess.run(
        ["ip", "netns", "exec", network.names[1], "etcdctl",
         f"--endpoints=http://{network.addresses[1]}:{BASE_PORT + 3}", "member", "list"],
        capture_output=True, text=True, timeout=30, env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"},
    )
    assert members.returncode == 0, members.stderr
    assert len(members.stdout.strip().splitlines()) == MACHINES
    # Every machine stops at once (one after the other, the last would lose etcd's quorum
    # before its servers left the cluster).
    for starter in running:
        starter.proc.send_signal(signal.SIGTERM)
    for starter in running:
        assert starter.stop(signal.SIGTERM) == 0
