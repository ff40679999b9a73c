#!/usr/bin/env python3
"""The atomicity crash test: after kill -9, every transaction, multi-document request and
all-or-nothing import is whole or absent, and every acknowledged one is whole.

What it is: a harness that runs `quince serve` on one data directory for several rounds. In
each round, threads of this process write into three collections (1 MiB journals, documents
padded to 50-1500 bytes, so that journals rotate under the writes):

  * transaction threads run stream transactions over all three collections
    (`POST /_api/transaction/begin`, writes with `x-arango-trx-id`, `PUT` to commit); each
    inserts, updates (PATCH or PUT) and removes a few documents in every collection, through
    single-document requests, multi-document arrays and `/_api/import` inside the transaction;
    half of them have `waitForSync: true`; one in ten is aborted (`DELETE`) instead;
  * a multi-document thread POSTs arrays of 2-40 new documents into one collection, without a
    transaction (`waitForSync` at random);
  * an import thread sends `/_api/import?complete=true` requests of 2-40 new documents
    (`waitForSync` at random); one in ten holds a duplicate key, so it is refused whole.

Every document carries the tag of the unit (transaction, request, import) that wrote it last
and a version number `n`. A unit's effects (key -> document or absent) are logged before its
first request; it is acknowledged only by its success reply (commit 200; the multi-document
201/202 with no item error; the import 201 with every document created). The harness kills
the server with SIGKILL at a seeded moment: after a random delay, or a few milliseconds after
a commit was sent. It restarts on the same data directory and checks:

  * a unit whose commit was never sent, that was aborted or refused, is absent;
  * a unit whose commit (request) was sent without a reply is whole or absent, never partial;
  * an acknowledged unit is whole, with or without waitForSync (SIGKILL keeps the page cache);
    its losses are reported apart for waitForSync units;
  * nothing else exists: each collection's count equals the documents the oracle expects.

Reads go through `PUT /_api/document/{c}?onlyget=true` (the keys written this round) and
`GET /_api/collection/{c}/count`; after the last round a graceful restart is checked against
every known key. The seed is printed; `TRX_SEED` repeats its decisions (kill moments,
transaction shapes, sizes), `TRX_ROUNDS` sets the rounds (20), `TRX_BUDGET_S` the time budget
(120 s; rounds left when it is spent count as failures), `TRX_KEEP=1` keeps the data directory
of a passing run, `TRX_SELFTEST=1` checks the checker (rounds 1-3 change the database behind
the oracle's back and pass only if that is caught). Thread interleaving is not reproducible.

What it is not: a test of isolation (no unit reads another's writes), of a transaction's
refusals (that is tests/python), or of power loss (tests/powercut): SIGKILL loses nothing the
kernel was given.

Invariants: each thread owns its keys (a key has at most one unit in flight, the thread's
last); a unit's effects are recorded before its first request and it is acknowledged only
after its success reply; the round's threads have ended before the check reads anything. No
sleep is used as synchronisation: kill delays are the random crash moments. Every wait is
bounded.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from crash_client import Conn, Gone  # noqa: E402
from quince_server import (  # noqa: E402
    QuinceServer,
    ServerError,
    quince_bin,
)

COLLS = ["ta_a", "ta_b", "ta_c"]
JOURNAL_SIZE = 1024 * 1024
TRX_THREADS = 3
POOL_MAX = 24  # live documents a transaction thread keeps per collection (more: it removes)
PAD_MIN, PAD_MAX = 50, 1500
THREAD_EXIT_TIMEOUT_S = 30.0
STUCK_S = 5.0  # a request unanswered this long at the kill is a problem (the server hung)
KILL_DELAY_MIN_S, KILL_DELAY_MAX_S = 0.2, 1.6
SENT_KILL_MAX_S = 0.003  # the "after a commit" mode kills within this of a commit's send
SENT_WAIT_S = 3.0
VERIFY_BATCH = 500

# A unit's state, in the order it moves through them.
OPEN = "open"  # its writes may be buffered; its commit was not sent: must be absent
SENT = "sent"  # its commit (or its one request) was sent, no reply: whole or absent
ACKED = "acked"  # success reply: must be whole
REFUSED = "refused"  # aborted, or its request refused whole: must be absent


class Stop(Exception):
    """The thread must end (it saw something unexpected, already recorded)."""


def send(conn: Conn, method: str, path: str, body=None, *, raw: bytes | None = None,
         trx: str | None = None) -> tuple[int, object]:
    """One request, in the stream transaction `trx` when given: its status and parsed body."""
    headers = {"x-arango-trx-id": trx} if trx is not None else None
    status, _, parsed = conn.call(method, path, body, raw=raw, headers=headers)
    return status, parsed


# -- units and the oracle ------------------------------------------------------------------------

Key = tuple[str, str]  # (collection, key)
State = tuple[str, int] | None  # (tag, n) of a document, None when absent


@dataclass
class Unit:
    """One transaction, multi-document request or import, and what it does."""

    tag: str
    kind: str  # "trx", "multi" or "import"
    sync: bool
    state: str = OPEN
    before: dict[Key, State] = field(default_factory=dict)  # each key's acked state before it
    after: dict[Key, State] = field(default_factory=dict)  # each key's state once it applied

    def touch(self, key: Key, before: State, after: State) -> None:
        self.before.setdefault(key, before)
        self.after[key] = after

    def describe(self) -> str:
        return f"{self.kind} {self.tag}{' (waitForSync)' if self.sync else ''}"


class Oracle:
    """The acknowledged state of every key, and which unit wrote it."""

    def __init__(self) -> None:
        self.acked: dict[Key, State] = {}
        self.writer: dict[Key, Unit] = {}
        self.lock = threading.Lock()

    def apply(self, unit: Unit) -> None:
        with self.lock:
            for key, state in unit.after.items():
                self.acked[key] = state
                self.writer[key] = unit

    def expected_count(self, coll: str) -> int:
        return sum(1 for (c, _), s in self.acked.items() if c == coll and s is not None)


# -- the writers ----------------------------------------------------------------------------------


class Round:
    """What the threads of one round share."""

    def __init__(self, host_port, oracle: Oracle, seed: int, round_no: int) -> None:
        self.host_port = host_port
        self.oracle = oracle
        self.seed = seed
        self.round_no = round_no
        self.stop = threading.Event()
        self.unit_sent = threading.Event()  # a commit (or a one-request unit) was just sent
        self.lock = threading.Lock()
        self.units: list[Unit] = []
        self.problems: list[str] = []
        self.conns: list[Conn] = []

    def add(self, unit: Unit) -> Unit:
        with self.lock:
            self.units.append(unit)
        return unit

    def problem(self, text: str) -> None:
        with self.lock:
            self.problems.append(text)


class Writer:
    """A thread of one kind; owns the keys it creates (named after its tags)."""

    def __init__(self, rnd: Round, name: str) -> None:
        self.rnd = rnd
        self.name = name
        self.rng = random.Random(f"{rnd.seed}-{rnd.round_no}-{name}")
        self.seq = 0

    def next_tag(self) -> str:
        self.seq += 1
        return f"r{self.rnd.round_no}-{self.name}-{self.seq}"

    def doc(self, key: str, tag: str, n: int) -> dict:
        return {"_key": key, "tag": tag, "n": n, "pad": "p" * self.rng.randint(PAD_MIN, PAD_MAX)}

    def run(self) -> None:
        conn = Conn(self.rnd.host_port, self.rnd.conns)
        try:
            while not self.rnd.stop.is_set():
                self.step(conn)
        except (Gone, Stop):
            pass
        except Exception as err:  # a harness bug must not look like a pass
            self.rnd.problem(f"{self.name}: harness error {err!r}")
        finally:
            conn.close()

    def step(self, conn: Conn) -> None:
        raise NotImplementedError

    def expect(self, what: str, status: int, reply, ok: tuple[int, ...]) -> None:
        """Stops the thread (after recording it) unless `status` is one of `ok`."""
        if status not in ok:
            self.rnd.problem(f"{self.name}: {what} answered {status}: {str(reply)[:300]}")
            raise Stop()

    def items_ok(self, what: str, reply, count: int) -> None:
        """A multi-document reply: a list of `count` items, none an error."""
        if not isinstance(reply, list) or len(reply) != count or any(
                not isinstance(item, dict) or item.get("error") for item in reply):
            self.rnd.problem(f"{self.name}: {what}: items {str(reply)[:300]}")
            raise Stop()


class TrxWriter(Writer):
    """Stream transactions over the three collections."""

    def __init__(self, rnd: Round, name: str) -> None:
        super().__init__(rnd, name)
        # coll -> {key: (tag, n)}: this thread's live documents as acknowledged.
        self.pool: dict[str, dict[str, tuple[str, int]]] = {c: {} for c in COLLS}
        with rnd.oracle.lock:
            for (coll, key), state in rnd.oracle.acked.items():
                if state is not None and key.split("-")[1] == name:
                    self.pool[coll][key] = state

    def step(self, conn: Conn) -> None:
        rng = self.rng
        tag = self.next_tag()
        unit = self.rnd.add(Unit(tag, "trx", rng.random() < 0.5))
        plans = [(coll, self.plan(unit, coll)) for coll in rng.sample(COLLS, len(COLLS))]
        aborting = rng.random() < 0.1
        status, reply = send(conn, "POST", "/_api/transaction/begin",
                                  {"collections": {"write": COLLS}, "waitForSync": unit.sync})
        self.expect("begin", status, reply, (201,))
        trx = reply["result"]["id"]
        for coll, (inserts, updates, removes) in plans:
            self.write_inserts(conn, trx, unit, coll, inserts)
            self.write_updates(conn, trx, unit, coll, updates)
            self.write_removes(conn, trx, coll, removes)
        if aborting:
            status, reply = send(conn, "DELETE", f"/_api/transaction/{trx}")
            self.expect("abort", status, reply, (200,))
            unit.state = REFUSED
            return
        unit.state = SENT
        self.rnd.unit_sent.set()
        status, reply = send(conn, "PUT", f"/_api/transaction/{trx}")
        self.expect(f"commit of {tag}", status, reply, (200,))
        unit.state = ACKED
        self.rnd.oracle.apply(unit)
        for (coll, key), state in unit.after.items():
            if state is None:
                self.pool[coll].pop(key, None)
            else:
                self.pool[coll][key] = state

    def plan(self, unit: Unit, coll: str):
        """What the transaction does in `coll`: (inserts, updates, removes), its effects noted."""
        rng = self.rng
        live = sorted(self.pool[coll])
        removes = rng.sample(live, min(len(live), rng.randint(0, 1) + max(0, len(live) - POOL_MAX)))
        rest = [k for k in live if k not in removes]
        updates = rng.sample(rest, min(len(rest), rng.randint(0, 2)))
        inserts = [f"{unit.tag}-{coll[-1]}{i}" for i in range(rng.randint(1, 3))]
        for key in inserts:
            unit.touch((coll, key), None, (unit.tag, 0))
        for key in updates:
            old = self.pool[coll][key]
            unit.touch((coll, key), old, (unit.tag, old[1] + 1))
        for key in removes:
            unit.touch((coll, key), self.pool[coll][key], None)
        return inserts, updates, removes

    def write_inserts(self, conn: Conn, trx: str, unit: Unit, coll: str, keys: list[str]) -> None:
        docs = [self.doc(key, unit.tag, 0) for key in keys]
        how = self.rng.choice(["single", "array", "import"])
        if how == "single":
            for doc in docs:
                status, reply = send(conn, "POST", f"/_api/document/{coll}", doc, trx=trx)
                self.expect(f"insert into {coll}", status, reply, (201, 202))
        elif how == "array":
            status, reply = send(conn, "POST", f"/_api/document/{coll}", docs, trx=trx)
            self.expect(f"array insert into {coll}", status, reply, (201, 202))
            self.items_ok(f"array insert into {coll}", reply, len(docs))
        else:
            lines = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
            status, reply = send(conn, "POST", f"/_api/import?collection={coll}&type=documents",
                                      raw=lines, trx=trx)
            self.expect(f"import into {coll}", status, reply, (201,))
            if not isinstance(reply, dict) or reply.get("created") != len(docs):
                self.rnd.problem(f"{self.name}: import into {coll} in a transaction: {reply}")
                raise Stop()

    def write_updates(self, conn: Conn, trx: str, unit: Unit, coll: str, keys: list[str]) -> None:
        if not keys:
            return
        changes = []
        for key in keys:
            tag, n = unit.after[(coll, key)]
            changes.append({"_key": key, "tag": tag, "n": n})
        if len(keys) > 1 and self.rng.random() < 0.5:
            status, reply = send(conn, "PATCH", f"/_api/document/{coll}", changes, trx=trx)
            self.expect(f"array update in {coll}", status, reply, (201, 202))
            self.items_ok(f"array update in {coll}", reply, len(keys))
            return
        for change in changes:
            if self.rng.random() < 0.5:
                body, method = {k: v for k, v in change.items() if k != "_key"}, "PATCH"
            else:
                body, method = self.doc(change["_key"], change["tag"], change["n"]), "PUT"
                del body["_key"]
            status, reply = send(conn, method, f"/_api/document/{coll}/{change['_key']}", body, trx=trx)
            self.expect(f"{method} in {coll}", status, reply, (201, 202))

    def write_removes(self, conn: Conn, trx: str, coll: str, keys: list[str]) -> None:
        if not keys:
            return
        if len(keys) > 1 or self.rng.random() < 0.5:
            status, reply = send(conn, "DELETE", f"/_api/document/{coll}", keys, trx=trx)
            self.expect(f"array remove in {coll}", status, reply, (200, 202))
            self.items_ok(f"array remove in {coll}", reply, len(keys))
            return
        status, reply = send(conn, "DELETE", f"/_api/document/{coll}/{keys[0]}", trx=trx)
        self.expect(f"remove in {coll}", status, reply, (200, 202))


class MultiWriter(Writer):
    """Multi-document POSTs of new documents into one collection, without a transaction."""

    def step(self, conn: Conn) -> None:
        rng = self.rng
        tag = self.next_tag()
        unit = self.rnd.add(Unit(tag, "multi", rng.random() < 0.5))
        coll = rng.choice(COLLS)
        keys = [f"{tag}-{i}" for i in range(rng.randint(2, 40))]
        for key in keys:
            unit.touch((coll, key), None, (tag, 0))
        docs = [self.doc(key, tag, 0) for key in keys]
        unit.state = SENT
        self.rnd.unit_sent.set()
        status, reply = send(conn, "POST", f"/_api/document/{coll}?waitForSync={str(unit.sync).lower()}",
                                  docs)
        self.expect(f"multi-document POST {tag}", status, reply, (201, 202))
        self.items_ok(f"multi-document POST {tag}", reply, len(docs))
        unit.state = ACKED
        self.rnd.oracle.apply(unit)


class ImportWriter(Writer):
    """All-or-nothing imports (`complete=true`) of new documents into one collection."""

    def step(self, conn: Conn) -> None:
        rng = self.rng
        tag = self.next_tag()
        unit = self.rnd.add(Unit(tag, "import", rng.random() < 0.5))
        coll = rng.choice(COLLS)
        keys = [f"{tag}-{i}" for i in range(rng.randint(2, 40))]
        for key in keys:
            unit.touch((coll, key), None, (tag, 0))
        docs = [self.doc(key, tag, 0) for key in keys]
        refused = rng.random() < 0.1
        if refused:
            docs.append(dict(docs[0]))  # a duplicate key: the whole import is refused
        lines = "".join(json.dumps(doc) + "\n" for doc in docs).encode()
        # A refused import must be absent even when the kill cuts its request.
        unit.state = REFUSED if refused else SENT
        self.rnd.unit_sent.set()
        status, reply = send(conn, 
            "POST", f"/_api/import?collection={coll}&type=documents&complete=true"
                    f"&waitForSync={str(unit.sync).lower()}", raw=lines)
        if refused:
            self.expect(f"import {tag} with a duplicate", status, reply, (400, 409))
            return
        self.expect(f"import {tag}", status, reply, (201,))
        if not isinstance(reply, dict) or reply.get("created") != len(docs) or reply.get("errors"):
            self.rnd.problem(f"{self.name}: import {tag} of {len(docs)}: {reply}")
            raise Stop()
        unit.state = ACKED
        self.rnd.oracle.apply(unit)


# -- the check --------------------------------------------------------------------------------------


def read_keys(conn: Conn, coll: str, keys: list[str]) -> tuple[dict[str, State], list[str]]:
    """The state of each of `keys` in `coll` (onlyget in batches)."""
    found: dict[str, State] = {}
    problems: list[str] = []
    for offset in range(0, len(keys), VERIFY_BATCH):
        batch = keys[offset:offset + VERIFY_BATCH]
        status, reply = send(conn, "PUT", f"/_api/document/{coll}?onlyget=true", batch)
        if status != 200 or not isinstance(reply, list) or len(reply) != len(batch):
            problems.append(f"{coll}: onlyget answered {status}: {str(reply)[:300]}")
            return found, problems
        for key, item in zip(batch, reply):
            if "_key" in item:
                found[key] = (item.get("tag"), item.get("n"))
            elif item.get("errorNum") == 1202:
                found[key] = None
            else:
                problems.append(f"{coll}/{key}: unexpected read result {item}")
    return found, problems


def show(state: State) -> str:
    return "absent" if state is None else f"{state[0]}#{state[1]}"


def verify(srv: QuinceServer, oracle: Oracle, units: list[Unit], every_key: bool = False):
    """Checks the reopened server; returns (problems, verdict counts). Brings the oracle to
    what survived (a unit found whole is applied; a broken one is reported once)."""
    problems: list[str] = []
    verdicts: Counter = Counter()
    conn = Conn(srv.host_port)
    try:
        keys: set[Key] = set(oracle.acked) if every_key else set()
        for unit in units:
            keys.update(unit.after)
        observed: dict[Key, State] = {}
        for coll in COLLS:
            found, more = read_keys(conn, coll, sorted(k for c, k in keys if c == coll))
            problems += more
            observed.update({(coll, k): s for k, s in found.items()})
        if problems:
            return problems, verdicts

        # The units not acknowledged: in flight at the kill (whole or absent), open, aborted or
        # refused (absent). Each is judged on the keys no later unit touched (keys are owned
        # by one thread, and `units` is in each thread's order): an aborted transaction's
        # updates may be redone by the thread's next one.
        last: dict[Key, Unit] = {}
        for unit in units:
            for key in unit.after:
                last[key] = unit
        for unit in units:
            if unit.state == ACKED:
                continue
            mine = [k for k in unit.after if last[k] is unit]
            whole = [k for k in mine if observed.get(k) == unit.after[k]]
            absent = [k for k in mine if observed.get(k) == unit.before[k]]
            # A key whose before and after agree proves nothing either way.
            whole_only = [k for k in whole if k not in absent]
            absent_only = [k for k in absent if k not in whole]
            neither = [k for k in mine if k not in whole and k not in absent]
            if neither:
                verdict = "wrong"
            elif whole_only and absent_only:
                verdict = "partial"
            elif whole_only:
                verdict = "whole"
            else:
                verdict = "absent"
            verdicts[f"{unit.state} {unit.kind}: {verdict}"] += 1
            allowed = ("whole", "absent") if unit.state == SENT else ("absent",)
            if verdict not in allowed:
                sample = (neither or absent_only or whole_only)[:3]
                problems.append(
                    f"{unit.describe()} {unit.state}: {verdict.upper()}: "
                    f"{len(whole_only)} of {len(mine)} writes applied, "
                    f"{len(absent_only)} not, {len(neither)} neither; e.g. " + ", ".join(
                        f"{c}/{k} holds {show(observed.get((c, k)))} "
                        f"(before {show(unit.before[(c, k)])}, after {show(unit.after[(c, k)])})"
                        for c, k in sample))
            if verdict == "whole":
                oracle.apply(unit)  # only a thread's last unit can be in flight
            elif verdict != "absent":
                # Reported once: the oracle takes what the server holds.
                for key in mine:
                    oracle.acked[key] = observed.get(key)
                    oracle.writer[key] = unit

        # Acknowledged units: every key holds what its last acknowledged writer left, unless an
        # in-flight unit found whole overwrote it.
        lost: dict[int, tuple[Unit, list[Key]]] = {}
        for key in sorted(keys):
            want = oracle.acked.get(key)
            if observed.get(key) == want:
                continue
            writer = oracle.writer.get(key)
            if writer is None:
                problems.append(f"{key[0]}/{key[1]}: holds {show(observed.get(key))}, but no unit "
                                f"that touched it left that")
                oracle.acked[key] = observed.get(key)
                continue
            lost.setdefault(id(writer), (writer, []))[1].append(key)
        for writer, missing in lost.values():
            sync = " waitForSync" if writer.sync else ""
            verdicts[f"acked {writer.kind}{sync}: broken"] += 1
            problems.append(
                f"ACKNOWLEDGED {writer.describe()}: {len(missing)} of its writes do not "
                f"hold; e.g. " + ", ".join(
                    f"{c}/{k} holds {show(observed.get((c, k)))}, acknowledged "
                    f"{show(oracle.acked.get((c, k)))}" for c, k in missing[:3]))
            for key in missing:
                oracle.acked[key] = observed.get(key)
        verdicts["acked units"] += sum(1 for u in units if u.state == ACKED)

        for coll in COLLS:
            status, reply = send(conn, "GET", f"/_api/collection/{coll}/count")
            count = reply.get("count") if status == 200 and isinstance(reply, dict) else None
            want = oracle.expected_count(coll)
            if count != want:
                problems.append(f"{coll}: count {count}, expected {want} (documents lost, or a "
                                f"write that no unit made)")
    finally:
        conn.close()
    return problems, verdicts


# -- the harness -------------------------------------------------------------------------------------


def run_round(srv: QuinceServer, oracle: Oracle, seed: int, round_no: int, rng: random.Random):
    """One round of writes ended by SIGKILL; returns (kill description, units, problems)."""
    rnd = Round(srv.host_port, oracle, seed, round_no)
    writers: list[Writer] = [TrxWriter(rnd, f"t{i}") for i in range(TRX_THREADS)]
    writers += [MultiWriter(rnd, "m0"), ImportWriter(rnd, "i0")]
    threads = [threading.Thread(target=w.run, name=w.name) for w in writers]
    mode = rng.choices(["random", "sent"], [40, 60])[0]
    delay = rng.uniform(KILL_DELAY_MIN_S, KILL_DELAY_MAX_S)
    after = rng.uniform(0.0, SENT_KILL_MAX_S)
    began = time.monotonic()
    for thread in threads:
        thread.start()
    problems: list[str] = []
    if mode == "random":
        time.sleep(delay)  # the crash moment itself is what is random here
        what = f"killed after {delay:.2f}s"
    else:
        time.sleep(delay / 2)
        rnd.unit_sent.clear()
        if rnd.unit_sent.wait(SENT_WAIT_S):
            time.sleep(after)
            what = f"killed {after * 1000:.1f}ms after a commit was sent"
        else:
            what = f"killed with no commit sent within {SENT_WAIT_S:.0f}s"
        what += f" at {time.monotonic() - began:.2f}s"
    now = time.monotonic()
    for conn in list(rnd.conns):
        busy = conn.busy
        if busy is not None and now - busy[0] > STUCK_S:
            problems.append(f"{busy[1]} unanswered for {now - busy[0]:.1f}s when the server was killed")
    srv.kill()
    rnd.stop.set()
    for thread in threads:
        thread.join(THREAD_EXIT_TIMEOUT_S)
        if thread.is_alive():
            raise ServerError(f"thread {thread.name} did not end within {THREAD_EXIT_TIMEOUT_S:.0f}s of the kill")
    return what, rnd.units, problems + rnd.problems


def setup(srv: QuinceServer) -> None:
    conn = Conn(srv.host_port)
    try:
        for name in COLLS:
            status, reply = send(conn, "POST", "/_api/collection", {"name": name, "journalSize": JOURNAL_SIZE})
            assert status == 200, f"creating {name} answered {status}: {reply}"
    finally:
        conn.close()


def tamper(srv: QuinceServer, oracle: Oracle, units: list[Unit], which: int) -> str:
    """Self-test: changes the database behind the oracle's back; returns what it did."""
    conn = Conn(srv.host_port)
    try:
        acked = [u for u in units if u.state == ACKED and u.kind == "trx"]
        unit = acked[-1]
        present = sorted(k for k, s in unit.after.items() if s is not None)
        coll, key = present[0]
        if which == 0:
            status, _ = send(conn, "DELETE", f"/_api/document/{coll}/{key}?waitForSync=true")
            return f"removed {coll}/{key} of acknowledged {unit.tag}" if status == 200 else f"remove: {status}"
        if which == 1:
            status, _ = send(conn, "PATCH", f"/_api/document/{coll}/{key}?waitForSync=true", {"tag": "x"})
            return f"changed {coll}/{key} of acknowledged {unit.tag}" if status == 201 else f"patch: {status}"
        status, _ = send(conn, "POST", f"/_api/document/{COLLS[0]}?waitForSync=true", {"_key": "phantom"})
        return "inserted a document no unit wrote" if status == 201 else f"insert: {status}"
    finally:
        conn.close()


