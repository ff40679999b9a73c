#!/usr/bin/env python3
"""The kill -9 loop: every kind of acknowledged write and DDL survives SIGKILL at any moment.

What it is: a harness that runs `quince serve` on one data directory for many rounds. In each
round, threads of this process write concurrently, all with `waitForSync=true`:

  * single-document inserts (POST), updates (PATCH), replaces (PUT) and removes (DELETE);
  * multi-document POST, PATCH and DELETE with a JSON array body (each item acked on its own,
    only when its result carries no `error`);
  * imports (`POST /_api/import?type=documents&details=true&onDuplicate=replace`, JSON Lines):
    a document is acked only after the reply, and only if `details` does not name it; an
    import that was cut by the kill leaves all its documents in flight;
  * asynchronous jobs (`x-arango-async: store`): acked only once `PUT /_api/job/{id}` handed
    out the job's own 201/200 reply; a job still queued or running at the kill is in flight;
  * a DDL thread that creates, renames (`PUT /_api/collection/{name}/rename`) and drops
    collections, and a writer that writes into those collections by their numeric id (so its
    writes continue across a rename);
  * a compactor that calls `PUT /_api/collection/{c}/compact` (journals are 1 MiB and the
    writes are update-heavy, so the background compaction runs too).

The harness kills the server with SIGKILL at a moment picked by the round's kill mode: a
random delay; right after a drop or rename was sent; right after a compaction was requested;
and, on the way back up, it may kill the restarting server before its ready line (a random
delay below the last start-up time) once or twice before the restart that counts. It then
checks the reopened server against the log of intents and acknowledgements:

  * a key's last acknowledged write holds: the exact document and `_rev` (an acked remove:
    the key is absent), unless a later write to that key was in flight, whose outcome may
    hold instead (an in-flight remove: absent; an in-flight write: its exact document);
  * nothing else exists: every collection's count equals the number of known keys read back,
    so no document exists that no intent created, and no removed key came back;
  * acknowledged DDL holds: a created collection exists, a renamed one exists under its new
    name only with all of its documents and the same id, a dropped one is gone; a DDL call in
    flight at the kill has either happened wholly or not at all; no other collection exists;
  * the server reopens every time; after the last round a graceful stop and start change
    nothing;
  * every other answer is a failure, except a write or compaction refused after a drop of its
    collection was sent (counted and printed: such a write did not happen, and its collection
    is gone), and no request may be outstanding for more than STUCK_S when the kill comes.

Reads go through `PUT /_api/document/{c}?onlyget=true` in batches. The seed is printed;
`KILL_SEED` repeats its decisions (kill modes, delays, operations), `KILL_ROUNDS` sets the
number of rounds (50 by default), `KILL_BUDGET_S` the time budget (default about 4.4 s a round;
rounds left when it is spent count as failures), KILL_KEEP=1 keeps the data directory and logs
of a passing run. KILL_SELFTEST=1 checks the checker: in rounds 1-5 it changes the database
behind the oracle's back after the restart (removes, changes and adds a document, adds a
collection, brings a removed key back) and passes only if each of those rounds is caught.
Thread interleaving is not reproducible; the seed reproduces what is tried, not the exact
schedule. The summary counts what the kills hit (calls cut by the kill, start-ups killed before
their ready line, recovery events in the server log) and what writes racing a drop answered.

What it is not: a benchmark, a test of writes without waitForSync (those may be lost by design),
or a test of `complete=true` imports (not atomic across a crash today, see docs), or of
concurrent writers on one key.

Invariants: each thread owns its keys (a key has at most one request in flight); every write
logs an intent line before its request and an ack line only after its success status; the log
of a round is replayed into the oracle after the round's threads ended. No sleep is used as
synchronisation: the kill delays and the pauses between DDL calls are random jitter, and job
results are polled (the only way the API offers) within a deadline. Every wait is bounded.
"""

from __future__ import annotations

import http.client
import json
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from crash_client import Conn, Gone  # noqa: E402
from quince_server import (  # noqa: E402
    READY_LINE,
    QuinceServer,
    ServerError,
    quince_bin,
)

JOURNAL_SIZE = 1024 * 1024
STABLE = ["kl_a", "kl_b"]  # never renamed or dropped
POOL = 120  # keys per writer thread per stable collection
DDL_POOL = 60  # keys of the DDL writer per DDL collection
DDL_LIVE_MAX = 3
PAD_MIN, PAD_MAX = 100, 2600
JOB_TIMEOUT_S = 20.0
THREAD_EXIT_TIMEOUT_S = 30.0
TRIGGER_TIMEOUT_S = 5.0
STUCK_S = 5.0  # a request unanswered this long at the kill is a problem (the server hung)
KILL_DELAY_MIN_S, KILL_DELAY_MAX_S = 0.15, 3.0
VERIFY_BATCH = 500
ROUND_BUDGET_S = 4.4


class Stop(Exception):
    """The thread must end (the round is over, or it saw something unexpected)."""


def user_part(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("_key", "_id", "_rev")}


# -- the log ------------------------------------------------------------------------------------


