"""What an earlier build left in a store or on a hub, synced by today's: real hub processes
(SQLite and PostgreSQL stores), real stores, real ``aletheia sync`` runs.

- A list keyed again from its name and merged with the list of that name counts as merged.
- A list keyed again onto the key of another list the receiver holds stops no sync.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import data_dirs, items_at
from tests.hub.test_sync_e2e import run_sync
from tests.hub.test_sync_one_bad_record import _execute, _write_list

pytestmark = pytest.mark.e2e


def _lists(target: Path | str) -> dict[str, tuple[str, str, bool]]:
    """A store's lists: uid -> (title, dedupe key, dismissed)."""
    return {
        key: (data["title"], data["dedupe_key"], data["dismissed_at"] is not None)
        for (kind, key), data in items_at(target).items()
        if kind == "memory" and data["kind"] == "work_state"
    }


def test_a_list_keyed_again_and_merged_on_pull_counts_as_merged(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob, carol = data_dirs(tmp_path, "alice", "bob", "carol")
    _write_list(alice, "todo")
    _write_list(bob, "plan")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {folder: hub.token("sync", None, folder.name) for folder in (alice, bob, carol)}
        for folder in (alice, bob):
            done = run_sync(folder, "--hub", hub.url, "--token", tokens[folder])
            assert done.returncode == 0, done.stderr
        # bob's list as an earlier build's hub took it: named "todo", keyed "todo-old"
        _execute(
            hub_db,
            "UPDATE memories SET dedupe_key = 'todo-old', title = 'todo list'"
            " WHERE dedupe_key = 'list:plan'",
        )
        _write_list(alice, "todo")  # written again: the later version, sent after bob's
        done = run_sync(alice)
        assert done.returncode == 0, done.stderr
        done = run_sync(carol, "--hub", hub.url, "--token", tokens[carol], "--json")
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert (report["pulled"], report["applied"], report["merged"]) == (2, 1, 1)
        assert report["repaired"] == 1
    assert [(title, key) for title, key, _ in _lists(carol / "aletheia.db").values()] == [
        ("todo list", "list:todo")
    ]


def test_a_list_keyed_again_onto_another_lists_key_stops_no_sync(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob = data_dirs(tmp_path, "alice", "bob")
    _write_list(alice, "todo")
    _write_list(bob, "plan")
    old_key = (
        "UPDATE memories SET dedupe_key = 'todo-old', title = 'todo list'"
        " WHERE dedupe_key = 'list:plan'"
    )
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {folder: hub.token("sync", None, folder.name) for folder in (alice, bob)}
        for folder in (alice, bob, alice):
            done = run_sync(folder, "--hub", hub.url, "--token", tokens[folder])
            assert done.returncode == 0, done.stderr
        # every store and the hub hold bob's list as an earlier build kept it, beside
        # alice's "todo" list; bob dismisses his last
        _execute(alice / "aletheia.db", old_key)
        _execute(hub_db, old_key)
        _execute(
            bob / "aletheia.db",
            old_key,
            "UPDATE memories SET dismissed_at = updated_at + 1 WHERE dedupe_key = 'todo-old'",
        )
        for folder in (bob, alice):  # bob's push, then alice's pull, of the dismissal
            done = run_sync(folder)
            assert done.returncode == 0, done.stderr
            assert done.stdout.splitlines()[-1].startswith("Synced with"), done.stdout
        for folder in (bob, alice):  # and nothing goes back and forth after
            done = run_sync(folder, "--json")
            assert done.returncode == 0, done.stderr
            report = json.loads(done.stdout)
            assert (report["pushed"], report["pulled"]) == (0, 0), report
    for target in (hub_db, alice / "aletheia.db", bob / "aletheia.db"):
        assert sorted(_lists(target).values()) == [
            ("todo list", "list:todo", False),
            ("todo list", "todo-old", True),
        ], target
