"""`quince import`, the arangoimport-compatible loader, against the session server.

What it is: the loader run as a process on JSON Lines, JSON array, CSV and TSV files (and gzip,
and stdin), with bad lines reported by input line number while good lines are still imported
(unless `--complete`), the summary line on stdout, and the exit status.

What it is not: the server-side suites (`test_import_http.py`, `test_import_driver.py`).
"""

from __future__ import annotations

import gzip
import re
import subprocess

from conftest import unique
from quince_server import ROOT_PASSWORD, quince_bin

TIMEOUT_S = 60


def run_import(server, db_name, *args, stdin: bytes | None = None, merged: bool = False):
    """Runs the loader; with `merged`, stderr goes into stdout, in the order it was written."""
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
    if merged:
        return subprocess.run(command, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=TIMEOUT_S)
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


def test_the_first_failed_lines_come_first_then_a_count_then_the_summary(server, db_name, db, tmp_path):
    name = unique("cli")
    # 60 records, every other one a duplicate of the record before it: 30 failures spread over
    # many batches (one sender, so the second of each pair is always the duplicate).
    records = []
    for i in range(30):
        records += [f'{{"_key": "k{i}"}}', f'{{"_key": "k{i}"}}']
    path = write(tmp_path, "d.jsonl", "\n".join(records) + "\n")
    proc = run_import(server, db_name, "--file", path, "--type", "jsonl", "--collection", name,
                      "--create-collection", "--batch-size", "64", "--threads", "1",
                      "--progress", "false", merged=True)
    assert proc.returncode == 1
    lines = proc.stdout.decode().splitlines()
    failed = [line for line in lines if line.startswith("line ")]
    # The ten lowest failed lines (2, 4, ..., 20), in order, each with the server's message.
    assert [int(line.split(":")[0].split()[1]) for line in failed] == list(range(2, 21, 2))
    assert all("unique constraint violated" in line for line in failed)
    more = lines.index("... and 20 more failed documents")
    summary_at = lines.index("created: 30, errors: 30, updated: 0, ignored: 0")
    assert lines.index(failed[-1]) < more < summary_at
    assert lines.index(failed[0]) == 0, "the failed lines come first"
    assert db.collection(name).count() == 30


def test_the_lowest_lines_are_listed_whatever_order_batches_finish_in(server, db_name, db, tmp_path):
    name = unique("cli")
    records = [f'{{"_key": "bad key {i}"}}' if i % 3 == 0 else f'{{"i": {i}}}' for i in range(90)]
    path = write(tmp_path, "d.jsonl", "\n".join(records) + "\n")
    proc = run_import(server, db_name, "--file", path, "--type", "jsonl", "--collection", name,
                      "--create-collection", "--batch-size", "40", "--threads", "4",
                      "--progress", "false")
    assert proc.returncode == 1
    failed = [line for line in proc.stderr.decode().splitlines() if line.startswith("line ")]
    assert [int(line.split(":")[0].split()[1]) for line in failed] == [1 + 3 * k for k in range(10)]
    assert "... and 20 more failed documents" in proc.stderr.decode()
    assert summary(proc) == "created: 60, errors: 30, updated: 0, ignored: 0"


PROGRESS = re.compile(r"quince import: progress: (\d+) documents acknowledged")


def test_progress_lines_count_acknowledged_documents(server, db_name, db, tmp_path):
    name = unique("cli")
    path = write(tmp_path, "d.jsonl", "".join(f'{{"i": {i}, "pad": "{"x" * 20}"}}\n' for i in range(50)))
    proc = run_import(server, db_name, "--file", path, "--type", "jsonl", "--collection", name,
                      "--create-collection", "--batch-size", "200", "--threads", "1",
                      "--progress-interval", "0")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    counts = [int(m) for m in PROGRESS.findall(err)]
    # One line per answered batch (about five records each), each the running total.
    assert len(counts) >= 5, err
    assert counts == sorted(set(counts)), counts
    assert counts[-1] == 50
    steps = [b - a for a, b in zip([0] + counts, counts)]
    assert all(0 < step <= 10 for step in steps), steps
    assert "quince import: 50 documents acknowledged in" in err
    assert summary(proc) == "created: 50, errors: 0, updated: 0, ignored: 0"
    quiet = run_import(server, db_name, "--file", path, "--type", "jsonl", "--collection", name,
                       "--progress", "false")
    assert PROGRESS.search(quiet.stderr.decode()) is None
    bad = run_import(server, db_name, "--file", path, "--collection", name, "--progress-interval", "-1")
    assert bad.returncode != 0
