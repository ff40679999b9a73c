"""Shared pieces of the benchmark scripts: machine description, free ports, starting Quince,
nginx and Redis, running wrk and parsing its figures. Standard library only."""

import base64
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

ROOT_PASSWORD = "bench-pw"
AUTH = "Basic " + base64.b64encode(f"root:{ROOT_PASSWORD}".encode()).decode()


def machine_description():
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores ({cpu}), {mem_gib:.0f} GiB RAM, "
            f"Linux {platform.release()}, {time.strftime('%Y-%m-%d')}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Quince:
    """A `quince serve` child process on a free port (port 0) with its own data directory."""

    def __init__(self, data_dir, extra_args=()):
        self.data_dir = data_dir
        self.extra_args = list(extra_args)
        self.proc = None
        self.url = None

    def start(self, timeout=120):
        started = time.monotonic()
        self.proc = subprocess.Popen(
            [os.environ["QUINCE_BIN"], "serve", "--server.endpoint", "tcp://127.0.0.1:0",
             "--database.directory", self.data_dir, "--database.password", ROOT_PASSWORD,
             "--log.level", "warn", *self.extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"listening on (https?://\S+)", line)
        if not m:
            raise RuntimeError(f"quince did not start: {line!r}")
        self.url = m.group(1)
        ready_s = time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise RuntimeError("quince start timed out")
        return ready_s

    def stop(self, sig="TERM"):
        if self.proc is None:
            return
        if sig == "KILL":
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(timeout=120)
        self.proc = None

    def rss_bytes(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": AUTH,
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=300) as resp:
            return json.loads(resp.read() or b"null")


class Nginx:
    """An nginx peer on a free port, from benches/lib/nginx.conf.in."""

    def __init__(self, workers):
        self.dir = tempfile.mkdtemp(prefix="quince-bench-nginx-")
        # nginx started by root runs its workers as an unprivileged user: they must be able to
        # read the static files (mkdtemp makes the directory 0700).
        os.chmod(self.dir, 0o755)
        self.port = free_port()
        self.workers = workers

    def start(self, static_files):
        os.makedirs(os.path.join(self.dir, "static"), exist_ok=True)
        for name, content in static_files.items():
            with open(os.path.join(self.dir, "static", name), "wb") as f:
                f.write(content)
        here = os.path.dirname(__file__)
        with open(os.path.join(here, "nginx.conf.in")) as f:
            conf = (f.read().replace("@DIR@", self.dir).replace("@PORT@", str(self.port))
                    .replace("@WORKERS@", str(self.workers)))
        path = os.path.join(self.dir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        subprocess.run(["nginx", "-c", path, "-p", self.dir], check=True)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self):
        subprocess.run(["nginx", "-c", os.path.join(self.dir, "nginx.conf"), "-p", self.dir,
                        "-s", "stop"], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


class Redis:
    """A Redis peer on a free port: its append-only file on, written at every event-loop turn
    and left to the kernel to flush (`appendfsync no`), as Quince's journal is without
    waitForSync; no snapshots; one I/O thread (Redis's default)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="quince-bench-redis-")
        self.port = free_port()
        self.proc = None

    def start(self):
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", self.dir,
             "--save", "", "--appendonly", "yes", "--appendfsync", "no", "--daemonize", "no",
             "--logfile", os.path.join(self.dir, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def bench(self, test, connections, duration, value_bytes, keys=10000):
        """Runs redis-benchmark's `test` (set or get) for about `duration` seconds with
        `connections` clients, no pipelining, random keys among `keys`; returns (requests per
        second, p50 ms, p99 ms, 0) like wrk's figures. The request count comes from a short
        calibration run, since redis-benchmark runs by count, not by time."""
        def run(requests):
            out = subprocess.run(
                ["redis-benchmark", "-p", str(self.port), "-t", test, "-c", str(connections),
                 "-n", str(requests), "-d", str(value_bytes), "-r", str(keys), "--threads", "2",
                 "--csv"], check=True, capture_output=True, text=True).stdout
            lines = [line for line in out.splitlines() if line.startswith('"')]
            header = [h.strip('"') for h in lines[0].split(",")]
            values = [v.strip('"') for v in lines[1].split(",")]
            row = dict(zip(header, values))
            return (float(row["rps"]), float(row["p50_latency_ms"]),
                    float(row["p99_latency_ms"]), 0)
        rate = run(20000)[0]
        return run(max(20000, int(rate * duration)))

    def stop(self):
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


def wrk(url, connections, duration, script=None, threads=None, env=None, headers=()):
    """Runs wrk; returns (requests per second, p50 ms, p99 ms, non-2xx count). `headers` are
    extra request headers (`"Name: value"`)."""
    threads = threads or min(connections, 2)
    cmd = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{duration}s", "--latency",
           "-H", f"Authorization: {AUTH}"]
    for header in headers:
        cmd += ["-H", header]
    if script:
        cmd += ["-s", script]
    cmd.append(url)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env={**os.environ, **(env or {})}).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))

    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not m:
            return float("nan")
        v, unit = float(m.group(1)), m.group(2)
        return v / 1000 if unit == "us" else v * 1000 if unit == "s" else v

    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, pct(50), pct(99), int(m.group(1)) if m else 0
