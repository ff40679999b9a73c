"""Stream transactions through a coordinator (docs/cluster.md, "Transactions"): python-arango's
`begin_transaction` (commit and abort) and `import_bulk` (complete=true by default, so it runs
in a stream transaction), with every committed write on the shards' followers; a transaction
stays its owner's through forwarding between coordinators.

One small cluster for the module (1 etcd member, 2 DB servers, 2 coordinators); every test
uses names of its own.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
import requests
from arango import ArangoClient
from arango.exceptions import DocumentInsertError, TransactionCommitError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from quince_cluster import Cluster, etcd_binary, wait_until  # noqa: E402
from quince_server import ROOT_PASSWORD  # noqa: E402

pytestmark = pytest.mark.skipif(etcd_binary() is None, reason="the etcd binary is missing")

AUTH = ("root", ROOT_PASSWORD)


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("cluster"), agents=1, dbservers=2, coordinators=2).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def db(cluster):
    name = unique("db")
    system = ArangoClient(hosts=cluster.coordinator_urls[0]).db("_system", "root", ROOT_PASSWORD)
    system.create_database(name)
    return ArangoClient(hosts=cluster.coordinator_urls[0]).db(name, "root", ROOT_PASSWORD)


def copies(cluster: Cluster, database: str, collection: str) -> list[list[int]]:
    """For each shard, the document count of each copy (leader first)."""
    counts = []
    for shard, servers in cluster.shards(database, collection).items():
        per_copy = []
        for server_id in servers:
            server = cluster.dbserver_by_id(server_id)
            status, body = cluster.request(server, "GET", f"/_db/{database}/_api/collection/{shard}/count")
            assert status == 200, body
            per_copy.append(body["count"])
        counts.append(per_copy)
    return counts


def test_import_bulk_is_all_or_nothing_through_a_coordinator(cluster, db):
    col = db.create_collection(unique("c"), shard_count=3, replication_factor=2)
    result = col.import_bulk([{"_key": f"i{i}", "v": i} for i in range(200)])
    assert result["created"] == 200 and result["errors"] == 0
    # One clashing key: the import fails and nothing of it stays, on any shard.
    with pytest.raises(DocumentInsertError) as failed:
        col.import_bulk([{"_key": f"j{i}"} for i in range(50)] + [{"_key": "i7"}])
    assert failed.value.error_code == 1210
    assert col.count() == 200
    assert col.get("j0") is None
    # Synchronous replication: every follower holds what its leader holds.
    for per_copy in copies(cluster, db.name, col.name):
        assert len(per_copy) == 2 and per_copy[0] == per_copy[1], per_copy
    assert sum(c[0] for c in copies(cluster, db.name, col.name)) == 200


def test_begin_transaction_commits_and_aborts_through_a_coordinator(cluster, db):
    col = db.create_collection(unique("c"), shard_count=2, replication_factor=2)
    trx = db.begin_transaction(write=col.name)
    assert trx.transaction_id.isdigit()
    inside = trx.collection(col.name)
    for i in range(20):
        inside.insert({"_key": f"k{i}", "n": i})
    assert inside.get("k3")["n"] == 3
    assert col.count() == 0, "nothing is visible before the commit"
    assert trx.transaction_status() == "running"
    # Another coordinator passes the request on to the one holding the transaction.
    other = requests.get(f"{cluster.coordinator_urls[1]}/_db/{db.name}/_api/transaction/{trx.transaction_id}",
                         auth=AUTH, timeout=10)
    assert other.status_code == 200 and other.json()["result"]["status"] == "running"
    unknown = requests.get(f"{cluster.coordinator_urls[1]}/_db/{db.name}/_api/transaction/123456789",
                           auth=AUTH, timeout=10)
    assert unknown.status_code == 404 and unknown.json()["errorNum"] == 1655
    assert trx.commit_transaction() is True
    assert col.count() == 20
    assert col.get("k3")["n"] == 3
    for per_copy in copies(cluster, db.name, col.name):
        assert per_copy[0] == per_copy[1], per_copy

    trx = db.begin_transaction(write=col.name)
    inside = trx.collection(col.name)
    inside.insert({"_key": "never"})
    inside.delete("k1")
    assert trx.abort_transaction() is True
    assert col.get("never") is None and col.get("k1") is not None
    assert col.count() == 20
    with pytest.raises(TransactionCommitError) as refused:
        trx.commit_transaction()
    assert refused.value.error_code == 1653
    running = requests.get(f"{cluster.coordinator_urls[0]}/_db/{db.name}/_api/transaction", auth=AUTH, timeout=10)
    assert running.json()["transactions"] == []


def test_another_users_transaction_is_unknown_on_every_coordinator(cluster, db):
    """A transaction stays its owner's when a request for it is forwarded between coordinators:
    the owner reaches it through the other coordinator, another user gets 404/1655 from both."""
    col = db.create_collection(unique("c"), shard_count=2)
    first, second = cluster.coordinator_urls[0], cluster.coordinator_urls[1]
    users = {}
    for grant in ("rw", "ro"):
        name = unique(f"trx_{grant}")
        resp = requests.post(f"{first}/_api/user", json={"user": name, "passwd": "pw"}, auth=AUTH, timeout=10)
        assert resp.status_code == 201, resp.text
        resp = requests.put(f"{first}/_api/user/{name}/database/{db.name}", json={"grant": grant}, auth=AUTH,
                            timeout=10)
        assert resp.status_code == 200, resp.text
        users[grant] = (name, "pw")
    api = f"/_db/{db.name}/_api"
    for url in (first, second):
        for auth in users.values():
            wait_until(lambda url=url, auth=auth: requests.get(f"{url}{api}/collection/{col.name}", auth=auth,
                                                               timeout=10).status_code == 200,
                       "the users are known to every coordinator")
    begun = requests.post(f"{first}{api}/transaction/begin", json={"collections": {"write": [col.name]}},
                          auth=users["rw"], timeout=10)
    assert begun.status_code == 201, begun.text
    tid = begun.json()["result"]["id"]
    trx = {"x-arango-trx-id": tid}
    resp = requests.post(f"{second}{api}/document/{col.name}", json={"_key": "k"}, headers=trx, auth=users["rw"],
                         timeout=10)
    assert resp.status_code == 202, resp.text
    for url in (first, second):
        for method in ("GET", "PUT", "DELETE"):
            resp = requests.request(method, f"{url}{api}/transaction/{tid}", auth=users["ro"], timeout=10)
            assert resp.status_code == 404 and resp.json()["errorNum"] == 1655, (url, method, resp.text)
        resp = requests.get(f"{url}{api}/document/{col.name}/k", headers=trx, auth=users["ro"], timeout=10)
        assert resp.status_code == 404 and resp.json()["errorNum"] == 1655, (url, resp.text)
    listed = requests.get(f"{first}{api}/transaction", auth=users["ro"], timeout=10).json()["transactions"]
    assert tid not in [t["id"] for t in listed]
    resp = requests.get(f"{second}{api}/transaction/{tid}", auth=users["rw"], timeout=10)
    assert resp.status_code == 200 and resp.json()["result"]["status"] == "running", resp.text
    resp = requests.put(f"{second}{api}/transaction/{tid}", auth=users["rw"], timeout=10)
    assert resp.status_code == 200 and resp.json()["result"]["status"] == "committed", resp.text
    assert col.get("k") is not None


def test_db_servers_refuse_transactions_that_write_shards_they_follow(cluster, db):
    col = db.create_collection(unique("c"), shard_count=1, replication_factor=2)
    col.insert({"_key": "a"})
    (shard, servers), = cluster.shards(db.name, col.name).items()
    follower = cluster.dbserver_by_id(servers[1])
    status, body = cluster.request(follower, "POST", f"/_db/{db.name}/_api/transaction/begin",
                                   {"collections": {"write": [shard]}})
    assert status == 503 and body["errorNum"] == 1496, body
    leader = cluster.dbserver_by_id(servers[0])
    status, body = cluster.request(leader, "POST", f"/_db/{db.name}/_api/transaction/begin",
                                   {"collections": {"write": [shard]}})
    assert status == 201, body
    status, body = cluster.request(leader, "DELETE", f"/_db/{db.name}/_api/transaction/{body['result']['id']}")
    assert status == 200, body
    wait_until(lambda: col.count() == 1, "the collection is readable")
