"""python-arango through the coordinators of a cluster: the document, collection, import and
index calls a user makes, unchanged from a single server, plus the cluster's own endpoints.

One cluster per module (3 etcd members, 3 DB servers, 2 coordinators); every test uses names
of its own.
"""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
import requests
from arango import ArangoClient
from arango.exceptions import DocumentInsertError, IndexCreateError

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "support"))

from quince_cluster import Cluster, etcd_binary, wait_until  # noqa: E402
from quince_server import ROOT_PASSWORD  # noqa: E402

pytestmark = pytest.mark.skipif(etcd_binary() is None, reason="the etcd binary is missing")


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = Cluster(tmp_path_factory.mktemp("cluster"), coordinators=2).start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def dbs(cluster):
    """A fresh database, as seen from each coordinator."""
    name = unique("db")
    first = ArangoClient(hosts=cluster.coordinator_urls[0]).db("_system", "root", ROOT_PASSWORD)
    first.create_database(name)
    return [ArangoClient(hosts=url).db(name, "root", ROOT_PASSWORD) for url in cluster.coordinator_urls]


def test_the_coordinators_say_what_they_are(cluster):
    for url in cluster.coordinator_urls:
        role = requests.get(url + "/_admin/server/role", auth=("root", ROOT_PASSWORD), timeout=10).json()
        assert role["role"] == "COORDINATOR"
        endpoints = requests.get(url + "/_api/cluster/endpoints", auth=("root", ROOT_PASSWORD), timeout=10).json()
        listed = sorted(e["endpoint"] for e in endpoints["endpoints"])
        assert listed == sorted(u.replace("http://", "tcp://") for u in cluster.coordinator_urls)
    health = cluster.health()["Health"]
    roles = sorted(h["Role"] for h in health.values())
    assert roles.count("DBServer") == 3 and roles.count("Coordinator") == 2
    assert all(h["Status"] == "GOOD" for h in health.values())
    agents = [h for h in health.values() if h["Role"] == "Agent"]
    assert len(agents) == len(cluster.etcd) and [a["Leading"] for a in agents].count(True) == 1
    assert all(a["Endpoint"].startswith("tcp://") and a["Version"] for a in agents)


def test_documents_go_to_their_shards_and_read_back_through_either_coordinator(dbs):
    first, second = dbs
    col = first.create_collection(unique("c"), shard_count=3, replication_factor=2)
    docs = [{"_key": f"k{i}", "n": i} for i in range(60)]
    results = col.insert_many(docs)
    assert all("_id" in r for r in results)
    assert all(r["_id"].startswith(col.name + "/") for r in results)
    other = second.collection(col.name)
    assert other.count() == 60
    assert other.get("k7")["n"] == 7
    assert other.get("k7")["_id"] == f"{col.name}/k7"
    col.update({"_key": "k7", "m": 1})
    col.replace({"_key": "k8", "n": 800})
    col.delete("k9")
    assert other.get("k7")["m"] == 1 and other.get("k8")["n"] == 800
    assert other.get("k9") is None
    assert sorted(d["n"] for d in other.all()) == sorted([i for i in range(60) if i not in (8, 9)] + [800])
    many = other.get_many(["k1", "k2", "missing", "k3"])
    assert [d["_key"] for d in many] == ["k1", "k2", "k3"]
    # Several shards hold documents.
    shards = first.collection(col.name).shards(details=True)["shards"]
    assert len(shards) == 3
    assert all(len(servers) == 2 for servers in shards.values())


def test_generated_keys_and_errors_in_request_order(dbs):
    first, _ = dbs
    col = first.create_collection(unique("c"), shard_count=2)
    results = col.insert_many([{"a": 1}, {"_key": "dup"}, {"_key": "dup"}, {"a": 2}], return_new=True)
    assert "_key" in results[0] and results[0]["new"]["a"] == 1
    assert results[1]["_key"] == "dup"
    assert isinstance(results[2], DocumentInsertError) and results[2].error_code == 1210
    assert results[3]["new"]["a"] == 2
    assert len({results[0]["_key"], results[3]["_key"]}) == 2


