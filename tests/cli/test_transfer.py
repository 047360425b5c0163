"""export and import: JSON Lines, a lossless round trip into an empty store."""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories, transfer
from aletheia_mem.storage.id_cap import MAX_ID
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.timefmt import FIRST_MS
from tests.cli.conftest import DiskEvent, Invoke, Workspace, durable_write, json_of
from tests.domain.test_import_check import memory_data


def _fill(run: Invoke) -> None:
    """Every kind of record: pinned, dismissed, lists, fact history, rules on and off."""
    run("save", "Use pnpm, not npm", "--type", "decision", "--pin", "--file", "package.json")
    run("save", "Staging deploys need the VPN", "--type", "gotcha")
    run("save", 'Ünïcödé and "quotes" and\nnewlines', "--project", "billing")
    run("dismiss", "2", "--reason", "duplicate")
    run("lists", "write", "todo", "--items-json", '["a", {"task": "b", "done": false}]')
    run("facts", "add", "payments-api", "database", "PostgreSQL 15")
    run("facts", "add", "payments-api", "database", "PostgreSQL 16")
    run("dismiss", "1", "--type", "fact")
    run("rules", "add", "Run the tests", "--when", "you commit", "--evidence-memory", "1")
    disabled = json_of(run("rules", "add", "Old rule", "--json"))["rule"]["id"]
    run("rules", "disable", disabled)


def _episode(store_dir: Path) -> None:
    store = SqliteStore(store_dir / "aletheia.db")
    try:
        episode = store.open_episode("e" * 32, "shop", "claude-code", 1_000)
        store.add_request(episode, "fix the login bug", 2_000)
        store.link_episode_memory(episode, 1)  # a memory its hooks saved
        store.end_episode(episode, 3_000, "done")
    finally:
        store.close()


def test_export_then_import_into_an_empty_store_reproduces_it_exactly(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(run)
    _episode(workspace.data_dir)
    dump = tmp_path / "dump.jsonl"
    exported = run("export", "-o", str(dump))
    assert exported.exit_code == 0
    lines = dump.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["type"] == "header" and header["format"] == "aletheia-export"
    kinds = [json.loads(line)["type"] for line in lines[1:]]
    assert {"memory", "fact", "rule", "episode", "request", "episode_memory", "audit"} <= set(kinds)
    assert exported.stderr == f"Exported {len(lines) - 1} records to {dump}.\n"
    records = [json.loads(line) for line in lines[1:]]
    fact_one = next(r["data"] for r in records if r["type"] == "fact" and r["data"]["id"] == 1)
    assert fact_one["superseded_by"] == 2 and fact_one["dismissed_at"] is not None
    memory_two = next(r["data"] for r in records if r["type"] == "memory" and r["data"]["id"] == 2)
    assert (memory_two["type"], memory_two["dismiss_reason"]) == ("gotcha", "duplicate")

    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "fresh"))
    imported = run("import", str(dump))
    assert imported.exit_code == 0
    assert (
        imported.stdout
        == f"Imported {len(lines) - 1} records into {tmp_path / 'fresh' / 'aletheia.db'}.\n"
    )
    assert run("export").stdout == dump.read_text(encoding="utf-8")
    # The imported store works: search, dismissals, lists and fact history came along.
    assert "#1" in run("search", "pnpm").stdout
    assert run("search", "VPN").stdout.startswith("No matches.")
    assert json_of(run("lists", "read", "todo", "--json"))[1] == {"task": "b", "done": False}
    assert "#1" in run("search", "--file", "package.json").stdout
    history = json_of(run("facts", "history", "payments-api", "--all", "--json"))
    assert [f["id"] for f in history] == [2]  # fact 1 stays dismissed
    saved = run("save", "a new memory after import")
    assert saved.stdout == "Saved as #5 in shop.\n"
    store = SqliteStore(tmp_path / "fresh" / "aletheia.db")
    try:
        assert store.episode_memory_ids(1, "note", 10) == [1]
    finally:
        store.close()


def test_import_refuses_a_store_that_holds_data(run: Invoke, tmp_path: Path) -> None:
    run("save", "something")
    dump = tmp_path / "dump.jsonl"
    run("export", "-o", str(dump))
    result = run("import", str(dump))
    assert result.exit_code == 4
    assert "already holds data; import loads an export into an empty store" in result.stderr


