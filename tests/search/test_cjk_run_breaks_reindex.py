"""Migrations 0020 (SQLite) and 0017 (PostgreSQL): a store whose CJK bigrams were indexed side by
side, run after run, is indexed again with a break before each run's bigrams when this version
opens it, so that a word no longer ranks as found across punctuation."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import psycopg

from aletheia_mem.domain.recall import search_terms
from aletheia_mem.search.cjk import RUN_BREAK
from aletheia_mem.search.text import index_text
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.store import open_postgres_store
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.old_stores import store_before
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.postgres.test_pg_cjk_reindex import _index_as_before

T = 1_760_000_000_000
WORD = "说明。使用数据库连接池来提高性能"  # 数据库, the word searched for
APART = "今天整理数据。据库存记录显示"  # 数据 ends a sentence, 据库 starts the next
TEXTS = [WORD, APART]


def indexed_before(text: str) -> str:
    """``text`` as the release before these migrations indexed it: without the breaks."""
    return index_text(text).replace(RUN_BREAK + " ", "")


def found(store: Store, text: str) -> list[int]:
    query = MemoryQuery(terms=search_terms(store, text), projects=("shop",))
    return [memory.id for memory in store.search_memories(query, T + 1000)]


def test_an_older_store_is_indexed_again_with_breaks_between_runs(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    with closing(store_before(path, 20)) as conn:
        for n, text in enumerate(TEXTS, start=1):
            conn.execute(
                "INSERT INTO memories (id, uid, project, type, kind, title, text, files, tool,"
                " created_at, updated_at) VALUES (?, ?, 'shop', 'note', 'note', '', ?, '[]',"
                " 'cli', ?, ?)",
                (n, f"{0xB000 + n:032x}", text, T + n, T + n),
            )
            conn.execute(
                "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files)"
                " VALUES (?, '', ?, '', '', '')",
                (n, indexed_before(text)),
            )
    store = SqliteStore(path)
    try:
        assert found(store, "数据库") == [1, 2]
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        rows = dict(conn.execute("SELECT rowid, text FROM memory_fts").fetchall())
    assert rows[2] == index_text(APART)


def test_an_older_hub_is_indexed_again_with_breaks_between_runs(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, 17)
        for n, text in enumerate(TEXTS, start=1):
            conn.execute(
                "INSERT INTO memories (id, uid, project, type, kind, title, text, files, tool,"
                " created_at, updated_at) VALUES (%s, %s, 'shop', 'note', 'note', '', %s, '[]',"
                " 'cli', %s, %s)",
                (n, f"{0xB000 + n:032x}", text, T + n, T + n),
            )
            texts = ["", indexed_before(text), "", "", ""]
            _index_as_before(conn, full_text.MEMORY_INDEX, n, texts)
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        assert found(store, "数据库") == [1, 2]
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        breaks = conn.execute(
            "SELECT count(*) FROM memory_terms WHERE term = %s", (RUN_BREAK,)
        ).fetchone()
    assert breaks == (2,)