class Log:
    """The round's append-only log of intents and acknowledgements (JSON lines, one file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = open(path, "w", buffering=1)
        self.lock = threading.Lock()

    def write(self, **entry) -> None:
        with self.lock:
            self.file.write(json.dumps(entry) + "\n")

    def close(self) -> None:
        self.file.close()


# -- the oracle ----------------------------------------------------------------------------------


class Coll:
    """What the oracle knows of one collection (a stable one, or one the DDL thread made)."""

    def __init__(self, label: str, name: str | None, live: bool) -> None:
        self.label = label  # the harness's name for it (its first name)
        self.name = name  # the acknowledged name; None until its create was acknowledged
        self.id: str | None = None
        self.live = live  # created and not dropped (acknowledged)
        self.pending: tuple | None = None  # ("create", name) | ("rename", new) | ("drop",)


class Oracle:
    """Per (collection label, key): the last acknowledged state; and the collections."""

    def __init__(self) -> None:
        # (label, key) -> None (absent) or [doc, rev or None]
        self.acked: dict[tuple[str, str], list | None] = {}
        self.colls: dict[str, Coll] = {label: Coll(label, label, True) for label in STABLE}
        self.next_ddl = 0

    def state(self, label: str, key: str):
        return self.acked.get((label, key))

    def absorb(self, log_path: Path) -> tuple[dict, list[str]]:
        """Replays a round's log; returns the writes in flight and the problems it records."""
        pending: dict[tuple[str, str], tuple] = {}
        problems: list[str] = []
        for line in log_path.read_text().splitlines():
            e = json.loads(line)
            op = e["op"]
            if op == "intent":
                k = (e["c"], e["k"])
                assert k not in pending, f"two writes in flight for {k}"
                pending[k] = ("del",) if e.get("del") else ("put", e["put"])
            elif op == "ack":
                k = (e["c"], e["k"])
                outcome = pending.pop(k)
                self.acked[k] = None if outcome[0] == "del" else [outcome[1], e.get("rev")]
            elif op == "rev":
                state = self.acked.get((e["c"], e["k"]))
                if state is not None and state[1] is None and state[0].get("v") == e["v"]:
                    state[1] = e["rev"]
            elif op == "fail":
                pending.pop((e["c"], e["k"]), None)
                if not e.get("benign"):
                    problems.append(f"{e['c']}/{e['k']}: write failed: {e['why']}")
            elif op == "problem":
                problems.append(e["text"])
            elif op == "ddl-intent":
                kind = e["kind"]
                if kind == "create":
                    coll = self.colls.setdefault(e["c"], Coll(e["c"], None, False))
                    coll.pending = ("create", e["name"])
                elif kind == "rename":
                    self.colls[e["c"]].pending = ("rename", e["name"])
                else:
                    self.colls[e["c"]].pending = ("drop",)
            elif op == "ddl-ack":
                coll = self.colls[e["c"]]
                kind = e["kind"]
                if kind == "create":
                    coll.name, coll.id, coll.live = e["name"], e["id"], True
                elif kind == "rename":
                    coll.name = e["name"]
                else:
                    coll.live = False
                coll.pending = None
            elif op == "ddl-fail":
                self.colls[e["c"]].pending = None
                problems.append(f"DDL {e['kind']} of {e['c']} failed: {e['why']}")
        for coll in self.colls.values():
            if not coll.live and coll.pending is None:
                self.forget(coll.label, pending)
        return pending, problems

    def forget(self, label: str, pending: dict) -> None:
        for k in [k for k in self.acked if k[0] == label]:
            del self.acked[k]
        for k in [k for k in pending if k[0] == label]:
            del pending[k]


# -- the writers ------------------------------------------------------------------------------


class Round:
    """What the threads of one round share."""

    def __init__(self, host_port, oracle: Oracle, log: Log, seed: int, round_no: int) -> None:
        self.host_port = host_port
        self.oracle = oracle
        self.log = log
        self.seed = seed
        self.round_no = round_no
        self.stop = threading.Event()
        self.ddl_sent = threading.Event()  # a drop or rename was just sent
        self.compact_sent = threading.Event()  # a compaction was just requested
        self.lock = threading.Lock()
        # DDL collections the DDL writer may use: label -> server id (not while a drop is sent)
        self.ddl_live = {c.label: c.id for c in oracle.colls.values()
                         if c.live and c.label not in STABLE}
        self.dropping: set[str] = set()
        self.conns: list[Conn] = []  # every thread's connection (to see requests stuck at the kill)
        self.drop_answers: Counter = Counter()  # what writes racing a drop were answered
        self.cut: list[str] = []  # calls of note that the kill cut (no reply): compact, rename, ...
        self.counts = {"acks": 0, "jobs": 0, "imports": 0, "multi": 0, "ddl": 0, "compact": 0}

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            self.counts[what] += n


