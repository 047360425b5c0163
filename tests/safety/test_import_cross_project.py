"""`aletheia import` refuses a reference across projects that no tool can make (a fact ended by
another project's fact, a fact of one project stating another's memory, a session's memory of
another project), by line, with nothing imported; the same references within a project import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.safety.entry_points import run_command
from tests.safety.test_hostile_import import _episode, _fact, _memory, _row_counts

HEADER = {"type": "header", "format": "aletheia-export", "version": 1}


def _lines(*records: tuple[str, dict[str, Any]]) -> list[str]:
    return [json.dumps(HEADER)] + [json.dumps({"type": t, "data": d}) for t, d in records]


def _memories(second: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("memory", _memory(id=1, uid="a" * 32, project="proj", title="One", text="One")),
        ("memory", _memory(id=2, uid="b" * 32, project=second, title="Two", text="Two")),
    ]


def _superseded(second: str) -> list[tuple[str, dict[str, Any]]]:
    ended = _fact(id=1, uid="c" * 32, project="proj", valid_to=5, superseded_by=2)
    later = _fact(id=2, uid="d" * 32, project=second, valid_from=5, recorded_at=5)
    return [*_memories(second), ("fact", ended), ("fact", later)]


def _stating(second: str) -> list[tuple[str, dict[str, Any]]]:
    return [*_memories(second), ("fact", _fact(id=1, project=second, memory_id=1))]


def _session(second: str) -> list[tuple[str, dict[str, Any]]]:
    link = {"episode_id": 1, "memory_id": 1}
    return [
        *_memories(second),
        ("episode", _episode(id=1, project=second)),
        ("episode_memory", link),
    ]


CASES = {
    "a fact ended by another project's fact": (
        _superseded,
        3,
        'this fact of project "proj" is superseded by fact #2 of project "other"; a fact is'
        " superseded only by a fact of its own project.",
    ),
    "a fact naming another project's memory": (
        _stating,
        3,
        'this fact of project "other" names memory #1 of project "proj"; a fact belongs only'
        " to a memory of its own project.",
    ),
    "a session holding another project's memory": (
        _session,
        4,
        'this episode_memory record links episode #1 of project "other" to memory #1 of'
        ' project "proj"; a session holds only memories of its own project.',
    ),
}


def _import(home: Path, lines: list[str]) -> Any:
    home.mkdir(parents=True, exist_ok=True)
    source = home / "incoming.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run_command(home, "aletheia", "import", str(source))


@pytest.mark.parametrize("case", list(CASES))
def test_a_reference_across_projects_is_refused_by_line(tmp_path: Path, case: str) -> None:
    records, line, told = CASES[case]
    result = _import(tmp_path / "home", _lines(*records("other")))
    assert result.returncode == 2, result.stdout
    assert result.stderr == f"Error: Line {line + 1}: {told} Nothing was imported.\n"
    assert _row_counts(tmp_path / "home") == [0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_reference_within_a_project_imports(tmp_path: Path, case: str) -> None:
    records = CASES[case][0]("proj")
    result = _import(tmp_path / "home", _lines(*records))
    assert result.returncode == 0, result.stderr
    assert f"Imported {len(records)} records" in result.stdout
