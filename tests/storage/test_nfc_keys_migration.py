"""A store an earlier release left with decomposed names (a macOS folder's ``é``) in project
keys, list names and fact keys: the migration rewrites them to NFC, so the tools, which now
canonicalise what they are given, find every row, and a twin already under the composed name
is kept beside it, findable, never merged away. Both stores, real files and schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.domain.rules import rule_id
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.search.text import index_text
from aletheia_mem.storage import migrate
from aletheia_mem.storage.canonical_keys import project_rule_id
from aletheia_mem.storage.postgres import database as pg_database
from aletheia_mem.storage.postgres.full_text import column_tokens
from aletheia_mem.storage.sync_dialect import json_value
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from tests.stores import open_target, rows_at, run_at, store_target

NFD, NFC = "cafe\u0301", "caf\u00e9"
NFD_NAME, NFC_NAME = "cre\u0300me", "cr\u00e8me"
T = 1_790_000_000_000
RULE = "Run the cafe checks"


def _call(app: AppContext, name: str, **arguments: Any) -> str:
    result = call_tool(app, TOOLS_BY_NAME[name], arguments)
    assert not result.is_error, result
    return result.text


def _as_before_the_step(target: Path | str) -> None:
    """Forget the NFC step, as a store an earlier release migrated."""
    if isinstance(target, Path):
        run_at(target, "DELETE FROM schema_migrations WHERE version = ?", migrate.NFC_KEYS_STEP)
        run_at(target, f"PRAGMA user_version = {migrate.NFC_KEYS_STEP - 1}")
    else:
        step = pg_database.NFC_KEYS_STEP
        run_at(target, "DELETE FROM schema_migrations WHERE version = ?", step)


def _decompose(target: Path | str) -> None:
    """Rewrite the composed names as an earlier release would have stored them."""
    run_at(target, "UPDATE memories SET project = ?", NFD)
    run_at(target, "UPDATE facts SET project = ?, subject_key = ?", NFD, NFD_NAME)
    run_at(target, "UPDATE episodes SET project = ?", NFD)
    old_id = rule_id(RULE, "always", "project", NFD)  # an earlier release's id of the rule
    run_at(
        target, "UPDATE rules SET id = ?, scope_name = ? WHERE scope_tier = 'project'", old_id, NFD
    )
    key, title = f"list:{NFD}", f"{NFD} list"
    run_at(
        target,
        "UPDATE memories SET dedupe_key = ?, title = ? WHERE title = ?",
        key,
        title,
        f"{NFC} list",
    )
    projects = json.dumps([NFD, "shop"]) if isinstance(target, Path) else [NFD, "shop"]
    run_at(target, "UPDATE hub_tokens SET projects = ?", projects)


def test_decomposed_keys_of_an_older_store_are_found_and_twins_kept(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> None:
    target = store_target(request, store_kind, tmp_path)
    store = open_target(target)
    app = AppContext(store=store, clock=lambda: T, default_project=NFC, caller="cli")
    facts = [{"subject": NFC_NAME, "predicate": "owner", "object": "ana"}]
    _call(app, "save_memory", text="from nfd cwd", facts=facts)
    _call(app, "work_state_write", list="todo", items=["old"])
    _call(app, "work_state_write", list=NFC, items=["named"])
    _call(app, "add_rule", then=RULE, scopeTier="project", scopeName=NFC)
    create_token(store, lambda: T, scope="sync", projects=(NFC, "shop"), name="laptop")
    store.close()
    _decompose(target)
    store = open_target(target)  # the rows are decomposed; the tools miss them now
    app = AppContext(store=store, clock=lambda: T + 1000, default_project=NFC, caller="cli")
    assert "No matches." in _call(app, "search", query="nfd")
    _call(app, "work_state_write", list="todo", items=["twin"])  # a twin under the composed key
    _call(app, "save_memory", text="a note", facts=[{**facts[0], "object": "bo"}])
    assert _call(app, "save_memory", text="from nfd cwd").startswith("Saved as #")  # a twin
    store.close()
    _as_before_the_step(target)

    store = open_target(target)  # migrated again: the NFC step runs
    try:
        app = AppContext(store=store, clock=lambda: T + 2000, default_project=NFC, caller="cli")
        assert "from nfd cwd" in _call(app, "search", query="nfd")
        twins = "SELECT project, dedupe_key IS NULL FROM memories WHERE text = ? ORDER BY id"
        assert rows_at(target, twins, "from nfd cwd") == [(NFC, True), (NFC, False)]
        assert "from nfd cwd" in _call(app, "session_start_context")
        assert RULE in _call(app, "session_start_context")
        new_id = rule_id(RULE, "always", "project", NFC)  # as add_rule keys it, sync checks it
        assert rows_at(target, "SELECT id FROM rules") == [(new_id,)]
        assert '"named"' in _call(app, "work_state_read", list="cafe\u0301")
        assert '"twin"' in _call(app, "work_state_read", list="todo")
        old = rows_at(target, "SELECT id FROM memories WHERE text = ?", '["old"]')[0][0]
        assert '"old"' in _call(app, "work_state_read", list=f"todo (#{old})")
        current = _call(app, "fact_history", subject=NFD_NAME)
        assert "bo" in current and "ana" not in current
        assert "ana" in _call(app, "fact_history", subject=NFC_NAME, include_superseded=True)
        (projects,) = rows_at(target, "SELECT projects FROM hub_tokens")[0]
        assert list(json_value(projects)) == [NFC, "shop"]
        for table, column in (("memories", "project"), ("facts", "subject_key")):
            held = {row[0] for row in rows_at(target, f"SELECT {column} FROM {table}")}
            assert NFD not in held and NFD_NAME not in held
    finally:
        store.close()


def test_the_migration_keys_a_project_rule_as_add_rule_does() -> None:
    assert project_rule_id("Run tests", "always", NFC) == rule_id(
        "Run tests", "always", "project", NFC
    )


def _indexes_title(target: Path | str, memory_id: int, title: str) -> bool:
    """Whether the store's full-text index holds ``title`` as the memory's title: SQLite's
    FTS5 table its text (so no other spelling), PostgreSQL's terms its words."""
    if isinstance(target, Path):
        sql = "SELECT title FROM memory_fts WHERE rowid = ?"
        return rows_at(target, sql, memory_id) == [(index_text(title),)]
    sql = "SELECT term FROM memory_terms WHERE memory_id = ? AND col = 0"
    held = sorted(row[0] for row in rows_at(target, sql, memory_id))
    return held == sorted(column_tokens([index_text(title)])[0])


