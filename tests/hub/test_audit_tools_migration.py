"""Audit rows an earlier release wrote with a secret as the tool name (a call to an unknown
tool named ``ghp_...``) are redacted by a migration, as every row is now when it is written:
``aletheia audit`` no longer shows the secret. Both stores, real files and schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from aletheia_mem.storage import migrate
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.postgres import database as pg_database
from tests.stores import open_target, rows_at, run_at

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
OTHER = (
    "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"
)


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for name in ("ALETHEIA_HUB_DB", "ALETHEIA_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return CliRunner()


def _step(target: Path | str) -> int:
    return migrate.AUDIT_TOOLS_STEP if isinstance(target, Path) else pg_database.AUDIT_TOOLS_STEP


def _as_before_the_step(target: Path | str) -> None:
    """Forget the step, as a store an earlier release migrated (its user_version too)."""
    run_at(target, "DELETE FROM schema_migrations WHERE version = ?", _step(target))
    if isinstance(target, Path):
        run_at(target, f"PRAGMA user_version = {_step(target) - 1}")


def _audit(runner: CliRunner, target: Path | str) -> str:
    shown = runner.invoke(cli, ["audit", "--hub-db", str(target), "--json"])
    assert shown.exit_code == 0, shown.output
    return shown.output


def test_a_secret_kept_as_a_tool_name_by_an_earlier_release_is_redacted(
    runner: CliRunner, hub_db: Path | str
) -> None:
    store = open_target(hub_db)
    try:
        rows = [
            AuditEntry(1_000, "laptop", SECRET, None, "error"),  # an unknown tool, as sent
            AuditEntry(2_000, "laptop", f"x-{OTHER}", None, "refused", "404 Not Found"),
            AuditEntry(3_000, "laptop", SECRET, None, "error"),
            AuditEntry(4_000, "ci", "search", "shop", "ok"),
            AuditEntry(5_000, "anonymous", "auth", None, "refused", "no token"),
        ]
        for row in rows:
            store.add_audit(row)
    finally:
        store.close()
    _as_before_the_step(hub_db)
    before = rows_at(hub_db, "SELECT tool FROM audit ORDER BY at")
    assert before[0] == (SECRET,)

    open_target(hub_db).close()  # the new code opens it: the step runs

    shown = _audit(runner, hub_db)
    assert SECRET not in shown and OTHER not in shown
    tools = [row["tool"] for row in json.loads(shown)]
    assert tools == ["auth", "search", "[REDACTED]", "x-[REDACTED]", "[REDACTED]"]
    details = rows_at(hub_db, "SELECT actor, project, result, detail FROM audit ORDER BY at")
    assert details == [(r.actor, r.project, r.result, r.detail) for r in rows]
    # Once only: opened again, nothing more is done, and the step is recorded once.
    open_target(hub_db).close()
    assert [row["tool"] for row in json.loads(_audit(runner, hub_db))] == tools
    recorded = "SELECT count(*) FROM schema_migrations WHERE version = ?"
    assert rows_at(hub_db, recorded, _step(hub_db)) == [(1,)]
