"""A security check of a real hub's sync (both stores): a secret in a list's name kept in its key,
and a negative version time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain.worklists import list_key
from aletheia_mem.storage.uids import new_uid
from tests.hub.helpers import Hub, running_hub, store_of
from tests.hub.sync_helpers import items_at

pytestmark = pytest.mark.e2e
SECRET = "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def _list_record(name: str, items: list[str], **changes: Any) -> dict[str, Any]:
    """A work-state list of `shop` as a store of this release sends it, but for its key,
    which names the list as sent (``dedupe_key``)."""
    now = system_clock()
    data = {
        "project": "shop", "type": "note", "kind": "work_state", "title": f"{name} list",
        "text": json.dumps(items), "narrative": None, "facts": [], "files": [], "tool": "codex",
        "pinned": False, "created_at": now, "updated_at": now, "dismissed_at": None,
        "dismiss_reason": None, "dedupe_key": "list:" + name,
    }  # fmt: skip
    return {"kind": "memory", "key": new_uid(), "v": [now, "0" * 32], "data": {**data, **changes}}


def _lists(target: Path | str) -> dict[str, dict[str, Any]]:
    return {
        key: data
        for (kind, key), data in items_at(target).items()
        if data.get("kind") == "work_state"
    }


def test_a_secret_in_a_pushed_lists_key_is_redacted_as_work_state_write_keys_its_name(
    hub: Hub,
) -> None:
    """The checker's repro: the hub redacted the title but kept the key, and passed it on. The
    key is now the one work_state_write makes of the name, so the hub's own list of that name
    and the pushed one are one list."""
    alice = hub.token("sync", ("shop",), "alice-key")
    bob = hub.token("sync", ("shop",), "bob-key")
    session = hub.initialize(bob)
    text, is_error = hub.call_tool(bob, session, "work_state_write", list=SECRET, items=["a"])
    assert not is_error, text
    before = _lists(hub.db)
    reply = hub.push(alice, [_list_record(SECRET, ["ship"])])
    assert reply.status == 200, reply.body
    after = _lists(hub.db)
    assert len(after) == len(before)  # merged into the list work_state_write made
    assert [data["dedupe_key"] for data in after.values()] == [list_key(SECRET)]
    assert SECRET not in json.dumps(list(items_at(hub.db).values()))
    pulled = hub.post("/sync/pull", {"store_id": store_of(bob), "cursor": 0}, bob)
    assert pulled.status == 200 and SECRET not in json.dumps(pulled.body)
    assert list_key(SECRET) in json.dumps(pulled.body)


@pytest.mark.parametrize(
    ("where", "problem"),
    [("store_id", "store_id must be the store's id"), ("key", "key must be a global id")],
)
def test_an_id_holding_a_secret_is_refused_and_not_echoed(
    hub: Hub, where: str, problem: str
) -> None:
    """An id is kept as sent and passed on to every store, so one holding a secret is refused."""
    token = hub.token("sync", ("shop",), f"ids-{where}")
    store_id = SECRET if where == "store_id" else store_of(token)
    record = _list_record("todo", ["ship"], dedupe_key="list:todo")
    record["v"][1] = store_id
    if where == "key":
        record["key"] = SECRET
    reply = hub.post("/sync/push", {"store_id": store_id, "records": [record]}, token)
    assert reply.status == 400 and problem in reply.body["error"]["message"], reply.body
    assert SECRET not in json.dumps(reply.body)


def test_a_negative_version_time_is_named_as_such(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "negative-v")
    record = _list_record("later", ["x"], dedupe_key="list:later")
    record["v"][0] = -5
    reply = hub.push(token, [record])
    message = reply.body["error"]["message"]
    assert reply.status == 400 and "negative" in message and "future" not in message, message