def test_custom_shard_keys_refuse_user_keys(dbs, cluster):
    first, _ = dbs
    col = first.create_collection(unique("c"), shard_count=3, shard_fields=["country"])
    meta = col.insert({"country": "NZ", "city": "Wellington"})
    assert col.get(meta["_key"])["city"] == "Wellington"
    with pytest.raises(DocumentInsertError) as refused:
        col.insert({"_key": "mine", "country": "NZ"})
    assert refused.value.error_code == 1466
    url = cluster.coordinator_urls[0]
    reply = requests.put(f"{url}/_db/{first.name}/_api/collection/{col.name}/responsibleShard",
                         json={"country": "NZ"}, auth=("root", ROOT_PASSWORD), timeout=10)
    assert reply.status_code == 200
    assert reply.json()["shardId"] in col.shards()["shards"]


def test_import_and_indexes_reach_every_shard(dbs):
    first, second = dbs
    col = first.create_collection(unique("c"), shard_count=3, replication_factor=2)
    result = col.import_bulk([{"_key": f"i{i}", "v": i % 7, "w": i} for i in range(300)])
    assert result["created"] == 300 and result["errors"] == 0
    index = col.add_persistent_index(fields=["v"])
    assert index["type"] == "persistent"
    assert any(i["id"] == index["id"] for i in second.collection(col.name).indexes())
    # A unique index must contain the shard keys (each shard checks only its own documents).
    with pytest.raises(IndexCreateError) as refused:
        col.add_persistent_index(fields=["w"], unique=True)
    assert refused.value.error_code == 1470
    by_w = first.create_collection(unique("u"), shard_count=3, shard_fields=["w"])
    by_w.add_persistent_index(fields=["w"], unique=True)
    by_w.insert({"w": 5})
    with pytest.raises(DocumentInsertError) as clash:
        by_w.insert({"w": 5})
    assert clash.value.error_code == 1210
    cursor = second.aql.execute(f"FOR d IN {col.name} FILTER d.v == 3 RETURN d.w")
    assert sorted(cursor) == [w for w in range(300) if w % 7 == 3]


def test_collections_and_databases_report_their_cluster_properties(dbs):
    first, second = dbs
    col = first.create_collection(unique("c"), shard_count=4, replication_factor=2, write_concern=2)
    props = second.collection(col.name).properties()
    assert props["shard_count"] == 4
    assert props["replication_factor"] == 2
    assert props["write_concern"] == 2
    assert props["shard_fields"] == ["_key"]
    first.delete_collection(col.name)
    assert not first.has_collection(col.name)
    # Another coordinator learns of the drop when its Plan view catches up.
    wait_until(lambda: not second.has_collection(col.name), "the other coordinator sees the drop", 10)


def test_users_and_permissions_are_cluster_wide(cluster, dbs):
    first, _ = dbs
    urls = cluster.coordinator_urls
    sys_first = ArangoClient(hosts=urls[0]).db("_system", "root", ROOT_PASSWORD)
    name = unique("user")
    sys_first.create_user(name, password="pw1")
    sys_first.update_permission(name, "rw", first.name)

    def can_read_on_second():
        reply = requests.get(f"{urls[1]}/_db/{first.name}/_api/collection", auth=(name, "pw1"), timeout=10)
        return reply.status_code == 200

    # The second coordinator reloads its accounts when the first one changes them.
    from quince_cluster import wait_until
    wait_until(can_read_on_second, "the new user on the other coordinator", deadline_s=10)
    sys_first.update_permission(name, "none", first.name)
    wait_until(lambda: not can_read_on_second(), "the revoked permission on the other coordinator",
               deadline_s=10)


