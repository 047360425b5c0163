"""A hub of an earlier release took records whose global id holds a secret (the hub now refuses
such ids on push; a store refuses them on pull): every pull stopped at such a record for good.
The hub leaves it out of its pull pages, audits it once, and each sync says how many it held
back and why. Real hub processes (SQLite and PostgreSQL stores), the row written into the hub's
store directly, real ``aletheia sync`` processes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path

import psycopg
import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import facts
from aletheia_mem.storage.open import open_hub_store
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync.validate import SECRET_ID
from tests.hub.helpers import running_hub
from tests.hub.sync_helpers import data_dirs, items_at
from tests.hub.test_sync_e2e import run_sync, save_notes

pytestmark = pytest.mark.e2e
# A GitHub token as an id: what a save redacts, taken by a hub of an earlier release.
SECRET = "ghp_" + "Zq8RkT2mWx4Yb7Lc9Np3" + "Hd6Fg1Js5Kv0"
SECRET_KEY = SECRET + "Qa7Xe9"  # 36 characters after "ghp_"


def _sql(db: Path | str, statement: str, params: Sequence[str]) -> None:
    """One statement on the hub's store, as an admin's sqlite3 or psql would run it."""
    if isinstance(db, Path):
        with closing(sqlite3.connect(db)) as conn, conn:
            conn.execute(statement, params)
        return
    with psycopg.connect(db, autocommit=True) as pg:
        pg.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]


def _uid_of(db: Path | str, text: str) -> str:
    return next(key for (kind, key), data in items_at(db).items() if data["text"] == text)


def _record_fact(data_dir: Path) -> None:
    store = SqliteStore(data_dir / "aletheia.db")
    try:
        facts.record_fact(
            store, project="shop", subject="db", predicate="is", object="postgres",
            valid_from=None, source="t", now=system_clock(),
        )  # fmt: skip
    finally:
        store.close()


def _withheld_rows(db: Path | str) -> list[str]:
    store = open_hub_store(db)
    try:
        return [row.detail or "" for row in store.list_audit_page(100, None, "sync-withheld")]
    finally:
        store.close()


def test_a_record_whose_id_holds_a_secret_is_held_back_and_every_pull_goes_on(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob, carol = data_dirs(tmp_path, "alice", "bob", "carol")
    texts = ["Staging deploys need the VPN", "The cache warms at six", "Backups run at two"]
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {name: hub.token("sync", None, name) for name in ("alice", "bob", "carol")}
        save_notes(alice, texts[:2])
        assert run_sync(alice, "--hub", hub.url, "--token", tokens["alice"]).returncode == 0
        # the row an earlier release's hub kept: the note's id is a token (its log row follows)
        _sql(
            hub_db,
            "UPDATE memories SET uid = ? WHERE uid = ?",
            (SECRET_KEY, _uid_of(hub_db, texts[0])),
        )
        save_notes(alice, texts[2:])  # a change after it, which every pull must still bring
        _record_fact(alice)
        assert run_sync(alice, "--hub", hub.url, "--token", tokens["alice"]).returncode == 0
        # a fact citing that note: it travels, without the reference no store could fill in
        cited = "(SELECT id FROM memories WHERE uid = ?)"
        _sql(hub_db, f"UPDATE facts SET memory_id = {cited}", (SECRET_KEY,))

        first = run_sync(bob, "--hub", hub.url, "--token", tokens["bob"], "--json")
        assert first.returncode == 0, first.stderr
        report = json.loads(first.stdout)
        assert report["withheld_by_hub"] == {SECRET_ID: 1}
        held = items_at(bob / "aletheia.db")
        notes = [data["text"] for (kind, _), data in held.items() if kind == "memory"]
        assert sorted(notes) == sorted(texts[1:])
        assert all(SECRET not in key for _, key in held)
        (fact,) = [data for (kind, _), data in held.items() if kind == "fact"]
        assert fact["object"] == "postgres" and fact["memory"] is None

        again = run_sync(bob, "--hub", hub.url, "--token", tokens["bob"], "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["withheld_by_hub"] == {}  # passed once for good

        said = run_sync(carol, "--hub", hub.url, "--token", tokens["carol"])
        assert said.returncode == 0, said.stderr
        assert f"The hub held back 1 record(s) no store takes (1: {SECRET_ID})" in said.stdout
        assert SECRET not in said.stdout + said.stderr

        rows = _withheld_rows(hub_db)  # once, however many pulls passed it
        assert len(rows) == 1 and SECRET not in rows[0] and SECRET_ID in rows[0]
    log = ""
    while not hub.log.empty():
        log += hub.log.get()
    assert log.count("left out of every pull") == 1 and SECRET not in log


def test_a_restarted_hub_does_not_audit_a_held_back_record_again(
    hub_db: Path | str, tmp_path: Path
) -> None:
    alice, bob = data_dirs(tmp_path, "alice", "bob")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        tokens = {name: hub.token("sync", None, name) for name in ("alice", "bob")}
        save_notes(alice, ["Staging deploys need the VPN"])
        assert run_sync(alice, "--hub", hub.url, "--token", tokens["alice"]).returncode == 0
        old = _uid_of(hub_db, "Staging deploys need the VPN")
        _sql(hub_db, "UPDATE memories SET uid = ? WHERE uid = ?", (SECRET_KEY, old))
        assert run_sync(alice, "--hub", hub.url).returncode == 0
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        synced = run_sync(bob, "--hub", hub.url, "--token", tokens["bob"], "--json")
        assert synced.returncode == 0, synced.stderr
        assert json.loads(synced.stdout)["withheld_by_hub"] == {SECRET_ID: 1}
    assert len(_withheld_rows(hub_db)) == 1
