"""The PostgreSQL full-text index holds exactly the tokens SQLite's FTS5 index holds."""

from __future__ import annotations

import gzip
import json
import math
import sqlite3
from dataclasses import replace
from pathlib import Path

from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgDatabase
from aletheia_mem.storage.postgres.facts import PgFacts
from aletheia_mem.storage.postgres.memories import PgMemories
from aletheia_mem.storage.sqlite import SqliteStore

DATA = Path(__file__).resolve().parents[3] / "bench" / "retrieval" / "data"
NOW = 1_790_000_000_000
HARD_TEXTS = (
    "Café naïve façade Ærøskøbing Straße ŒUVRE İstanbul ǅemal Ångström",
    "東京都の天気 は 晴れ; 北京市 中文分词; 서울특별시 한국어; カタカナ ﾊﾝｶｸ",
    "parseHTTPRequest max_retries MAX-RETRIES src/app/main.py v1.2.3-rc4 0x7fff ½ ² ③ ٣٤",
    "running runs ran generously generalization happiness relational conditional ponies",
    "emoji \U0001f389 party \u2014 dash \u2013 and \u201cquotes\u201d\ttab\nline",
    "Ελληνικά ΣΊΣΥΦΟΣ русский ЯЗЫК עברית العربية हिन्दी ไทย",
    "x" * 70 + " " + "supercalifragilisticexpialidocious" * 3,
)


def _texts() -> list[str]:
    with gzip.open(DATA / "corpus.jsonl.gz", "rt", encoding="utf-8") as lines:
        items = [json.loads(line) for line in lines]
    return [*HARD_TEXTS, *(f"{item['title']}\n{item['text']}" for item in items[::20])]


def _memory(n: int, text: str) -> NewMemory:
    title, _, body = text.partition("\n")
    return NewMemory(
        project="p",
        type="note",
        kind="memory",
        title=title,
        text=body or title,
        tool="t",
        created_at=NOW + n,
        dedupe_key=None,
        narrative=text[::-1] if n % 3 == 0 else None,
        facts=(f"fact {n}: {title}",),
        files=(f"src/mod_{n}/FileName{n}.py",),
    )


def _sqlite_instances(path: Path) -> set[tuple[str, int, int, int]]:
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab (main, memory_fts, instance)")
        columns = ("title", "text", "narrative", "facts", "files")
        rows = conn.execute("SELECT term, doc, col, offset FROM temp.v").fetchall()
        return {(term, doc, columns.index(col), offset) for term, doc, col, offset in rows}
    finally:
        conn.close()


def test_every_token_and_position_is_the_one_fts5_indexed(
    tmp_path: Path, pg_store_url: str
) -> None:
    texts = _texts()
    assert len(texts) > 300
    sqlite = SqliteStore(tmp_path / "store.db")
    db = PgDatabase(pg_store_url)
    try:
        memories = PgMemories(db)
        for n, text in enumerate(texts):
            sqlite.add_memory(_memory(n, text))
            memories.add_memory(_memory(n, text))
        with db.read() as conn:
            rows = conn.execute(
                "SELECT term, memory_id, col, unnest(positions) FROM memory_terms"
            ).fetchall()
            totals = conn.execute(
                "SELECT docs, tokens FROM full_text_totals WHERE index_name = 'memories'"
            ).fetchone()
    finally:
        sqlite.close()
        db.close()
    expected = _sqlite_instances(tmp_path / "store.db")
    assert len(expected) > 20_000
    assert {tuple(row) for row in rows} == expected
    assert tuple(totals) == (len(texts), len(expected))


def test_a_query_term_becomes_the_phrase_fts5_makes_of_it() -> None:
    assert full_text.phrase_tokens("src/app/main.py") == ["src", "app", "main", "py"]
    assert full_text.phrase_tokens("Running") == ["run"]
    assert full_text.phrase_tokens("Café") == ["cafe"]
    assert full_text.phrase_tokens("東京都") == ["東京都"]
    assert full_text.phrase_tokens("—") == []


def test_a_flood_of_distinct_query_terms_keeps_the_term_cache_bounded() -> None:
    # a hostile client searching ever new terms, long ones included, only evicts older terms
    for n in range(10_000):  # about 8,200 of them short enough to be cached
        full_text.phrase_tokens(f"flood{n} " + "x" * (n % 300))
    cached = full_text._cached_phrase_tokens.cache_info()
    assert cached.currsize <= 4096
    assert full_text.phrase_tokens("flood9999 " + "x" * 399) == ["flood9999", "x" * 399]


def test_a_term_tokenized_again_comes_from_the_cache_as_a_fresh_list() -> None:
    first = full_text.phrase_tokens("parseHTTPRequest src/app")
    first.append("changed by the caller")
    assert full_text.phrase_tokens("parseHTTPRequest src/app") == ["parsehttprequest", "src", "app"]
    long_term = "word " * 100  # past the cached length: tokenized each time, the same way
    assert full_text.phrase_tokens(long_term) == ["word"] * 100


def test_totals_behind_the_counts_score_with_the_least_idf_instead_of_failing() -> None:
    # a count read after a save the totals were read before, or no tokens at all
    weights = (4.0, 1.0, 0.8, 0.7, 0.5)
    behind = full_text.Bm25.with_totals([3, 1], weights, docs=2, tokens=0)
    assert behind.idf == (full_text.MIN_IDF, full_text.MIN_IDF)
    assert behind.avgdl == 0.5
    assert behind.score([[(0, 1)], [(1, 2)]], doc_tokens=7) < 0.0
    empty = full_text.Bm25.with_totals([1], weights, docs=0, tokens=0)
    assert empty.idf == (full_text.MIN_IDF,) and empty.avgdl == 1.0
    usual = full_text.Bm25.with_totals([1], weights, docs=100, tokens=1000)
    assert usual.idf[0] == math.log(99.5 / 1.5) and usual.avgdl == 10.0


def test_the_totals_bm25_reads_follow_replaced_rows_and_facts(pg_store_url: str) -> None:
    db = PgDatabase(pg_store_url)
    try:
        memories = PgMemories(db)
        for n, text in enumerate(HARD_TEXTS):
            memories.add_memory(_memory(n, text))
            memories.put_work_state(replace(_memory(n, text), dedupe_key="work:list"))
        fact = NewFact("p", "service", "runs on", "k8s", NOW, NOW, "t")
        PgFacts(db).add_fact(fact)
        PgFacts(db).add_fact(replace(fact, object="nomad cluster"))
        with db.read() as conn:
            rows = conn.execute("SELECT index_name, docs, tokens FROM full_text_totals")
            totals = {row[0]: (row[1], row[2]) for row in rows.fetchall()}
            memory_docs = conn.execute("SELECT count(*), sum(tokens) FROM memory_docs").fetchone()
            fact_docs = conn.execute("SELECT count(*), sum(tokens) FROM fact_docs").fetchone()
    finally:
        db.close()
    assert totals["memories"] == tuple(memory_docs) and memory_docs[0] == len(HARD_TEXTS) + 1
    assert totals["facts"] == tuple(fact_docs) == (2, 4 + 5)  # servic run on k8s, + nomad cluster
