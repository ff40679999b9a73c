#!/usr/bin/env python3
"""The power-cut test: acknowledged writes survive a simulated power loss, and the server reopens.

What it is: a harness that runs `quince serve` on `quince-powercut`, an in-memory FUSE file
system that keeps a live and a durable image of every file and directory (see
crates/powercut). Each *mount* is a fresh, empty file system; on it the harness runs
POWERCUT_CUTS_PER_MOUNT *rounds* (3 by default). In each round:

  * writer threads (one keep-alive connection each) insert, replace, update and remove
    documents with `waitForSync=true` in two collections made at the mount's start, and a DDL
    thread creates and drops collections (writing a few documents into each it creates) and
    asks for compactions; every request is logged as an intent before it is sent and as an ack
    only after its success status came back;
  * at a random moment (in 40% of the rounds: a random moment within 50 ms after a collection
    create or drop, or a compaction request, was sent) the harness SIGKILLs the server, waits
    until it is reaped (so every request it had sent to the file system was answered), and
    sends `cut <seed>`: the file system becomes what a reboot would find (durable entries
    only, and per file its durable bytes plus a seeded prefix of its unsynced writes, the last
    possibly torn);
  * in about a quarter of the rounds it then starts the server and kills it again during
    recovery, and cuts again (a power loss while the engine repairs its files; half of the
    mounts also get one during the very first start, on an empty directory);
  * it restarts the server on the same mount (a refusal to open is a failure: the stderr tail
    is shown) and checks it against the log:
      - a key whose last acknowledged write is (value, _rev) holds exactly that, unless a later
        write to it was in flight, whose value it may hold instead (or, for an in-flight
        remove, be absent); an acknowledged remove stays removed; a key only ever in flight
        may be absent or hold that value;
      - nothing else exists: each collection's count equals the known documents read back;
      - an acknowledged collection create holds (the collection exists) and an acknowledged
        drop holds (it does not); one in flight may have happened or not; no unknown
        collection exists.

After a mount's last round a graceful stop must leave nothing unsynced (a cut right after it
changes no file and no directory entry), and the restart after it must find everything. The
harness prints the seed (POWERCUT_SEED repeats the decisions: kill moments, cut seeds,
operations; thread interleaving is not reproducible), each cut's effect, and at the end the
server's logged events (compactions, truncated journal tails, debris removed: the recovery
paths taken). POWERCUT_ROUNDS sets the number of rounds (cuts that are checked; 12 by
default), POWERCUT_CUTS_PER_MOUNT the rounds per mount, POWERCUT_BUDGET_S the time budget
(170 s; rounds left when it is spent count as failures). On a failure the data directory is
kept twice, as the cut left it (before the server touched it) and as it is after the server's
recovery, and the work directory is kept.

Runs as root (mounting FUSE without fusermount3); needs `target/debug/quince-powercut`
(`cargo build -p quince-powercut`) and the server (`$QUINCE_BIN` or target/debug/quince).

What it is not: a benchmark, a test of writes without waitForSync (lost by design), of
failing fsyncs or full disks (crates/storage tests those on SimFileIo), or of file systems that
persist more than was synced (the model keeps the least a POSIX file system may keep).

Invariants: each writer thread owns its keys, so a key has at most one request in flight;
logs are replayed into the oracle only after every thread of the round ended; no sleep is used
as synchronisation (the kill delays and the pauses of the DDL thread are random jitter); every
wait, HTTP call and control command is bounded.
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
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from quince_server import (  # noqa: E402
    JsonClient,
    REPO_ROOT,
    ROOT_PASSWORD,
    QuinceServer,
    ServerError,
    basic_auth_header,
)

JOURNAL_SIZE = 1024 * 1024
STABLE_COLLECTIONS = ("pc_a", "pc_b")
WRITER_THREADS = 3
KEYS_PER_THREAD_MAX = 120  # beyond it writers update instead of insert, so datafiles die
KILL_DELAY_MIN_S = 0.2
KILL_DELAY_MAX_S = 2.2
KILL_MODES = {"random": 0.6, "ddl": 0.25, "compact": 0.15}  # weights
KILL_JITTER_MAX_S = 0.05  # how far into a targeted request the kill may fall
RECOVERY_CUT_SHARE = 0.25
FIRST_START_CUT_SHARE = 0.5
DYNAMIC_COLLECTIONS_MAX = 3
HTTP_TIMEOUT_S = 10.0
THREAD_EXIT_TIMEOUT_S = HTTP_TIMEOUT_S + 10.0
FS_START_TIMEOUT_S = 15.0
FS_STOP_TIMEOUT_S = 15.0
CONTROL_TIMEOUT_S = 20.0
VERIFY_BATCH = 500
AUTH = basic_auth_header("root", ROOT_PASSWORD)
EVENT = re.compile(r'event="?([a-z_]+\.[a-z_.]+)')


def powercut_bin() -> Path:
    """The file system binary: `$POWERCUT_BIN`, else `target/debug/quince-powercut`."""
    configured = os.environ.get("POWERCUT_BIN")
    path = Path(configured) if configured else Path("target/debug/quince-powercut")
    return path if path.is_absolute() else REPO_ROOT / path


# -- the file system ----------------------------------------------------------------------


class FsError(RuntimeError):
    """The power-cut file system did not mount, answer or unmount as expected."""


class PowercutFs:
    """One `quince-powercut` process and its mount."""

    def __init__(self, mountpoint: Path, control: Path, log_path: Path) -> None:
        self.mountpoint = mountpoint
        self.control = control
        self.log_path = log_path
        self.proc: subprocess.Popen | None = None

    def start(self) -> "PowercutFs":
        binary = powercut_bin()
        if not binary.exists():
            raise FsError(f"{binary} does not exist (cargo build -p quince-powercut)")
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            # Its stdin is a pipe this process holds: if the harness dies, the mount goes too.
            self.proc = subprocess.Popen(
                [str(binary), str(self.mountpoint), "--control", str(self.control), "--watch-stdin"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            )
        lines: queue.Queue = queue.Queue()

        def drain(stream) -> None:
            for raw in stream:
                lines.put(raw.decode("utf-8", "replace").rstrip("\n"))
            lines.put(None)

        threading.Thread(target=drain, args=(self.proc.stdout,), daemon=True).start()
        try:
            line = lines.get(timeout=FS_START_TIMEOUT_S)
        except queue.Empty:
            line = None
        if line is None or not line.startswith("quince-powercut: mounted"):
            self.stop()
            raise FsError(f"quince-powercut did not mount {self.mountpoint}: {line!r}\n{self.log_tail()}")
        return self

    def command(self, line: str) -> dict | None:
        """Sends one control command; returns its JSON answer (None for a bare `ok`)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONTROL_TIMEOUT_S)
            sock.connect(str(self.control))
            sock.sendall(line.encode() + b"\n")
            answer = sock.makefile("rb").readline().decode().rstrip("\n")
        if answer == "ok":
            return None
        if not answer.startswith("ok "):
            raise FsError(f"control command {line!r} answered {answer!r}")
        return json.loads(answer[3:])

    def stop(self) -> None:
        """Unmounts (control command, then `umount -l` as a fallback) and ends the process."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self.command("unmount")
                self.proc.wait(timeout=FS_STOP_TIMEOUT_S)
            except (OSError, FsError, subprocess.TimeoutExpired):
                pass
        if os.path.ismount(self.mountpoint):
            subprocess.run(["umount", "-l", str(self.mountpoint)], timeout=FS_STOP_TIMEOUT_S,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=FS_STOP_TIMEOUT_S)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc = None

    def log_tail(self, limit: int = 3000) -> str:
        try:
            return self.log_path.read_bytes()[-limit:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the log and the oracle -----------------------------------------------------------------


class Log:
    """Intents and acks of one round, in the order they happened (also written to a file)."""

    def __init__(self, path: Path) -> None:
        self.entries: list[dict] = []
        self.lock = threading.Lock()
        self.file = open(path, "a", buffering=1)

    def record(self, entry: dict) -> None:
        with self.lock:
            self.entries.append(entry)
            self.file.write(json.dumps(entry) + "\n")

    def close(self) -> None:
        self.file.close()


ABSENT = ("absent",)


class Oracle:
    """What the database must hold: acknowledged documents and collections."""

    def __init__(self) -> None:
        self.docs: dict[tuple[str, str], tuple] = {}  # ("doc", v, rev) or ABSENT
        self.collections: dict[str, str] = {}  # name -> "present" | "dropped"
        self.next_key: dict[int, int] = {}

    def absorb(self, entries: list[dict]) -> tuple[dict, dict, list[dict]]:
        """Applies acks; returns in-flight document writes, in-flight DDL, and error lines."""
        pending: dict[tuple[str, str], tuple] = {}
        pending_ddl: dict[str, str] = {}
        errors: list[dict] = []
        for entry in entries:
            op, kind = entry["op"], entry["kind"]
            if kind in ("create", "drop"):
                name = entry["coll"]
                if op == "intent":
                    pending_ddl[name] = kind
                elif op == "ack":
                    del pending_ddl[name]
                    self.collections[name] = "present" if kind == "create" else "dropped"
                    if kind == "drop":
                        self.forget_collection(name)
                else:
                    errors.append(entry)
                continue
            slot = (entry["coll"], entry["key"])
            if op == "intent":
                assert slot not in pending, f"two writes in flight for {slot}"
                pending[slot] = ABSENT if kind == "remove" else ("doc", entry["v"])
            elif op == "ack":
                pending.pop(slot)
                self.docs[slot] = ABSENT if kind == "remove" else ("doc", entry["v"], entry["rev"])
            else:
                # A refused write is reported as a failure; it stays in flight, because an
                # error reply (a failed fsync, say) does not prove that nothing landed.
                errors.append(entry)
        return pending, pending_ddl, errors

    def forget_collection(self, name: str) -> None:
        for slot in [slot for slot in self.docs if slot[0] == name]:
            del self.docs[slot]

    def live_keys(self, coll: str, prefix: str) -> list[str]:
        return sorted(key for (c, key), state in self.docs.items()
                      if c == coll and key.startswith(prefix) and state[0] == "doc")

    def removed_keys(self, coll: str, prefix: str) -> list[str]:
        return sorted(key for (c, key), state in self.docs.items()
                      if c == coll and key.startswith(prefix) and state == ABSENT)


# -- HTTP -----------------------------------------------------------------------------------


def connect(srv: QuinceServer) -> JsonClient:
    """One keep-alive connection as root."""
    return JsonClient(srv.host_port, AUTH, HTTP_TIMEOUT_S)


def logged_call(log: Log, client: JsonClient, intent: dict, method: str, path: str, body,
                ok_status: int) -> dict | None:
    """Logs the intent, sends, logs the ack (with `_rev` for documents) or the error.
    Returns the reply on success, None when the server is gone or refused."""
    log.record({"op": "intent", **intent})
    try:
        status, reply = client.call(method, path, body)
    except (OSError, http.client.HTTPException):
        return None  # The server is gone: this request stays in flight.
    if status != ok_status:
        log.record({"op": "error", **intent, "status": status, "body": str(reply)[:300]})
        return None
    ack = {"op": "ack", **intent}
    if intent["kind"] in ("insert", "replace", "update"):
        ack["rev"] = reply["_rev"]
    log.record(ack)
    return reply if isinstance(reply, dict) else {}


def writer_thread(srv: QuinceServer, oracle: Oracle, log: Log, index: int, seed: int, tag: str,
                  stop: threading.Event) -> None:
    """Inserts, replaces, updates and removes its own keys until the server goes away."""
    rng = random.Random(seed)
    prefix = f"t{index}-"
    live = {c: oracle.live_keys(c, prefix) for c in STABLE_COLLECTIONS}
    removed = {c: oracle.removed_keys(c, prefix) for c in STABLE_COLLECTIONS}
    client = connect(srv)
    seq = 0
    try:
        while not stop.is_set():
            seq += 1
            coll = rng.choice(STABLE_COLLECTIONS)
            value = f"{tag}-t{index}-{seq}"
            body = {"v": value, "pad": "p" * rng.randint(200, 4000)}
            roll = rng.random()
            own = sum(len(keys) for keys in live.values())
            if not live[coll] or (roll < 0.45 and own < KEYS_PER_THREAD_MAX):
                if removed[coll] and rng.random() < 0.3:
                    key = removed[coll].pop(rng.randrange(len(removed[coll])))
                else:
                    key = f"{prefix}{oracle.next_key.get(index, 0)}"
                    oracle.next_key[index] = oracle.next_key.get(index, 0) + 1
                kind, method, path = "insert", "POST", f"/_api/document/{coll}?waitForSync=true"
                body["_key"] = key
                ok_status = 201
            else:
                key = rng.choice(live[coll])
                path = f"/_api/document/{coll}/{key}?waitForSync=true"
                if roll < 0.75:
                    kind, method, ok_status = "replace", "PUT", 201
                elif roll < 0.87:
                    kind, method, ok_status = "update", "PATCH", 201
                else:
                    kind, method, body, ok_status = "remove", "DELETE", None, 200
            intent = {"kind": kind, "coll": coll, "key": key}
            if kind != "remove":
                intent["v"] = value
            if logged_call(log, client, intent, method, path, body, ok_status) is None:
                return
            if kind == "insert":
                live[coll].append(key)
            elif kind == "remove":
                live[coll].remove(key)
                removed[coll].append(key)
    finally:
        client.close()


def ddl_thread(srv: QuinceServer, oracle: Oracle, log: Log, seed: int, tag: str,
               stop: threading.Event, sent: dict[str, threading.Event]) -> None:
    """Creates collections (and writes into them), drops them, and asks for compactions;
    sets `sent["ddl"]` / `sent["compact"]` as each request goes out (for targeted kills)."""
    rng = random.Random(seed)
    client = connect(srv)
    dynamic = sorted(name for name, state in oracle.collections.items()
                     if state == "present" and name not in STABLE_COLLECTIONS)
    number = 0
    try:
        while not stop.is_set():
            roll = rng.random()
            if roll < 0.15:
                coll = rng.choice(STABLE_COLLECTIONS)
                sent["compact"].set()
                try:
                    client.call("PUT", f"/_api/collection/{coll}/compact")
                except (OSError, http.client.HTTPException):
                    return
            elif len(dynamic) < DYNAMIC_COLLECTIONS_MAX and (roll < 0.6 or not dynamic):
                number += 1
                name = f"dyn_{tag}_{number}"
                intent = {"kind": "create", "coll": name}
                body = {"name": name, "journalSize": JOURNAL_SIZE}
                sent["ddl"].set()
                if logged_call(log, client, intent, "POST", "/_api/collection", body, 200) is None:
                    return
                dynamic.append(name)
                for i in range(rng.randint(1, 3)):
                    intent = {"kind": "insert", "coll": name, "key": f"d-{i}", "v": f"{name}-{i}"}
                    doc = {"_key": f"d-{i}", "v": intent["v"]}
                    path = f"/_api/document/{name}?waitForSync=true"
                    if logged_call(log, client, intent, "POST", path, doc, 201) is None:
                        return
            elif dynamic:
                name = dynamic.pop(rng.randrange(len(dynamic)))
                intent = {"kind": "drop", "coll": name}
                sent["ddl"].set()
                if logged_call(log, client, intent, "DELETE", f"/_api/collection/{name}", None,
                               200) is None:
                    return
            # Jitter between catalog changes, not synchronisation: documents dominate the mix.
            stop.wait(rng.uniform(0.0, 0.15))
    finally:
        client.close()


# -- checking -------------------------------------------------------------------------------


def doc_allowed(doc: dict | None, state: tuple | None) -> bool:
    """True if `doc` (None: absent) is the outcome `state` describes (None: never written)."""
    if state is None or state == ABSENT:
        return doc is None
    if doc is None:
        return False
    if len(state) == 3:
        return (doc.get("v"), doc.get("_rev")) == (state[1], state[2])
    return doc.get("v") == state[1]


def verify(srv: QuinceServer, oracle: Oracle, pending: dict, pending_ddl: dict) -> list[str]:
    """Checks the server against the oracle; brings the oracle to what survived."""
    problems: list[str] = []
    client = connect(srv)
    try:
        status, body = client.call("GET", "/_api/collection?excludeSystem=true")
        if status != 200:
            return [f"listing collections answered {status}: {body}"]
        existing = {item["name"] for item in body["result"]}
        for name in sorted(existing | set(oracle.collections) | set(pending_ddl)):
            state, in_flight = oracle.collections.get(name), pending_ddl.get(name)
            there = name in existing
            if state is None and in_flight is None:
                problems.append(f"collection {name} exists, but nothing ever created it")
            elif state == "present" and not there and in_flight != "drop":
                problems.append(f"collection {name}: acknowledged create, but it is gone")
            elif state == "dropped" and there and in_flight != "create":
                problems.append(f"collection {name}: acknowledged drop, but it exists")
            if there:
                oracle.collections[name] = "present"
            else:
                if state == "present":
                    oracle.forget_collection(name)
                oracle.collections[name] = "dropped"
        for name in sorted(existing):
            problems += verify_collection(client, oracle, pending, name)
    finally:
        client.close()
    return problems


def verify_collection(client: JsonClient, oracle: Oracle, pending: dict, coll: str) -> list[str]:
    problems: list[str] = []
    keys = sorted({key for (c, key) in list(oracle.docs) + list(pending) if c == coll})
    found: dict[str, dict] = {}
    for offset in range(0, len(keys), VERIFY_BATCH):
        batch = keys[offset:offset + VERIFY_BATCH]
        status, body = client.call("PUT", f"/_api/document/{coll}?onlyget=true", batch)
        if status != 200:
            return [f"{coll}: onlyget answered {status}: {body}"]
        for key, item in zip(batch, body):
            if "_key" in item:
                found[key] = item
            elif item.get("errorNum") != 1202:
                problems.append(f"{coll}/{key}: unexpected item {item}")
    for key in keys:
        slot = (coll, key)
        doc, acked, in_flight = found.get(key), oracle.docs.get(slot), pending.get(slot)
        if doc_allowed(doc, acked) or (in_flight is not None and doc_allowed(doc, in_flight)):
            oracle.docs[slot] = ("doc", doc["v"], doc["_rev"]) if doc is not None else ABSENT
            continue
        held = "absent" if doc is None else f"({doc.get('v')}, {doc.get('_rev')})"
        problems.append(f"{coll}/{key}: holds {held}, acknowledged {acked}, in flight {in_flight}")
    status, body = client.call("GET", f"/_api/collection/{coll}/count")
    count = body.get("count") if status == 200 else None
    if count != len(found):
        problems.append(f"{coll}: count {count} != documents found {len(found)} "
                        f"(of {len(keys)} known keys)")
    return problems


def datafile_count(srv: QuinceServer) -> int:
    client = connect(srv)
    total = 0
    try:
        for coll in STABLE_COLLECTIONS:
            status, body = client.call("GET", f"/_api/collection/{coll}/figures")
            if status == 200:
                total += body.get("figures", {}).get("datafiles", {}).get("count", 0)
    finally:
        client.close()
    return total


# -- the harness ----------------------------------------------------------------------------


def cut_summary(report: dict) -> str:
    return (f"cut {report['seed']}: {report['files_kept']} files kept, {report['lost']} paths lost, "
            f"{report['restored']} restored, unsynced ops {report['ops_kept']}/{report['ops_total']} "
            f"kept, {report['torn_writes']} torn, {report['bytes_dropped']} bytes dropped")


def kill_during_start(srv: QuinceServer, delay_s: float) -> None:
    """Starts the server and SIGKILLs it after `delay_s` (during recovery), reaping it."""
    with open(srv.log_path, "ab") as log:
        log.write(f"\n==== start to be killed after {delay_s:.3f}s\n".encode())
        log.flush()
        proc = subprocess.Popen(srv.command(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=log)
    try:
        proc.wait(timeout=delay_s)  # The kill moment is what is random here.
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=HTTP_TIMEOUT_S)


class Run:
    """The state of the whole test: counters, the RNG, the work directory."""

    def __init__(self, seed: int, rounds: int, cuts_per_mount: int, budget_s: float) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.cuts_per_mount = cuts_per_mount
        self.budget_s = budget_s
        self.work = Path(tempfile.mkdtemp(prefix="quince-powercut-"))
        self.started = time.monotonic()
        self.passed = 0
        self.failed = 0
        self.round_no = 0
        self.datafiles_max = 0
        self.last_start_s = 0.3

    def over_budget(self) -> bool:
        return time.monotonic() - self.started > self.budget_s

    def snapshot(self, fs: PowercutFs) -> None:
        """Copies the data directory as a reboot finds it, for the post-mortem of a failure."""
        target = self.work / "after-last-cut"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(fs.mountpoint / "data", target)

    def fail(self, line: str, details: list[str], fs: PowercutFs | None, cut: dict | None) -> None:
        self.failed += 1
        print(f"{line}: FAILED", flush=True)
        for detail in details[:25]:
            print(f"    {detail}", flush=True)
        if len(details) > 25:
            print(f"    ... and {len(details) - 25} more", flush=True)
        if cut is not None:
            print(f"    last cut: {json.dumps(cut)[:4000]}", flush=True)
        snapshot = self.work / "after-last-cut"
        if cut is not None and snapshot.exists():
            kept = self.work / f"failed-{self.failed}-after-cut"
            snapshot.rename(kept)
            print(f"    data directory as the cut left it (before the restart): {kept}", flush=True)
        if fs is not None and (fs.mountpoint / "data").exists():
            copy = self.work / f"failed-{self.failed}-now"
            shutil.copytree(fs.mountpoint / "data", copy, dirs_exist_ok=True)
            print(f"    data directory now (after the server's recovery): {copy}", flush=True)


def run_mount(run: Run, mount_no: int) -> None:
    """One fresh file system: setup, rounds until the mount's share is done, graceful restart."""
    fs = PowercutFs(run.work / f"mnt-{mount_no}", run.work / f"control-{mount_no}.sock",
                    run.work / f"fs-{mount_no}.log")
    srv: QuinceServer | None = None
    try:
        fs.start()
        data = fs.mountpoint / "data"
        # The data directory exists before the server starts, as an operator makes it; the
        # server does not fsync the parent of a directory it creates itself.
        data.mkdir()
        fsync_dir(fs.mountpoint)
        srv = QuinceServer(data, extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                           log_path=run.work / f"server-{mount_no}.log")
        if run.rng.random() < FIRST_START_CUT_SHARE:
            # A power loss while the server initialises an empty directory; it must still start.
            delay = run.rng.uniform(0.0, run.last_start_s)
            kill_during_start(srv, delay)
            cut = fs.command(f"cut {run.rng.randrange(1, 2**63)}")
            line = f"mount {mount_no}: killed during the first start after {delay:.2f}s, {cut_summary(cut)}"
            run.snapshot(fs)
            try:
                srv.start()
            except ServerError as err:
                run.fail(f"{line}; server did not open", str(err).splitlines(), fs, cut)
                return
            print(line, flush=True)
        else:
            srv.start()
        oracle = Oracle()
        client = connect(srv)
        for name in STABLE_COLLECTIONS:
            body = {"name": name, "journalSize": JOURNAL_SIZE}
            status, body = client.call("POST", "/_api/collection", body)
            assert status == 200, f"creating {name} answered {status}: {body}"
            oracle.collections[name] = "present"
        client.close()

        for _ in range(run.cuts_per_mount):
            if run.round_no >= run.rounds:
                break
            if run.over_budget():
                return
            run.round_no += 1
            if not run_round(run, fs, srv, oracle, mount_no):
                return
        if run.round_no >= run.rounds or not run.over_budget():
            graceful_restart(run, fs, srv, oracle, mount_no)
    except (ServerError, FsError, AssertionError, OSError, http.client.HTTPException) as err:
        run.fail(f"mount {mount_no}: aborted: {err!r}", [], fs, None)
    finally:
        if srv is not None:
            srv.kill()
        stats = None
        try:
            stats = fs.command("stats") if fs.proc is not None else None
        except (OSError, FsError):
            pass
        fs.stop()
        if stats:
            counters = stats["counters"]
            print(f"mount {mount_no}: file system served {counters['writes']} writes, "
                  f"{counters['fsyncs'] + counters['fdatasyncs']} fsyncs, "
                  f"{counters['fsyncdirs']} directory fsyncs, {counters['renames']} renames, "
                  f"{counters['cross_dir_renames']} across directories, {counters['cuts']} cuts",
                  flush=True)


