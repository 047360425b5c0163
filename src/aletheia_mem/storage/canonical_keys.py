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

import hashlib
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
    """``conn`` with ``?`` placeholders, whatever the database's own are."""

    def __init__(self, conn: _Conn, mark: str) -> None:
        self._conn, self._mark = conn, mark
        self.postgres = mark != "?"

    def rows(self, sql: str, parameters: tuple[Any, ...] = ()) -> list[Any]:
        return list(self._conn.execute(sql.replace("?", self._mark), parameters).fetchall())

    def run(self, sql: str, parameters: tuple[Any, ...]) -> None:
        self._conn.execute(sql.replace("?", self._mark), parameters)


def canonicalize_keys(conn: _Conn, mark: str = "?") -> None:
    """Rewrite every stored project key, list name and fact key to NFC (see the module)."""
    db = _Db(conn, mark)
    _memories(db)
    _facts(db)
    for table in ("episodes", "audit", "repositories"):
        _column(db, table, "project")
    _rules(db)
    _project_lists(db, "hub_tokens", "id")
    _project_lists(db, "sync_scopes", "hub_url, token_digest")


def _memories(db: _Db) -> None:
    rows = db.rows("SELECT id, project, kind, dedupe_key, title FROM memories ORDER BY id")
    moving, taken = [], set()
    for row in rows:
        memory_id, project, kind, key, title = (row[i] for i in range(5))
        is_list = kind == "work_state" and key is not None and key.startswith(LIST_PREFIX)
        if _is_canonical(project) and (not is_list or _is_canonical(key)):
            if key is not None:
                taken.add((project, key))
            continue
        moving.append((memory_id, project, key, title, is_list))
    for memory_id, project, key, title, is_list in moving:
        project = canonical(project)
        if is_list:
            key, title = canonical(key), canonical(title)
            name = key.removeprefix(LIST_PREFIX)
            suffix = 0
            while (project, key) in taken:  # a twin: this list is kept under a name of its own
                suffix += 1
                renamed = f"{name} (#{memory_id})" + (f" ({suffix})" if suffix > 1 else "")
                key, title = LIST_PREFIX + renamed, f"{renamed} list"
        elif key is not None and (project, key) in taken:
            key = None  # the same note in the composed project: kept, without its dedupe key
        if key is not None:
            taken.add((project, key))
        db.run(
            "UPDATE memories SET project = ?, dedupe_key = ?, title = ? WHERE id = ?",
            (project, key, title, memory_id),
        )


def _facts(db: _Db) -> None:
    rows = db.rows(
        "SELECT id, project, subject_key, predicate_key, valid_from, valid_to FROM facts"
        " ORDER BY id"
    )
    current: dict[tuple[str, str, str], tuple[int, int]] = {}
    moving: list[tuple[int, tuple[str, str, str], int, int | None]] = []
    for row in rows:
        fact_id, project, subject, predicate, valid_from, valid_to = (row[i] for i in range(6))
        key = (project, subject, predicate)
        if all(_is_canonical(part) for part in key):
            if valid_to is None:
                current[key] = (fact_id, valid_from)
            continue
        fixed = (canonical(project), canonical(subject), canonical(predicate))
        moving.append((fact_id, fixed, valid_from, valid_to))
    for fact_id, key, valid_from, valid_to in moving:
        twin = current.get(key) if valid_to is None else None
        if twin is not None:  # closed, superseded by the fact current under the composed key
            db.run(
                "UPDATE facts SET project = ?, subject_key = ?, predicate_key = ?,"
                " valid_to = ?, superseded_by = ? WHERE id = ?",
                (*key, max(valid_from, twin[1]), twin[0], fact_id),
            )
            continue
        db.run(
            "UPDATE facts SET project = ?, subject_key = ?, predicate_key = ? WHERE id = ?",
            (*key, fact_id),
        )
        if valid_to is None:
            current[key] = (fact_id, valid_from)


def _column(db: _Db, table: str, column: str) -> None:
    """Every row's ``column`` (a project key) in NFC: no key of these tables is unique."""
    if table == "repositories" and db.postgres:  # SQLite's only: a hub keeps none
        return
    for row in db.rows(f"SELECT DISTINCT {column} FROM {table}"):
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
        if _is_canonical(name):
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
