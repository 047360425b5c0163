"""MCP sessions of the HTTP transport: ids given at initialize, kept in the store's file.

Every worker process of a server reads the same table, so a session begun on one worker goes on
and ends on any other. What a session holds is fixed at initialize (the negotiated version and
the client's name) plus who owns it; the ``McpSession`` of each request is rebuilt from that.
Sessions left idle too long expire; past the cap of one owner's sessions that owner's least
recently used one goes (use is recorded once a minute at most, so "least recently" is to the
minute). One owner (a hub token) never ends another's sessions.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from aletheia_mem.clock import Clock
from aletheia_mem.storage.contracts import SessionRows
from aletheia_mem.storage.entries import SessionRow

MAX_SESSIONS = 1000
IDLE_MS = 24 * 3600 * 1000
# Use is written back at most this often per session: a write per request would cost more
# than the request itself, and expiry is counted in hours.
TOUCH_EVERY_MS = 60 * 1000


@dataclass(frozen=True)
class SessionState:
    """What a live session remembers between requests."""

    protocol_version: str
    client_name: str | None


@dataclass(frozen=True)
class Lookup:
    """A session as read, without writing: ``write_due`` when ``get`` would write (record the
    use, or remove the session that just expired)."""

    state: SessionState | None
    write_due: bool


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class SessionStore:
    """Sessions by 128-bit random hex id, each bound to an owner.

    Args:
        rows: the store's session rows (``HubStore.sessions()``); closed with this.
        clock: milliseconds now; idle expiry is measured with it.
    """

    def __init__(
        self,
        rows: SessionRows,
        clock: Clock,
        *,
        max_sessions: int = MAX_SESSIONS,  # per owner
        idle_ms: int = IDLE_MS,
    ) -> None:
        self._rows = rows
        self._clock = clock
        self._max = max_sessions
        self._idle = idle_ms
        self._touch_every = min(TOUCH_EVERY_MS, idle_ms // 10)

    def close(self) -> None:
        self._rows.close()

    def __len__(self) -> int:
        return self._rows.count()

    def add(self, owner: str, state: SessionState) -> str:
        """Keep a new session and return its id."""
        now = self._clock()
        session_id = secrets.token_hex(16)
        row = SessionRow(owner, state.protocol_version, state.client_name, now)
        self._rows.insert(
            _hash(session_id), row, expired_before=now - self._idle, keep_at_most=self._max
        )
        return session_id

    def get(self, session_id: str, owner: str) -> SessionState | None:
        """The live session with this id when ``owner`` may use it, else None."""
        id_hash = _hash(session_id)
        found = self._peek(id_hash, owner)
        if found.write_due:
            if found.state is None:
                self._rows.delete(id_hash)
            else:
                self._rows.touch(id_hash, self._clock())
        return found.state

    def peek(self, session_id: str, owner: str) -> Lookup:
        """What ``get`` answers, read only: it never waits for the file's write lock."""
        return self._peek(_hash(session_id), owner)

    def _peek(self, id_hash: str, owner: str) -> Lookup:
        row = self._rows.find(id_hash)
        if row is None or row.owner != owner:
            return Lookup(None, write_due=False)
        idle = self._clock() - row.last_used_at
        if idle > self._idle:
            return Lookup(None, write_due=True)
        state = SessionState(row.protocol_version, row.client_name)
        return Lookup(state, write_due=idle >= self._touch_every)

    def end(self, session_id: str, owner: str) -> bool:
        """End a session; False when ``owner`` has no such live session."""
        return self.get(session_id, owner) is not None and self._rows.delete(_hash(session_id))
