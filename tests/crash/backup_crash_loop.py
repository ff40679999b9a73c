#!/usr/bin/env python3
"""The hot backup crash loop: backups taken while the server is killed with SIGKILL under write
load are always restorable, and a restore killed half-way leaves a server that opens.

What it is: a harness that runs `quince serve` (1 MiB journals, so datafiles are sealed and
hard-linked) on one data directory for several rounds. In each round two writer threads insert
documents with `waitForSync=true`, each thread in a fixed order: `r<round>-t<t>-<i>` into
`_system/a`, then into `shop/b` (two databases), then the next `i`; a third thread creates
backups (`POST /_admin/backup/create`) one after the other. At a random moment the server is
killed with SIGKILL. After each restart the harness checks:

  * the data directory holds no half-written backup (`backups/tmp-*`) and no restore
    leftovers (`restore-*`): the engine removed or finished them on open;
  * every backup whose create answered 201 is listed;
  * each backup taken in the round just killed (and one older one) restores: the restore
    answers 200, and the restored state is one consistent cut of the writers' sequence (per
    thread: `a` holds documents 0..n-1 and `b` documents 0..m-1, with n - 1 <= m <= n), so no
    backup is torn across collections or databases;
  * in every other round, the server is killed once more while a restore is running; the
    restart must open, and the live state (the old one or the restored one) is again a
    consistent cut.

Environment: `BACKUP_CRASH_SEED` repeats the random decisions, `BACKUP_CRASH_ROUNDS` (6) the
number of rounds, `BACKUP_CRASH_BUDGET_S` (90) the time budget, `BACKUP_CRASH_KEEP=1` keeps the
data directory of a passing run.

What it is not: a test of what exactly a backup holds (the Rust tests in
`crates/db/tests/hot_backup.rs` compare states exactly), or a benchmark.

Invariants: every wait is bounded; no sleep is used as synchronisation (the kill delays are
random jitter); each round's keys carry the round number, so a check of one round's cut never
depends on another round's documents.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from crash_client import Conn, Gone  # noqa: E402
from quince_server import QuinceServer  # noqa: E402

WRITERS = 2
# (database, collection) in each writer's order.
TARGETS = (("_system", "a"), ("shop", "b"))


class Failure(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failure(message)


def db_path(database: str, path: str) -> str:
    return f"/_db/{database}{path}"


def setup(srv: QuinceServer) -> None:
    conn = Conn(srv.host_port)
    status, _, body = conn.call("POST", "/_api/database", {"name": "shop"})
    check(status == 201, f"create database: {status} {body}")
    for database, name in TARGETS:
        status, _, body = conn.call("POST", db_path(database, "/_api/collection"), {"name": name})
        check(status == 200, f"create collection {name}: {status} {body}")
    conn.close()


def writer(srv: QuinceServer, round_no: int, t: int, stop: threading.Event) -> None:
    conn = Conn(srv.host_port)
    pad = "p" * 400
    i = 0
    try:
        while not stop.is_set():
            for database, name in TARGETS:
                doc = {"_key": f"r{round_no}-t{t}-{i}", "r": round_no, "t": t, "i": i, "pad": pad}
                status, _, body = conn.call(
                    "POST", db_path(database, f"/_api/document/{name}?waitForSync=true"), doc
                )
                if status != 201:
                    raise Failure(f"insert into {name}: {status} {body}")
            i += 1
    except Gone:
        pass


def backup_maker(srv: QuinceServer, round_no: int, acked: list, stop: threading.Event,
                 errors: list) -> None:
    conn = Conn(srv.host_port)
    j = 0
    try:
        while not stop.is_set():
            status, _, body = conn.call("POST", "/_admin/backup/create", {"label": f"r{round_no}-{j}"})
            if status != 201:
                errors.append(f"backup create: {status} {body}")
                return
            acked.append((round_no, body["result"]["id"]))
            j += 1
    except Gone:
        pass


def indexes_of(conn: Conn, database: str, name: str, round_no: int, t: int) -> list[int]:
    query = "FOR d IN @@c FILTER d.r == @r AND d.t == @t RETURN d.i"
    status, _, body = conn.call(
        "POST",
        db_path(database, "/_api/cursor"),
        {"query": query, "bindVars": {"@c": name, "r": round_no, "t": t}, "batchSize": 100000},
    )
    check(status == 201, f"query {name}: {status} {body}")
    return sorted(body["result"])


def check_cut(conn: Conn, round_no: int, what: str) -> None:
    """The state holds, for each writer of `round_no`, one consistent cut of its sequence."""
    for t in range(WRITERS):
        a = indexes_of(conn, *TARGETS[0], round_no, t)
        b = indexes_of(conn, *TARGETS[1], round_no, t)
        check(a == list(range(len(a))), f"{what}: a has holes for writer {t}: {a[:10]}...")
        check(b == list(range(len(b))), f"{what}: b has holes for writer {t}: {b[:10]}...")
        check(len(a) - 1 <= len(b) <= len(a),
              f"{what}: writer {t} has {len(a)} documents in _system/a and {len(b)} in shop/b: "
              "not one cut")


def check_directory(data_dir: Path) -> None:
    leftovers = [p.name for p in data_dir.iterdir() if p.name.startswith("restore-")]
    check(not leftovers, f"restore leftovers after the restart: {leftovers}")
    backups = data_dir / "backups"
    if backups.exists():
        temps = [p.name for p in backups.iterdir() if p.name.startswith("tmp-")]
        check(not temps, f"half-written backups after the restart: {temps}")


def main() -> int:
    seed = int(os.environ.get("BACKUP_CRASH_SEED", random.randrange(1 << 30)))
    rounds = int(os.environ.get("BACKUP_CRASH_ROUNDS", "6"))
    budget = float(os.environ.get("BACKUP_CRASH_BUDGET_S", "90"))
    keep = os.environ.get("BACKUP_CRASH_KEEP") == "1"
    rng = random.Random(seed)
    print(f"backup crash loop: seed {seed}, {rounds} rounds")
    work = Path(tempfile.mkdtemp(prefix="quince-backup-crash-"))
    srv = QuinceServer(work / "data", extra_args=("--database.maximal-journal-size", "1048576"))
    started = time.monotonic()
    acked: list[tuple[int, str]] = []
    restored = killed_restores = 0
    try:
        srv.start()
        setup(srv)
        for round_no in range(1, rounds + 1):
            check(time.monotonic() - started < budget, f"time budget of {budget:.0f} s spent")
            stop = threading.Event()
            errors: list[str] = []
            threads = [threading.Thread(target=writer, args=(srv, round_no, t, stop), daemon=True)
                       for t in range(WRITERS)]
            threads.append(threading.Thread(
                target=backup_maker, args=(srv, round_no, acked, stop, errors), daemon=True))
            for thread in threads:
                thread.start()
            time.sleep(rng.uniform(0.4, 1.6))  # jitter: when the kill comes
            srv.kill()
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
                check(not thread.is_alive(), "a client thread hangs")
            check(not errors, f"round {round_no}: {errors}")
            srv.start()
            check_directory(srv.data_dir)
            conn = Conn(srv.host_port)
            status, _, body = conn.call("POST", "/_admin/backup/list", {})
            check(status == 200, f"list: {status} {body}")
            listed = set(body["result"]["list"])
            missing = [i for _, i in acked if i not in listed]
            check(not missing, f"acknowledged backups not listed after the restart: {missing}")
            this_round = [(r, i) for r, i in acked if r == round_no]
            older = [(r, i) for r, i in acked if r < round_no]
            chosen = this_round[-3:] + ([rng.choice(older)] if older else [])
            for backup_round, backup_id in chosen:
                status, _, body = conn.call("POST", "/_admin/backup/restore", {"id": backup_id})
                check(status == 200, f"restore {backup_id}: {status} {body}")
                check_cut(conn, backup_round, f"backup {backup_id}")
                restored += 1
            if chosen and round_no % 2 == 0:
                backup_round, backup_id = rng.choice(chosen)
                victim = Conn(srv.host_port)
                thread = threading.Thread(
                    target=lambda: _ignore_gone(victim.call, "POST", "/_admin/backup/restore",
                                                {"id": backup_id}),
                    daemon=True)
                thread.start()
                time.sleep(rng.uniform(0.0, 0.2))  # jitter: kill somewhere inside the restore
                srv.kill()
                thread.join(timeout=30)
                srv.start()
                killed_restores += 1
                check_directory(srv.data_dir)
                conn = Conn(srv.host_port)
                check_cut(conn, backup_round, f"after a restore of {backup_id} was killed")
                status, _, body = conn.call("POST", "/_admin/backup/list", {})
                check(status == 200 and backup_id in body["result"]["list"],
                      f"backup {backup_id} lost by a killed restore")
            print(f"  round {round_no}: {len(this_round)} backups acknowledged, "
                  f"{len(chosen)} restored")
        code = srv.stop()
        check(code == 0, f"graceful stop exited {code}")
    except Failure as failure:
        print(f"FAILED (seed {seed}): {failure}")
        print(srv.stderr_tail())
        srv.kill()
        print(f"data kept in {work}")
        return 1
    log = srv.log_path.read_text(errors="replace")
    recovered = {event: log.count(event) for event in (
        "backup.unfinished_removed", "backup.restore_staging_removed", "backup.restore_finished",
        "backup.previous_kept")}
    print(f"backup crash loop passed: {len(acked)} backups acknowledged, {restored} restored, "
          f"{killed_restores} restores killed, {time.monotonic() - started:.1f} s; "
          f"server log: {recovered}")
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _ignore_gone(call, *args):
    try:
        call(*args)
    except Gone:
        pass


if __name__ == "__main__":
    sys.exit(main())
