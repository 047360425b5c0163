"""MCP sessions of the HTTP transport: ids given at initialize, kept in the store's file.

Every worker process of a server reads the same table, so a session begun on one worker goes on
and ends on any other. What a session holds is fixed at initialize (the negotiated version and
the client's name) plus who owns it; the ``McpSession`` of each request is rebuilt from that.
Sessions left idle too long expire; past the cap of one owner's sessions that owner's least
recently used one goes (use is recorded once a minute at most, so "least recently" is to the
minute). Recording a use never waits for a store another process keeps busy: it is then tried
again at the session's next request, and until it is written this process counts the session's
idle time from the use it could not record. One owner (a hub token) never ends another's
sessions. A PostgreSQL hub's processes may remember a session's row for a moment
(``remember_s``), as they remember tokens: a session ended through one process then ends at the
others within that moment.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace

from aletheia_mem.clock import Clock
from aletheia_mem.errors import StoreReadOnlyError, StoreUnavailableError
from aletheia_mem.storage.contracts import SessionRows
from aletheia_mem.storage.entries import SessionRow

# What keeps a session's bookkeeping from the store while its reads still work: a store busy
# for a moment, or one this user may not write (reads stay served; the use is kept here).
_UNWRITTEN = (StoreUnavailableError, StoreReadOnlyError)

MAX_SESSIONS = 1000
IDLE_MS = 24 * 3600 * 1000
# Use is written back at most this often per session: a write per request would cost more
# than the request itself, and expiry is counted in hours.
TOUCH_EVERY_MS = 60 * 1000
# Past this many remembered sessions the memory starts again empty.
REMEMBERED_SESSIONS = 1000


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
        remember_s: how long a session's row, once read, is used without reading it again (0:
            every request reads it, and an end through another process holds at once).
            Unknown ids are never remembered.
    """

    def __init__(
        self,
        rows: SessionRows,
        clock: Clock,
        *,
        max_sessions: int = MAX_SESSIONS,  # per owner
        idle_ms: int = IDLE_MS,
        remember_s: float = 0.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._rows = rows
        self._clock = clock
        self._max = max_sessions
        self._idle = idle_ms
        self._touch_every = min(TOUCH_EVERY_MS, idle_ms // 10)
        self._remember_s = remember_s
        self._monotonic = monotonic
        self._remembered: dict[str, tuple[SessionRow, float]] = {}
        # Sessions this process ended, and when: a read begun before is not remembered.
        self._forgotten: dict[str, float] = {}
        # Uses this process could not record (the store was busy), by session: the last one.
        self._unrecorded: dict[str, int] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._rows.close()

    def sharing_rows(self, max_sessions: int) -> SessionStore:
        """Sessions in the same rows (closed with these), keeping at most ``max_sessions`` per
        owner: the web UI's sign-ins beside the MCP sessions, on no connection of their own."""
        return SessionStore(self._rows, self._clock, max_sessions=max_sessions, idle_ms=self._idle)

    def __len__(self) -> int:
        return self._rows.count()

    def add(self, owner: str, state: SessionState) -> str:
        """Keep a new session and return its id."""
        now = self._clock()
        session_id = secrets.token_hex(16)
        row = SessionRow(owner, state.protocol_version, state.client_name, now)
        id_hash = _hash(session_id)
        self._rows.insert(id_hash, row, expired_before=now - self._idle, keep_at_most=self._max)
        self._forget_owner(owner)  # the insert may have ended its least recently used session
        self._remember(id_hash, row, self._monotonic())
        return session_id

    def get(self, session_id: str, owner: str) -> SessionState | None:
        """The live session with this id when ``owner`` may use it, else None."""
        id_hash = _hash(session_id)
        found = self._peek(id_hash, owner)
        if found.write_due:
            if found.state is None:
                self._drop_expired(id_hash)
            else:
                self._touch(id_hash)
        return found.state

    def peek(self, session_id: str, owner: str) -> Lookup:
        """What ``get`` answers, read only: it never waits for the file's write lock."""
        return self._peek(_hash(session_id), owner)

    def _peek(self, id_hash: str, owner: str) -> Lookup:
        row = self._row(id_hash)
        if row is None or row.owner != owner:
            return Lookup(None, write_due=False)
        now = self._clock()
        with self._lock:
            used_at = max(row.last_used_at, self._unrecorded.get(id_hash, 0))
        if now - used_at > self._idle:
            return Lookup(None, write_due=True)
        state = SessionState(row.protocol_version, row.client_name)
        return Lookup(state, write_due=now - row.last_used_at >= self._touch_every)

    def end_other_owners(self, prefix: str, keep: str) -> int:
        """End the sessions of every owner named ``prefix...`` but ``keep`` (the web UI's of
        an earlier key, when the key changed); how many."""
        ended = self._rows.delete_other_owners(prefix, keep)
        with self._lock:
            self._remembered.clear()
        return ended

    def end(self, session_id: str, owner: str) -> bool:
        """End a session; False when ``owner`` has no such live session."""
        if self.get(session_id, owner) is None:
            return False
        id_hash = _hash(session_id)
        ended = self._rows.delete(id_hash)
        self._forget(id_hash)  # after the delete: a read still under way then is not kept
        return ended

    def _row(self, id_hash: str) -> SessionRow | None:
        """The session's row: remembered when read less than ``remember_s`` ago, else read."""
        if self._remember_s <= 0:
            return self._rows.find(id_hash)
        with self._lock:
            found = self._remembered.get(id_hash)
        if found is not None and self._monotonic() - found[1] < self._remember_s:
            return found[0]
        read_at = self._monotonic()
        row = self._rows.find(id_hash)
        if row is None:  # ended elsewhere, or never begun: nothing to keep, no tombstone
            with self._lock:
                self._remembered.pop(id_hash, None)
        else:
            self._remember(id_hash, row, read_at)
        return row

    def _touch(self, id_hash: str) -> None:
        """Record the session's use, in the store and in what this process remembers; when the
        store is busy or read-only, only here (the next request tries again): a read never
        waits for it."""
        now = self._clock()
        try:
            self._rows.touch(id_hash, now)
        except _UNWRITTEN:
            with self._lock:
                if len(self._unrecorded) >= REMEMBERED_SESSIONS:
                    self._unrecorded.clear()
                self._unrecorded[id_hash] = now
            return
        with self._lock:
            self._unrecorded.pop(id_hash, None)
            found = self._remembered.get(id_hash)
            if found is not None:
                self._remembered[id_hash] = (replace(found[0], last_used_at=now), found[1])

    def _drop_expired(self, id_hash: str) -> None:
        """Remove a session that expired, unless the store is busy or read-only (a later
        request, or the next initialize, removes it): it is gone for its client either way."""
        with suppress(*_UNWRITTEN):
            self._rows.delete(id_hash, wait=False)
        self._forget(id_hash)
        with self._lock:
            self._unrecorded.pop(id_hash, None)

    def _remember(self, id_hash: str, row: SessionRow, read_at: float) -> None:
        """Keep a row read at ``read_at``, unless this process ended its session since."""
        if self._remember_s <= 0:
            return
        with self._lock:
            ended_at = self._forgotten.get(id_hash)
            if ended_at is not None and ended_at >= read_at:
                return
            if len(self._remembered) >= REMEMBERED_SESSIONS:
                self._remembered.clear()
            self._remembered[id_hash] = (row, read_at)

    def _forget_owner(self, owner: str) -> None:
        """Forget every remembered session of ``owner``: the next use of each reads it again."""
        if self._remember_s <= 0:
            return
        with self._lock:
            mine = [key for key, (row, _) in self._remembered.items() if row.owner == owner]
        for id_hash in mine:
            self._forget(id_hash)

    def _forget(self, id_hash: str) -> None:
        """Drop the session's row, and keep a read already under way from bringing it back."""
        if self._remember_s <= 0:
            return
        now = self._monotonic()
        with self._lock:
            self._remembered.pop(id_hash, None)
            if len(self._forgotten) >= REMEMBERED_SESSIONS:  # older than any read under way
                self._forgotten = {
                    key: at for key, at in self._forgotten.items() if now - at < self._remember_s
                }
            self._forgotten[id_hash] = now
