"""An import refuses what a sync refuses, and mends what a sync mends, with the domain's own
checks (``rule_words``, ``rule_scope_name``, ``project_key``, ``blank_fact_part``): a rule with a
blank ``then``, a situation rule without a name, a project rule naming no project or every
project, a fact with a blank part. A refused record is named by its line and field, and
nothing is imported. Real SQLite stores, the real CLI."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.domain.rules import rule_id
from aletheia_mem.sync.validate import validate_records
from tests.cli.conftest import Invoke, Workspace
from tests.cli.test_transfer_hostile import _fact, _import, _memory, _refused, _rule
from tests.hub.sync_helpers import items_at


def _episode(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": 1, "uid": "e" * 32, "project": "shop", "tool": "claude-code", "started_at": 50,
        "ended_at": None, "summary": None, "dismissed_at": None, "dismiss_reason": None,
    }  # fmt: skip
    data.update(changes)
    return {"type": "episode", "data": data}


@pytest.mark.parametrize("then", ["", "   ", "\n\t"])
def test_a_rule_with_a_blank_then_is_refused_naming_its_line(
    run: Invoke, tmp_path: Path, workspace: Workspace, then: str
) -> None:
    message = _refused(run, tmp_path, workspace, [_memory(), _rule(then_text=then)])
    assert message == (
        'Error: Line 3: rule field "then_text" must not be blank. Nothing was imported.\n'
    )


@pytest.mark.parametrize("name", ["", "  "])
def test_a_situation_rule_without_a_name_is_refused_naming_its_line(
    run: Invoke, tmp_path: Path, workspace: Workspace, name: str
) -> None:
    record = _rule(scope_tier="situation", scope_name=name)
    message = _refused(run, tmp_path, workspace, [record])
    assert message == (
        'Error: Line 2: rule field "scope_name" of a situation rule must not be blank.'
        " Nothing was imported.\n"
    )


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("*", 'must name one project, not "*" (every project)'),
        (" * ", 'must name one project, not "*" (every project)'),
        ("", "must not be blank"),
        ("   ", "must not be blank"),
    ],
)
def test_a_project_rule_naming_no_project_or_every_project_is_refused(
    run: Invoke, tmp_path: Path, workspace: Workspace, name: str, problem: str
) -> None:
    records = [_memory(), _rule(scope_tier="project", scope_name=name)]
    message = _refused(run, tmp_path, workspace, records)
    assert message == (
        f'Error: Line 3: rule field "scope_name" of a project rule {problem}.'
        " Nothing was imported.\n"
    )


@pytest.mark.parametrize("part", ["subject", "predicate", "object"])
@pytest.mark.parametrize("blank", ["", "  "])
def test_a_fact_with_a_blank_part_is_refused_naming_its_line_and_field(
    run: Invoke, tmp_path: Path, workspace: Workspace, part: str, blank: str
) -> None:
    message = _refused(run, tmp_path, workspace, [_memory(), _fact(**{part: blank})])
    assert message == (
        f'Error: Line 3: fact field "{part}" must not be blank. Nothing was imported.\n'
    )


def test_rules_are_kept_in_the_one_form_add_rule_gives_them_under_that_forms_id(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    """A blank ``when`` is "always", words one space apart, a project rule's name its key and
    an everywhere rule's name none: as sync keeps them, so that one rule has one id."""
    records = [
        _rule(then_text="Run   the\ntests", when_text="  "),
        _rule(then_text="Use pnpm", when_text="ALWAYS", scope_tier="project", scope_name=" Shop "),
        _rule(then_text="Be brief", scope_tier="everywhere", scope_name="leftover"),
    ]
    result = _import(run, tmp_path, records)
    assert result.exit_code == 0, result.output
    held = {rule["then"]: rule for rule in json.loads(run("rules", "list", "--json").stdout)}
    expected = {
        "Run the tests": ("always", "everywhere", ""),
        "Use pnpm": ("always", "project", "shop"),
        "Be brief": ("you commit", "everywhere", ""),
    }
    assert set(held) == set(expected)
    for then, (when, tier, name) in expected.items():
        rule = held[then]
        assert (rule["when"], rule["scope_tier"], rule["scope_name"]) == (when, tier, name)
        assert rule["id"] == rule_id(then, when, tier, name)


def test_what_the_import_mended_is_what_a_hub_keeps_of_a_push(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    """The mended store pushes as a hub keeps it: the hub's check changes nothing."""
    records = [
        _rule(then_text="Run   the tests", when_text=""),
        _rule(then_text="Use pnpm", scope_tier="project", scope_name=" Shop "),
        _rule(then_text="Be brief", scope_tier="everywhere", scope_name="leftover"),
        _episode(started_at=50, ended_at=20),
    ]
    assert _import(run, tmp_path, records).exit_code == 0
    pushed = list(items_at(workspace.data_dir / "aletheia.db").items())
    sent = [{"kind": k, "key": key, "v": [1, "a" * 32], "data": d} for (k, key), d in pushed]
    assert len(sent) == 4
    assert validate_records(sent, 10**13) == sent


@pytest.mark.parametrize(
    ("record", "query"),
    [
        (_episode(started_at=50, ended_at=20), "SELECT started_at, ended_at FROM episodes"),
        (_memory(created_at=50, updated_at=20), "SELECT created_at, updated_at FROM memories"),
    ],
    ids=["an episode ending before it starts", "a memory updated before it was made"],
)
def test_a_time_before_the_items_start_is_kept_as_its_start(
    run: Invoke, tmp_path: Path, workspace: Workspace, record: dict[str, Any], query: str
) -> None:
    result = _import(run, tmp_path, [record])
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(workspace.data_dir / "aletheia.db")) as conn:
        assert conn.execute(query).fetchone() == (50, 50)
