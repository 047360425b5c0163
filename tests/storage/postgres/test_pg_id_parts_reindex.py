"""Migration 0018: as SQLite's 0021, a hub that indexed a made-up id's letter runs as words is
indexed again when this version opens it (tests/storage/test_id_parts_reindex.py)."""

from __future__ import annotations

import psycopg

from aletheia_mem.canonical import fact_key
from aletheia_mem.domain.recall import search_terms
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.store import open_postgres_store
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.postgres.test_pg_cjk_reindex import _index_as_before, found
from tests.storage.test_id_parts_reindex import HASH, NAMED_MEMORIES, OLD_FACT, OLD_MEMORIES, T


def old_hub(
    conn: psycopg.Connection, memories: list[tuple[str, str]] = OLD_MEMORIES, version: int = 18
) -> None:
    migrate_before(conn, version)
    for n, (text, extras) in enumerate(memories, start=1):
        row = conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, tool, created_at,"
            " updated_at) VALUES (%s, 'shop', 'note', 'note', 'Note', %s, 'cli', %s, %s)"
            " RETURNING id",
            (f"{0xA000 + n:032x}", text, T + n, T + n),
        ).fetchone()
        assert row is not None and row[0] == n
        indexed = f"{text}\n{extras}" if extras else text
        _index_as_before(conn, full_text.MEMORY_INDEX, n, ["Note", indexed, "", "", ""])
    subject, predicate, obj = OLD_FACT
    conn.execute(
        "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
        " object, valid_from, recorded_at, source) VALUES (%s, 'shop', %s, %s, %s, %s, %s, %s,"
        " %s, 'cli')",
        (f"{0xF001:032x}", subject, fact_key(subject), predicate, fact_key(predicate), obj, T, T),
    )
    _index_as_before(conn, full_text.FACT_INDEX, 1, [subject, predicate, f"{obj}\naaeb"])


def test_an_older_hub_forgets_the_letter_runs_of_its_ids_once_opened(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        old_hub(conn)
        before = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        assert found(store, "aaeb") == []
        assert found(store, "beef") == []
        assert found(store, HASH) == [1]
        assert found(store, "9e0c4beef1d2") == [2]
        assert found(store, "cached") == [3]  # no id: left as it was indexed
        assert store.search_facts(search_terms(store, "aaeb"), ("shop",), 5, T + 1000) == []
        facts = store.search_facts(search_terms(store, HASH), ("shop",), 5, T + 1000)
        assert [fact.object for fact in facts] == [f"build {HASH}"]
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        after = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
    assert after == before


def test_an_older_hub_finds_the_words_of_its_names_with_digits_once_opened(pg_url: str) -> None:
    """Migration 0019, as SQLite's 0022: ``1Password``'s words are indexed again."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        old_hub(conn, NAMED_MEMORIES, version=19)
        before = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        assert found(store, "password") == [1]
        assert found(store, "converter") == [2]
        assert found(store, "1Password") == [1]
        assert found(store, "base64") == [4]
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        after = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
    assert after == before
