"""The references still waiting for an item that an export carries (``"waiting"`` beside a
fact's or rule's data, what a sync stopped midway left): kept by an import, checked as hostile
input, exported again the same. Real SQLite stores, the real CLI."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from tests.cli.conftest import Invoke, Workspace
from tests.cli.test_transfer_hostile import _fact, _import, _memory, _refused, _rule

NOTE_UID = "01a2425ff6ef7382bb09249d805783e6"  # memory_data's
AWAITED = "0" * 31 + "a"  # an item no record of the export holds


def _waiting(record: dict[str, Any], *pairs: list[Any]) -> dict[str, Any]:
    return {**record, "waiting": list(pairs)}


def _pending(workspace: Workspace) -> list[tuple[str, ...]]:
    with closing(sqlite3.connect(workspace.data_dir / "aletheia.db")) as conn:
        rows = conn.execute("SELECT kind, key, field, target FROM sync_pending ORDER BY 1, 2, 3")
        return [tuple(row) for row in rows]


def _on(data_dir: Path, *args: str) -> Any:
    """The CLI on another store (``ALETHEIA_DATA_DIR``), in this process."""
    runner = CliRunner(env={"ALETHEIA_DATA_DIR": str(data_dir)})
    return runner.invoke(cli, list(args), catch_exceptions=False)


def test_references_waiting_for_their_items_are_kept_and_exported_again_the_same(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    memory_uid, fact_uid = "0" * 31 + "b", "0" * 31 + "c"
    records = [
        _memory(),
        _waiting(_fact(), ["memory", memory_uid]),
        _waiting(
            _rule(evidence_memory_ids=[1]),
            ["evidence_fact", fact_uid],
            ["evidence_memory", memory_uid],
        ),
    ]
    source = tmp_path / "first.jsonl"
    assert _import(run, tmp_path, records).exit_code == 0
    rule = records[2]["data"]["id"]
    assert _pending(workspace) == [
        ("fact", "f" * 32, "memory", memory_uid),
        ("rule", rule, "evidence_fact", fact_uid),
        ("rule", rule, "evidence_memory", memory_uid),
    ]
    assert run("export", "-o", str(source)).exit_code == 0
    lines = [json.loads(line) for line in source.read_text().splitlines()]
    assert [line.get("waiting") for line in lines[1:]] == [
        None,
        [["memory", memory_uid]],
        [["evidence_fact", fact_uid], ["evidence_memory", memory_uid]],
    ]
    copy = tmp_path / "copy"
    again = tmp_path / "again.jsonl"
    for step in (["import", str(source)], ["export", "-o", str(again)]):
        done = _on(copy, *step)
        assert done.exit_code == 0, done.output
    assert again.read_text() == source.read_text()


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        (_waiting(_fact(), ["memory"]), 'fact "waiting" must be a list of [field, uid] pairs.'),
        (
            {**_fact(), "waiting": {"memory": AWAITED}},
            'fact "waiting" must be a list of [field, uid] pairs.',
        ),
        (
            _waiting(_fact(), ["evidence_memory", AWAITED]),
            'fact "waiting" field must be one of: memory.',
        ),
        (
            _waiting(_rule(), [["evidence_memory"], AWAITED]),
            'rule "waiting" field must be one of: evidence_memory, evidence_fact.',
        ),
        (
            _waiting(_fact(), ["memory", "#1"]),
            'fact "waiting" must name each item by its uid (32 lowercase hexadecimal digits).',
        ),
        (
            _waiting(_fact(), ["memory", AWAITED.upper()]),
            'fact "waiting" must name each item by its uid (32 lowercase hexadecimal digits).',
        ),
        (
            _waiting(_rule(), ["evidence_memory", AWAITED], ["evidence_memory", AWAITED]),
            'rule "waiting" names a reference twice.',
        ),
        (
            _waiting(_fact(), ["memory", AWAITED], ["memory", "0" * 31 + "b"]),
            'fact "waiting" must hold at most 1 memory references.',
        ),
        (
            _waiting(_rule(), *(["evidence_fact", f"{n:032x}"] for n in range(101))),
            'rule "waiting" must hold at most 100 evidence_fact references.',
        ),
        (
            _waiting(_memory(), ["memory", AWAITED]),
            '"waiting" is for fact and rule records, not memory.',
        ),
    ],
)
def test_a_bad_waiting_reference_is_refused_naming_its_line(
    run: Invoke, tmp_path: Path, workspace: Workspace, record: dict[str, Any], problem: str
) -> None:
    message = _refused(run, tmp_path, workspace, [record])
    assert message == f"Error: Line 2: {problem} Nothing was imported.\n"


def test_a_fact_waiting_for_a_memory_while_it_has_one_is_refused(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    records = [_memory(), _waiting(_fact(memory_id=1), ["memory", AWAITED])]
    message = _refused(run, tmp_path, workspace, records)
    assert message == (
        'Error: Line 3: fact "waiting" names a memory, but the fact has one ("memory_id").'
        " Nothing was imported.\n"
    )


@pytest.mark.parametrize("field", ["memory", "evidence_memory", "evidence_fact"])
def test_a_reference_waiting_for_an_item_the_export_holds_is_refused(
    run: Invoke, tmp_path: Path, workspace: Workspace, field: str
) -> None:
    """A sync fills a reference in as its item arrives: one waiting for an item the store
    holds would wait for good (and push without it)."""
    held = "f" * 32 if field == "evidence_fact" else NOTE_UID
    waiting = _waiting(_fact() if field == "memory" else _rule(), [field, held])
    records = [_memory(), _fact(uid="f" * 32) if field != "memory" else waiting]
    if field != "memory":
        records.append(waiting)
    message = _refused(run, tmp_path, workspace, records)
    kind = "fact" if field == "memory" else "rule"
    line = 3 if field == "memory" else 4
    assert message == (
        f"Error: Line {line}: this {kind} record waits for item {held}, which the export holds:"
        " cite it by its id. Nothing was imported.\n"
    )


def test_an_export_leaves_out_a_reference_that_could_never_be_filled_in(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    """One waiting for an item the store holds (a sync fills one in only as its item arrives)
    or for an id no store makes (a hub of an earlier build passed it on): the export still
    imports."""
    records = [_memory(), _waiting(_fact(), ["memory", AWAITED])]
    assert _import(run, tmp_path, records).exit_code == 0
    with closing(sqlite3.connect(workspace.data_dir / "aletheia.db")) as conn, conn:
        conn.executemany(
            "INSERT INTO sync_pending (kind, key, field, target) VALUES ('fact', ?, 'memory', ?)",
            [("f" * 32, NOTE_UID), ("f" * 32, "note-1")],
        )
    source = tmp_path / "out.jsonl"
    assert run("export", "-o", str(source)).exit_code == 0
    (fact,) = (json.loads(line) for line in source.read_text().splitlines()[2:])
    assert fact["waiting"] == [["memory", AWAITED]]
    assert _on(tmp_path / "copy", "import", str(source)).exit_code == 0
