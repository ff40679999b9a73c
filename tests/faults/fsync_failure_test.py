#!/usr/bin/env python3
"""The failed-fsync test: the real `quince` binary under an LD_PRELOAD shim that fails fsyncs.

What it is: a harness that builds tests/faults/fsync_shim.c with gcc, starts `quince serve`
with the shim in LD_PRELOAD (through `env`, so the server keeps its pid), and makes the
server's fsync/fdatasync calls fail with EIO on command (a trigger file whose contents say which
paths and calls fail, see the shim's header). Four scenarios, each on its own server and data
directory:

  1. write path: a collection `faulty` gets a seeded mix of inserts, replaces, updates and
     removes with waitForSync=true (all acknowledged), then the shim fails the next fdatasync of
     its files, once (later calls pass, as Linux reports a failed writeback only once):
       - the next synced write answers 500/1305 or 503/1004, never 2xx;
       - every later write to `faulty` (insert, replace, update, remove, truncate, compact;
         with and without waitForSync) answers 503/1004 (a multi-document insert: every item
         1004), also after the shim is disarmed (no retry), and the shim's log shows no later
         fsync of its journal;
       - reads keep working: every acknowledged document with its value and _rev, the count;
       - a collection in the same database and one in another database keep accepting
         synced writes (the poison is per collection);
       - SIGTERM: the exit status, the time it took and the log lines are reported (it must
         exit within a bound and not die of a signal);
       - restarted WITHOUT the shim: every acknowledged write is there with its value and
         _rev, every write refused with 1004 left no trace, every 2xx answered after the arm is
         there, and `faulty` accepts writes again.
  2. every fsync fails (sticky, every path): synced writes to two collections (one of them by
     8 concurrent writers sharing a group commit: none may get 2xx), a write without
     waitForSync acknowledged before the background fsync fails (then its collection must
     refuse writes), and catalog changes (create collection, create database, drop
     collection, create user) whose answers are reported; restart without the shim:
     acknowledged data checked, and the catalog (collections, databases) must be what was
     listed while the fsyncs failed.
  3. journal seal (1 MiB journals, ~200 KB documents): the write that crosses the journal
     boundary hands the full journal off; the group-commit round that acknowledges it fsyncs
     the handed-off journal first, and the maintenance pass seals it (rename, directory fsync).
     Each step fails in its own collection: the old journal's fdatasync and the new journal's
     fdatasync are on the crossing write's path (no 2xx, then 503/1004, reads work, restart
     recovers); the directory fsync is not (the crossing write may be acknowledged), so the
     failure must show up within a bound, in the round or in the maintenance pass, and then
     latch the store read-only as in 1. A fourth collection gets the failure in the maintenance thread
     instead, once its spare journal is ready (the directory fsync of the seal after the
     crossing write, or of its hint): the crossing write is acknowledged or refused, the failure latches the store read-only (the next
     synced write answers 503/1004, since a later fsync of the same directory could not be
     trusted), and acknowledged writes are checked after the restart.
  4. compaction (`PUT /_api/collection/{c}/compact`), with sealed datafiles three quarters
     dead, in four collections, each failing one step of the compaction: the output's
     fdatasync, the fdatasync of the output's hint, the directory fsync after the hint, and
     the directory fsync after the rename that commits the output. compact must not answer
     2xx, and a later write answers 503/1004; the calls seen, the answer and the files left
     are reported; reads, and the restart without the shim (acknowledged data, writes accepted,
     no compaction debris or orphan hint left), are checked.

Every check prints one line (`ok` or `FAILED`); `observed:` lines report behaviour the brief
asks to document without prescribing it. The RNG seed (document sizes and values, the order and
kind of operations) is printed; FSYNC_SEED repeats it; FSYNC_SCENARIOS=1,3 runs only those
scenarios. Exit status 1 when a check failed; 0
with a "skipped" line when gcc or Linux's /proc is missing.

What it is not: a power-loss test (the page cache survives; tests/powercut does that) or a
test of the storage engine's internals (crates/storage/tests/failed_fsync.rs does that on
SimFileIo). It relies on the server calling glibc's fsync/fdatasync (verified: the shim's log
must show the journal's fdatasync before anything is armed, else the test fails).

Invariants: every wait is bounded (HTTP calls 30 s, start 30 s, stop 30 s, condition polls
10 s, the whole run TOTAL_BUDGET_S); no sleep stands in for synchronisation (the shim is armed
by creating a file before the request it must hit is sent; the only polls wait for the
background syncer, with a bound); each scenario has its own data directory, kept with the
server log on failure.

Run: .venv/bin/python tests/faults/fsync_failure_test.py   (needs target/debug/quince, gcc)
"""

from __future__ import annotations

import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from quince_server import ROOT_PASSWORD, QuinceServer, ServerError  # noqa: E402

HERE = Path(__file__).resolve().parent
SHIM_SOURCE = HERE / "fsync_shim.c"
HTTP_TIMEOUT_S = 30.0
POLL_BOUND_S = 10.0
STOP_BOUND_S = 30.0
TOTAL_BUDGET_S = 100.0
JOURNAL_SIZE = 1024 * 1024
SEAL_DOC_BYTES = 200_000


# -- reporting ------------------------------------------------------------------------------------


class Report:
    """Collects check outcomes; prints each as it happens."""

    def __init__(self) -> None:
        self.failed: list[str] = []
        self.passed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"  ok      {name}" + (f"  ({detail})" if detail else ""), flush=True)
        else:
            self.failed.append(f"{name}: {detail}")
            print(f"  FAILED  {name}: {detail}", flush=True)
        return ok

    def note(self, text: str) -> None:
        print(f"  observed: {text}", flush=True)

    def finish(self, test: str, took: float, seed: int, work: Path, kept: str) -> int:
        """Prints the summary; keeps `work` (holding `kept`) when a check failed, else removes
        it. Returns the exit status."""
        print(f"{test}: {self.passed} checks passed, {len(self.failed)} failed ({took:.1f} s, seed {seed})")
        if self.failed:
            for failure in self.failed:
                print(f"  FAILED {failure}")
            print(f"{kept} kept in {work}")
            return 1
        shutil.rmtree(work, ignore_errors=True)
        return 0


# -- the server under the shim -----------------------------------------------------------------


