"""The agency losing members: one etcd member killed, then etcd's leader killed, while clients
write through a coordinator. The cluster keeps serving: etcd keeps a quorum (2 of 3) the whole
time, and every member of the cluster fails over to another etcd endpoint.
"""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from quince_cluster import Cluster, etcd_binary, wait_until  # noqa: E402
from quince_server import ROOT_PASSWORD  # noqa: E402

pytestmark = pytest.mark.skipif(etcd_binary() is None, reason="the etcd binary is missing")


def write_until_acknowledged(session: requests.Session, url: str, deadline_s: float = 30.0) -> float:
    """Writes one new document, retrying until acknowledged; the seconds it took."""
    started = time.monotonic()
    while True:
        try:
            reply = session.post(url, json={"_key": uuid.uuid4().hex}, timeout=10)
            if reply.status_code in (201, 202):
                return time.monotonic() - started
        except requests.RequestException:
            pass
        if time.monotonic() - started > deadline_s:
            raise AssertionError(f"no write acknowledged within {deadline_s} s")
        time.sleep(0.05)


def test_the_cluster_keeps_serving_when_etcd_members_die(tmp_path):
    cluster = Cluster(tmp_path / "cluster", coordinators=1).start()
    try:
        coordinator = cluster.coordinators[0]
        database = f"agency_{uuid.uuid4().hex[:8]}"
        assert cluster.request(coordinator, "POST", "/_api/database", {"name": database})[0] == 201
        status, body = cluster.request(coordinator, "POST", f"/_db/{database}/_api/collection",
                                       {"name": "c", "numberOfShards": 2, "replicationFactor": 2})
        assert status == 200, body
        session = requests.Session()
        session.auth = ("root", ROOT_PASSWORD)
        url = f"{coordinator.url}/_db/{database}/_api/document/c"
        write_until_acknowledged(session, url)

        follower = next(m for m in cluster.etcd if not m.is_leader())
        follower.kill()
        after_follower = write_until_acknowledged(session, url)

        leader = wait_until(lambda: next((m for m in cluster.etcd if m.proc.poll() is None and m.is_leader()), None),
                            "an etcd leader")
        leader.kill()
        after_leader = write_until_acknowledged(session, url)
        # Reads of the cluster's metadata keep working too: DDL goes through etcd.
        status, _ = cluster.request(coordinator, "POST", f"/_db/{database}/_api/collection", {"name": "d"})
        assert status == 200
        # With one member left etcd has no quorum; the two killed members come back.
        follower.start(cluster.etcd, cluster.token)
        wait_until(follower.healthy, "the restarted etcd member")
        write_until_acknowledged(session, url)
        print(f"writes acknowledged {after_follower:.2f} s after an etcd follower died, "
              f"{after_leader:.2f} s after etcd's leader died")
    finally:
        cluster.stop()
