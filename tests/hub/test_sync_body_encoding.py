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


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("where", ["top", "record"])
def test_a_sync_body_holding_nan_or_infinity_is_refused(
    hub: Hub, constant: str, where: str
) -> None:
    """/sync/ refuses what /api/ and /mcp refuse: JSON has no NaN or Infinity (Python reads
    them); the page is not applied and its store id is not claimed."""
    token = hub.token("sync", ("shop",), f"nan-{where}-{constant}")
    store = uid(f"nan-{where}-{constant}")
    if where == "top":
        text = f'{{"store_id":"{store}","records":[],"x":{constant}}}'
    else:
        text = f'{{"store_id":"{store}","records":[{{"kind":"memory","n":{constant}}}]}}'
    status, answer = _raw(hub, "/sync/push", text.encode(), token)
    told = f"The body is not JSON: it holds {constant}, and JSON has no NaN or Infinity."
    assert (status, answer["error"]["message"]) == (400, told)
    other = hub.token("sync", ("shop",), f"nan-other-{where}-{constant}")
    assert hub.post("/sync/hello", {"store_id": store}, other).status == 200


def test_an_unknown_top_level_key_in_a_sync_body_is_accepted(hub: Hub) -> None:
    """A newer store may send a field an older hub does not know (mixed releases)."""
    token = hub.token("sync", ("shop",), "newer-field")
    body = {"store_id": uid("newer-field"), "records": [], "from_a_later_release": [1.5, None]}
    answer = hub.post("/sync/push", body, token)
    assert answer.status == 200
    assert answer.body == {"applied": 0, "skipped": 0, "merged": 0}
