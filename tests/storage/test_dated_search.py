"""Date-ordered searches give the same page whether they sort the matches or walk the date index."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite import search as sqlite_search
from tests.storage.test_match_counts import NOW, _memory

DAY = 86_400_000


def _fill(store: SqliteStore) -> dict[int, tuple[int, str, str, bool]]:
    """Memories whose dates do not follow their ids, in two projects and three types."""
    saved = {}
    for n in range(30):
        word = "deploy" if n % 3 else "cache"
        at = NOW - ((n * 7) % 30) * DAY - (n % 2)  # shuffled, with ties broken by id
        new = replace(
            _memory(f"{word} step {n}"),
            project="shop" if n % 4 else "billing",
            type=("note", "decision", "bugfix")[n % 3 if n % 5 else 1],
            created_at=at,
        )
        memory = store.add_memory(new)[0]
        saved[memory.id] = (at, new.project, new.type, word == "deploy")
    return saved


@pytest.mark.parametrize("walk_past", [2, 10_000])
@pytest.mark.parametrize("order", ["date_desc", "date_asc"])
@pytest.mark.parametrize("memory_type", [None, "decision"])
def test_a_date_ordered_search_pages_its_matches_in_date_order(
    store: SqliteStore,
    monkeypatch: pytest.MonkeyPatch,
    walk_past: int,
    order: str,
    memory_type: str | None,
) -> None:
    monkeypatch.setattr(sqlite_search, "_WALK_PAST_MATCHES", walk_past)
    saved = _fill(store)
    expected = sorted(
        (
            (at, memory_id)
            for memory_id, (at, project, kind, deploy) in saved.items()
            if deploy and project == "shop" and memory_type in (None, kind)
        ),
        reverse=order == "date_desc",
    )
    pages = []
    for offset in (0, 4, 8, 12):
        query = MemoryQuery(
            terms=("deploy",),
            projects=("shop",),
            type=memory_type,
            order=order,
            limit=4,
            offset=offset,
        )
        pages += store.rank_memory_ids(query, NOW)
    assert pages == [memory_id for _, memory_id in expected][:16]
    assert len(pages) >= 4
