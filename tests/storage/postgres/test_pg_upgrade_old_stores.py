"""A hub's PostgreSQL store an older release left, at several schema versions and holding every
kind of row the tables held then (the same rows as tests/storage/test_upgrade_old_stores.py),
opened by this version: every migration applies, every item is still there and travels by sync,
and search, timeline, facts, rules, lists and tokens work."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest

from aletheia_mem.storage.postgres.database import _steps
from aletheia_mem.storage.postgres.full_text import row_terms
from aletheia_mem.storage.postgres.store import open_postgres_store
from aletheia_mem.tools.app import AppContext
from tests.hub.sync_helpers import items
from tests.storage.postgres.older_schema import migrate_before
from tests.storage.test_upgrade_old_stores import (
    EPISODES,
    FACTS,
    JSON_COLUMNS,
    MEMORIES,
    RULES,
    TABLES,
    T,
    call,
    fact_key,
)

LATEST = _steps()[-1][0]
# The first; before the hub's tables, the sync log, the split full-text counts, the rank rows,
# the search feed, stale_from and the sync bindings; the latest.
VERSIONS = (1, 2, 3, 4, 5, 9, 10, 11, LATEST)


def _index(conn: psycopg.Connection[Any], table: str, row_id: int, texts: list[str]) -> int:
    count, terms, cols, positions = row_terms(texts)
    conn.execute(f"INSERT INTO {table}_docs VALUES (%s, %s)", (row_id, count))
    conn.execute(
        f"INSERT INTO {table}_terms (term, {table}_id, col, positions)"
        " SELECT t, %s, c, p::integer[] FROM unnest(%s::text[], %s::smallint[], %s::text[])"
        " AS u (t, c, p)",
        (row_id, terms, cols, positions),
    )
    return count


def fill(conn: psycopg.Connection[Any], version: int) -> None:
    """The rows of the SQLite test, as the hub of that release wrote them: ids drawn from the
    identities, a fact's successor set once it exists, the full-text rows and their totals."""
    tokens = {"memory": 0, "fact": 0}
    for kind, (table, rows) in TABLES.items():
        for row in rows:
            values = {k: json.dumps(v) if k in JSON_COLUMNS else v for k, v in row.items()}
            if table != "rules":  # the identity draws it, as the release's hub let it
                values.pop("id")
            values.pop("superseded_by", None)
            if table == "facts":
                values["subject_key"] = fact_key(row["subject"])
                values["predicate_key"] = fact_key(row["predicate"])
            names = ", ".join(values)
            marks = ", ".join(["%s"] * len(values))
            conn.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(values.values()))
            if table == "memories":
                texts = [row["title"], row["text"], row["narrative"] or ""]
                texts += ["\n".join(row["facts"]), "\n".join(row["files"])]
                tokens[kind] += _index(conn, "memory", row["id"], texts)
                for path in row["files"]:
                    conn.execute(
                        "INSERT INTO memory_files VALUES (%s, %s, %s)",
                        (row["id"], path, path[::-1]),
                    )
            elif table == "facts":
                texts = [row["subject"], row["predicate"], row["object"]]
                tokens[kind] += _index(conn, "fact", row["id"], texts)
    for row in FACTS:
        if row["superseded_by"] is not None:
            conn.execute(
                "UPDATE facts SET superseded_by = %s WHERE id = %s",
                (row["superseded_by"], row["id"]),
            )
    counts = "full_text_counts" if version >= 4 else "full_text_totals"
    for name, kind, rows in (("memories", "memory", MEMORIES), ("facts", "fact", FACTS)):
        conn.execute(
            f"UPDATE {counts} SET docs = %s, tokens = %s WHERE index_name = %s"
            + (" AND slot = 0" if version >= 4 else ""),
            (len(rows), tokens[kind], name),
        )
    if version >= 2:
        conn.execute(
            "INSERT INTO hub_tokens (name, token_hash, prefix, scope, projects, created_at)"
            " VALUES ('laptop', %s, 'alh_aaaa', 'sync', ARRAY['shop'], %s)",
            ("a" * 64, T),
        )
    if version >= 3:
        conn.execute("INSERT INTO sync_peers VALUES ('hub-1', 7, 3, 5, %s)", (T,))
    if version >= 11:
        conn.execute("INSERT INTO sync_store_tokens VALUES ('store-a', 1, %s)", (T,))


@pytest.mark.parametrize("version", VERSIONS)
def test_a_full_hub_at_an_older_version_upgrades_with_nothing_lost(
    pg_url: str, version: int
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, version + 1)
        with conn.transaction():
            fill(conn, version)
    store = open_postgres_store(pg_url, pool_size=2)
    try:
        with store._db.read() as conn:
            row = conn.execute("SELECT count(*), max(version) FROM schema_migrations").fetchone()
        assert tuple(row or ()) == (len(_steps()), LATEST)
        synced = items(store)  # every item in the change log, as a client pulls it
        expected = {("memory", row["uid"]) for row in MEMORIES}
        expected |= {("fact", row["uid"]) for row in FACTS}
        expected |= {("rule", row["id"]) for row in RULES}
        expected |= {("episode", row["uid"]) for row in EPISODES}
        assert set(synced) == expected
        assert synced[("memory", MEMORIES[2]["uid"])]["dismiss_reason"] == "replaced by v2"
        episode = synced[("episode", EPISODES[0]["uid"])]
        assert [text for _, text in episode["requests"]] == [
            "switch the cache to redis",
            "now add a test",
        ]
        app = AppContext(store=store, clock=lambda: T + 10**6, default_project="shop", caller="cli")
        found = call(app, "search", query="redis")
        assert [hit["id"] for hit in found["memories"]] == [1]
        assert [fact["id"] for fact in found["facts"]] == [2]
        assert [hit["id"] for hit in call(app, "search", file="src/cache/keys.py")["memories"]] == [
            1
        ]
        assert call(app, "search", query="checkout")["memories"] == []
        around = [item["id"] for item in call(app, "timeline", anchor=2)["memories"]]
        assert around[:3] == [1, 2, 4]
        history = call(app, "fact_history", subject="cache", include_superseded=True)
        assert [fact["object"] for fact in history["facts"]] == ["redis", "memcached"]
        assert [rule["id"] for rule in call(app, "list_rules")["rules"]] == [RULES[0]["id"]]
        assert call(app, "work_state_read", list="todo")["items"][0] == "migrate billing"
        if version >= 2:
            assert [token.name for token in store.list_tokens()] == ["laptop"]
        if version >= 3:
            assert store.sync_cursors("hub-1", 7) == (3, 5)
        call(app, "save_memory", text="After the upgrade: Redis cluster", project="shop")
        assert call(app, "search", query="redis cluster")["memories"][0]["id"] == 6
    finally:
        store.close()
