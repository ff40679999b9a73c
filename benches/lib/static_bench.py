"""Issue 4's static-file benchmark; see benches/static-files.sh.

`ab -k -c C -n N` for C = 1, 2, 4, ..., 512 against Quince (`--http.static-dir`) and nginx
serving the same file, in the same run, alternating per concurrency level, RUNS times each
(the mean is reported), as in seeds/http-layer-shootout.txt. Writes
docs/benchmarks/static-files.md and the chart docs/benchmarks/static-files.svg."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Nginx, Quince, machine_description  # noqa: E402

REQUESTS = int(os.environ.get("REQUESTS", "100000"))
RUNS = int(os.environ.get("RUNS", "3"))
FILE_SIZE = int(os.environ.get("FILE_SIZE", "4096"))
CONCURRENCIES = [int(c) for c in os.environ.get(
    "CONCURRENCIES", "1,2,4,8,16,32,64,128,256,512").split(",")]
HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "benchmarks")
FILE_NAME = "page.html"


def ab(url, concurrency):
    """One ab run; returns requests per second. Fails loudly on failed or non-2xx replies."""
    out = subprocess.run(
        ["ab", "-k", "-q", "-r", "-c", str(concurrency), "-n", str(REQUESTS), url],
        check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
    failed = int(re.search(r"Failed requests:\s+(\d+)", out).group(1))
    keep_alive = int(re.search(r"Keep-Alive requests:\s+(\d+)", out).group(1))
    non2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
    if failed or non2xx or keep_alive != REQUESTS:
        raise RuntimeError(f"ab against {url} at -c {concurrency}: {failed} failed, "
                           f"{non2xx.group(1) if non2xx else 0} non-2xx, "
                           f"{keep_alive} of {REQUESTS} kept alive\n{out}")
    return rps


def page(size):
    line = b"<p>Quince serves this file from its static directory.</p>\n"
    body = (line * (size // len(line) + 1))[: size - 16]
    return b"<!doctype html>\n" + body


def chart(rows, path):
    """A log2-x line chart of both curves, as plain SVG."""
    width, height, left, right, top, bottom = 720, 420, 70, 20, 40, 50
    peak = max(max(q, n) for _, q, n in rows) * 1.1
    xs = {c: left + i * (width - left - right) / max(1, len(rows) - 1)
          for i, (c, _, _) in enumerate(rows)}

    def y(v):
        return top + (height - top - bottom) * (1 - v / peak)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">'
             f'ab -k -n {REQUESTS}: requests per second, {FILE_SIZE}-byte file</text>']
    for i in range(6):
        v = peak * i / 5
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
    for c, x in xs.items():
        parts.append(f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">{c}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 10}" text-anchor="middle">'
                 'concurrent connections (ab -c)</text>')
    for label, index, colour in (("Quince", 1, "#c0392b"), ("nginx", 2, "#2c3e50")):
        points = " ".join(f"{xs[r[0]]:.1f},{y(r[index]):.1f}" for r in rows)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for r in rows:
            parts.append(f'<circle cx="{xs[r[0]]:.1f}" cy="{y(r[index]):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + 18 * (index - 1)
        parts.append(f'<line x1="{left + 10}" x2="{left + 30}" y1="{ly}" y2="{ly}" '
                     f'stroke="{colour}" stroke-width="2"/>')
        parts.append(f'<text x="{left + 36}" y="{ly + 4}">{label}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def main():
    threads = os.cpu_count()
    print(f"machine: {machine_description()}")
    content = page(FILE_SIZE)
    site = tempfile.mkdtemp(prefix="quince-bench-static-")
    with open(os.path.join(site, FILE_NAME), "wb") as f:
        f.write(content)
    data = tempfile.mkdtemp(prefix="quince-bench-data-")
    q = Quince(data, ["--server.threads", str(threads), "--http.static-dir", site])
    q.start()
    ng = Nginx(threads)
    ng.start({FILE_NAME: content})
    # The peer's directory comes from mkdtemp (mode 0700); nginx's workers run as an
    # unprivileged user when the master is root and must be able to read the file.
    os.chmod(ng.dir, 0o755)
    rows = []
    try:
        q_url = f"{q.url}/_static/{FILE_NAME}"
        n_url = f"{ng.url}/static/{FILE_NAME}"
        # Both serve the same bytes.
        for url in (q_url, n_url):
            body = subprocess.run(["curl", "-sf", url], check=True, capture_output=True).stdout
            assert body == content, url
        for c in CONCURRENCIES:
            q_runs, n_runs = [], []
            for _ in range(RUNS):
                q_runs.append(ab(q_url, c))
                n_runs.append(ab(n_url, c))
            rows.append((c, sum(q_runs) / RUNS, sum(n_runs) / RUNS))
            print(f"c={c}: quince {rows[-1][1]:,.0f} req/s, nginx {rows[-1][2]:,.0f} req/s")
    finally:
        ng.stop()
        q.stop("TERM")
        shutil.rmtree(site, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)

    chart(rows, os.path.join(DOCS, "static-files.svg"))
    lines = [
        "# Static files: Quince against nginx (issue 4)",
        "",
        f"Machine: {machine_description()}. Quince release build, `--server.threads {threads}`,",
        f"`--http.static-dir`; nginx with {threads} worker processes (`access_log off`, the",
        "configuration in `benches/lib/nginx.conf.in`); both on loopback serving the same",
        f"{FILE_SIZE}-byte file. Client: `ab -k -c C -n {REQUESTS}` (HTTP/1.0 keep-alive), the",
        f"mean of {RUNS} runs per level, Quince and nginx alternating, as in",
        'ArangoDB\'s 2012 "HTTP Layer Benchmarking" shootout. Produced by '
        "`bash benches/static-files.sh`.",
        "",
        "![requests per second by concurrency](static-files.svg)",
        "",
        "| concurrency | Quince req/s | nginx req/s | Quince / nginx |",
        "|---|---|---|---|",
    ]
    for c, qr, nr in rows:
        lines.append(f"| {c} | {qr:,.0f} | {nr:,.0f} | {qr / nr:.2f}x |")
    behind = [c for c, qr, nr in rows if qr < nr]
    lines += [
        "",
        ("Quince is at or above nginx at every concurrency level."
         if not behind else
         f"Quince is below nginx at concurrency {', '.join(map(str, behind))}."),
        "",
        "Quince keeps files up to 1 MiB in memory and trusts a cached entry for one second",
        "before checking the file again, so a hit costs no system call beyond the socket's;",
        "`ab` itself is single-threaded and shares the two cores with the server under test.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(DOCS, "static-files.md"), "w") as f:
        f.write(text)
    print(f"wrote {os.path.normpath(os.path.join(DOCS, 'static-files.md'))}")


if __name__ == "__main__":
    main()
