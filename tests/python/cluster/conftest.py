"""Fixtures of the cluster tests: `starters`, for the `quince start` tests.

What it is: one fixture; the helpers it uses are tests/support/quince_starter.py (the
session conftest one level up puts tests/support on the path).

What it is not: the cluster harness of the other cluster tests (tests/support/quince_cluster.py).

Invariants: every starter started through `starters` is ended at the end of its test.
"""

from __future__ import annotations

import pytest

from quince_starter import Starter


@pytest.fixture
def starters():
    """Starts starters: `start(data_dir, args, prefix=None)`; all ended at the end."""
    started: list[Starter] = []

    def start(data_dir, args, prefix=None) -> Starter:
        starter = Starter(data_dir, args, prefix)
        started.append(starter)
        return starter

    yield start
    for starter in started:
        starter.close()
