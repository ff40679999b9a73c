"""A resource fuzzer for AQL: random queries from a small grammar built to ask for extreme
sizes and run times (huge ranges, nested loops, big strings and arrays from functions,
sorts, groups, subqueries, windows, distinct results) run against a server with a memory
limit; every query must finish, or be refused with 32 (memory) or 1500 (`maxRuntime`),
within its time, and the server's resident memory must stay within the limits.

The budget is `QUINCE_AQL_FUZZ_SECONDS` (default 30, for CI); the seed is printed and can be
set with `QUINCE_AQL_FUZZ_SEED` to replay a run. Each failure names its query.
"""

from __future__ import annotations

import os
import random
import time

import pytest
import requests

from conftest import unique, write_keyfile
from quince_server import ROOT_PASSWORD, QuinceServer

MB = 1_000_000
QUERY_LIMIT = 64 * MB
GLOBAL_LIMIT = 256 * MB
MAX_RUNTIME = 2.0
AUTH = ("root", ROOT_PASSWORD)

# What a query may answer besides its result: memory (32), maxRuntime (1500), and the
# warnings-free errors a generated call may meet (division and types only warn in AQL).
ALLOWED = {(400, 32), (410, 1500)}

# The run's length, and pytest-timeout's bound for it (the suite's default is 120 s).
FUZZ_SECONDS = float(os.environ.get("QUINCE_AQL_FUZZ_SECONDS", "30"))

SIZES = ["0", "1", "7", "1000", "1e5", "(1e6 - 0)", "(1e7 - 0)", "(1e9 - 0)", "(1e15 - 0)", "@n"]


class Grammar:
    """Random AQL over a few variables; every production is valid AQL that runs without an
    error but for limits. (`RANGE` past ten million elements is null with a warning, so it is
    wrapped in `TO_ARRAY`, which makes that an empty array a `FOR` can iterate.)"""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def pick(self, *options):
        return self.rng.choice(options)

    def size(self) -> str:
        return self.rng.choice(SIZES)

    def range(self) -> str:
        return f"1..{self.size()}"

    def string(self, depth: int) -> str:
        if depth <= 0:
            return self.pick("'x'", "'abcdefghij'", "TO_STRING(i)", "@s")
        d = depth - 1
        return self.pick(
            f"CONCAT_SEPARATOR({self.string(d)}, {self.array(d)})",
            f"CONCAT({self.array(d)})",
            f"SUBSTITUTE({self.string(d)}, {self.pick(repr('a'), repr(''), repr('x'))}, {self.string(d)})",
            f"REGEX_REPLACE({self.string(d)}, '(a|b)', {self.string(d)})",
            f"UPPER({self.string(d)})",
            f"JSON_STRINGIFY({self.array(d)})",
            f"TO_BASE64({self.string(d)})",
            f"LEFT({self.string(d)}, {self.size()})",
            f"TRANSLATE({self.string(d)}, {{a: {self.string(d)}}})",
        )

    def array(self, depth: int) -> str:
        if depth <= 0:
            return self.pick(f"({self.range()})", "[1, 2, 3]", "[]", f"TO_ARRAY(RANGE(1, {self.size()}))")
        d = depth - 1
        return self.pick(
            f"({self.range()})",
            f"FLATTEN([{self.array(d)}, {self.array(d)}], {self.pick('1', '10')})",
            f"UNION({self.array(d)}, {self.array(d)})",
            f"APPEND({self.array(d)}, {self.array(d)})",
            f"SORTED({self.array(d)})",
            f"UNIQUE({self.array(d)})",
            f"SPLIT({self.string(d)}, {self.pick(repr(''), repr('a'))})",
            f"REPLACE_NTH({self.array(d)}, {self.size()}, 1, 0)",
            f"INTERLEAVE({self.array(d)}, {self.array(d)})",
            f"VALUES(ZIP(TO_ARRAY({self.array(d)}), {self.array(d)}))",
            f"REGEX_SPLIT({self.string(d)}, '(a)')",
            f"(FOR x IN {self.array(d)} RETURN [x, {self.string(0)}])",
            f"TO_ARRAY(RANGE(1, {self.size()}, {self.pick('1', '0.5', '0.001')}))",
        )

    def value(self, depth: int) -> str:
        return self.pick(
            f"LENGTH({self.array(depth)})",
            f"LENGTH({self.string(depth)})",
            f"COUNT_DISTINCT({self.array(depth)})",
            f"LEVENSHTEIN_DISTANCE({self.string(depth)}, {self.string(depth)})",
            f"REGEX_MATCHES({self.string(depth)}, @pattern)",
            "i",
        )

    def query(self) -> str:
        loops = [f"FOR i IN {self.range()}"]
        if self.rng.random() < 0.4:
            loops.append(f"FOR j IN {self.range()}")
        body = []
        if self.rng.random() < 0.4:
            body.append(f"LET v = {self.value(self.rng.randint(0, 2))}")
        if self.rng.random() < 0.3:
            body.append(f"LET sub = (FOR k IN {self.range()} RETURN [k, {self.string(0)}])")
        if self.rng.random() < 0.3:
            body.append(f"FILTER i % {self.pick('2', '7', '1000')} == 0")
        tail = self.pick(
            f"SORT {self.pick('i DESC', 'RAND()', 'TO_STRING(i)')} LIMIT {self.pick('1', '10', '100000')}",
            f"COLLECT g = i % {self.pick('10', '100000')} INTO members",
            "COLLECT WITH COUNT INTO n",
            f"WINDOW i WITH {{preceding: {self.pick('1', '100', '1e9')}, following: 1}} AGGREGATE s = SUM(i)",
            f"LIMIT {self.pick('1', '1000', '1e6')}",
            "",
        )
        returned = self.pick(
            "RETURN 1",
            "RETURN i",
            f"RETURN DISTINCT {self.pick('i', 'TO_STRING(i)')}",
            f"RETURN {self.value(self.rng.randint(0, 1))}",
        )
        if tail.startswith("COLLECT WITH"):
            returned = "RETURN n"
        elif tail.startswith("COLLECT g"):
            returned = self.pick("RETURN g", "RETURN LENGTH(members)")
        elif tail.startswith("WINDOW"):
            returned = "RETURN s"
        return " ".join(loops + body + ([tail] if tail else []) + [returned])


