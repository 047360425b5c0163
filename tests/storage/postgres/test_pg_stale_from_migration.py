"""Migration 0010: as SQLite's 0015, a hub's stale flags become the instant a memory's facts all
ended, so a fact replaced for a later time leaves its memory current until then."""

from __future__ import annotations

from typing import Any

import psycopg

from aletheia_mem.storage.postgres.store import open_postgres_store
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.test_stale_from_migration import FACTS, NOW


def _add(conn: psycopg.Connection[Any], title: str) -> int:
    row = conn.execute(
        "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
        " updated_at) VALUES (%s, 'shop', 'note', 'note', %s, %s, 'cli', %s, %s) RETURNING id",
        (title, title, title, NOW, NOW),
    ).fetchone()
    assert row is not None
    for n, (valid_to, dismissed_at) in enumerate(FACTS[title]):
        conn.execute(
            "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
            " object, valid_from, valid_to, recorded_at, source, memory_id, dismissed_at)"
            " VALUES (%s, 'shop', %s, %s, 'p', 'p', 'o', 0, %s, 0, 'cli', %s, %s)",
            (f"{title}-{n}", f"{title} {n}", f"{title} {n}", valid_to, row[0], dismissed_at),
        )
    return int(row[0])


def test_a_hub_before_0010_keeps_what_is_stale_and_frees_what_ends_later(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, 10)
        ids = {title: _add(conn, title) for title in FACTS}
        flagged = {int(r[0]) for r in conn.execute("SELECT id FROM memory_rank WHERE stale = 1")}
    assert flagged == {ids["ended"], ids["dismissed"], ids["ends later"]}  # the old flag
    store = open_postgres_store(pg_url, pool_size=1)
    try:
        every = list(ids.values())
        assert store.stale_memory_ids(every, NOW) == {ids["ended"], ids["dismissed"]}
        later = {ids["ended"], ids["dismissed"], ids["ends later"]}
        assert store.stale_memory_ids(every, NOW + 1_000) == later
    finally:
        store.close()
