"""Pooled connections to one PostgreSQL database, its numbered migrations, and rows read by name.

Every store part on PostgreSQL reads and writes through one ``PgDatabase``: ``read()`` lends a
connection for a few statements, ``write()`` runs one transaction (committed on success, rolled
back on any error), ``write_with()`` one transaction of one statement (a save without facts).
Connection problems become ``StoreUnavailableError``, one line for the user. Every write is
refused once a newer version has migrated the database (``schema_guard``), with no round trip
added.

The pool's connections are in autocommit: a read is one round trip per statement, with no
BEGIN/COMMIT (and no ROLLBACK when the pool takes the connection back), and ``write()`` opens
its transaction explicitly. A connection lent out is not asked whether it still works (a round
trip per request): its socket is polled instead, which finds one the server closed. One found
closed is dropped and the next taken at once: after a restart, every idle connection is dead,
and none of them may cost the request a wait.

A server that is down makes a request fail within ``POOL_WAIT_S`` (and the next ones at once,
while a new connection is refused), never wait longer than a client does; the first request
after it is back is served.
"""

from __future__ import annotations

import logging
import re
import select
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import psycopg
from psycopg.abc import Params
from psycopg.rows import RowMaker, tuple_row
from psycopg_pool import ConnectionPool, PoolTimeout

from aletheia_mem.errors import (
    ConflictError,
    InvalidInputError,
    NoStoreError,
    StoreUnavailableError,
)
from aletheia_mem.storage.audit_tools import redact_audit_tools
from aletheia_mem.storage.canonical_keys import canonicalize_keys
from aletheia_mem.storage.migrate import newer_store
from aletheia_mem.storage.postgres.schema_guard import MIGRATION_LOCK, PgSchemaGuard
from aletheia_mem.storage.riders import Rider, pending_rider

# Read as plain files, like the SQLite migrations.
_MIGRATIONS_DIR = Path(__file__).with_name("migrations")
NFC_KEYS_STEP = 20  # its SQL is a no-op; ``canonicalize_keys`` does the work
AUDIT_TOOLS_STEP = 22  # likewise: ``redact_audit_tools``
DEFAULT_POOL_SIZE = 8
# Transactions that lost to another writer's (SQLSTATE class 40): worth running again.
_LOST_TO_ANOTHER_WRITER = (
    psycopg.errors.DeadlockDetected,
    psycopg.errors.SerializationFailure,
    psycopg.errors.TransactionRollback,
)
CONNECT_TIMEOUT_S = 10
# How long a request waits for a pooled connection, and how long the pool goes on trying to
# replace a lost one before it leaves that to the next request that needs one: both well under
# a client's timeout (the official MCP client's is 30 s, psycopg_pool's own wait 30 s too), and
# the pool's retries, which back off up to minutes, never keep a server that is back unused.
POOL_WAIT_S = 10.0
# How long a statement waits for a lock another session holds (a `LOCK TABLE`, a long
# transaction) before it fails, rather than keep the request and its connection waiting.
LOCK_WAIT_S = 10.0
# What the user connected may not do: the store is out of its reach, told as unavailable.
_REFUSED_BY_RIGHTS = (psycopg.errors.InsufficientPrivilege, psycopg.errors.InvalidSchemaName)

logger = logging.getLogger(__name__)


class NoSuchDatabaseError(StoreUnavailableError, NoStoreError):
    """The server answered and has no database of that name: no store there, as a missing
    store file (exit code 7)."""

    code = NoStoreError.code


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def is_postgres_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def redact_url(url: str) -> str:
    """``url`` (or a key=value string) as a URL without its password, fit for logs and errors.

    Raises:
        InvalidInputError: psycopg cannot read it (what it says, its quoted parts left out:
            they may be the password's).
    """
    try:
        conninfo = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as error:
        reason = re.sub(r'"[^"]*"', '"…"', _first_line(error)).rstrip(".")
        raise InvalidInputError(
            f"The PostgreSQL connection string cannot be read ({reason}); it is not shown, as"
            " it may hold a password. Write it as postgresql://user:password@host:port/dbname"
            " or as host=... dbname=... key=value pairs."
        ) from None
    host = conninfo.get("host") or "localhost"
    port = conninfo.get("port") or "5432"
    user = str(conninfo.get("user") or "")
    name = conninfo.get("dbname") or ""
    return f"postgresql://{user + '@' if user else ''}{host}:{port}/{name}"


