"""docs/tutorial.md, run as written: every `sh` block in order, in one bash session, against a
fresh server, and every output block checked against what the command printed.

How the document is read: fenced blocks in order. The first `sh` block starts the server; it
must be the README's first command (so the two cannot drift apart), and the test starts the
server itself instead (the binary under test, a free port, a fresh data directory, root's
password `secret` as in that command). Every later `sh` block runs, with the tutorial's address
`127.0.0.1:8529` replaced by the server's. A `sh` block whose next block is `json` must print
one JSON object that holds every field of the shown one with the same value (objects may carry
more fields; arrays and scalars compare whole); one followed by `text` must print exactly that
text. Commands run in a scratch directory where `./target/release/quince` is the binary under
test and `examples/` is the repository's.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import unique
from quince_server import QuinceServer, quince_bin

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"
README = REPO / "README.md"
PASSWORD = "secret"
ADDRESS = "127.0.0.1:8529"

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.S | re.M)


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def steps(text: str) -> tuple[str, list[tuple[str, str | None, str | None]]]:
    """The server command, then each later command with the kind and text of its output."""
    found = blocks(text)
    commands = [i for i, (kind, _) in enumerate(found) if kind == "sh"]
    assert commands, "the tutorial has no sh blocks"
    server = found[commands[0]][1].strip()
    out = []
    for i in commands[1:]:
        following = found[i + 1] if i + 1 < len(found) else ("", "")
        kind = following[0] if following[0] in ("json", "text") else None
        out.append((found[i][1], kind, following[1] if kind else None))
    return server, out


def readme_first_command() -> str:
    for kind, body in blocks(README.read_text()):
        if kind == "sh":
            for line in body.splitlines():
                if line.strip() and not line.lstrip().startswith("#"):
                    return line.strip()
    raise AssertionError("README.md has no sh block")


def contains(actual, expected, where="answer") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: no {key!r} in {actual!r}"
            contains(actual[key], value, f"{where}.{key}")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def test_the_tutorial_starts_with_the_readmes_first_command():
    server, _ = steps(TUTORIAL.read_text())
    assert server == readme_first_command()
    assert f"QUINCE_ROOT_PASSWORD={PASSWORD} " in server


def test_every_tutorial_command_prints_what_the_tutorial_shows(tmp_path):
    _, commands = steps(TUTORIAL.read_text())
    assert len(commands) >= 10
    srv = QuinceServer(tmp_path / unique("data"), password=PASSWORD)
    srv.start()
    try:
        work = tmp_path / "work"
        (work / "target" / "release").mkdir(parents=True)
        (work / "target" / "release" / "quince").symlink_to(quince_bin().resolve())
        (work / "examples").symlink_to(REPO / "examples")
        outputs = work / "outputs"
        outputs.mkdir()
        address = f"{srv.host}:{srv.port}"
        script = ["set -euo pipefail"]
        for n, (command, _, _) in enumerate(commands):
            command = command.replace(ADDRESS, address)
            script.append(f"{{\n{command}\n}} > {outputs}/{n}.out")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("QUINCE_", "ARANGO_"))}
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        ran = len(list(outputs.glob("*.out")))
        assert done.returncode == 0, (
            f"command {ran} failed ({done.returncode}):\n{commands[ran - 1][0]}\n"
            f"stdout: {(outputs / f'{ran - 1}.out').read_text()}\nstderr: {done.stderr}"
        )
        for n, (command, kind, expected) in enumerate(commands):
            printed = (outputs / f"{n}.out").read_text()
            if kind == "text":
                assert printed == expected, f"{command}\nprinted {printed!r}, expected {expected!r}"
            elif kind == "json":
                contains(json.loads(printed), json.loads(expected), command.strip().splitlines()[0])
    finally:
        assert srv.stop() == 0
