"""The HTTP-layer shootout seed: `ab -k -c C -n N` fetching the same static file from Quince
(`--http.static-dir`), nginx, Apache httpd with the event, worker and prefork MPMs, and Mongrel2
where Debian has it; requests per second by concurrency, one chart. Writes
docs/benchmarks/http-shootout.md and http-shootout.svg. See benches/http-shootout.sh.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import Nginx  # noqa: E402
from bench_tools import (Quince, apt_candidate, chart, free_port, machine_description, remove,  # noqa: E402
                         temp_dir, write_doc)

FULL = bool(os.environ.get("FULL"))
REQUESTS = int(os.environ.get("REQUESTS", "100000" if FULL else "20000"))
RUNS = int(os.environ.get("RUNS", "3" if FULL else "1"))
CONCURRENCIES = [int(c) for c in os.environ.get(
    "CONCURRENCIES", "1,2,4,8,16,32,64,128,256,512" if FULL else "1,4,16,64,256").split(",")]
FILE_NAME = "page.html"
FILE_SIZE = 4096
APACHE_MODULES = "/usr/lib/apache2/modules"


def page():
    line = b"<p>The same static file for every server in the shootout.</p>\n"
    return b"<!doctype html>\n" + (line * (FILE_SIZE // len(line) + 1))[: FILE_SIZE - 16]


def ab(url, concurrency):
    """Requests per second of one `ab -k` run, or None when the server failed requests."""
    done = subprocess.run(["ab", "-k", "-q", "-r", "-c", str(concurrency), "-n", str(REQUESTS), url],
                          capture_output=True, text=True)
    out = done.stdout
    m = re.search(r"Requests per second:\s+([\d.]+)", out)
    failed = re.search(r"Failed requests:\s+(\d+)", out)
    non2xx = re.search(r"Non-2xx responses:\s+(\d+)", out)
    if done.returncode != 0 or not m or (failed and int(failed.group(1))) or non2xx:
        print(f"  ab against {url} at -c {concurrency} failed:\n{out[-600:]}\n{done.stderr[-300:]}")
        return None
    return float(m.group(1))


class Apache:
    """Apache httpd with one MPM, on a free port, from a configuration written here."""

    def __init__(self, mpm, content):
        self.mpm = mpm
        self.dir = temp_dir(f"quince-shootout-apache-{mpm}-")
        os.chmod(self.dir, 0o755)
        os.makedirs(os.path.join(self.dir, "static"))
        with open(os.path.join(self.dir, "static", FILE_NAME), "wb") as f:
            f.write(content)
        self.port = free_port()
        self.conf = os.path.join(self.dir, "httpd.conf")
        sizing = ("StartServers 16\nServerLimit 600\nMaxRequestWorkers 600\n" if mpm == "prefork" else
                  "StartServers 2\nServerLimit 16\nThreadsPerChild 64\nMaxRequestWorkers 1024\n")
        user = "User www-data\nGroup www-data\n" if os.geteuid() == 0 else ""
        with open(self.conf, "w") as f:
            f.write(f"""ServerRoot "{self.dir}"
LoadModule mpm_{mpm}_module {APACHE_MODULES}/mod_mpm_{mpm}.so
LoadModule authz_core_module {APACHE_MODULES}/mod_authz_core.so
Listen 127.0.0.1:{self.port}
ServerName 127.0.0.1
PidFile {self.dir}/httpd.pid
ErrorLog {self.dir}/error.log
Mutex file:{self.dir} default
DocumentRoot "{self.dir}/static"
<Directory "{self.dir}/static">
  Require all granted
