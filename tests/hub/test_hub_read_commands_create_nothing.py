"""`mcp-link list`, `mcp-link revoke` and `audit` on a PostgreSQL database: they never make a
hub's tables where there are none (exit 7, a line naming the database), and migrate an existing
hub at an older schema, as the hub does on start."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

from tests.stores import rows_at

TABLES = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"


def _aletheia(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    "command", [["mcp-link", "list"], ["mcp-link", "revoke", "laptop"], ["audit"]]
)
def test_a_database_without_a_hubs_tables_is_no_store_and_left_untouched(
    pg_url: str, command: list[str]
) -> None:
    result = _aletheia(*command, "--hub-db", pg_url)
    assert result.returncode == 7, result.stdout + result.stderr
    assert result.stderr.startswith("Error: No hub store at postgresql://postgres@127.0.0.1:")
    assert "aletheia mcp-link create starts the hub's store" in result.stderr
    assert rows_at(pg_url, TABLES) == [(0,)]
    create = _aletheia("mcp-link", "create", "--hub-db", pg_url, "--projects", "shop")
    assert create.returncode == 0, create.stderr  # create starts the store there
    assert _aletheia(*command, "--hub-db", pg_url).returncode in (0, 3)  # 3: no such token


def test_another_application_s_schema_migrations_is_no_store(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a Rails application's table
        conn.execute("CREATE TABLE schema_migrations (version varchar PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES ('20240101000000')")

    result = _aletheia("audit", "--hub-db", pg_url)

    assert result.returncode == 7, result.stdout + result.stderr
    assert result.stderr.startswith("Error: No hub store at postgresql://")
    assert "Traceback" not in result.stderr


def test_a_hub_at_an_older_schema_is_migrated_by_mcp_link_list(pg_url: str) -> None:
    import psycopg

    from aletheia_mem.storage.postgres.database import _steps

    steps = _steps()
    with psycopg.connect(pg_url, autocommit=True) as conn, conn.transaction():
        conn.execute(
            "CREATE TABLE schema_migrations"
            " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        for version, script in steps[:-1]:  # every step but the last: an older version's hub
            conn.execute(script.encode())
            conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
    result = _aletheia("mcp-link", "list", "--hub-db", pg_url)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("No tokens yet.")
    assert rows_at(pg_url, "SELECT max(version) FROM schema_migrations") == [(steps[-1][0],)]
