"""One record this build refuses stops no team's sync: real hub processes (SQLite and
PostgreSQL), real stores, real ``aletheia sync``, ``export`` and ``import`` runs.

An earlier build took records today's validation refuses (a list keyed ``todo-old``, a note of
project ``*``, a blank text); one of them on the hub stopped every store's pull for good, and
one in a store stopped its every push and its import elsewhere.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import worklists
from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import items_at
from tests.hub.test_sync_bad_input import aletheia
from tests.hub.test_sync_e2e import open_store, run_sync, save_notes

pytestmark = pytest.mark.e2e


@pytest.fixture(params=["sqlite", "postgres"])
def hub_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The hub's store: a SQLite file, or a PostgreSQL schema's URL."""
    if request.param == "sqlite":
        return tmp_path / "hub.db"
    return str(request.getfixturevalue("pg_url"))


def _execute(db: Path | str, *statements: str) -> None:
    """Change a store's rows behind its back, as an earlier build could have left them."""
    if isinstance(db, Path):
        with closing(sqlite3.connect(db)) as conn, conn:
            for statement in statements:
                conn.execute(statement)
        conn.close()
        return
    import psycopg

    with psycopg.connect(db, autocommit=True) as pg:
        for statement in statements:
            pg.execute(statement)


def _write_list(data_dir: Path, name: str) -> None:
    store = open_store(data_dir)
    try:
        worklists.write_list(store, system_clock, project="shop", name=name, items=["x"], tool="t")
    finally:
        store.close()


def _notes(data_dir: Path) -> dict[str, dict[str, object]]:
    """A store's memories by text (a list by its title)."""
    found = items_at(data_dir / "aletheia.db")
    return {
        str(data["text"] if data["kind"] != "work_state" else data["title"]): data
        for (kind, _), data in found.items()
        if kind == "memory"
    }


def test_a_record_on_the_hub_a_store_refuses_is_held_back_and_later_notes_still_arrive(
    tmp_path: Path, hub_db: Path | str
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    save_notes(a, ["Deploys need the VPN", "Staging is on Fridays"])
    _write_list(a, "todo")
    b.mkdir()
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {folder: hub.token("sync", None, folder.name) for folder in (a, b)}
        for folder in (a, b):
            done = run_sync(folder, "--hub", hub.url, "--token", tokens[folder])
            assert done.returncode == 0, done.stderr
        _execute(
            hub_db,
            "UPDATE memories SET dedupe_key = 'todo-old' WHERE kind = 'work_state'",
            "UPDATE memories SET project = '*' WHERE text = 'Staging is on Fridays'",
        )
        save_notes(b, ["Saved on b after the hub took them"])
        done = run_sync(b)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0].startswith("Held back 1 pulled record(s) this store refuses"), lines
        assert 'project must not be "*", which means every project.' in lines[0]
        assert lines[1].startswith("Keyed 1 list(s) again from their name"), lines
        assert lines[-1].startswith(f"Synced with {hub.url}"), lines
        done = run_sync(a, "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        (held,) = report["refused_pulled"]
        assert held["reason"] == 'project must not be "*", which means every project.'
        assert held["count"] == 1 and held["first"].startswith("memory ")
        assert report["repaired"] == 1
        again = json.loads(run_sync(a, "--json").stdout)  # the cursor moved past it
        assert (again["refused_pulled"], again["pulled"]) == ([], 0)
    notes = _notes(a)
    assert "Saved on b after the hub took them" in notes
    assert notes["Staging is on Fridays"]["project"] == "shop"  # not applied
    assert notes["todo list"]["dedupe_key"] == "list:todo"


def test_an_item_the_hub_would_refuse_is_left_out_and_the_rest_pushed_and_imported(
    tmp_path: Path, hub_db: Path | str
) -> None:
    a, c = tmp_path / "a", tmp_path / "c"
    save_notes(a, ["A note an earlier build blanked", "A note that is fine"])
    _write_list(a, "plan")
    _execute(
        a / "aletheia.db",
        "UPDATE memories SET text = '' WHERE text = 'A note an earlier build blanked'",
        "UPDATE memories SET dedupe_key = 'plan-old' WHERE kind = 'work_state'",
    )
    exported = aletheia(a, "export")
    assert exported.returncode == 0, exported.stderr
    (c / "export.jsonl").parent.mkdir()
    (c / "export.jsonl").write_text(exported.stdout, encoding="utf-8")
    imported = aletheia(c, "import", str(c / "export.jsonl"))
    assert imported.returncode == 0, imported.stderr
    repair, last = imported.stdout.splitlines()
    assert repair.startswith("Line ") and 'imported as "list:plan"' in repair, repair
    assert last.startswith("Imported ")
    assert _notes(c)["plan list"]["dedupe_key"] == "list:plan"
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        done = run_sync(a, "--hub", hub.url, "--token", hub.token("sync", None, "a"), "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["pushed"] == 2
        (left,) = report["left_out"]
        assert (left["reason"], left["count"]) == ("text is required.", 1)
        assert report["repaired"] == 1
        done = run_sync(a)  # nothing held back again: the push cursor moved past it
        assert done.returncode == 0 and done.stdout.startswith("Synced with"), done.stdout
    held = {data["title"]: data for (_, _), data in items_at(hub_db).items() if "title" in data}
    assert held["plan list"]["dedupe_key"] == "list:plan"
    assert "A note that is fine" in held
    assert "A note an earlier build blanked" not in held
    # the hub's version of the list (authored "a/t") came back: this store's key is mended too
    assert _notes(a)["plan list"]["dedupe_key"] == "list:plan"
