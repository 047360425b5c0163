"""A PostgreSQL store a newer version migrated (its schema past the last migration known here):
opening it says so, with exit code 10 from the entry points, and changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage.postgres.database import _steps
from aletheia_mem.storage.postgres.store import open_postgres_store

LATEST = _steps()[-1][0]
BIN = Path(sys.executable).parent


def _newer(url: str) -> None:
    open_postgres_store(url, pool_size=1).close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE future_things (id integer PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (LATEST + 1,))


def _state(url: str) -> tuple[list[int], int]:
    with psycopg.connect(url) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
        (tokens,) = conn.execute("SELECT count(*) FROM hub_tokens").fetchone() or (0,)
    return sorted(versions), int(tokens)


def test_a_hub_a_newer_version_migrated_is_refused_and_left_alone(pg_url: str) -> None:
    _newer(pg_url)
    before = _state(pg_url)
    with pytest.raises(StoreTooNewError, match=f"schema {LATEST + 1}; this version knows up to"):
        open_postgres_store(pg_url, pool_size=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env["ALETHEIA_HUB_DB"] = pg_url
    runs = [
        [str(BIN / "aletheia-sync"), "--port", "0"],
        [str(BIN / "aletheia"), "mcp-link", "create", "--projects", "shop"],
        [str(BIN / "aletheia"), "search", "anything"],
    ]
    for command in runs:
        result = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=30, check=False
        )
        assert result.returncode == 10, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
        assert "was made by a newer version of Aletheia" in result.stderr
    assert _state(pg_url) == before