def test_a_list_the_migration_renames_is_found_by_its_new_name_only(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> None:
    target = store_target(request, store_kind, tmp_path)
    store = open_target(target)
    app = AppContext(store=store, clock=lambda: T, default_project=NFC, caller="cli")
    _call(app, "work_state_write", list="todo", items=["old"])
    _call(app, "work_state_write", list=NFC, items=["named"])
    store.close()
    _decompose(target)
    if isinstance(target, Path):  # indexed as the earlier release wrote it (PostgreSQL: words)
        sql = "UPDATE memory_fts SET title = ? WHERE rowid IN"
        sql += " (SELECT id FROM memories WHERE text = ?)"
        run_at(target, sql, f"{NFD} list", '["named"]')
    store = open_target(target)
    app = AppContext(store=store, clock=lambda: T + 1000, default_project=NFC, caller="cli")
    _call(app, "work_state_write", list="todo", items=["twin"])  # a twin under the composed key
    store.close()
    _as_before_the_step(target)

    store = open_target(target)  # migrated again: the NFC step renames the decomposed lists
    try:
        app = AppContext(store=store, clock=lambda: T + 2000, default_project=NFC, caller="cli")
        old = rows_at(target, "SELECT id FROM memories WHERE text = ?", '["old"]')[0][0]
        named = rows_at(target, "SELECT id FROM memories WHERE text = ?", '["named"]')[0][0]
        assert _indexes_title(target, old, f"todo (#{old}) list")
        assert _indexes_title(target, named, f"{NFC} list")  # not its decomposed spelling
        found = _call(app, "search", query=f"(#{old})")  # only its new name holds the number
        assert not found.startswith("No matches.") and f"todo (#{old}) list" in found
    finally:
        store.close()
