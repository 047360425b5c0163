"""Two look-alike token names made at the same moment: the look-alike check and the insert are
one step, so one of two ``aletheia mcp-link create`` processes is refused. The test holds the
hub store's write lock while both start, so that both have read the tokens before either
writes (where a check made before the insert's transaction let both pass). Real processes,
SQLite and PostgreSQL stores. (On PostgreSQL a process opening the store waits for another's
write to end, so the two meet between check and insert only when both opened first: the race
shows there only when the second process starts fast enough; SQLite shows it every time.)"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest

from aletheia_mem.storage.open import open_hub_store

pytestmark = pytest.mark.e2e
# "bob", then with a Cyrillic o: one reads as the other
NAMES = ("bob", "b\u043eb")
WAIT_SECONDS = 60


def _create(hub_db: Path | str, name: str) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    args = ["mcp-link", "create", "--hub-db", str(hub_db), "--projects", "*", "--name", name]
    return subprocess.Popen(
        [sys.executable, "-m", "aletheia_mem", *args, "--scope", "sync", "--json"],
        env={**env, "NO_COLOR": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _waiting_on_pg(holder: psycopg.Connection) -> int:
    """How many sessions of this database wait for a lock: on the tokens the holder keeps, or
    (a process opening the store) on the migrations' lock that the other's write holds shared
    while it waits."""
    row = holder.execute(
        "SELECT count(*) FROM pg_locks WHERE NOT granted"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    ).fetchone()
    return int(row[0]) if row else 0


@contextmanager
def _write_lock(hub_db: Path | str) -> Iterator[object]:
    """The hub store's tokens held against writers until the block ends."""
    if isinstance(hub_db, Path):
        conn = sqlite3.connect(hub_db, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    with psycopg.connect(hub_db) as pg:
        pg.execute("LOCK TABLE hub_tokens IN SHARE ROW EXCLUSIVE MODE")
        yield pg
        pg.rollback()


@pytest.fixture(params=["sqlite", "postgresql"])
def token_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A new hub store: a SQLite file, or a new PostgreSQL schema (a first open of a schema
    another test emptied may hold one process back, and the two would not meet)."""
    if request.param == "sqlite":
        return tmp_path / "hub.db"
    return str(request.getfixturevalue("pg_url"))


def test_two_lookalike_names_made_at_once_make_one_token(token_db: Path | str) -> None:
    hub_db = token_db
    store = open_hub_store(hub_db)  # the store exists (migrated) before the race
    store.close()
    with _write_lock(hub_db) as holder:
        runs = [_create(hub_db, name) for name in NAMES]
        deadline = time.monotonic() + WAIT_SECONDS
        if isinstance(holder, psycopg.Connection):  # both wait on the lock
            while _waiting_on_pg(holder) < 2 and time.monotonic() < deadline:
                time.sleep(0.1)
        else:  # both started and read what they read before their write waits
            time.sleep(4)
        assert all(run.poll() is None for run in runs)
    done = [run.communicate(timeout=WAIT_SECONDS) for run in runs]
    codes = sorted(run.returncode for run in runs)
    assert codes[0] == 0 and codes[1] != 0, done
    refused = next(err for (_, err), run in zip(done, runs, strict=True) if run.returncode)
    assert "would pass for the token" in refused
    store = open_hub_store(hub_db)
    try:
        names = [token.name for token in store.list_tokens()]
    finally:
        store.close()
    assert len(names) == 1 and names[0] in NAMES
    made = next(out for (out, _), run in zip(done, runs, strict=True) if run.returncode == 0)
    assert json.loads(made)["name"] == names[0]