class Row(tuple[Any, ...]):
    """A row read by position or by column name, as ``sqlite3.Row`` is."""

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._index[key])
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self._index)

    def without_first(self) -> Row:
        """The row without its first column (whose name no other column may have)."""
        index = {name: i - 1 for name, i in self._index.items() if i > 0}
        return Row(self[1:], index)


def row_factory(cursor: psycopg.Cursor[Any]) -> RowMaker[Row]:
    names = [column.name for column in cursor.description or ()]
    index = {name: i for i, name in enumerate(names)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


def rows_on_generic_plan(
    conn: psycopg.Connection[Any], sql: str, params: dict[str, Any]
) -> list[tuple[Any, ...]]:
    """The rows of one read statement (one snapshot) run on its generic plan, in one round trip.

    For a statement whose plan does not depend on its parameters' values, which PostgreSQL would
    otherwise plan again at nearly every run (a custom plan looked cheaper): once prepared (psycopg
    does it after 5 runs), the plan is made once per connection."""
    with conn.pipeline():
        conn.execute("BEGIN")
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor = conn.cursor(row_factory=tuple_row).execute(sql, params)
        conn.execute("COMMIT")
    return cursor.fetchall()


def check_idle_connection(conn: psycopg.Connection[Any]) -> None:
    """Raise if an idle connection of the pool no longer works.

    An idle connection has nothing to read unless the server closed it (a restart, a
    terminated backend, an idle timeout) or sent a notice: only then is the server asked, so
    the usual checkout costs no round trip."""
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    if _readable(conn.fileno()):
        ConnectionPool.check_connection(conn)


def limit_lock_waits(conn: psycopg.Connection[Any]) -> None:
    """A new connection's statements wait ``LOCK_WAIT_S`` at most for a lock (then fail with
    "lock timeout", told as the store failing)."""
    conn.execute(f"SET lock_timeout = {int(LOCK_WAIT_S * 1000)}")


def _readable(fd: int) -> bool:
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLERR | select.POLLHUP)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def run_rider(rider: Rider, conn: psycopg.Connection[Any]) -> int:
    """The rider's INSERT in ``conn``'s transaction; the row's id."""
    [row] = conn.execute(rider.sql + " RETURNING id", rider.params).fetchall()
    return int(row[0])


