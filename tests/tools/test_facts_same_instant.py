"""Saves in one millisecond that give one subject and predicate two values (agents saving at
once, a server's workers): each value holds for an instant of its own, in the order the saves
were written, and none is left valid at no instant."""

from __future__ import annotations

import re

from tests.conftest import REFERENCE_NOW
from tests.storage.postgres.racing import race
from tests.tools.helpers import DAY_MS, body_lines, db_rows, saved_id

T = REFERENCE_NOW
AGENTS = 8


def _state(call, database, **fact):
    return call(
        "save_memory",
        text=f"payments-api now runs on {database}",
        facts=[{"subject": "payments-api", "predicate": "database", "object": database, **fact}],
    )


def _as_of(call, at) -> list[str]:
    lines = body_lines(call("fact_history", subject="payments-api", as_of=at))
    return [line.split("  ")[0] for line in lines[1:]]


def test_a_second_value_saved_in_the_same_millisecond_starts_one_millisecond_later(call, app):
    _state(call, "PostgreSQL 15")
    _state(call, "PostgreSQL 16")  # the clock stands still: the same instant

    assert db_rows(
        app, "SELECT id, valid_from, valid_to, superseded_by FROM facts ORDER BY id"
    ) == [(1, T, T + 1, 2), (2, T + 1, None, None)]
    assert _as_of(call, T) == ["- fact #1 payments-api · database = PostgreSQL 15"]
    assert _as_of(call, T + 1) == ["- fact #2 payments-api · database = PostgreSQL 16"]


def test_the_history_shows_instants_that_read_each_value_back(call, clock):
    _state(call, "PostgreSQL 15")
    _state(call, "PostgreSQL 16")
    clock.advance(DAY_MS)

    lines = body_lines(call("fact_history", subject="payments-api", include_superseded=True))

    assert lines[1] == "- fact #2 payments-api · database = PostgreSQL 16  (shop, since 2026-10-29)"
    start, end = re.search(r"\(shop, (\S+) to (\S+), superseded by #2\)$", lines[2]).groups()
    assert start == "2026-10-29T19:46:45.563Z"
    assert _as_of(call, start) == ["- fact #1 payments-api · database = PostgreSQL 15"]
    assert _as_of(call, end) == ["- fact #2 payments-api · database = PostgreSQL 16"]


def test_the_current_value_again_changes_nothing_and_an_older_one_comes_back_after(call, app):
    _state(call, "PostgreSQL 15")
    _state(call, "PostgreSQL 16")
    again = call(
        "save_memory",
        text="still PostgreSQL 16",
        facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}],
    )
    back = call(
        "save_memory",
        text="back on PostgreSQL 15",
        facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 15"}],
    )

    assert not again.is_error and not back.is_error
    assert db_rows(
        app, "SELECT id, object, valid_from, valid_to, superseded_by FROM facts ORDER BY id"
    ) == [
        (1, "PostgreSQL 15", T, T + 1, 2),
        (2, "PostgreSQL 16", T + 1, T + 2, 3),
        (3, "PostgreSQL 15", T + 2, None, None),
    ]


def test_a_value_given_a_valid_from_still_replaces_the_one_from_that_instant(call, app):
    """A stated valid_from is the caller's: a second value from the same instant corrects the
    first from that very instant (as before), rather than moving to the next one."""
    _state(call, "PostgreSQL 15", valid_from="2026-01-01")
    _state(call, "PostgreSQL 16", valid_from="2026-01-01")

    jan_2026 = 1_767_225_600_000
    assert db_rows(app, "SELECT id, valid_from, valid_to FROM facts ORDER BY id") == [
        (1, jan_2026, jan_2026),
        (2, jan_2026, None),
    ]
    assert _as_of(call, "2026-01-01") == ["- fact #2 payments-api · database = PostgreSQL 16"]


def test_agents_saving_one_key_in_one_millisecond_leave_every_value_an_instant(call, app):
    """Eight agents save at once, each another value, on a clock standing still: every save is
    acknowledged with its own memory, its value is stored once, and the values hold one after
    another, each for at least a millisecond, in the order the store wrote them."""
    replies: dict[int, object] = {}

    def save(n: int) -> None:
        replies[n] = _state(call, f"engine {n}")

    assert race(save, AGENTS) == []
    memories = {n: saved_id(reply) for n, reply in replies.items()}
    assert sorted(memories) == list(range(AGENTS))
    assert len(set(memories.values())) == AGENTS
    rows = db_rows(
        app,
        "SELECT id, object, memory_id, valid_from, valid_to, superseded_by FROM facts"
        " ORDER BY valid_from",
    )
    assert sorted((obj, memory) for _, obj, memory, *_ in rows) == sorted(
        (f"engine {n}", memory) for n, memory in memories.items()
    )
    assert [row[3] for row in rows] == [T + n for n in range(AGENTS)]
    for row, successor in zip(rows, [*rows[1:], None], strict=True):
        if successor is None:
            assert row[4:] == (None, None)
        else:
            assert row[4:] == (successor[3], successor[0])
    for at, row in zip(range(T, T + AGENTS), rows, strict=True):
        assert _as_of(call, at) == [f"- fact #{row[0]} payments-api · database = {row[1]}"]
