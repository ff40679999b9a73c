"""`quince import`, the arangoimport-compatible loader, against the session server.

What it is: the loader run as a process on JSON Lines, JSON array, CSV and TSV files (and gzip,
and stdin), with bad lines reported by input line number while good lines are still imported
(unless `--complete`), the summary line on stdout, and the exit status.

What it is not: the server-side suites (`test_import_http.py`, `test_import_driver.py`).
"""

from __future__ import annotations

import gzip
import subprocess

from conftest import unique
from quince_server import ROOT_PASSWORD, quince_bin

TIMEOUT_S = 60


def run_import(server, db_name, *args, stdin: bytes | None = None):
    command = [
        str(quince_bin()),
        "import",
        "--server.endpoint",
        server.url.replace("http://", "tcp://"),
        "--server.database",
        db_name,
        "--server.password",
        ROOT_PASSWORD,
        *args,
    ]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=TIMEOUT_S)


def summary(proc) -> str:
    return proc.stdout.decode().strip().splitlines()[-1]


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_json_lines_with_bad_lines_reported_by_line(server, db_name, db, tmp_path):
    name = unique("cli")
    text = '{"_key":"a","n":1}\n\n{"_key":"b","n":2}\nnot json\n{"_key":"a"}\n[1,2]\n{"_key":"c"}\n'
    proc = run_import(server, db_name, "--file", write(tmp_path, "d.jsonl", text), "--type", "jsonl",
                      "--collection", name, "--create-collection", "true")
    assert proc.returncode == 1, proc.stderr
    assert summary(proc) == "created: 3, errors: 3, updated: 0, ignored: 0"
    err = proc.stderr.decode()
    assert "line 4: invalid JSON type (expecting object, probably parse error)" in err
    assert "line 5: creating document failed with error 'unique constraint violated'" in err
    assert "line 6: invalid JSON type (expecting object)" in err
    col = db.collection(name)
    assert col.count() == 3 and col.get("b")["n"] == 2


def test_a_clean_json_array_exits_zero_even_in_small_batches(server, db_name, db, tmp_path):
    name = unique("cli")
    docs = ",\n".join(f'  {{"_key": "k{i}", "i": {i}}}' for i in range(300))
    path = write(tmp_path, "d.json", f"[\n{docs}\n]\n")
    proc = run_import(server, db_name, "--file", path, "--collection", name,
                      "--create-collection", "--batch-size", "500", "--threads", "3")
    assert proc.returncode == 0, proc.stderr
    assert summary(proc) == "created: 300, errors: 0, updated: 0, ignored: 0"
    assert db.collection(name).get("k299")["i"] == 299


def test_array_elements_report_their_lines(server, db_name, db, tmp_path):
    name = unique("cli")
    path = write(tmp_path, "d.json", '[\n {"_key": "x"},\n 5,\n {"_key": "x"},\n {"_key": "y"}\n]')
    # One thread: with two, the batches holding the two "x" records race, and which of them is
    # the duplicate (line 2 or line 4) depends on which batch the server writes first.
    proc = run_import(server, db_name, "--file", path, "--type", "json", "--collection", name,
                      "--create-collection", "--batch-size", "20", "--threads", "1")
    assert proc.returncode == 1
    assert summary(proc) == "created: 2, errors: 2, updated: 0, ignored: 0"
    err = proc.stderr.decode()
    assert "line 3: invalid JSON type (expecting object), offending document: 5" in err
    assert "line 4: creating document failed with error 'unique constraint violated'" in err


def test_csv_values_and_bad_rows(server, db_name, db, tmp_path):
    name = unique("cli")
    text = '_key,name,age,active\r\nk1,"Smith, ""J""",42,true\r\nk2,plain,,false\r\nk3,short\r\nk4,"multi\nline",7.5,null\r\n'
    proc = run_import(server, db_name, "--file", write(tmp_path, "d.csv", text), "--type", "csv",
                      "--collection", name, "--create-collection")
    assert proc.returncode == 1
    assert summary(proc) == "created: 3, errors: 1, updated: 0, ignored: 0"
    assert "line 4: wrong number of JSON values (got 2, expected 4)" in proc.stderr.decode()
    col = db.collection(name)
    k1 = col.get("k1")
    assert (k1["name"], k1["age"], k1["active"]) == ('Smith, "J"', 42, True)
    k2 = col.get("k2")
    assert "age" not in k2 and k2["active"] is False
    k4 = col.get("k4")
    assert (k4["name"], k4["age"]) == ("multi\nline", 7.5) and "active" not in k4


def test_tsv_gzip_and_on_duplicate(server, db_name, db, tmp_path):
    name = unique("cli")
    path = tmp_path / "d.tsv.gz"
    path.write_bytes(gzip.compress(b"_key\tv\nt1\t1\nt2\tx y\n"))
    proc = run_import(server, db_name, "--file", str(path), "--type", "tsv", "--collection", name,
                      "--create-collection")
    assert proc.returncode == 0, proc.stderr
    assert summary(proc) == "created: 2, errors: 0, updated: 0, ignored: 0"
    assert db.collection(name).get("t2")["v"] == "x y"
    again = run_import(server, db_name, "--file", str(path), "--type", "tsv", "--collection", name,
                       "--on-duplicate", "update")
    assert again.returncode == 0
    assert summary(again) == "created: 0, errors: 0, updated: 2, ignored: 0"
    ignored = run_import(server, db_name, "--file", str(path), "--type", "tsv", "--collection", name,
                         "--on-duplicate", "ignore")
    assert summary(ignored) == "created: 0, errors: 0, updated: 0, ignored: 2"


def test_stdin_edges_with_prefixes(server, db_name, db, tmp_path):
    name = unique("cli_edges")
    data = b'{"_key": "e1", "_from": "a", "_to": "b"}\n{"_key": "e2", "_from": "v/c", "_to": "d"}\n'
    proc = run_import(server, db_name, "--file", "-", "--type", "jsonl", "--collection", name,
                      "--create-collection", "--create-collection-type", "edge",
                      "--from-collection-prefix", "v", "--to-collection-prefix", "w", stdin=data)
    assert proc.returncode == 0, proc.stderr
    col = db.collection(name)
    assert col.properties()["edge"] is True
    ends = [(e["_from"], e["_to"]) for e in (col.get("e1"), col.get("e2"))]
    assert ends == [("v/a", "w/b"), ("v/c", "w/d")]


def test_complete_stops_at_the_first_bad_batch(server, db_name, db, tmp_path):
    name = unique("cli")
    text = '{"_key":"a"}\n{"_key":"b"}\n{"_key":"a"}\n'
    proc = run_import(server, db_name, "--file", write(tmp_path, "d.jsonl", text), "--type", "jsonl",
                      "--collection", name, "--create-collection", "--complete", "true")
    assert proc.returncode == 1
    assert "line 3:" in proc.stderr.decode()
    assert db.collection(name).count() == 0


def test_missing_collection_and_server_errors_exit_non_zero(server, db_name, tmp_path):
    path = write(tmp_path, "d.jsonl", '{"a":1}\n')
    proc = run_import(server, db_name, "--file", path, "--collection", unique("absent"))
    assert proc.returncode == 1
    assert "not found" in proc.stderr.decode()
    wrong = subprocess.run(
        [str(quince_bin()), "import", "--server.endpoint", server.url, "--server.password", "wrong",
         "--file", path, "--collection", "x"],
        capture_output=True, timeout=TIMEOUT_S,
    )
    assert wrong.returncode == 1
