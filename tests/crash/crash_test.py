#!/usr/bin/env python3
"""The kill -9 crash test: acknowledged writes survive any crash, and the server always reopens.

What it is: a harness that runs `quince serve` on one data directory for many rounds. In each
round a writer process (several threads, one keep-alive connection each) inserts and replaces
documents with `waitForSync=true` while the harness kills the server with SIGKILL at a random
moment. The harness then restarts the server on the same directory, requires the ready line,
and checks every key against an oracle built only from acknowledged writes:

  * a key whose last acknowledged write is (value, _rev) must hold exactly that, unless a later
    write to it was in flight at the kill, in which case it may hold that write's value instead;
  * a key that was only ever in flight may be absent or hold the in-flight value;
  * nothing else may exist: the collection count equals the number of keys found, which lies
    between the acknowledged keys and the acknowledged keys plus in-flight inserts.

Journals are 1 MiB so rotation and sealing happen across rounds. The RNG seed is printed and
can be fixed with CRASH_SEED; CRASH_ROUNDS sets the number of rounds (at least 20 by default).

What it is not: a benchmark, or a test of unacknowledged durability (writes without
waitForSync may be lost by design).

Invariants: each writer thread owns its keys (prefix `t<n>-`), so a key has at most one write in
flight; the writer logs an intent line before each request and an ack line only after the 201
came back; every wait in the harness is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from quince_server import ROOT_PASSWORD, QuinceServer, ServerError, basic_auth_header  # noqa: E402

COLLECTION = "crash"
JOURNAL_SIZE = 1024 * 1024
WRITER_THREADS = 4
ROUND_WRITE_MAX_S = 2.8
KILL_DELAY_MIN_S = 0.3
WRITER_EXIT_TIMEOUT_S = 20.0
VERIFY_BATCH = 500
TOTAL_BUDGET_S = 110.0


# -- the writer process ---------------------------------------------------------------------


def writer_main(args) -> int:
    """Writes until the duration ends or the server goes away; logs intents and acks."""
    state = json.loads(Path(args.state).read_text())
    deadline = time.monotonic() + args.duration
    log_lock = threading.Lock()
    log = open(args.log, "a", buffering=1)
    auth = basic_auth_header("root", ROOT_PASSWORD)
    host, port = args.host, args.port

    def record(entry: dict) -> None:
        with log_lock:
            log.write(json.dumps(entry) + "\n")

    def run_thread(index: int) -> None:
        rng = random.Random(args.seed * 1000 + index)
        prefix = f"t{index}-"
        own_keys = [key for key in state["keys"] if key.startswith(prefix)]
        next_key = state["next_key"].get(str(index), 0)
        conn = http.client.HTTPConnection(host, port, timeout=5)
        seq = 0
        while time.monotonic() < deadline:
            seq += 1
            value = f"r{args.round}-t{index}-{seq}"
            pad = "p" * rng.randint(200, 4000)
            if not own_keys or rng.random() < 0.5:
                key = f"{prefix}{next_key}"
                next_key += 1
                method, path, body = "POST", f"/_api/document/{COLLECTION}?waitForSync=true", {"_key": key}
            else:
                key = rng.choice(own_keys)
                method = rng.choice(["PUT", "PATCH"])
                path, body = f"/_api/document/{COLLECTION}/{key}?waitForSync=true", {}
            body.update({"v": value, "pad": pad})
            record({"op": "intent", "key": key, "v": value})
            try:
                conn.request(method, path, body=json.dumps(body), headers={
                    "Authorization": auth, "Content-Type": "application/json"})
                resp = conn.getresponse()
                payload = resp.read()
            except (OSError, http.client.HTTPException):
                return  # The server is gone: this write stays in flight.
            if resp.status != 201:
                record({"op": "error", "key": key, "v": value, "status": resp.status,
                        "body": payload.decode("utf-8", "replace")[:300]})
                return
            rev = json.loads(payload)["_rev"]
            record({"op": "ack", "key": key, "v": value, "rev": rev})
            if method == "POST":
                own_keys.append(key)

    threads = [threading.Thread(target=run_thread, args=(i,)) for i in range(WRITER_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    return 0


# -- the oracle -----------------------------------------------------------------------------


class Oracle:
    """What the database must hold: per key, the last acknowledged (value, rev)."""

    def __init__(self) -> None:
        self.acked: dict[str, tuple[str, str]] = {}
        self.next_key: dict[int, int] = {i: 0 for i in range(WRITER_THREADS)}

    def writer_state(self) -> dict:
        return {"keys": sorted(self.acked), "next_key": {str(k): v for k, v in self.next_key.items()}}

    def absorb_log(self, log_path: Path) -> tuple[dict[str, str], list[dict]]:
        """Applies acks; returns the in-flight writes (key -> value) and any error lines."""
        pending: dict[str, str] = {}
        errors: list[dict] = []
        if not log_path.exists():
            return pending, errors
        for line in log_path.read_text().splitlines():
            entry = json.loads(line)
            key = entry["key"]
            thread = int(key[1:].split("-", 1)[0])
            number = int(key.split("-", 1)[1])
            self.next_key[thread] = max(self.next_key[thread], number + 1)
            if entry["op"] == "intent":
                assert key not in pending, f"two writes in flight for {key}"
                pending[key] = entry["v"]
            elif entry["op"] == "ack":
                assert pending.pop(key) == entry["v"]
                self.acked[key] = (entry["v"], entry["rev"])
            else:
                pending.pop(key, None)
                errors.append(entry)
        return pending, errors


# -- the harness ----------------------------------------------------------------------------


class Client:
    def __init__(self, srv: QuinceServer) -> None:
        self.conn = http.client.HTTPConnection(*srv.host_port, timeout=30)
        self.auth = basic_auth_header("root", ROOT_PASSWORD)

    def call(self, method: str, path: str, body=None) -> tuple[int, object]:
        data = None if body is None else json.dumps(body)
        self.conn.request(method, path, body=data, headers={"Authorization": self.auth,
                                                             "Content-Type": "application/json"})
        resp = self.conn.getresponse()
        payload = resp.read()
        return resp.status, (json.loads(payload) if payload else None)

    def close(self) -> None:
        self.conn.close()


def verify(srv: QuinceServer, oracle: Oracle, pending: dict[str, str]) -> tuple[list[str], dict]:
    """Checks the database against the oracle; brings the oracle to what survived."""
    problems: list[str] = []
    must_exist = set(oracle.acked)
    may_exist = set(pending) - must_exist
    client = Client(srv)
    try:
        keys = sorted(must_exist | may_exist)
        found: dict[str, dict] = {}
        for offset in range(0, len(keys), VERIFY_BATCH):
            batch = keys[offset:offset + VERIFY_BATCH]
            status, body = client.call("PUT", f"/_api/document/{COLLECTION}?onlyget=true", batch)
            if status != 200:
                return [f"onlyget answered {status}: {body}"], {}
            for key, item in zip(batch, body):
                if "_key" in item:
                    found[key] = item
                elif item.get("errorNum") != 1202:
                    problems.append(f"{key}: unexpected item {item}")

        for key in keys:
            doc = found.get(key)
            acked = oracle.acked.get(key)
            in_flight = pending.get(key)
            if acked is not None:
                if doc is None:
                    problems.append(f"{key}: acknowledged {acked} is missing")
                elif (doc["v"], doc["_rev"]) == acked:
                    pass
                elif in_flight is not None and doc["v"] == in_flight:
                    oracle.acked[key] = (doc["v"], doc["_rev"])
                else:
                    problems.append(f"{key}: holds ({doc['v']}, {doc['_rev']}), acknowledged {acked}, "
                                    f"in flight {in_flight}")
            elif doc is not None:
                if doc["v"] == in_flight:
                    oracle.acked[key] = (doc["v"], doc["_rev"])
                else:
                    problems.append(f"{key}: holds {doc['v']}, only {in_flight} was in flight")

        status, body = client.call("GET", f"/_api/collection/{COLLECTION}/count")
        count = body["count"] if status == 200 else None
        status, body = client.call("GET", f"/_api/collection/{COLLECTION}/figures")
        figures = body.get("figures", {}) if status == 200 else {}
    finally:
        client.close()

    if count != len(found):
        problems.append(f"count {count} != documents found {len(found)} (of {len(keys)} known keys)")
    if not (len(must_exist) <= (count or 0) <= len(must_exist) + len(may_exist)):
        problems.append(f"count {count} outside [{len(must_exist)}, {len(must_exist) + len(may_exist)}]")
    alive = figures.get("alive", {}).get("count")
    if alive is not None and alive != count:
        problems.append(f"figures alive.count {alive} != count {count}")
    return problems, figures


def setup_collection(srv: QuinceServer) -> None:
    client = Client(srv)
    try:
        status, body = client.call("POST", "/_api/collection", {"name": COLLECTION, "journalSize": JOURNAL_SIZE})
        assert status == 200, f"creating the collection answered {status}: {body}"
    finally:
        client.close()


def run_writer(srv: QuinceServer, oracle: Oracle, work: Path, round_no: int, seed: int,
               duration: float) -> subprocess.Popen:
    state_path = work / f"state-{round_no}.json"
    state_path.write_text(json.dumps(oracle.writer_state()))
    host, port = srv.host_port
    return subprocess.Popen(
        [sys.executable, __file__, "writer", "--host", host, "--port", str(port), "--state", str(state_path),
         "--log", str(work / f"writer-{round_no}.log"), "--seed", str(seed), "--round", str(round_no),
         "--duration", str(duration)],
        stdin=subprocess.DEVNULL,
    )


def harness_main(args) -> int:
    seed = int(os.environ.get("CRASH_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    rounds = int(os.environ.get("CRASH_ROUNDS", "20"))
    assert rounds >= 1
    rng = random.Random(seed)
    print(f"crash test: seed {seed} (set CRASH_SEED to repeat), {rounds} rounds", flush=True)

    work = Path(tempfile.mkdtemp(prefix="quince-crash-"))
    srv = QuinceServer(work / "data", extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                       log_path=work / "server.log")
    oracle = Oracle()
    passed = failed = 0
    started = time.monotonic()
    try:
        srv.start()
        setup_collection(srv)
        for round_no in range(1, rounds + 1):
            if time.monotonic() - started > TOTAL_BUDGET_S:
                print(f"round {round_no}: time budget of {TOTAL_BUDGET_S:.0f} s spent; stopping early")
                failed += rounds - round_no + 1
                break
            kill_after = rng.uniform(KILL_DELAY_MIN_S, ROUND_WRITE_MAX_S)
            writer = run_writer(srv, oracle, work, round_no, rng.randrange(1, 2**31), ROUND_WRITE_MAX_S + 1)
            time.sleep(kill_after)  # The crash moment itself is what is random here.
            srv.kill()
            try:
                writer.wait(timeout=WRITER_EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                writer.kill()
                writer.wait()
            pending, errors = oracle.absorb_log(work / f"writer-{round_no}.log")

            restart_began = time.monotonic()
            try:
                srv.start()
            except ServerError as err:
                print(f"round {round_no}: FAILED: server did not reopen: {err}", flush=True)
                failed += 1
                break
            restart_s = time.monotonic() - restart_began
            problems, figures = verify(srv, oracle, pending)
            problems += [f"writer got {e['status']} for {e['key']}: {e['body']}" for e in errors]
            datafiles = figures.get("datafiles", {}).get("count")
            line = (f"round {round_no}: killed after {kill_after:.2f}s, {len(oracle.acked)} keys acknowledged, "
                    f"{len(pending)} in flight, datafiles {datafiles}, reopened in {restart_s:.2f}s")
            if problems:
                failed += 1
                print(f"{line}: FAILED", flush=True)
                for problem in problems[:20]:
                    print(f"    {problem}", flush=True)
            else:
                passed += 1
                print(f"{line}: ok", flush=True)

        if srv.running():
            # The last check: a graceful stop and a clean reopen keep everything as well.
            code = srv.stop()
            srv.start()
            problems, figures = verify(srv, oracle, {})
            if code != 0 or problems:
                failed += 1
                print(f"graceful restart: FAILED (exit code {code}): {problems[:20]}", flush=True)
            else:
                datafiles = figures.get("datafiles", {}).get("count", 0)
                print(f"graceful restart: ok, {len(oracle.acked)} keys, datafiles {datafiles}", flush=True)
                if not datafiles:
                    failed += 1
                    print("    no journal ever sealed: rotation was not exercised", flush=True)
            if srv.stop() != 0:
                failed += 1
                print("final SIGTERM: non-zero exit", flush=True)
    except (ServerError, AssertionError, OSError, http.client.HTTPException) as err:
        failed += 1
        print(f"crash test aborted: {err!r}", flush=True)
    finally:
        srv.kill()

    print(f"crash test: {passed} rounds passed, {failed} failed ({time.monotonic() - started:.1f} s)")
    if failed:
        print(f"data and logs kept in {work} (server log: {work / 'server.log'})")
        print(srv.stderr_tail(3000))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    writer = sub.add_parser("writer")
    writer.add_argument("--host", required=True)
    writer.add_argument("--port", type=int, required=True)
    writer.add_argument("--state", required=True)
    writer.add_argument("--log", required=True)
    writer.add_argument("--seed", type=int, required=True)
    writer.add_argument("--round", type=int, required=True)
    writer.add_argument("--duration", type=float, required=True)
    args = parser.parse_args()
    if args.command == "writer":
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        return writer_main(args)
    return harness_main(args)


if __name__ == "__main__":
    sys.exit(main())
