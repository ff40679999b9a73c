"""Running `quince bench` from the bench suites and reading its results.

What it is: `run_bench`, which starts the client against a server with the suite's
credentials, a JSON report file in a fresh temp directory, and a bounded wait; and `BenchRun`,
its exit status, text and parsed report.

What it is not: a fixture module; the suites use the fixtures of conftest.py.

Invariants: every run is bounded by BENCH_TIMEOUT_S; the report file never exists beforehand
(quince bench refuses to overwrite one).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from quince_server import ROOT_PASSWORD, quince_bin

BENCH_TIMEOUT_S = 60


@dataclass
class BenchRun:
    code: int
    stdout: str
    stderr: str
    report: dict | None

    def explain(self) -> str:
        return f"exit {self.code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"


def endpoint_of(url: str) -> str:
    return "tcp://" + url.split("://", 1)[1]


def run_bench(url: str | None, *args: str, password: str = ROOT_PASSWORD, report: bool = True) -> BenchRun:
    """Runs `quince bench` against `url` (None: no endpoint option) with `args`."""
    with tempfile.TemporaryDirectory(prefix="quince-bench-") as tmp:
        report_path = Path(tmp) / "report.json"
        command = [str(quince_bin()), "bench", "--quiet", "true"]
        if url is not None:
            command += ["--server.endpoint", endpoint_of(url)]
        if password is not None:
            command += ["--server.password", password]
        if report:
            command += ["--json-report-file", str(report_path)]
        command += list(args)
        done = subprocess.run(command, capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, stdin=subprocess.DEVNULL)
        parsed = json.loads(report_path.read_text()) if report and report_path.exists() else None
        return BenchRun(done.returncode, done.stdout, done.stderr, parsed)
