"""A peer that sends a decomposed project key or list name (a release before names were kept in
NFC, on a macOS folder) lands in the composed project, as a tool stores it: one folder, one
project, on the hub as on every store. A real hub process over HTTP, on both stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.sync.replies import read_hello
from tests.hub.helpers import Hub, running_hub
from tests.hub.test_hostile_sync import memory_record
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


def test_an_older_hub_naming_a_token_project_decomposed_is_read_in_nfc() -> None:
    hello = {
        "hub_id": "hub",
        "token": {"id": 1, "name": "x", "scope": "sync", "projects": [NFD, "shop"]},
        "max_records": 1000,
    }
    assert read_hello("http://127.0.0.1:1", hello).projects == (NFC, "shop")
