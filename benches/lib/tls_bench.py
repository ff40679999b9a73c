"""Issue 12's TLS benchmark; see benches/tls.sh.

wrk over TLS with keep-alive at CONCURRENCIES connections against Quince (an ssl:// endpoint;
GET of one small stored document) and nginx (the same certificate; a static file holding the
same bytes as Quince's reply body), alternating per run, RUNS runs of DURATION seconds each
(the mean is reported). The certificate (P-256, signed by a CA made here) is made with the
`openssl` command. Writes docs/benchmarks/tls.md."""

import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from bench_common import AUTH, Nginx, Quince, machine_description, wrk  # noqa: E402

RUNS = int(os.environ.get("RUNS", "3"))
DURATION = int(os.environ.get("DURATION", "5"))
CONCURRENCIES = [int(c) for c in os.environ.get("CONCURRENCIES", "1,8,64").split(",")]
HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "benchmarks")
FILE_NAME = "doc.json"

NGINX_CONF = """worker_processes @WORKERS@;
pid @DIR@/nginx.pid;
error_log @DIR@/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  default_type application/json;
  client_body_temp_path @DIR@/body;
  proxy_temp_path @DIR@/proxy;
  fastcgi_temp_path @DIR@/fastcgi;
  uwsgi_temp_path @DIR@/uwsgi;
  scgi_temp_path @DIR@/scgi;
  server {
    listen 127.0.0.1:@PORT@ ssl;
    ssl_certificate @KEYFILE@;
    ssl_certificate_key @KEYFILE@;
    ssl_protocols TLSv1.2 TLSv1.3;
    location /static/ {
      root @DIR@;
      types { application/json json; }
    }
  }
}
"""


