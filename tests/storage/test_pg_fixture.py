"""The PostgreSQL fixtures: an empty schema of a test's own, or a migrated one emptied for it."""

from __future__ import annotations

import psycopg

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.entries import SessionRow
from aletheia_mem.storage.open import open_hub_store
from tests.pg import MigratedSchemas
from tests.storage.contract.rows import T0, audit, fact, memory, rule, token


def test_a_test_schema_starts_empty_and_is_the_search_path(pg_url: str) -> None:
    with psycopg.connect(pg_url) as conn:
        schema = conn.execute("SELECT current_schema()").fetchone()
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchone()
        conn.execute("CREATE TABLE probe (id int)")
    assert schema is not None and schema[0].startswith("t_")
    assert tables == (0,)


def _filled(url: str) -> dict[str, int]:
    """Every table of the schema with rows in it (but the migrations), and its row count."""
    counts = {}
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            " AND tablename <> 'schema_migrations'"
        ).fetchall()
        for (table,) in tables:
            row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            if row is not None and row[0]:
                counts[table] = row[0]
    return counts


def _write_everything(store: HubStore) -> tuple[int, int]:
    saved, _ = store.add_memory(memory("Use pnpm"), [fact("shop", "uses", "pnpm")])
    store.add_rule(rule("r_0000000001", "Run the tests"))
    store.add_audit(audit(T0))
    store.add_token(token("laptop"))
    episode = store.start_episode("shop", "cli", T0)
    store.add_request(episode, "fix the build", T0)
    row = SessionRow("laptop", "2025-06-18", None, T0)
    store.sessions().insert("a" * 64, row, expired_before=0, keep_at_most=5)
    store.rate_windows().hit("laptop", 1, 60, 60_000, T0)
    page = store.export_changes(
        after=0, limit=100, max_bytes=1 << 20, local_only=False, exclude_origin=None, projects=None
    )
    return saved.id, page.cursor


def test_a_reused_schema_is_emptied_between_uses(pg_schemas: MigratedSchemas) -> None:
    url = pg_schemas.clean("reset_probe")
    seeded = _filled(url)  # what the migrations put in: full-text totals, the sync identity
    store = open_hub_store(url)
    try:
        identity = store.sync_store_id()
        first_id, first_cursor = _write_everything(store)
    finally:
        store.close()
    assert set(_filled(url)) > set(seeded)

    assert pg_schemas.clean("reset_probe") == url
    assert _filled(url) == seeded
    store = open_hub_store(url)
    try:
        assert store.sync_store_id() != identity  # a new store, a new identity
        assert _write_everything(store) == (first_id, first_cursor)  # sequences start again
    finally:
        store.close()


# Two tests in a row on the shared schema: the second sees nothing of the first.
def test_a_test_writes_to_the_shared_schema(pg_migrated_store: HubStore) -> None:
    _write_everything(pg_migrated_store)
    assert pg_migrated_store.count_memories(None) == 1


def test_the_next_test_finds_the_shared_schema_empty(
    pg_migrated_store: HubStore, pg_store_url: str
) -> None:
    assert pg_migrated_store.count_memories(None) == 0
    assert pg_migrated_store.list_tokens() == []
    assert _write_everything(pg_migrated_store)[0] == 1