class Writer:
    """A thread that owns a set of keys and writes them with one kind of request."""

    def __init__(self, rnd: Round, name: str, kind: str) -> None:
        self.rnd = rnd
        self.name = name
        self.kind = kind
        self.rng = random.Random(f"{rnd.seed}-{rnd.round_no}-{name}")
        self.seq = 0
        # label -> {key: None | doc}: this thread's view of its own keys (= the acked state)
        self.view: dict[str, dict[str, dict | None]] = {}

    # -- views and values --------------------------------------------------------------------

    def keys_of(self, label: str, pool: int) -> dict[str, dict | None]:
        if label not in self.view:
            view = {}
            for i in range(pool):
                key = f"{self.name}-{i}"
                state = self.rnd.oracle.state(label, key)
                view[key] = None if state is None else dict(state[0])
            self.view[label] = view
        return self.view[label]

    def new_doc(self) -> dict:
        self.seq += 1
        return {"v": f"r{self.rnd.round_no}-{self.name}-{self.seq}",
                "pad": "p" * self.rng.randint(PAD_MIN, PAD_MAX)}

    def patch(self) -> dict:
        self.seq += 1
        return {"v": f"r{self.rnd.round_no}-{self.name}-{self.seq}", "u": self.seq}

    # -- logging -----------------------------------------------------------------------------

    def intent(self, label: str, key: str, doc: dict | None) -> None:
        if doc is None:
            self.rnd.log.write(op="intent", c=label, k=key, **{"del": True})
        else:
            self.rnd.log.write(op="intent", c=label, k=key, put=doc)

    def ack(self, label: str, key: str, doc: dict | None, rev: str | None) -> None:
        self.rnd.log.write(op="ack", c=label, k=key, rev=rev)
        self.view[label][key] = doc
        self.rnd.count("acks")

    def fail(self, label: str, key: str, why: str, benign: bool = False) -> None:
        self.rnd.log.write(op="fail", c=label, k=key, why=why, benign=benign)

    def problem(self, text: str) -> None:
        self.rnd.log.write(op="problem", text=f"{self.name}: {text}")

    # -- the loop ----------------------------------------------------------------------------

    def run(self) -> None:
        conn = Conn(self.rnd.host_port, self.rnd.conns)
        try:
            while not self.rnd.stop.is_set():
                self.step(conn)
        except (Gone, Stop):
            pass
        except Exception as err:  # a harness bug must not look like a pass
            self.problem(f"harness error {err!r}")
        finally:
            conn.close()

    def target(self) -> tuple[str, str, dict[str, dict | None]]:
        """(label, path name, view) of the collection to write next."""
        label = self.rng.choice(STABLE)
        return label, label, self.keys_of(label, POOL)

    def step(self, conn: Conn) -> None:
        label, cname, view = self.target()
        if self.kind == "single":
            self.single(conn, label, cname, view)
        elif self.kind == "multi":
            self.multi(conn, label, cname, view)
        elif self.kind == "import":
            if self.rng.random() < 0.3:
                self.multi(conn, label, cname, view, only="DELETE")
            else:
                self.import_docs(conn, label, cname, view)
        elif self.kind == "async":
            self.single(conn, label, cname, view, run_async=True)

    def single(self, conn: Conn, label: str, cname: str, view: dict, *, run_async: bool = False) -> None:
        key = self.rng.choice(sorted(view))
        current = view[key]
        if current is None:
            method, path, body = "POST", f"/_api/document/{cname}?waitForSync=true", None
            doc = self.new_doc()
            body = dict(doc, _key=key)
        else:
            method = self.rng.choices(["PATCH", "PUT", "DELETE"], [45, 40, 15])[0]
            path = f"/_api/document/{cname}/{key}?waitForSync=true"
            if method == "PATCH":
                body = self.patch()
                doc = dict(current, **body)
            elif method == "PUT":
                doc = self.new_doc()
                body = doc
            else:
                body, doc = None, None
        expected = 200 if method == "DELETE" else 201
        self.intent(label, key, doc)
        if run_async:
            status, headers, reply = conn.call(method, path, body, headers={"x-arango-async": "store"})
            if status != 202 or "x-arango-async-id" not in headers:
                return self.unexpected(label, [key], f"async {method} answered {status}: {reply}")
            self.rnd.count("jobs")
            status, reply = self.job_result(conn, headers["x-arango-async-id"])
        else:
            status, _, reply = conn.call(method, path, body)
        if status != expected and self.dropping(label, status, reply):
            return self.fail(label, key, f"collection being dropped: {status} {reply}", benign=True)
        if status != expected:
            return self.unexpected(label, [key], f"{method} {path} answered {status}: {reply}")
        self.ack(label, key, doc, reply.get("_rev") if doc is not None else None)

    def job_result(self, conn: Conn, job_id: str) -> tuple[int, object]:
        """Polls the job until it is done (bounded); `Gone` if the server went away first."""
        deadline = time.monotonic() + JOB_TIMEOUT_S
        pause = 0.001
        conn.job = (time.monotonic(), f"job {job_id}")
        try:
            while True:
                status, _, reply = conn.call("PUT", f"/_api/job/{job_id}")
                if status != 204:
                    return status, reply
                if time.monotonic() > deadline:
                    self.problem(f"job {job_id} not done within {JOB_TIMEOUT_S:.0f}s")
                    raise Stop()
                # Polling is the only way the job API offers; the pause only spaces the polls.
                self.rnd.stop.wait(pause)
                pause = min(pause * 2, 0.02)
        finally:
            conn.job = None

    def multi(self, conn: Conn, label: str, cname: str, view: dict, only: str | None = None) -> None:
        present = [k for k in sorted(view) if view[k] is not None]
        absent = [k for k in sorted(view) if view[k] is None]
        method = only or self.rng.choices(["POST", "PATCH", "DELETE"], [40, 45, 15])[0]
        if method != "POST" and not present:
            method = "POST"
        if method == "POST" and not absent:
            method = "PATCH"
        pick = absent if method == "POST" else present
        keys = self.rng.sample(pick, min(len(pick), self.rng.randint(2, 12)))
        docs: list[dict | None] = []
        body: list = []
        for key in keys:
            if method == "POST":
                doc = self.new_doc()
                body.append(dict(doc, _key=key))
            elif method == "PATCH":
                patch = self.patch()
                doc = dict(view[key], **patch)
                body.append(dict(patch, _key=key))
            else:
                doc = None
                body.append(key)
            docs.append(doc)
            self.intent(label, key, doc)
        self.rnd.count("multi")
        status, _, reply = conn.call(method, f"/_api/document/{cname}?waitForSync=true", body)
        expected = 200 if method == "DELETE" else 201
        if status != expected and self.dropping(label, status, reply):
            for key in keys:
                self.fail(label, key, f"collection being dropped: {status} {reply}", benign=True)
            return
        if status != expected or not isinstance(reply, list) or len(reply) != len(keys):
            return self.unexpected(label, keys, f"multi {method} answered {status}: {str(reply)[:300]}")
        bad = []
        for key, doc, item in zip(keys, docs, reply):
            if item.get("error") and self.dropping(label, f"{status} item", item):
                self.fail(label, key, f"collection being dropped: multi {method} item {item}", benign=True)
            elif item.get("error"):
                self.fail(label, key, f"multi {method} item: {item}")
                bad.append(key)
            else:
                self.ack(label, key, doc, item.get("_rev") if doc is not None else None)
        if bad:
            raise Stop()

    def import_docs(self, conn: Conn, label: str, cname: str, view: dict) -> None:
        keys = self.rng.sample(sorted(view), self.rng.randint(2, 30))
        docs = [self.new_doc() for _ in keys]
        lines = "".join(json.dumps(dict(doc, _key=key)) + "\n" for key, doc in zip(keys, docs))
        for key, doc in zip(keys, docs):
            self.intent(label, key, doc)
        self.rnd.count("imports")
        status, _, reply = conn.call(
            "POST", f"/_api/import?collection={cname}&type=documents&waitForSync=true"
                    f"&details=true&onDuplicate=replace", raw=lines.encode())
        if status != 201 or not isinstance(reply, dict):
            return self.unexpected(label, keys, f"import answered {status}: {reply}")
        failed: set[int] = set()
        for detail in reply.get("details") or []:
            # "at position N: ..." where N counts the documents that passed conversion
            try:
                failed.add(int(detail.split("at position ", 1)[1].split(":", 1)[0]))
            except (IndexError, ValueError):
                self.problem(f"import detail without a position: {detail}")
        created, updated = reply.get("created", 0), reply.get("updated", 0)
        if created + updated + len(failed) != len(keys) or reply.get("errors", 0) != len(failed):
            self.problem(f"import counters do not add up for {len(keys)} documents: {reply}")
        for pos, (key, doc) in enumerate(zip(keys, docs)):
            if pos in failed:
                self.fail(label, key, f"import failed it: {reply.get('details')}")
            else:
                self.ack(label, key, doc, None)
        # Imports report no _rev; read them back (we own the keys, nothing else writes them).
        status, _, reply = conn.call("PUT", f"/_api/document/{cname}?onlyget=true", keys)
        if status == 200 and isinstance(reply, list):
            for key, doc, item in zip(keys, docs, reply):
                if item.get("v") == doc["v"] and "_rev" in item:
                    self.rnd.log.write(op="rev", c=label, k=key, v=doc["v"], rev=item["_rev"])
        if failed:
            raise Stop()

    def dropping(self, label: str, status, reply) -> bool:
        """True when a drop of the collection was sent: then a refused write is no surprise
        (what it answered is counted, to be reported)."""
        with self.rnd.lock:
            if label not in self.rnd.dropping:
                return False
            num = reply.get("errorNum") if isinstance(reply, dict) else None
            self.rnd.drop_answers[f"{status}/{num}"] += 1
            return True

    def unexpected(self, label: str, keys: list[str], text: str) -> None:
        """An answer that is neither success nor a crash: the keys stay in flight, thread ends."""
        self.problem(text)
        raise Stop()