def main() -> int:
    # A SIGTERM (the test script's timeout) unwinds through the `finally` blocks, which kill
    # the server and remove the work directory.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seed = int(os.environ.get("TRX_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    selftest = bool(os.environ.get("TRX_SELFTEST"))
    rounds = int(os.environ.get("TRX_ROUNDS", "3" if selftest else "20"))
    budget = float(os.environ.get("TRX_BUDGET_S", "120"))
    assert rounds >= 1
    rng = random.Random(seed)
    print(f"transaction crash test: seed {seed} (set TRX_SEED to repeat), {rounds} rounds, "
          f"budget {budget:.0f}s, binary {quince_bin()}", flush=True)

    work = Path(tempfile.mkdtemp(prefix="quince-trx-"))
    srv = QuinceServer(work / "data", extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                       log_path=work / "server.log")
    oracle = Oracle()
    passed = failed = 0
    started = time.monotonic()
    verdicts: Counter = Counter()
    try:
        srv.start()
        setup(srv)
        for round_no in range(1, rounds + 1):
            if time.monotonic() - started > budget:
                print(f"round {round_no}: time budget of {budget:.0f}s spent; stopping early", flush=True)
                failed += rounds - round_no + 1
                break
            what, units, problems = run_round(srv, oracle, seed, round_no, rng)
            try:
                srv.start()
            except ServerError as err:
                print(f"round {round_no}: FAILED: server did not reopen: {err}", flush=True)
                failed += 1
                break
            if selftest:
                what_tamper = tamper(srv, oracle, units, round_no - 1)
                more, _ = verify(srv, oracle, units)
                if more and not problems:
                    passed += 1
                    print(f"round {round_no}: self-test: '{what_tamper}' caught: {more[0]}", flush=True)
                else:
                    failed += 1
                    print(f"round {round_no}: self-test: '{what_tamper}' NOT caught (or other problems: "
                          f"{problems[:3]})", flush=True)
                break_after = round_no >= 3
                if break_after:
                    break
                continue
            more, counts = verify(srv, oracle, units)
            problems += more
            verdicts.update(counts)
            kinds = Counter(u.kind for u in units)
            line = (f"round {round_no}: {what}; {kinds['trx']} transactions, {kinds['multi']} "
                    f"multi-document requests, {kinds['import']} imports; "
                    f"{sum(1 for u in units if u.state == SENT)} in flight")
            if problems:
                failed += 1
                print(f"{line}: FAILED", flush=True)
                for problem in problems[:20]:
                    print(f"    {problem}", flush=True)
                if len(problems) > 20:
                    print(f"    ... and {len(problems) - 20} more", flush=True)
            else:
                passed += 1
                print(f"{line}: ok", flush=True)

        if srv.running() and not selftest:
            # The last check: a graceful stop and a clean reopen keep every known key.
            code = srv.stop()
            srv.start()
            problems, _ = verify(srv, oracle, [], every_key=True)
            if code != 0 or problems:
                failed += 1
                print(f"graceful restart: FAILED (exit code {code})", flush=True)
                for problem in problems[:20]:
                    print(f"    {problem}", flush=True)
            else:
                print(f"graceful restart: ok, {sum(1 for s in oracle.acked.values() if s)} documents",
                      flush=True)
            if srv.stop() != 0:
                failed += 1
                print("final SIGTERM: non-zero exit", flush=True)
    except (ServerError, AssertionError, OSError, Gone, http.client.HTTPException) as err:
        failed += 1
        print(f"transaction crash test aborted: {err!r}", flush=True)
    finally:
        srv.kill()

    elapsed = time.monotonic() - started
    print(f"verdicts: {dict(sorted(verdicts.items()))}")
    print(f"transaction crash test: {passed} rounds passed, {failed} failed ({elapsed:.1f}s); seed {seed}")
    if failed:
        print(f"data and log kept in {work} (server log: {work / 'server.log'})")
        print(srv.stderr_tail(3000))
        return 1
    if os.environ.get("TRX_KEEP"):
        print(f"data and log kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
