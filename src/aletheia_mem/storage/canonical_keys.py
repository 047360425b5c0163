"""A one-time step that rewrites names compared by equality to NFC (``canonical``): project
keys, list names and fact keys that an earlier release stored as given (a macOS folder gives a
decomposed ``é``), so that lookups, which now canonicalise what they are given, find them.

Nothing is merged silently. A row whose rewritten key is already held by another (the same
list or note saved under both spellings, or the same fact current under both) keeps its data
and stays findable under the composed project: a list gets the name ``<name> (#<id>)``, a note
loses only its "Already saved" key, a current fact is closed, superseded by its twin (its
history shows it). Runs inside the migration's transaction; the change-log triggers send the
rewritten rows to sync peers as ordinary updates.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Protocol

from aletheia_mem.canonical import canonical

LIST_PREFIX = "list:"  # as ``domain.worklists.LIST_KEY_PREFIX`` (storage sits below domain)


class _Conn(Protocol):
    def execute(self, sql: str, parameters: Any = (), /) -> Any: ...


def _is_canonical(value: str | None) -> bool:
    return value is None or unicodedata.is_normalized("NFC", value)


class _Db:
    """``conn`` with ``?`` placeholders, whatever the database's own are, and ``odd(column)``:
    SQL that is true where the column is not in NFC (or may not be), so that the database, not
    Python, reads past the rows that need nothing."""

    def __init__(self, conn: _Conn, mark: str) -> None:
        self._conn, self._mark = conn, mark
        self.postgres = mark != "?"
        if not self.postgres:
            create = getattr(conn, "create_function")  # noqa: B009 - a sqlite3 connection
            create(_SQLITE_CHECK, 1, _is_canonical, deterministic=True)
            self._odd = f"NOT {_SQLITE_CHECK}({{}})"
        elif self.rows("SELECT current_setting('server_encoding')")[0][0] == "UTF8":
            self._odd = "{} IS NOT NFC NORMALIZED"  # PostgreSQL 13 and later
        else:  # IS NORMALIZED needs UTF8: every row is read, Python decides
            self._odd = "{} IS NOT NULL"

    def odd(self, column: str) -> str:
        return self._odd.format(column)

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        return list(self._conn.execute(sql.replace("?", self._mark), parameters).fetchall())

    def run(self, sql: str, parameters: tuple[Any, ...]) -> None:
        self._conn.execute(sql.replace("?", self._mark), parameters)


_SQLITE_CHECK = "aletheia_is_nfc"


def canonicalize_keys(conn: _Conn, mark: str = "?") -> list[tuple[int, str]]:
    """Rewrite every stored project key, list name and fact key to NFC (see the module).

    Returns the lists whose title it rewrote, ``(id, new title)``: the caller indexes those
    titles again in the same transaction, so that search finds a list by its name as it now
    is, never by the old one (``index_text`` reads the title, which no other rewrite here
    changes)."""
    db = _Db(conn, mark)
    retitled = _memories(db)
    _facts(db)
    for table in ("episodes", "audit", "repositories"):
        _column(db, table, "project")
    _rules(db)
    _project_lists(db, "hub_tokens", "id")
    _project_lists(db, "sync_scopes", "hub_url, token_digest")
    return retitled


def _memories(db: _Db) -> list[tuple[int, str]]:
    """The notes of each decomposed project moved in one statement, but for those whose key the
    composed project holds; then each row left moved in turn: a composed key it would take is
    held by a row already in NFC or moved before it (a decomposed key never equals a composed
    one). Returns the lists whose title changed, with their new title."""
    retitled: list[tuple[int, str]] = []
    for (project,) in db.rows(f"SELECT DISTINCT project FROM memories WHERE {db.odd('project')}"):
        if _is_canonical(project):
            continue
        db.run(
            "UPDATE memories SET project = ? WHERE project = ? AND kind <> 'work_state'"
            " AND (dedupe_key IS NULL OR NOT EXISTS (SELECT 1 FROM memories AS o"
            " WHERE o.project = ? AND o.dedupe_key = memories.dedupe_key))",
            (canonical(project), project, canonical(project)),
        )
    rows = db.rows(
        "SELECT id, project, kind, dedupe_key, title FROM memories"
        f" WHERE {db.odd('project')} OR (kind = 'work_state' AND {db.odd('dedupe_key')})"
        " ORDER BY id"
    )
    for row in rows:
        memory_id, project, kind, key, title = (row[i] for i in range(5))
        old_title = title
        is_list = kind == "work_state" and key is not None and key.startswith(LIST_PREFIX)
        if _is_canonical(project) and (not is_list or _is_canonical(key)):
            continue
        project = canonical(project)
        if is_list:
            key, title = canonical(key), canonical(title)
            name, suffix = key.removeprefix(LIST_PREFIX), 0
            while _held(db, project, key):  # a twin: this list is kept under a name of its own
                suffix += 1
                renamed = f"{name} (#{memory_id})" + (f" ({suffix})" if suffix > 1 else "")
                key, title = LIST_PREFIX + renamed, f"{renamed} list"
        elif key is not None and _held(db, project, key):
            key = None  # the same note in the composed project: kept, without its dedupe key
        db.run(
            "UPDATE memories SET project = ?, dedupe_key = ?, title = ? WHERE id = ?",
            (project, key, title, memory_id),
        )
        if title != old_title:
            retitled.append((int(memory_id), title))
    return retitled


def _held(db: _Db, project: str, key: str) -> bool:
    return bool(
        db.rows("SELECT 1 FROM memories WHERE project = ? AND dedupe_key = ?", (project, key))
    )


def _facts(db: _Db) -> None:
    """Each fact moved in turn; a current one whose composed key has a current fact already is
    closed, superseded by it."""
    odd = " OR ".join(db.odd(column) for column in ("project", "subject_key", "predicate_key"))
    rows = db.rows(
        "SELECT id, project, subject_key, predicate_key, valid_from, valid_to FROM facts"
        f" WHERE {odd} ORDER BY id"
    )
    for row in rows:
        fact_id, valid_from, valid_to = row[0], row[4], row[5]
        key = (canonical(row[1]), canonical(row[2]), canonical(row[3]))
        if key == (row[1], row[2], row[3]):
            continue
        twin = (
            db.rows(
                "SELECT id, valid_from FROM facts WHERE project = ? AND subject_key = ?"
                " AND predicate_key = ? AND valid_to IS NULL",
                key,
            )
            if valid_to is None
            else []
        )
        if twin:  # closed, superseded by the fact current under the composed key
            db.run(
                "UPDATE facts SET project = ?, subject_key = ?, predicate_key = ?,"
                " valid_to = ?, superseded_by = ? WHERE id = ?",
                (*key, max(valid_from, twin[0][1]), twin[0][0], fact_id),
            )
            continue
        db.run(
            "UPDATE facts SET project = ?, subject_key = ?, predicate_key = ? WHERE id = ?",
            (*key, fact_id),
        )


def _column(db: _Db, table: str, column: str) -> None:
    """Every row's ``column`` (a project key) in NFC: no key of these tables is unique."""
    if table == "repositories" and db.postgres:  # SQLite's only: a hub keeps none
        return
    for row in db.rows(f"SELECT DISTINCT {column} FROM {table} WHERE {db.odd(column)}"):
        value = row[0]
        if not _is_canonical(value):
            db.run(
                f"UPDATE {table} SET {column} = ? WHERE {column} = ?",
                (canonical(value), value),
            )