class ShimServer(QuinceServer):
    """A QuinceServer whose command runs through `env` with the shim's variables (same pid)."""

    def __init__(self, data_dir: Path, *, env: dict[str, str] | None, **kwargs) -> None:
        super().__init__(data_dir, **kwargs)
        self.env = dict(env or {})

    def command(self) -> list[str]:
        base = super().command()
        if not self.env:
            return base
        return ["env"] + [f"{k}={v}" for k, v in sorted(self.env.items())] + base

    def log_offset(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def timed_stop(self) -> tuple[int | None, float, str, list[str]]:
        """SIGTERM; returns (exit code or None when it hung, seconds, stderr since, stdout)."""
        offset = self.log_offset()
        lines_before = len(self.stdout_lines)
        began = time.monotonic()
        try:
            code: int | None = self.stop(timeout_s=STOP_BOUND_S)
        except ServerError:
            code = None
        took = time.monotonic() - began
        return code, took, self.log_since(offset), self.stdout_lines[lines_before:]


class Shim:
    """The shim's trigger file and log."""

    def __init__(self, work: Path, library: Path, name: str) -> None:
        self.library = library
        self.trigger = work / f"{name}.arm"
        self.log = work / f"{name}.shim.log"

    def env(self) -> dict[str, str]:
        return {"LD_PRELOAD": str(self.library), "QUINCE_FSYNC_TRIGGER": str(self.trigger),
                "QUINCE_FSYNC_LOG": str(self.log)}

    def arm(self, config: str) -> None:
        # Written under another name and renamed, so the shim never reads half a config.
        temp = self.trigger.with_suffix(".tmp")
        temp.write_text(config + "\n")
        os.rename(temp, self.trigger)

    def disarm(self) -> None:
        try:
            self.trigger.unlink()
        except FileNotFoundError:
            pass

    def lines(self) -> list[str]:
        try:
            return self.log.read_text(errors="replace").splitlines()
        except FileNotFoundError:
            return []


# -- HTTP ---------------------------------------------------------------------------------------


class Api:
    """A requests session against one database; answers (status, parsed body)."""

    def __init__(self, url: str, database: str = "_system") -> None:
        self.base = url if database == "_system" else f"{url}/_db/{database}"
        self.session = requests.Session()
        self.session.auth = ("root", ROOT_PASSWORD)

    def call(self, method: str, path: str, body=None, **params) -> tuple[int, object]:
        query = {k: ("true" if v is True else "false" if v is False else v) for k, v in params.items()}
        resp = self.session.request(method, self.base + path, params=query or None,
                                    data=None if body is None else json.dumps(body),
                                    headers={"Content-Type": "application/json"}, timeout=HTTP_TIMEOUT_S)
        try:
            parsed = resp.json() if resp.content else None
        except ValueError:
            parsed = resp.text
        return resp.status_code, parsed

    def close(self) -> None:
        self.session.close()


def brief(status: int, body) -> str:
    if isinstance(body, dict) and body.get("error"):
        return f"{status}/{body.get('errorNum')} {str(body.get('errorMessage', ''))[:70]}"
    if isinstance(body, list):
        nums = [item.get("errorNum") if isinstance(item, dict) and item.get("error") else "ok" for item in body]
        return f"{status} items {nums}"
    return f"{status}"


def error_num(body) -> int | None:
    return body.get("errorNum") if isinstance(body, dict) else None


def is_refusal(status: int, body) -> bool:
    return status == 503 and error_num(body) == 1004


def is_failure_answer(status: int, body) -> bool:
    """The answers allowed for the write whose fsync failed."""
    return (status, error_num(body)) in ((500, 1305), (503, 1004))


def create_collection(api: Api, name: str, **props) -> str:
    status, body = api.call("POST", "/_api/collection", {"name": name, **props})
    if status != 200:
        raise AssertionError(f"creating collection {name} answered {brief(status, body)}")
    return str(body["id"])


def collection_dir(data_dir: Path, collection_id: str) -> Path:
    """The collection's directory (`collection-<id>` somewhere under the data directory)."""
    found = [p for p in data_dir.rglob(f"collection-{collection_id}") if p.is_dir()]
    if len(found) != 1:
        raise AssertionError(f"expected one directory collection-{collection_id}, found {found}")
    return found[0]


# -- the oracle ---------------------------------------------------------------------------------


class Oracle:
    """Acknowledged state per collection: key -> (v, _rev), or None when removed."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, tuple[int, str] | None]] = {}
        # Writes answered 2xx after a fault was armed: key -> (v, _rev) or None (removed).
        self.late_acks: dict[str, dict[str, tuple[int, str] | None]] = {}
        # Keys of writes refused with 1004: their acknowledged state (or absence) must hold.
        self.refused: dict[str, set[str]] = {}
        # Keys whose write failed with 500 (outcome unknown): key -> (value written or None).
        self.unknown: dict[str, dict[str, int | None]] = {}

    def coll(self, name: str) -> dict[str, tuple[int, str] | None]:
        return self.docs.setdefault(name, {})


class Writer:
    """Seeded document operations on one collection, recorded in the oracle when acknowledged."""

    def __init__(self, api: Api, oracle: Oracle, collection: str, rng: random.Random, pad: int = 64,
                 fixed_size: bool = False) -> None:
        self.api = api
        self.fixed_size = fixed_size
        self.oracle = oracle
        self.collection = collection
        self.rng = rng
        self.pad = pad
        self.next_key = 0
        self.next_value = 1

    def fresh_key(self) -> str:
        self.next_key += 1
        return f"k{self.next_key:05d}"

    def value(self) -> int:
        self.next_value += 1
        return self.next_value

    def body(self, key: str | None, v: int) -> dict:
        size = self.pad if self.fixed_size else self.rng.randrange(self.pad // 2, self.pad + 1)
        doc = {"v": v, "pad": "p" * size}
        if key is not None:
            doc["_key"] = key
        return doc

    def live_keys(self) -> list[str]:
        return sorted(k for k, s in self.oracle.coll(self.collection).items() if s is not None)

    def op(self, kind: str, *, sync: bool, key: str | None = None) -> tuple[str, str, int | None, int, object]:
        """One write; returns (kind, key, value, status, body). Does not record anything."""
        c = self.collection
        if kind == "insert":
            key = key or self.fresh_key()
            v = self.value()
            status, body = self.api.call("POST", f"/_api/document/{c}", self.body(key, v), waitForSync=sync)
        elif kind == "replace":
            v = self.value()
            status, body = self.api.call("PUT", f"/_api/document/{c}/{key}", self.body(None, v), waitForSync=sync)
        elif kind == "update":
            v = self.value()
            status, body = self.api.call("PATCH", f"/_api/document/{c}/{key}", {"v": v}, waitForSync=sync)
        elif kind == "remove":
            v = None
            status, body = self.api.call("DELETE", f"/_api/document/{c}/{key}", waitForSync=sync)
        else:
            raise ValueError(kind)
        return kind, key, v, status, body

    def random_op(self, *, sync: bool) -> tuple[str, str, int | None, int, object]:
        live = self.live_keys()
        kind = self.rng.choice(["insert", "insert", "replace", "update", "remove"]) if live else "insert"
        return self.op(kind, sync=sync, key=self.rng.choice(live) if kind != "insert" else None)

    def record_ack(self, kind: str, key: str, v: int | None, status: int, body, *, late: bool = False) -> bool:
        """Records a 2xx answer; returns False when it was not one."""
        if not 200 <= status < 300:
            return False
        state = None if kind == "remove" else (v, body["_rev"])
        self.oracle.coll(self.collection)[key] = state
        if late:
            self.oracle.late_acks.setdefault(self.collection, {})[key] = state
        return True

    def acked_ops(self, count: int, *, sync: bool = True) -> None:
        for _ in range(count):
            kind, key, v, status, body = self.random_op(sync=sync)
            expected = (201, 200) if sync else (202,)
            if status not in expected or not self.record_ack(kind, key, v, status, body):
                raise AssertionError(f"{kind} {self.collection}/{key} before any fault answered "
                                     f"{brief(status, body)}")


def read_all(api: Api, collection: str, keys: list[str]) -> tuple[dict[str, dict], str | None]:
    """Reads `keys` with onlyget; returns (found documents, problem or None)."""
    found: dict[str, dict] = {}
    for offset in range(0, len(keys), 500):
        batch = keys[offset:offset + 500]
        status, body = api.call("PUT", f"/_api/document/{collection}", batch, onlyget=True)
        if status != 200 or not isinstance(body, list):
            return found, f"onlyget answered {brief(status, body)}"
        for key, item in zip(batch, body):
            if isinstance(item, dict) and "_key" in item:
                found[key] = item
            elif not (isinstance(item, dict) and item.get("errorNum") == 1202):
                return found, f"onlyget item for {key}: {item}"
    return found, None


def verify_collection(report: Report, api: Api, oracle: Oracle, collection: str, label: str,
                      *, extra_may_exist: set[str] = frozenset()) -> dict[str, dict]:
    """Every acknowledged write holds (value and _rev), removed keys are absent, count agrees."""
    expected = oracle.coll(collection)
    unknown = oracle.unknown.get(collection, {})
    refused = oracle.refused.get(collection, set())
    keys = sorted(set(expected) | set(unknown) | refused | set(extra_may_exist))
    found, problem = read_all(api, collection, keys)
    problems: list[str] = [problem] if problem else []
    for key in keys:
        doc = found.get(key)
        state = expected.get(key)
        if key in unknown:
            # The write whose fsync failed: either outcome, but nothing else.
            got = doc["v"] if doc else None
            if state is not None and doc is not None and got == state[0]:
                if doc.get("_rev") != state[1]:
                    problems.append(f"{key}: holds v={got} with _rev {doc.get('_rev')}, acknowledged {state}")
            elif got != unknown[key] and not (state is None and doc is None):
                problems.append(f"{key}: holds {got}, allowed: acknowledged {state} or the failed write's "
                                f"{unknown[key]}")
            continue
        if state is None:
            if doc is not None and key in expected:
                problems.append(f"{key}: acknowledged as removed, holds v={doc.get('v')}")
            elif doc is not None and key not in extra_may_exist:
                problems.append(f"{key}: only ever refused, holds v={doc.get('v')}")
            continue
        if doc is None:
            problems.append(f"{key}: acknowledged (v={state[0]}, _rev={state[1]}) is missing")
        elif (doc.get("v"), doc.get("_rev")) != state:
            problems.append(f"{key}: holds (v={doc.get('v')}, _rev={doc.get('_rev')}), acknowledged {state}")
    status, body = api.call("GET", f"/_api/collection/{collection}/count")
    count = body.get("count") if status == 200 and isinstance(body, dict) else None
    if count != len(found):
        problems.append(f"count {count} (answer {brief(status, body)}) != documents found {len(found)}")
    live = sum(1 for s in expected.values() if s is not None)
    report.check(f"{label}: {collection}: {live} acknowledged documents with value and _rev, removals hold, "
                 f"count {count}", not problems, "; ".join(problems[:8]))
    return found


# -- scenario helpers -----------------------------------------------------------------------------


def journal_syncs(shim: Shim, directory: Path) -> list[str]:
    prefix = f"path={directory}/journal-"
    return [line for line in shim.lines() if line.startswith("fdatasync ") and prefix in line]


def failed_calls(shim: Shim) -> list[str]:
    return [line for line in shim.lines() if line.endswith("result=EIO")]


def poll(condition, bound_s: float = POLL_BOUND_S) -> bool:
    """Waits for `condition()` with a bound (for the background syncer and maintenance pass
    only)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def refused_everything(report: Report, writer: Writer, label: str, *, also_admin: bool = True) -> None:
    """Every kind of write to the poisoned collection answers 503/1004 and leaves no trace."""
    c = writer.collection
    oracle = writer.oracle
    live = writer.live_keys()
    target = live[0] if live else "k00001"
    attempts = []
    for sync in (True, False):
        for kind in ("insert", "replace", "update", "remove"):
            attempts.append((kind, sync))
    outcomes = []
    for kind, sync in attempts:
        kind, key, v, status, body = writer.op(kind, sync=sync, key=None if kind == "insert" else target)
        outcomes.append((f"{kind} waitForSync={str(sync).lower()}", status, body))
        if is_refusal(status, body):
            oracle.refused.setdefault(c, set()).add(key)
        else:
            writer.record_ack(kind, key, v, status, body, late=True)
    keys = [writer.fresh_key(), writer.fresh_key()]
    status, body = writer.api.call("POST", f"/_api/document/{c}",
                                   [{"_key": k, "v": writer.value()} for k in keys], waitForSync=True)
    outcomes.append(("multi-document insert", status, body))
    items_refused = isinstance(body, list) and all(isinstance(i, dict) and i.get("errorNum") == 1004 for i in body)
    for k in keys:
        oracle.refused.setdefault(c, set()).add(k)
    if also_admin:
        status2, body2 = writer.api.call("PUT", f"/_api/collection/{c}/truncate")
        outcomes.append(("truncate", status2, body2))
        status3, body3 = writer.api.call("PUT", f"/_api/collection/{c}/compact")
        outcomes.append(("compact", status3, body3))
    bad = [f"{what}: {brief(s, b)}" for what, s, b in outcomes
           if not is_refusal(s, b) and not (what == "multi-document insert" and items_refused)]
    report.check(f"{label}: every write to {c} answers 503/1004 ({len(outcomes)} kinds)", not bad, "; ".join(bad))
    if items_refused and not is_refusal(status, body):
        report.note(f"{label}: a multi-document insert into the poisoned {c} answers {brief(status, body)} "
                    f"(per-item 1004), not 503")


def reads_work(report: Report, api: Api, oracle: Oracle, collection: str, label: str) -> None:
    state = oracle.coll(collection)
    unknown = oracle.unknown.get(collection, {})
    live = [k for k, s in sorted(state.items()) if s is not None and k not in unknown]
    bad = []
    for key in live[:20]:
        status, body = api.call("GET", f"/_api/document/{collection}/{key}")
        if status != 200 or (body.get("v"), body.get("_rev")) != state[key]:
            bad.append(f"GET {key}: {brief(status, body)}")
    status, body = api.call("GET", f"/_api/collection/{collection}/figures")
    if status != 200:
        bad.append(f"figures: {brief(status, body)}")
    report.check(f"{label}: reads of {collection} work (GET of {min(20, len(live))} documents, figures)",
                 not bad, "; ".join(bad))
    verify_collection(report, api, oracle, collection, label)


def stop_and_report(report: Report, srv: ShimServer, label: str) -> None:
    code, took, log, stdout = srv.timed_stop()
    interesting = [line for line in log.splitlines()
                   if any(w in line for w in ("ERROR", "WARN", "stopped", "failed", "panic"))]
    report.check(f"{label}: SIGTERM ends the server within {STOP_BOUND_S:.0f} s and not by a signal",
                 code is not None and code >= 0, f"exit {code} after {took:.2f} s")
    report.note(f"{label}: SIGTERM -> exit status {code} after {took:.2f} s; stdout after the ready line: "
                f"{stdout}")
    for line in interesting[-6:]:
        report.note(f"{label}: log: {line[:300]}")


# -- scenario 1: the write path ---------------------------------------------------------------


def scenario_write_path(report: Report, work: Path, library: Path, rng: random.Random) -> None:
    print("scenario 1: a failed fdatasync on the write path", flush=True)
    shim = Shim(work, library, "s1")
    data = work / "s1-data"
    srv = ShimServer(data, env=shim.env(), log_path=work / "s1-server.log")
    oracle = Oracle()
    srv.start()
    api = Api(srv.url)
    try:
        faulty_id = create_collection(api, "faulty")
        create_collection(api, "bystander")
        status, body = api.call("POST", "/_api/database", {"name": "otherdb"})
        assert status == 201, f"creating otherdb answered {brief(status, body)}"
        other_api = Api(srv.url, "otherdb")
        create_collection(other_api, "elsewhere")
        faulty_dir = collection_dir(data, faulty_id)

        writer = Writer(api, oracle, "faulty", rng, pad=rng.randrange(32, 2048))
        bystander = Writer(api, oracle, "bystander", rng)
        elsewhere = Writer(other_api, oracle, "elsewhere", rng)
        writer.acked_ops(rng.randrange(20, 60))
        writer.acked_ops(rng.randrange(1, 5), sync=False)
        writer.acked_ops(1)  # covers the unsynced ones: nothing is left for the background syncer
        bystander.acked_ops(5)
        elsewhere.acked_ops(5)

        syncs = journal_syncs(shim, faulty_dir)
        report.check("the shim is interposed: the server's fdatasync of the journal went through it",
                     len(syncs) > 0, f"{len(syncs)} journal fdatasyncs logged, e.g. {syncs[:1]}")

        # Arm: the next fdatasync (or fsync) of any file of `faulty` fails, once.
        shim.arm(f"match={faulty_dir}/ mode=once")
        live = writer.live_keys()
        kind = rng.choice(["insert", "replace", "update", "remove"]) if live else "insert"
        kind, key, v, status, body = writer.op(kind, sync=True, key=None if kind == "insert" else rng.choice(live))
        report.check(f"first synced write after the arm ({kind} {key}) is not acknowledged: 500/1305 or 503/1004",
                     is_failure_answer(status, body), brief(status, body))
        report.note(f"scenario 1: the write whose fsync failed answered {brief(status, body)}")
        before = oracle.coll("faulty").get(key)
        if 200 <= status < 300:
            writer.record_ack(kind, key, v, status, body, late=True)
        else:
            oracle.unknown.setdefault("faulty", {})[key] = v
            # Is the failed write visible to readers meanwhile?
            s2, b2 = api.call("GET", f"/_api/document/faulty/{key}")
            visible = b2.get("v") if s2 == 200 else None
            if visible == v and v is not None:
                report.note(f"scenario 1: the write that answered {status} is visible to reads while the "
                            f"server runs (GET {key} -> v={visible}, acknowledged state {before})")
            else:
                report.note(f"scenario 1: the failed write is not visible (GET {key} -> {brief(s2, b2)})")
        failures = failed_calls(shim)
        report.check("exactly one fsync failed, on a file of faulty", len(failures) == 1, "; ".join(failures))

        refused_everything(report, writer, "scenario 1")
        reads_work(report, api, oracle, "faulty", "scenario 1 (poisoned)")

        # The rest of the server: the poison is per collection.
        results = []
        for w in (bystander, elsewhere):
            kind, key, v, status, body = w.op("insert", sync=True)
            results.append((w.collection, status, body))
            w.record_ack(kind, key, v, status, body)
        bad = [f"{c}: {brief(s, b)}" for c, s, b in results if s != 201]
        report.check("other collections (same database, another database) still accept synced writes",
                     not bad, "; ".join(bad) or "201, 201")
        status, body = api.call("POST", "/_api/collection", {"name": "made_after"})
        report.note(f"scenario 1: creating a collection after the failure answered {brief(status, body)}")
        status, body = api.call("PUT", "/_api/collection/faulty/properties", {"waitForSync": True})
        report.note(f"scenario 1: changing faulty's properties while poisoned answered {brief(status, body)}")

        # Disarmed, the collection stays read-only: the failed fsync is never retried.
        shim.disarm()
        kind, key, v, status, body = writer.op("insert", sync=True)
        if is_refusal(status, body):
            oracle.refused.setdefault("faulty", set()).add(key)
        else:
            writer.record_ack(kind, key, v, status, body, late=True)
        report.check("after disarming, faulty still refuses writes (503/1004)", is_refusal(status, body),
                     brief(status, body))
        reads_work(report, api, oracle, "bystander", "scenario 1")
        other_api.close()
    finally:
        api.close()
        stop_and_report(report, srv, "scenario 1")

    lines = shim.lines()
    failed_at = next((i for i, line in enumerate(lines) if line.endswith("result=EIO")), None)
    retried = [line for line in lines[(failed_at or 0) + 1:]
               if failed_at is not None and f"path={faulty_dir}/journal-" in line]
    report.check("no fsync of faulty's journal after the failed one (never retried, also not at shutdown)",
                 failed_at is not None and not retried, "; ".join(retried[:3]))

    restart_and_verify(report, work, data, oracle, ["faulty", "bystander"], {"otherdb": ["elsewhere"]},
                       "scenario 1")


def restart_and_verify(report: Report, work: Path, data: Path, oracle: Oracle, collections: list[str],
                       other_dbs: dict[str, list[str]], label: str) -> None:
    """Restarts without the shim; checks acknowledged state and that writes work again."""
    srv = ShimServer(data, env=None, log_path=work / f"{label.replace(' ', '-')}-restart.log")
    try:
        srv.start()
    except ServerError as err:
        report.check(f"{label}: restart without the shim", False, str(err)[:2000])
        return
    report.check(f"{label}: restart without the shim", True)
    try:
        for database, names in [("_system", collections)] + list(other_dbs.items()):
            api = Api(srv.url, database)
            try:
                for name in names:
                    verify_collection(report, api, oracle, name, f"{label} after restart")
                    writer = Writer(api, oracle, name, random.Random(0))
                    writer.next_key = 90000
                    kind, key, v, status, body = writer.op("insert", sync=True)
                    report.check(f"{label} after restart: {name} accepts synced writes again", status == 201,
                                 brief(status, body))
            finally:
                api.close()
    finally:
        code, took, _, _ = srv.timed_stop()
        report.check(f"{label}: the clean server stops with status 0", code == 0, f"exit {code} after {took:.2f} s")


# -- scenario 2: every fsync fails -------------------------------------------------------------


def scenario_everything_fails(report: Report, work: Path, library: Path, rng: random.Random) -> None:
    print("scenario 2: every fsync and fdatasync fails (sticky)", flush=True)
    shim = Shim(work, library, "s2")
    data = work / "s2-data"
    srv = ShimServer(data, env=shim.env(), log_path=work / "s2-server.log",
                     extra_args=["--database.sync-interval", "50"])
    oracle = Oracle()
    srv.start()
    api = Api(srv.url)
    try:
        dirs = {}
        for name in ("alpha", "beta", "gamma", "doomed"):
            dirs[name] = collection_dir(data, create_collection(api, name))
        writers = {name: Writer(api, oracle, name, rng) for name in ("alpha", "beta", "gamma", "doomed")}
        for w in writers.values():
            w.acked_ops(rng.randrange(5, 15))
        # gamma's next journal is made by the maintenance pass after its first writes (an
        # fsync); let that happen before every fsync fails, so gamma has no fsync pending.
        wait_for_spare(report, "gamma", dirs["gamma"])

        shim.arm("mode=sticky")
        # alpha: one synced write.
        kind, key, v, status, body = writers["alpha"].op("insert", sync=True)
        report.check("alpha: a synced write answers 500/1305 or 503/1004", is_failure_answer(status, body),
                     brief(status, body))
        oracle.unknown.setdefault("alpha", {})[key] = v

        # beta: 8 concurrent synced writers meeting in one group commit; none may be acknowledged.
        answers: list[tuple[str, int, object]] = []
        lock = threading.Lock()
        keys = [writers["beta"].fresh_key() for _ in range(8)]

        def one(key: str) -> None:
            session_api = Api(srv.url)
            try:
                status, body = session_api.call("POST", "/_api/document/beta", {"_key": key, "v": 7}, waitForSync=True)
            except requests.RequestException as err:
                status, body = -1, str(err)
            finally:
                session_api.close()
            with lock:
                answers.append((key, status, body))

        threads = [threading.Thread(target=one, args=(k,)) for k in keys]
        for t in threads:
            t.start()
        for t in threads:
            t.join(HTTP_TIMEOUT_S + 5)
        statuses = sorted(brief(s, b) for _, s, b in answers)
        report.check("beta: 8 concurrent synced writes: none acknowledged, each 500/1305 or 503/1004",
                     len(answers) == 8 and all(is_failure_answer(s, b) for _, s, b in answers), "; ".join(statuses))
        for key, status, _ in answers:
            oracle.unknown.setdefault("beta", {})[key] = 7

        # gamma: a write without waitForSync is acknowledged (202) before any fsync; the
        # background syncer's fsync then fails, and gamma must stop accepting writes.
        kind, key, v, status, body = writers["gamma"].op("insert", sync=False)
        report.check("gamma: a write without waitForSync is acknowledged with 202 before the fsync",
                     status == 202, brief(status, body))
        writers["gamma"].record_ack(kind, key, v, status, body, late=True)
        probe_keys: list[str] = []

        def gamma_refuses() -> bool:
            k2, key2, v2, s2, b2 = writers["gamma"].op("insert", sync=False)
            if is_refusal(s2, b2):
                oracle.refused.setdefault("gamma", set()).add(key2)
                return True
            if 200 <= s2 < 300:
                writers["gamma"].record_ack(k2, key2, v2, s2, b2, late=True)
            else:
                oracle.unknown.setdefault("gamma", {})[key2] = v2
            probe_keys.append(f"{key2}:{brief(s2, b2)}")
            return False

        refused = poll(gamma_refuses)
        report.check(f"gamma: after the background fsync fails, writes answer 503/1004 (within {POLL_BOUND_S:.0f} s)",
                     refused, f"{len(probe_keys)} writes accepted first: {probe_keys[:5]}")
        if probe_keys:
            report.note(f"scenario 2: gamma accepted {len(probe_keys)} unsynced writes (202) before the "
                        f"background fsync failure latched it")

        # Catalog changes while every fsync fails.
        for what, method, path, body in (
            ("create collection", "POST", "/_api/collection", {"name": "born_failing"}),
            ("create database", "POST", "/_api/database", {"name": "dbfailing"}),
            ("drop collection doomed", "DELETE", "/_api/collection/doomed", None),
            ("create user", "POST", "/_api/user", {"user": "u1", "passwd": "x"}),
        ):
            status, answer = api.call(method, path, body)
            report.note(f"scenario 2: {what} while every fsync fails answered {brief(status, answer)}")
        catalog_while_failing = catalog_state(api)
        report.note(f"scenario 2: catalog while failing: {catalog_while_failing}")
        for name in ("alpha", "beta", "gamma"):
            reads_work(report, api, oracle, name, "scenario 2 (failing)")
        shim.disarm()
        status, answer = api.call("POST", "/_api/document/alpha", {"v": 1}, waitForSync=True)
        report.check("alpha: after disarming, writes still answer 503/1004", is_refusal(status, answer),
                     brief(status, answer))
    finally:
        api.close()
        stop_and_report(report, srv, "scenario 2")

    # Restart without the shim: what survived of the catalog changes is reported, acknowledged
    # documents are checked.
    srv2 = ShimServer(data, env=None, log_path=work / "s2-restart.log")
    try:
        srv2.start()
    except ServerError as err:
        report.check("scenario 2: restart without the shim", False, str(err)[:2000])
        return
    report.check("scenario 2: restart without the shim", True)
    api = Api(srv2.url)
    try:
        catalog_after = catalog_state(api)
        report.note(f"scenario 2: catalog after the restart: {catalog_after}")
        report.check("scenario 2: collections and databases after the restart are those listed while the "
                     "fsyncs failed (a failed catalog change is either applied or not, never undone later)",
                     catalog_after == catalog_while_failing, f"while failing {catalog_while_failing}, "
                     f"after the restart {catalog_after}")
        for name in ("alpha", "beta", "gamma"):
            verify_collection(report, api, oracle, name, "scenario 2 after restart")
            status, body = api.call("POST", f"/_api/document/{name}", {"v": 1}, waitForSync=True)
            report.check(f"scenario 2 after restart: {name} accepts synced writes", status == 201, brief(status, body))
    finally:
        api.close()
        code, took, _, _ = srv2.timed_stop()
        report.check("scenario 2: the clean server stops with status 0", code == 0, f"exit {code} after {took:.2f} s")


def catalog_state(api: Api) -> dict[str, list[str]]:
    """Non-system collection names of _system, and database names."""
    status, answer = api.call("GET", "/_api/collection")
    names = sorted(c["name"] for c in answer.get("result", []) if not c["name"].startswith("_")) \
        if status == 200 else [f"answer {status}"]
    status, dbs = api.call("GET", "/_api/database")
    return {"collections": names, "databases": sorted(dbs.get("result", [])) if status == 200 else [f"answer {status}"]}


# -- scenario 3: the journal seal ---------------------------------------------------------------


SEAL_STEPS = [
    # (collection, shim config relative to the collection dir, what it hits, on the crossing
    # write's path)
    ("seal_old", "fn=fdatasync match={dir}/journal- mode=once",
     "the handed-off journal's fdatasync", True),
    ("seal_dir", "fn=fsync match={dir} mode=once",
     "a directory fsync (the seal's rename in the maintenance pass, or a journal start)", False),
    ("seal_new", "fn=fdatasync match={dir}/journal-2.db mode=once", "the new journal's fdatasync", True),
]


def fill_to_boundary(api: Api, w: Writer) -> None:
    """Synced inserts of one size until the next one cannot fit in the active journal (record
    sizes are equal: same key length, value length and _rev length)."""
    name = w.collection
    status, fig = api.call("GET", f"/_api/collection/{name}/figures")
    sealed = fig["figures"]["datafiles"]["count"]
    record_size = None
    for _ in range(40):
        status, fig = api.call("GET", f"/_api/collection/{name}/figures")
        journal_bytes = fig["figures"]["journals"]["fileSize"]
        if record_size is not None and journal_bytes + record_size + 64 > JOURNAL_SIZE:
            return
        kind, key, v, status, body = w.op("insert", sync=True)
        if not w.record_ack(kind, key, v, status, body):
            raise AssertionError(f"filling {name} answered {brief(status, body)}")
        status, fig2 = api.call("GET", f"/_api/collection/{name}/figures")
        assert fig2["figures"]["datafiles"]["count"] == sealed, f"{name}: sealed before the fault was armed"
        record_size = fig2["figures"]["journals"]["fileSize"] - journal_bytes
    raise AssertionError(f"{name}: the journal never got near full")


def wait_for_spare(report: Report, name: str, directory: Path) -> None:
    """Waits until the maintenance pass has prepared the next journal (a spare, named
    journal-<fid>.db once its header is durable), so that the crossing write takes it and a
    fault armed now hits the steps after the hand-off, not the making of the spare."""
    ready = poll(lambda: len(list(directory.glob("journal-*.db"))) >= 2)
    report.check(f"{name}: the spare journal is ready before the crossing write", ready,
                 str(sorted(p.name for p in directory.iterdir())))


def scenario_seal(report: Report, work: Path, library: Path, rng: random.Random) -> None:
    print("scenario 3: a failed fsync inside a journal seal, and in the background hint writer", flush=True)
    shim = Shim(work, library, "s3")
    data = work / "s3-data"
    srv = ShimServer(data, env=shim.env(), log_path=work / "s3-server.log",
                     extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)])
    oracle = Oracle()
    srv.start()
    api = Api(srv.url)
    names = [name for name, _, _, _ in SEAL_STEPS] + ["hint_dir"]
    try:
        dirs = {}
        for name in names:
            dirs[name] = collection_dir(data, create_collection(api, name, journalSize=JOURNAL_SIZE))
        doc_bytes = SEAL_DOC_BYTES + rng.randrange(0, 20_000)
        for name, config, what, on_path in SEAL_STEPS:
            w = Writer(api, oracle, name, rng, pad=doc_bytes, fixed_size=True)
            fill_to_boundary(api, w)
            wait_for_spare(report, name, dirs[name])
            status, fig = api.call("GET", f"/_api/collection/{name}/figures")
            before = fig["figures"]
            shim.arm(config.format(dir=dirs[name]))
            kind, key, v, status, body = w.op("insert", sync=True)
            if not on_path:
                # Off the write's path: wait for the failure, wherever it lands.
                poll(lambda: any(str(dirs[name]) in line for line in failed_calls(shim)))
            shim.disarm()
            failures = [line for line in failed_calls(shim) if str(dirs[name]) in line]
            report.check(f"{name}: the fsync that failed is {what}", len(failures) == 1,
                         "; ".join(failures) or "no call failed")
            if on_path:
                report.check(f"{name}: the write crossing the boundary is not acknowledged (500/1305 or 503/1004)",
                             is_failure_answer(status, body), brief(status, body))
            else:
                report.check(f"{name}: the write crossing the boundary is acknowledged (201) or refused "
                             f"(500/1305 or 503/1004)", status == 201 or is_failure_answer(status, body),
                             brief(status, body))
            report.note(f"{name}: failing {what} -> {brief(status, body)}")
            if 200 <= status < 300:
                w.record_ack(kind, key, v, status, body, late=True)
            else:
                oracle.unknown.setdefault(name, {})[key] = v
            status, fig = api.call("GET", f"/_api/collection/{name}/figures")
            after = fig["figures"] if status == 200 else fig
            report.note(f"{name}: figures before: datafiles {before['datafiles']} journals {before['journals']}; "
                        f"after: datafiles {after.get('datafiles')} journals {after.get('journals')}")
            refused_everything(report, w, f"scenario 3 {name}", also_admin=False)
            reads_work(report, api, oracle, name, f"scenario 3 {name} (poisoned)")
            files = sorted(p.name for p in dirs[name].iterdir())
            report.note(f"{name}: files on disk while poisoned: {files}")
        hint_directory_fsync(report, api, shim, srv, oracle, Writer(api, oracle, "hint_dir", rng, pad=doc_bytes,
                                                                     fixed_size=True), dirs["hint_dir"])
    finally:
        api.close()
        stop_and_report(report, srv, "scenario 3")
    for name in names:
        files = sorted(p.name for p in collection_dir(data, name_to_id(data, name)).iterdir())
        report.note(f"{name}: files on disk after SIGTERM: {files}")
    restart_and_verify(report, work, data, oracle, names, {}, "scenario 3")


