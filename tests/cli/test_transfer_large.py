"""A large import: read one line at a time (its memory bounded by the longest line, not the
file), still one transaction, still naming the line of a bad or dangling record."""

from __future__ import annotations

import json
import sqlite3
import tracemalloc
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import transfer
from aletheia_mem.domain.memories import dedupe_key
from aletheia_mem.domain.rules import rule_id
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite import transfer as sqlite_transfer
from tests.cli.conftest import Invoke, Workspace
from tests.domain.test_import_check import memory_data

pytestmark = pytest.mark.sqlite_only

MEMORIES = 240
TEXT_CHARS = 40_000  # each line ~40 KB: the file is ~10 MB, 240 times its longest line


def _text(number: int) -> str:
    words = " ".join(f"w{index % 97}" for index in range(TEXT_CHARS // 4))
    return f"note {number}: {words}"[:TEXT_CHARS]


def _records(count: int = MEMORIES) -> list[str]:
    """An export's lines: ``count`` long memories, a fact on each tenth, a rule citing both."""
    lines: list[str] = []
    header = {"type": "header", "format": "aletheia-export", "version": 1}
    lines.append(json.dumps(header))
    for number in range(1, count + 1):
        data = memory_data(
            id=number, uid=f"{number:032x}", title=f"note {number}", text=_text(number)
        )
        lines.append(json.dumps({"type": "memory", "data": data}))
    lines.extend(
        json.dumps({"type": "fact", "data": _fact(number, memory=number)})
        for number in range(10, count + 1, 10)
    )
    rule = {
        "id": rule_id("x", "", "everywhere", ""), "then_text": "x", "when_text": "",
        "scope_tier": "everywhere",
        "scope_name": "", "evidence_memory_ids": [1, count], "evidence_fact_ids": [10],
        "source": "x", "added_at": 1, "last_confirmed_at": 1, "enabled": 1, "updated_at": 1,
    }  # fmt: skip
    lines.append(json.dumps({"type": "rule", "data": rule}))
    return [line + "\n" for line in lines]


def _fact(number: int, memory: int | None) -> dict[str, Any]:
    return {
        "id": number, "uid": f"{number:031x}f", "project": "shop", "subject": f"api {number}",
        "predicate": "db", "object": "pg", "valid_from": 1, "valid_to": None, "recorded_at": 1,
        "superseded_by": None, "source": "cli", "memory_id": memory, "dismissed_at": None,
        "dismiss_reason": None,
    }  # fmt: skip


def _import(store: SqliteStore, lines: list[str]) -> int:
    return transfer.import_lines(store, iter(lines), now=system_clock())


@pytest.fixture(scope="module")
def big_export() -> list[str]:
    return _records()


def test_a_large_import_holds_a_few_lines_not_the_file(tmp_path: Path, big_export: list[str]):
    """What the import allocates at its peak is a small part of the file (the old import held
    every prepared record, several times the file); the round trip stays exact."""
    size = sum(len(line) for line in big_export)
    longest = max(len(line) for line in big_export)
    assert size > 200 * longest
    store = SqliteStore(tmp_path / "one" / "aletheia.db")
    try:
        tracemalloc.start()
        try:
            assert _import(store, big_export) == len(big_export) - 1
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < size / 4, f"peak {peak:,} bytes for a file of {size:,}"
        exported = list(transfer.export_lines(store))
    finally:
        store.close()
    again = SqliteStore(tmp_path / "two" / "aletheia.db")
    try:
        _import(again, exported)
        assert list(transfer.export_lines(again)) == exported
        assert again.count_rows("memories") == MEMORIES
    finally:
        again.close()


def test_a_bad_last_line_of_a_large_import_leaves_the_store_empty(
    tmp_path: Path, big_export: list[str]
):
    """The rows before it were written in the import's transaction: all rolled back."""
    bad = json.dumps({"type": "memory", "data": memory_data(id=MEMORIES + 1, pinned=2)})
    lines = [*big_export, bad + "\n"]
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        with pytest.raises(InvalidInputError) as refused:
            _import(store, lines)
        assert refused.value.message == (
            f'Line {len(lines)}: memory field "pinned" must be 0 or 1, not 2. Nothing was imported.'
        )
        assert store.is_empty()
        assert store.data_sequences() == {}
        left = [path.name for path in tmp_path.iterdir()]
        assert all(name.startswith("aletheia.db") for name in left)  # no line index left
        assert _import(store, big_export) == len(big_export) - 1  # and the store takes it
    finally:
        store.close()


def test_a_file_cut_short_after_many_records_leaves_the_store_empty(
    tmp_path: Path, big_export: list[str]
):
    header = {**json.loads(big_export[0]), "records": {"memory": MEMORIES + 1}}
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        with pytest.raises(InvalidInputError, match="it was cut short"):
            _import(store, [json.dumps(header) + "\n", *big_export[1 : MEMORIES + 1]])
        assert store.is_empty()
    finally:
        store.close()


def test_a_dangling_reference_far_into_the_file_is_named_by_its_line(
    tmp_path: Path, big_export: list[str]
):
    """Found once every row is in (a reference may point forward), its line read back from the
    import's line index."""
    dangling = json.dumps({"type": "fact", "data": _fact(MEMORIES + 5, memory=MEMORIES + 7)})
    lines = [*big_export[:-1], dangling + "\n", big_export[-1]]
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        with pytest.raises(InvalidInputError) as refused:
            _import(store, lines)
        assert refused.value.message.startswith(
            f"Line {len(lines) - 1}: this facts record refers to a missing memories record."
        )
        assert store.is_empty()
        cited = json.loads(big_export[-1])
        cited["data"]["evidence_fact_ids"] = [10, 999]
        with pytest.raises(InvalidInputError) as refused:
            _import(store, [*big_export[:-1], json.dumps(cited) + "\n"])
        assert refused.value.message.startswith(
            f"Line {len(big_export)}: rule cites fact #999, which the export does not hold."
        )
        assert store.is_empty()
    finally:
        store.close()


def test_a_second_memory_with_the_same_words_keeps_no_dedupe_key(tmp_path: Path):
    """Two notes whose keys an older version made differently: the later one is kept without
    its key, and a save of those words finds the earlier one."""
    header = {"type": "header", "format": "aletheia-export", "version": 1}
    notes = [
        memory_data(id=number, uid=f"{number:032x}", title="Same", text="same words",
                    dedupe_key=f"old-{number}")
        for number in (1, 2)
    ]  # fmt: skip
    lines = [json.dumps(header), *(json.dumps({"type": "memory", "data": n}) for n in notes)]
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        assert _import(store, [line + "\n" for line in lines]) == 2
        keys = [row["dedupe_key"] for row in store.export_rows("memories")]
        assert keys == [dedupe_key("Same", "same words"), None]
    finally:
        store.close()


def test_the_cli_imports_a_large_file_from_standard_input_and_refuses_a_bad_last_line(
    run: Invoke, workspace: Workspace, tmp_path: Path, big_export: list[str]
):
    """Standard input is read once: nothing needs the file again (no second pass)."""
    del tmp_path
    bad = json.dumps({"type": "nope", "data": {}})
    refused = run("import", "-", input="".join([*big_export, bad + "\n"]))
    assert refused.exit_code == 2
    assert refused.stderr == (
        f'Error: Line {len(big_export) + 1} has an unknown type "nope". Nothing was imported.\n'
    )
    assert not (workspace.data_dir / "aletheia.db").exists()  # the store it made is gone
    imported = run("import", "-", input="".join(big_export))
    assert imported.exit_code == 0, imported.stderr
    assert imported.stdout.startswith(f"Imported {len(big_export) - 1} records")


def test_every_imported_item_is_logged_for_sync_chunk_by_chunk(
    tmp_path: Path, big_export: list[str], monkeypatch: pytest.MonkeyPatch
):
    """The change log is written a chunk of rows at a time (a statement over every row held
    them all in memory): none is left out at a chunk's edge, each after the one before."""
    monkeypatch.setattr(sqlite_transfer, "_LOG_CHUNK", 7)
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        _import(store, big_export)
        with closing(sqlite3.connect(tmp_path / "aletheia.db")) as conn:
            logged = conn.execute(
                "SELECT kind, count(*) FROM sync_log WHERE remote = 0 GROUP BY kind ORDER BY kind"
            ).fetchall()
            keys = [
                row[0] for row in conn.execute("SELECT key FROM sync_log WHERE kind = 'memory'")
            ]
        assert logged == [("fact", MEMORIES // 10), ("memory", MEMORIES), ("rule", 1)]
        assert sorted(keys) == [f"{number:032x}" for number in range(1, MEMORIES + 1)]
    finally:
        store.close()
