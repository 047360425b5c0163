"""A security check of a real hub's sync (both stores): a secret in a list's name kept in its key,
a store taken by a token made before its holder's revocation, the hub's own id named by a push
or a pull, and a negative version time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from aletheia_mem.clock import system_clock
from aletheia_mem.domain.worklists import list_key
from aletheia_mem.storage.uids import new_uid
from tests.hub.helpers import Hub, running_hub, store_of
from tests.hub.sync_helpers import items_at
from tests.stores import open_target

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


def test_push_and_pull_naming_the_hubs_own_store_are_refused_as_hello_is(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "own-id")
    hello = hub.post("/sync/hello", {"store_id": store_of(token)}, token)
    assert hello.status == 200, hello.body
    hub_id = hello.body["hub_id"]
    record = _list_record("own", ["x"])
    record["v"][1] = hub_id
    before = items_at(hub.db)
    bodies = {
        "/sync/hello": {"store_id": hub_id},
        "/sync/push": {"store_id": hub_id, "records": [record]},
        "/sync/pull": {"store_id": hub_id, "cursor": 0},
    }
    for path, body in bodies.items():
        reply = hub.post(path, body, token)
        assert reply.status == 400, (path, reply.body)
        assert reply.body["error"]["message"].startswith("This is the hub's own store"), path
    assert items_at(hub.db) == before


def test_a_negative_version_time_is_named_as_such(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "negative-v")
    record = _list_record("later", ["x"], dedupe_key="list:later")
    record["v"][0] = -5
    reply = hub.push(token, [record])
    message = reply.body["error"]["message"]
    assert reply.status == 400 and "negative" in message and "future" not in message, message


def _cli(hub: Hub, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["mcp-link", *args, "--hub-db", str(hub.db), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _claims(hub: Hub, *names: str) -> list[tuple[str, str | None]]:
    store = open_target(hub.db)
    try:
        rows = store.list_audit_page(100, None, "sync-claim")
    finally:
        store.close()
    return [(row.actor, row.detail) for row in reversed(rows) if row.actor in names]


def test_a_store_freed_by_a_revocation_passes_only_to_a_token_made_after_it(hub: Hub) -> None:
    """The checker's repro: every sync token learns other stores' ids from the origins it pulls;
    once Alice's token was revoked, Eve's token (another project's, made before) took her store
    and Alice's new token was refused. Now Eve is refused, told which token held the store, and
    Alice's new token takes it; each claim is audited and the list counts each token's stores."""
    alice = hub.token("sync", ("shop",), "alice-laptop")
    eve = hub.token("sync", ("ops",), "eve")
    store_a, store_e = store_of(alice), store_of(eve)
    assert hub.post("/sync/hello", {"store_id": store_a}, alice).status == 200
    assert hub.post("/sync/hello", {"store_id": store_e}, eve).status == 200
    held = hub.post("/sync/hello", {"store_id": store_a}, eve)
    assert held.status == 403
    assert held.body["error"]["message"] == (
        'This store syncs with another token, "alice-laptop". If this data folder is a copy of'
        " another machine's, or another person's, give this token a data folder of its own (a"
        " new ALETHEIA_DATA_DIR): its first sync pulls everything. To move this store to a new"
        ' token, revoke "alice-laptop" first (aletheia mcp-link revoke alice-laptop; it then'
        " syncs none of the stores it holds), then make the new one (aletheia mcp-link create)."
    )
    assert _cli(hub, "revoke", "alice-laptop")["token"]["stores"] == 1
    for path in ("/sync/hello", "/sync/pull", "/sync/push"):
        body = {"store_id": store_a, "records": []}
        refused = hub.post(path, body, eve)
        assert refused.status == 403, (path, refused.body)
        assert refused.body["error"]["message"] == (
            'This store synced with the token "alice-laptop", revoked after this token was made;'
            " only a token made after that revocation may sync it (aletheia mcp-link create)."
            " To sync with this token, use a data folder of its own (a new ALETHEIA_DATA_DIR):"
            " its first sync pulls everything."
        )
    time.sleep(0.005)  # made after the revocation, as an admin makes the owner's new token
    alice2 = hub.token("sync", ("shop",), "alice-laptop-2")
    assert hub.post("/sync/hello", {"store_id": store_a}, alice2).status == 200
    assert hub.post("/sync/hello", {"store_id": store_a}, alice2).status == 200  # held: no row
    assert _claims(hub, "alice-laptop", "eve", "alice-laptop-2") == [
        ("alice-laptop", f"store {store_a}"),
        ("eve", f"store {store_e}"),
        ("alice-laptop-2", f"store {store_a} (taken from the revoked token alice-laptop)"),
    ]
    stores = {token["name"]: token["stores"] for token in _cli(hub, "list")}
    assert (stores["alice-laptop"], stores["eve"], stores["alice-laptop-2"]) == (0, 1, 1)
    shown = CliRunner().invoke(cli, ["mcp-link", "list", "--hub-db", str(hub.db)])
    assert "STORES" in shown.output.splitlines()[0]
