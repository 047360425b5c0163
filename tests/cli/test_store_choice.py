"""The CLI opens the store ``ALETHEIA_HUB_DB`` names instead of the data folder's (DESIGN §3),
and says so where it matters: ``doctor``, ``sync``, ``export``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aletheia_mem.config import load_settings
from aletheia_mem.storage.sqlite import SqliteStore
from tests.cli.conftest import Invoke, Workspace, json_of

NO_EXTRA = (
    "Error: A postgresql:// hub needs the postgres extra:"
    " pipx install 'aletheia-mem[postgres]' (or pip install 'aletheia-mem[postgres]').\n"
)


def test_aletheia_hub_db_wins_over_the_data_dir_and_a_blank_one_does_not(tmp_path: Path) -> None:
    data = {"ALETHEIA_DATA_DIR": str(tmp_path / "data")}
    named = load_settings({**data, "ALETHEIA_HUB_DB": f" {tmp_path / 'hub.db'} "})
    assert (named.store, named.store_variable) == (tmp_path / "hub.db", "ALETHEIA_HUB_DB")
    assert named.data_dir == tmp_path / "data"
    url = "postgresql://u@h:5432/db?options=-csearch_path%3Ds"
    assert load_settings({**data, "ALETHEIA_HUB_DB": url}).store == url
    blank = load_settings({**data, "ALETHEIA_HUB_DB": "  "})
    assert (blank.store, blank.store_variable) == (
        tmp_path / "data" / "aletheia.db",
        "ALETHEIA_DATA_DIR",
    )


def test_save_and_search_use_the_sqlite_file_aletheia_hub_db_names(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "team" / "shared.db"
    monkeypatch.setenv("ALETHEIA_HUB_DB", str(store))
    assert run("save", "Use pnpm, not npm").stdout == "Saved as #1 in shop.\n"
    assert "Use pnpm, not npm" in run("search", "pnpm").stdout
    opened = SqliteStore(store)
    try:
        assert [m.text for m in opened.get_memories([1])] == ["Use pnpm, not npm"]
    finally:
        opened.close()
    assert not workspace.data_dir.exists()


def test_a_read_command_on_a_missing_store_file_names_aletheia_hub_db(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "nowhere.db"
    monkeypatch.setenv("ALETHEIA_HUB_DB", str(store))
    result = run("search", "pnpm")
    assert result.exit_code == 7
    assert f'No store at {store}: ALETHEIA_HUB_DB is "{store}"; check it' in result.stderr
    assert not store.exists()


def test_doctor_reports_the_store_aletheia_hub_db_chose(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert json_of(run("doctor", "--json"))["store"]["chosen_by"] == "default"
    monkeypatch.setenv("ALETHEIA_DATA_DIR", "  ")  # blank: the default folder still
    assert json_of(run("doctor", "--json"))["store"]["chosen_by"] == "default"
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "data"))
    assert json_of(run("doctor", "--json"))["store"]["chosen_by"] == "ALETHEIA_DATA_DIR"
    store = tmp_path / "shared.db"
    monkeypatch.setenv("ALETHEIA_HUB_DB", str(store))
    run("save", "a first memory")
    assert run("doctor").stdout.splitlines()[0] == f"Store  {store} (from ALETHEIA_HUB_DB)  ok"
    report = json_of(run("doctor", "--json"))["store"]
    assert (report["path"], report["chosen_by"], report["ok"]) == (
        str(store),
        "ALETHEIA_HUB_DB",
        True,
    )


def test_sync_uses_the_file_aletheia_hub_db_names(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "shared.db"
    monkeypatch.setenv("ALETHEIA_HUB_DB", str(store))
    missing = run("sync")  # no hub can be remembered in a store not made yet: none is made
    assert missing.exit_code == 7
    assert missing.stderr.startswith(f'Error: No store at {store}: ALETHEIA_HUB_DB is "{store}"')
    assert not store.exists()
    assert run("save", "a note").exit_code == 0
    result = run("sync")
    assert result.exit_code == 2 and "No hub yet" in result.stderr
    assert store.is_file() and not workspace.data_dir.exists()


def test_the_postgresql_store_serves_save_search_and_doctor_and_refuses_sync_and_export(
    run: Invoke, workspace: Workspace, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALETHEIA_HUB_DB", pg_url)
    assert run("save", "Use pnpm, not npm").stdout == "Saved as #1 in shop.\n"
    assert "Use pnpm, not npm" in run("search", "pnpm").stdout
    doctor = run("doctor")
    assert doctor.exit_code == 0 and doctor.stdout.splitlines()[1].startswith("  PostgreSQL ")
    assert "(from ALETHEIA_HUB_DB)  ok" in doctor.stdout.splitlines()[0]
    synced = run("sync", "--hub", "http://127.0.0.1:1", "--token", "alt_x")
    assert synced.exit_code == 2
    assert "ALETHEIA_HUB_DB names a PostgreSQL database" in synced.stderr
    exported = run("export")
    assert exported.exit_code == 2 and "back it up with pg_dump" in exported.stderr
    assert not workspace.data_dir.exists()


@pytest.mark.parametrize("command", [["export"], ["import", "-"]], ids=" ".join)
def test_export_and_import_refuse_a_postgresql_store_without_connecting_to_it(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("ALETHEIA_HUB_DB", "postgresql://nobody@127.0.0.1:1/nodb")  # no server
    refused = run(*command, input="")
    assert (refused.exit_code, refused.stderr) == (
        2,
        "Error: Export and import copy a SQLite store; ALETHEIA_HUB_DB names a PostgreSQL"
        " database: back it up with pg_dump instead.\n",
    )
    assert not workspace.data_dir.exists()


def test_doctor_on_a_postgresql_store_gives_its_server_version_not_an_unknown_sqlite(
    run: Invoke, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALETHEIA_HUB_DB", pg_url)
    run("save", "Use pnpm, not npm")
    versions = json_of(run("doctor", "--json"))["versions"]
    assert "sqlite" not in versions
    assert versions["postgresql"].replace(".", "").isdigit()
    line = next(text for text in run("doctor").stdout.splitlines() if text.startswith("Versions"))
    assert "sqlite ?" not in line and f"postgresql {versions['postgresql']}" in line


def test_a_postgresql_url_without_the_postgres_extra_is_one_line(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aletheia_mem.storage.postgres.store", None)  # not installed
    monkeypatch.setenv("ALETHEIA_HUB_DB", "postgresql://postgres@127.0.0.1:5432/none")
    result = run("save", "anything")
    assert (result.exit_code, result.stderr) == (1, NO_EXTRA)
    assert not workspace.data_dir.exists()


@pytest.mark.parametrize("command", [("mcp-link", "list"), ("audit",), ("save", "anything")])
def test_a_missing_postgres_extra_exits_1_whatever_the_command_as_aletheia_sync_does(
    run: Invoke, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.setitem(sys.modules, "aletheia_mem.storage.postgres.store", None)  # not installed
    monkeypatch.setitem(sys.modules, "aletheia_mem.storage.postgres.database", None)
    monkeypatch.setenv("ALETHEIA_HUB_DB", "postgresql://postgres@127.0.0.1:5432/none")
    result = run(*command)
    assert (result.exit_code, result.stderr) == (1, NO_EXTRA)
