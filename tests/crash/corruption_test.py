#!/usr/bin/env python3
"""The corruption test: one flipped byte anywhere in the data directory is refused or harmless.

What it is: a harness that builds, once, a data directory holding acknowledged data (all writes
with `waitForSync=true`; 1 MiB journals, so that there are sealed datafiles with hint files, a
compaction output, an active journal; several collections of both types, one renamed, one with
generated keys, one dropped; updates, replaces and removes; a second user), stopped once with
SIGKILL and once more, after a reopen, with SIGTERM. Then, per seed, it copies one of the two
images (even seeds the SIGTERM one, odd seeds the SIGKILL one), flips one byte (xor 0xff) at a
random offset of a random file (any file but `LOCK`), starts the server, and checks the rule:

  (a) the server refuses to start: it exits non-zero within START_TIMEOUT_S, and its stderr
      names the damaged file or a directory that holds it and says why with an ArangoDB error
      number (1100 corrupted datafile, 1101 illegal parameter file) or the word "corrupt"; or
  (b) it opens, and then every acknowledged document reads back with its exact value and
      `_rev`, or its read answers errorNum 1100; a removed key reads 404/1202 (or 1100); every
      collection exists with its acknowledged name, id and properties and no other collection
      exists; every collection's count equals its acknowledged count; the users are unchanged.

It must never open with less (or other) data and no error. Seeds are CORRUPT_FIRST (1 by
default) to CORRUPT_FIRST + CORRUPT_SEEDS - 1 (400 by default, about 45 s); CORRUPT_SEED runs
one seed; CORRUPT_BUDGET_S bounds the run (30 s + 0.4 s a seed by default; seeds not run when
it is spent count as a failure).
CORRUPT_FLIP=ascii replaces the byte with another printable ASCII byte instead of xor 0xff:
xor 0xff turns any byte of a JSON file into invalid UTF-8, which every parser refuses, so only
this mode can produce a metadata file that still parses but says something else.
A seed picks the file by its index among the image's files (sorted paths) and the offset, so
it repeats as long as the image has the same files (the SIGKILL image may or may not hold the
newest datafile's hint, depending on timing: the file is printed). For each failing seed the
file, offset, byte, what the server did and what was wrong are printed, and a summary groups
the failures by category and by kind of file.

What it is not: a test of several faults at once, of faults while the server runs, or of
recovery from a crash (see kill_loop.py). It does not decide which of (a) or
(b) is right for a given byte; both are allowed.

Invariants: the images are never modified (each seed works on a copy); every start and stop
is bounded in time; the oracle is what the server acknowledged while the image was built,
never what it reads back later.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))

from quince_server import (  # noqa: E402
    ROOT_PASSWORD,
    JsonClient,
    QuinceServer,
    ServerError,
    basic_auth_header,
    quince_bin,
)

JOURNAL_SIZE = 1024 * 1024
START_TIMEOUT_S = 20.0
REQUEST_TIMEOUT_S = 20.0
VERIFY_BATCH = 500
KEEP_FAILED_DIRS = 10
BUDGET_PER_SEED_S = 0.4  # a seed takes about 0.1 s with the debug binary on 2 cores
ALICE = ("alice", "alice-pw")
PROPERTY_KEYS = ("id", "name", "type", "isSystem", "waitForSync", "journalSize", "globallyUniqueId",
                 "schema", "computedValues", "cacheEnabled")
CLEAR_ERROR = re.compile(r"\b110[01]\b|corrupt", re.IGNORECASE)


def connect(srv: QuinceServer, user: tuple[str, str] = ("root", ROOT_PASSWORD)) -> JsonClient:
    """A keep-alive connection as `user`."""
    return JsonClient(srv.host_port, basic_auth_header(*user), REQUEST_TIMEOUT_S)


def user_part(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k not in ("_key", "_id", "_rev")}


# -- building the image --------------------------------------------------------------------------


class Expected:
    """What the server acknowledged: per collection, documents (user part, rev) and removed keys."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, tuple[dict, str]]] = {}
        self.removed: dict[str, set[str]] = {}
        self.properties: dict[str, dict] = {}
        self.users: list[str] = []

    def to_json(self) -> dict:
        return {"docs": self.docs, "removed": {c: sorted(k) for c, k in self.removed.items()},
                "properties": self.properties, "users": self.users}


