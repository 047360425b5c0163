"""Tools marked read-only never write: the HTTP server answers them on its event loop, where a
write could wait for the file's lock and stall every other request of that worker."""

from __future__ import annotations

from typing import Any

import pytest

from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS
from tests.conftest import ToolCaller
from tests.stores import dump

READ_CALLS: dict[str, list[dict[str, Any]]] = {
    "session_start_context": [{}, {"project": "billing"}],
    "search": [
        {"query": "pnpm lockfile"},
        {"query": "pnpm", "order": "date_asc", "type": "decision"},
        {"query": "nothing-matches-this"},
        {"file": "package.json"},
        {"query": "postgres", "project": "*", "offset": 1},
    ],
    "timeline": [{"anchor": 1}, {"query": "pnpm"}, {"anchor": 999}],
    "get_observations": [{"ids": [1, 2, 999]}],
    "fact_history": [
        {"subject": "payments-api"},
        {"subject": "payments-api", "include_superseded": True},
        {"subject": "payments-api", "as_of": "2020-01-01"},
    ],
    "list_rules": [{}],
    "work_state_read": [{"list": "todo"}, {"list": "missing"}],
}


def file_contents(app: AppContext) -> list[str]:
    """Every row of every table, read on a connection of its own."""
    return dump(app.store)


def test_every_read_only_tool_is_exercised() -> None:
    assert {tool.name for tool in TOOLS if tool.read_only} == set(READ_CALLS)


@pytest.mark.parametrize("name", sorted(READ_CALLS))
def test_read_only_tools_leave_the_file_as_it_was(
    name: str, app: AppContext, call: ToolCaller
) -> None:
    writes = [
        call(
            "save_memory",
            text="Use pnpm, not npm: the lockfile is pnpm-lock.yaml",
            type="decision",
            files=["package.json"],
            facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 15"}],
        ),
        call(
            "save_memory",
            text="payments-api moved to PostgreSQL 16",
            facts=[{"subject": "payments-api", "predicate": "database", "object": "PostgreSQL 16"}],
        ),
        call("add_rule", then="Run the linter before every commit."),
        call("work_state_write", list="todo", items=["ship it"]),
    ]
    assert not any(result.is_error for result in writes), writes
    before = file_contents(app)
    answers = [call(name, **arguments) for arguments in READ_CALLS[name]]
    assert file_contents(app) == before
    assert not answers[0].is_error, answers[0].text