def rss(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0]) * 1024
    return out


@pytest.mark.timeout(FUZZ_SECONDS + 120)
def test_random_queries_finish_or_are_refused_within_their_limits(tmp_path):
    seconds = FUZZ_SECONDS
    seed = int(os.environ.get("QUINCE_AQL_FUZZ_SEED", str(random.randrange(1 << 32))))
    print(f"aql resource fuzz: seed {seed}, {seconds:.0f} s")
    rng = random.Random(seed)
    srv = QuinceServer(
        tmp_path / unique("data"),
        jwt_keyfile=write_keyfile(tmp_path),
        extra_args=(
            "--query.memory-limit",
            str(QUERY_LIMIT),
            "--query.global-memory-limit",
            str(GLOBAL_LIMIT),
        ),
    )
    srv.start()
    try:
        session = requests.Session()
        session.auth = AUTH
        base = rss(srv.proc.pid)["VmRSS"]
        grammar = Grammar(rng)
        binds = {"n": 1e6, "s": "ab" * 5000, "pattern": "(a)?" * rng.choice([1, 50, 4000])}
        deadline = time.monotonic() + seconds
        outcomes: dict[str, int] = {}
        ran = 0
        while time.monotonic() < deadline:
            query = grammar.query()
            used = {k: v for k, v in binds.items() if f"@{k}" in query}
            started = time.monotonic()
            r = session.post(
                f"{srv.url}/_api/cursor",
                json={"query": query, "bindVars": used, "batchSize": 1000, "options": {"maxRuntime": MAX_RUNTIME}},
                timeout=120,
            )
            took = time.monotonic() - started
            body = r.json()
            outcome = "ok" if r.status_code == 201 else f"{r.status_code}/{body.get('errorNum')}"
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            assert r.status_code == 201 or (r.status_code, body.get("errorNum")) in ALLOWED, (
                f"seed {seed}: {query!r} answered {r.status_code} {r.text[:300]}"
            )
            assert took < MAX_RUNTIME + 3.0, f"seed {seed}: {query!r} took {took:.1f} s"
            if body.get("hasMore"):
                session.delete(f"{srv.url}/_api/cursor/{body['id']}")
            grown = rss(srv.proc.pid)["VmHWM"] - base
            assert grown < GLOBAL_LIMIT, f"seed {seed}: after {query!r} the server grew by {grown / MB:.0f} MB"
            ran += 1
        print(f"aql resource fuzz: {ran} queries, {outcomes}")
        assert ran > 0
    finally:
        assert srv.stop() == 0
