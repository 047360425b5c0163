"""A store recovered from an old export (README: "move the file away and `aletheia import` your
last export") and synced again: its items keep the versions they had, so a teammate's later
changes on the hub stay, everywhere, and a new empty hub still gets every item. Real hub
processes, real SQLite stores, real ``aletheia`` runs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.hub.helpers import Hub, running_hub
from tests.hub.sync_helpers import items_at

pytestmark = [pytest.mark.e2e]
RULE = "r_b51f7a9115"  # "Use the VPN", a project rule of proj3
ONLY = ("proj3",)


def cli(data_dir: Path, *args: str) -> Any:
    """``aletheia ARGS --json`` on ``data_dir``'s store; its JSON answer."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args, "--json"],
        env={**env, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout) if done.stdout.strip() else None


def sync(data_dir: Path, hub: Hub | None = None, token: str | None = None) -> Any:
    extra = () if hub is None or token is None else ("--hub", hub.url, "--token", token)
    return cli(data_dir, "sync", *extra)


def state(data_dir: Path) -> tuple[Any, Any, Any]:
    """What the teammate changed: the note's dismissal, the list's items, the rule's switch."""
    (note,) = cli(data_dir, "show", _note_id(data_dir))
    todo = cli(data_dir, "lists", "read", "todo", "-p", "proj3")
    rule = next(rule for rule in cli(data_dir, "rules", "list", "--all") if rule["id"] == RULE)
    return note["dismissed_at"] is not None, todo, rule["enabled"]


def _note_id(data_dir: Path) -> str:
    """The note's ``#N`` on this store (each store numbers its own)."""
    with closing(sqlite3.connect(f"file:{data_dir / 'aletheia.db'}?mode=ro", uri=True)) as conn:
        return str(conn.execute("SELECT id FROM memories WHERE kind = 'note'").fetchone()[0])


def _start(p: Path, q: Path, hub: Hub) -> tuple[str, str]:
    """P saves a pinned note, a list and a rule; both sync; tokens of P and Q."""
    cli(p, "save", "Staging needs VPN", "-p", "proj3", "--pin")
    cli(p, "lists", "write", "todo", "a", "b", "-p", "proj3")
    cli(p, "rules", "add", "Use the VPN", "--scope-tier", "project", "--scope-name", "proj3")
    t1, t2 = hub.token("sync", ONLY, "p"), hub.token("sync", ONLY, "q")
    sync(p, hub, t1)
    sync(q, hub, t2)
    return t1, t2


def _teammate_changes(q: Path) -> None:
    cli(q, "dismiss", _note_id(q), "--reason", "obsolete")
    cli(q, "lists", "write", "todo", "a", "b", "c", "-p", "proj3")
    cli(q, "rules", "disable", RULE)


def _recover(data_dir: Path, export: Path) -> None:
    """The store broke: moved away, and the last export imported, as the README says."""
    for name in ("aletheia.db", "aletheia.db-wal", "aletheia.db-shm"):
        if (data_dir / name).exists():
            (data_dir / name).rename(data_dir / f"{name}.broken")
    cli(data_dir, "import", str(export))


def _without_versions(export: Path) -> Path:
    """The export as a release before versions wrote it."""
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    old = export.with_name("older.jsonl")
    old.write_text("".join(json.dumps({k: v for k, v in line.items() if k != "changed_at"}) + "\n"
                           for line in lines))  # fmt: skip
    return old


@pytest.mark.parametrize("versions", [True, False], ids=["export", "older-export"])
def test_an_old_export_imported_and_synced_keeps_a_teammates_later_changes(
    tmp_path: Path, hub_db: Path | str, versions: bool
) -> None:
    p, q = tmp_path / "p", tmp_path / "q"
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        t1, _ = _start(p, q, hub)
        export = tmp_path / "old.jsonl"
        cli(p, "export", "-o", str(export))
        _teammate_changes(q)
        sync(q)
        sync(p)
        changed = (True, ["a", "b", "c"], False)
        assert state(p) == state(q) == changed
        _recover(p, export if versions else _without_versions(export))
        assert state(p) == (False, ["a", "b"], True)  # as exported
        report = sync(p, hub, t1)
        assert report["pushed"] == 3  # a first sync with this new store: every item
        assert report["applied"] == 3  # and the teammate's later versions come back
        sync(q)
        assert state(q) == changed
        assert state(p) == changed
        assert items_at(p / "aletheia.db") == items_at(q / "aletheia.db") == items_at(hub_db)


def test_an_old_export_imported_on_a_new_machine_with_a_new_token(
    tmp_path: Path, hub_db: Path | str
) -> None:
    p, q, new = tmp_path / "p", tmp_path / "q", tmp_path / "new"
    new.mkdir()
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        _start(p, q, hub)
        export = tmp_path / "old.jsonl"
        cli(p, "export", "-o", str(export))
        _teammate_changes(q)
        sync(q)
        cli(new, "import", str(export))
        sync(new, hub, hub.token("sync", ONLY, "new"))
        sync(q)
        sync(p)
        changed = (True, ["a", "b", "c"], False)
        assert state(new) == state(q) == state(p) == changed


def test_a_new_empty_hub_gets_every_imported_item(tmp_path: Path, hub_db: Path | str) -> None:
    p, q = tmp_path / "p", tmp_path / "q"
    with running_hub(tmp_path / "first-hub.db", "--rate-limit", "0") as hub:
        _start(p, q, hub)
        _teammate_changes(q)
        sync(q)
        sync(p)
    export = tmp_path / "last.jsonl"
    cli(p, "export", "-o", str(export))
    _recover(p, export)
    with running_hub(hub_db, "--rate-limit", "0") as hub:  # the team's new, empty hub
        report = sync(p, hub, hub.token("sync", ONLY, "p"))
        assert report["pushed"] == 3
        held = items_at(p / "aletheia.db")
        assert items_at(hub_db) == held
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        assert sync(fresh, hub, hub.token("sync", ONLY, "fresh"))["pulled"] == 3
    assert state(fresh) == (True, ["a", "b", "c"], False)
    assert items_at(fresh / "aletheia.db") == held


def test_an_export_carries_each_items_version_and_an_import_keeps_it(tmp_path: Path) -> None:
    p = tmp_path / "p"
    cli(p, "save", "Staging needs VPN", "-p", "proj3")
    cli(p, "rules", "add", "Use the VPN", "--scope-tier", "project", "--scope-name", "proj3")
    first, again = tmp_path / "first.jsonl", tmp_path / "again.jsonl"
    cli(p, "export", "-o", str(first))
    copy = tmp_path / "copy"
    cli(copy, "import", str(first))
    cli(copy, "export", "-o", str(again))
    assert again.read_text() == first.read_text()  # the round trip, versions too
    versions = [json.loads(line).get("changed_at") for line in first.read_text().splitlines()]
    assert all(version is not None for version in versions[1:])