class PgDatabase:
    """A pool of connections to one database, migrated on open."""

    def __init__(self, url: str, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.url = url
        self.display_url = redact_url(url)
        self._pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={
                "row_factory": row_factory,
                "connect_timeout": CONNECT_TIMEOUT_S,
                "autocommit": True,
            },
            configure=limit_lock_waits,
            open=False,
            name="aletheia",
            timeout=POOL_WAIT_S,
            reconnect_timeout=POOL_WAIT_S,
        )
        self._closed = threading.Event()
        self._unreachable = threading.Event()  # a request found no server answering
        with self._as_clear_errors():  # fail at once, not after the pool's retries
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            with self._as_clear_errors(), self._lend() as conn, _transaction(conn):
                known = migrate(conn, self.display_url)  # not guarded: it holds the lock
        except BaseException:
            self._pool.close()
            raise
        self._guard = PgSchemaGuard(self.display_url, known)

    @contextmanager
    def read(self) -> Iterator[psycopg.Connection[Row]]:
        """A connection for reads (in autocommit: each statement is its own snapshot)."""
        with self._as_clear_errors(), self._lend() as conn:
            yield conn

    @contextmanager
    def _lend(self) -> Iterator[psycopg.Connection[Row]]:
        """A pooled connection; while the server was last found unreachable, a new connection
        is tried first, so that each request fails at once (saying why) until it answers.

        Raises:
            StoreUnavailableError: no connection within ``POOL_WAIT_S``, or none can be made.
        """
        if self._unreachable.is_set():
            self._check_reachable()
        try:
            conn = self._working_connection()
        except PoolTimeout as error:
            self._check_reachable()  # the server down says so, rather than "timed out"
            raise StoreUnavailableError(unavailable(error, self.display_url)) from None
        try:
            with conn:  # as the pool's own ``connection()``: committed, or rolled back
                yield conn
        finally:
            self._pool.putconn(conn)

    def _working_connection(self) -> psycopg.Connection[Row]:
        """A pooled connection not found broken, within ``POOL_WAIT_S``: each idle one the
        server closed (a restart, a terminated backend) is given back, which makes the pool
        drop it and open another, and the next is taken at once. The pool's own check would
        wait between two broken ones (1 s, 2 s, 4 s...): a pool of dead connections after a
        restart would keep the first request past ``POOL_WAIT_S``.

        Raises:
            PoolTimeout: no connection within ``POOL_WAIT_S``.
        """
        deadline = time.monotonic() + POOL_WAIT_S
        while True:
            conn = self._pool.getconn(timeout=max(0.0, deadline - time.monotonic()))
            try:
                check_idle_connection(conn)
            except psycopg.Error:
                conn.close()
                self._pool.putconn(conn)  # closed: the pool opens another in its place
                continue
            except BaseException:
                self._pool.putconn(conn)
                raise
            return conn

    def _check_reachable(self) -> None:
        """Return when a new connection can be made (the server answers); else raise why not,
        remembering a server that does not answer at all.

        Raises:
            StoreUnavailableError: the server refused a new connection, or did not answer.
        """
        try:
            with self._as_clear_errors():
                psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S).close()
        except StoreUnavailableError as error:
            if error.message.startswith("Cannot reach"):  # not a refusal (no free slot...)
                self._unreachable.set()
            raise
        self._unreachable.clear()

    def statement(self, sql: str, params: Params | None = None) -> list[Row]:
        """Run one write statement as a transaction of its own, without the BEGIN and COMMIT
        round trips: sent with the schema guard's two in one pipeline, which is one implicit
        transaction (a failed check skips the statement); its rows, read once committed.

        Raises:
            StoreTooNewError: a newer version migrated the database; nothing was written.
        """
        self._guard.refuse_if_refused()
        with self._as_clear_errors(), self._lend() as conn, self._guard.refused():
            with conn.pipeline():  # the results all come at its end: one round trip
                self._guard.send(conn)
                cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else []

    @contextmanager
    def write(self) -> Iterator[psycopg.Connection[Row]]:
        """One transaction: committed when the block ends, rolled back if it raises (with the
        statement of a ``riding_next_write`` block's rider, if none rode before). Its BEGIN
        goes with the schema guard's statements, in one round trip.

        Raises:
            StoreTooNewError: a newer version migrated the database; nothing was written.
        """
        self._guard.refuse_if_refused()
        rider = pending_rider()
        with self._as_clear_errors(), self._lend() as conn:
            with _transaction(conn, self._guard):
                yield conn
                result = None if rider is None else run_rider(rider, conn)
            if rider is not None:
                rider.result, rider.done = result, True

    @contextmanager
    def read_snapshot(self) -> Iterator[psycopg.Connection[Row]]:
        """A read-only transaction in which every read sees one snapshot (repeatable read)."""
        begin = "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"
        with self._as_clear_errors(), self._lend() as conn, _transaction(conn, begin=begin):
            yield conn

    def check_schema(self) -> int:
        """The database's schema (one read), refusing every later write if a newer version
        migrated it: a readiness check.

        Raises:
            StoreTooNewError: it did.
            StoreUnavailableError: the database does not answer.
        """
        self._guard.refuse_if_refused()  # refused once, refused until restarted, as writes
        with self.read() as conn:
            found = schema_version(conn)
        self._guard.check(found)
        return found

    def write_with(self, ctes: Sequence[str], select: str, params: dict[str, Any]) -> Row | None:
        """``WITH <ctes> <select>`` as one transaction of one statement, committed on its own
        (autocommit: no BEGIN and COMMIT round trips), and its row (``select`` gives at most
        one, and its first column is never NULL). A pending rider (``riding_next_write``)
        joins the statement as one more CTE, and so commits with it."""
        rider = pending_rider()
        sql = "WITH " + ", ".join(ctes)
        if rider is not None:  # the rider's one row, and the select's row if there is one
            sql += f", rider AS ({rider.sql} RETURNING id)"
            sql += " SELECT rider.id AS rider_id, s.* FROM rider"
            sql += f" LEFT JOIN ({select}) AS s ON true"
            params = {**params, **rider.params}
        else:
            sql += " " + select
        rows = self.statement(sql, params)
        row = rows[0] if rows else None
        if rider is None:
            return row
        if row is None:
            raise RuntimeError("a rider's statement returned no row")
        rider.result, rider.done = int(row[0]), True
        return None if row[1] is None else row.without_first()

    def snapshot(self) -> AbstractContextManager[None]:
        """Several reads as the SQLite store's ``snapshot`` groups them: here each read borrows
        a pooled connection and is its own snapshot (autocommit), as outside the block."""
        return nullcontext()

    def _as_clear_errors(self) -> AbstractContextManager[None]:
        return clear_errors(self.display_url)

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self._pool.close()