class DdlWriter(Writer):
    """Writes into the DDL thread's collections, addressing them by numeric id."""

    def target(self):
        with self.rnd.lock:
            live = sorted((label, cid) for label, cid in self.rnd.ddl_live.items()
                          if label not in self.rnd.dropping)
        if not live:
            # Nothing to write into yet: write a stable collection meanwhile.
            label = self.rng.choice(STABLE)
            return label, label, self.keys_of(label, POOL)
        label, cid = self.rng.choice(live)
        return label, cid, self.keys_of(label, DDL_POOL)

    def step(self, conn: Conn) -> None:
        label, cname, view = self.target()
        if self.rng.random() < 0.7:
            self.single(conn, label, cname, view)
        else:
            self.multi(conn, label, cname, view)


def ddl_call(rnd: Round, kind: str, conn: Conn, method: str, path: str, body=None):
    try:
        return conn.call(method, path, body)
    except Gone:
        rnd.cut.append(kind)
        raise


def ddl_main(rnd: Round) -> None:
    """Creates, renames and drops collections, one call at a time; acks each after its reply."""
    rng = random.Random(f"{rnd.seed}-{rnd.round_no}-ddl")
    conn = Conn(rnd.host_port, rnd.conns)
    log = rnd.log
    try:
        while not rnd.stop.is_set():
            with rnd.lock:
                live = sorted(label for label in rnd.ddl_live if label not in rnd.dropping)
            choices = []
            if len(live) < DDL_LIVE_MAX:
                choices += ["create"] * 3
            if live:
                choices += ["rename"] * 2 + ["drop"]
            kind = rng.choice(choices)
            if kind == "create":
                with rnd.lock:
                    rnd.oracle.next_ddl += 1
                    label = f"kl_d{rnd.oracle.next_ddl}"
                log.write(op="ddl-intent", kind="create", c=label, name=label)
                status, _, reply = ddl_call(rnd, "create", conn, "POST", "/_api/collection",
                                            {"name": label, "journalSize": JOURNAL_SIZE})
                if status != 200:
                    log.write(op="ddl-fail", kind=kind, c=label, why=f"{status}: {reply}")
                    return
                log.write(op="ddl-ack", kind="create", c=label, name=label, id=reply["id"])
                with rnd.lock:
                    rnd.ddl_live[label] = reply["id"]
            else:
                label = rng.choice(live)
                with rnd.lock:
                    cid = rnd.ddl_live[label]
                if kind == "rename":
                    new_name = f"{label}_r{rnd.round_no}_{rng.randrange(10**6)}"
                    log.write(op="ddl-intent", kind="rename", c=label, name=new_name)
                    rnd.ddl_sent.set()
                    status, _, reply = ddl_call(rnd, "rename", conn, "PUT", f"/_api/collection/{cid}/rename",
                                                {"name": new_name})
                    if status != 200 or reply.get("name") != new_name:
                        log.write(op="ddl-fail", kind=kind, c=label, why=f"{status}: {reply}")
                        return
                    log.write(op="ddl-ack", kind="rename", c=label, name=new_name)
                else:
                    with rnd.lock:
                        rnd.dropping.add(label)
                    log.write(op="ddl-intent", kind="drop", c=label)
                    rnd.ddl_sent.set()
                    status, _, reply = ddl_call(rnd, "drop", conn, "DELETE", f"/_api/collection/{cid}")
                    if status != 200:
                        log.write(op="ddl-fail", kind=kind, c=label, why=f"{status}: {reply}")
                        return
                    log.write(op="ddl-ack", kind="drop", c=label)
                    with rnd.lock:
                        del rnd.ddl_live[label]
            rnd.count("ddl")
            # Jitter between DDL calls (pacing, not synchronisation); ends early on stop.
            rnd.stop.wait(rng.uniform(0.05, 0.3))
    except Gone:
        pass
    except Exception as err:
        log.write(op="problem", text=f"ddl: harness error {err!r}")
    finally:
        conn.close()


