"""A token whose projects the hub's admin narrowed (billing taken out of shop and billing) while a
store syncs both through it, with real `aletheia sync` processes and a real hub on each store:
the hub still takes nothing of billing from it, the store goes on syncing shop and says once
which projects the hub no longer covers, and each sync counts the changes of billing that stay
on the machine; a token that covers billing then sends what stayed."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories
from aletheia_mem.errors import StoreUnavailableError
from aletheia_mem.storage.open import open_hub_store
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.engine import Narrowed, sync_store
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub
from tests.hub.sync_helpers import items_at
from tests.hub.test_hostile_sync import memory_record
from tests.hub.test_sync_e2e import run_sync, save_notes
from tests.hub.test_sync_store_copies import store_id

pytestmark = pytest.mark.e2e

NO_LONGER = (
    'The hub no longer covers billing for the token "laptop" (only shop now): this store\'s'
    " changes to billing stay on this machine and the hub's are no longer pulled; the rest syncs"
    " as before. A token that covers them syncs them again (docs/sync.md).\n"
)
STAYS = (
    " item(s) of billing stay on this machine: the token does not cover that project, and the"
    " hub would refuse them.\n"
)


def narrow(hub: Hub, secret: str, store_id: str, projects: tuple[str, ...]) -> None:
    """The admin's edit of the token's row in the hub's store (no command changes a token's
    projects), and a bounded wait until the hub names them: a PostgreSQL hub remembers a token
    for half a second (``TOKEN_CACHE_SECONDS``)."""
    name = hub.post("/sync/hello", {"store_id": store_id}, secret).body["token"]["name"]
    if isinstance(hub.db, Path):
        with closing(sqlite3.connect(hub.db)) as conn, conn:
            conn.execute(
                "UPDATE hub_tokens SET projects = ? WHERE name = ?", (json.dumps(projects), name)
            )
    else:
        import psycopg

        with psycopg.connect(hub.db, autocommit=True) as pg:
            pg.execute(
                "UPDATE hub_tokens SET projects = %s WHERE name = %s", (list(projects), name)
            )
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        hello = hub.post("/sync/hello", {"store_id": store_id}, secret).body
        if hello["token"]["projects"] == list(projects):
            return
        time.sleep(0.05)  # a poll, bounded by the deadline
    raise AssertionError(f"the hub never named {projects} for the token {name}")


@pytest.fixture
def laptop(tmp_path: Path) -> Path:
    """The data folder of the store that syncs through the token."""
    folder = tmp_path / "laptop"
    folder.mkdir()
    return folder


def synced(hub: Hub, laptop: Path, projects: tuple[str, ...] | None) -> str:
    """The secret of the token "laptop" for ``projects``, once the store's first sync with it
    went through."""
    secret = hub.token("sync", projects, "laptop")
    first = run_sync(laptop, "--hub", hub.url, "--token", secret)
    assert first.returncode == 0, first.stderr
    return secret


def titles_at(hub_db: Path | str) -> set[str]:
    return {data["title"] for (kind, _), data in items_at(hub_db).items() if kind == "memory"}


def test_a_narrowed_token_keeps_syncing_its_projects_and_says_once_what_it_no_longer_covers(
    laptop: Path, hub_db: Path | str
) -> None:
    save_notes(laptop, ["shop plan one"])
    save_notes(laptop, ["billing plan one"], "billing")
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        secret = synced(hub, laptop, ("shop", "billing"))
        narrow(hub, secret, store_id(laptop), ("shop",))
        save_notes(laptop, ["shop plan two"])
        save_notes(laptop, ["billing plan two"], "billing")

        narrowed = run_sync(laptop)
        assert narrowed.returncode == 0, narrowed.stderr
        notice, summary = narrowed.stdout.splitlines(keepends=True)
        assert notice == NO_LONGER
        assert summary.startswith(f"Synced with {hub.url} (shop): pushed 1 item(s)")
        assert summary.endswith(f" 1{STAYS}")

        save_notes(laptop, ["shop plan three"])
        again = run_sync(laptop)  # said once; nothing of billing was changed since
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith(f"Synced with {hub.url} (shop): pushed 1 item(s)")
        assert "billing" not in again.stdout
        save_notes(laptop, ["billing plan three", "billing plan four"], "billing")
        counted = json.loads(run_sync(laptop, "--json").stdout)
        assert (counted["outside_token"], counted["narrowed_from"]) == ({"billing": 2}, None)

        # The hub takes nothing of billing from the token, whatever a store sends.
        refused = hub.push(secret, [memory_record(project="billing", text="sent anyway")])
        assert refused.status == 403, refused.body
        assert refused.body["error"]["message"] == (
            'Project "billing" is not allowed for this token.'
        )
        shop = {"shop plan one", "shop plan two", "shop plan three"}
        assert titles_at(hub_db) == {*shop, "billing plan one"}

        # A token that covers billing (the store moves to it once the old one is revoked)
        # sends what stayed on this machine with its first sync.
        hub_store = open_hub_store(hub_db)
        try:
            assert hub_store.revoke_token("laptop", hub_store.store_clock()) is not None
        finally:
            hub_store.close()
        wider = hub.token("sync", ("shop", "billing"), "laptop-2")
        moved = run_sync(laptop, "--token", wider)
        assert moved.returncode == 0, moved.stderr
        assert "stay on this machine" not in moved.stdout
        billing = {f"billing plan {n}" for n in ("one", "two", "three", "four")}
        assert titles_at(hub_db) == shop | billing


def test_a_token_narrowed_from_every_project_names_the_projects_it_still_covers(
    laptop: Path, hub_db: Path | str
) -> None:
    save_notes(laptop, ["shop plan"])
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        secret = synced(hub, laptop, None)
        narrow(hub, secret, store_id(laptop), ("shop", "ops"))
        save_notes(laptop, ["personal plan"], "personal")
        narrowed = run_sync(laptop)
        assert narrowed.returncode == 0, narrowed.stderr
        notice, summary = narrowed.stdout.splitlines()
        assert notice == (
            'The hub no longer covers every project for the token "laptop" (only shop, ops'
            " now): this store's changes to the other projects stay on this machine and the"
            " hub's are no longer pulled; the rest syncs as before. A token that covers them"
            " syncs them again (docs/sync.md)."
        )
        assert summary.endswith(
            " 1 item(s) of personal stay on this machine: the token does"
            " not cover that project, and the hub would refuse them."
        )
        narrow(hub, secret, store_id(laptop), ("shop",))
        counted = json.loads(run_sync(laptop, "--json").stdout)
        assert (counted["projects"], counted["narrowed_from"]) == (["shop"], ["ops", "shop"])
        assert json.loads(run_sync(laptop, "--json").stdout)["narrowed_from"] is None


@dataclass
class PushFails(HubClient):
    """The real client, whose pushes the connection drops (after the hello went through)."""

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path == "/sync/push":
            raise StoreUnavailableError("The connection to the hub was lost.")
        return super().call(path, body)


def test_a_sync_that_stops_after_its_hello_tells_the_narrowing_again(
    tmp_path: Path, hub_db: Path | str
) -> None:
    """The narrower projects are remembered once a sync that says so finished: one stopped
    midway (the hub gone, the connection lost) leaves it to the next to say."""
    store = SqliteStore(tmp_path / "laptop.db")
    try:
        with running_hub(hub_db, "--rate-limit", "0") as hub:
            secret = hub.token("sync", ("shop", "billing"), "laptop")
            save_notes_in(store, "shop plan one")
            assert sync_store(store, HubClient(hub.url, secret), system_clock).narrowed is None
            narrow(hub, secret, store.sync_store_id(), ("shop",))
            save_notes_in(store, "shop plan two")
            with pytest.raises(StoreUnavailableError):
                sync_store(store, PushFails(hub.url, secret), system_clock)
            told = sync_store(store, HubClient(hub.url, secret), system_clock)
            assert told.narrowed == Narrowed(("billing", "shop")) and told.pushed == 1
            assert sync_store(store, HubClient(hub.url, secret), system_clock).narrowed is None
    finally:
        store.close()


def save_notes_in(store: SqliteStore, text: str) -> None:
    memories.save_memory(
        store, system_clock, memories.MemoryInput(text=text, project="shop", tool="test")
    )