class Builder:
    def __init__(self, client: JsonClient, rng: random.Random, expected: Expected) -> None:
        self.c = client
        self.rng = rng
        self.e = expected

    def call_ok(self, method: str, path: str, body=None, want=(200, 201)) -> object:
        status, reply = self.c.call(method, path, body)
        assert status in want, f"{method} {path} answered {status}: {str(reply)[:300]}"
        return reply

    def create(self, name: str, **props) -> None:
        self.call_ok("POST", "/_api/collection", dict({"name": name, "journalSize": JOURNAL_SIZE}, **props))
        self.e.docs[name] = {}
        self.e.removed[name] = set()

    def pad(self, lo: int, hi: int) -> str:
        return "".join(self.rng.choice("abcdefghij") for _ in range(self.rng.randint(lo, hi)))

    def insert(self, name: str, bodies: list[dict]) -> list[str]:
        keys = []
        for offset in range(0, len(bodies), 100):
            batch = bodies[offset:offset + 100]
            reply = self.call_ok("POST", f"/_api/document/{name}?waitForSync=true", batch, want=(201,))
            for body, item in zip(batch, reply):
                assert not item.get("error"), item
                self.e.docs[name][item["_key"]] = (user_part(body), item["_rev"])
                self.e.removed[name].discard(item["_key"])
                keys.append(item["_key"])
        return keys

    def update(self, name: str, keys: list[str], replace: bool) -> None:
        for offset in range(0, len(keys), 100):
            batch = keys[offset:offset + 100]
            bodies = []
            for key in batch:
                if replace:
                    bodies.append({"_key": key, "v": f"replaced-{key}", "pad": self.pad(50, 400)})
                else:
                    bodies.append({"_key": key, "v": f"patched-{key}", "n": self.rng.randint(0, 10**9)})
            reply = self.call_ok("PUT" if replace else "PATCH", f"/_api/document/{name}?waitForSync=true",
                                 bodies, want=(201,))
            for body, item in zip(bodies, reply):
                assert not item.get("error"), item
                key = body["_key"]
                new = user_part(body) if replace else dict(self.e.docs[name][key][0], **user_part(body))
                self.e.docs[name][key] = (new, item["_rev"])

    def remove(self, name: str, keys: list[str]) -> None:
        reply = self.call_ok("DELETE", f"/_api/document/{name}?waitForSync=true", keys, want=(200,))
        for key, item in zip(keys, reply):
            assert not item.get("error"), item
            del self.e.docs[name][key]
            self.e.removed[name].add(key)


