"""Facts on PostgreSQL: per subject and predicate, a timeline of values, none overlapping.

Several processes may save a fact for one key at once. Writers of one key take turns under a
transaction-scoped advisory lock on the key's hash, so each reads the key's timeline only after
the previous writer committed: no writer can lose the race again and again (with row locks alone,
one of eight threads once lost 50 times running). The partial unique index ``facts_current``
still keeps one open fact per key; a unique violation (only possible if the lock were bypassed)
is retried in a savepoint. A deadlock between two multi-row transactions is retried as a whole:
the user never sees the race.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import errors

from aletheia_mem.canonical import fact_key
from aletheia_mem.storage.base import Fact, FactPage
from aletheia_mem.storage.entries import NewFact
from aletheia_mem.storage.fact_timeline import put_in_timeline
from aletheia_mem.storage.postgres import full_text
from aletheia_mem.storage.postgres.database import PgDatabase, PgPart, Row, rows_on_generic_plan
from aletheia_mem.storage.postgres.phrases import PhraseMatches, grouped
from aletheia_mem.storage.prefix import project_names_sql
from aletheia_mem.storage.uids import new_uid

T = TypeVar("T")
# Bounds on retries: each one follows another writer's commit, so they end quickly.
_FACT_ATTEMPTS = 50
_WRITE_ATTEMPTS = 5
# The class of the two-key advisory lock a fact key's writers take turns under ("fact"); the
# sync lock (0003_sync.sql) has another class, and one-key locks are apart from two-key ones.
_FACT_LOCK_CLASS = 0x66616374
# Fact search weights: subject, predicate, object (as the SQLite store's bm25(fact_fts, ...)).
FACT_WEIGHTS = (2.0, 1.0, 1.0)
_FACT_COLUMNS = (
    "id, uid, project, subject, predicate, object, valid_from, valid_to, recorded_at,"
    " superseded_by, source, memory_id, dismissed_at"
)


def newest_current_sql(
    projects: tuple[str, ...] | None, limit: int, now: int
) -> tuple[str, list[Any]]:
    """``newest_current_facts``' statement: of every project, the newest by time first
    (``facts_recorded``, migration 0021); of named projects, each one's newest first
    (``facts_project_recorded``), then those merged: the planner, given a few projects and the
    index by time, would walk back through every other project's facts to reach theirs (30 ms
    for a project quiet of late, at 100,000 facts)."""
    live = "valid_from <= %s AND (valid_to IS NULL OR valid_to > %s) AND dismissed_at IS NULL"
    order = "ORDER BY recorded_at DESC, id DESC LIMIT %s"
    if projects is None:
        return f"SELECT {_FACT_COLUMNS} FROM facts WHERE {live} {order}", [now, now, limit]
    sql = (
        f"SELECT {_FACT_COLUMNS} FROM unnest(%s::text[]) AS named (name) CROSS JOIN LATERAL"
        f" (SELECT * FROM facts WHERE project = named.name AND {live} {order}) AS f {order}"
    )
    return sql, [list(projects), now, now, limit, limit]


# Fact search reads, in one statement (one snapshot), rows whose first column says what each is:
#   2  a live fact valid at %(now)s holding a token of the query: its columns (from the 7th), tokens
#   1  a term row of a query token: term, fact id, col, positions
#   0  the index's rows (third column) and tokens (sixth)
# The facts come first: their columns type the rows below them. FTS5 counts a phrase's rows in
# the whole index, superseded facts included, so the term rows are every fact's.
_FACT_NAMES = [name.strip() for name in _FACT_COLUMNS.split(",")]
_NO_FACT = ", NULL" * len(_FACT_NAMES)
_FACT_OF_F = ", ".join("f." + name for name in _FACT_NAMES)
_SEARCH_TERMS = (
    "r AS MATERIALIZED (SELECT term, fact_id, col, positions FROM fact_terms"
    " WHERE term = ANY (%(tokens)s))"
)
_SEARCH_FACTS = (
    "SELECT 2::smallint AS part, NULL::text AS term, NULL::bigint AS doc, NULL::smallint AS col,"
    f" NULL::text AS positions, d.tokens::bigint AS tokens, {_FACT_OF_F}"
    " FROM (SELECT DISTINCT fact_id FROM r) AS c"
    " CROSS JOIN LATERAL (SELECT * FROM facts WHERE id = c.fact_id OFFSET 0) AS f"
    " CROSS JOIN LATERAL (SELECT tokens FROM fact_docs WHERE fact_id = c.fact_id OFFSET 0) AS d"
    " WHERE f.valid_from <= %(now)s::bigint"
    " AND (f.valid_to IS NULL OR f.valid_to > %(now)s::bigint) AND f.dismissed_at IS NULL"
)
_SEARCH_REST = (
    f" UNION ALL SELECT 1, term, fact_id, col, positions::text, NULL{_NO_FACT} FROM r"
    " UNION ALL SELECT 0, NULL, coalesce(sum(docs), 0)::bigint, NULL, NULL,"
    f" coalesce(sum(tokens), 0)::bigint{_NO_FACT}"
    " FROM full_text_counts WHERE index_name = 'facts'"
)
_SEARCH = f"WITH {_SEARCH_TERMS} {_SEARCH_FACTS}{_SEARCH_REST}"
_SEARCH_IN_PROJECTS = (
    f"WITH {_SEARCH_TERMS} {_SEARCH_FACTS} AND f.project = ANY (%(projects)s){_SEARCH_REST}"
)


def fact_from_row(row: Row) -> Fact:
    """A fact from a row of ``_FACT_COLUMNS``."""
    return Fact(*row[:13])


def write_retrying(db: PgDatabase, work: Callable[[psycopg.Connection[Row]], T]) -> T:
    """Run ``work`` in one transaction, again if it lost a deadlock to another writer."""

    def transaction() -> T:
        with db.write() as conn:
            return work(conn)

    return retrying(transaction)


def retrying(transaction: Callable[[], T]) -> T:
    """Run a transaction, again if it lost a deadlock to another writer."""
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            return transaction()
        except (errors.DeadlockDetected, errors.SerializationFailure):
            if attempt == _WRITE_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


def put_fact(
    conn: psycopg.Connection[Row],
    new: NewFact,
    memory_id: int | None,
    totals: full_text.Totals,
) -> tuple[Fact, bool]:
    """Save a fact in the caller's transaction at its valid_from: the same object as the fact
    valid then returns that fact (False); another one splits the timeline there (True)."""
    for _ in range(_FACT_ATTEMPTS):
        try:
            with conn.transaction():  # a savepoint: a lost race is undone alone
                return _put_fact_once(conn, new, memory_id, totals)
        except errors.UniqueViolation:
            continue  # another writer saved this key first: its row is visible now
    raise errors.UniqueViolation(f"fact {new.subject!r} {new.predicate!r} kept changing")


def _put_fact_once(
    conn: psycopg.Connection[Row],
    new: NewFact,
    memory_id: int | None,
    totals: full_text.Totals,
) -> tuple[Fact, bool]:
    timeline = _KeyTimeline(conn, new, memory_id)
    lock_fact_key(conn, timeline.key)
    row, created = put_in_timeline(new, timeline)
    if created:
        full_text.index_row(
            conn, full_text.FACT_INDEX, row["id"], (new.subject, new.predicate, new.object), totals
        )
    return fact_from_row(row), created


class _KeyTimeline:
    """``new``'s key's rows in ``conn``'s transaction (``fact_timeline.KeyTimeline``), the
    fact valid at an instant locked (``_FACT_AT``)."""

    def __init__(self, conn: psycopg.Connection[Row], new: NewFact, memory_id: int | None) -> None:
        self._conn = conn
        self.key = (new.project, fact_key(new.subject), fact_key(new.predicate))
        self._memory_id = memory_id

    def fact_at(self, at: int) -> Row | None:
        return self._conn.execute(_FACT_AT, (*self.key, at, at)).fetchone()

    def starts_from(self, at: int) -> list[int]:
        rows = self._conn.execute(_STARTS_FROM, (*self.key, at)).fetchall()
        return [int(row[0]) for row in rows]

    def first_after(self, at: int) -> Row | None:
        return self._conn.execute(_FACT_AFTER, (*self.key, at)).fetchone()

    def close(self, column: str, value: int, fact_id: int) -> None:
        _close(self._conn, column, value, fact_id)

    def insert(self, new: NewFact, valid_to: int | None, successor: int | None) -> Row:
        return _insert_fact(self._conn, new, self.key, valid_to, successor, self._memory_id)


_CLOSE = {
    "valid_to": "UPDATE facts SET valid_to = %s WHERE id = %s",
    "superseded_by": "UPDATE facts SET superseded_by = %s WHERE id = %s",
}


def _close(conn: psycopg.Connection[Row], column: str, value: int, fact_id: int) -> None:
    """Set the tile of the fact a new one splits without a sync version (see the SQLite
    store's ``_close``): the new fact is the whole change, and every store tiles a key itself."""
    conn.execute("SELECT set_config('aletheia.sync_quiet', 'on', true)")
    conn.execute(_CLOSE[column], (value, fact_id))
    conn.execute("SELECT set_config('aletheia.sync_quiet', 'off', true)")


def lock_fact_key(conn: psycopg.Connection[Row], key: tuple[str, str, str]) -> None:
    """Wait for the turn of ``key``'s writers (a sync page's too), kept to the transaction's end."""
    conn.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_FACT_LOCK_CLASS, "\x1f".join(key))
    )


