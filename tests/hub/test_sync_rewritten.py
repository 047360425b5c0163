"""A record the hub changes as it checks a push (a blank title given its default, a secret an
earlier release kept, redacted) is kept with a version of the hub's own, so it comes back to
the sender: sender, hub and a teammate end the same (their ``aletheia export``), and a second
sync changes nothing. Real hub processes (SQLite and PostgreSQL stores), real ``aletheia``
processes; the sender's rows written as an earlier release kept them, by SQL."""

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

from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import data_dirs, items_at

pytestmark = pytest.mark.e2e
SECRET = "ghp_" + "Zq8RkT2mWx4Yb7Lc9Np3Hd6Fg1Js5Kv0Qa7Xe9"


def _aletheia(env: dict[str, str], *args: str) -> str:
    base = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        env={**base, "NO_COLOR": "1", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def _at(data_dir: Path, *args: str) -> str:
    return _aletheia({"ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir)}, *args)


def _exported(stdout: str) -> dict[str, Any]:
    """An export's items by global id, without what each store numbers its own way."""
    found: dict[str, Any] = {}
    for line in stdout.splitlines():
        record = json.loads(line)
        if record["type"] == "memory":
            data = {key: value for key, value in record["data"].items() if key != "id"}
            found[data["uid"]] = {**data, "changed_at": record["changed_at"]}
    return found


def _sync(data_dir: Path, *args: str) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(_at(data_dir, "sync", "--json", *args))
    return answer


def test_what_the_hub_changes_of_a_push_comes_back_to_the_sender(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob = data_dirs(tmp_path, "alice", "bob")
    _at(alice, "save", "Staging deploys need the VPN", "-p", "shop")
    _at(alice, "save", "Deploys use the bot account", "-p", "shop")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {name: hub.token("sync", None, name) for name in ("alice", "bob")}
        # the first sync gives both notes the token's author ("alice/cli"), which comes back
        _sync(alice, "--hub", hub.url, "--token", tokens["alice"])
        # as an earlier release kept them
        with closing(sqlite3.connect(alice / "aletheia.db")) as conn, conn:
            conn.execute("UPDATE memories SET title = '  ' WHERE text LIKE 'Staging%'")
            conn.execute(
                "UPDATE memories SET text = ? WHERE text LIKE 'Deploys%'",
                (f"Deploys use the bot account {SECRET}",),
            )
        sent = _sync(alice)
        assert (sent["pushed"], sent["pulled"]) == (2, 2)  # both changed at the hub, both back
        _sync(bob, "--hub", hub.url, "--token", tokens["bob"])

        mine, theirs = _exported(_at(alice, "export")), _exported(_at(bob, "export"))
        assert mine == theirs
        titles = sorted(data["title"] for data in mine.values())
        assert titles[1] == "Staging deploys need the VPN"
        assert all(SECRET not in json.dumps(data) for data in mine.values())
        held = items_at(hub_db)
        assert {key: data["title"] for (_, key), data in held.items()} == {
            uid: data["title"] for uid, data in mine.items()
        }
        assert {key: data["text"] for (_, key), data in held.items()} == {
            uid: data["text"] for uid, data in mine.items()
        }
        if isinstance(hub_db, Path):  # a SQLite hub exports as a store does
            assert _exported(_aletheia({"ALETHEIA_HUB_DB": str(hub_db)}, "export")) == mine

        for data_dir in (alice, bob):  # no ping-pong: nothing left to send either way
            again = _sync(data_dir)
            assert (again["pushed"], again["pulled"]) == (0, 0), (data_dir.name, again)
        assert _exported(_at(alice, "export")) == mine == _exported(_at(bob, "export"))
