"""MCP sessions over HTTP: random ids, a cap, idle expiry and ending."""

from __future__ import annotations

from dataclasses import dataclass

from aletheia.server.mcp import McpSession
from aletheia.server.sessions import SessionStore
from aletheia.tools.app import AppContext


@dataclass
class Ticker:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


def test_sessions_are_found_by_their_random_id(app: AppContext) -> None:
    store = SessionStore()
    first, second = McpSession(app=app), McpSession(app=app)
    first_id, second_id = store.add(first), store.add(second)
    assert first_id != second_id
    assert len(first_id) == 32
    assert store.get(first_id) is first
    assert store.get(second_id) is second
    assert store.get("f" * 32) is None


def test_a_session_left_idle_too_long_expires(app: AppContext) -> None:
    ticker = Ticker()
    store = SessionStore(idle_seconds=60, monotonic=ticker)
    kept, dropped = store.add(McpSession(app=app)), store.add(McpSession(app=app))
    ticker.now += 50
    assert store.get(kept) is not None  # use keeps it alive
    ticker.now += 50
    assert store.get(kept) is not None
    assert store.get(dropped) is None
    assert len(store) == 1


def test_past_the_cap_the_least_recently_used_session_goes(app: AppContext) -> None:
    ticker = Ticker()
    store = SessionStore(max_sessions=2, monotonic=ticker)
    oldest = store.add(McpSession(app=app))
    ticker.now += 1
    newer = store.add(McpSession(app=app))
    ticker.now += 1
    assert store.get(oldest) is not None  # now the most recently used
    third = store.add(McpSession(app=app))
    assert len(store) == 2
    assert store.get(newer) is None
    assert store.get(oldest) is not None
    assert store.get(third) is not None


def test_an_ended_session_is_gone(app: AppContext) -> None:
    store = SessionStore()
    session_id = store.add(McpSession(app=app))
    assert store.end(session_id) is True
    assert store.get(session_id) is None
    assert store.end(session_id) is False
