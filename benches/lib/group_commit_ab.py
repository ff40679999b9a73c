"""Group commit, binary against binary: `waitForSync=true` inserts with `wrk -c 64` (and the
same at concurrency 1) on a fresh collection, for two or more server binaries, alternating over
rounds so that all see the same machine state. Prints one line per run; writes nothing (the
figures go into the document of the change they judge, e.g. docs/benchmarks/engine-seam.md).

Usage: QUINCE_BINS="old-binary new-binary" python3 benches/lib/group_commit_ab.py
       (ROUNDS, DURATION, CONNECTIONS change the run). Needs wrk (benches/single-server.sh
       installs it).
"""

import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Quince, machine_description, wrk  # noqa: E402

ROUNDS = int(os.environ.get("ROUNDS", "3"))
DURATION = int(os.environ.get("DURATION", "8"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "64").split()]
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    binaries = os.environ["QUINCE_BINS"].split()
    print(f"machine: {machine_description()}")
    for round_ in range(1, ROUNDS + 1):
        for binary in binaries:
            os.environ["QUINCE_BIN"] = binary
            data = tempfile.mkdtemp(prefix="quince-gc-")
            q = Quince(data, ["--server.threads", str(os.cpu_count())])
            q.start()
            try:
                q.request("POST", "/_api/collection", {"name": "b"})
                for c in CONNECTIONS:
                    rps, p50, p99, errors = wrk(
                        f"{q.url}/_db/_system/_api/document/b?waitForSync=true", c, DURATION,
                        os.path.join(HERE, "insert.lua"))
                    print(f"round {round_} {binary}: c={c} {rps:,.0f}/s p50 {p50:.2f} ms "
                          f"p99 {p99:.2f} ms, {errors} errors", flush=True)
            finally:
                q.stop("TERM")
                shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
