"""Fact search's one statement (facts.py) runs on its generic plan, and that plan reads only the
facts holding the query's tokens, by primary key: the same plan once the store holds many facts,
whether or not PostgreSQL has analysed them. Written as a plain join, the generic plan read the
whole of facts and fact_docs (hash joins) at every search."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.postgres.facts import _SEARCH, _SEARCH_IN_PROJECTS
from aletheia_mem.storage.postgres.store import PostgresStore

NOW = 1_800_000_000_000
COPIES = 8_000
WHOLE_TABLE = ("Seq Scan on facts", "Seq Scan on fact_docs", "Seq Scan on fact_terms", "Gather")


def _copy_fact(conn: psycopg.Connection[Any], seed: int, count: int) -> None:
    """``count`` copies of fact ``seed`` with its index rows and totals, each term given one of
    997 suffixes, so that, as in a real store, a term is in few facts."""
    conn.execute(
        "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key, object,"
        " valid_from, recorded_at, source) SELECT f.uid || '-' || n, f.project, f.subject,"
        " f.subject_key || n, f.predicate, f.predicate_key, f.object, f.valid_from,"
        " f.recorded_at, f.source FROM facts f, generate_series(1, %s) n WHERE f.id = %s",
        (count, seed),
    )
    conn.execute(
        "INSERT INTO fact_docs (fact_id, tokens) SELECT f.id, d.tokens"
        " FROM facts f, fact_docs d WHERE d.fact_id = %s AND f.id <> %s",
        (seed, seed),
    )
    conn.execute(
        "INSERT INTO fact_terms (term, fact_id, col, positions)"
        " SELECT t.term || (f.id %% 997), f.id, t.col, t.positions FROM facts f, fact_terms t"
        " WHERE t.fact_id = %s AND f.id <> %s",
        (seed, seed),
    )
    conn.execute(  # the index's totals, which bm25 reads, as the store keeps them
        "UPDATE full_text_counts SET docs = docs + %s,"
        " tokens = tokens + %s * (SELECT tokens FROM fact_docs WHERE fact_id = %s)"
        " WHERE index_name = 'facts' AND slot = 0",
        (count, count, seed),
    )


def _plan(conn: psycopg.Connection[Any], statement: str) -> str:
    """The generic plan of a fact search for one rare and one absent token, run."""
    sql = statement.replace("%(tokens)s", "$1").replace("%(projects)s", "$2")
    sql = sql.replace("%(now)s", "$3")
    conn.execute("SET plan_cache_mode = force_generic_plan")
    conn.execute(f"PREPARE search (text[], text[], bigint) AS {sql}")
    try:
        explain = (
            "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)"
            f" EXECUTE search (ARRAY['backend5', 'nowhere'], ARRAY['alpha'], {NOW})"
        )
        rows = conn.execute(explain).fetchall()
    finally:
        conn.execute("DEALLOCATE search")
    return "\n".join(row[0] for row in rows)


@pytest.mark.parametrize("analysed", [False, True], ids=["before-analyze", "after-analyze"])
def test_fact_search_probes_the_facts_it_finds_by_key(
    pg_store: PostgresStore, analysed: bool
) -> None:
    fact = NewFact("alpha", "cache backend", "is", "redis", NOW, NOW, "test")
    seed, _ = pg_store.add_fact(fact)
    with pg_store._db.write() as conn:
        _copy_fact(conn, seed.id, COPIES)
    with pg_store._db.read() as conn:
        if analysed:
            conn.execute("ANALYZE facts, fact_docs, fact_terms")
        for statement in (_SEARCH, _SEARCH_IN_PROJECTS):
            plan = _plan(conn, statement)
            assert "Index Scan using facts_pkey" in plan, plan
            assert not [node for node in WHOLE_TABLE if node in plan], plan
        [(copies,)] = conn.execute(
            "SELECT count(*) FROM facts WHERE id <> %s AND id %% 997 = 5", (seed.id,)
        )
    # What the plan serves: the copies whose term took the suffix 5, every one found.
    found = pg_store.search_facts(["backend5"], ("alpha",), 100, NOW)
    assert copies >= 8
    assert len(found) == copies
    assert all(f.id % 997 == 5 and f.object == "redis" for f in found)
