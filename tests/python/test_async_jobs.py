"""Asynchronous execution (`x-arango-async`) and the job API, through python-arango's
AsyncDatabase and raw HTTP: results stored and fetched once, job listing, cancel, clear,
fire-and-forget writes, the shared queue bound (503/21003), and shutdown finishing queued
jobs.

Waiting is always a bounded poll of an observable state (a job's status, a count), never a
fixed sleep. A job that must stay queued is put behind `/_admin/sleep` on a server with one
job worker (`--server.threads 2`), and the sleep is ended by cancelling it."""

from __future__ import annotations

import time

import pytest
import requests
from arango import ArangoClient
from arango.exceptions import (
    AsyncJobClearError,
    AsyncJobListError,
    AsyncJobResultError,
    AsyncJobStatusError,
    DocumentInsertError,
)

from conftest import Http, unique, wait_for
from quince_server import ROOT_PASSWORD

DEADLINE_S = 30.0


def wait_done(job):
    wait_for(lambda: job.status() == "done", f"job {job.id}")


def raw_job(http: Http, method: str, path: str, **kw) -> requests.Response:
    return http.request(method, path, **kw)


# -- python-arango --------------------------------------------------------------------------


def test_async_insert_get_and_collection_ops(db, col):
    async_db = db.begin_async_execution(return_result=True)
    async_col = async_db.collection(col.name)

    insert = async_col.insert({"_key": "a", "value": 1})
    wait_done(insert)
    meta = insert.result()
    assert meta["_key"] == "a" and meta["_id"] == f"{col.name}/a"

    get = async_col.get("a")
    count = async_col.count()
    props = async_col.properties()
    for job in (get, count, props):
        wait_done(job)
    assert get.result()["value"] == 1
    assert count.result() == 1
    assert props.result()["name"] == col.name

    # An error is stored like any reply and raised when the result is fetched.
    duplicate = async_col.insert({"_key": "a"})
    wait_done(duplicate)
    with pytest.raises(DocumentInsertError) as info:
        duplicate.result()
    assert info.value.error_code == 1210
    assert col.count() == 1


def test_results_are_fetched_once_and_jobs_listed_and_cleared(db, col):
    async_db = db.begin_async_execution(return_result=True)
    async_col = async_db.collection(col.name)
    jobs = [async_col.insert({"n": i}) for i in range(3)]
    for job in jobs:
        wait_done(job)
    done = db.async_jobs("done", count=1000)
    assert {job.id for job in jobs} <= set(done)
    assert len(db.async_jobs("done", count=1)) == 1
    assert all(job.id not in db.async_jobs("pending") for job in jobs)
    with pytest.raises(AsyncJobListError) as info:
        db.async_jobs("bogus")
    assert info.value.http_code == 400 and info.value.error_code == 400

    first = jobs[0]
    assert first.result()["_key"]
    with pytest.raises(AsyncJobResultError):
        first.result()
    with pytest.raises(AsyncJobStatusError):
        first.status()

    assert jobs[1].clear() is True
    with pytest.raises(AsyncJobClearError):
        jobs[1].clear()
    assert jobs[1].clear(ignore_missing=True) is False
    assert db.clear_async_jobs() is True
    with pytest.raises(AsyncJobStatusError):
        jobs[2].status()
    assert jobs[2].id not in db.async_jobs("done")


def test_clear_expired_results(db, col):
    async_db = db.begin_async_execution(return_result=True)
    job = async_db.collection(col.name).insert({})
    wait_done(job)
    assert db.clear_async_jobs(threshold=int(time.time()) - 3600) is True
    assert job.status() == "done", "a result newer than the stamp stays"
    assert db.clear_async_jobs(threshold=int(time.time()) + 3600) is True
    with pytest.raises(AsyncJobStatusError):
        job.status()


def test_fire_and_forget_inserts_all_arrive(db, col):
    async_db = db.begin_async_execution(return_result=False)
    async_col = async_db.collection(col.name)
    for i in range(200):
        assert async_col.insert({"_key": f"k{i}", "i": i}) is None
    wait_for(lambda: col.count() == 200, "200 fire-and-forget inserts")
    assert col.get("k199")["i"] == 199


# -- raw HTTP -------------------------------------------------------------------------------