def build_images(work: Path) -> tuple[dict[str, Path], Expected]:
    """Builds the data directory, returns the SIGKILL and SIGTERM images and the oracle."""
    rng = random.Random(20240601)
    data = work / "build"
    srv = QuinceServer(data, extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                       log_path=work / "build.log")
    expected = Expected()
    srv.start(START_TIMEOUT_S)
    client = connect(srv)
    b = Builder(client, rng, expected)
    try:
        # cor_a: enough to seal datafiles, then churn and a compaction (a supersedes record).
        b.create("cor_a")
        keys_a = b.insert("cor_a", [{"_key": f"a{i}", "v": f"a{i}", "pad": b.pad(600, 1000)}
                                    for i in range(1800)])
        b.update("cor_a", rng.sample(keys_a, 700), replace=False)
        b.update("cor_a", rng.sample(keys_a, 300), replace=True)
        b.remove("cor_a", rng.sample(keys_a, 250))
        b.call_ok("PUT", "/_api/collection/cor_a/compact")
        more = b.insert("cor_a", [{"_key": f"a{1800 + i}", "v": f"late{i}", "pad": b.pad(300, 900)}
                                  for i in range(900)])
        b.update("cor_a", rng.sample(more, 200), replace=False)
        b.remove("cor_a", rng.sample(sorted(expected.docs["cor_a"]), 100))
        # cor_b: waitForSync as a property, journal only, removes and re-inserts.
        b.create("cor_b", waitForSync=True)
        keys_b = b.insert("cor_b", [{"_key": f"b{i}", "v": i, "nested": {"x": [i, str(i)]}}
                                    for i in range(400)])
        gone = rng.sample(keys_b, 80)
        b.remove("cor_b", gone)
        b.insert("cor_b", [{"_key": key, "v": f"again-{key}"} for key in gone[:30]])
        b.update("cor_b", rng.sample(sorted(expected.docs["cor_b"]), 100), replace=True)
        # cor_c: generated keys (autoincrement), renamed from cor_c0.
        b.create("cor_c0", keyOptions={"type": "autoincrement", "increment": 3, "offset": 100})
        keys_c = b.insert("cor_c0", [{"v": f"c{i}"} for i in range(250)])
        b.remove("cor_c0", keys_c[:20])
        b.call_ok("PUT", "/_api/collection/cor_c0/rename", {"name": "cor_c"})
        expected.docs["cor_c"] = expected.docs.pop("cor_c0")
        expected.removed["cor_c"] = expected.removed.pop("cor_c0")
        b.insert("cor_c", [{"v": f"c-after-{i}"} for i in range(30)])
        # cor_e: an edge collection.
        b.create("cor_e", type=3)
        b.insert("cor_e", [{"_key": f"e{i}", "_from": f"cor_a/a{i}", "_to": f"cor_b/b{i}", "w": i}
                           for i in range(150)])
        # A dropped collection leaves nothing behind.
        b.create("cor_x")
        b.insert("cor_x", [{"_key": f"x{i}"} for i in range(50)])
        b.call_ok("DELETE", "/_api/collection/cor_x")
        del expected.docs["cor_x"], expected.removed["cor_x"]
        # A second user (the _users collection holds acknowledged data too).
        b.call_ok("POST", "/_api/user", {"user": ALICE[0], "passwd": ALICE[1]})
        b.call_ok("PUT", f"/_api/user/{ALICE[0]}/database/_system", {"grant": "ro"})
        for name in expected.docs:
            props = b.call_ok("GET", f"/_api/collection/{name}/properties")
            expected.properties[name] = {k: props.get(k) for k in PROPERTY_KEYS}
            expected.properties[name]["keyOptions"] = props.get("keyOptions")
            count = b.call_ok("GET", f"/_api/collection/{name}/count")["count"]
            assert count == len(expected.docs[name]), f"{name}: count {count} != {len(expected.docs[name])}"
        users = b.call_ok("GET", "/_api/user")
        expected.users = sorted(u["user"] for u in users["result"])
    finally:
        client.close()

    images = {}
    srv.kill()  # the SIGKILL image: as the process left it, no shutdown
    images["kill"] = work / "image-kill"
    shutil.copytree(data, images["kill"])
    srv.start(START_TIMEOUT_S)
    problems = check_open(srv, expected)
    assert not problems, f"the undamaged image does not read back: {problems[:5]}"
    assert srv.stop() == 0, "SIGTERM of the build server failed"
    images["term"] = work / "image-term"
    shutil.copytree(data, images["term"])
    for image in images.values():
        (image / "LOCK").unlink(missing_ok=True)
    return images, expected


# -- the check ---------------------------------------------------------------------------------


def check_open(srv: QuinceServer, e: Expected) -> list[str]:
    """Rule (b): everything acknowledged reads back exactly (or 1100); counts, names, users."""
    problems: list[str] = []
    client = connect(srv)
    try:
        status, reply = client.call("GET", "/_api/collection?excludeSystem=true")
        if status != 200:
            return [f"listing collections answered {status}: {reply}"]
        listed = sorted(c["name"] for c in reply["result"])
        if listed != sorted(e.docs):
            problems.append(f"collections {listed}, acknowledged {sorted(e.docs)}")
        for name in sorted(e.docs):
            if name not in listed:
                continue
            status, props = client.call("GET", f"/_api/collection/{name}/properties")
            if status != 200:
                problems.append(f"{name}: properties answered {status}: {props}")
                continue
            want = e.properties[name]
            for k in PROPERTY_KEYS:
                if props.get(k) != want[k]:
                    problems.append(f"{name}: property {k} is {props.get(k)!r}, acknowledged {want[k]!r}")
            have_ko, want_ko = dict(props.get("keyOptions") or {}), dict(want["keyOptions"] or {})
            have_last, want_last = have_ko.pop("lastValue", 0), want_ko.pop("lastValue", 0)
            if have_ko != want_ko or (have_last or 0) < (want_last or 0):
                problems.append(f"{name}: keyOptions {props.get('keyOptions')}, acknowledged {want['keyOptions']}")
            problems += check_documents(client, name, e)
        status, reply = client.call("GET", "/_api/database")
        if status != 200 or reply.get("result") != ["_system"]:
            problems.append(f"databases: {status} {reply}")
        status, reply = client.call("GET", "/_api/user")
        users = sorted(u["user"] for u in reply["result"]) if status == 200 else None
        if users != e.users:
            problems.append(f"users {users}, acknowledged {e.users} ({status})")
    finally:
        client.close()
    alice = connect(srv, ALICE)
    try:
        status, reply = alice.call("GET", "/_api/version")
        if status != 200:
            problems.append(f"user {ALICE[0]} cannot log in: {status} {reply}")
    finally:
        alice.close()
    return problems