def compactor_main(rnd: Round) -> None:
    """Requests compactions of random collections, with jitter between them."""
    rng = random.Random(f"{rnd.seed}-{rnd.round_no}-compact")
    conn = Conn(rnd.host_port, rnd.conns)
    try:
        while not rnd.stop.is_set():
            rnd.stop.wait(rng.uniform(0.05, 0.4))
            with rnd.lock:
                targets = [(label, label) for label in STABLE] + [
                    (label, cid) for label, cid in rnd.ddl_live.items() if label not in rnd.dropping]
            label, cname = rng.choice(sorted(targets))
            rnd.compact_sent.set()
            try:
                status, _, reply = conn.call("PUT", f"/_api/collection/{cname}/compact")
            except Gone:
                rnd.cut.append("compact")
                raise
            if status != 200:
                with rnd.lock:
                    benign = label in rnd.dropping or label not in rnd.ddl_live and label not in STABLE
                    if benign:
                        num = reply.get("errorNum") if isinstance(reply, dict) else None
                        rnd.drop_answers[f"compact {status}/{num}"] += 1
                if benign:
                    continue
                rnd.log.write(op="problem", text=f"compact {label} answered {status}: {reply}")
                return
            rnd.count("compact")
    except Gone:
        pass
    except Exception as err:
        rnd.log.write(op="problem", text=f"compactor: harness error {err!r}")
    finally:
        conn.close()


# -- the server --------------------------------------------------------------------------------


class KillableServer(QuinceServer):
    """`QuinceServer` plus a start that is killed after a delay, ready line or not."""

    def start_killed(self, delay_s: float) -> bool:
        """Starts the server and SIGKILLs it after `delay_s`; True if it was not ready yet."""
        assert not self.running()
        lines: queue.Queue = queue.Queue()
        with open(self.log_path, "ab") as log:
            log.write(f"\n==== start (killed after {delay_s:.3f}s) {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL,
                                         stdout=subprocess.PIPE, stderr=log)
        threading.Thread(target=self._drain_stdout, args=(self.proc, lines), daemon=True).start()
        deadline = time.monotonic() + delay_s
        ready = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                break
            if READY_LINE.match(line):
                ready = True
                break
        exited_early = self.proc.poll() is not None
        self.kill()
        if exited_early and self.proc.returncode != 0:
            raise ServerError(f"server exited with {self.proc.returncode} during start-up\n{self.stderr_tail()}")
        return not ready


# -- checks ---------------------------------------------------------------------------------