# A key's facts tile its timeline: each holds from its valid_from up to its valid_to (open when
# NULL), where its superseded_by starts; one written later at the same valid_from the caller
# gave empties it (one written without a valid_from starts after it: ``fact_start``).
# The fact valid at an instant (the latest one, should old rows overlap):
_FACT_AT = (
    f"SELECT {_FACT_COLUMNS} FROM facts WHERE project = %s AND subject_key = %s"
    " AND predicate_key = %s AND valid_from <= %s AND (valid_to IS NULL OR valid_to > %s)"
    " ORDER BY valid_from DESC, id DESC LIMIT 1 FOR UPDATE"
)
# Where a fact written when another of its key starts may start (``fact_start``):
_STARTS_FROM = (
    "SELECT DISTINCT valid_from FROM facts WHERE project = %s AND subject_key = %s"
    " AND predicate_key = %s AND valid_from >= %s ORDER BY valid_from"
)
# The first fact after an instant no fact is valid at: a fact put there ends where it starts.
_FACT_AFTER = (
    "SELECT id, valid_from FROM facts WHERE project = %s AND subject_key = %s"
    " AND predicate_key = %s AND valid_from > %s ORDER BY valid_from, id LIMIT 1"
)


def _insert_fact(
    conn: psycopg.Connection[Row],
    new: NewFact,
    key: tuple[str, str, str],
    valid_to: int | None,
    successor: int | None,
    memory_id: int | None,
) -> Row:
    """Insert ``new`` under ``key``, valid up to ``valid_to``, superseded by ``successor``."""
    project, subject_key, predicate_key = key
    row = conn.execute(
        "INSERT INTO facts (uid, project, subject, subject_key, predicate, predicate_key,"
        " object, valid_from, valid_to, recorded_at, superseded_by, source, memory_id)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_FACT_COLUMNS}",
        (
            new_uid(),
            project,
            new.subject,
            subject_key,
            new.predicate,
            predicate_key,
            new.object,
            new.valid_from,
            valid_to,
            new.recorded_at,
            successor,
            new.source,
            memory_id,
        ),
    ).fetchone()
    if row is None:
        raise RuntimeError("INSERT ... RETURNING gave no row")
    return row


