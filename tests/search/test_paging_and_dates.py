"""Paging and date bounds of search on both stores: pages of every order never overlap or skip,
also when many memories share one creation instant; a bare date is a whole UTC day."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.search.test_ranking import _ids, _save


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize("order", ["relevance", "date_desc", "date_asc"])
def test_pages_never_overlap_or_skip_with_ties_in_created_at(call, clock, order) -> None:
    saved = [_save(call, f"gateway deploy note {n}") for n in range(7)]  # one instant
    clock.advance(1_000)
    saved += [_save(call, f"gateway deploy step {n}") for n in range(5)]

    pages = [
        _ids(call("search", query="gateway deploy", order=order, limit=5, offset=offset).text)
        for offset in (0, 5, 10)
    ]

    found = [memory_id for page in pages for memory_id in page]
    assert [len(page) for page in pages] == [5, 5, 2]
    assert sorted(found) == sorted(saved)


def test_a_bare_since_date_starts_at_utc_midnight(call, clock) -> None:
    clock.now = _ms("2026-10-28T23:30:00")
    late = _save(call, "night deploy of the gateway")
    clock.now = _ms("2026-10-29T00:30:00")
    early = _save(call, "morning deploy of the gateway")

    assert _ids(call("search", query="deploy", since="2026-10-29").text) == [early]
    assert _ids(call("search", query="deploy", until="2026-10-28").text) == [late]


def test_older_than_days_wins_over_a_later_until(call, clock) -> None:
    clock.now = _ms("2026-10-01T12:00:00")
    old = _save(call, "deploy checklist written long ago")
    clock.now = _ms("2026-10-25T12:00:00")
    _save(call, "deploy checklist written last week")
    clock.now = _ms("2026-10-29T12:00:00")

    found = call("search", query="deploy checklist", until="2026-10-28", older_than_days=10)

    assert _ids(found.text) == [old]