def hint_directory_fsync(report: Report, api: Api, shim: Shim, srv: ShimServer, oracle: Oracle, w: Writer,
                         directory: Path) -> None:
    """The maintenance thread gets a failed directory fsync right after the write that hands a
    full journal off (its seal's rename, or the hint after it); what the store does next is
    reported, and acknowledged writes are checked."""
    name = w.collection
    fill_to_boundary(api, w)
    # The maintenance pass prepares the next journal (a spare, named journal-<fid>.db once its
    # header is durable) in the background; wait for it, so that the armed fault hits the work
    # after the crossing write (the seal's rename, then the hint) and not the spare.
    wait_for_spare(report, name, directory)
    offset = srv.log_offset()
    shim.arm(f"fn=fsync match={directory} thread=quince-maint mode=once")
    kind, key, v, status, body = w.op("insert", sync=True)
    # Nothing fails on its path, but the maintenance pass may seal (and fail) before the round
    # that would acknowledge it: then it is refused, never acknowledged.
    report.check(f"{name}: the write that hands the journal off is acknowledged (201) or refused "
                 f"(500/1305 or 503/1004)", status == 201 or is_failure_answer(status, body),
                 brief(status, body))
    if not w.record_ack(kind, key, v, status, body):
        oracle.unknown.setdefault(name, {})[key] = v
    failed = poll(lambda: any(str(directory) in line for line in failed_calls(shim)))
    shim.disarm()
    failures = [line for line in failed_calls(shim) if str(directory) in line]
    report.check(f"{name}: the maintenance thread's directory fsync after the seal failed "
                 f"(within {POLL_BOUND_S:.0f} s)", failed, "; ".join(failures) or "no call failed")
    log = srv.log_since(offset)
    warned = [line for line in log.splitlines() if "hint.write_failed" in line or "storage.poisoned" in line]
    report.note(f"{name}: server log: {[line.split('  ', 1)[-1][:160] for line in warned]}")
    lines_before = len(shim.lines())
    kind, key, v, status, body = w.op("insert", sync=True)
    report.check(f"{name}: a synced write after the hint's failed directory fsync is refused (503/1004)",
                 is_refusal(status, body), brief(status, body))
    if 200 <= status < 300:
        w.record_ack(kind, key, v, status, body, late=True)
        # Cross the next boundary: the seal's rename is made durable by a later fsync of the
        # very directory whose fsync failed.
        fill_to_boundary(api, w)
        kind, key, v, status, body = w.op("insert", sync=True)
        w.record_ack(kind, key, v, status, body, late=True)
        later = [line.split(" armed")[0] for line in shim.lines()[lines_before:]
                 if line.startswith("fsync ") and f"path={directory} " in line]
        report.note(f"{name}: after it, the next seal answered {brief(status, body)} and the server fsynced the "
                    f"same directory {len(later)} more times, trusting their success (e.g. {later[:1]})")
    elif is_refusal(status, body):
        oracle.refused.setdefault(name, set()).add(key)
    else:
        oracle.unknown.setdefault(name, {})[key] = v
    reads_work(report, api, oracle, name, f"scenario 3 {name}")


