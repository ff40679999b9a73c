"""A network partition that isolates a shard's leader from etcd, its followers and the
coordinator, made with a network namespace and a veth pair the test creates and removes.

The leader DB server runs in its own namespace; everything else listens on the host end of
the veth pair. Cutting the link isolates the leader. A client inside the namespace keeps
writing to the isolated leader directly: it must never get an acknowledgement. Writers through
the coordinator must resume once supervision promotes a follower, and after the link is back
the old leader must hold the same data as the new one, with every acknowledged write.

Needs root (`ip netns`); skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from quince_cluster import Cluster, etcd_binary, wait_until  # noqa: E402
from quince_server import superuser_jwt  # noqa: E402

from test_failover import Writers, shard_replicas  # noqa: E402

pytestmark = [
    pytest.mark.skipif(etcd_binary() is None, reason="the etcd binary is missing"),
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]

# Runs inside the namespace: writes to the isolated leader's shard for a while and prints how
# many writes were acknowledged (a 2xx answer).
ISOLATED_CLIENT = r"""
import json, sys, time, urllib.request, urllib.error
url, token, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
acked, refused, end, n = 0, 0, time.monotonic() + seconds, 0
while time.monotonic() < end:
    n += 1
    req = urllib.request.Request(url, data=json.dumps({"_key": f"isolated{n}"}).encode(), method="POST")
    req.add_header("Authorization", "bearer " + token)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=5) as reply:
            acked += 1
    except (urllib.error.URLError, OSError):
        refused += 1
print(json.dumps({"acked": acked, "refused": refused}))
"""


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


class Namespace:
    """A namespace `name` joined to the host by a veth pair: host end `host_addr`, inside
    `ns_addr` (a /24)."""

    def __init__(self, tag: str, subnet: int) -> None:
        self.name = f"qns{tag}"
        self.host_link = f"qh{tag}"
        self.ns_link = f"qn{tag}"
        self.host_addr = f"10.213.{subnet}.1"
        self.ns_addr = f"10.213.{subnet}.2"

    def create(self) -> None:
        ip("netns", "add", self.name)
        ip("link", "add", self.host_link, "type", "veth", "peer", "name", self.ns_link)
        ip("link", "set", self.ns_link, "netns", self.name)
        ip("addr", "add", f"{self.host_addr}/24", "dev", self.host_link)
        ip("link", "set", self.host_link, "up")
        ip("netns", "exec", self.name, "ip", "addr", "add", f"{self.ns_addr}/24", "dev", self.ns_link)
        ip("netns", "exec", self.name, "ip", "link", "set", self.ns_link, "up")
        ip("netns", "exec", self.name, "ip", "link", "set", "lo", "up")

    def cut(self) -> None:
        ip("link", "set", self.host_link, "down")

    def heal(self) -> None:
        ip("link", "set", self.host_link, "up")

    def remove(self) -> None:
        subprocess.run(["ip", "link", "del", self.host_link], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


def test_an_isolated_leader_stops_acknowledging_and_loses_nothing(tmp_path):
    namespace = Namespace(uuid.uuid4().hex[:6], 10 + os.getpid() % 200)
    namespace.create()
    cluster = None
    writers = None
    try:
        cluster = Cluster(tmp_path / "cluster", coordinators=1, host=namespace.host_addr,
                          placements={0: (namespace.name, namespace.ns_addr)}).start()
        coordinator = cluster.coordinators[0]
        isolated = cluster.dbservers[0]
        isolated_id = cluster.server_id(isolated)
        database = f"partition_{uuid.uuid4().hex[:8]}"
        assert cluster.request(coordinator, "POST", "/_api/database", {"name": database})[0] == 201
        # Leaders are placed round-robin: among three collections one is led by the isolated
        # server.
        chosen = None
        for n in range(3):
            name = f"c{n}"
            status, body = cluster.request(coordinator, "POST", f"/_db/{database}/_api/collection",
                                           {"name": name, "numberOfShards": 1, "replicationFactor": 3,
                                            "writeConcern": 2})
            assert status == 200, body
            [(shard, servers)] = cluster.shards(database, name).items()
            if servers[0] == isolated_id:
                chosen = (name, shard)
        assert chosen is not None, "the isolated server leads none of the collections"
        collection, shard = chosen
        writers = Writers(coordinator.url, database, collection)
        writers.start()
        wait_until(lambda: len(writers.acked) > 50, "the first acknowledged writes")

        namespace.cut()
        cut_at = time.monotonic()
        client = subprocess.Popen(
            ["ip", "netns", "exec", namespace.name, sys.executable, "-c", ISOLATED_CLIENT,
             f"{isolated.url}/_db/{database}/_api/document/{shard}", superuser_jwt(), "6"],
            stdout=subprocess.PIPE, text=True)
        before = len(writers.acked)
        wait_until(lambda: writers.last_ack > cut_at and len(writers.acked) > before,
                   "writes through the coordinator to resume", deadline_s=60)
        resumed_after = writers.last_ack - cut_at
        out, _ = client.communicate(timeout=60)
        isolated_result = json.loads(out.strip().splitlines()[-1])
        assert isolated_result["acked"] == 0, f"the isolated leader acknowledged writes: {isolated_result}"
        [(_, servers_after)] = cluster.shards(database, collection).items()
        assert servers_after[0] != isolated_id

        namespace.heal()
        writers.pause()
        wait_until(lambda: (lambda r: len(r) == 3 and len(set(r.values())) == 1)(
            shard_replicas(cluster, database, shard)), "three identical replicas after healing", deadline_s=90)
        status, body = cluster.request(coordinator, "PUT", f"/_db/{database}/_api/document/{collection}?onlyget=true",
                                       sorted(writers.acked))
        assert status == 200, body
        missing = [d for d in body if d.get("error")]
        assert not missing, f"{len(missing)} acknowledged writes lost"
        print(f"partition: writes resumed {resumed_after:.2f} s after the cut; the isolated leader refused "
              f"{isolated_result['refused']} writes and acknowledged none")
    finally:
        if writers is not None:
            writers.stop()
        if cluster is not None:
            cluster.stop()
        namespace.remove()
