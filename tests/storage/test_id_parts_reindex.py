"""Migration 0021: a store that indexed a made-up id's letter runs as words (``aaeb`` of a hash)
is indexed again when this version opens it, so that such a run alone no longer finds the
memory; the id itself still does, and rows without one are left as they were."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from aletheia_mem.canonical import fact_key
from aletheia_mem.domain.recall import search_terms
from aletheia_mem.storage.sqlite import SqliteStore
from tests.storage.old_stores import store_before
from tests.storage.test_cjk_reindex import found

T = 1_760_000_000_000
HASH = "c1e21862ab8a18a8902073fec8df4f50947aaeb2"
# (text, what the release before 0021 added to its index): "aaeb", a letter run of the hash.
OLD_MEMORIES = [
    (f"commit {HASH} fixes restore", "aaeb"),
    ("build 9e0c4beef1d2 signed in twice", "beef"),
    ("We cache product pages in Redis.", "cached"),  # no id: a token it stays with (no reindex)
]
OLD_FACT = ("deploy", "commit", f"build {HASH}")


def old_store(
    path: Path, memories: list[tuple[str, str]] = OLD_MEMORIES, version: int = 21
) -> None:
    """A store at the schema before ``version`` holding ``memories`` (text, what that release
    added to its index) and ``OLD_FACT``, indexed as that release did."""
    with closing(store_before(path, version)) as conn:
        conn.execute("BEGIN")
        for n, (text, extras) in enumerate(memories, start=1):
            conn.execute(
                "INSERT INTO memories (id, uid, project, type, kind, title, text, tool,"
                " created_at, updated_at) VALUES (?, ?, 'shop', 'note', 'note', 'Note', ?, 'cli',"
                " ?, ?)",
                (n, f"{0xA000 + n:032x}", text, T + n, T + n),
            )
            indexed = f"{text}\n{extras}" if extras else text
            conn.execute(
                "INSERT INTO memory_fts (rowid, title, text, narrative, facts, files)"
                " VALUES (?, 'Note', ?, '', '', '')",
                (n, indexed),
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
            (subject, predicate, f"{obj}\naaeb"),
        )
        conn.execute("COMMIT")


def test_an_older_store_forgets_the_letter_runs_of_its_ids_once_opened(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    old_store(path)
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT rowid FROM memory_fts('aaeb')").fetchall() == [(1,)]
    store = SqliteStore(path)
    try:
        assert found(store, "aaeb") == []
        assert found(store, "beef") == []
        assert found(store, HASH) == [1]
        assert found(store, "9e0c4beef1d2") == [2]
        assert found(store, "Redis") == [3]
        assert store.search_facts(search_terms(store, "aaeb"), ("shop",), 5, T + 1000) == []
        facts = store.search_facts(search_terms(store, HASH), ("shop",), 5, T + 1000)
        assert [fact.object for fact in facts] == [f"build {HASH}"]
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        rows = dict(conn.execute("SELECT rowid, text FROM memory_fts").fetchall())
    assert rows[1] == f"commit {HASH} fixes restore"
    assert rows[3] == "We cache product pages in Redis.\ncached"  # no id: not indexed again


# (text, what the release of migration 0021 added to its index): nothing of a name with digits.
NAMED_MEMORIES = [
    ("We keep deploy secrets in 1Password", ""),
    ("Use the Int32ToInt64Converter for ids", ""),
    ("We cache product pages in Redis.", "cached"),  # no such name: not indexed again
    ("Use Base64Encoder for payloads", "Base Encoder"),  # its name with a number: base64
]


def test_an_older_store_finds_the_words_of_its_names_with_digits_once_opened(
    tmp_path: Path,
) -> None:
    """Migration 0022: 0021's release took ``1Password`` for a made-up id and indexed none of its
    words; this version indexes those rows again."""
    path = tmp_path / "aletheia.db"
    old_store(path, NAMED_MEMORIES, version=22)
    store = SqliteStore(path)
    try:
        assert found(store, "password") == [1]
        assert found(store, "converter") == [2]
        assert found(store, "1Password") == [1]
        assert found(store, "base64") == [4]
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT count(*) FROM full_text_reindex").fetchone() == (0,)
        rows = dict(conn.execute("SELECT rowid, text FROM memory_fts").fetchall())
    assert rows[1] == "We keep deploy secrets in 1Password\nPassword"
    assert rows[3] == "We cache product pages in Redis.\ncached"  # not indexed again