def name_to_id(data: Path, name: str) -> str:
    for parameter in data.rglob("collection-*/parameter.json"):
        try:
            if json.loads(parameter.read_text()).get("name") == name:
                return parameter.parent.name.split("-", 1)[1]
        except (OSError, ValueError):
            continue
    raise AssertionError(f"no collection directory for {name}")


# -- scenario 4: compaction ------------------------------------------------------------------


COMPACT_STEPS = [
    # (collection, shim config relative to the collection dir, what it hits)
    ("compact_out", "fn=fdatasync match={dir}/compaction- mode=sticky", "the compaction output's fdatasync"),
    ("compact_hint", "fn=fdatasync match={dir}/datafile- mode=sticky", "the fdatasync of the output's hint"),
    ("compact_hintdir", "fn=fsync match={dir} mode=once", "the first directory fsync (after the hint)"),
    ("compact_commit", "fn=fsync match={dir} after=1 mode=once",
     "the second directory fsync (after the rename that commits)"),
]


def scenario_compaction(report: Report, work: Path, library: Path, rng: random.Random) -> None:
    print("scenario 4: a failed fsync during PUT /_api/collection/{c}/compact", flush=True)
    shim = Shim(work, library, "s4")
    data = work / "s4-data"
    srv = ShimServer(data, env=shim.env(), log_path=work / "s4-server.log",
                     extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)])
    oracle = Oracle()
    srv.start()
    api = Api(srv.url)
    names = [name for name, _, _ in COMPACT_STEPS]
    try:
        for name, config, what in COMPACT_STEPS:
            directory = collection_dir(data, create_collection(api, name, journalSize=JOURNAL_SIZE))
            w = Writer(api, oracle, name, rng, pad=rng.randrange(60_000, 90_000))
            for _ in range(26):
                kind, key, v, status, body = w.op("insert", sync=True)
                assert w.record_ack(kind, key, v, status, body), brief(status, body)
            # Three keys in four change, so sealed datafiles are at least half dead (the policy's
            # share) and keep live records beside dead ones (rewritten, not dropped whole).
            for index, key in enumerate(w.live_keys()):
                if index % 4 != 0:
                    kind, key, v, status, body = w.op(rng.choice(["replace", "remove"]), sync=True, key=key)
                    assert w.record_ack(kind, key, v, status, body), brief(status, body)
            # Full journals are sealed by the maintenance pass: wait until none is pending, so
            # that the fault hits the compaction and not a seal.
            def figures_now() -> dict:
                return api.call("GET", f"/_api/collection/{name}/figures")[1]["figures"]

            poll(lambda: figures_now()["journals"]["count"] == 1)
            figures = figures_now()
            report.check(f"{name}: sealed datafiles and dead records exist before compacting",
                         figures["datafiles"]["count"] >= 1 and figures["dead"]["count"] > 0
                         and figures["journals"]["count"] == 1,
                         f"datafiles {figures['datafiles']}, journals {figures['journals']}, "
                         f"dead {figures['dead']}")
            # The background hint writer must be done with every sealed datafile, so that the
            # fault hits the compaction and not a hint written meanwhile.
            hints_done = poll(lambda: all(p.with_suffix(".hint").exists() for p in directory.glob("datafile-*.db")))
            assert hints_done, f"{name}: hints not written within {POLL_BOUND_S:.0f} s"
            lines_before = len(shim.lines())
            shim.arm(config.format(dir=directory))
            status, body = api.call("PUT", f"/_api/collection/{name}/compact")
            shim.disarm()
            calls = [line.split(" armed")[0].replace(f"path={directory}", "path=<dir>") + " -> " +
                     line.rsplit("result=", 1)[1]
                     for line in shim.lines()[lines_before:] if str(directory) in line and "armed=1" in line]
            failures = [c for c in calls if c.endswith("EIO")]
            report.note(f"{name}: failing {what}: compact answered {brief(status, body)}")
            report.note(f"{name}: fsync calls on the collection while armed: {calls}")
            if report.check(f"{name}: a fault was injected into the compaction ({what})", len(failures) >= 1,
                            "; ".join(failures) or "no call failed"):
                report.check(f"{name}: compact does not answer success when its fsync failed",
                             not 200 <= status < 300, brief(status, body))
            files = sorted(p.name for p in directory.iterdir())
            report.note(f"{name}: files after the failed compaction: {files}")
            reads_work(report, api, oracle, name, f"scenario 4 {name}")
            kind, key, v, status, body = w.op("insert", sync=True)
            report.check(f"{name}: a synced write after the failed compaction is refused (503/1004)",
                         is_refusal(status, body), brief(status, body))
            if 200 <= status < 300:
                w.record_ack(kind, key, v, status, body, late=True)
            elif is_refusal(status, body):
                oracle.refused.setdefault(name, set()).add(key)
            else:
                oracle.unknown.setdefault(name, {})[key] = v
    finally:
        api.close()
        stop_and_report(report, srv, "scenario 4")
    restart_and_verify(report, work, data, oracle, names, {}, "scenario 4")
    for name in names:
        directory = collection_dir(data, name_to_id(data, name))
        files = sorted(p.name for p in directory.iterdir())
        leftovers = [f for f in files if f.startswith("compaction-") or f.endswith(".tmp")
                     or (f.endswith(".hint") and f[:-5] + ".db" not in files)]
        report.check(f"{name}: no compaction debris after the restart", not leftovers, f"files {files}")