def run_round(run: Run, fs: PowercutFs, srv: QuinceServer, oracle: Oracle, mount_no: int) -> bool:
    """One kill, cut, restart and check. False when the mount cannot go on."""
    rng = run.rng
    tag = f"r{run.round_no}"
    kill_after = rng.uniform(KILL_DELAY_MIN_S, KILL_DELAY_MAX_S)
    kill_mode = rng.choices(list(KILL_MODES), weights=list(KILL_MODES.values()))[0]
    jitter = rng.uniform(0.0, KILL_JITTER_MAX_S)
    cut_seed = rng.randrange(1, 2**63)
    recovery_cut = rng.random() < RECOVERY_CUT_SHARE
    recovery_delay = rng.uniform(0.0, run.last_start_s)
    recovery_seed = rng.randrange(1, 2**63)

    log = Log(run.work / f"log-round-{run.round_no}.jsonl")
    stop = threading.Event()
    sent = {"ddl": threading.Event(), "compact": threading.Event()}
    threads = [threading.Thread(target=writer_thread, name=f"writer-{i}",
                                args=(srv, oracle, log, i, rng.randrange(2**31), tag, stop))
               for i in range(WRITER_THREADS)]
    threads.append(threading.Thread(target=ddl_thread, name="ddl",
                                    args=(srv, oracle, log, rng.randrange(2**31), tag, stop, sent)))
    for thread in threads:
        thread.start()
    began = time.monotonic()
    if kill_mode == "random":
        time.sleep(kill_after)  # The crash moment itself is what is random here.
    else:
        # Wait for the next request of that kind (bounded), then kill a random moment into it.
        time.sleep(KILL_DELAY_MIN_S)
        sent[kill_mode].clear()
        if sent[kill_mode].wait(timeout=KILL_DELAY_MAX_S):
            time.sleep(jitter)
        else:
            kill_mode = "random (no request came)"
    killed_after = time.monotonic() - began
    srv.kill()
    stop.set()
    for thread in threads:
        thread.join(timeout=THREAD_EXIT_TIMEOUT_S)
        if thread.is_alive():
            raise AssertionError(f"thread {thread.name} did not end after the kill")
    log.close()
    pending, pending_ddl, errors = oracle.absorb(log.entries)

    line = f"round {run.round_no} (mount {mount_no}): killed after {killed_after:.2f}s ({kill_mode})"
    cut = fs.command(f"cut {cut_seed}")
    line += f", {cut_summary(cut)}"
    if recovery_cut:
        kill_during_start(srv, recovery_delay)
        second = fs.command(f"cut {recovery_seed}")
        line += f"; killed in recovery after {recovery_delay:.2f}s, {cut_summary(second)}"
        cut = {"first": cut, "in_recovery": second}
    run.snapshot(fs)

    began = time.monotonic()
    try:
        srv.start()
    except ServerError as err:
        run.fail(f"{line}; server did not reopen", str(err).splitlines(), fs, cut)
        return False
    run.last_start_s = time.monotonic() - began
    problems = verify(srv, oracle, pending, pending_ddl)
    problems += [f"{e['kind']} {e['coll']}/{e.get('key', '')} answered {e['status']}: {e['body']}"
                 for e in errors]
    run.datafiles_max = max(run.datafiles_max, datafile_count(srv))
    docs = sum(1 for state in oracle.docs.values() if state[0] == "doc")
    line += (f"; {docs} documents acknowledged, {len(pending)} writes and {len(pending_ddl)} "
             f"DDL in flight, reopened in {run.last_start_s:.2f}s")
    if problems:
        run.fail(line, problems, fs, cut)
    else:
        run.passed += 1
        print(f"{line}: ok", flush=True)
    return True