def test_async_headers_and_job_endpoints(http, db_name, col):
    base = f"/_db/{db_name}"
    forget = http.post(f"{base}/_api/document/{col.name}", json={"_key": "f"}, headers={"x-arango-async": "true"})
    assert forget.status_code == 202 and forget.content == b""
    assert "x-arango-async-id" not in forget.headers
    assert "x-arango-queue-time-seconds" in forget.headers

    stored = http.post(f"{base}/_api/document/{col.name}", json={"_key": "s"}, headers={"x-arango-async": "store"})
    assert stored.status_code == 202 and stored.content == b""
    job_id = stored.headers["x-arango-async-id"]
    assert job_id.isdigit()

    # Other values of the header mean a synchronous request.
    sync = http.get("/_api/version", headers={"x-arango-async": "yes"})
    assert sync.status_code == 200 and sync.json()["server"] == "arango"

    wait_for(lambda: http.get(f"{base}/_api/job/{job_id}").status_code == 200, "stored job")
    # A job belongs to the database it was queued in: the admin alias reaches it there, and
    # another database's prefix does not.
    assert http.get(f"{base}/_admin/job/{job_id}").status_code == 200
    assert http.get(f"/_api/job/{job_id}").status_code == 404
    fetched = http.put(f"{base}/_api/job/{job_id}")
    assert fetched.status_code == 202, "the original status of a non-syncing insert"
    assert fetched.headers["x-arango-async-id"] == job_id
    assert fetched.headers["etag"].strip('"') == fetched.json()["_rev"]
    assert fetched.json()["_key"] == "s"
    gone = http.put(f"/_api/job/{job_id}")
    assert gone.status_code == 404 and gone.json()["errorNum"] == 404

    assert http.put("/_api/job").status_code == 400
    assert http.get("/_api/job/12345678901").status_code == 404
    assert http.put("/_api/job/nonsense/cancel").status_code == 404
    assert http.delete("/_api/job/98765432").status_code == 404
    assert http.delete("/_api/job/expired").status_code == 400
    bad = http.get("/_api/job/done?count=many")
    assert bad.status_code == 400 and bad.json()["errorNum"] == 400
    assert http.post("/_api/job/done").status_code == 405
    wait_for(lambda: col.has("f"), "fire-and-forget insert")


def test_jobs_need_credentials(server):
    anonymous = Http(server.url, auth=None)
    resp = anonymous.post("/_api/document/x", json={}, headers={"x-arango-async": "store"})
    assert resp.status_code == 401
    assert "x-arango-async-id" not in resp.headers


@pytest.fixture
def one_worker(server_factory):
    """A server with one job worker and a queue of two."""
    srv = server_factory(extra_args=["--server.threads", "2", "--server.maximal-queue-size", "2"])
    http = Http(srv.url)
    assert http.post("/_api/collection", json={"name": "c"}).status_code == 200
    return srv, http


def submit(http: Http, method: str, path: str, **kw) -> str:
    headers = {"x-arango-async": "store", **kw.pop("headers", {})}
    resp = http.request(method, path, headers=headers, **kw)
    assert resp.status_code == 202, resp.text
    return resp.headers["x-arango-async-id"]


def second_user(srv, http: Http, name: str = "second") -> Http:
    """Creates a user with `rw` on `_system` and returns a client that logs in as them."""
    assert http.post("/_api/user", json={"user": name, "passwd": "pw2"}).status_code == 201
    assert http.put(f"/_api/user/{name}/database/_system", json={"grant": "rw"}).status_code == 200
    return Http(srv.url, auth=(name, "pw2"))


def test_queue_full_cancel_and_queued_job_never_runs(one_worker):
    srv, http = one_worker
    # One user may hold a quarter of the queue (here: one job), so a second user queues the
    # second job.
    other = second_user(srv, http)
    sleeper = submit(http, "GET", "/_admin/sleep?duration=120")
    # The one worker takes the sleep job; it then counts as running, not queued.
    wait_for(lambda: http.get("/_api/job/pending").json() == [sleeper], "the sleeper to be pending")
    queued = submit(other, "POST", "/_api/document/c", json={"_key": "never"})
    assert other.get(f"/_api/job/{queued}").status_code == 204
    assert other.put(f"/_api/job/{queued}").status_code == 204

    # Two jobs hold both units of the queue bound: async and ordinary requests get 503/21003.
    for resp in (
        other.post("/_api/document/c", json={}, headers={"x-arango-async": "store"}),
        other.post("/_api/document/c", json={}, headers={"x-arango-async": "true"}),
        http.post("/_api/document/c", json={}),
    ):
        assert resp.status_code == 503, resp.text
        assert resp.json()["errorNum"] == 21003
        assert "x-arango-queue-time-seconds" in resp.headers

    # Cancelling the queued job frees its unit at once; it will never run.
    cancel = other.put(f"/_api/job/{queued}/cancel")
    assert cancel.status_code == 200 and cancel.json() == {"result": True}
    assert http.get("/_api/version").status_code == 200
    result = other.put(f"/_api/job/{queued}")
    assert result.status_code == 410 and result.json()["errorNum"] == 21
    assert result.headers["x-arango-async-id"] == queued

    # Cancelling the running sleep ends it; a job queued after it then runs.
    assert http.put(f"/_api/job/{sleeper}/cancel").status_code == 200
    marker = submit(other, "POST", "/_api/document/c", json={"_key": "marker"})
    wait_for(lambda: other.get(f"/_api/job/{marker}").status_code == 200, "the marker job")
    assert http.get(f"/_api/job/{sleeper}").status_code == 200
    assert http.get("/_api/document/c/never").status_code == 404
    assert http.get("/_api/document/c/marker").status_code == 200


