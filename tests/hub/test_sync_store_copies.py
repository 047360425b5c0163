"""A copied data folder, or a store restored from a file backup, gets its own changes back.

A store's sync id lives in its file, and a hub leaves a store's own versions out of its pulls:
before a sync, a store that is not the file its id was made for takes a new id. Real
``aletheia-sync`` (a SQLite hub; PostgreSQL too for a copy), real data folders copied with
``shutil.copytree``, real ``aletheia`` processes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import facts, rules, worklists
from aletheia_mem.storage.sqlite import SqliteStore
from tests.hub.helpers import running_hub

pytestmark = pytest.mark.e2e
SECONDS = 60
RENEWED = "This store now syncs as a new store"
LOCAL_REFERENCES = (
    ("superseded_by", "fact"),
    ("memory_id", "memory"),
    ("evidence_memory_ids", "memory"),
    ("evidence_fact_ids", "fact"),
    ("episode_id", "episode"),
)


def aletheia(data_dir: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        env={**env, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def shared_export(data_dir: Path) -> list[str]:
    """``aletheia export`` without the audit trail (it stays on each machine), its local ids
    (``#N``, each store's own) given as the global ids they stand for, in a sorted order."""
    lines = [json.loads(line) for line in aletheia(data_dir, "export").splitlines() if line]
    lines = [line for line in lines if line["type"] not in ("header", "audit")]
    uids = {
        (line["type"], line["data"]["id"]): line["data"]["uid"]
        for line in lines
        if line["type"] in ("memory", "fact", "episode")
    }
    for line in lines:
        data = line["data"]
        for field, kind in LOCAL_REFERENCES:
            value = data.get(field)
            if isinstance(value, list):
                data[field] = sorted(uids[(kind, one)] for one in value)
            elif value is not None and field in data:
                data[field] = uids[(kind, value)]
        if line["type"] in ("memory", "fact", "episode", "request"):
            del data["id"]
    return sorted(json.dumps(line, sort_keys=True) for line in lines)


def store_id(data_dir: Path) -> str:
    store = SqliteStore(data_dir / "aletheia.db")
    try:
        return store.sync_store_id()
    finally:
        store.close()


def fill(data_dir: Path, word: str) -> None:
    """A fact's new value, a rule citing the first note, a list, an episode with a request."""
    store = SqliteStore(data_dir / "aletheia.db")
    now = system_clock()
    try:
        facts.record_fact(
            store, project="shop", subject="db", predicate="is", object=word,
            valid_from=None, source="t", now=now,
        )  # fmt: skip
        rule = rules.RuleInput(f"Say {word}", "you commit", "everywhere", "", [1], [], "t")
        rules.add_rule(store, rule, now)
        worklists.write_list(
            store, system_clock, project="shop", name="todo", items=[word], tool="t"
        )
        episode = store.start_episode("shop", "codex", now)
        store.add_request(episode, f"ship {word}", now)
    finally:
        store.close()


def rounds(dirs: list[Path], times: int = 2) -> list[str]:
    return [aletheia(folder, "sync") for _ in range(times) for folder in dirs]


@pytest.fixture(params=["sqlite", "postgres"])
def hub_db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """The hub's store: a SQLite file, or a PostgreSQL schema's URL (the client's logic is
    the same; the hub's claim of the new id is each database's own)."""
    if request.param == "sqlite":
        return tmp_path / "hub.db"
    return str(request.getfixturevalue("pg_url"))


def test_a_copied_data_folder_syncs_as_a_store_of_its_own(
    tmp_path: Path, hub_db: Path | str
) -> None:
    a, b, c = (tmp_path / name for name in ("s-a", "s-b", "s-c"))
    aletheia(a, "save", "-p", "shop", "Staging needs the VPN")
    aletheia(a, "save", "-p", "shop", "Deploys go out on Tuesdays")
    fill(a, "sqlite")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        aletheia(a, "sync", "--hub", hub.url, "--token", token)
        aletheia(b, "sync", "--hub", hub.url, "--token", token)
        shutil.copytree(a, c, symlinks=True)  # ``cp -a s-a s-c``: a new laptop, say
        aletheia(c, "dismiss", "1")
        aletheia(c, "rules", "disable", rules.rule_id("Say sqlite", "you commit", "everywhere", ""))
        fill(c, "postgres")  # the fact superseded, the list replaced, one more of each else
        fill(a, "mysql")  # the original goes on too
        said = aletheia(c, "sync", "--json")
        renewed = json.loads(said)["new_store_id"]
        assert renewed["old"] == store_id(a) and renewed["new"] == store_id(c) != store_id(a)
        assert "another file" in renewed["why"]
        outputs = rounds([a, b, c])
    assert not any(RENEWED in output for output in outputs)  # once only; the original keeps
    exports = [shared_export(folder) for folder in (a, b, c)]
    assert exports[0] == exports[1] == exports[2]
    lines = [json.loads(line) for line in exports[0]]
    notes = {line["data"]["text"]: line["data"] for line in lines if line["type"] == "memory"}
    assert notes["Staging needs the VPN"]["dismissed_at"] is not None
    assert notes["Deploys go out on Tuesdays"]["dismissed_at"] is None
    enabled = {
        line["data"]["then_text"]: line["data"]["enabled"]
        for line in lines
        if line["type"] == "rule"
    }
    assert enabled == {"Say sqlite": 0, "Say postgres": 1, "Say mysql": 1}
    kinds = [line["type"] for line in lines]  # none doubled
    assert (kinds.count("episode"), kinds.count("request"), kinds.count("fact")) == (3, 3, 3)


def test_a_store_restored_from_a_file_backup_gets_its_later_changes_back(tmp_path: Path) -> None:
    a, b, backup = (tmp_path / name for name in ("s-a", "s-b", "s-bk"))
    aletheia(b, "rules", "add", "Run the tests before each commit")
    rule_id = json.loads(aletheia(b, "rules", "list", "--json"))[0]["id"]
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        aletheia(b, "sync", "--hub", hub.url, "--token", token)
        aletheia(a, "sync", "--hub", hub.url, "--token", token)
        shutil.copytree(b, backup, symlinks=True)
        aletheia(b, "rules", "disable", rule_id)
        aletheia(b, "sync")
        shutil.rmtree(b)
        shutil.copytree(backup, b, symlinks=True)  # the backup restored in its place
        said = aletheia(b, "sync")
        assert said.startswith(RENEWED) and "another file" in said.splitlines()[0]
        rounds([a, b])
    exports = [shared_export(folder) for folder in (a, b)]
    assert exports[0] == exports[1]
    assert ['"enabled": 0' in line for line in exports[0] if '"type": "rule"' in line] == [True]


def test_an_imported_store_has_an_id_of_its_own_and_a_new_one_comes_when_asked(
    tmp_path: Path,
) -> None:
    a, d = tmp_path / "s-a", tmp_path / "s-d"
    aletheia(a, "save", "-p", "shop", "Staging needs the VPN")
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        aletheia(a, "sync", "--hub", hub.url, "--token", token)
        aletheia(a, "export", "--output", str(tmp_path / "a.jsonl"))
        aletheia(d, "import", str(tmp_path / "a.jsonl"))
        assert store_id(d) != store_id(a)  # a new store, made by the import
        assert RENEWED not in aletheia(d, "sync", "--hub", hub.url, "--token", token)
        before = store_id(d)
        renewed = json.loads(aletheia(d, "sync", "--new-store-id", "--json"))["new_store_id"]
        assert (renewed["old"], renewed["new"]) == (before, store_id(d))
        assert renewed["why"] == "asked for with --new-store-id"
        aletheia(d, "dismiss", "1")
        outputs = rounds([d, a])
    assert not any(RENEWED in output for output in outputs)
    assert shared_export(a) == shared_export(d)


def test_a_store_of_an_earlier_release_keeps_its_id_and_a_moved_store_takes_a_new_one(
    tmp_path: Path,
) -> None:
    a, moved = tmp_path / "s-a", tmp_path / "elsewhere"
    aletheia(a, "save", "-p", "shop", "Staging needs the VPN")
    with closing(sqlite3.connect(a / "aletheia.db")) as conn, conn:  # as an earlier release left it
        conn.execute("DELETE FROM sync_home")
    first = store_id(a)
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("sync", None, "team")
        assert RENEWED not in aletheia(a, "sync", "--hub", hub.url, "--token", token)
        assert store_id(a) == first
        os.rename(a, moved)  # the same file, at another path
        said = aletheia(moved, "sync").splitlines()[0]
    assert said.startswith(RENEWED) and f"moved or copied from {a / 'aletheia.db'}" in said
    assert store_id(moved) != first


def test_two_syncs_of_a_copy_at_once_give_it_one_new_id(tmp_path: Path) -> None:
    a, c = tmp_path / "s-a", tmp_path / "s-c"
    aletheia(a, "save", "-p", "shop", "Staging needs the VPN")
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        aletheia(a, "sync", "--hub", hub.url, "--token", hub.token("sync", None, "team"))
        shutil.copytree(a, c, symlinks=True)
        env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
        running = [
            subprocess.Popen(
                [sys.executable, "-m", "aletheia_mem", "sync", "--json"],
                env={**env, "ALETHEIA_DATA_DIR": str(c), "HOME": str(c)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        said = [process.communicate(timeout=SECONDS) for process in running]
    assert [process.returncode for process in running] == [0, 0], said
    renewed = [json.loads(out)["new_store_id"] for out, _ in said]
    assert [one is None for one in renewed].count(True) == 1, renewed
    assert next(one for one in renewed if one)["new"] == store_id(c) != store_id(a)
