"""The hub's sync API reads a body as UTF-8 only, as /api/ and /mcp do: a UTF-16 or UTF-32
body (which ``json.loads`` would read, guessing its encoding) is refused and claims nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.test_sync_as_saved import _raw

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-32-be"])
def test_a_sync_body_not_in_utf8_is_refused(hub: Hub, encoding: str) -> None:
    token = hub.token("sync", ("shop",), f"wide-{encoding}")
    store = uid(f"wide-{encoding}")
    body = json.dumps({"store_id": store}).encode(encoding)
    status, answer = _raw(hub, "/sync/hello", body, token)
    assert (status, answer["error"]["message"]) == (400, "The body is not UTF-8.")
    other = hub.token("sync", ("shop",), f"wide-other-{encoding}")  # the id was not claimed
    assert hub.post("/sync/hello", {"store_id": store}, other).status == 200


def test_a_utf8_sync_body_after_a_byte_order_mark_is_read(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "bom")
    body = json.dumps({"store_id": uid("bom")}).encode("utf-8-sig")
    status, answer = _raw(hub, "/sync/hello", body, token)
    assert status == 200, answer
