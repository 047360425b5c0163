"""What an MCP client over HTTP is told when the store fails outside a tool call (its session
row cannot be written): a full disk and a busy store in their own lines, the hub's without the
file's path."""

from __future__ import annotations

import json

import pytest

from aletheia_mem.errors import StoreBusyError, StoreFullError, StoreUnavailableError
from aletheia_mem.hub.sync_api import HUB_BUSY, HUB_STORE
from aletheia_mem.server.http import UNAVAILABLE, failure_response
from aletheia_mem.server.mcp import INTERNAL_ERROR

STORE = "/srv/data/aletheia.db"


@pytest.mark.parametrize(
    ("error", "status", "line"),
    [
        (StoreFullError(STORE), 507, StoreFullError(STORE).message),
        (StoreFullError(STORE, reading=True), 507, StoreFullError(STORE, reading=True).message),
        (StoreBusyError(STORE), 503, StoreBusyError(STORE).message),
        (StoreUnavailableError("PostgreSQL at db:5432 refused us"), 503, UNAVAILABLE),
    ],
)
def test_a_store_failure_is_told_in_its_line(error: Exception, status: int, line: str) -> None:
    response = failure_response(error, 4)
    assert response.status_code == status
    assert response.headers["retry-after"] == "5"
    assert json.loads(response.body) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": INTERNAL_ERROR, "message": line},
    }


def test_the_hub_tells_a_full_disk_without_the_store_path() -> None:
    full = json.loads(failure_response(StoreFullError(STORE), 4, HUB_STORE).body)
    assert full["error"]["message"] == StoreFullError("of the hub").message
    assert STORE not in full["error"]["message"]
    busy = json.loads(failure_response(StoreBusyError(STORE), 4, HUB_STORE).body)
    assert busy["error"]["message"] == HUB_BUSY
