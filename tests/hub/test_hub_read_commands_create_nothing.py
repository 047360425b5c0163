"""`mcp-link list`, `mcp-link revoke` and `audit` on a PostgreSQL database: they never make a
hub's tables where there are none (exit 7, a line naming the database), and migrate an existing
hub at an older schema, as the hub does on start. The local read commands on the store
``ALETHEIA_HUB_DB`` names do the same, and make no file for a SQLite path with nothing there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.stores import rows_at

TABLES = "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"


def _aletheia(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        env=env,
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


READ_COMMANDS = [
    ["search", "invoices"],
    ["show", "1"],
    ["timeline", "1"],
    ["context"],
    ["rules", "list"],
    ["facts", "history", "api"],
    ["lists", "read", "todo"],
    ["lists", "list"],
    ["audit", "--local"],
    ["dismiss", "1"],
]


def _hub_db_env(target: str, home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    return {**env, "ALETHEIA_HUB_DB": target, "HOME": str(home), "ALETHEIA_CWD": str(home)}


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda command: " ".join(command))
def test_read_commands_leave_an_empty_database_named_by_aletheia_hub_db_empty(
    pg_url: str, tmp_path: Path, command: list[str]
) -> None:
    env = _hub_db_env(pg_url, tmp_path)
    result = _aletheia(*command, env=env)
    assert result.returncode == 7, result.stdout + result.stderr
    assert result.stderr.startswith("Error: No store at postgresql://postgres@127.0.0.1:")
    assert result.stderr.endswith(
        ": the database has no tables yet (ALETHEIA_HUB_DB); aletheia-sync --hub-db with this"
        " URL, or a save (aletheia save), creates them.\n"
    )
    assert "Traceback" not in result.stderr
    assert rows_at(pg_url, TABLES) == [(0,)]


def test_a_save_starts_the_store_the_read_commands_then_read(pg_url: str, tmp_path: Path) -> None:
    env = _hub_db_env(pg_url, tmp_path)
    assert _aletheia("search", "invoices", env=env).returncode == 7
    saved = _aletheia("save", "Invoices close on the 5th", "--project", "shop", env=env)
    assert saved.returncode == 0, saved.stderr
    found = _aletheia("search", "invoices", "--project", "shop", env=env)
    assert found.returncode == 0, found.stderr
    assert "Invoices close on the 5th" in found.stdout


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda command: " ".join(command))
def test_read_commands_make_no_file_for_a_sqlite_path_with_nothing_there(
    tmp_path: Path, command: list[str]
) -> None:
    target = tmp_path / "hub" / "none.db"
    result = _aletheia(*command, env=_hub_db_env(str(target), tmp_path))
    assert result.returncode == 7, result.stdout + result.stderr
    assert result.stderr.startswith(f"Error: No store at {target}: ALETHEIA_HUB_DB is")
    assert not target.parent.exists()
