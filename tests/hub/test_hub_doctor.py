"""`aletheia doctor --hub-db`: a hub's store on either database, reached or told why not."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from aletheia_mem.clock import system_clock
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.storage.open import display_target
from tests.storage.contract.rows import memory
from tests.stores import open_target, rows_at


def _doctor(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "doctor", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_doctor_reports_a_hub_store_its_schema_and_counts(hub_db: Path | str) -> None:
    store = open_target(hub_db)
    try:
        store.add_memory(memory("Deploys go through the release branch"))
        create_token(store, system_clock, scope="sync", projects=("shop",), name="laptop")
        schema = store.health()["schema"]
    finally:
        store.close()
    shown = str(hub_db)
    if isinstance(hub_db, str):  # trust auth: a password is accepted, and must never be shown
        shown = hub_db.replace("postgresql://postgres@", "postgresql://postgres:s3cret@")
    result = CliRunner().invoke(cli, ["doctor", "--hub-db", shown, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["ok"] is True and report["schema"] == schema
    assert report["counts"]["memories"] == 1 and report["counts"]["hub_tokens"] == 1
    assert report["counts"]["audit"] == 0
    text = CliRunner().invoke(cli, ["doctor", "--hub-db", shown]).output
    assert text.splitlines()[0].endswith("  ok")
    assert f"schema {schema}; 1 memory" in text
    assert "s3cret" not in result.output + text
    if isinstance(hub_db, str):
        assert report["url"].startswith("postgresql://postgres@127.0.0.1:")
        assert "PostgreSQL 1" in text


def test_an_unreachable_hub_store_is_one_line_and_exit_1() -> None:
    result = _doctor("--hub-db", "postgresql://hub:s3cret@127.0.0.1:1/team")
    assert result.returncode == 1, result.stderr
    assert result.stdout.count("\n") == 1 and result.stderr == ""
    assert result.stdout.startswith(
        "Hub store  PROBLEM  Cannot reach the PostgreSQL store at postgresql://hub@127.0.0.1:1/team:"
    )
    assert "s3cret" not in result.stdout


def test_a_missing_hub_store_file_is_reported_and_not_created(tmp_path: Path) -> None:
    result = _doctor("--hub-db", str(tmp_path / "hub.db"), "--json")
    assert result.returncode == 7 and json.loads(result.stdout)["missing"] is True
    assert not (tmp_path / "hub.db").exists()


def test_a_database_without_a_store_is_reported_missing_and_left_untouched(pg_url: str) -> None:
    result = _doctor("--hub-db", pg_url)
    assert result.returncode == 7, result.stdout + result.stderr
    assert "no hub store here" in result.stdout
    assert rows_at(
        pg_url, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
    ) == [(0,)]


def test_doctor_on_an_empty_database_in_aletheia_hub_db_names_both_ways_to_start_a_store(
    pg_url: str, tmp_path: Path
) -> None:
    """docs/scale.md has an operator export ALETHEIA_HUB_DB for the hub: doctor told only
    "save something first", a local store's way, where a hub starts with mcp-link create."""
    result = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "doctor", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "ALETHEIA_HUB_DB": pg_url, "HOME": str(tmp_path)},
    )
    store = json.loads(result.stdout)["store"]
    assert store["missing"] is True and store["chosen_by"] == "ALETHEIA_HUB_DB"
    assert store["detail"] == (
        "the database has no store yet: aletheia mcp-link create starts one for a hub"
        " (aletheia-sync serves it); a save (aletheia save) starts one too, for the CLI and"
        " the tools that use it."
    )
    assert rows_at(
        pg_url, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()"
    ) == [(0,)]


def test_a_hub_url_is_shown_without_any_secret_it_carries_even_when_it_cannot_be_parsed() -> None:
    urls = [
        "postgresql://hub:s3cret@127.0.0.1:1/db",
        "postgresql://hub:s3cret@[::1/db",  # unparseable: shown as the scheme alone
        "postgresql://hub@h/db?password=s3cret",
        "postgresql://h/db?sslpassword=s3cret",
        "postgres://hub:s3cret@h:99999/db",
    ]
    shown = [display_target(url) for url in urls]
    assert not [text for text in shown if "s3cret" in text]
    assert shown[0] == "postgresql://hub@127.0.0.1:1/db"
    assert shown[1] == "postgresql://…"


def test_a_hub_store_missing_a_table_is_reported_damaged_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "hub.db"
    open_target(path).close()
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:  # `with conn` never closes
        conn.execute("DROP TABLE episodes")
    result = _doctor("--hub-db", str(path))
    assert result.returncode == 1, result.stderr
    assert result.stderr == "" and "Traceback" not in result.stdout
    assert "is damaged (no such table: episodes)" in result.stdout
