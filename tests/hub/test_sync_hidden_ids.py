"""A project-limited token pushing a record whose id names another project's item learns
nothing of that project: not its name (the refusal named it), and not what the item holds.

Real hub processes (SQLite and PostgreSQL stores), plain HTTP pushes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import episodes, memories
from tests.hub.helpers import Hub, running_hub
from tests.hub.sync_helpers import items_at

pytestmark = pytest.mark.e2e

HIDDEN = "ledger-secret-project"


def _seed(db: Path | str) -> None:
    """A memory with a fact, and an episode, of a project the shop token cannot see."""
    from tests.stores import open_target

    store = open_target(db)
    try:
        fact = memories.FactInput("invoices", "close on", "the 5th")
        item = memories.MemoryInput("Invoices close on the 5th", HIDDEN, "t", facts=[fact])
        memories.save_memory(store, system_clock, item)
        episodes.record_request(
            store, project=HIDDEN, tool="t", session_id="s1", prompt="Close the books", now=1
        )
    finally:
        store.close()


@pytest.fixture(scope="module")
def seeded(module_hub_db: Path | str) -> Iterator[Hub]:
    _seed(module_hub_db)
    with running_hub(module_hub_db, "--rate-limit", "0") as hub:
        yield hub


def _hidden_records(hub: Hub) -> dict[str, dict[str, Any]]:
    """The hidden project's memory, fact and episode as records moved into ``shop``."""
    found: dict[str, dict[str, Any]] = {}
    for (kind, key), data in items_at(hub.db).items():
        if data.get("project") == HIDDEN and kind in ("memory", "fact", "episode"):
            moved = {**data, "project": "shop"}
            found[kind] = {"kind": kind, "key": key, "v": [system_clock(), "f" * 32], "data": moved}
    return found


@pytest.mark.parametrize("kind", ["memory", "fact", "episode"])
def test_a_pushed_id_of_another_project_does_not_name_that_project(seeded: Hub, kind: str) -> None:
    hub = seeded
    token = hub.token("sync", ("shop",), f"pusher-{kind}")
    record = _hidden_records(hub)[kind]
    before = items_at(hub.db)
    reply = hub.push(token, [record])
    assert reply.status == 403
    message = reply.body["error"]["message"]
    assert HIDDEN not in message
    assert message == f"A {kind}'s key must name an item of the token's projects, or none."
    assert items_at(hub.db) == before
