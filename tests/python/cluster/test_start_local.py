"""`quince start` in local mode: the ready line, setup.json, the restart of a killed DB
server, and stopping (SIGTERM, and the starter's own SIGKILL) without leaving a process.

The supervision tests run twice: with `quince serve` (once it accepts the cluster options)
and with tests/support/standin_server.py as the servers (so the starter's own behaviour is
tested whatever the cluster roles can do)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess

import pytest
import requests

from quince_starter import starters  # noqa: F401 (a fixture)
from quince_starter import (
    free_base_port,
    needs_cluster_serve,
    pid_alive,
    version_status,
    wait_until,
)
from quince_server import REPO_ROOT, quince_bin

STANDIN = str(REPO_ROOT / "tests" / "support" / "standin_server.py")

# The servers the starter runs: quince serve itself, or the stand-in.
SERVERS = [
    pytest.param([], id="quince", marks=needs_cluster_serve),
    pytest.param(["--server.quince", STANDIN], id="stand-in"),
]

# One etcd member, two DB servers, two coordinators: instances 0 and 1 of the port scheme.
LAYOUT = ["--cluster.agency-size", "1", "--starter.dbservers", "2", "--starter.coordinators", "2"]


def start_args(base: int) -> list[str]:
    return ["--starter.port", str(base), *LAYOUT, "--starter.stop-timeout", "20"]


def test_bad_options_are_refused_before_anything_starts(tmp_path):
    for bad, says in (
        (["--cluster.agency-size", "2"], "odd number"),
        (["--all.server.endpoint=tcp://127.0.0.1:1"], "sets --server.endpoint itself"),
        (["--starter.join", "10.0.0.1,10.0.0.2,10.0.0.3"], "--auth.jwt-secret"),
        (["--starter.join", "10.0.0.2,10.0.0.3"], "fewer than --cluster.agency-size"),
    ):
        data = tmp_path / f"d{len(says)}"
        done = subprocess.run(
            [str(quince_bin()), "start", "--starter.data-dir", str(data),
             "--starter.address", "10.0.0.2", *bad],
            capture_output=True, text=True, timeout=60,
        )
        assert done.returncode != 0, bad
        assert says in done.stderr, done.stderr
        assert not (data / "setup.json").exists(), bad


def test_a_server_that_dies_during_the_start_ends_it_and_stops_the_etcd_members(tmp_path):
    # /bin/false as the quince binary: the etcd members come up, the DB servers exit at once.
    base = free_base_port(15)
    data = tmp_path / "cluster"
    done = subprocess.run(
        [str(quince_bin()), "start", "--starter.data-dir", str(data), *start_args(base),
         "--server.quince", "/bin/false"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "ready" not in done.stdout
    assert "exited" in done.stderr and "quince.log" in done.stderr, done.stderr
    setup = json.loads((data / "setup.json").read_text())
    assert [p["state"] for p in setup["processes"]][:2] == ["stopped", "failed"]
    assert all(p["pid"] is None for p in setup["processes"])
    assert "etcd member 127.0.0.1:%d is up" % (base + 3) in done.stderr
    assert not any(
        pid_alive(int(pid), str(data)) for pid in re.findall(r"\(pid (\d+)\)", done.stderr)
    )


def test_a_missing_etcd_binary_is_named_with_how_to_install_it(tmp_path):
    base = free_base_port(15)
    data = tmp_path / "cluster"
    missing = tmp_path / "no-such-dir" / "etcd"
    done = subprocess.run(
        [str(quince_bin()), "start", "--starter.data-dir", str(data), *start_args(base),
         "--server.etcd", str(missing)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert str(missing) in done.stderr, done.stderr
    assert "apt-get install etcd-server" in done.stderr, done.stderr


@pytest.mark.parametrize("servers", SERVERS)
def test_local_cluster_starts_restarts_a_killed_db_server_and_stops_cleanly(
    tmp_path, starters, servers
):
    base = free_base_port(15)
    data = tmp_path / "cluster"
    # Root's password comes from the starter's environment, which every server inherits.
    starter = starters(data, start_args(base) + servers, env={"QUINCE_ROOT_PASSWORD": "cluster-pw"})
    urls = starter.wait_ready()
    assert urls == [f"http://127.0.0.1:{base + 1}", f"http://127.0.0.1:{base + 6}"]
    # The line for people names clients Quince has (not arangosh).
    human = starter.stdout[0]
    assert human.startswith(f"Your cluster can now be accessed at {urls[0]} "), human
    assert "arangosh" not in human and "quince import" in human, human
    if not servers:  # quince serve (the stand-in checks no passwords)
        for url in urls:
            ok = requests.get(f"{url}/_api/version", auth=("root", "cluster-pw"), timeout=10)
            assert ok.status_code == 200, ok.text
            wrong = requests.get(f"{url}/_api/version", auth=("root", "wrong"), timeout=10)
            assert wrong.status_code == 401, wrong.text

    setup = starter.setup()
    roles = [(p["role"], p["port"]) for p in setup["processes"]]
    assert roles == [
        ("etcd", base + 3),
        ("dbserver", base + 2),
        ("dbserver", base + 7),
        ("coordinator", base + 1),
        ("coordinator", base + 6),
    ]
    marker = str(data)
    for p in setup["processes"]:
        assert p["state"] == "running", p
        assert pid_alive(p["pid"], marker), p
        assert os.path.isfile(p["logFile"]), p
    secret = starter.secret()
    for url in urls:
        assert version_status(url, secret) == 200

    # kill -9 of a DB server: the starter starts it again (a new pid) and it answers again.
    seen = {p["pid"] for p in setup["processes"]}
    victim = setup["processes"][1]
    os.kill(victim["pid"], signal.SIGKILL)

    def restarted():
        now = starter.setup()["processes"][1]
        return now if now["pid"] not in (None, victim["pid"]) and now["state"] == "running" else None

    again = wait_until(restarted, "the DB server's restart", 30)
    assert again["restarts"] == 1
    assert version_status(f"http://127.0.0.1:{victim['port']}", secret) == 200
    seen.add(again["pid"])

    # SIGTERM: exit 0, and no process of the cluster is left.
    assert starter.stop(signal.SIGTERM) == 0
    assert [pid for pid in seen if pid_alive(pid, marker)] == []
    assert all(p["state"] == "stopped" and p["pid"] is None for p in starter.setup()["processes"])


@pytest.mark.parametrize("servers", SERVERS)
def test_a_second_start_reuses_the_layout_and_kill_9_of_the_starter_leaves_no_process(
    tmp_path, starters, servers
):
    base = free_base_port(15)
    data = tmp_path / "cluster"
    first = starters(data, start_args(base) + servers)
    first.wait_ready()
    assert first.stop() == 0

    # Other layout options on the command line: the layout of setup.json wins.
    second = starters(data, ["--starter.port", str(base + 100), "--starter.dbservers", "5"] + servers)
    urls = second.wait_ready()
    assert urls == [f"http://127.0.0.1:{base + 1}", f"http://127.0.0.1:{base + 6}"]
    pids = [p["pid"] for p in second.setup()["processes"]]
    assert len(pids) == 5

    # The starter dies without a chance to stop anything: its children die with it.
    second.proc.kill()
    second.proc.wait(timeout=30)
    wait_until(
        lambda: not any(pid_alive(pid, str(data)) for pid in pids),
        "the children of a killed starter to exit",
        30,
    )