def check_documents(client: JsonClient, name: str, e: Expected) -> list[str]:
    problems: list[str] = []
    acked = e.docs[name]
    keys = sorted(acked) + sorted(e.removed[name])
    found = 0
    corrupted = 0
    for offset in range(0, len(keys), VERIFY_BATCH):
        batch = keys[offset:offset + VERIFY_BATCH]
        status, reply = client.call("PUT", f"/_api/document/{name}?onlyget=true", batch)
        if status != 200 or not isinstance(reply, list) or len(reply) != len(batch):
            # A whole-request error: read each key on its own instead.
            reply = []
            for key in batch:
                status, item = client.call("GET", f"/_api/document/{name}/{key}")
                reply.append(item if isinstance(item, dict) else {"error": True, "errorNum": status,
                                                                  "errorMessage": str(item)})
        for key, item in zip(batch, reply):
            want = acked.get(key)
            if item.get("errorNum") == 1100:
                corrupted += 1
                continue
            if "_key" in item:
                if want is None:
                    problems.append(f"{name}/{key}: removed, but reads back as v={item.get('v')!r} "
                                    f"rev={item.get('_rev')}")
                elif (user_part(item), item["_rev"]) != want:
                    problems.append(f"{name}/{key}: reads back v={item.get('v')!r} rev={item['_rev']}, "
                                    f"acknowledged v={want[0].get('v')!r} rev={want[1]}")
                else:
                    found += 1
            elif want is not None:
                problems.append(f"{name}/{key}: acknowledged (rev {want[1]}), read answers "
                                f"{item.get('errorNum')} {item.get('errorMessage')}")
            elif item.get("errorNum") != 1202:
                problems.append(f"{name}/{key}: removed, read answers {item}")
    status, reply = client.call("GET", f"/_api/collection/{name}/count")
    count = reply.get("count") if status == 200 and isinstance(reply, dict) else None
    if count != len(acked):
        problems.append(f"{name}: count {count} ({status}), acknowledged {len(acked)} "
                        f"({found} read back, {corrupted} answered 1100)")
    return problems


# -- one seed ---------------------------------------------------------------------------------


def file_kind(rel: str) -> str:
    base = rel.rsplit("/", 1)[-1]
    if base == "parameter.json":
        return "database parameter.json" if re.search(r"database-\d+/parameter.json$", rel) else \
            "collection parameter.json"
    for prefix, kind in (("journal-", "journal"), ("datafile-", "datafile"), ("compaction-", "compaction")):
        if base.startswith(prefix):
            return f"{kind} {base.rsplit('.', 1)[-1]}" if kind == "datafile" else kind
    return base


def damage(image: Path, target: Path, rng: random.Random, flip: str) -> tuple[str, int, int, int, int]:
    """Copies the image and damages one byte; returns (relative path, offset, size, old, new)."""
    shutil.copytree(image, target)
    files = sorted(p.relative_to(target).as_posix() for p in target.rglob("*")
                   if p.is_file() and p.name != "LOCK" and p.stat().st_size > 0)
    rel = rng.choice(files)
    path = target / rel
    size = path.stat().st_size
    offset = rng.randrange(size)
    with open(path, "r+b") as f:
        f.seek(offset)
        old = f.read(1)[0]
        if flip == "xor":
            new = old ^ 0xFF
        else:  # "ascii": another printable byte, which keeps a JSON file valid UTF-8
            new = rng.choice([b for b in range(0x20, 0x7F) if b != old])
        f.seek(offset)
        f.write(bytes([new]))
        f.flush()
        os.fsync(f.fileno())
    return rel, offset, size, old, new