def test_queries_run_on_the_shards_with_their_filters_indexes_and_transactions(cluster, dbs):
    """Filters, projections and limits go to the shards, index and edge lookups use the shards'
    indexes, and a stream transaction's queries see its own writes through both."""
    first, second = dbs
    col = first.create_collection(unique("q"), shard_count=3, replication_factor=2)
    docs = [{"_key": f"k{n}", "n": n, "tag": n % 10, "text": "x" * 40} for n in range(2000)]
    assert col.import_bulk(docs)["created"] == 2000
    col.add_persistent_index(fields=["tag", "n"])
    edges = first.create_collection(unique("e"), edge=True, shard_count=3)
    edges.import_bulk([{"_from": f"v/{n % 20}", "_to": f"v/{n % 7}", "n": n} for n in range(400)])

    cursor = second.aql.execute(f"FOR d IN {col.name} FILTER d.n < 25 && d.tag != 3 RETURN d.n",
                                count=True)
    assert sorted(cursor) == [n for n in range(25) if n % 10 != 3]
    stats = cursor.statistics()
    assert stats["scanned_full"] == 2000 and stats["filtered"] == 2000 - 22
    limited = list(second.aql.execute(f"FOR d IN {col.name} FILTER d.n % 2 == 0 LIMIT 3, 4 RETURN d"))
    assert len(limited) == 4 and all(d["n"] % 2 == 0 and d["_id"] == f"{col.name}/{d['_key']}" for d in limited)
    top = list(second.aql.execute(f"FOR d IN {col.name} FILTER d.n % 3 == 0 SORT d.n DESC LIMIT 1, 3 RETURN d.n"))
    assert top == [1995, 1992, 1989]
    plan = second.aql.explain(f"FOR d IN {col.name} FILTER d.n < 25 RETURN d.n")
    assert {"scatter-in-cluster", "distribute-filtercalc-to-cluster"} <= set(plan["rules"])
    outer = list(second.aql.execute(
        f"FOR x IN [3, 1500] FOR d IN {col.name} FILTER d.n == x RETURN d._id"))
    assert sorted(outer) == [f"{col.name}/k1500", f"{col.name}/k3"]
    ranged = list(first.aql.execute(
        f"FOR d IN {col.name} FILTER d.tag == 4 && d.n >= 100 && d.n < 200 SORT d.tag, d.n RETURN d.n"))
    assert ranged == list(range(104, 200, 10))
    out = list(first.aql.execute(f"FOR e IN {edges.name} FILTER e._from == 'v/4' SORT e.n RETURN e.n"))
    assert out == list(range(4, 400, 20))
    reply = requests.get(f"{cluster.coordinator_urls[0]}/_db/{first.name}/_api/edges/{edges.name}",
                         params={"vertex": "v/3", "direction": "in"}, auth=("root", ROOT_PASSWORD), timeout=10)
    assert sorted(e["n"] for e in reply.json()["edges"]) == list(range(3, 400, 7))

    trx = first.begin_transaction(read=[col.name], write=[col.name])
    try:
        trx.collection(col.name).insert({"_key": "mine", "n": 99999, "tag": 77})
        seen = list(trx.aql.execute(f"FOR d IN {col.name} FILTER d.n == 99999 RETURN d._key"))
        indexed = list(trx.aql.execute(f"FOR d IN {col.name} FILTER d.tag == 77 RETURN d._key"))
        outside = list(first.aql.execute(f"FOR d IN {col.name} FILTER d.tag == 77 RETURN d._key"))
        assert seen == ["mine"] and indexed == ["mine"] and outside == []
    finally:
        trx.abort_transaction()


