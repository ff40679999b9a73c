"""Shared pieces of the seed reproductions (insert-performance, journal-sizes, http-shootout,
cluster-1m, bench-vs-wrk): running `quince bench` and reading its JSON report, drawing charts
with `quince bench-chart`, installing missing Debian packages, and writing the markdown
documents under docs/benchmarks/. Standard library only; servers come from bench_common.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import ROOT_PASSWORD, Quince, free_port, machine_description  # noqa: E402,F401

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(REPO, "docs", "benchmarks")


def quince_bin():
    return os.environ["QUINCE_BIN"]


def endpoint(url):
    return "tcp://" + url.split("://", 1)[1]


def bench(url, *args, allow_failures=False, timeout=3600):
    """Runs `quince bench` against `url` (or a list of URLs: the connections are spread over them
    round-robin); returns its JSON report (a dict)."""
    urls = [url] if isinstance(url, str) else list(url)
    with tempfile.TemporaryDirectory(prefix="quince-bench-report-") as tmp:
        report = os.path.join(tmp, "report.json")
        endpoints = [arg for u in urls for arg in ("--server.endpoint", endpoint(u))]
        cmd = [quince_bin(), "bench", *endpoints, "--server.password", ROOT_PASSWORD,
               "--quiet", "true", "--progress", "false", "--json-report-file", report, *map(str, args)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if done.returncode not in (0, 1) or (done.returncode == 1 and not allow_failures):
            raise RuntimeError(f"quince bench failed ({done.returncode}): {' '.join(cmd)}\n{done.stdout}\n{done.stderr}")
        with open(report) as f:
            return json.load(f)


def chart(spec, name):
    """Draws `spec` (see crates/bench/src/chart.rs) to docs/benchmarks/<name>."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
        path = f.name
    try:
        subprocess.run([quince_bin(), "bench-chart", path, os.path.join(DOCS, name)], check=True)
    finally:
        os.unlink(path)


def apt_install(*packages):
    """Installs the Debian packages whose commands are missing (root or sudo)."""
    if not packages:
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], check=True,
                   env=env, stdin=subprocess.DEVNULL)


def apt_candidate(package):
    """The version apt would install, or None when Debian does not have the package."""
    done = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True)
    for line in done.stdout.splitlines():
        line = line.strip()
        if line.startswith("Candidate:"):
            value = line.split(":", 1)[1].strip()
            return None if value in ("", "(none)") else value
    return None


def write_doc(name, text):
    os.makedirs(DOCS, exist_ok=True)
    with open(os.path.join(DOCS, name), "w") as f:
        f.write(text)
    print(f"wrote docs/benchmarks/{name}")


def fmt_int(value):
    return "n/a" if value is None else f"{value:,.0f}"


def fmt_ms(value):
    return "n/a" if value is None else f"{value:.2f}"


def wait_for_count(server, database, collection, expected, timeout_s=120):
    """Polls the collection's count until it reaches `expected`; returns the seconds waited,
    or None when it did not within `timeout_s` (jobs the server dropped never arrive)."""
    started = time.monotonic()
    while True:
        count = server.request("GET", f"/_db/{database}/_api/collection/{collection}/count")["count"]
        if count >= expected:
            return time.monotonic() - started
        if time.monotonic() - started > timeout_s:
            print(f"{collection}: {count} of {expected} documents after {timeout_s} s")
            return None
        time.sleep(0.05)


def temp_dir(prefix):
    return tempfile.mkdtemp(prefix=prefix)


def remove(path):
    shutil.rmtree(path, ignore_errors=True)