def openssl(cwd, *args):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_keyfile(directory):
    """A CA and a server keyfile (certificate + key) for 127.0.0.1; returns (keyfile, ca)."""
    openssl(directory, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=Quince bench CA")
    openssl(directory, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(directory, "server.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    openssl(directory, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", "server.crt", "-extfile", "server.ext")
    keyfile = os.path.join(directory, "server.pem")
    with open(keyfile, "wb") as out:
        for part in ("server.crt", "server.key"):
            with open(os.path.join(directory, part), "rb") as f:
                out.write(f.read())
    os.chmod(directory, 0o755)
    os.chmod(keyfile, 0o644)
    return keyfile, os.path.join(directory, "ca.pem")


def call(url, ca, method="GET", body=None):
    """One request with root's credentials; returns the raw reply body."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": AUTH, "Content-Type": "application/json"})
    context = ssl.create_default_context(cafile=ca)
    with urllib.request.urlopen(req, timeout=60, context=context) as resp:
        return resp.read()


def negotiated(host_port, ca):
    """The TLS version and cipher a client negotiates (what wrk's OpenSSL gets too)."""
    context = ssl.create_default_context(cafile=ca)
    host, port = host_port.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return f"{tls.version()}, {tls.cipher()[0]}"


def main():
    threads = min(os.cpu_count(), 16)
    print(f"machine: {machine_description()}")
    load_before = os.getloadavg()[0]
    certs = tempfile.mkdtemp(prefix="quince-bench-tls-")
    keyfile, ca = make_keyfile(certs)
    data = tempfile.mkdtemp(prefix="quince-bench-data-")
    q = Quince(data, ["--server.endpoint", "ssl://127.0.0.1:0", "--ssl.keyfile", keyfile,
                      "--server.threads", str(threads)])
    q.start()
    ng = Nginx(threads)
    rows = []
    try:
        call(f"{q.url}/_api/collection", ca, "POST", {"name": "bench"})
        call(f"{q.url}/_api/document/bench", ca, "POST",
             {"_key": "small", "name": "a small document", "value": 42, "tags": ["a", "b"]})
        q_url = f"{q.url}/_api/document/bench/small"
        content = call(q_url, ca)
        os.makedirs(os.path.join(ng.dir, "static"), exist_ok=True)
        with open(os.path.join(ng.dir, "static", FILE_NAME), "wb") as f:
            f.write(content)
        conf = (NGINX_CONF.replace("@DIR@", ng.dir).replace("@PORT@", str(ng.port))
                .replace("@WORKERS@", str(threads)).replace("@KEYFILE@", keyfile))
        with open(os.path.join(ng.dir, "nginx.conf"), "w") as f:
            f.write(conf)
        subprocess.run(["nginx", "-c", os.path.join(ng.dir, "nginx.conf"), "-p", ng.dir], check=True)
        n_url = f"https://127.0.0.1:{ng.port}/static/{FILE_NAME}"
        deadline = time.monotonic() + 10
        while True:
            try:
                call(n_url, ca)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        assert call(n_url, ca) == content, "nginx serves the same bytes"
        q_tls = negotiated(q.url.removeprefix("https://"), ca)
        n_tls = negotiated(f"127.0.0.1:{ng.port}", ca)
        print(f"quince: {q_tls}; nginx: {n_tls}; body {len(content)} bytes")
        for c in CONCURRENCIES:
            q_runs, n_runs = [], []
            for _ in range(RUNS):
                qr = wrk(q_url, c, DURATION)
                nr = wrk(n_url, c, DURATION)
                if qr[3] or nr[3]:
                    raise RuntimeError(f"non-2xx replies at -c {c}: quince {qr[3]}, nginx {nr[3]}")
                q_runs.append(qr)
                n_runs.append(nr)
            mean = lambda runs, i: sum(r[i] for r in runs) / len(runs)  # noqa: E731
            rows.append((c, mean(q_runs, 0), mean(n_runs, 0), mean(q_runs, 2), mean(n_runs, 2)))
            print(f"c={c}: quince {rows[-1][1]:,.0f} req/s, nginx {rows[-1][2]:,.0f} req/s "
                  f"({rows[-1][1] / rows[-1][2]:.2f}x)")
    finally:
        ng.stop()
        q.stop("TERM")
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(certs, ignore_errors=True)

    load_after = os.getloadavg()[0]
    lines = [
        "# TLS: Quince against nginx (issue 12)",
        "",
        f"Machine: {machine_description()}. Quince release build on an `ssl://` endpoint",
        f"(rustls, ring), `--server.threads {threads}`, a GET of one small stored document with",
        f"root's Basic credentials; nginx with {threads} worker processes, `access_log off`,",
        "serving a static file that holds the same bytes as Quince's reply body, with the same",
        f"certificate (P-256, made by the script with `openssl`). Negotiated: Quince {q_tls};",
        f"nginx {n_tls}. Body {len(content)} bytes. Client: `wrk` (keep-alive, HTTP/1.1 over",
        f"TLS), {DURATION} s per run, the mean of {RUNS} runs per level, Quince and nginx",
        "alternating. Produced by `bash benches/tls.sh`.",
        "",
        f"The one-minute load average was {load_before:.1f} before the run and {load_after:.1f}",
        f"after it, on {os.cpu_count()} cores (the run's own wrk and servers count in the second). Above",
        "the core count, other work shared the machine: then the figures vary by tens of percent",
        "from run to run, and the ratio, measured alternating, is steadier than the absolute numbers.",
        "",
        "| connections | Quince req/s | nginx req/s | Quince / nginx | Quince p99 ms | nginx p99 ms |",
        "|---|---|---|---|---|---|",
    ]
    for c, qr, nr, qp, np_ in rows:
        lines.append(f"| {c} | {qr:,.0f} | {nr:,.0f} | {qr / nr:.2f}x | {qp:.2f} | {np_:.2f} |")
    below = [c for c, qr, nr, _, _ in rows if qr < 0.9 * nr]
    lines += [
        "",
        ("Quince is at or above 0.9x nginx at every level measured (the target)."
         if not below else
         f"Quince is below 0.9x nginx at {', '.join(map(str, below))} connections (the target is 0.9x)."),
        "",
        "Both sides do the same TLS work per request once the connection is open (keep-alive: one",
        "handshake per connection, then symmetric encryption of each request and reply). Quince",
        "also authenticates each request and reads the document from its store; nginx opens and",
        "reads a file from the page cache for each request (no `open_file_cache`, its default).",
        "The client (wrk, 2 threads) runs on the same machine and takes part of its cores.",
        "",
    ]
    path = os.path.join(DOCS, "tls.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
