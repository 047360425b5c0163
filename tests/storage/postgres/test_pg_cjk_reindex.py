"""Migration 0016: as SQLite's 0019, a hub whose CJK text was indexed before bigrams is indexed
again when this version opens it (tests/storage/test_cjk_reindex.py)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from aletheia_mem.canonical import fact_key
from aletheia_mem.domain.recall import search_terms
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.test_cjk_reindex import OLD_FACT, OLD_MEMORIES, T


def _index_as_before(
    conn: psycopg.Connection[Any], index: full_text.TextIndex, row_id: int, texts: list[str]
) -> None:
    """Index a row as the release before 0016 did: these texts gained no token then, so FTS5's
    tokens of the texts themselves."""
    tokens = full_text.column_tokens(texts)
    count = sum(len(found) for column in tokens for found in column.values())
    conn.execute(f"INSERT INTO {index.docs} ({index.key}, tokens) VALUES (%s, %s)", (row_id, count))
    for col, column in enumerate(tokens):
        for term, found in column.items():
            conn.execute(
                f"INSERT INTO {index.terms} (term, {index.key}, col, positions)"
                " VALUES (%s, %s, %s, %s)",
                (term, row_id, col, found),
            )
    conn.execute(
        "UPDATE full_text_counts SET docs = docs + 1, tokens = tokens + %s"
        " WHERE index_name = %s AND slot = 0",
        (count, index.name),
    )


def old_hub(conn: psycopg.Connection[Any]) -> None:
    migrate_before(conn, 16)
    for n, (title, text, files) in enumerate(OLD_MEMORIES, start=1):
        row = conn.execute(
            "INSERT INTO memories (uid, project, type, kind, title, text, files, tool,"
            " created_at, updated_at) VALUES (%s, 'shop', 'note', 'note', %s, %s, %s, 'cli',"
            " %s, %s) RETURNING id",
            (f"{0xA000 + n:032x}", title, text, files, T + n, T + n),
        ).fetchone()
        assert row is not None and row[0] == n
        listed = "\n".join(json.loads(files))
        _index_as_before(conn, full_text.MEMORY_INDEX, n, [title, text, "", "", listed])
    subject, predicate, obj = OLD_FACT
    conn.execute(
        "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
        " object, valid_from, recorded_at, source) VALUES (%s, 'shop', %s, %s, %s, %s, %s, %s,"
        " %s, 'cli')",
        (f"{0xF001:032x}", subject, fact_key(subject), predicate, fact_key(predicate), obj, T, T),
    )
    _index_as_before(conn, full_text.FACT_INDEX, 1, list(OLD_FACT))


def found(store: PostgresStore, text: str) -> list[int]:
    query = MemoryQuery(terms=search_terms(store, text), projects=("shop",))
    return [memory.id for memory in store.search_memories(query, T + 1000)]


def test_an_older_hub_finds_words_inside_its_cjk_runs_once_opened(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        old_hub(conn)
        before = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        assert found(store, "连接池") == [1]
        assert found(store, "提高性能") == [1]
        assert found(store, "设计文档") == [1]  # a file path
        assert found(store, "データベース") == [2]
        assert found(store, "Redis") == [3]
        facts = store.search_facts(search_terms(store, "缓存集群"), ("shop",), 5, T + 1000)
        assert [fact.object for fact in facts] == ["分布式缓存集群"]
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        after = conn.execute("SELECT tokens FROM memory_docs WHERE memory_id = 3").fetchone()
        totals = conn.execute(
            "SELECT docs, tokens FROM full_text_totals WHERE index_name = 'memories'"
        ).fetchone()
        tokens = conn.execute("SELECT sum(tokens) FROM memory_docs").fetchone()
    assert after == before  # no CJK: left as it was
    assert totals == (3, tokens[0] if tokens else None)  # the totals follow the new rows
