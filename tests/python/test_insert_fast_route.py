"""Inserts that take the fast route (the body's text stored with `_key`/`_rev` spliced in, no
JSON tree; issue 13) store and answer exactly what the parsing route does.

What it is: bodies as clients send them (whitespace, escapes, non-ASCII, numbers in other
spellings, nested values, system attributes in the body) inserted by `POST /_api/document`
(single and multi) and `POST /_api/import`, each compared with the same body written through
`PUT /_api/document/{c}/{key}` (a replace, which always parses the body): the documents read
back must be the same bytes apart from `_key`, `_id` and `_rev`.

What it is not: the error replies for bad bodies (test_http_errors.py), which take the
parsing route whatever this one does.
"""

import json
import re

import pytest

from http_checks import assert_success

JSON = {"content-type": "application/json"}

BODIES = [
    b'{"a":1,"b":"x"}',
    b' {\n\t"a" : 1 ,\r\n "b" : [ true , null , { "c" : "d" } ] } \n',
    b'{"s":"\\u00e9\\n\\t\\"\\\\\\/\\u001F\\ud83d\\ude00","u":"\xc3\xa9\xe2\x9c\x93"}',
    b'{"n":[0,-1,12345678901234567890,-9223372036854775808,1.50,1E2,-0,-0.0,2.5e-3]}',
    b'{"_id":"other/x","_rev":"_zzz","z":1,"_from":"a/1","_to":"b/2"}',
    b'{"deep":{"x":{"y":{"z":[[[]]]}}},"empty":{},"list":[]}',
]


def without_system(raw: bytes) -> str:
    """A read document's text without its `_key`, `_id` and `_rev` (they differ by key)."""
    text = raw.decode()
    return re.sub(r'^\{"_key":"[^"]*","_id":"[^"]*","_rev":"[^"]*"', "{", text)


def slow_route(http, path, body):
    """The body stored by a replace, which parses it."""
    assert_success(http.post(path, json={"_key": "slow"}), 202)
    assert_success(http.put(f"{path}/slow", data=body, headers=JSON), 202)
    raw = http.get(f"{path}/slow").content
    assert_success(http.delete(f"{path}/slow"), 202)
    return without_system(raw)


@pytest.mark.parametrize("body", BODIES, ids=range(len(BODIES)))
def test_single_multi_and_import_store_what_a_parsed_body_stores(http, db_name, col, body):
    path = f"/_db/{db_name}/_api/document/{col.name}"
    expected = slow_route(http, path, body)

    single = assert_success(http.post(path, data=body, headers=JSON), 202)
    assert without_system(http.get(f"{path}/{single['_key']}").content) == expected

    many = assert_success(http.post(path, data=b"[" + body + b"," + body + b"]", headers=JSON), 202)
    assert [r.get("error", False) for r in many] == [False, False]
    for reply in many:
        assert without_system(http.get(f"{path}/{reply['_key']}").content) == expected

    line = body.replace(b"\n", b" ").replace(b"\r", b" ")
    imported = http.post(
        f"/_db/{db_name}/_api/import?collection={col.name}&type=documents",
        data=line + b"\n",
        headers={"content-type": "application/octet-stream"},
    )
    assert assert_success(imported, 201)["created"] == 1
    keys = {single["_key"], *(r["_key"] for r in many)}
    others = [d for d in col.all() if d["_key"] not in keys]
    assert len(others) == 1
    assert without_system(http.get(f"{path}/{others[0]['_key']}").content) == expected


def test_return_new_and_overwrite_answer_as_before(http, db_name, col):
    path = f"/_db/{db_name}/_api/document/{col.name}"
    body = b'{ "_key" : "k", "v" : 1.50, "w" : "\\u00e9" }'
    first = assert_success(http.post(f"{path}?returnNew=true", data=body, headers=JSON), 202)
    assert first["new"] == {"_key": "k", "_id": f"{col.name}/k", "_rev": first["_rev"],
                            "v": 1.5, "w": "é"}
    again = http.post(path, data=body, headers=JSON)
    assert again.status_code == 409 and again.json()["errorNum"] == 1210
    replaced = assert_success(
        http.post(f"{path}?overwriteMode=update&returnOld=true", data=b'{"_key":"k","x":2}',
                  headers=JSON), 202)
    assert replaced["_oldRev"] == first["_rev"]
    assert replaced["old"]["v"] == 1.5
    assert json.loads(http.get(f"{path}/k").content)["x"] == 2