def test_another_users_jobs_are_invisible(one_worker):
    """Regression: job ids counted up from 1 and any user with rw anywhere could list, fetch
    and delete anybody's stored results (a superuser's read of a secret document, say)."""
    srv, http = one_worker
    other = second_user(srv, http)
    assert http.post("/_api/document/c", json={"_key": "secret", "pin": 1234}).status_code == 202
    job = submit(http, "GET", "/_api/document/c/secret")
    wait_for(lambda: http.get(f"/_api/job/{job}").status_code == 200, "root's read")
    assert other.get("/_api/job/done").json() == []
    assert other.get(f"/_api/job/{job}").status_code == 404
    assert other.put(f"/_api/job/{job}").status_code == 404
    assert other.put(f"/_api/job/{job}/cancel").status_code == 404
    assert other.delete(f"/_api/job/{job}").status_code == 404
    assert other.delete("/_api/job/all").json() == {"result": True}
    # Ids are not a counter: neighbours of root's id name nothing of the other user's.
    assert other.get(f"/_api/job/{int(job) + 1}").status_code == 404
    fetched = http.put(f"/_api/job/{job}")
    assert fetched.status_code == 200 and fetched.json()["pin"] == 1234


def test_one_user_cannot_fill_the_queue_and_can_cancel_its_own_queued_jobs(server_factory):
    """Regression: one read-only user could queue /_admin/sleep jobs up to the queue size and
    give every user 503, and DELETE /_api/job/all did not cancel queued jobs."""
    srv = server_factory(extra_args=["--server.threads", "2", "--server.maximal-queue-size", "8"])
    http = Http(srv.url)
    assert http.post("/_api/collection", json={"name": "c"}).status_code == 200
    assert http.post("/_api/user", json={"user": "reader", "passwd": "r"}).status_code == 201
    assert http.put("/_api/user/reader/database/_system", json={"grant": "ro"}).status_code == 200
    reader = Http(srv.url, auth=("reader", "r"))
    # A quarter of 8: two jobs queued or running per user.
    first = submit(reader, "GET", "/_admin/sleep?duration=120")
    second = submit(reader, "GET", "/_admin/sleep?duration=120")
    third = reader.get("/_admin/sleep?duration=120", headers={"x-arango-async": "store"})
    assert third.status_code == 503 and third.json()["errorNum"] == 21003
    # Everybody else still gets in, both asynchronously and synchronously.
    mine = submit(http, "POST", "/_api/document/c", json={"_key": "mine"})
    assert http.get("/_api/version").status_code == 200
    # The reader cancels their own jobs, queued and running, with one call.
    assert reader.delete("/_api/job/all").json() == {"result": True}
    wait_for(lambda: http.get(f"/_api/job/{mine}").status_code == 200, "root's job to run")
    assert reader.get(f"/_api/job/{first}").status_code == 404
    assert reader.get(f"/_api/job/{second}").status_code == 404
    wait_for(
        lambda: reader.get("/_admin/sleep?duration=0", headers={"x-arango-async": "store"}).status_code == 202,
        "the reader's places to be free again",
    )


def test_shutdown_finishes_queued_fire_and_forget_writes(server_factory, tmp_path):
    data = tmp_path / "drain"
    srv = server_factory(data_dir=data, extra_args=["--server.threads", "2"])
    http = Http(srv.url)
    assert http.post("/_api/collection", json={"name": "c"}).status_code == 200
    for i in range(300):
        resp = http.post("/_api/document/c", json={"_key": f"k{i}"}, headers={"x-arango-async": "true"})
        assert resp.status_code == 202
    assert srv.stop() == 0
    srv.start()
    count = Http(srv.url).get("/_api/collection/c/count").json()["count"]
    assert count == 300, "every queued write ran before the server stopped"


def test_python_arango_client_on_a_prefixed_database(url):
    """The driver's own flow against `_system`: the job lives across database prefixes."""
    sys_db = ArangoClient(hosts=url).db("_system", username="root", password=ROOT_PASSWORD)
    async_db = sys_db.begin_async_execution(return_result=True)
    job = async_db.version()
    wait_done(job)
    assert job.result().startswith("3.12")
    name = unique("async_db")
    create = async_db.create_database(name)
    wait_done(create)
    assert create.result() is True
    assert sys_db.has_database(name)
    sys_db.delete_database(name)