def test_the_replication_factor_of_a_collection_can_be_raised_and_lowered(cluster, dbs):
    first, second = dbs
    col = first.create_collection(unique("rf"), shard_count=2, replication_factor=1)
    col.import_bulk([{"_key": f"r{n}", "n": n} for n in range(200)])

    def servers_per_shard():
        shards = second.collection(col.name).shards(details=True)["shards"]
        return sorted(len(servers) for servers in shards.values())

    assert servers_per_shard() == [1, 1]
    col.configure(replication_factor=3)
    assert col.properties()["replication_factor"] == 3
    wait_until(lambda: servers_per_shard() == [3, 3], "a follower added to every shard")
    # The new followers catch up: each DB server's copy of each shard holds every document.
    for url in [server.url for server in cluster.dbservers]:
        shards = second.collection(col.name).shards()["shards"]
        def copies_complete(url=url, shards=shards):
            total = 0
            for shard in shards:
                reply = requests.get(f"{url}/_db/{first.name}/_api/collection/{shard}/count",
                                     auth=("root", ROOT_PASSWORD), timeout=10)
                if reply.status_code != 200:
                    return False
                total += reply.json()["count"]
            return total == 200
        wait_until(copies_complete, f"every document on {url}")

    col.configure(replication_factor=2)
    wait_until(lambda: servers_per_shard() == [2, 2], "a follower removed from every shard")
    assert col.count() == 200

    def copies_held():
        total = 0
        for url in [server.url for server in cluster.dbservers]:
            for shard in second.collection(col.name).shards()["shards"]:
                reply = requests.get(f"{url}/_db/{first.name}/_api/collection/{shard}/count",
                                     auth=("root", ROOT_PASSWORD), timeout=10)
                total += reply.json()["count"] if reply.status_code == 200 else 0
        return total
    wait_until(lambda: copies_held() == 2 * 200, "the removed followers' copies dropped")

    with pytest.raises(Exception) as refused:
        col.configure(replication_factor=4)
    assert getattr(refused.value, "error_code", None) == 1487
    assert "incident" not in str(refused.value)
    with pytest.raises(Exception) as above:
        col.configure(replication_factor=1, write_concern=2)
    assert getattr(above.value, "error_code", None) == 10
    prototype = first.create_collection(unique("proto"), shard_count=2)
    follower = first.create_collection(unique("like"), shard_like=prototype.name)
    for shared in (prototype, follower):
        with pytest.raises(Exception) as unsupported:
            shared.configure(replication_factor=2)
        assert getattr(unsupported.value, "error_code", None) == 1470


def test_cursors_and_transactions_follow_a_client_across_coordinators(cluster, dbs):
    """python-arango picks a host per request: a cursor's next batches and a transaction's
    requests reach whichever coordinator comes next, which passes them to the one holding
    them."""
    first, _ = dbs
    col = first.create_collection(unique("fw"), shard_count=2)
    col.import_bulk([{"_key": f"f{n}", "n": n} for n in range(95)])
    user = unique("fwuser")
    sys_db = ArangoClient(hosts=cluster.coordinator_urls[0]).db("_system", "root", ROOT_PASSWORD)
    sys_db.create_user(user, "pw-forward")
    sys_db.update_permission(user, "rw", first.name)
    for name, password in (("root", ROOT_PASSWORD), (user, "pw-forward")):
        spread = ArangoClient(hosts=cluster.coordinator_urls, host_resolver="roundrobin").db(
            first.name, name, password)
        cursor = spread.aql.execute(f"FOR d IN {col.name} SORT d.n RETURN d.n", batch_size=10)
        assert list(cursor) == list(range(95))
        early = spread.aql.execute(f"FOR d IN {col.name} RETURN d", batch_size=5)
        next(early)
        assert early.close() is True

        trx = spread.begin_transaction(write=[col.name])
        for n in range(6):
            trx.collection(col.name).insert({"_key": f"{name}-t{n}", "n": 1000 + n})
        assert trx.transaction_status() == "running"
        assert trx.collection(col.name).count() == 95 + 6
        assert trx.commit_transaction() is True
        assert col.count() == 95 + 6
        col.delete_many([{"_key": f"{name}-t{n}"} for n in range(6)])

    # Another user's cursor is not reachable through forwarding.
    owner = ArangoClient(hosts=cluster.coordinator_urls[0]).db(first.name, "root", ROOT_PASSWORD)
    cursor = owner.aql.execute(f"FOR d IN {col.name} RETURN d", batch_size=5)
    reply = requests.put(f"{cluster.coordinator_urls[1]}/_db/{first.name}/_api/cursor/{cursor.id}",
                         auth=(user, "pw-forward"), timeout=10)
    assert reply.status_code == 404 and reply.json()["errorNum"] == 1600
    # The forwarding headers mean nothing from a client.
    spoofed = requests.put(f"{cluster.coordinator_urls[1]}/_db/{first.name}/_api/cursor/{cursor.id}",
                           auth=(user, "pw-forward"), timeout=10,
                           headers={"x-quince-forwarded-for": "root"})
    assert spoofed.status_code == 404
    assert len(list(cursor)) == 95