def test_import_rejects_what_is_not_an_export(run: Invoke, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "memory", "data": {"id": 1}}\n', encoding="utf-8")
    result = run("import", str(bad))
    assert result.exit_code == 2
    assert (
        result.stderr
        == "Error: This is not an Aletheia export (no header line). Nothing was imported.\n"
    )
    header = json.dumps({"type": "header", "format": "aletheia-export", "version": 1})
    bad.write_text(header + "\n{nope\n", encoding="utf-8")
    assert run("import", str(bad)).stderr == "Error: Line 2 is not JSON. Nothing was imported.\n"
    bad.write_text(header + '\n{"type": "widget"}\n', encoding="utf-8")
    assert run("import", str(bad)).stderr == (
        'Error: Line 2 has an unknown type "widget". Nothing was imported.\n'
    )


def test_a_failed_import_leaves_no_store_it_made(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    header = json.dumps({"type": "header", "format": "aletheia-export", "version": 1})
    orphan = json.dumps(
        {"type": "request", "data": {"id": 1, "episode_id": 42, "at": 1, "text": "x"}}
    )
    bad = tmp_path / "orphan.jsonl"
    bad.write_text(header + "\n" + orphan + "\n", encoding="utf-8")
    result = run("import", str(bad))
    assert result.exit_code == 2
    assert not (workspace.data_dir / "aletheia.db").exists()  # the store it made is gone again
    assert run("search", "x").exit_code == 7  # so a mistyped folder still has "no store"
    run("save", "kept")  # a store that was there before a failed import stays, with its data
    assert run("import", str(bad)).exit_code == 4
    store = SqliteStore(workspace.data_dir / "aletheia.db")
    try:
        assert not store.is_empty()
    finally:
        store.close()


def test_a_failed_import_removes_the_folders_it_made_and_keeps_those_that_were_there(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"bad\n', encoding="utf-8")
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "new" / "data"))
    assert run("import", str(bad)).exit_code == 2
    assert not (tmp_path / "new").exists()
    there = tmp_path / "there"
    there.mkdir()
    (there / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(there))
    assert run("import", str(bad)).exit_code == 2
    assert sorted(path.name for path in there.iterdir()) == ["notes.txt"]


def test_import_reads_standard_input(
    run: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "piped")
    text = run("export").stdout
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "other"))
    assert run("import", "-", input=text).exit_code == 0
    assert run("export").stdout == text


# Export and import of a local store file: SQLite alone.
@pytest.mark.sqlite_only
def test_progress_callback_counts_every_record(store: SqliteStore, tmp_path: Path) -> None:
    store.open_episode("e", "shop", "cli", 1)
    seen: list[int] = []
    with (tmp_path / "x.jsonl").open("w", encoding="utf-8") as out:
        count = transfer.write_export(store, out, seen.append)
    assert count == 1 == len(seen) == transfer.count_records(store)


def test_whatever_a_writer_accepts_at_its_limits_exports_and_imports_again(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI refuses what a tool would (one past each limit), and what it takes at the limits
    round-trips: a store's own export never fails its import."""
    part, text, title = "s" * 2000, "t " * 10_000, "T" * 400
    too_long = [
        ("save", "t" * 20_001),
        ("save", "ok", "--title", "T" * 401),
        ("save", "ok", "--file", "f" * 1001),
        ("facts", "add", part + "s", "is", "x"),
        ("rules", "add", "Run the tests", "--when", "w" * 801),
        ("lists", "write", "l" * 201, "a"),
    ]
    for args in too_long:
        refused = run(*args)
        assert refused.exit_code == 2 and "must be at most" in refused.stderr, args
    assert run("save", text, "--title", title, "--file", "f" * 1000).exit_code == 0
    assert run("facts", "add", part, "p" * 2000, "o" * 2000).exit_code == 0
    store = SqliteStore(workspace.data_dir / "aletheia.db")
    try:  # a memory stating a fact at its limits, as save_memory's facts argument takes it
        stated = memories.FactInput("u" * 2000, "p" * 2000, "o" * 2000)
        item = memories.MemoryInput("States a long fact", "shop", "codex", facts=[stated])
        memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    assert run("rules", "add", "r" * 800, "--when", "w" * 800).exit_code == 0
    assert run("lists", "write", "l" * 200, "a").exit_code == 0
    dump = tmp_path / "limits.jsonl"
    assert run("export", "-o", str(dump)).exit_code == 0
    assert "u" * 2000 in dump.read_text(encoding="utf-8")

    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "fresh"))
    imported = run("import", str(dump))
    assert imported.exit_code == 0, imported.stderr
    assert run("export").stdout == dump.read_text(encoding="utf-8")


