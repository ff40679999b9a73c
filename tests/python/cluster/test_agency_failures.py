"""The agency losing members: one etcd member killed (and restarted), then etcd's leader
killed, while clients write through a coordinator. The cluster keeps serving documents and
changing its Plan: etcd keeps a quorum (2 of 3) the whole time, and every member of the cluster
fails over to another etcd endpoint.
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


def create_collection_until_done(cluster: Cluster, coordinator, database: str, name: str,
                                 deadline_s: float = 30.0) -> float:
    """Creates a collection (the Plan lives in etcd), retrying while etcd elects; the seconds."""
    started = time.monotonic()
    while True:
        status, body = cluster.request(coordinator, "POST", f"/_db/{database}/_api/collection", {"name": name})
        if status == 200:
            return time.monotonic() - started
        assert status in (500, 503), body
        if time.monotonic() - started > deadline_s:
            raise AssertionError(f"collection {name} not created within {deadline_s} s: {body}")
        time.sleep(0.1)


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
        ddl_after_follower = create_collection_until_done(cluster, coordinator, database, "d1")
        # The member comes back (three of three), then etcd's leader dies (two of three left).
        follower.start(cluster.etcd, cluster.token)
        wait_until(follower.healthy, "the restarted etcd member")
        leader = wait_until(lambda: next((m for m in cluster.etcd if m.proc.poll() is None and m.is_leader()), None),
                            "an etcd leader")
        leader.kill()
        after_leader = write_until_acknowledged(session, url)
        ddl_after_leader = create_collection_until_done(cluster, coordinator, database, "d2")
        # Supervision keeps judging health through the new etcd leader; health lists etcd's
        # members as agents, the dead one BAD and one of the others leading.
        health = cluster.wait_healthy()["Health"]
        assert all(h["Status"] == "GOOD" for h in health.values() if h["Role"] != "Agent")
        agents = [h for h in health.values() if h["Role"] == "Agent"]
        assert len(agents) == 3, agents
        assert [h["Status"] for h in agents].count("BAD") == 1, agents
        assert [h["Leading"] for h in agents].count(True) == 1, agents
        print(f"after an etcd follower died: a write {after_follower:.2f} s, a new collection "
              f"{ddl_after_follower:.2f} s; after etcd's leader died: a write {after_leader:.2f} s, "
              f"a new collection {ddl_after_leader:.2f} s")
    finally:
        cluster.stop()