@contextmanager
def clear_errors(display_url: str) -> Iterator[None]:
    """Connection problems become ``StoreUnavailableError``; a value the database refuses
    (out of range, a NUL character, a broken constraint) an error of the caller's input.
    A transaction lost to another writer's goes on as it is, for ``write_retrying``."""
    try:
        yield
    except _LOST_TO_ANOTHER_WRITER:
        raise  # the caller may run its transaction again
    except (psycopg.OperationalError, *_REFUSED_BY_RIGHTS, PoolTimeout) as error:
        message = unavailable(error, display_url)
        missing = message.startswith(_NO_SUCH_DATABASE)
        raise (NoSuchDatabaseError if missing else StoreUnavailableError)(message) from None
    except psycopg.errors.UniqueViolation as error:
        raise ConflictError(f"Already stored: {_first_line(error)}") from None
    except (psycopg.DataError, psycopg.IntegrityError, UnicodeEncodeError) as error:
        raise InvalidInputError(f"The store refused a value: {_first_line(error)}") from None


_NO_SUCH_DATABASE = "There is no such PostgreSQL database"
# What a server that answered but refused a new connection says after "FATAL:", and how to
# tell it: the first fragment found names the problem (libpq gives these errors no SQLSTATE).
_REFUSALS = (
    ("database", "does not exist", _NO_SUCH_DATABASE + " at {where}: {reason}"),
    ("role", "does not exist", "PostgreSQL at {where} refused the login: {reason}"),
    ("authentication failed", "", "PostgreSQL at {where} refused the login: {reason}"),
    ("no pg_hba.conf entry", "", "PostgreSQL at {where} refused the login: {reason}"),
    ("permission denied", "", "PostgreSQL at {where} refused the connection: {reason}"),
    ("connection slots", "", "PostgreSQL at {where} has no connection free: {reason}"),
    ("too many", "", "PostgreSQL at {where} has no connection free: {reason}"),
)


def unavailable(error: BaseException, where: str) -> str:
    """One line saying why the database at ``where`` (a URL without its password) cannot be
    used: "Cannot reach" only when no connection could be made or kept."""
    first = _first_line(error)
    if isinstance(error, PoolTimeout):
        return f"Timed out waiting for a connection to the PostgreSQL store at {where}: {first}"
    if isinstance(error, psycopg.errors.InsufficientPrivilege):
        return f"The PostgreSQL user of {where} lacks a permission: {first}"
    if isinstance(error, psycopg.errors.InvalidSchemaName):  # no schema of the search_path usable
        return f"The PostgreSQL user of {where} has no schema it may use: {first}"
    text = str(error)
    if "FATAL:" in text:  # the server answered, and refused
        reason = " ".join(text.split("FATAL:", 1)[1].split())
        for first_part, second_part, label in _REFUSALS:
            if first_part in reason and second_part in reason:
                return label.format(where=where, reason=reason)
        return f"PostgreSQL at {where} refused the connection: {reason}"
    state = getattr(error, "sqlstate", None) or ""
    if state.startswith("57P"):  # the server shut down or ended this connection
        return f"Lost the connection to the PostgreSQL store at {where}: {first}"
    if state and not state.startswith("08"):  # out of resources, a timeout, a lock...
        return f"The PostgreSQL store at {where} failed: {first}"
    return f"Cannot reach the PostgreSQL store at {where}: {first}"