linux_only = pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/fd and ptys")
HEADER = {"type": "header", "format": "aletheia-export", "version": 1}


def _read_until(fd: int, needle: bytes) -> bytes:
    """What ``fd`` gives until ``needle`` arrives, waiting at most 5 s (a terminal or a pipe
    may hand the export over in pieces: a line at a time)."""
    got, deadline = b"", time.monotonic() + 5
    while needle not in got and (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([fd], [], [], left)
        if not readable:
            break
        got += os.read(fd, 1 << 20)
    return got


def test_export_into_a_fifo_writes_through_it_and_leaves_it_a_fifo(
    run: Invoke, tmp_path: Path
) -> None:
    run("save", "piped")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the export's open returns
    try:
        assert run("export", "-o", str(fifo)).exit_code == 0
        assert stat.S_ISFIFO(fifo.lstat().st_mode)
        assert b'"text":"piped"' in _read_until(reader, b'"text":"piped"')
    finally:
        os.close(reader)


@linux_only
def test_export_through_a_link_to_a_terminal_writes_to_it_and_keeps_the_link(
    run: Invoke, tmp_path: Path
) -> None:
    """As ``-o /dev/stdout`` on a terminal: the link is followed, never replaced."""
    run("save", "to the terminal")
    master, slave = os.openpty()
    link = tmp_path / "stdout"
    link.symlink_to(os.ttyname(slave))
    try:
        assert run("export", "-o", str(link)).exit_code == 0
        assert link.is_symlink()
        assert b'"text":"to the terminal"' in _read_until(master, b'"text":"to the terminal"')
    finally:
        os.close(slave)
        os.close(master)


@linux_only
def test_export_into_a_pipe_descriptor_writes_through_it(run: Invoke) -> None:
    """As ``-o >(gzip > x)``, which the shell passes as /dev/fd/63."""
    run("save", "to the pipe")
    read_end, write_end = os.pipe()
    try:
        exported = run("export", "-o", f"/dev/fd/{write_end}")
    finally:
        os.close(write_end)
    try:
        assert exported.exit_code == 0, exported.stderr
        assert b'"text":"to the pipe"' in _read_until(read_end, b'"text":"to the pipe"')
    finally:
        os.close(read_end)


@linux_only
def test_export_through_a_link_to_a_descriptor_of_a_file_appends_to_that_file(
    run: Invoke, tmp_path: Path
) -> None:
    """As ``aletheia export -o /dev/stdout >> backup``: the link to /proc/self/fd/N stays."""
    run("save", "redirected")
    backup = tmp_path / "backup.jsonl"
    with backup.open("a", encoding="utf-8") as held:
        held.write("before\n")
        held.flush()
        link = tmp_path / "stdout"
        link.symlink_to(f"/proc/self/fd/{held.fileno()}")
        assert run("export", "-o", str(link)).exit_code == 0
    assert link.is_symlink()
    text = backup.read_text(encoding="utf-8")
    assert text.startswith("before\n{") and '"text":"redirected"' in text


def test_export_through_a_link_to_a_file_replaces_that_file_and_keeps_the_link(
    run: Invoke, tmp_path: Path, disk_events: list[DiskEvent]
) -> None:
    """As the shell's ``>`` and ``rules sync`` do: the file the link leads to gets the export,
    renamed over it once complete; the link stays a link."""
    run("save", "through the link")
    backups = tmp_path / "backups"
    backups.mkdir()
    real = backups / "real.jsonl"
    real.write_text("old backup", encoding="utf-8")
    link = tmp_path / "dump.jsonl"
    link.symlink_to(real)
    disk_events.clear()
    result = run("export", "-o", str(link))
    assert result.exit_code == 0
    assert result.stderr == f"Exported 1 records to {link}.\n"
    assert link.is_symlink() and link.resolve() == real
    assert '"text":"through the link"' in real.read_text(encoding="utf-8")
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert disk_events == durable_write(real)
    assert sorted(path.name for path in backups.iterdir()) == ["real.jsonl"]


def test_export_through_a_dangling_link_makes_the_file_it_names(
    run: Invoke, tmp_path: Path
) -> None:
    run("save", "made there")
    real = tmp_path / "new.jsonl"
    link = tmp_path / "dump.jsonl"
    link.symlink_to(real)
    assert run("export", "-o", str(link)).exit_code == 0
    assert link.is_symlink()
    assert '"text":"made there"' in real.read_text(encoding="utf-8")
    gone = tmp_path / "gone.jsonl"
    gone.symlink_to(tmp_path / "nowhere" / "x.jsonl")
    result = run("export", "-o", str(gone))
    assert result.exit_code != 0
    assert result.stderr == f"Error: Cannot write {gone}: no folder {tmp_path / 'nowhere'}.\n"
    assert gone.is_symlink()


def test_export_dash_output_is_standard_output(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    """``-o -`` is standard output, as ``import -`` reads standard input: no file named -."""
    run("save", "to stdout")
    plain = run("export")
    dashed = run("export", "-o", "-")
    assert dashed.exit_code == 0
    assert dashed.stdout == plain.stdout and '"text":"to stdout"' in dashed.stdout
    assert dashed.stderr == ""
    assert run("export", "-o", "-", "--json").stdout == plain.stdout
    assert not (workspace.project / "-").exists()


def test_export_progress_to_standard_output_goes_to_stderr(run: Invoke) -> None:
    """``export --progress > backup.jsonl``: the bar on stderr, the export alone on stdout."""
    run("save", "with a bar")
    result = run("export", "--progress")
    assert result.exit_code == 0
    assert "Exporting" in result.stderr
    assert "Exporting" not in result.stdout
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()][1:] == ["memory"]
    assert run("export", "--no-progress").stderr == ""


def test_export_into_a_missing_folder_is_one_line_and_no_traceback(
    run: Invoke, tmp_path: Path
) -> None:
    run("save", "x")
    target = tmp_path / "nodir" / "x.jsonl"
    result = run("export", "-o", str(target))
    assert result.exit_code == 2  # bad input, as a folder given for the file
    assert result.stderr == f"Error: Cannot write {target}: no folder {target.parent}.\n"


def _import_text(run: Invoke, tmp_path: Path, records: list[dict[str, Any]], **header: Any) -> Any:
    source = tmp_path / "in.jsonl"
    lines = [json.dumps({**HEADER, **header}), *(json.dumps(r) for r in records)]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run("import", str(source))


def _memory(**changes: Any) -> dict[str, Any]:
    return {"type": "memory", "data": memory_data(**changes)}


def test_import_refuses_ids_and_sequences_past_what_json_keeps_exactly(
    run: Invoke, tmp_path: Path
) -> None:
    for big in (MAX_ID + 1, 2**63 - 1):
        refused = _import_text(run, tmp_path, [_memory(), _memory(id=big, uid="b" * 32)])
        assert refused.exit_code == 2
        assert refused.stderr == (
            f'Error: Line 3: memory field "id" must be from 1 to {MAX_ID}. Nothing was imported.\n'
        )
    refused = _import_text(run, tmp_path, [_memory()], sequences={"memories": 2**63 - 1})
    assert refused.exit_code == 2
    assert refused.stderr == (
        f'Error: The header\'s "sequences" must be from 0 to {MAX_ID}. Nothing was imported.\n'
    )


def test_a_store_gives_no_id_past_the_cap_and_its_export_imports_back(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store imported at the cap gave 2^53 + 1 (a JavaScript client reads it as 2^53), and
    its export was then refused by every import ("sequences" past the cap)."""
    below = MAX_ID - 1
    fact = {"type": "fact", "data": {
        "id": below, "uid": "1" * 32, "project": "shop", "subject": "s", "predicate": "p",
        "object": "o", "valid_from": 1, "recorded_at": 1, "source": "cli",
    }}  # fmt: skip
    near = _import_text(
        run, tmp_path, [_memory(id=below), fact], sequences={"memories": below, "facts": below}
    )
    assert near.exit_code == 0, near.stderr
    assert run("save", "the last id").stdout == f"Saved as #{MAX_ID} in shop.\n"
    assert run("facts", "add", "api", "db", "pg", "--json").exit_code == 0
    store = workspace.data_dir / "aletheia.db"
    for refused, table in [
        (run("save", "one past the cap"), "memories"),
        (run("facts", "add", "api", "cache", "redis"), "facts"),
    ]:
        assert refused.exit_code == 4, refused.stdout
        assert refused.stderr == (
            f"Error: The store {store} has no ids left for {table}: ids stay at most"
            f" {MAX_ID:,} (2^53, the largest whole number every JSON reader keeps exactly),"
            " which an import took them to. Nothing was changed.\n"
        )
    dump = tmp_path / "at-cap.jsonl"
    assert run("export", "-o", str(dump)).exit_code == 0
    header = json.loads(dump.read_text(encoding="utf-8").splitlines()[0])
    assert header["sequences"]["memories"] == header["sequences"]["facts"] == MAX_ID
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "again"))
    again = run("import", str(dump))
    assert again.exit_code == 0, again.stderr
    assert run("export").stdout == dump.read_text(encoding="utf-8")


def test_import_redacts_an_audit_rows_tool_and_result(run: Invoke, tmp_path: Path) -> None:
    secret = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    row = {
        "id": 1, "at": 1, "actor": "me", "tool": secret, "project": "shop",
        "result": "password=hunter2Secret99", "detail": None,
    }  # fmt: skip
    assert _import_text(run, tmp_path, [{"type": "audit", "data": row}]).exit_code == 0
    exported = run("export").stdout
    assert secret not in exported and "hunter2Secret99" not in exported
    assert '"result":"password=[REDACTED]"' in exported


def test_import_refuses_a_uid_the_store_would_not_make(run: Invoke, tmp_path: Path) -> None:
    result = _import_text(run, tmp_path, [_memory(uid="password=hunter2Secret99")])
    assert result.exit_code == 2
    assert result.stderr == (
        'Error: Line 2: memory field "uid" must be 32 lowercase hexadecimal digits.'
        " Nothing was imported.\n"
    )


@linux_only
def test_import_of_an_endless_stream_is_refused_by_line(run: Invoke) -> None:
    result = run("import", "--no-progress", "/dev/zero")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: Line 1 is longer than 8,000,000 characters. Nothing was imported.\n"
    )
    piped = run("import", "-", input=json.dumps(HEADER) + "\n" + "x" * (transfer.MAX_LINE + 1))
    assert piped.exit_code == 2
    assert piped.stderr.startswith("Error: Line 2 is longer than 8,000,000 characters.")


def test_import_skips_a_byte_order_mark_and_names_a_line_that_is_not_utf8(
    run: Invoke, tmp_path: Path, workspace: Workspace
) -> None:
    source = tmp_path / "bom.jsonl"
    header = json.dumps(HEADER).encode()
    source.write_bytes(b"\xef\xbb\xbf" + header + b"\n" + json.dumps(_memory()).encode() + b"\n")
    assert run("import", str(source)).exit_code == 0
    (workspace.data_dir / "aletheia.db").unlink()
    source.write_bytes(header + b"\n" + b'{"type": "memory\xff"}\n')
    result = run("import", str(source))
    assert result.exit_code == 2
    assert result.stderr == "Error: Line 2 is not UTF-8 text. Nothing was imported.\n"


def test_a_fact_valid_from_before_1970_exports_and_imports_again(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """save_memory reads valid_from from year 1 on; the store's own export must import."""
    store = SqliteStore(workspace.data_dir / "aletheia.db")
    try:
        stated = memories.FactInput("repo", "founded", "1969", valid_from=FIRST_MS)
        item = memories.MemoryInput("The oldest fact", "shop", "codex", facts=[stated])
        memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    dump = tmp_path / "old.jsonl"
    assert run("export", "-o", str(dump)).exit_code == 0

    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "fresh"))
    imported = run("import", str(dump))
    assert imported.exit_code == 0, imported.stderr
    assert run("export").stdout == dump.read_text(encoding="utf-8")


