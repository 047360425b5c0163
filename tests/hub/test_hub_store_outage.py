"""A PostgreSQL hub whose database goes away (a TCP relay the test cuts, the shared server left
alone): every protected request, and every page, is answered 503 with Retry-After, saying
nothing of the database (its address goes to the hub's log, one line), and the hub serves again
once the database is back. A hub whose connections the server ended (a restart, an operator's
pg_terminate_backend) serves its next request at once."""

from __future__ import annotations

import html
import http.client
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from urllib.parse import urlencode, urlsplit, urlunsplit

import psycopg
import pytest

from aletheia_mem.server.http import UNAVAILABLE
from tests.hub.helpers import Hub, running_hub
from tests.pg import FIXTURE_APPLICATION
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


@contextmanager
def _relayed_hub(pg_url: str) -> Iterator[tuple[Relay, Hub]]:
    """A hub reaching the database through a relay the test may cut (cut at the end too)."""
    parts = urlsplit(pg_url)
    relay = Relay((parts.hostname or "127.0.0.1", parts.port or 5432))
    user = f"{parts.username}@" if parts.username else ""
    through = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{relay.port}"))
    try:
        with running_hub(through, "--rate-limit", "0") as hub:
            yield relay, hub
    finally:
        relay.cut()


def test_a_hub_whose_database_is_gone_answers_503_and_serves_once_it_is_back(
    pg_url: str,
) -> None:
    with _relayed_hub(pg_url) as (relay, hub):
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


def _page(
    hub: Hub, method: str, path: str, headers: dict[str, str], body: str = ""
) -> tuple[int, dict[str, str], str]:
    """Status, headers (lower-case names) and text of one page request over HTTP."""
    parts = urlsplit(hub.url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=40)
    try:
        conn.request(method, path, body or None, headers)
        answer = conn.getresponse()
        found = {name.lower(): value for name, value in answer.getheaders()}
        return answer.status, found, answer.read().decode()
    finally:
        conn.close()


def test_the_hub_pages_answer_503_with_one_log_line_while_the_database_is_gone(
    pg_url: str,
) -> None:
    with _relayed_hub(pg_url) as (relay, hub):
        admin = hub.token("admin", None, "ops")
        bearer = {"Authorization": f"Bearer {admin}"}
        assert _page(hub, "GET", "/tokens", bearer)[0] == 200
        status, headers, _ = _page(hub, "GET", "/sign-in", {})
        assert status == 200
        found = re.search(r"aletheia_csrf=([^;]+)", headers["set-cookie"])
        assert found is not None
        csrf = found.group(1)
        relay.cut()
        sign_in = (
            "POST",
            "/sign-in",
            {
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": hub.url,
                "Cookie": f"aletheia_csrf={csrf}",
            },
            urlencode({"csrf": csrf, "key": admin, "next": "/tokens"}),
        )
        # The first waits for the pool (10 s); the next are told at once.
        for method, path, sent, body in (
            ("GET", "/tokens", bearer, ""),
            ("GET", "/audit", bearer, ""),
            sign_in,
        ):
            status, headers, text = _page(hub, method, path, sent, body)
            assert status == 503, (path, text[:300])
            assert headers.get("retry-after") == "5", path
            assert html.escape(UNAVAILABLE) in text, path
            assert "postgresql://" not in text, path
    logged = "".join(hub.log.queue)
    assert "Traceback" not in logged, logged[-2000:]
    for path in ("/tokens", "/audit", "/sign-in"):
        assert f"Page {path} failed: Cannot reach the PostgreSQL store at" in logged, logged


# The hub's connections: every one of the test's database but the fixtures' and the asker's.
HUB_BACKENDS = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
    f" AND pid <> pg_backend_pid() AND application_name <> '{FIXTURE_APPLICATION}'"
)


def test_a_hub_whose_connections_the_server_ended_serves_the_next_request_at_once(
    pg_url: str,
) -> None:
    """pg_terminate_backend of every connection of a hub holding several (as a server restart
    ends them): the pool's wait between two broken ones (1 s, 2 s, 4 s...) kept the next
    request 10 s, then answered 503, with the server up the whole time."""
    with (
        running_hub(pg_url, "--rate-limit", "0") as hub,
        psycopg.connect(pg_url, autocommit=True) as admin,
    ):
        token = hub.token("sync", ("shop",), "laptop")
        session = hub.initialize(token)
        deadline = time.monotonic() + 30
        with ThreadPoolExecutor(12) as pool:  # a busy hub: its pool grows
            while len(pids := admin.execute(HUB_BACKENDS).fetchall()) < 5:
                assert time.monotonic() < deadline, "the hub's pool did not grow"
                calls = [
                    pool.submit(_post, hub, "/mcp", TOOL_CALL, token, session) for _ in range(24)
                ]
                assert all(call.result()[0] == 200 for call in calls)
        ended = [pid for (pid,) in pids]
        for pid in ended:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        while admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (ended,)
        ).fetchone() != (0,):
            assert time.monotonic() < deadline + 5, "the ended connections did not end"
            time.sleep(0.05)
        status, _, body = _post(hub, "/mcp", TOOL_CALL, token, session)
    # It waited 10 s, then 503. How it waits now (each dead connection given back at once, one
    # wait for the pool at most) is counted in test_pg_ended_connections.
    assert status == 200, body
    assert body["result"]["content"][0]["text"].startswith("No matches.")