def _rules(db: _Db) -> None:
    """A project rule's scope, and so its id (the hash of its text and scope, which sync checks):
    kept under the id ``add_rule`` gives it now. A rule already held under that id is the same
    rule; the decomposed one is left as it is (listed still; sync re-keys it onto its twin)."""
    sql = "SELECT id, then_text, when_text, scope_name FROM rules WHERE scope_tier = 'project'"
    rows = db.rows(sql)
    held = {row[0] for row in db.rows("SELECT id FROM rules")}
    for rule_id, then, when, name in ((row[0], row[1], row[2], row[3]) for row in rows):
        if _is_canonical(name):  # few rules: read them all
            continue
        new_id = project_rule_id(then, when, canonical(name))
        if new_id in held:
            continue
        held.add(new_id)
        db.run(
            "UPDATE rules SET id = ?, scope_name = ? WHERE id = ?",
            (new_id, canonical(name), rule_id),
        )


def project_rule_id(then: str, when: str, project: str) -> str:
    """As ``domain.rules.rule_id`` (a test holds them together; storage sits below domain)."""
    import hashlib  # only for a store with such rules: a new store's first search loads none

    digest = hashlib.sha256(f"{then}\x00{when}\x00project\x00{project}".encode())
    return "r_" + digest.hexdigest()[:10]


def _project_lists(db: _Db, table: str, key_columns: str) -> None:
    """A token's project list: JSON text, or a PostgreSQL array."""
    keys = [column.strip() for column in key_columns.split(",")]
    where = " AND ".join(f"{column} = ?" for column in keys)
    for row in db.rows(f"SELECT projects, {key_columns} FROM {table}"):
        stored = row[0]
        if stored is None:
            continue
        names = json.loads(stored) if isinstance(stored, str) else list(stored)
        if all(_is_canonical(name) for name in names):
            continue
        fixed = list(dict.fromkeys(canonical(name) for name in names))
        value = json.dumps(fixed, ensure_ascii=False) if isinstance(stored, str) else fixed
        db.run(
            f"UPDATE {table} SET projects = ? WHERE {where}",
            (value, *(row[i + 1] for i in range(len(keys)))),
        )
