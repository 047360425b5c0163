"""A peer that sends a decomposed project key or list name (a release before names were kept in
NFC, on a macOS folder) lands in the composed project, as a tool stores it: one folder, one
project, on the hub as on every store. A real hub process over HTTP, on both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.domain import rules
from aletheia_mem.sync.replies import read_hello
from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.test_hostile_sync import ORIGIN, memory_record
from tests.stores import rows_at

pytestmark = pytest.mark.e2e
NFD, NFC = "cafe\u0301", "caf\u00e9"


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def test_a_decomposed_project_and_list_name_land_in_the_composed_ones(hub: Hub) -> None:
    token = hub.token("sync", (NFC,), "macos-peer")
    note = memory_record(project=NFD, text="from an nfd folder", title="from an nfd folder")
    listed = memory_record(
        project=NFD,
        kind="work_state",
        title=f"{NFD} list",
        text='["ship"]',
        dedupe_key=f"list:{NFD}",
    )
    reply = hub.push(token, [note, listed])
    assert reply.status == 200, reply.body
    held = rows_at(
        hub.db, "SELECT project, dedupe_key, title FROM memories WHERE uid IN (?, ?) ORDER BY id",
        note["key"], listed["key"],
    )  # fmt: skip
    assert [row[0] for row in held] == [NFC, NFC]
    assert held[1][1:] == (f"list:{NFC}", f"{NFC} list")


def test_a_note_and_a_rule_sent_decomposed_are_the_composed_ones(hub: Hub) -> None:
    """Words too (a note's title and text, a rule's words and situation): a peer's decomposed
    copy is one with the composed note and rule, as add_rule and save_memory keep them."""
    token = hub.token("sync", None, "nfd-words-peer")
    words, decomposed = "Caf\u00e9 menu on the hub", "Cafe\u0301 menu on the hub"
    composed_note = memory_record(key=uid("composed words"), title=words, text=words)
    assert hub.push(token, [composed_note]).status == 200
    then, when, situation = f"{decomposed} rule", "you order a cafe\u0301", "Cafe\u0301"
    data = {
        "then": then, "when": when, "scope_tier": "situation", "scope_name": situation,
        "evidence_memories": [], "evidence_facts": [], "source": "admin", "added_at": 1,
        "last_confirmed_at": 1, "enabled": True, "updated_at": 1,
    }  # fmt: skip
    sent = rules.rule_id(then, when, "situation", situation)
    rule = {"kind": "rule", "key": sent, "v": [1, ORIGIN], "data": data}
    copy = memory_record(key=uid("decomposed words"), title=decomposed, text=decomposed)
    reply = hub.push(token, [copy, rule])
    assert reply.status == 200, reply.body
    held = rows_at(
        hub.db, "SELECT uid, title, text FROM memories WHERE text IN (?, ?)", words, decomposed
    )
    assert held == [(composed_note["key"], words, words)]
    held_rules = rows_at(
        hub.db,
        "SELECT id, then_text, when_text, scope_name FROM rules WHERE scope_name IN (?, ?)",
        "Caf\u00e9",
        situation,
    )
    composed = (f"{words} rule", "you order a caf\u00e9", "Caf\u00e9")
    assert held_rules == [
        (rules.rule_id(composed[0], composed[1], "situation", composed[2]), *composed)
    ]


def test_an_older_hub_naming_a_token_project_decomposed_is_read_in_nfc() -> None:
    hello = {
        "hub_id": "hub",
        "token": {"id": 1, "name": "x", "scope": "sync", "projects": [NFD, "shop"]},
        "max_records": 1000,
    }
    assert read_hello("http://127.0.0.1:1", hello).projects == (NFC, "shop")
