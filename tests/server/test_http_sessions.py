"""MCP sessions over HTTP: random ids stored hashed, owners, idle expiry, a cap, ending, and one
table that every worker process of a server shares."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.server.sessions import (
    IDLE_MS,
    REMEMBERED_SESSIONS,
    Lookup,
    SessionState,
    SessionStore,
)
from aletheia_mem.storage.contracts import HubStore, SessionRows
from aletheia_mem.storage.entries import SessionRow
from tests.conftest import FakeClock
from tests.stores import open_target, raw_rows, target_of

STATE = SessionState("2025-11-25", "pytest")
MINUTE_MS = 60_000


@pytest.fixture
def sessions(store: HubStore, clock: FakeClock) -> Iterator[SessionStore]:
    opened = SessionStore(store.sessions(), clock)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def later() -> Iterator[ExitStack]:
    """Closes what a test registers (a SessionStore's rows hold their own connections)."""
    with ExitStack() as stack:
        yield stack


def stored_columns(store: HubStore) -> list[tuple[object, ...]]:
    return raw_rows(store, "SELECT * FROM mcp_sessions")


def test_sessions_are_found_by_their_random_id_with_what_initialize_learned(
    sessions: SessionStore,
) -> None:
    first = sessions.add("", STATE)
    second = sessions.add("", SessionState("2025-06-18", None))
    assert first != second
    assert len(first) == 32 and int(first, 16) >= 0
    assert sessions.get(first, "") == STATE
    assert sessions.get(second, "") == SessionState("2025-06-18", None)
    assert sessions.get("f" * 32, "") is None


def test_only_a_hash_of_the_id_is_stored(sessions: SessionStore, store: HubStore) -> None:
    session_id = sessions.add("", STATE)
    rows = stored_columns(store)
    assert len(rows) == 1
    assert all(session_id not in str(value) for value in rows[0])


def test_a_session_is_only_for_its_owner(sessions: SessionStore) -> None:
    session_id = sessions.add("token-1", STATE)
    assert sessions.get(session_id, "token-2") is None
    assert sessions.end(session_id, "token-2") is False
    assert sessions.get(session_id, "token-1") == STATE


def test_a_session_left_idle_too_long_expires(store: HubStore, clock: FakeClock) -> None:
    sessions = SessionStore(store.sessions(), clock, idle_ms=10 * MINUTE_MS)
    kept, dropped = sessions.add("", STATE), sessions.add("", STATE)
    clock.advance(8 * MINUTE_MS)
    assert sessions.get(kept, "") is not None  # use keeps it alive
    clock.advance(8 * MINUTE_MS)
    assert sessions.get(kept, "") is not None
    assert sessions.get(dropped, "") is None
    assert len(sessions) == 1
    sessions.close()


def test_past_the_cap_the_least_recently_used_session_goes(
    store: HubStore, clock: FakeClock
) -> None:
    sessions = SessionStore(store.sessions(), clock, max_sessions=2)
    oldest = sessions.add("", STATE)
    clock.advance(2 * MINUTE_MS)
    newer = sessions.add("", STATE)
    clock.advance(2 * MINUTE_MS)
    assert sessions.get(oldest, "") is not None  # now the most recently used
    third = sessions.add("", STATE)
    assert len(sessions) == 2
    assert sessions.get(newer, "") is None
    assert sessions.get(oldest, "") is not None
    assert sessions.get(third, "") is not None
    sessions.close()


def last_used(store: HubStore) -> list[object]:
    return [row[0] for row in raw_rows(store, "SELECT last_used_at FROM mcp_sessions")]


def test_peek_reads_without_writing_and_says_when_get_would_write(
    store: HubStore, clock: FakeClock
) -> None:
    sessions = SessionStore(store.sessions(), clock, idle_ms=10 * MINUTE_MS)
    session_id, begun = sessions.add("", STATE), clock.now
    assert sessions.peek(session_id, "").state == STATE
    assert not sessions.peek(session_id, "").write_due
    clock.advance(MINUTE_MS)
    assert sessions.peek(session_id, "").write_due  # a use to record
    assert last_used(store) == [begun]
    assert sessions.get(session_id, "") == STATE
    assert last_used(store) == [clock.now]
    assert not sessions.peek(session_id, "").write_due
    clock.advance(11 * MINUTE_MS)
    assert sessions.peek(session_id, "") == Lookup(None, write_due=True)  # expired, still kept
    assert len(sessions) == 1
    assert sessions.get(session_id, "") is None
    assert len(sessions) == 0
    assert sessions.peek(session_id, "") == Lookup(None, write_due=False)
    assert sessions.peek(sessions.add("", STATE), "someone else") == Lookup(None, False)
    sessions.close()


def test_an_ended_session_is_gone(sessions: SessionStore) -> None:
    session_id = sessions.add("", STATE)
    assert sessions.end(session_id, "") is True
    assert sessions.get(session_id, "") is None
    assert sessions.end(session_id, "") is False


def _begin_session(target: Path | str, out: multiprocessing.Queue[str]) -> None:
    store = open_target(target)
    sessions = SessionStore(store.sessions(), FakeClock())
    out.put(sessions.add("", STATE))
    sessions.close()
    store.close()


def _end_session(target: Path | str, session_id: str, out: multiprocessing.Queue[bool]) -> None:
    store = open_target(target)
    sessions = SessionStore(store.sessions(), FakeClock())
    out.put(sessions.end(session_id, ""))
    sessions.close()
    store.close()


def test_a_session_begun_in_one_process_is_used_and_ended_in_another(
    sessions: SessionStore, store: HubStore
) -> None:
    context = multiprocessing.get_context("spawn")
    begun: multiprocessing.Queue[str] = context.Queue()
    worker = context.Process(target=_begin_session, args=(target_of(store), begun))
    worker.start()
    session_id = begun.get(timeout=60)
    worker.join(timeout=60)
    assert sessions.get(session_id, "") == STATE
    ended: multiprocessing.Queue[bool] = context.Queue()
    worker = context.Process(target=_end_session, args=(target_of(store), session_id, ended))
    worker.start()
    assert ended.get(timeout=60) is True
    worker.join(timeout=60)
    assert sessions.get(session_id, "") is None


class Ticks:
    """A monotonic clock the test moves by hand, in seconds."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_remembered_session_is_read_again_once_its_moment_is_over(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    ticks = Ticks()
    here = later.enter_context(
        closing(SessionStore(store.sessions(), clock, remember_s=0.5, monotonic=ticks))
    )
    # another process on the same store
    elsewhere = later.enter_context(closing(SessionStore(store.sessions(), clock)))
    session_id = here.add("token-1", STATE)
    assert elsewhere.end(session_id, "token-1") is True
    ticks.now += 0.4
    assert here.get(session_id, "token-1") == STATE  # remembered, not read
    assert here.get(session_id, "token-2") is None  # still only for its owner
    ticks.now += 0.1
    assert here.get(session_id, "token-1") is None  # read again: ended
    assert here.get(session_id, "token-1") is None


def test_a_session_ended_through_this_store_ends_at_once_though_remembered(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    here = later.enter_context(
        closing(SessionStore(store.sessions(), clock, remember_s=60.0, monotonic=Ticks()))
    )
    session_id = here.add("", STATE)
    assert here.get(session_id, "") == STATE
    assert here.end(session_id, "") is True
    assert here.get(session_id, "") is None
    assert here.end(session_id, "") is False


def test_unknown_session_ids_take_no_room_from_the_remembered_ones(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    """A client sending made-up ids (each read from the store, found in none) never fills the
    memory: had one been remembered, the memory would have started again empty, and the session
    ended elsewhere been read again (ended) at once."""
    here = later.enter_context(
        closing(SessionStore(store.sessions(), clock, remember_s=60.0, monotonic=Ticks()))
    )
    elsewhere = later.enter_context(closing(SessionStore(store.sessions(), clock)))
    session_id = here.add("", STATE)
    assert elsewhere.end(session_id, "") is True  # here still remembers it, for a moment
    for n in range(REMEMBERED_SESSIONS):
        assert here.get(f"{n:032x}", "") is None
    assert here.get(session_id, "") == STATE


def test_a_remembered_session_still_expires_and_records_its_use(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    ticks = Ticks()
    here = later.enter_context(
        closing(
            SessionStore(
                store.sessions(), clock, idle_ms=10 * MINUTE_MS, remember_s=3600.0, monotonic=ticks
            )
        )
    )
    session_id = here.add("", STATE)
    clock.advance(9 * MINUTE_MS)
    assert here.get(session_id, "") == STATE  # used: recorded in the store
    clock.advance(9 * MINUTE_MS)
    assert here.get(session_id, "") == STATE  # 18 minutes old, 9 after its last use: live
    assert raw_rows(store, "SELECT last_used_at FROM mcp_sessions") == [(clock(),)]
    clock.advance(11 * MINUTE_MS)
    assert here.get(session_id, "") is None  # idle too long, remembered or not
    assert stored_columns(store) == []


class _EndedWhileRead:
    """Session rows whose first ``find`` lets another request of this process end the session
    after the row was read and before it is remembered (a thread's race, made to happen)."""

    def __init__(self, rows: SessionRows) -> None:
        self.rows = rows
        self.end_during_find: Callable[[], None] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rows, name)

    def find(self, id_hash: str) -> SessionRow | None:
        found = self.rows.find(id_hash)
        end, self.end_during_find = self.end_during_find, None
        if end is not None:
            end()
        return found


def test_a_session_ended_during_a_read_is_not_remembered_by_that_read(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    ticks = Ticks()
    rows = _EndedWhileRead(store.sessions())
    here = later.enter_context(closing(SessionStore(rows, clock, remember_s=60.0, monotonic=ticks)))  # type: ignore[arg-type]
    session_id = here.add("", STATE)
    ticks.now += 61  # the add's row is old: the next get reads the store
    rows.end_during_find = lambda: here.end(session_id, "")
    here.get(session_id, "")  # the read under way when the session ended
    assert here.get(session_id, "") is None  # ended at once here, not half a second later


def test_a_session_past_its_owners_cap_ends_at_once_though_remembered(
    store: HubStore, clock: FakeClock, later: ExitStack
) -> None:
    here = later.enter_context(
        closing(
            SessionStore(
                store.sessions(), clock, max_sessions=2, remember_s=60.0, monotonic=Ticks()
            )
        )
    )
    first = here.add("token-1", STATE)
    other = here.add("token-2", STATE)
    clock.advance(MINUTE_MS)
    second = here.add("token-1", STATE)
    clock.advance(MINUTE_MS)
    assert here.get(second, "token-1") == STATE  # remembered, and now the most recently used
    here.add("token-1", STATE)  # a third: token-1's least recently used (the first) goes
    assert here.get(first, "token-1") is None
    assert here.get(second, "token-1") == STATE
    assert here.get(other, "token-2") == STATE  # another owner's stays


@pytest.mark.sqlite_only  # SQLite's one write lock
def test_a_use_not_recorded_while_the_store_is_busy_still_keeps_the_session_alive(
    sessions: SessionStore, store: HubStore, clock: FakeClock
) -> None:
    session_id = sessions.add("", STATE)
    begun = clock.now
    with closing(sqlite3.connect(target_of(store), isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process's long write
        clock.advance(IDLE_MS - MINUTE_MS)
        started = time.monotonic()
        assert sessions.get(session_id, "") == STATE  # its use is due: not recorded, no wait
        assert time.monotonic() - started < 1
        assert last_used(store) == [begun]
        clock.advance(2 * MINUTE_MS)  # a day after the last recorded use, not after this one
        assert sessions.get(session_id, "") == STATE
        writer.execute("ROLLBACK")
    assert sessions.get(session_id, "") == STATE
    assert last_used(store) == [clock.now]  # recorded once the store is free
