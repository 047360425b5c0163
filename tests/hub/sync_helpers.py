"""Compare stores item by item, in the global-id form that sync uses."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from aletheia_mem.storage.contracts import SyncLog
from aletheia_mem.storage.open import open_hub_store
from aletheia_mem.storage.sqlite import SqliteStore

COUNTED_TABLES = ("memories", "facts", "rules", "episodes", "episode_requests")


def items(store: SyncLog) -> dict[tuple[str, str], dict[str, Any]]:
    """Every syncable item of a store: (kind, global id) -> its data."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    cursor, more = 0, True
    while more:
        page = store.export_changes(
            after=cursor,
            limit=1000,
            max_bytes=64 * 1024 * 1024,
            local_only=False,
            exclude_origin=None,
            projects=None,
        )
        for record in page.records:
            found[(record["kind"], record["key"])] = record["data"]
        cursor, more = page.cursor, page.more
    return found


def items_at(target: Path | str) -> dict[tuple[str, str], dict[str, Any]]:
    """``items`` of the store at a path, or at a PostgreSQL URL."""
    store = open_hub_store(target)
    try:
        return items(store)
    finally:
        store.close()


def counts_at(target: Path | str) -> dict[str, int]:
    """How many rows each synced table holds, in the store at a path or a PostgreSQL URL."""
    if isinstance(target, str):
        store = open_hub_store(target)
        try:
            return counts(store)
        finally:
            store.close()
    conn = sqlite3.connect(target)
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in COUNTED_TABLES
        }
    finally:
        conn.close()


def counts(store: Any) -> dict[str, int]:
    """``counts_at`` for a store of either database (a PostgreSQL one is read through its pool)."""
    if isinstance(store, SqliteStore):
        return counts_at(store.path)
    with store._db.read() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in COUNTED_TABLES
        }


def open_pg_hub(url: str) -> Any:
    """A hub store on PostgreSQL, opened as ``aletheia-sync`` opens it (a small pool)."""
    from aletheia_mem.storage.postgres.store import open_postgres_store

    return open_postgres_store(url, pool_size=2)


def data_dirs(folder: Path, *names: str) -> list[Path]:
    """A new data folder for each of ``names`` (a teammate's machine), in ``folder``."""
    made = [folder / name for name in names]
    for path in made:
        path.mkdir()
    return made