def verify(srv: QuinceServer, oracle: Oracle, pending: dict) -> tuple[list[str], dict]:
    """Checks the reopened server against the oracle; brings the oracle to what survived."""
    problems: list[str] = []
    conn = Conn(srv.host_port)
    info = {"datafiles": 0, "docs": 0}
    try:
        status, _, reply = conn.call("GET", "/_api/collection?excludeSystem=true")
        if status != 200:
            return [f"listing collections answered {status}: {reply}"], info
        listed = {c["name"]: str(c["id"]) for c in reply["result"]}
        claimed: set[str] = set()

        # Collections first: which exist, under which name.
        present: dict[str, str] = {}  # label -> name to read it by
        for coll in sorted(oracle.colls.values(), key=lambda c: c.label):
            if coll.pending is None:
                if coll.live:
                    if coll.name not in listed:
                        problems.append(f"collection {coll.label}: acknowledged as {coll.name}, missing "
                                        f"(listed: {sorted(listed)})")
                        continue
                    if coll.id is not None and listed[coll.name] != coll.id:
                        problems.append(f"collection {coll.name}: id {listed[coll.name]}, acknowledged {coll.id}")
                    present[coll.label] = coll.name
                continue
            kind = coll.pending[0]
            if kind == "create":
                name = coll.pending[1]
                if name in listed:
                    coll.name, coll.id, coll.live = name, listed[name], True
                    present[coll.label] = name
            elif kind == "rename":
                old, new = coll.name, coll.pending[1]
                if new in listed and old in listed:
                    problems.append(f"collection {coll.label}: both {old} and {new} exist after a rename")
                if new in listed:
                    coll.name = new
                elif old not in listed:
                    problems.append(f"collection {coll.label}: neither {old} nor {new} exists after a "
                                    f"rename in flight")
                    coll.pending = None
                    continue
                if listed[coll.name] != coll.id:
                    problems.append(f"collection {coll.name}: id {listed[coll.name]}, acknowledged {coll.id}")
                present[coll.label] = coll.name
            else:  # a drop in flight: whole, or gone
                if coll.name in listed:
                    present[coll.label] = coll.name
                else:
                    coll.live = False
            coll.pending = None
        for label in [label for label, coll in oracle.colls.items() if not coll.live]:
            oracle.forget(label, pending)
            del oracle.colls[label]
        for label, name in present.items():
            claimed.add(name)
        for name in sorted(set(listed) - claimed):
            problems.append(f"collection {name} (id {listed[name]}) exists, but no acknowledged or "
                            f"in-flight DDL made it (resurrected or phantom)")

        # Then every known key of every present collection.
        keys_by_label: dict[str, set[str]] = {label: set() for label in present}
        for (label, key) in list(oracle.acked) + list(pending):
            if label in keys_by_label:
                keys_by_label[label].add(key)
        for label, name in sorted(present.items()):
            keys = sorted(keys_by_label[label])
            found: dict[str, dict] = {}
            for offset in range(0, len(keys), VERIFY_BATCH):
                batch = keys[offset:offset + VERIFY_BATCH]
                status, _, reply = conn.call("PUT", f"/_api/document/{name}?onlyget=true", batch)
                if status != 200 or not isinstance(reply, list) or len(reply) != len(batch):
                    problems.append(f"{name}: onlyget answered {status}: {str(reply)[:300]}")
                    break
                for key, item in zip(batch, reply):
                    if "_key" in item:
                        found[key] = item
                    elif item.get("errorNum") != 1202:
                        problems.append(f"{name}/{key}: unexpected read result {item}")
            for key in keys:
                problems += check_key(oracle, label, name, key, found.get(key), pending.get((label, key)))
            status, _, reply = conn.call("GET", f"/_api/collection/{name}/figures")
            count = reply.get("count") if status == 200 else None
            figures = reply.get("figures", {}) if status == 200 else {}
            if count != len(found):
                problems.append(f"{name}: count {count} != {len(found)} documents found among "
                                f"{len(keys)} known keys")
            alive = figures.get("alive", {}).get("count")
            if alive is not None and alive != count:
                problems.append(f"{name}: figures alive.count {alive} != count {count}")
            info["datafiles"] += figures.get("datafiles", {}).get("count", 0)
            info["docs"] += len(found)
    finally:
        conn.close()
    return problems, info


def check_key(oracle: Oracle, label: str, name: str, key: str, doc: dict | None, in_flight) -> list[str]:
    acked = oracle.acked.get((label, key))

    def matches(state, rev_known=True) -> bool:
        if state is None:
            return doc is None
        return doc is not None and user_part(doc) == state[0] and (
            state[1] is None or not rev_known or doc["_rev"] == state[1])

    if matches(acked):
        if doc is not None:
            oracle.acked[(label, key)] = [user_part(doc), doc["_rev"]]
        return []
    if in_flight is not None:
        outcome = None if in_flight[0] == "del" else [in_flight[1], None]
        if matches(outcome):
            if doc is None:
                oracle.acked[(label, key)] = None
            else:
                oracle.acked[(label, key)] = [user_part(doc), doc["_rev"]]
            return []
    shown = "absent" if doc is None else f"v={doc.get('v')} rev={doc.get('_rev')}"
    want = "absent" if acked is None else f"v={acked[0].get('v')} rev={acked[1]}"
    flight = "nothing" if in_flight is None else (
        "a remove" if in_flight[0] == "del" else f"v={in_flight[1].get('v')}")
    what = ("lost" if doc is None else "resurrected" if acked is None and in_flight is None
            else "wrong value")
    # The oracle follows what the server has, so one loss is reported once.
    oracle.acked[(label, key)] = None if doc is None else [user_part(doc), doc["_rev"]]
    return [f"{name}/{key}: {what}: holds {shown}, acknowledged {want}, in flight {flight}"]


# -- the harness ----------------------------------------------------------------------------------