# -- main ---------------------------------------------------------------------------------------


def build_shim(work: Path) -> Path | None:
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    library = work / "libfsyncfail.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-O2", "-Wall", "-o", str(library), str(SHIM_SOURCE), "-ldl"],
                   check=True, timeout=120)
    return library


def main() -> int:
    # A SIGTERM (scripts/test.sh's `timeout`) unwinds through the finally blocks, which stop the
    # servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if platform.system() != "Linux" or not Path("/proc/self/fd").is_dir():
        print("fsync failure test: skipped (needs Linux with /proc)")
        return 0
    if shutil.which("gcc") is None:
        print("fsync failure test: skipped (gcc not found; apt-get install gcc libc6-dev)")
        return 0
    seed = int(os.environ.get("FSYNC_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    print(f"fsync failure test: seed {seed} (set FSYNC_SEED to repeat)", flush=True)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="quince-fsync-"))
    report = Report()
    started = time.monotonic()
    library = build_shim(work)
    assert library is not None
    scenarios = [scenario_write_path, scenario_everything_fails, scenario_seal, scenario_compaction]
    only = os.environ.get("FSYNC_SCENARIOS")
    if only:
        scenarios = [scenarios[int(i) - 1] for i in only.split(",")]
    for scenario in scenarios:
        if time.monotonic() - started > TOTAL_BUDGET_S:
            report.check(f"{scenario.__name__}", False, f"time budget of {TOTAL_BUDGET_S:.0f} s spent")
            continue
        try:
            scenario(report, work, library, random.Random(rng.randrange(2**31)))
        except (AssertionError, ServerError, requests.RequestException, OSError, KeyError, TypeError) as err:
            report.check(f"{scenario.__name__} ran to the end", False, f"{type(err).__name__}: {err}")
    return report.finish("fsync failure test", time.monotonic() - started, seed, work,
                         "data, server logs and shim logs")


if __name__ == "__main__":
    sys.exit(main())
