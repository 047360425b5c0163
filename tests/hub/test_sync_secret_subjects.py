"""Facts that an earlier release stored with a secret in their subject: the hub redacts each as
it takes it, so two that differ only by the secret land on one subject. Each sync went on
crashing in the pull (a timeline the fact left, empty, was tiled: ``retile_key``); it now merges
them into one timeline. Real ``aletheia`` and hub processes, the raw rows written with sqlite3 as
the older release left them."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import data_dirs
from tests.hub.test_hub_processes import cli
from tests.hub.test_sync_e2e import run_sync
from tests.stores import held_at

pytestmark = pytest.mark.e2e
FIRST = "Zk9fQ2x8" + "LmP4rT7w"
SECOND = "Yq8wB3n6" + "Hs1vD5cJ"


def _raw_subjects(data_dir: Path) -> None:
    """The two facts as a release that redacted less kept them: each its own open timeline."""
    with closing(sqlite3.connect(data_dir / "aletheia.db")) as conn, conn:
        ids = [row[0] for row in conn.execute("SELECT id FROM facts ORDER BY id")]
        for fact_id, secret in zip(ids, (FIRST, SECOND), strict=True):
            subject = f"svc token={secret}"
            conn.execute(
                "UPDATE facts SET subject = ?, subject_key = ?, valid_to = NULL,"
                " superseded_by = NULL WHERE id = ?",
                (subject, subject.lower(), fact_id),
            )


def _facts(data_dir: Path) -> list[tuple[str, str, bool]]:
    with closing(sqlite3.connect(data_dir / "aletheia.db")) as conn, conn:
        rows = conn.execute(
            "SELECT subject, object, valid_to IS NULL FROM facts ORDER BY valid_from, recorded_at"
        )
        return [(subject, obj, bool(open_)) for subject, obj, open_ in rows]


def test_two_facts_that_differ_only_by_a_secret_merge_and_every_sync_goes_on(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob = data_dirs(tmp_path, "alice", "bob")
    for secret, obj in ((FIRST, "postgres"), (SECOND, "mysql")):
        added = cli(alice, "facts", "add", f"svc token={secret}", "uses", obj, "-p", "shop")
        assert added.returncode == 0, added.stderr
    _raw_subjects(alice)
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {name: hub.token("sync", None, name) for name in ("alice", "bob")}
        for _ in range(2):  # the first sync, and every one after it
            synced = run_sync(alice, "--hub", hub.url, "--token", tokens["alice"])
            assert synced.returncode == 0, synced.stderr
            assert "Traceback" not in synced.stderr
        pulled = run_sync(bob, "--hub", hub.url, "--token", tokens["bob"])
        assert pulled.returncode == 0, pulled.stderr
    merged = [
        ("svc token=[REDACTED]", "postgres", False),
        ("svc token=[REDACTED]", "mysql", True),
    ]
    assert _facts(alice) == merged
    assert _facts(bob) == merged
    held = held_at(hub_db)
    assert FIRST.encode() not in held
    assert SECOND.encode() not in held