def run_round(srv: KillableServer, oracle: Oracle, work: Path, seed: int, round_no: int,
              rng: random.Random) -> tuple[str, dict, dict, list[str]]:
    """One round of writes ended by SIGKILL; returns (kill description, in flight, counts, problems)."""
    log = Log(work / f"round-{round_no}.log")
    rnd = Round(srv.host_port, oracle, log, seed, round_no)
    writers = [Writer(rnd, "s0", "single"), Writer(rnd, "s1", "single"), Writer(rnd, "m0", "multi"),
               Writer(rnd, "i0", "import"), Writer(rnd, "a0", "async"), DdlWriter(rnd, "x0", "ddl")]
    threads = [threading.Thread(target=w.run, name=w.name) for w in writers]
    threads.append(threading.Thread(target=ddl_main, args=(rnd,), name="ddl"))
    threads.append(threading.Thread(target=compactor_main, args=(rnd,), name="compactor"))
    mode = rng.choices(["random", "ddl", "compact"], [55, 25, 20])[0]
    delay = rng.uniform(KILL_DELAY_MIN_S, KILL_DELAY_MAX_S)
    after = rng.uniform(0.0, 0.02 if mode == "ddl" else 0.1)
    began = time.monotonic()
    for thread in threads:
        thread.start()
    problems: list[str] = []
    if mode == "random":
        time.sleep(delay)  # the crash moment itself is what is random here
        what = f"killed after {delay:.2f}s"
    else:
        # Let the writers work a while, then kill right after the next drop/rename/compact.
        time.sleep(delay / 2)
        event = rnd.ddl_sent if mode == "ddl" else rnd.compact_sent
        event.clear()
        if event.wait(TRIGGER_TIMEOUT_S):
            time.sleep(after)
            what = f"killed {after * 1000:.0f}ms after a {'drop/rename' if mode == 'ddl' else 'compact'}"
        else:
            what = f"killed after no {mode} call within {TRIGGER_TIMEOUT_S:.0f}s"
        what += f" at {time.monotonic() - began:.2f}s"
    now = time.monotonic()
    for conn in list(rnd.conns):
        for busy in (conn.busy, conn.job):
            if busy is not None and now - busy[0] > STUCK_S:
                problems.append(f"{busy[1]} unanswered for {now - busy[0]:.1f}s when the server was killed")
    srv.kill()
    rnd.stop.set()
    for thread in threads:
        thread.join(THREAD_EXIT_TIMEOUT_S)
        if thread.is_alive():
            problems.append(f"thread {thread.name} did not end within {THREAD_EXIT_TIMEOUT_S:.0f}s of the kill")
    log.close()
    if any(thread.is_alive() for thread in threads):
        raise ServerError("; ".join(problems))
    pending, log_problems = oracle.absorb(log.path)
    if rnd.cut:
        what += f" (cut: {', '.join(rnd.cut)})"
    rnd.counts["drop_answers"] = rnd.drop_answers
    return what, pending, rnd.counts, problems + log_problems


def setup(srv: QuinceServer) -> None:
    conn = Conn(srv.host_port)
    try:
        for name in STABLE:
            status, _, reply = conn.call("POST", "/_api/collection", {"name": name, "journalSize": JOURNAL_SIZE})
            assert status == 200, f"creating {name} answered {status}: {reply}"
    finally:
        conn.close()


def restart(srv: KillableServer, rng: random.Random, last_start_s: float) -> tuple[str, float]:
    """Maybe kills one or two start-ups early, then starts for real; returns (note, start time)."""
    notes = []
    if rng.random() < 0.3:
        for _ in range(rng.choice([1, 1, 2])):
            delay = rng.uniform(0.0, max(0.02, last_start_s * 1.1))
            early = srv.start_killed(delay)
            notes.append(f"start-up killed at {delay * 1000:.0f}ms{' before ready' if early else ' (after ready)'}")
    began = time.monotonic()
    srv.start()
    return ", ".join(notes), time.monotonic() - began


RECOVERY_EVENTS = ("compaction.done", "compaction.cleanup_finished", "compaction.leftover_removed",
                   "journal.tail_truncated", "journal.incomplete_removed", "collection.debris_removed",
                   "hint.invalid", "hint.mismatch")


def what_cov(what: str, note: str) -> list[str]:
    """Coverage labels of one round: the kill mode, the calls it cut, the start-up kills."""
    labels = []
    if "after a compact" in what:
        labels.append("kill after compact")
    elif "after a drop/rename" in what:
        labels.append("kill after drop/rename")
    else:
        labels.append("kill at random")
    m = re.search(r"\(cut: ([^)]*)\)", what)
    if m:
        labels += [f"cut {c}" for c in m.group(1).split(", ")]
    labels += ["start-up killed before ready"] * note.count("before ready")
    labels += ["start-up killed after ready"] * note.count("after ready")
    return labels


def tamper(srv: QuinceServer, oracle: Oracle, pending: dict, which: int):
    """Self-test: changes the database behind the oracle's back; returns (what, undo)."""
    conn = Conn(srv.host_port)
    quiet = [k for k, v in sorted(oracle.acked.items()) if k[0] == STABLE[0] and k not in pending]
    present = [k for k in quiet if oracle.acked[k] is not None]
    absent = [k for k in quiet if oracle.acked[k] is None]
    path = f"/_api/document/{STABLE[0]}"
    undo = None
    if which == 0:
        label, key = present[0]
        status, _, _ = conn.call("DELETE", f"{path}/{key}?waitForSync=true")
        what = f"removed acknowledged {key}"
    elif which == 1:
        label, key = present[-1]
        status, _, _ = conn.call("PATCH", f"{path}/{key}?waitForSync=true", {"v": "tampered"})
        what = f"changed acknowledged {key}"
    elif which == 2:
        status, _, _ = conn.call("POST", f"{path}?waitForSync=true", {"_key": "phantom"})
        what = "inserted a document no intent created"
        undo = ("DELETE", f"{path}/phantom?waitForSync=true", None)
    elif which == 3:
        status, _, _ = conn.call("POST", "/_api/collection", {"name": "kl_phantom"})
        what = "created a collection no DDL made"
        undo = ("DELETE", "/_api/collection/kl_phantom", None)
    else:
        label, key = absent[0] if absent else present[0]
        if absent:
            status, _, _ = conn.call("POST", f"{path}?waitForSync=true", {"_key": key, "v": "back"})
            what = f"brought removed {key} back"
        else:
            status, _, _ = conn.call("DELETE", f"{path}/{key}?waitForSync=true")
            what = f"removed acknowledged {key} (no removed key to bring back)"
    conn.close()
    assert status in (200, 201, 202), f"self-test tamper '{what}' answered {status}"

    def run_undo() -> None:
        if undo is not None:
            c = Conn(srv.host_port)
            try:
                assert c.call(*undo)[0] in (200, 201, 202), f"undoing '{what}' failed"
            finally:
                c.close()
    return what, run_undo


