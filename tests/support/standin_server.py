#!/usr/bin/env python3
"""A stand-in for `quince serve` in the starter's supervision tests.

What it is: a process that takes the command line `quince start` gives a DB server or a
coordinator, listens on its `--server.endpoint`, and answers `GET /_api/version` with 200 to
a bearer token signed with the secret of its `--server.jwt-secret-keyfile` (401 otherwise);
SIGTERM ends it with exit code 0. It lets the supervision tests (start order, restarts,
stopping, no orphans) run whatever the cluster roles of `quince serve` can do.

What it is not: a server: it stores nothing and knows no other path. The tests that need
real servers run `quince serve` itself.

Invariants: it refuses to start (exit 2) without the options the starter must pass.
"""

import base64
import hashlib
import hmac
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REQUIRED = ("--server.endpoint", "--database.directory", "--cluster.my-role",
            "--cluster.my-address", "--cluster.agency-endpoint", "--server.jwt-secret-keyfile")


def option(args, name):
    return args[args.index(name) + 1]


def verified(token: str, secret: bytes) -> bool:
    try:
        head, payload, signature = token.split(".")
    except ValueError:
        return False
    expected = hmac.new(secret, f"{head}.{payload}".encode(), hashlib.sha256).digest()
    given = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    return hmac.compare_digest(expected, given)


def main() -> int:
    args = sys.argv[1:]
    if not args or args[0] != "serve" or any(name not in args for name in REQUIRED):
        print(f"stand-in: missing options in {args}", file=sys.stderr)
        return 2
    host, port = option(args, "--server.endpoint").removeprefix("tcp://").rsplit(":", 1)
    with open(option(args, "--server.jwt-secret-keyfile"), "rb") as f:
        secret = f.read().rstrip(b"\r\n")
    role = option(args, "--cluster.my-role")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            auth = self.headers.get("Authorization", "")
            ok = auth.lower().startswith("bearer ") and verified(auth[7:].strip(), secret)
            status, body = (200, {"server": "arango", "version": "stand-in", "role": role}) if (
                ok and self.path == "/_api/version") else (401, {"error": True, "code": 401})
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_):
            pass

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer((host, int(port)), Handler)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"stand-in {role} listening on {host}:{port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
