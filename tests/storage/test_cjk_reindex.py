"""Migration 0019: a store whose CJK text was indexed before bigrams (each run one token) is
indexed again when this version opens it, so its memories and facts are found by a word inside
a run; rows without CJK are left as they were."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from aletheia_mem.canonical import fact_key
from aletheia_mem.domain.recall import search_terms
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.old_stores import store_before

T = 1_760_000_000_000
# (title, text, files): as the release before 0019 indexed them, which added no token to
# these (no identifiers): each column's text as it is.
OLD_MEMORIES = [
    ("数据库连接池", "使用数据库连接池来提高性能", '["docs/系统设计文档.md"]'),
    ("データベース", "本番のデータベースは毎晩バックアップする。", "[]"),
    ("Cache", "We cache product pages in Redis.", "[]"),
]
OLD_FACT = ("订单服务", "缓存", "分布式缓存集群")


def old_store(path: Path) -> None:
    """A store at schema 18 holding CJK memories and a fact, indexed as that release did."""
    with closing(store_before(path, 19)) as conn:
        conn.execute("BEGIN")
        for n, (title, text, files) in enumerate(OLD_MEMORIES, start=1):
            conn.execute(
                "INSERT INTO memories (id, uid, project, type, kind, title, text, files, tool,"
                " created_at, updated_at) VALUES (?, ?, 'shop', 'note', 'note', ?, ?, ?, 'cli',"
                " ?, ?)",
                (n, f"{0xA000 + n:032x}", title, text, files, T + n, T + n),
            )
            listed = "\n".join(files[2:-2].split('", "')) if files != "[]" else ""
            conn.execute(
                "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files)"
                " VALUES (?, ?, ?, '', '', ?)",
                (n, title, text, listed),
            )
        subject, predicate, obj = OLD_FACT
        conn.execute(
            "INSERT INTO facts (id, uid, project, subject, subject_key, predicate, predicate_key,"
            " object, valid_from, recorded_at, source) VALUES (1, ?, 'shop', ?, ?, ?, ?, ?, ?,"
            " ?, 'cli')",
            (f"{0xF001:032x}", subject, fact_key(subject), predicate, fact_key(predicate), obj,
             T, T),
        )  # fmt: skip
        conn.execute(
            "INSERT INTO fact_fts (rowid, subject, predicate, object) VALUES (1, ?, ?, ?)",
            OLD_FACT,
        )
        conn.execute("COMMIT")


def found(store: SqliteStore, text: str) -> list[int]:
    query = MemoryQuery(terms=search_terms(store, text), projects=("shop",))
    return [memory.id for memory in store.search_memories(query, T + 1000)]


def test_an_older_store_finds_words_inside_its_cjk_runs_once_opened(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    old_store(path)
    store = SqliteStore(path)
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
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        rows = dict(conn.execute("SELECT rowid, text FROM memory_fts").fetchall())
    assert rows[3] == "We cache product pages in Redis."  # no CJK: not indexed again
    assert rows[1].startswith("使用数据库连接池来提高性能\n")


def test_a_store_opened_again_is_not_indexed_again(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    old_store(path)
    SqliteStore(path).close()
    with closing(sqlite3.connect(path)) as conn:  # as if another process had changed it
        conn.execute("UPDATE memory_fts SET text = 'x' WHERE rowid = 1")
        conn.commit()
    SqliteStore(path).close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT text FROM memory_fts WHERE rowid = 1").fetchone() == ("x",)


def test_a_new_store_owes_no_reindex(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "aletheia.db").close()
    with closing(sqlite3.connect(tmp_path / "aletheia.db")) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
