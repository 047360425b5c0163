"""A list write based on a reading (``based_on``, the Lists page's Edit form) checks that
reading and writes in one transaction: an agent's write can never land between the check and
the write and be lost.

The app runs under a real uvicorn on 127.0.0.1 in a thread of the test, on a SQLite file and on
a PostgreSQL schema. The agent writes from a connection of its own, at the moment the save
computes the list's version (a hook on ``items_version``): it either waits for the save's lock
(refused at once here) or lands first, and then the save must be refused.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from aletheia_mem.domain import worklists
from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.storage.contracts import HubStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web import work_pages
from tests.conftest import FakeClock
from tests.server.in_process import served_app
from tests.stores import target_of

AGENT_ITEMS = ["plan", "agent: fix the build"]


class Client:
    """One request per connection to the server on this port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.origin = f"http://127.0.0.1:{port}"

    def send(
        self, method: str, path: str, body: str | None, headers: dict[str, str]
    ) -> tuple[int, bytes, str]:
        """The status, body and Set-Cookie header."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body, headers)
            response = conn.getresponse()
            return response.status, response.read(), response.getheader("set-cookie") or ""
        finally:
            conn.close()

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {"Accept": "application/json", "Content-Type": "application/json"}
        status, data, _ = self.send(
            method, path, None if body is None else json.dumps(body), headers
        )
        return status, json.loads(data) if data else None

    def form(self, path: str, fields: dict[str, str]) -> int:
        cookie = self.send("GET", "/sign-in", None, {})[2]
        token = cookie.split(";")[0].partition("=")[2]
        headers = {
            "Origin": self.origin,
            "Cookie": f"aletheia_csrf={token}",
            "Content-Type": "application/x-www-form-urlencoded",
        }
        return self.send("POST", path, urlencode({"csrf": token, **fields}), headers)[0]

    def items(self, name: str) -> list[Any]:
        status, body = self.api("GET", f"/api/work-state/{name}?project=shop")
        assert status == 200, body
        found: list[Any] = body["items"]
        return found


@pytest.fixture
def client(store: HubStore, clock: FakeClock) -> Iterator[Client]:
    app = AppContext(store=store, clock=clock, default_project="shop", caller="pytest")
    sessions = SessionStore(store.sessions(), clock)
    with served_app(app, sessions) as port:
        yield Client(port)


def agent_write(target: Path | str, key: str, items: list[Any]) -> bool:
    """Write the list's items from a connection of the agent's own, not waiting for another
    writer's lock on it; whether the write went through."""
    text = json.dumps(items, separators=(",", ":"))
    if isinstance(target, Path):
        with closing(sqlite3.connect(target, timeout=0, isolation_level=None)) as conn:
            try:
                conn.execute("UPDATE memories SET text = ? WHERE dedupe_key = ?", (text, key))
            except sqlite3.OperationalError as error:
                assert "locked" in str(error)
                return False
        return True
    import psycopg

    with psycopg.connect(target, autocommit=True) as pg:
        pg.execute("SET lock_timeout = '200ms'")
        try:
            pg.execute("UPDATE memories SET text = %s WHERE dedupe_key = %s", (text, key))
        except psycopg.errors.LockNotAvailable:
            return False
    return True


def hook_version(
    monkeypatch: pytest.MonkeyPatch, at_call: int, write: Callable[[], bool]
) -> list[bool]:
    """Run ``write`` (once) when the save computes a list's version for the ``at_call``-th
    time, after it read the list: what it answered, once it ran."""
    real = worklists.items_version
    calls: list[int] = []
    ran: list[bool] = []

    def hooked(items: Sequence[object]) -> str:
        version = real(items)
        calls.append(1)
        if len(calls) == at_call:
            ran.append(write())
        return version

    monkeypatch.setattr(worklists, "items_version", hooked)
    monkeypatch.setattr(work_pages, "items_version", hooked)
    return ran


# How each save reaches the write: the API's check reads the list once; the page reads it to
# see it exists, then for the check.
SAVES: dict[str, tuple[int, Callable[[Client, str], int]]] = {
    "api write": (
        1,
        lambda c, seen: c.api("PUT", "/api/work-state/todo", {"items": ["mine"], "based_on": seen})[
            0
        ],
    ),
    "api rename": (
        1,
        lambda c, seen: c.api(
            "POST",
            "/api/work-state/todo/rename",
            {"to": "todo2", "items": ["mine"], "based_on": seen},
        )[0],
    ),
    "page save": (
        2,
        lambda c, seen: c.form(
            "/lists/save",
            {
                "project": "shop",
                "name": "todo",
                "editing": "todo",
                "items": "mine",
                "based_on": seen,
            },
        ),
    ),
}


@pytest.mark.parametrize("save", sorted(SAVES))
def test_an_agents_write_during_a_based_on_save_is_never_lost(
    client: Client, store: HubStore, monkeypatch: pytest.MonkeyPatch, save: str
) -> None:
    status, body = client.api("PUT", "/api/work-state/todo", {"items": ["plan"], "project": "shop"})
    assert status == 200, body
    seen = client.api("GET", "/api/work-state/todo?project=shop")[1]["version"]
    at_call, send = SAVES[save]
    target = target_of(store)
    ran = hook_version(monkeypatch, at_call, lambda: agent_write(target, "list:todo", AGENT_ITEMS))
    status = send(client, seen)
    monkeypatch.undo()
    assert len(ran) == 1, "the hook never ran"
    if ran[0]:  # the agent's write landed before the save's check: the save is refused
        assert status == 409, status
        assert client.items("todo") == AGENT_ITEMS
    else:  # the save held the list: the agent's write waits for it, then goes through
        assert status in (200, 303), status
        assert agent_write(target, "list:todo", AGENT_ITEMS)