</Directory>
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout 300
{user}{sizing}""")
        self.url = f"http://127.0.0.1:{self.port}/{FILE_NAME}"

    def start(self):
        subprocess.run(["apache2", "-f", self.conf, "-k", "start"], check=True)
        wait_for(self.url)

    def stop(self):
        subprocess.run(["apache2", "-f", self.conf, "-k", "stop"], check=False)
        pid_file = os.path.join(self.dir, "httpd.pid")
        deadline = time.monotonic() + 30
        while os.path.exists(pid_file) and time.monotonic() < deadline:
            time.sleep(0.1)
        remove(self.dir)


def wait_for(url):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if subprocess.run(["curl", "-sf", "-o", "/dev/null", url]).returncode == 0:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer")


def main():
    machine = machine_description()
    threads = os.cpu_count()
    print(f"machine: {machine}")
    content = page()
    mongrel2 = apt_candidate("mongrel2")
    results = {}
    notes = []

    site = temp_dir("quince-shootout-site-")
    with open(os.path.join(site, FILE_NAME), "wb") as f:
        f.write(content)
    data = temp_dir("quince-shootout-data-")
    quince = Quince(data, ["--server.threads", str(threads), "--http.static-dir", site])
    quince.start()
    quince_url = f"{quince.url}/_static/{FILE_NAME}"
    served = subprocess.run(["curl", "-sf", quince_url], capture_output=True).stdout
    if served != content:
        notes.append("Quince did not serve the static file (this build has no `--http.static-dir` route): n/a.")
        quince_url = None
    try:
        nginx = Nginx(threads)
        nginx.start({FILE_NAME: content})
        os.chmod(nginx.dir, 0o755)
        servers = [("quince", quince_url, None), ("nginx", f"{nginx.url}/static/{FILE_NAME}", nginx)]
        for mpm in ("event", "worker", "prefork"):
            apache = Apache(mpm, content)
            apache.start()
            servers.append((f"apache_{mpm}", apache.url, apache))
        for name, url, _ in servers:
            if url is None:
                continue
            body = subprocess.run(["curl", "-sf", url], capture_output=True).stdout
            assert body == content, f"{name} serves other bytes"
        for c in CONCURRENCIES:
            for name, url, _ in servers:
                if url is None:
                    results.setdefault(name, {})[c] = None
                    continue
                runs = [ab(url, c) for _ in range(RUNS)]
                ok = [r for r in runs if r is not None]
                results.setdefault(name, {})[c] = sum(ok) / len(ok) if ok else None
            print(f"c={c}: " + ", ".join(f"{n} {results[n][c]:,.0f}" if results[n][c] else f"{n} n/a"
                                         for n, _, _ in servers))
        for _, _, peer in servers[1:]:
            peer.stop()
    finally:
        quince.stop()
        remove(site)
        remove(data)

    if mongrel2 is None:
        notes.append("Mongrel2: Debian has no `mongrel2` package (`apt-cache policy mongrel2` lists no "
                     "candidate), so it is not in the run.")
    notes.append("Gatling (in the seed) is not packaged by Debian either.")
    failed = [f"{n} at {c}" for n in results for c in CONCURRENCIES if results[n][c] is None and n != "quince"]
    if failed:
        notes.append("n/a: `ab` reported failed or non-2xx requests (its output is in the script's log): "
                     + ", ".join(failed) + ".")
    names = list(results)
    lines = [
        "# HTTP layer shootout (seed: http-layer-shootout.txt)",
        "",
        f"Machine: {machine}. Every server on loopback serves the same {FILE_SIZE}-byte file; client "
        f"`ab -k -c C -n {REQUESTS}` (HTTP/1.0 keep-alive), mean of {RUNS} run(s) per level, servers "
        "alternating at each level. Quince: release build, `--server.threads "
        f"{threads}`, `--http.static-dir` (URL `/_static/{FILE_NAME}`); nginx: {threads} workers, access log off; "
        "Apache httpd 2.4 (Debian) with the event, worker and prefork MPMs, no access log, keep-alive unlimited. "
        "Produced by `bash benches/http-shootout.sh` (`FULL=1` for the seed's 100,000 requests, concurrency "
        "1 ... 512 and 3 runs).",
        "",
        "The seed (2012): ArangoDB 1.0-alpha2 as a file server matched nginx at 1 to 4 connections and led "
        "beyond 8 in the local scenario, ahead of every Apache MPM at every level. `ab` is single-threaded and "
        "here shares two cores with the server under test.",
        "",
        "| concurrency | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for c in CONCURRENCIES:
        lines.append(f"| {c} | " + " | ".join("n/a" if results[n][c] is None else f"{results[n][c]:,.0f}"
                                               for n in names) + " |")
    lines += ["", *[f"- {n}" for n in notes], "", "![requests per second](http-shootout.svg)", ""]
    write_doc("http-shootout.md", "\n".join(lines))
    chart({
        "title": f"HTTP layer shootout: ab -k -n {REQUESTS}, {FILE_SIZE}-byte static file",
        "panels": [{
            "title": "requests per second (higher is better)", "kind": "line", "log2_x": True,
            "x_label": "concurrent connections (ab -c)", "y_label": "requests per second",
            "series": [{"name": n, "points": [[c, results[n][c]] for c in CONCURRENCIES if results[n][c] is not None]}
                       for n in names if any(results[n][c] is not None for c in CONCURRENCIES)],
        }],
    }, "http-shootout.svg")


if __name__ == "__main__":
    main()