def graceful_restart(run: Run, fs: PowercutFs, srv: QuinceServer, oracle: Oracle, mount_no: int) -> None:
    """SIGTERM must leave nothing unsynced: a cut right after it changes nothing, and a restart
    finds every acknowledged write."""
    code = srv.stop()
    problems = [] if code == 0 else [f"SIGTERM exit code {code}"]
    cut = fs.command(f"cut {run.rng.randrange(1, 2**63)}")
    if cut["ops_total"] or cut["lost"] or cut["restored"]:
        unsynced = [f"{f['path']} ({f['ops_total']} ops)" for f in cut["files"]]
        problems.append(f"after a clean shutdown a power cut still changes something: "
                        f"{cut_summary(cut)}; lost {cut['lost_paths']}, restored "
                        f"{cut['restored_paths']}, unsynced files {unsynced}")
    srv.start()
    problems += verify(srv, oracle, {}, {})
    if srv.stop() != 0:
        problems.append("second SIGTERM: non-zero exit")
    if problems:
        run.fail(f"mount {mount_no}: graceful restart", problems, fs, None)
    else:
        print(f"mount {mount_no}: graceful restart ok", flush=True)


def engine_events(work: Path) -> str:
    """How often each logged event (`event="..."`) occurred in the server logs: evidence of
    which recovery and maintenance paths the run went through."""
    counts: dict[str, int] = {}
    for log in sorted(work.glob("server-*.log")):
        for match in EVENT.finditer(log.read_text(errors="replace")):
            counts[match.group(1)] = counts.get(match.group(1), 0) + 1
    return ", ".join(f"{name} {count}" for name, count in sorted(counts.items())) or "none"


