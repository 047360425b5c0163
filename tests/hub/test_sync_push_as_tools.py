"""A synced peer puts into a hub only what a tool call could: real hub processes (SQLite and
PostgreSQL), plain HTTP pushes as a hostile peer sends them, and a real ``aletheia sync``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.sync_helpers import items_at
from tests.hub.test_hostile_sync import ORIGIN, memory_record

pytestmark = pytest.mark.e2e


def rule_record(
    then: str, when: str = "always", tier: str = "project", name: str = "shop", **changes: Any
) -> dict[str, Any]:
    """A rule record keyed by the id of its text and scope as given (a peer's own rule_id)."""
    now = system_clock()
    data = {
        "then": then, "when": when, "scope_tier": tier, "scope_name": name,
        "evidence_memories": [], "evidence_facts": [], "source": "codex", "added_at": now,
        "last_confirmed_at": now, "enabled": True, "updated_at": now,
    }  # fmt: skip
    data.update(changes)
    return {
        "kind": "rule",
        "key": rule_id(then, when, tier, name),
        "v": [now, ORIGIN],
        "data": data,
    }


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def test_a_pushed_note_without_a_dedupe_key_is_keyed_and_a_save_of_its_words_finds_it(
    hub: Hub,
) -> None:
    token = hub.token("sync", ("shop",), "no-dedupe-key")
    record = memory_record(key=uid("keyless"), title="Keyless", text="Staging is on Fridays")
    assert record["data"]["dedupe_key"] is None
    assert hub.push(token, [record]).status == 200
    held = items_at(hub.db)[("memory", uid("keyless"))]
    assert held["dedupe_key"] == dedupe_key("Keyless", "Staging is on Fridays")
    session = hub.initialize(token)
    text, is_error = hub.call_tool(
        token, session, "save_memory", text="Staging is on Fridays", title="Keyless", project="shop"
    )
    assert not is_error and text.startswith("Already saved as #"), text


def test_a_pushed_text_past_its_length_is_named_by_its_length_not_its_type(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "too-long")
    record = memory_record(key=uid("too long"), text="x" * 200_001)
    reply = hub.push(token, [record])
    assert reply.status == 400, reply.body
    assert reply.body["error"]["message"] == (
        f"record 0 (memory {uid('too long')}): text must be at most 200000 characters."
    )
    record = memory_record(key=uid("long file"), files=["a.py", "f" * 200_001])
    reply = hub.push(token, [record])
    assert reply.body["error"]["message"] == (
        f"record 0 (memory {uid('long file')}): each of files must be at most 200000 characters."
    )


def test_a_rules_waiting_evidence_is_never_filled_in_with_another_projects_item(
    hub: Hub,
) -> None:
    """A shop token cites an id no item has yet; a billing memory that later takes that id is
    not the shop rule's evidence (citing it once known is refused: 403), a shop one is."""
    shop = hub.token("sync", ("shop",), "waiting-shop")
    billing = hub.token("sync", ("billing",), "waiting-billing")
    cited = [uid("billing takes it"), uid("shop takes it")]
    rule = rule_record("Check the invoices", evidence_memories=cited)
    assert hub.push(shop, [rule]).status == 200
    taken = memory_record(key=cited[0], project="billing", text="Invoices close on the 5th")
    assert hub.push(billing, [taken]).status == 200
    assert hub.push(shop, [memory_record(key=cited[1], text="Invoices are in shop/")]).status == 200
    held = items_at(hub.db)
    assert held[("memory", cited[0])]["project"] == "billing"
    assert held[("rule", rule["key"])]["evidence_memories"] == [cited[1]]
