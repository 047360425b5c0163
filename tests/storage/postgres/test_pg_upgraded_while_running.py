"""A process of this version still running when a newer version migrates its PostgreSQL store
(a rolling upgrade of a hub): every write is refused in one message, as on SQLite, nothing is
written, reads go on, and a migration under way holds the writes until it commits."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage.entries import AuditEntry, Rule
from aletheia_mem.storage.postgres.database import redact_url
from aletheia_mem.storage.postgres.store import PostgresStore, open_postgres_store
from tests.storage.postgres.newer_version import LATEST, contents, migrate_one_step_further
from tests.storage.postgres.test_pg_memories import _new
from tests.storage.postgres.test_pg_save_cost import traced

ROW = AuditEntry(5_000, "dave", "save_memory", "shop", "ok")
WAIT_SECONDS = 10.0


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = open_postgres_store(pg_url, pool_size=2)
    try:
        yield opened
    finally:
        opened.close()


def _refusal(url: str) -> str:
    return (
        f"The store {redact_url(url)} was upgraded by a newer version of Aletheia while this"
        f" process ran (schema {LATEST + 1}; this process knows up to {LATEST}); nothing was"
        " changed. Restart this server (or the tool that started it) to use the new version."
    )


def _rule() -> Rule:
    return Rule("r-1", "Use pnpm", "installing", "project", "shop", (), (), "test", 1, 1, True)


def test_every_kind_of_write_is_refused_once_a_newer_version_migrated(
    store: PostgresStore, pg_url: str
) -> None:
    saved, _ = store.add_memory(_new("Use pnpm"))
    open_postgres_store(pg_url, pool_size=1).close()  # a peer of this version: no refusal
    store.add_audit(ROW)
    migrate_one_step_further(pg_url)
    before = contents(pg_url)
    writes = {
        "one statement (write_with)": lambda: store.add_memory(_new("Use yarn")),
        "a transaction (write)": lambda: store.add_rule(_rule()),
        "an episode (write)": lambda: store.start_episode("shop", "test", 1),
        "a statement (audit)": lambda: store.add_audit(ROW),
        "a rate window hit": lambda: store.rate_windows().hit("k", 1, 60, 60_000, 1),
        "a session touch": lambda: store.sessions().touch("x" * 64, 1),
    }
    for name, write in writes.items():
        with pytest.raises(StoreTooNewError) as refused:
            write()
        assert refused.value.message == _refusal(pg_url), name
    assert contents(pg_url) == before
    assert store.get_memory(saved.id) == saved  # reads go on
    with pytest.raises(StoreTooNewError, match="upgraded by a newer version"):
        store.check_schema()


def test_the_first_refusal_may_come_from_the_readiness_check(
    store: PostgresStore, pg_url: str
) -> None:
    assert store.check_schema() == LATEST
    migrate_one_step_further(pg_url)
    with pytest.raises(StoreTooNewError) as refused:
        store.check_schema()
    assert refused.value.message == _refusal(pg_url)
    with pytest.raises(StoreTooNewError):  # refused without asking the database again
        store.add_memory(_new("Use yarn"))
    assert store.count_memories(None) == 0


def test_a_refused_process_stays_not_ready_though_the_schema_went_back(
    store: PostgresStore, pg_url: str
) -> None:
    migrate_one_step_further(pg_url)
    with pytest.raises(StoreTooNewError):
        store.add_memory(_new("Use yarn"))
    with psycopg.connect(pg_url) as conn:  # only a test takes a migration back
        conn.execute("DELETE FROM schema_migrations WHERE version > %s", (LATEST,))
    with pytest.raises(StoreTooNewError):  # /healthz tells what the writes do: refused
        store.check_schema()


def _waiting_for_the_migration_lock(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            # this run's database only: another test process's waits are not this save's
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ).fetchone()
    return row is not None and int(row[0]) > 0


def test_a_write_during_a_migration_waits_for_it_and_is_then_refused(
    store: PostgresStore, pg_url: str
) -> None:
    migration = migrate_one_step_further(pg_url, commit=False)
    outcome: list[BaseException | None] = []

    def save() -> None:
        try:
            store.add_memory(_new("Use yarn"))
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)

    writer = threading.Thread(target=save)
    try:
        writer.start()
        deadline, pause = time.monotonic() + WAIT_SECONDS, threading.Event()
        while not _waiting_for_the_migration_lock(pg_url) and time.monotonic() < deadline:
            pause.wait(0.02)
        assert _waiting_for_the_migration_lock(pg_url), "the save did not wait for the lock"
        assert outcome == []
    finally:
        migration.commit()
        migration.close()
        writer.join(WAIT_SECONDS)
    [error] = outcome
    assert isinstance(error, StoreTooNewError), error
    assert store.count_memories(None) == 0


def _turns(lines: list[str]) -> list[str]:
    """What the client sent before each wait for the server's answer (a round trip each,
    however many statements went in it), one string per round trip."""
    turns, sent, last = [], "", "B"
    for line in lines:
        sender = line.split("\t")[0]
        if sender == "F":
            sent += line + "\n"
        elif last == "F":
            turns.append(sent)
            sent = ""
        last = sender
    return turns


def test_the_guard_adds_no_round_trip(pg_url: str) -> None:
    one = open_postgres_store(pg_url, pool_size=1)
    try:
        with traced(one) as saved:
            one.add_memory(_new("Use pnpm"))  # one statement: guard and save together
        with traced(one) as ruled:
            one.add_rule(_rule())  # BEGIN and the guard together, the rule, COMMIT
        with traced(one) as audited:
            one.add_audit(ROW)
    finally:
        one.close()
    [save] = _turns(saved)
    assert "pg_advisory_xact_lock_shared" in save and "INSERT INTO memories" in save
    [audit] = _turns(audited)
    assert "schema_migrations" in audit and "INSERT INTO audit" in audit
    begin, rule, commit = _turns(ruled)
    assert "BEGIN" in begin and "pg_advisory_xact_lock_shared" in begin
    assert "schema_migrations" in begin and "INSERT INTO rules" in rule and "COMMIT" in commit
