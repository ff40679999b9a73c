"""Is `quince bench` the bottleneck? The `version` case (GET /_db/_system/_api/version) against
one Quince server, alternating wrk and `quince bench` with the same connections, duration and
request bytes (path and Authorization header), ROUNDS times; the median requests per second of
each and their ratio (the target is at least 0.95). Writes docs/benchmarks/bench-vs-wrk.md.
Run by benches/http-shootout.sh, or alone: QUINCE_BIN=... python3 benches/lib/bench_vs_wrk.py
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import wrk  # noqa: E402
from bench_tools import Quince, bench, machine_description, remove, temp_dir, write_doc  # noqa: E402

CONNECTIONS = int(os.environ.get("CONNECTIONS", "8"))
DURATION = int(os.environ.get("DURATION", "5"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))


def main():
    machine = machine_description()
    print(f"machine: {machine}")
    data = temp_dir("quince-vs-wrk-")
    server = Quince(data)
    server.start()
    wrk_rates, bench_rates = [], []
    try:
        url = f"{server.url}/_db/_system/_api/version"
        for round_number in range(ROUNDS):
            rps, _, _, non2xx = wrk(url, CONNECTIONS, DURATION, threads=min(CONNECTIONS, os.cpu_count()))
            assert non2xx == 0, "wrk got error replies"
            wrk_rates.append(rps)
            report = bench(server.url, "--test-case", "version", "--concurrency", CONNECTIONS,
                           "--duration", DURATION)
            bench_rates.append(report["results"]["operationsPerSecondRate"])
            print(f"round {round_number + 1}: wrk {wrk_rates[-1]:,.0f} req/s, quince bench {bench_rates[-1]:,.0f} req/s")
    finally:
        server.stop()
        remove(data)
    w, b = statistics.median(wrk_rates), statistics.median(bench_rates)
    ratio = b / w
    verdict = "meets" if ratio >= 0.95 else "misses"
    print(f"median: wrk {w:,.0f}, quince bench {b:,.0f}, ratio {ratio:.2f} ({verdict} the 0.95 target)")
    lines = [
        "# quince bench against wrk (is the client the bottleneck?)",
        "",
        f"Machine: {machine}. One Quince release server (default threads); the `version` case, "
        f"`GET /_db/_system/_api/version` with root's Basic credentials, {CONNECTIONS} keep-alive connections, "
        f"{DURATION} s per run, wrk (`-t {min(CONNECTIONS, os.cpu_count())} -c {CONNECTIONS}`, same path and "
        f"Authorization header) and `quince bench --test-case version --concurrency {CONNECTIONS} --duration "
        f"{DURATION}` alternating, {ROUNDS} rounds. Produced by `bash benches/http-shootout.sh` (or "
        "`python3 benches/lib/bench_vs_wrk.py` with QUINCE_BIN set).",
        "",
        "| round | wrk req/s | quince bench req/s |",
        "|---|---|---|",
        *[f"| {i + 1} | {x:,.0f} | {y:,.0f} |" for i, (x, y) in enumerate(zip(wrk_rates, bench_rates))],
        f"| median | {w:,.0f} | {b:,.0f} |",
        "",
        f"Ratio quince bench / wrk: **{ratio:.2f}** ({verdict} the target of 0.95). Client and server share "
        "the machine's cores, so a client that needs less CPU per request leaves more to the server.",
        "",
    ]
    write_doc("bench-vs-wrk.md", "\n".join(lines))


if __name__ == "__main__":
    main()
