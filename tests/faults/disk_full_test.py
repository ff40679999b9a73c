#!/usr/bin/env python3
"""The full-disk test: the real `quince` binary on a small file system filled to the brim.

What it is: a harness (run as root) that mounts a small file system, puts the server's data
directory on it, and fills it with large documents through the HTTP API. It runs on a 24 MiB
tmpfs and, when loop devices work, on a 64 MiB ext4 image mounted with `-o loop` (tmpfs has no
journal and allocates by page; ext4 allocates blocks and journals its metadata). On each:

  A. Collections `keeper` and `victim` in _system and `bulk` in a database `dropdb`. `keeper`
     gets a seeded mix of acknowledged writes, then large documents until its journal cannot
     take one more of 450 KB (so its next large write must seal the journal and create a new
     one). `bulk` and `victim` then get large inserts (150-450 KB; waitForSync true or false,
     seeded), all acknowledged, until one fails; the test tops the file system off with a file
     of its own (what another program on the disk would do) so that not a byte is free:
       - the first failing write answers 500 with errorNum 1104 (filesystem full);
       - the next write to that collection answers 503/1004 when the failed append poisoned
         its store, or 500/1104 again when the write failed before anything was appended
         (starting a new journal is refused without poisoning); a large write to `keeper`
         answers 500/1104 (its journal is sealed, the next one cannot be started), one to the
         other collection 1104 or 1004, never 2xx;
       - reads keep working: every acknowledged document with its value and _rev, counts.
  B. SIGTERM while the disk is full: it must exit within a bound, with status 1 when a store
     is poisoned and 0 when none is (README); then a restart on the still-full file system:
     it must open (no journal is started at open), every acknowledged document must be there,
     and a large write to `keeper` answers 1104.
  C. Freeing space through the API: DELETE /_api/database/dropdb, then DELETE
     /_api/collection/victim must answer 200, each on a full disk (the test tops the file
     system off again before each), and the free space must grow after each. Then `keeper`
     accepts writes again (201) unless its store was poisoned (503/1004: a poisoned store
     stays latched until reopened), and a new collection can be created and written (201).
  D. SIGTERM: exit status 1 if `keeper` is poisoned, else 0 (bounded).
  E. Restart on the same file system: every acknowledged document of `keeper` and of the new
     collection is there with value and _rev, `victim` and `dropdb` are gone, `keeper` accepts
     writes again (201), and SIGTERM exits with status 0.
  F. Start, fill the disk again with a file of the test (no store poisoned), SIGTERM: exit
     status 0 (parameter files that cannot be refreshed are logged, not fatal); then the file
     goes, and a restart finds `keeper` whole and stops with status 0.

A 1 MiB ballast file sits on the file system while it fills; if the restart on the full disk
fails, the ballast is removed and the restart retried, so that the later steps still run (the
failure is reported). Every check prints one line (`ok` or `FAILED`); `observed:` lines report
behaviour the brief asks to document. The seed (document sizes, sync choices, journal size) is
printed; DISKFULL_SEED repeats it; DISKFULL_FS=tmpfs (or ext4) runs one file system only.
Exit status 1 when a check failed; 0 with a "skipped" line when not root or when tmpfs cannot
be mounted (the ext4 part alone is skipped, with its reason, when loop devices or mkfs.ext4
are missing).

What it is not: a test of a disk that fills during a power loss, of ENOSPC at writeback time
(delayed allocation reporting it at fsync: the fsync test covers failed fsyncs), or of
quotas. It checks acknowledgements and the documented sequence, not throughput.

Invariants: every wait is bounded (HTTP calls 30 s, start and stop 30 s, each mount or unmount
command 30 s, the whole run TOTAL_BUDGET_S); no sleep stands in for synchronisation; every
mount is unmounted in a `finally` block (lazily when busy) and every loop device the test
attached is detached; data directories live only on the test's mounts.

Run: .venv/bin/python tests/faults/disk_full_test.py   (as root; needs target/debug/quince)
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "support"))

from fsync_failure_test import (  # noqa: E402
    Api,
    Oracle,
    Report,
    ShimServer,
    Writer,
    brief,
    error_num,
    is_refusal,
    verify_collection,
)
from quince_server import ServerError  # noqa: E402

TMPFS_SIZE = "24m"
EXT4_BYTES = 64 * 1024 * 1024
BALLAST_BYTES = 1024 * 1024
DOC_MIN = 150_000
DOC_MAX = 450_000
COMMAND_TIMEOUT_S = 30
MAX_FILL_WRITES = 1000
TOTAL_BUDGET_S = 100.0


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


class Mount:
    """One small file system mounted for the test; unmounts (and detaches its loop) on close."""

    def __init__(self, kind: str, work: Path) -> None:
        self.kind = kind
        self.point = work / f"{kind}-mnt"
        self.image = work / f"{kind}.img"
        self.mounted = False
        self.loop_device: str | None = None

    def mount(self) -> str | None:
        """Mounts; returns None on success, else why it could not."""
        self.point.mkdir(parents=True, exist_ok=True)
        if self.kind == "tmpfs":
            result = run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(self.point)])
        else:
            if shutil.which("mkfs.ext4") is None or shutil.which("losetup") is None:
                return "mkfs.ext4 or losetup not found (apt-get install e2fsprogs mount)"
            with open(self.image, "wb") as f:
                f.truncate(EXT4_BYTES)
            made = run(["mkfs.ext4", "-q", "-F", "-m", "0", str(self.image)])
            if made.returncode != 0:
                return f"mkfs.ext4 failed: {made.stderr.strip()}"
            attached = run(["losetup", "--find", "--show", str(self.image)])
            if attached.returncode != 0:
                return f"no loop device: {attached.stderr.strip()}"
            self.loop_device = attached.stdout.strip()
            result = run(["mount", "-t", "ext4", self.loop_device, str(self.point)])
        if result.returncode != 0:
            self.detach()
            return f"mount failed: {result.stderr.strip()}"
        self.mounted = True
        return None

    def detach(self) -> None:
        if self.loop_device is not None:
            run(["losetup", "-d", self.loop_device])
            self.loop_device = None

    def close(self) -> None:
        if self.mounted:
            result = run(["umount", str(self.point)])
            if result.returncode != 0:
                print(f"  umount {self.point}: {result.stderr.strip()}; unmounting lazily", flush=True)
                run(["umount", "-l", str(self.point)])
            self.mounted = False
        self.detach()
        try:
            self.image.unlink()
        except FileNotFoundError:
            pass


def top_off(path: Path) -> int:
    """Writes `path` until the file system refuses a byte; returns the bytes written."""
    written = 0
    with open(path, "wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 16, 1 << 12, 1 << 9, 1):
            while True:
                try:
                    n = f.write(b"\0" * chunk)
                except OSError:
                    break
                written += n or 0
                if not n or n < chunk:
                    break
        try:
            os.fsync(f.fileno())
        except OSError:
            pass
    return written


def insert_large(writer: Writer, size: int, sync: bool):
    writer.pad = size
    writer.fixed_size = True
    return writer.op("insert", sync=sync)


def fill(report: Report, label: str, writers: list[Writer], rng: random.Random, mount_point: Path):
    """Inserts large documents round the writers until one fails; returns (writer, status, body)."""
    for attempt in range(MAX_FILL_WRITES):
        writer = writers[attempt % len(writers)] if attempt < 8 else writers[-1]
        sync = rng.random() < 0.7
        kind, key, v, status, body = insert_large(writer, rng.randrange(DOC_MIN, DOC_MAX), sync)
        if 200 <= status < 300:
            writer.record_ack(kind, key, v, status, body)
            continue
        writer.oracle.unknown.setdefault(writer.collection, {})[key] = v
        report.note(f"{label}: the disk filled after {attempt} acknowledged inserts; the failing one "
                    f"({writer.collection}, waitForSync={str(sync).lower()}) answered {brief(status, body)}; "
                    f"free space now {free_bytes(mount_point)} bytes")
        return writer, status, body
    raise AssertionError(f"{label}: {MAX_FILL_WRITES} large inserts did not fill the disk")


def poisoned_in_log(log: str, dirs: dict[str, str]) -> set[str]:
    """The collections whose store a `storage.poisoned` line of `log` names (by directory)."""
    lines = [ln for ln in log.splitlines() if "storage.poisoned" in ln]
    return {name for name, d in dirs.items() if any(f"/{d}/" in ln for ln in lines)}


def collection_dir(api: Api, name: str) -> str:
    status, body = api.call("GET", f"/_api/collection/{name}")
    assert status == 200, f"get {name}: {brief(status, body)}"
    return f"collection-{body['id']}"


def stop_report(report: Report, srv: ShimServer, label: str, poisoned: set[str]) -> int | None:
    """SIGTERM: status 1 when a store is poisoned (it cannot be closed cleanly), else 0."""
    code, took, log, stdout = srv.timed_stop()
    expected = 1 if poisoned else 0
    report.check(f"{label}: SIGTERM ends the server within 30 s with status {expected} "
                 f"(poisoned: {sorted(poisoned) or 'none'})", code == expected, f"exit {code} after {took:.2f} s")
    report.note(f"{label}: SIGTERM -> exit status {code} after {took:.2f} s; stdout: {stdout}")
    for line in [ln for ln in log.splitlines() if any(w in ln for w in ("ERROR", "WARN", "quince:"))][-5:]:
        report.note(f"{label}: log: {line[:300]}")
    return code


def start_or_report(report: Report, srv: ShimServer, label: str, ballast: Path | None) -> bool:
    try:
        srv.start()
        report.check(f"{label}: the server starts", True)
        return True
    except ServerError as err:
        lines = [ln for ln in str(err).splitlines() if ln.startswith("quince:") or "ERROR" in ln]
        report.check(f"{label}: the server starts", False, (lines[-1] if lines else str(err))[-600:])
    if ballast is not None and ballast.exists():
        ballast.unlink()
        try:
            srv.start()
            report.note(f"{label}: it started once the 1 MiB ballast file was removed")
            return True
        except ServerError as err:
            report.note(f"{label}: it does not start even with 1 MiB freed: {str(err)[-800:]}")
    return False


def run_on(report: Report, kind: str, work: Path, seed: int) -> None:
    label = kind
    rng = random.Random(seed)
    mount = Mount(kind, work)
    reason = mount.mount()
    if reason is not None:
        if kind == "tmpfs":
            raise PermissionError(reason)
        print(f"{kind}: skipped ({reason})", flush=True)
        return
    journal_size = rng.choice([1, 2]) * 1024 * 1024
    print(f"{kind}: {mount.point} ({free_bytes(mount.point)} bytes free), journals of {journal_size} bytes",
          flush=True)
    srv: ShimServer | None = None
    try:
        data = mount.point / "data"
        ballast = mount.point / "ballast"
        with open(ballast, "wb") as f:
            f.write(b"\0" * BALLAST_BYTES)
            f.flush()
            os.fsync(f.fileno())
        srv = ShimServer(data, env=None, log_path=work / f"{kind}-server.log",
                         extra_args=["--database.maximal-journal-size", str(journal_size)])
        srv.start()
        oracle = Oracle()
        api = Api(srv.url)
        for name in ("keeper", "victim"):
            status, body = api.call("POST", "/_api/collection", {"name": name})
            assert status == 200, f"create {name}: {brief(status, body)}"
        status, body = api.call("POST", "/_api/database", {"name": "dropdb"})
        assert status == 201, f"create dropdb: {brief(status, body)}"
        db_api = Api(srv.url, "dropdb")
        status, body = db_api.call("POST", "/_api/collection", {"name": "bulk"})
        assert status == 200, f"create bulk: {brief(status, body)}"
        dirs = {name: collection_dir(api, name) for name in ("keeper", "victim")}
        dirs["bulk"] = collection_dir(db_api, "bulk")
        log_start = srv.log_offset()
        keeper = Writer(api, oracle, "keeper", rng)
        victim = Writer(api, oracle, "victim", rng)
        bulk = Writer(db_api, oracle, "bulk", rng)

        # -- A: fill ------------------------------------------------------------------------
        # keeper: a mix of small acknowledged writes, then large ones until its journal cannot
        # take a DOC_MAX document, so its next large write must seal it and create a journal.
        keeper.acked_ops(10)
        for _ in range(40):
            status, fig = api.call("GET", "/_api/collection/keeper/figures")
            room = journal_size - fig["figures"]["journals"]["fileSize"]
            if room < DOC_MAX + 1000:
                break
            size = max(1000, min(rng.randrange(DOC_MIN, DOC_MAX), room - DOC_MAX // 2))
            kind_, key, v, status, body = insert_large(keeper, size, rng.random() < 0.7)
            assert keeper.record_ack(kind_, key, v, status, body), f"keeper: {brief(status, body)}"
        status, fig = api.call("GET", "/_api/collection/keeper/figures")
        report.note(f"{label}: keeper's journal holds {fig['figures']['journals']['fileSize']} of {journal_size} "
                    f"bytes, datafiles {fig['figures']['datafiles']['count']}")
        failed_writer, status, body = fill(report, label, [bulk, victim], rng, mount.point)
        report.check(f"{label}: the failing write answers 500 with errorNum 1104 (filesystem full)",
                     status == 500 and error_num(body) == 1104, brief(status, body))
        # What the inserts left (less than one document) is taken by a file of the test, as
        # another program on the same disk would: the file system is now full to the last byte.
        topped = top_off(mount.point / "topoff")
        report.note(f"{label}: topped off with {topped} bytes; free space now {free_bytes(mount.point)} bytes")
        # Stores that answered 503/1004: poisoned until the server restarts.
        poisoned: set[str] = set()
        kind_, key, v, status, body = insert_large(failed_writer, DOC_MIN, True)
        if is_refusal(status, body):
            oracle.refused.setdefault(failed_writer.collection, set()).add(key)
            poisoned.add(failed_writer.collection)
        elif 200 <= status < 300:
            failed_writer.record_ack(kind_, key, v, status, body)
        else:
            oracle.unknown.setdefault(failed_writer.collection, {})[key] = v
        report.check(f"{label}: the next write to {failed_writer.collection} answers 503/1004 or 500/1104",
                     is_refusal(status, body) or (status == 500 and error_num(body) == 1104),
                     brief(status, body))
        offset = srv.log_offset()
        for w in (keeper, bulk, victim):
            if w is failed_writer:
                continue
            kind_, key, v, status, body = insert_large(w, DOC_MAX, True)
            if 200 <= status < 300:
                w.record_ack(kind_, key, v, status, body)
                report.check(f"{label}: a {DOC_MAX}-byte write to {w.collection} on the full disk is not "
                             f"acknowledged", False, brief(status, body))
                continue
            oracle.unknown.setdefault(w.collection, {})[key] = v
            if is_refusal(status, body):
                poisoned.add(w.collection)
            expected = ((500, 1104),) if w is keeper else ((500, 1104), (503, 1004))
            report.check(f"{label}: a large write to {w.collection} on the full disk answers "
                         f"{' or '.join(f'{a}/{b}' for a, b in expected)}",
                         (status, error_num(body)) in expected, brief(status, body))
        for line in srv.log_since(offset).splitlines():
            if "storage.poisoned" in line:
                report.note(f"{label}: {line.split('error=', 1)[-1][:200]}")
        status, body = api.call("POST", "/_api/collection", {"name": "on_full_disk"})
        report.note(f"{label}: creating a collection on the full disk answered {brief(status, body)}")
        created_on_full = status == 200
        poisoned |= poisoned_in_log(srv.log_since(log_start), dirs)
        report.note(f"{label}: poisoned stores: {sorted(poisoned) or 'none'}")
        for w, a in ((keeper, api), (victim, api), (bulk, db_api)):
            verify_collection(report, a, oracle, w.collection, f"{label} full, reads")

        # -- B: stop while poisoned and full; restart on the full disk ----------------------------
        db_api.close()
        api.close()
        stop_report(report, srv, f"{label} B (disk full)", poisoned)
        poisoned = set()
        log_start = srv.log_offset()
        report.note(f"{label}: free space before the restart on the full disk: {free_bytes(mount.point)} bytes")
        if not start_or_report(report, srv, f"{label} B restart on the full disk", ballast):
            return
        api = Api(srv.url)
        db_api = Api(srv.url, "dropdb")
        for w, a in ((keeper, api), (victim, api), (bulk, db_api)):
            w.api = a
            verify_collection(report, a, oracle, w.collection, f"{label} after the restart on the full disk")
        kind_, key, v, status, body = insert_large(keeper, DOC_MAX, True)
        if 200 <= status < 300:
            keeper.record_ack(kind_, key, v, status, body)
            report.note(f"{label}: after the restart a {DOC_MAX}-byte write to keeper was acknowledged "
                        f"(space was freed by the restart: {free_bytes(mount.point)} bytes free)")
            # Fill again, so that keeper's write fails on the full disk.
            _, status, body = fill(report, f"{label} B refill", [keeper], rng, mount.point)
        else:
            oracle.unknown.setdefault("keeper", {})[key] = v
        if is_refusal(status, body):
            poisoned.add("keeper")
        poisoned |= poisoned_in_log(srv.log_since(log_start), dirs)
        report.check(f"{label}: after the restart a large write to keeper on the full disk answers 500/1104",
                     status == 500 and error_num(body) == 1104, brief(status, body))

        # -- C: free space through the API, each drop on a full disk ------------------------
        top_off(mount.point / "topoff-b")
        before = free_bytes(mount.point)
        status, body = api.call("DELETE", "/_api/database/dropdb")
        report.check(f"{label}: DELETE /_api/database/dropdb works on the full disk", status == 200,
                     brief(status, body))
        after_db = free_bytes(mount.point)
        report.check(f"{label}: dropping dropdb freed space", after_db > before, f"free {before} -> {after_db} bytes")
        top_off(mount.point / "topoff-c")
        before = free_bytes(mount.point)
        status, body = api.call("DELETE", "/_api/collection/victim")
        report.check(f"{label}: DELETE /_api/collection/victim works on the full disk", status == 200,
                     brief(status, body))
        after_drop = free_bytes(mount.point)
        report.check(f"{label}: dropping victim freed space", after_drop > before,
                     f"free {before} -> {after_drop} bytes")
        # Probe keeper's poisoned state without changing it: a refused insert shows the latch.
        kind_, key, v, status, body = keeper.op("insert", sync=True)
        if "keeper" in poisoned:
            report.check(f"{label}: poisoned keeper still refuses writes after space was freed "
                         f"(503/1004 until reopened)", is_refusal(status, body), brief(status, body))
        else:
            report.check(f"{label}: keeper (not poisoned) accepts writes once space was freed (201)",
                         status == 201, brief(status, body))
        if is_refusal(status, body):
            oracle.refused.setdefault("keeper", set()).add(key)
        elif 200 <= status < 300:
            keeper.record_ack(kind_, key, v, status, body)
        else:
            oracle.unknown.setdefault("keeper", {})[key] = v
        status, body = api.call("POST", "/_api/collection", {"name": "fresh"})
        report.check(f"{label}: a collection can be created once space was freed", status == 200, brief(status, body))
        fresh = Writer(api, oracle, "fresh", rng)
        fresh.acked_ops(5)
        report.check(f"{label}: and written (5 synced writes acknowledged)", True)
        api.close()
        db_api.close()

        # -- D: SIGTERM after the drops ---------------------------------------------------------
        stop_report(report, srv, f"{label} D (space freed)", poisoned)

        # -- E: restart and verify ------------------------------------------------------------
        if not start_or_report(report, srv, f"{label} E restart after the drops", None):
            return
        api = Api(srv.url)
        verify_collection(report, api, oracle, "keeper", f"{label} E")
        verify_collection(report, api, oracle, "fresh", f"{label} E")
        status, body = api.call("GET", "/_api/collection")
        names = sorted(c["name"] for c in body.get("result", []) if not c["name"].startswith("_"))
        expected_names = sorted(["keeper", "fresh"] + (["on_full_disk"] if created_on_full else []))
        report.check(f"{label} E: collections are {expected_names} (victim stays dropped)",
                     names == expected_names, f"{names}")
        status, body = api.call("GET", "/_api/database")
        report.check(f"{label} E: dropdb stays dropped", status == 200 and body.get("result") == ["_system"],
                     brief(status, body) + f" {body.get('result') if isinstance(body, dict) else ''}")
        keeper.api = api
        kind_, key, v, status, body = insert_large(keeper, DOC_MIN, True)
        report.check(f"{label} E: keeper accepts writes again (201)", status == 201, brief(status, body))
        keeper.record_ack(kind_, key, v, status, body)
        api.close()
        code, took, _, _ = srv.timed_stop()
        report.check(f"{label} E: the final SIGTERM exits with status 0", code == 0, f"exit {code} after {took:.2f} s")

        # -- F: SIGTERM on a full disk with no poisoned store ---------------------------------
        if not start_or_report(report, srv, f"{label} F start", None):
            return
        topped = top_off(mount.point / "topoff-f")
        report.note(f"{label} F: disk full again ({topped} bytes topped off, {free_bytes(mount.point)} free), "
                    f"no store poisoned")
        code, took, log, stdout = srv.timed_stop()
        report.check(f"{label} F: SIGTERM on a full disk with nothing poisoned exits with status 0",
                     code == 0, f"exit {code} after {took:.2f} s")
        for line in [ln for ln in log.splitlines() if "ERROR" in ln or "WARN" in ln][-3:]:
            report.note(f"{label} F: log: {line[:300]}")
        for name in ("topoff", "topoff-b", "topoff-c", "topoff-f"):
            (mount.point / name).unlink(missing_ok=True)
        if not start_or_report(report, srv, f"{label} F restart", None):
            return
        api = Api(srv.url)
        verify_collection(report, api, oracle, "keeper", f"{label} F")
        api.close()
        code, took, _, _ = srv.timed_stop()
        report.check(f"{label} F: SIGTERM exits with status 0", code == 0, f"exit {code} after {took:.2f} s")
        leftovers = sorted(str(p.relative_to(data)) for p in data.rglob("*")
                           if p.name.endswith(".tmp") or ".dropped" in p.name or "compaction-" in p.name)
        report.note(f"{label}: temporary or dropped files left in the data directory: {leftovers}")
    finally:
        if srv is not None:
            srv.kill()
        mount.close()


def main() -> int:
    # A SIGTERM (scripts/test.sh's `timeout`) unwinds through the finally blocks, which stop the
    # servers and unmount the file systems.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.geteuid() != 0:
        print("disk full test: skipped (needs root to mount a small file system)")
        return 0
    seed = int(os.environ.get("DISKFULL_SEED", str(random.SystemRandom().randrange(1, 2**31))))
    print(f"disk full test: seed {seed} (set DISKFULL_SEED to repeat)", flush=True)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="quince-diskfull-"))
    report = Report()
    started = time.monotonic()
    kinds = os.environ.get("DISKFULL_FS", "tmpfs,ext4").split(",")
    for kind in kinds:
        if time.monotonic() - started > TOTAL_BUDGET_S:
            report.check(f"{kind}", False, f"time budget of {TOTAL_BUDGET_S:.0f} s spent")
            continue
        fs_started = time.monotonic()
        try:
            run_on(report, kind, work, rng.randrange(2**31))
        except PermissionError as err:
            print(f"disk full test: skipped ({kind}: {err})")
            shutil.rmtree(work, ignore_errors=True)
            return 0
        except (AssertionError, ServerError, requests.RequestException, OSError, KeyError, TypeError,
                subprocess.TimeoutExpired) as err:
            report.check(f"{kind}: ran to the end", False, f"{type(err).__name__}: {err}")
        print(f"{kind}: {time.monotonic() - fs_started:.1f} s", flush=True)
    return report.finish("disk full test", time.monotonic() - started, seed, work, "server logs")


if __name__ == "__main__":
    sys.exit(main())
