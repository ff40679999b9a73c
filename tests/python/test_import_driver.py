"""python-arango's `import_bulk` against `POST /_api/import` (type=array), with every option.

What it is: one test per option of `Collection.import_bulk` (halt_on_error = `complete`,
details, on_duplicate in each mode, overwrite, from/to prefix, sync, batch_size), checking the
reply's counters and the collection afterwards.

What it is not: the raw-HTTP or loader suites (`test_import_http.py`, `test_import_cli.py`).
"""

from __future__ import annotations

import pytest
from arango.exceptions import DocumentInsertError


def contents(col, *names: str) -> dict[str, dict | None]:
    out = {}
    for name in names:
        doc = col.get(name)
        out[name] = None if doc is None else {k: v for k, v in doc.items() if not k.startswith("_")}
    return out


def test_default_import_is_complete_with_details(col):
    docs = [{"_key": f"k{i}", "n": i} for i in range(5)]
    result = col.import_bulk(docs)
    assert result["error"] is False
    assert (result["created"], result["errors"], result["empty"], result["updated"], result["ignored"]) == (5, 0, 0, 0, 0)
    assert result["details"] == []
    assert col.count() == 5
    assert col.get("k3")["n"] == 3


def test_halt_on_error_rolls_back_and_raises(col):
    col.insert({"_key": "taken", "v": "old"})
    docs = [{"_key": "a"}, {"_key": "taken", "v": "new"}, {"_key": "b"}]
    with pytest.raises(DocumentInsertError) as info:
        col.import_bulk(docs, halt_on_error=True)
    assert info.value.http_code == 409
    assert info.value.error_code == 1210
    assert col.count() == 1
    assert col.get("taken")["v"] == "old"


def test_without_halt_every_duplicate_is_counted(col):
    docs = [{"_key": f"d{i}"} for i in range(6)]
    col.import_bulk(docs)
    result = col.import_bulk(docs, halt_on_error=False)
    assert (result["created"], result["errors"]) == (0, 6)
    assert len(result["details"]) == 6
    assert result["details"][0].startswith(
        "at position 0: creating document failed with error 'unique constraint violated'"
    )


def test_details_off_leaves_details_out(col):
    col.insert({"_key": "x"})
    result = col.import_bulk([{"_key": "x"}, {"_key": "y"}], halt_on_error=False, details=False)
    assert "details" not in result
    assert (result["created"], result["errors"]) == (1, 1)


@pytest.mark.parametrize(
    "mode, counters, expected",
    [
        ("ignore", (0, 0, 0, 1), {"a": 1, "b": 1}),
        ("update", (0, 0, 1, 0), {"a": 2, "b": 1}),
        ("replace", (0, 0, 1, 0), {"a": 2}),
        ("error", (0, 1, 0, 0), {"a": 1, "b": 1}),
    ],
)
def test_on_duplicate_modes(col, mode, counters, expected):
    col.insert({"_key": "dup", "a": 1, "b": 1})
    result = col.import_bulk([{"_key": "dup", "a": 2}], halt_on_error=False, on_duplicate=mode)
    assert (result["created"], result["errors"], result["updated"], result["ignored"]) == counters
    assert contents(col, "dup")["dup"] == expected


def test_overwrite_truncates_first(col):
    col.import_bulk([{"_key": f"old{i}"} for i in range(4)])
    result = col.import_bulk([{"_key": "new"}, {"_key": "old1"}], overwrite=True)
    assert result["created"] == 2
    assert col.count() == 2
    assert col.get("old0") is None


def test_prefixes_apply_to_edges(db, ecol):
    result = ecol.import_bulk(
        [{"_key": "e1", "_from": "a", "_to": "b"}, {"_key": "e2", "_from": "other/a", "_to": "c"}],
        from_prefix="vertices",
        to_prefix="targets",
    )
    assert result["created"] == 2
    assert ecol.get("e1")["_from"] == "vertices/a"
    assert ecol.get("e1")["_to"] == "targets/b"
    assert ecol.get("e2")["_from"] == "other/a"
    assert ecol.get("e2")["_to"] == "targets/c"


def test_edges_without_ends_fail(ecol):
    result = ecol.import_bulk([{"_key": "e1", "_from": "v/a"}], halt_on_error=False)
    assert result["errors"] == 1
    assert "missing '_from' or '_to' attribute" in result["details"][0]


def test_sync_and_batches(col):
    docs = [{"_key": f"b{i}", "i": i} for i in range(25)]
    results = col.import_bulk(docs, sync=True, batch_size=10)
    assert isinstance(results, list) and len(results) == 3
    assert [r["created"] for r in results] == [10, 10, 5]
    assert col.count() == 25


def test_ids_become_keys(col):
    result = col.import_bulk([{"_id": f"{col.name}/viaid", "v": 1}])
    assert result["created"] == 1
    assert col.get("viaid")["v"] == 1
