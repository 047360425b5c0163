"""A PostgreSQL hub whose database goes away (a TCP relay the test cuts, the shared server left
alone): every protected request is answered 503 in JSON with Retry-After, saying nothing of the
database (its address goes to the hub's log), and the hub serves again once the database is back."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit, urlunsplit

import pytest

from aletheia_mem.server.http import UNAVAILABLE
from tests.hub.helpers import Hub, running_hub
from tests.storage.postgres.relay import Relay

pytestmark = pytest.mark.e2e

TOOL_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "search", "arguments": {"query": "deploy", "project": "shop"}},
}


def _post(hub: Hub, path: str, body: object, token: str, session: str) -> tuple[int, dict, dict]:
    """Status, headers and JSON body; waits long enough for the pool's own wait (10 s)."""
    request = urllib.request.Request(  # noqa: S310  (the hub's own http URL)
        hub.url + path,
        data=json.dumps(body).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {token}",
            "Mcp-Session-Id": session,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=40) as answer:  # noqa: S310
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, dict(error.headers), json.loads(error.read())


def test_a_hub_whose_database_is_gone_answers_503_and_serves_once_it_is_back(
    pg_url: str,
) -> None:
    parts = urlsplit(pg_url)
    relay = Relay((parts.hostname or "127.0.0.1", parts.port or 5432))
    user = f"{parts.username}@" if parts.username else ""
    through = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{relay.port}"))
    try:
        with running_hub(through, "--rate-limit", "0") as hub:
            token = hub.token("sync", ("shop",), "laptop")
            session = hub.initialize(token)
            relay.cut()
            for _ in range(2):  # the first waits for the pool; the next is told at once
                status, headers, body = _post(hub, "/mcp", TOOL_CALL, token, session)
                assert status == 503, body
                assert body["error"] == {"code": -32603, "message": UNAVAILABLE}
                assert body["id"] in (3, None)  # None: refused before its body was read
                assert headers.get("retry-after") == "5"
            status, headers, body = _post(hub, "/sync/hello", {"store_id": "a" * 32}, token, "")
            assert status == 503, body
            assert body == {"error": {"code": "unavailable", "message": UNAVAILABLE}}
            relay.restore()
            deadline = time.monotonic() + 15
            while (reply := _post(hub, "/mcp", TOOL_CALL, token, session))[0] != 200:
                assert time.monotonic() < deadline, reply
                time.sleep(0.5)
            assert reply[2]["result"]["content"][0]["text"].startswith("No matches.")
    finally:
        relay.cut()
