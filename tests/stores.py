"""One way to run a suite on both stores: SQLite and PostgreSQL.

A fixture that asks for ``store_kind`` is run once per kind: ``tests/conftest.py`` parametrises
it (``pytest_generate_tests``), so the shared ``store`` fixture, and every fixture built on it,
runs each test on a SQLite file and on a PostgreSQL schema (``pg_store_url``: migrated once per
run, emptied before each test). ``ALETHEIA_TEST_STORES=sqlite`` (or ``postgresql``) runs one.

A test that is about SQLite itself (its file, PRAGMAs, export and import of a local store file)
is marked ``sqlite_only`` and runs on SQLite alone, with a comment saying why.
"""

from __future__ import annotations

import os
import re
import sqlite3
import weakref
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.storage.open import open_hub_store

KINDS = ("sqlite", "postgresql")
ENV = "ALETHEIA_TEST_STORES"
PG_POOL_SIZE = 4  # a test needs few connections; the server's are shared by the whole run


def selected_kinds() -> tuple[str, ...]:
    """The kinds ``ALETHEIA_TEST_STORES`` names (comma-separated), all of them by default."""
    raw = os.environ.get(ENV, "").strip()
    if not raw:
        return KINDS
    kinds = tuple(kind.strip() for kind in raw.split(",") if kind.strip())
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        raise pytest.UsageError(f"{ENV}: unknown store kind {unknown}; use {', '.join(KINDS)}")
    return kinds


def parametrize_store_kind(metafunc: pytest.Metafunc) -> None:
    """Run a test that needs ``store_kind`` once per selected kind (SQLite only when marked)."""
    if "store_kind" not in metafunc.fixturenames:
        return
    only_sqlite = metafunc.definition.get_closest_marker("sqlite_only") is not None
    kinds = ("sqlite",) if only_sqlite else selected_kinds()
    # module scope: a module-wide fixture (a running hub) may ask for it too
    metafunc.parametrize("store_kind", kinds, scope="module")


def store_target(
    request: pytest.FixtureRequest, kind: str, folder: Path, name: str = "aletheia"
) -> Path | str:
    """Where an empty store of ``kind`` named ``name`` lives for this fixture: a SQLite file in
    ``folder``, or the URL of a PostgreSQL schema emptied now (one per name, and per module for
    a module-wide fixture, so none empties another's store while it is in use)."""
    if kind == "sqlite":
        return folder / f"{name}.db"
    schemas = request.getfixturevalue("pg_schemas")
    if request.scope != "function":
        name = f"{name}_{re.sub(r'[^a-z0-9]+', '_', request.node.name.lower())}"
    return str(schemas.clean(name))


# Where each store a test opened lives, for reading its rows past the application.
_TARGETS: weakref.WeakKeyDictionary[Any, Path | str] = weakref.WeakKeyDictionary()


def open_target(target: Path | str) -> HubStore:
    """The store at ``target`` (a SQLite file or a PostgreSQL URL), opened and migrated."""
    store = (
        open_hub_store(target)
        if isinstance(target, Path)
        else open_hub_store(target, pool_size=PG_POOL_SIZE)
    )
    _TARGETS[store] = target
    return store


def target_of(store: Any) -> Path | str:
    """Where a store a test opened lives: its SQLite file or its PostgreSQL URL."""
    target = _TARGETS.get(store, getattr(store, "path", None))
    assert isinstance(target, Path | str), f"not a store a test opened: {store!r}"
    return target


def rows_at(target: Path | str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows straight from the database at ``target`` (a SQLite file or a PostgreSQL URL) on a
    connection of their own, bypassing the application (``?`` placeholders for either)."""
    if isinstance(target, Path):
        with closing(sqlite3.connect(target)) as conn:
            return [tuple(row) for row in conn.execute(sql, params)]
    import psycopg

    with psycopg.connect(target) as pg:
        return [tuple(row) for row in pg.execute(sql.replace("?", "%s"), params)]  # type: ignore[arg-type]


def run_at(target: Path | str, sql: str, *params: Any) -> None:
    """A write straight to the database at ``target``, committed, bypassing the application
    (``?`` placeholders for either)."""
    if isinstance(target, Path):
        with closing(sqlite3.connect(target)) as conn, conn:
            conn.execute(sql, params)
        return
    import psycopg

    with psycopg.connect(target) as pg:
        pg.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]


def raw_rows(store: Any, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """``rows_at`` the database of a store a test opened."""
    return rows_at(target_of(store), sql, *params)


def dump_at(target: Path | str) -> list[str]:
    """Every row of every table of the database at ``target``, as text."""
    if isinstance(target, Path):
        with closing(sqlite3.connect(target)) as conn:
            return list(conn.iterdump())
    tables = rows_at(
        target,
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename",
    )
    return [
        f'INSERT INTO "{table}" {row!r}'  # as SQLite's dump names a row's table
        for (table,) in tables
        for row in rows_at(target, f"SELECT * FROM {table} ORDER BY 1")
    ]


def held_at(target: Path | str) -> bytes:
    """Everything the database at ``target`` holds, to look for a secret in: a SQLite file with
    its WAL and journal byte for byte (free pages too), or every row of a PostgreSQL schema."""
    if isinstance(target, Path):
        return b"".join(path.read_bytes() for path in target.parent.glob(f"{target.name}*"))
    return "\n".join(dump_at(target)).encode()


def dump(store: Any) -> list[str]:
    """``dump_at`` the database of a store a test opened."""
    return dump_at(target_of(store))
