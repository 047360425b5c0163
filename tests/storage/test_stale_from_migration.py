"""Migration 0015: a memory's stale flag becomes the instant its facts all ended, read against
now, so a fact replaced for a later time leaves its memory current until then."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.memories import insert_memory
from tests.storage.old_stores import store_before

NOW = 1_800_000_000_000
# Per memory: its facts as (valid_to, dismissed_at).
FACTS: dict[str, list[tuple[int | None, int | None]]] = {
    "open": [(None, None), (NOW - 5, None)],
    "ended": [(NOW - 5, None), (NOW - 9, None)],
    "dismissed": [(None, NOW - 1)],
    "ends later": [(NOW + 1_000, None), (NOW - 5, None)],
    "no facts": [],
}


def _add(conn: sqlite3.Connection, title: str) -> int:
    memory_id = insert_memory(
        conn, NewMemory("shop", "note", "note", title, title, "cli", NOW, None)
    )
    for n, (valid_to, dismissed_at) in enumerate(FACTS[title]):
        conn.execute(
            "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
            " object, valid_from, valid_to, recorded_at, source, memory_id, dismissed_at)"
            " VALUES (?, 'shop', ?, ?, 'p', 'p', 'o', 0, ?, 0, 'cli', ?, ?)",
            (f"{title}-{n}", f"{title} {n}", f"{title} {n}", valid_to, memory_id, dismissed_at),
        )
    return memory_id


@pytest.mark.sqlite_only
def test_a_store_before_0015_keeps_what_is_stale_and_frees_what_ends_later(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with closing(store_before(path, 15)) as conn:
        ids = {title: _add(conn, title) for title in FACTS}
        flagged = {int(row[0]) for row in conn.execute("SELECT id FROM memory_rank WHERE stale")}
    assert flagged == {ids["ended"], ids["dismissed"], ids["ends later"]}  # the old flag
    store = SqliteStore(path)
    try:
        every = list(ids.values())
        assert store.stale_memory_ids(every, NOW) == {ids["ended"], ids["dismissed"]}
        later = {ids["ended"], ids["dismissed"], ids["ends later"]}
        assert store.stale_memory_ids(every, NOW + 1_000) == later
    finally:
        store.close()