def main() -> int:
    # A SIGTERM (the test script's timeout) unwinds through the `finally` blocks, which kill
    # the servers and remove the work directories.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seed = int(os.environ.get("KILL_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    selftest = bool(os.environ.get("KILL_SELFTEST"))
    rounds = int(os.environ.get("KILL_ROUNDS", "6" if selftest else "50"))
    budget = float(os.environ.get("KILL_BUDGET_S", str(max(60.0, ROUND_BUDGET_S * rounds))))
    assert rounds >= 1
    rng = random.Random(seed)
    print(f"kill loop: seed {seed} (set KILL_SEED to repeat), {rounds} rounds, budget {budget:.0f}s, "
          f"binary {quince_bin()}", flush=True)

    work = Path(tempfile.mkdtemp(prefix="quince-kill-"))
    srv = KillableServer(work / "data", extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                         log_path=work / "server.log")
    oracle = Oracle()
    passed = failed = 0
    started = time.monotonic()
    totals: dict[str, int] = {}
    coverage: Counter = Counter()
    drop_answers: Counter = Counter()
    try:
        srv.start()
        setup(srv)
        last_start_s = 0.2
        for round_no in range(1, rounds + 1):
            if time.monotonic() - started > budget:
                print(f"round {round_no}: time budget of {budget:.0f}s spent; stopping early", flush=True)
                failed += rounds - round_no + 1
                break
            what, pending, counts, problems = run_round(srv, oracle, work, seed, round_no, rng)
            drop_answers.update(counts.pop("drop_answers"))
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + v
            try:
                note, last_start_s = restart(srv, rng, last_start_s)
            except ServerError as err:
                print(f"round {round_no}: FAILED: server did not reopen: {err}", flush=True)
                failed += 1
                break
            if selftest and round_no <= 5:
                # Self-test: each of these rounds must fail, for the reason the tamper gives.
                what_tamper, undo = tamper(srv, oracle, pending, round_no - 1)
                more, info = verify(srv, oracle, pending)
                undo()
                if more and not problems:
                    passed += 1
                    print(f"round {round_no}: self-test: '{what_tamper}' caught: {more[0]}", flush=True)
                else:
                    failed += 1
                    print(f"round {round_no}: self-test: '{what_tamper}' NOT caught (or other problems: "
                          f"{problems[:3]})", flush=True)
                (work / f"round-{round_no}.log").unlink()
                continue
            more, info = verify(srv, oracle, pending)
            problems += more
            coverage.update(what_cov(what, note))
            live_ddl = sum(1 for c in oracle.colls.values() if c.live and c.label not in STABLE)
            line = (f"round {round_no}: {what}; {counts['acks']} acks, {counts['jobs']} jobs, "
                    f"{counts['imports']} imports, {counts['ddl']} DDL, {counts['compact']} compactions, "
                    f"{len(pending)} in flight; {info['docs']} docs, {live_ddl} DDL collections, "
                    f"datafiles {info['datafiles']}; {note + '; ' if note else ''}"
                    f"reopened in {last_start_s:.2f}s")
            if problems:
                failed += 1
                print(f"{line}: FAILED", flush=True)
                for problem in problems[:25]:
                    print(f"    {problem}", flush=True)
                if len(problems) > 25:
                    print(f"    ... and {len(problems) - 25} more", flush=True)
            else:
                passed += 1
                (work / f"round-{round_no}.log").unlink()
                print(f"{line}: ok", flush=True)

        if srv.running():
            # The last check: a graceful stop and a clean reopen keep everything as well.
            code = srv.stop()
            srv.start()
            problems, info = verify(srv, oracle, {})
            if code != 0 or problems:
                failed += 1
                print(f"graceful restart: FAILED (exit code {code})", flush=True)
                for problem in problems[:25]:
                    print(f"    {problem}", flush=True)
            else:
                print(f"graceful restart: ok, {info['docs']} docs, datafiles {info['datafiles']}", flush=True)
            if srv.stop() != 0:
                failed += 1
                print("final SIGTERM: non-zero exit", flush=True)
    except (ServerError, AssertionError, OSError, Gone, http.client.HTTPException) as err:
        failed += 1
        print(f"kill loop aborted: {err!r}", flush=True)
    finally:
        srv.kill()

    elapsed = time.monotonic() - started
    events = Counter(re.findall(r'event="([a-z_.]+)"', srv.stderr_tail(1 << 30)))
    coverage.update({f"log {name}": n for name, n in events.items() if name in RECOVERY_EVENTS})
    print(f"coverage: {dict(sorted(coverage.items()))}")
    print(f"writes and compactions refused while their collection was being dropped (status/errorNum): "
          f"{dict(sorted(drop_answers.items()))}")
    print(f"kill loop: {passed} rounds passed, {failed} failed ({elapsed:.1f}s); totals {totals}; seed {seed}")
    if failed:
        print(f"data and logs kept in {work} (server log: {work / 'server.log'}, round logs round-N.log)")
        print(srv.stderr_tail(3000))
        return 1
    if os.environ.get("KILL_KEEP"):
        print(f"data and logs kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
