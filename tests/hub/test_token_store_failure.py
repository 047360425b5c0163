"""The store failing while the hub checks a bearer token (its tokens table unreadable): ``/mcp``
still answers JSON, a JSON-RPC internal error (DESIGN §10), and the sync API its own JSON error;
neither tells the client anything of the failure, which goes to the hub's log."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from aletheia_mem.server.api import UNAVAILABLE
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub

pytestmark = pytest.mark.e2e

MCP_PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


def _post_raw(hub: Hub, path: str, body: object, token: str) -> tuple[int, str, bytes]:
    request = urllib.request.Request(  # noqa: S310  (the hub's own http URL)
        hub.url + path,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Authorization": f"Bearer {token}",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:  # noqa: S310
            return answer.status, answer.headers["content-type"], answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read()


def test_a_store_failure_checking_the_token_is_answered_in_json(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db, "--rate-limit", "0") as hub:
        token = hub.token("sync", ("shop",), "laptop")
        with closing(sqlite3.connect(db, isolation_level=None)) as conn:
            conn.execute("ALTER TABLE hub_tokens RENAME TO hub_tokens_away")
        mcp = _post_raw(hub, "/mcp", MCP_PING, token)
        sync = _post_raw(hub, "/sync/hello", {}, token)
    # A lost table is a damaged store: 503, saying the store cannot serve (naming no file).
    assert mcp[:2] == (503, "application/json")
    assert json.loads(mcp[2]) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32603, "message": UNAVAILABLE},
    }
    assert sync[:2] == (503, "application/json")
    assert json.loads(sync[2]) == {"error": {"code": "unavailable", "message": UNAVAILABLE}}
    for _, _, body in (mcp, sync):
        assert b"hub_tokens" not in body and b"Traceback" not in body
