"""MCP sessions of the HTTP transport: one ``McpSession`` per ``Mcp-Session-Id``, in memory.

The store is capped and forgets sessions left idle too long. It is used from the event loop's
thread only, so it needs no lock.
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from aletheia.server.mcp import McpSession

MAX_SESSIONS = 1000
IDLE_SECONDS = 24 * 3600.0


@dataclass
class _Entry:
    session: McpSession
    last_used: float


class SessionStore:
    """Sessions by id, least recently used first; ids are 128-bit random hex."""

    def __init__(
        self,
        *,
        max_sessions: int = MAX_SESSIONS,
        idle_seconds: float = IDLE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._max = max_sessions
        self._idle = idle_seconds
        self._monotonic = monotonic

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, session: McpSession) -> str:
        """Keep a new session; past the cap the least recently used one is dropped."""
        now = self._monotonic()
        self._drop_expired(now)
        while len(self._entries) >= self._max:
            self._entries.popitem(last=False)
        session_id = secrets.token_hex(16)
        self._entries[session_id] = _Entry(session, now)
        return session_id

    def get(self, session_id: str) -> McpSession | None:
        """The live session with this id (now marked as used), or None."""
        entry = self._entries.get(session_id)
        if entry is None:
            return None
        now = self._monotonic()
        if now - entry.last_used > self._idle:
            del self._entries[session_id]
            return None
        entry.last_used = now
        self._entries.move_to_end(session_id)
        return entry.session

    def end(self, session_id: str) -> bool:
        """Forget a session; False when there was no such live session."""
        return self.get(session_id) is not None and self._entries.pop(session_id) is not None

    def _drop_expired(self, now: float) -> None:
        while self._entries:
            first = next(iter(self._entries.values()))
            if now - first.last_used <= self._idle:
                return
            self._entries.popitem(last=False)
