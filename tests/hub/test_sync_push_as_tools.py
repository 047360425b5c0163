"""A synced peer puts into a hub only what a tool call could: real hub processes (SQLite and
PostgreSQL), plain HTTP pushes as a hostile peer sends them, and a real ``aletheia sync``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.test_hostile_sync import memory_record

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


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