def test_export_to_a_file_syncs_its_data_before_the_rename_and_the_folder_after(
    run: Invoke, tmp_path: Path, disk_events: list[DiskEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Else a power cut soon after could leave the export empty under its final name."""
    run("save", "Use pnpm, not npm")
    disk_events.clear()
    dump = tmp_path / "dump.jsonl"
    assert run("export", "-o", str(dump)).exit_code == 0
    monkeypatch.undo()
    assert disk_events[-3:] == durable_write(dump)
    assert '"text":"Use pnpm, not npm"' in dump.read_text(encoding="utf-8")


@pytest.mark.sqlite_only
def test_an_import_logs_each_item_once_as_a_change_of_this_store_for_a_first_sync(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(run)
    _episode(workspace.data_dir)
    dump = tmp_path / "dump.jsonl"
    assert run("export", "-o", str(dump)).exit_code == 0
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "fresh"))
    assert run("import", str(dump)).exit_code == 0
    records = [json.loads(line) for line in dump.read_text(encoding="utf-8").splitlines()[1:]]
    keys = {"memory": "uid", "fact": "uid", "rule": "id", "episode": "uid"}
    items = sorted((r["type"], r["data"][keys[r["type"]]]) for r in records if r["type"] in keys)
    store = SqliteStore(tmp_path / "fresh" / "aletheia.db")
    try:
        page = store.export_changes(
            after=0, limit=1000, max_bytes=10**9, local_only=True, exclude_origin=None,
            projects=None,
        )  # fmt: skip
        assert sorted((r["kind"], r["key"]) for r in page.records) == items
        assert {r["v"][1] for r in page.records} == {store.sync_store_id()}
        # Checked once at the end of the import, foreign keys are enforced again after it.
        assert store._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        store.close()


@pytest.mark.sqlite_only
def test_a_fact_listed_before_the_memory_it_states_still_marks_that_memory_stale(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    """A memory whose facts have all ended ranks below current knowledge, whatever the order
    of the file's lines."""
    fact = {
        "id": 1, "uid": "f" * 32, "project": "shop", "subject": "api", "predicate": "db",
        "object": "pg", "valid_from": 1, "valid_to": 5, "recorded_at": 1,
        "superseded_by": None, "source": "cli", "memory_id": 1, "dismissed_at": None,
        "dismiss_reason": None,
    }  # fmt: skip
    records = [{"type": "fact", "data": fact}, _memory(facts=["api db pg"])]
    assert _import_text(run, tmp_path, records).exit_code == 0
    store = SqliteStore(workspace.data_dir / "aletheia.db")
    try:
        assert store.stale_memory_ids([1], now=10) == {1}
    finally:
        store.close()


def test_a_wrong_output_is_bad_input_named_as_typed(run: Invoke, workspace: Workspace) -> None:
    run("save", "Use pnpm, not npm")
    missing = workspace.home / "nodir" / "x.jsonl"
    refusals = {
        ("-o", ""): "--output needs a file name; it was empty.",
        ("-o", str(missing)): f"Cannot write {missing}: no folder {missing.parent}.",
    }
    for args, message in refusals.items():
        refused = run("export", *args)
        assert (refused.exit_code, refused.stderr) == (2, f"Error: {message}\n")
    # --json without -o: the export itself, as release 0.4.1 printed it (scripts redirect it)
    printed = run("export", "--json")
    assert printed.exit_code == 0
    assert [json.loads(line)["type"] for line in printed.stdout.splitlines()] == [
        "header",
        "memory",
    ]
    folder = run("export", "-o", str(workspace.home))
    assert folder.exit_code == 2 and f"'{workspace.home}' is a directory" in folder.stderr
    written = json_of(run("export", "-o", str(workspace.home / "b.jsonl"), "--json"))
    assert written == {"exported": 1, "file": str(workspace.home / "b.jsonl")}