def run_seed(seed: int, images: dict[str, Path], expected: Expected, work: Path, flip: str) -> dict:
    rng = random.Random(seed)
    image_name = "term" if seed % 2 == 0 else "kill"
    target = work / f"seed-{seed}"
    rel, offset, size, old, new = damage(images[image_name], target / "data", rng, flip)
    result = {"seed": seed, "image": image_name, "file": rel, "kind": file_kind(rel), "offset": offset,
              "size": size, "byte": old, "new": new, "problems": [], "outcome": "", "dir": target}
    srv = QuinceServer(target / "data", extra_args=["--database.maximal-journal-size", str(JOURNAL_SIZE)],
                       log_path=target / "server.log")
    began = time.monotonic()
    try:
        try:
            srv.start(START_TIMEOUT_S)
        except ServerError as err:
            code = srv.proc.poll() if srv.proc is not None else None
            stderr = srv.stderr_tail(20000)
            if code is None or "did not print its ready line" in str(err):
                result["outcome"] = "hung"
                result["problems"].append(f"neither ready nor exited within {START_TIMEOUT_S:.0f}s")
                result["category"] = "start-up hangs"
                return result
            message = error_lines(stderr)
            result["outcome"] = (f"refused (exit {code}, {time.monotonic() - began:.2f}s): "
                                 f"{message.splitlines()[-1][:220] if message else ''}")
            names_file = names_damaged(rel, message)
            clear = bool(CLEAR_ERROR.search(message))
            if code == 0:
                result["problems"].append("exited with status 0 before it was ready")
                result["category"] = "refused with exit status 0"
            elif not (names_file and clear):
                missing = []
                if not names_file:
                    missing.append("does not name the damaged file or its directory")
                if not clear:
                    missing.append("has no errorNum 1100/1101 nor the word 'corrupt'")
                result["problems"].append(f"refused, but stderr {' and '.join(missing)}: {message[:400]!r}")
                result["category"] = ("refused: panic" if "panicked" in message else "refused: unclear error")
            return result
        result["outcome"] = f"opened ({time.monotonic() - began:.2f}s)"
        try:
            problems = check_open(srv, expected)
        except (OSError, http.client.HTTPException) as err:
            problems = [f"server stopped answering after it opened: {err!r}\n{srv.stderr_tail(1500)}"]
        result["problems"] += problems
        if problems:
            result["category"] = categorize(problems)
        try:
            code = srv.stop()
            if code != 0:
                result["problems"].append(f"SIGTERM after the check: exit status {code}")
                result.setdefault("category", "bad exit after open")
        except ServerError as err:
            result["problems"].append(f"did not stop: {err}")
            result.setdefault("category", "bad exit after open")
    finally:
        srv.kill()
    return result


def names_damaged(rel: str, message: str) -> bool:
    """True when `message` names the damaged file or the directory that holds it (by path)."""
    candidates = [rel]
    parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if parent and parent != "databases":
        candidates.append(parent)
    return any(re.search(re.escape(c) + r"(?![\w.-])", message) for c in candidates)


def error_lines(stderr: str) -> str:
    """The lines of the failed start that say why (errors, panics), else the tail."""
    lines = [line for line in stderr.splitlines()
             if not line.startswith("====") and ("ERROR" in line or "panicked" in line
                                                 or line.startswith("quince:"))]
    return "\n".join(lines[-6:]) if lines else stderr[-600:]


def categorize(problems: list[str]) -> str:
    text = "\n".join(problems)
    if "collections [" in text or "property name" in text:
        return "opened: collection missing or renamed"
    if "property " in text or "keyOptions" in text:
        return "opened: collection properties changed"
    if "users" in text or "log in" in text or "_users" in text:
        return "opened: users changed"
    if "databases:" in text:
        return "opened: databases changed"
    if "removed, but reads back" in text:
        return "opened: removed document back"
    if "read answers 1202" in text:
        return "opened: acknowledged documents lost (404)"
    if "reads back v=" in text:
        return "opened: wrong value or revision"
    if "count " in text:
        return "opened: count differs"
    if "stopped answering" in text:
        return "opened, then died"
    return "opened: other"