def is_migrated(url: str) -> bool:
    """Whether the database at ``url`` holds a store (its migrations table), changing nothing.

    Raises:
        StoreUnavailableError: the database cannot be reached or refused us (one line)."""
    with (
        clear_errors(redact_url(url)),
        psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as conn,
    ):
        row = conn.execute(_HOLDS_A_STORE).fetchone()
    return bool(row and row[0])


# A store's migrations table (a whole-number version) beside its memories: another
# application's schema_migrations (Rails keeps text versions) is no store.
_HOLDS_A_STORE = (
    "SELECT to_regclass('memories') IS NOT NULL AND EXISTS (SELECT 1 FROM"
    " information_schema.columns WHERE table_schema = current_schema()"
    " AND table_name = 'schema_migrations' AND column_name = 'version'"
    " AND data_type IN ('integer', 'bigint', 'smallint'))"
)


def _steps() -> list[tuple[int, str]]:
    return sorted(
        (int(entry.name.split("_", 1)[0]), entry.read_text(encoding="utf-8"))
        for entry in _MIGRATIONS_DIR.iterdir()
        if entry.name.endswith(".sql")
    )


@contextmanager
def _transaction(
    conn: psycopg.Connection[Any], guard: PgSchemaGuard | None = None, begin: str = "BEGIN"
) -> Iterator[None]:
    """One transaction on ``conn`` (in autocommit) begun by ``begin``: committed when the block
    ends, rolled back if it raises. With ``guard``, its BEGIN and the guard's statements go in
    one round trip.

    Raises:
        StoreTooNewError: the guard refused the transaction; nothing was written.
    """
    try:
        if guard is None:
            conn.execute(begin)
        else:
            with guard.refused(), conn.pipeline():
                conn.execute(begin)
                guard.send(conn)
        yield
    except BaseException:
        _roll_back(conn)
        raise
    conn.commit()


def _roll_back(conn: psycopg.Connection[Any]) -> None:
    """Roll back, leaving a broken connection to the pool (which drops it) and the error that
    ended the transaction as it is."""
    if conn.closed or conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        return
    try:
        conn.rollback()
    except psycopg.Error as error:
        logger.warning("Rollback failed: %s", _first_line(error))


def migrate(conn: psycopg.Connection[Any], where: str = "") -> int:
    """Apply every step not applied yet, in the caller's transaction; returns the number of
    the last step this version has. An advisory lock makes processes that start together take
    turns; the last to get it finds nothing to do.

    Raises:
        StoreTooNewError: the store is past the last step known here (``where`` names it);
            nothing was changed.
    """
    conn.execute("SET LOCAL lock_timeout = 0")  # wait for another process's migrations
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations"
        " (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    steps = _steps()
    if applied and max(applied) > steps[-1][0]:
        raise newer_store(where or "in use", max(applied), steps[-1][0])
    for version, script in steps:
        if version not in applied:
            conn.execute(script.encode())  # several statements: sent as one simple query
            if version == NFC_KEYS_STEP:
                _index_titles_again(conn, canonicalize_keys(conn, "%s"))
            if version == AUDIT_TOOLS_STEP:
                redact_audit_tools(conn, "%s")
            conn.execute("INSERT INTO schema_migrations (version) VALUES (%s)", (version,))
    return steps[-1][0]


def _index_titles_again(conn: psycopg.Connection[Any], retitled: list[tuple[int, str]]) -> None:
    """The lists whose title the NFC step rewrote, indexed as they now are (in its
    transaction)."""
    if not retitled:  # a new store, or one with no decomposed list: no index code loaded
        return
    from aletheia_mem.storage.postgres.reindex import index_memories_again

    index_memories_again(conn, [memory_id for memory_id, _ in retitled])


def schema_version(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0) if row is not None else 0


class PgPart:
    """One concern of the PostgreSQL store (memories, rules, tokens...): the store class joins
    the parts, which all read and write through the same ``PgDatabase``."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db
