"""Response compression (`--http.compress-response-threshold`) and compressed request bodies.

What it is: a server started with a threshold answers gzip or deflate as the client's
`Accept-Encoding` asks (q-values honoured, `q=0` refuses), only for bodies at least as large as
the threshold, never for HEAD, and marks such replies `Vary: Accept-Encoding`; the session
server (threshold 0, the default) never compresses. Request bodies sent with
`Content-Encoding: gzip` or `deflate` are accepted, and their decoded size is bounded by
`--http.max-body-size`. python-arango works unchanged with compression on both ways.

What it is not: the unit tests of the negotiation (crates/api/src/compression.rs).
"""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
import requests
from arango import ArangoClient
from arango.http import DeflateRequestCompression

from conftest import unique
from quince_server import ROOT_PASSWORD

AUTH = ("root", ROOT_PASSWORD)
THRESHOLD = 1000
BIG_QUERY = {"query": "FOR i IN 1..300 RETURN {i, text: CONCAT('value number ', i)}", "batchSize": 1000}


@pytest.fixture(scope="module")
def compressing(tmp_path_factory):
    """A server that compresses replies of at least THRESHOLD bytes."""
    from quince_server import QuinceServer

    base = tmp_path_factory.mktemp("quince-compress")
    srv = QuinceServer(base / "data", extra_args=("--http.compress-response-threshold", str(THRESHOLD),
                                                   "--http.max-body-size", str(1 << 20)))
    srv.start()
    yield srv
    assert srv.stop() == 0


def cursor(url: str, accept: str | None, stream: bool = False) -> requests.Response:
    headers = {} if accept is None else {"Accept-Encoding": accept}
    return requests.post(f"{url}/_api/cursor", json=BIG_QUERY, auth=AUTH, headers=headers, stream=stream, timeout=30)


def raw_body(reply: requests.Response) -> bytes:
    """The bytes as sent, not decoded by urllib3."""
    return reply.raw.read(decode_content=False)


def test_gzip_by_default_accept_encoding_of_requests(compressing):
    # requests sends "Accept-Encoding: gzip, deflate" unless told otherwise.
    reply = requests.post(f"{compressing.url}/_api/cursor", json=BIG_QUERY, auth=AUTH, timeout=30)
    assert reply.status_code == 201
    assert reply.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in reply.headers["Vary"]
    assert [doc["i"] for doc in reply.json()["result"]] == list(range(1, 301))


def test_raw_gzip_and_deflate_bodies_and_their_lengths(compressing):
    plain = cursor(compressing.url, "identity")
    assert "Content-Encoding" not in plain.headers
    expected = plain.json()["result"]
    for accept, coding, decode in [("gzip", "gzip", gzip.decompress), ("deflate", "deflate", zlib.decompress)]:
        reply = cursor(compressing.url, accept, stream=True)
        assert reply.headers["Content-Encoding"] == coding
        body = raw_body(reply)
        assert int(reply.headers["Content-Length"]) == len(body) < len(plain.content)
        assert json.loads(decode(body))["result"] == expected


def test_q_values_choose_and_refuse(compressing):
    assert cursor(compressing.url, "gzip;q=0.4, deflate;q=0.8").headers["Content-Encoding"] == "deflate"
    assert cursor(compressing.url, "deflate;q=0.1, *").headers["Content-Encoding"] == "gzip"
    for refusing in ["gzip;q=0, deflate;q=0", "*;q=0", "br", "identity"]:
        reply = cursor(compressing.url, refusing)
        assert "Content-Encoding" not in reply.headers, refusing
        # The reply could have been compressed for another client: caches must know.
        assert "Accept-Encoding" in reply.headers["Vary"], refusing
        assert len(reply.json()["result"]) == 300


def test_small_bodies_and_head_replies_are_not_compressed(compressing):
    small = requests.get(f"{compressing.url}/_api/version", auth=AUTH, timeout=30)
    assert len(small.content) < THRESHOLD
    assert "Content-Encoding" not in small.headers and "Vary" not in small.headers
    name = unique("compress_head")
    assert requests.post(f"{compressing.url}/_api/collection", json={"name": name}, auth=AUTH, timeout=30).ok
    doc = {"_key": "big", "text": "y" * 5000}
    assert requests.post(f"{compressing.url}/_api/document/{name}", json=doc, auth=AUTH, timeout=30).status_code in (201, 202)
    get = requests.get(f"{compressing.url}/_api/document/{name}/big", auth=AUTH, timeout=30)
    assert get.headers["Content-Encoding"] == "gzip" and get.json()["text"] == "y" * 5000
    head = requests.head(f"{compressing.url}/_api/document/{name}/big", auth=AUTH, timeout=30)
    assert head.status_code == 200
    assert "Content-Encoding" not in head.headers


def test_the_default_server_never_compresses(url):
    reply = cursor(url, "gzip, deflate")
    assert reply.status_code == 201
    assert "Content-Encoding" not in reply.headers and "Vary" not in reply.headers


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_compressed_request_bodies_are_accepted(compressing, coding):
    name = unique("compress_req")
    assert requests.post(f"{compressing.url}/_api/collection", json={"name": name}, auth=AUTH, timeout=30).ok
    docs = [{"_key": f"k{i}", "n": i} for i in range(200)]
    raw = json.dumps(docs).encode()
    body = gzip.compress(raw) if coding == "gzip" else zlib.compress(raw)
    reply = requests.post(f"{compressing.url}/_api/document/{name}", data=body, auth=AUTH, timeout=30,
                          headers={"Content-Encoding": coding, "Content-Type": "application/json"})
    assert reply.status_code in (201, 202), reply.text
    count = requests.get(f"{compressing.url}/_api/collection/{name}/count", auth=AUTH, timeout=30).json()["count"]
    assert count == 200


def test_a_compressed_body_over_the_limit_after_decoding_is_refused(compressing):
    # 8 MiB of zeros is a few kilobytes of gzip: the limit (1 MiB) applies to the decoded size.
    bomb = gzip.compress(b"[" + b" " * (8 << 20) + b"]")
    assert len(bomb) < (1 << 20)
    reply = requests.post(f"{compressing.url}/_api/document/anything", data=bomb, auth=AUTH, timeout=30,
                          headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
    assert reply.status_code == 413
    assert reply.json()["error"] is True and reply.json()["code"] == 413


def test_python_arango_round_trip_with_compression_both_ways(compressing):
    client = ArangoClient(hosts=compressing.url, request_compression=DeflateRequestCompression(threshold=100),
                          response_compression="deflate", request_timeout=30)
    db = client.db("_system", username="root", password=ROOT_PASSWORD)
    name = unique("compress_driver")
    col = db.create_collection(name)
    try:
        docs = [{"_key": f"d{i}", "n": i, "text": "lorem ipsum " * 10} for i in range(500)]
        results = col.insert_many(docs)
        assert all("_rev" in r for r in results)
        cursor_ = db.aql.execute(f"FOR d IN {name} SORT d.n RETURN d", batch_size=1000)
        fetched = list(cursor_)
        assert [d["n"] for d in fetched] == list(range(500))
        assert fetched[7]["text"] == "lorem ipsum " * 10
        assert col.get("d42")["n"] == 42
    finally:
        db.delete_collection(name, ignore_missing=True)