def main() -> int:
    # A SIGTERM (the test script's timeout) unwinds through the `finally` blocks, which kill
    # the servers and remove the work directories.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if "CORRUPT_SEED" in os.environ:
        seeds = [int(os.environ["CORRUPT_SEED"])]
    else:
        first = int(os.environ.get("CORRUPT_FIRST", "1"))
        seeds = list(range(first, first + int(os.environ.get("CORRUPT_SEEDS", "400"))))
    flip = os.environ.get("CORRUPT_FLIP", "xor")
    assert flip in ("xor", "ascii"), "CORRUPT_FLIP is xor (default) or ascii"
    budget = float(os.environ.get("CORRUPT_BUDGET_S", str(max(60.0, 30 + BUDGET_PER_SEED_S * len(seeds)))))
    print(f"corruption test: seeds {seeds[0]}..{seeds[-1]} ({len(seeds)}), damage {flip}, budget {budget:.0f}s, "
          f"binary {quince_bin()}", flush=True)
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="quince-corrupt-"))
    try:
        images, expected = build_images(work)
    except (ServerError, AssertionError, OSError, http.client.HTTPException) as err:
        print(f"corruption test: building the image failed: {err!r}\n(kept {work})", flush=True)
        return 1
    (work / "expected.json").write_text(json.dumps(expected.to_json()))
    for name, image in images.items():
        files = sorted(p.relative_to(image).as_posix() for p in image.rglob("*") if p.is_file())
        print(f"image {name}: {len(files)} files: "
              + ", ".join(f"{f} ({(image / f).stat().st_size})" for f in files), flush=True)
    print(f"built in {time.monotonic() - started:.1f}s: "
          + ", ".join(f"{c} {len(d)} docs" for c, d in expected.docs.items()), flush=True)

    results = []
    kept = 0
    skipped = 0
    for seed in seeds:
        if time.monotonic() - started > budget:
            skipped = len(seeds) - len(results)
            print(f"time budget of {budget:.0f}s spent; {skipped} seeds not run", flush=True)
            break
        result = run_seed(seed, images, expected, work, flip)
        results.append(result)
        where = f"{result['file']} @ {result['offset']}/{result['size']} (0x{result['byte']:02x}->0x{result['new']:02x})"
        if result["problems"]:
            print(f"seed {seed}: FAILED [{result['category']}] {result['image']} image, {where}: "
                  f"{result['outcome']}", flush=True)
            for problem in result["problems"][:8]:
                print(f"    {problem}", flush=True)
            if len(result["problems"]) > 8:
                print(f"    ... and {len(result['problems']) - 8} more", flush=True)
            if kept < KEEP_FAILED_DIRS:
                kept += 1
                print(f"    kept in {result['dir']}", flush=True)
            else:
                shutil.rmtree(result["dir"], ignore_errors=True)
        else:
            print(f"seed {seed}: ok, {result['image']} image, {where}: {result['outcome']}", flush=True)
            shutil.rmtree(result["dir"], ignore_errors=True)

    failed = [r for r in results if r["problems"]]
    outcomes = Counter("refused" if r["outcome"].startswith("refused") else
                       "opened" if r["outcome"].startswith("opened") else r["outcome"] for r in results)
    print(f"\ncorruption test: {len(results) - len(failed)} seeds passed, {len(failed)} failed, "
          f"{skipped} not run ({time.monotonic() - started:.1f}s); outcomes {dict(outcomes)}")
    if failed:
        by_category: dict[str, list[int]] = defaultdict(list)
        for r in failed:
            by_category[r["category"]].append(r["seed"])
        print("failures by category:")
        for category, seeds_of in sorted(by_category.items()):
            print(f"  {category}: {len(seeds_of)} (seeds {' '.join(map(str, seeds_of))})")
        kinds = Counter(r["kind"] for r in failed)
        totals = Counter(r["kind"] for r in results)
        print("failures by file: " + ", ".join(f"{k} {kinds[k]}/{totals[k]}" for k in sorted(totals)))
        print(f"repeat one with CORRUPT_SEED=N; work directory {work}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    return 0 if not skipped else 1


if __name__ == "__main__":
    sys.exit(main())