def main() -> int:
    seed = int(os.environ.get("POWERCUT_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    rounds = int(os.environ.get("POWERCUT_ROUNDS", "12"))
    cuts_per_mount = int(os.environ.get("POWERCUT_CUTS_PER_MOUNT", "3"))
    budget_s = float(os.environ.get("POWERCUT_BUDGET_S", "170"))
    assert rounds >= 1 and cuts_per_mount >= 1
    # A SIGTERM (the test script's timeout) unwinds through the `finally` blocks, which kill
    # the server and unmount.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        print("powercut test: needs root and /dev/fuse (it mounts FUSE without fusermount3)",
              flush=True)
        return 1
    run = Run(seed, rounds, cuts_per_mount, budget_s)
    print(f"powercut test: seed {seed} (set POWERCUT_SEED to repeat), {rounds} rounds, "
          f"{cuts_per_mount} per mount, work directory {run.work}", flush=True)
    mount_no = 0
    while run.round_no < run.rounds:
        if run.over_budget():
            left = run.rounds - run.round_no
            print(f"time budget of {budget_s:.0f} s spent; {left} rounds not run", flush=True)
            run.failed += left
            break
        mount_no += 1
        run_mount(run, mount_no)
    if run.passed and run.datafiles_max == 0:
        print("no journal was ever sealed into a datafile: rotation was not exercised", flush=True)
        run.failed += 1
    print(f"server events over the run: {engine_events(run.work)}", flush=True)
    elapsed = time.monotonic() - run.started
    print(f"powercut test: seed {seed}: {run.passed} rounds passed, {run.failed} failed "
          f"({elapsed:.1f} s, up to {run.datafiles_max} datafiles)", flush=True)
    if run.failed:
        print(f"logs, server logs and failed data directories kept in {run.work}", flush=True)
        return 1
    shutil.rmtree(run.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
