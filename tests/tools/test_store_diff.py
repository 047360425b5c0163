"""The same random tool calls give the same answers on SQLite and on PostgreSQL: text, error
flag and structuredContent, ids and times included (``tests/tools/store_diff.py``)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.tools.app import AppContext
from tests.conftest import FakeClock
from tests.pg import MigratedSchemas
from tests.stores import open_target, selected_kinds
from tests.tools.store_diff import Call, OpenPair, first_difference, sequence, shrink

SEEDS = range(12)  # about 5 s for both stores; `python -m tests.tools.store_diff` runs more
STEPS = 60

pytestmark = pytest.mark.skipif(
    len(selected_kinds()) < 2, reason="compares SQLite with PostgreSQL: needs both kinds"
)


@pytest.fixture
def open_pair(tmp_path: Path, pg_schemas: MigratedSchemas) -> Iterator[OpenPair]:
    """Opens an empty SQLite store and an empty PostgreSQL store, each with its own clock at
    the same instant (the ones it opened before are closed)."""
    opened: list[HubStore] = []
    names = itertools.count()

    def make() -> tuple[AppContext, FakeClock, AppContext, FakeClock]:
        while opened:
            opened.pop().close()
        opened.append(open_target(tmp_path / f"diff{next(names)}.db"))
        opened.append(open_target(pg_schemas.clean("diff")))
        apps = []
        for store in opened:
            clock = FakeClock()
            apps.append((AppContext(store, clock, default_project="shop", caller="cli"), clock))
        return apps[0][0], apps[0][1], apps[1][0], apps[1][1]

    try:
        yield make
    finally:
        while opened:
            opened.pop().close()


def _shown(calls: list[Call]) -> str:
    return "\n".join(f"  clock +{move} ms, {tool}({args!r})" for tool, args, move in calls)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_tool_calls_answer_the_same_on_both_stores(open_pair: OpenPair, seed: int) -> None:
    calls = sequence(seed, STEPS)
    found = first_difference(open_pair, calls)
    if found is not None:
        smallest = shrink(open_pair, calls)
        index, sqlite, postgres = first_difference(open_pair, smallest) or found
        pytest.fail(
            f"seed {seed}: call {index + 1} of\n{_shown(smallest)}\n"
            f"SQLite:     {sqlite}\nPostgreSQL: {postgres}"
        )