class PgFacts(PgPart):
    """The ``FactStore`` of the PostgreSQL store."""

    def add_fact(self, new: NewFact, memory_id: int | None = None) -> tuple[Fact, bool]:
        def work(conn: psycopg.Connection[Row]) -> tuple[Fact, bool]:
            with full_text.indexing(conn) as totals:
                return put_fact(conn, new, memory_id, totals)

        return write_retrying(self._db, work)

    def get_fact(self, fact_id: int) -> Fact | None:
        with self._db.read() as conn:
            row = conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE id = %s", (fact_id,)
            ).fetchone()
        return None if row is None else fact_from_row(row)

    def facts_about(self, subject: str, project: str | None, predicate: str | None) -> list[Fact]:
        """Every live fact of a subject (all versions), newest validity first."""
        sql = f"SELECT {_FACT_COLUMNS} FROM facts WHERE subject_key = %s AND dismissed_at IS NULL"
        params: list[Any] = [fact_key(subject)]
        if project is not None:
            sql += " AND project = %s"
            params.append(project)
        if predicate is not None:
            sql += " AND predicate_key = %s"
            params.append(fact_key(predicate))
        sql += " ORDER BY valid_from DESC, id DESC"
        with self._db.read() as conn:
            return [fact_from_row(row) for row in conn.execute(sql, params).fetchall()]

    def fact_history_page(
        self,
        subject: str,
        projects: tuple[str, ...] | None,
        predicate: str | None,
        *,
        offset: int,
        limit: int,
        now: int,
        upto: int | None = None,
        dismissed: bool = False,
    ) -> FactPage:
        """As the SQLite store's, in one snapshot: a page of a subject's history from ``offset``
        (at most the last fact), its size and highest id, and its facts valid ``now``; of the
        facts with ids up to ``upto`` when given; ``dismissed``: of the dismissed ones instead."""
        where = f"subject_key = %s AND dismissed_at IS {'NOT NULL' if dismissed else 'NULL'}"
        params: list[Any] = [fact_key(subject)]
        if projects is not None:
            where += " AND project = ANY (%s)"
            params.append(list(projects))
        if predicate is not None:
            where += " AND predicate_key = %s"
            params.append(fact_key(predicate))
        if upto is not None:
            where += " AND id <= %s"
            params.append(upto)
        order = " ORDER BY valid_from DESC, id DESC"
        with self._db.read_snapshot() as conn:
            sql = f"SELECT count(*), max(id) FROM facts WHERE {where}"
            row = conn.execute(sql, params).fetchone()
            total = int(row[0]) if row is not None else 0
            newest = int(row[1] or 0) if row is not None else 0
            offset = min(offset, max(total - 1, 0))
            page = conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where}{order} LIMIT %s OFFSET %s",
                [*params, limit, offset],
            ).fetchall()
            current = conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where} AND valid_from <= %s"
                f" AND (valid_to IS NULL OR valid_to > %s){order}",
                [*params, now, now],
            ).fetchall()
        return FactPage(
            total,
            offset,
            [fact_from_row(r) for r in page],
            [fact_from_row(r) for r in current],
            newest,
        )

    def search_facts(
        self, terms: Sequence[str], projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]:
        """Live facts valid ``now`` matching any term, best first (bm25, then newest): the term rows
        of the query's tokens, the candidate facts and the index's totals in one statement of
        one shape (prepared once, whatever the query), phrases matched and scored here."""
        phrases = [full_text.phrase_tokens(term) for term in terms]
        tokens = sorted({token for tokens in phrases for token in tokens})
        if not tokens:
            return []
        sql = _SEARCH if projects is None else _SEARCH_IN_PROJECTS
        params = {"tokens": tokens, "projects": list(projects or ()), "now": now}
        with self._db.read() as conn:
            rows = rows_on_generic_plan(conn, sql, params)
        term_rows, candidates, totals = [], [], (0, 0)
        for row in rows:
            if row[0] == 2:
                candidates.append((Fact(*row[6:19]), int(row[5])))
            elif row[0] == 1:
                term_rows.append((str(row[1]), int(row[2]), int(row[3]), str(row[4])))
            else:
                totals = (int(row[2]), int(row[5]))
        if not candidates:
            return []
        postings = grouped(term_rows)
        matches = [PhraseMatches(lambda t: postings.get(t, {}), tokens) for tokens in phrases]
        bm25 = full_text.Bm25.with_totals(
            [len(match.docs) for match in matches], FACT_WEIGHTS, *totals
        )
        scored = []
        for fact, fact_tokens in candidates:
            per_phrase = [match.hits(fact.id) for match in matches]
            if any(per_phrase):  # not only tokens of a phrase that is not in it
                score = bm25.score(per_phrase, fact_tokens)
                scored.append((score, -fact.recorded_at, fact.id, fact))
        scored.sort(key=lambda item: item[:3])
        return [item[3] for item in scored[:limit]]

    def current_facts(self, project: str, limit: int, now: int) -> list[Fact]:
        """The project's live facts valid ``now``, newest recorded first."""
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_FACT_COLUMNS} FROM facts WHERE project = %s AND valid_from <= %s"
                " AND (valid_to IS NULL OR valid_to > %s) AND dismissed_at IS NULL"
                " ORDER BY recorded_at DESC, id DESC LIMIT %s",
                (project, now, now, limit),
            ).fetchall()
        return [fact_from_row(row) for row in rows]

    def newest_current_facts(
        self, projects: tuple[str, ...] | None, limit: int, now: int
    ) -> list[Fact]:
        """The live facts valid ``now`` of ``projects`` (None: all), newest recorded first."""
        with self._db.read() as conn:
            rows = conn.execute(*newest_current_sql(projects, limit, now)).fetchall()
        return [fact_from_row(row) for row in rows]

    def fact_project_names(self, limit: int = 500, starting: str = "") -> list[str]:
        """The projects that have facts, by name: one index seek per project."""
        with self._db.read() as conn:
            rows = conn.execute(*project_names_sql("facts", starting, limit, "%s")).fetchall()
        return [str(row[0]) for row in rows]

    def count_current_facts(self, project: str, now: int) -> int:
        """How many live facts of the project are valid ``now`` (``current_facts`` unbounded)."""
        with self._db.read() as conn:
            row = conn.execute(
                "SELECT count(*) FROM facts WHERE project = %s AND valid_from <= %s"
                " AND (valid_to IS NULL OR valid_to > %s) AND dismissed_at IS NULL",
                (project, now, now),
            ).fetchone()
        return int(row[0]) if row is not None else 0

    def existing_fact_ids(self, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        with self._db.read() as conn:
            rows = conn.execute("SELECT id FROM facts WHERE id = ANY (%s)", (list(ids),))
            return {int(row[0]) for row in rows.fetchall()}

    def superseded_fact_ids(self, ids: Sequence[int], *, now: int, since: int = 0) -> set[int]:
        """Those of ``ids`` superseded by ``now`` (by a successor in force then: one written for
        a later time supersedes nothing before it) at ``since`` or later (when the successor
        took force, or was recorded if that was later). Dismissal is ``dismissed_fact_ids``."""
        if not ids:
            return set()
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT f.id FROM facts f LEFT JOIN facts s ON s.id = f.superseded_by"
                " WHERE f.superseded_by IS NOT NULL AND coalesce(f.valid_to, 0) <= %s"
                " AND greatest(coalesce(s.recorded_at, 0), coalesce(f.valid_to, 0)) >= %s"
                " AND f.id = ANY (%s)",
                (now, since, list(ids)),
            )
            return {int(row[0]) for row in rows.fetchall()}

    def dismissed_fact_ids(self, ids: Sequence[int], since: int = 0) -> set[int]:
        """Those of ``ids`` dismissed at ``since`` or later."""
        if not ids:
            return set()
        with self._db.read() as conn:
            rows = conn.execute(
                "SELECT id FROM facts WHERE dismissed_at >= %s AND id = ANY (%s)",
                (since, list(ids)),
            )
            return {int(row[0]) for row in rows.fetchall()}