def test_python_arango_cluster_api_answers(cluster):
    sys_db = ArangoClient(hosts=cluster.coordinator_urls[0]).db("_system", "root", ROOT_PASSWORD)
    api = sys_db.cluster
    health = api.health()["Health"]
    dbservers = sorted(i for i, h in health.items() if h["Role"] == "DBServer")
    coordinator = next(i for i, h in health.items() if h["Role"] == "Coordinator")
    version = api.server_version(dbservers[0])
    assert version["server"] == "arango" and version["version"]
    assert api.server_version(coordinator)["version"] == version["version"]
    assert api.server_engine(dbservers[0])["name"]
    assert "time" in api.server_statistics(dbservers[0])
    short = health[dbservers[1]]["ShortName"]
    assert api.server_version(short)["version"] == version["version"], "short names are accepted"
    counts = api.server_count()
    assert counts["numberOfDBServers"] == 3 and counts["numberOfCoordinators"] == 2
    assert counts["cleanedServers"] == []

    assert api.server_maintenance_mode(dbservers[0]) == {}
    api.toggle_server_maintenance_mode(dbservers[0], "maintenance", timeout=60)
    entry = api.server_maintenance_mode(dbservers[0])
    assert entry["Mode"] == "maintenance" and entry["Until"]
    api.toggle_server_maintenance_mode(dbservers[0], "normal")
    assert api.server_maintenance_mode(dbservers[0]) == {}
    with pytest.raises(Exception) as coordinator_refused:
        api.toggle_server_maintenance_mode(coordinator, "maintenance", timeout=60)
    assert getattr(coordinator_refused.value, "error_code", None) == 10
    with pytest.raises(Exception) as unknown:
        api.server_version("PRMR-nobody")
    assert getattr(unknown.value, "error_code", None) == 10


def test_computed_values_are_computed_on_every_shard(cluster, dbs):
    first, second = dbs
    url = f"{cluster.coordinator_urls[0]}/_db/{first.name}/_api/collection"

    def create(body):
        reply = requests.post(url, json=body, auth=("root", ROOT_PASSWORD), timeout=30)
        return reply.status_code, reply.json()

    computed = [{"name": "full", "expression": "RETURN CONCAT(@doc.first, ' ', @doc.last)",
                 "overwrite": True, "computeOn": ["insert", "update", "replace"]}]
    name = unique("cv")
    status, _ = create({"name": name, "numberOfShards": 3, "replicationFactor": 2,
                        "computedValues": computed})
    assert status == 200
    col = first.collection(name)
    assert second.collection(name).properties()["computedValues"][0]["name"] == "full"
    col.insert_many([{"_key": f"p{n}", "first": f"Ada{n}", "last": "Lovelace"} for n in range(30)])
    assert all(d["full"] == f"Ada{d['_key'][1:]} Lovelace" for d in second.collection(name).all())
    col.update({"_key": "p3", "last": "Byron"})
    assert col.get("p3")["full"] == "Ada3 Byron"
    col.configure(computed_values=[{"name": "initials", "expression": "RETURN LEFT(@doc.first, 1)",
                                    "overwrite": True, "computeOn": ["insert"]}])
    # DB servers apply a property change to their shards after it answered (as ArangoDB's
    # do): the first documents may still see the old computed values.
    attempt = iter(range(10_000))

    def inserted_with_new_values():
        key = f"q{next(attempt)}"
        col.insert({"_key": key, "first": "Grace", "last": "Hopper"})
        return col.get(key) if "initials" in col.get(key) else None

    added = wait_until(inserted_with_new_values, "the new computed values on the shards", 30)
    assert added["initials"] == "G" and "full" not in added
    status, body = create({"name": unique("cvk"), "numberOfShards": 2, "shardKeys": ["region"],
                           "computedValues": [{"name": "region", "expression": "RETURN 'x'",
                                               "overwrite": True}]})
    assert status == 400 and body["errorNum"] == 10
    status, body = create({"name": unique("cvb"),
                           "computedValues": [{"name": "x", "expression": "RETURN (", "overwrite": True}]})
    assert status == 400 and body["errorNum"] in (10, 1501), body
