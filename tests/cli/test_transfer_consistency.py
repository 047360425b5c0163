"""export while agents write, into targets that fail, and files cut short: real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.safety.entry_points import BIN, WAIT_SECONDS, run_command, user_env

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def _records(text: str) -> tuple[dict[str, Any], dict[str, dict[Any, dict[str, Any]]]]:
    """The header, and the records by type and id."""
    lines = text.splitlines()
    by_type: dict[str, dict[Any, dict[str, Any]]] = {}
    for line in lines[1:]:
        record = json.loads(line)
        by_type.setdefault(record["type"], {})[record["data"]["id"]] = record["data"]
    return json.loads(lines[0]), by_type


def _problems(text: str) -> list[str]:
    """What makes an export other than one state of a store."""
    header, by_type = _records(text)
    memories, facts = by_type.get("memory", {}), by_type.get("fact", {})
    problems = [
        f"fact {fact['id']} is superseded by missing fact {fact['superseded_by']}"
        for fact in facts.values()
        if fact["superseded_by"] is not None and fact["superseded_by"] not in facts
    ]
    stated = {fact["memory_id"] for fact in facts.values()}
    problems += [
        f"memory {memory['id']} states facts the export does not hold"
        for memory in memories.values()
        if memory["facts"] and memory["id"] not in stated
    ]
    problems += [
        f"rule {rule['id']} cites missing memory {cited}"
        for rule in by_type.get("rule", {}).values()
        for cited in rule["evidence_memory_ids"]
        if cited not in memories
    ]
    current = [
        (fact["project"], fact["subject"], fact["predicate"])
        for fact in facts.values()
        if fact["valid_to"] is None
    ]
    if len(current) != len(set(current)):
        problems.append("two current facts for one subject and predicate")
    for kind, table in (("memory", "memories"), ("fact", "facts"), ("audit", "audit")):
        if by_type.get(kind) and header["sequences"].get(table, 0) < max(by_type[kind]):
            problems.append(f"the {table} sequence is below the largest id")
    return problems


async def _agent(params: StdioServerParameters, exports_done: anyio.Event) -> int:
    """An agent's stdio server saving memories with facts (the same subject and predicate each
    time), writing a list, adding rules and dismissing and restoring, until the exports end."""
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        number = 0
        while not exports_done.is_set() or number < 3:
            number += 1
            fact = {"subject": "shop", "predicate": "package manager", "object": f"pnpm {number}"}
            calls: list[tuple[str, dict[str, Any]]] = [
                ("save_memory", {"text": f"Saved while exporting {number}", "facts": [fact]}),
                ("work_state_write", {"list": "todo", "items": [f"step {number}"]}),
                (
                    "add_rule",
                    {"then": f"Rule {number}", "when": "always", "evidence_memory_ids": [1]},
                ),
                ("dismiss_memory", {"id": number, "reason": f"reason {number}"}),
                ("restore_memory", {"id": max(1, number - 1)}),
            ]
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                assert result.is_error is False, (name, result.content)
        return number


async def test_exports_taken_while_an_agent_writes_are_each_one_state_and_import_again(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Seed", "--pin"))
    env = user_env(home, ALETHEIA_CWD=str(home))
    params = StdioServerParameters(command=str(BIN / "aletheia-mcp"), env=env, cwd=str(home))
    exports: list[str] = []
    done = anyio.Event()

    async def export_three_times() -> None:
        try:
            while len(exports) < 3:
                result = await anyio.run_process([str(BIN / "aletheia"), "export"], env=env)
                exports.append(result.stdout.decode("utf-8"))
        finally:
            done.set()

    with anyio.fail_after(WAIT_SECONDS * 3):
        async with anyio.create_task_group() as group:
            group.start_soon(export_three_times)
            group.start_soon(_agent, params, done)
    for number, text in enumerate(exports):
        assert _problems(text) == [], number
        fresh = tmp_path / f"fresh{number}"
        (fresh / "in.jsonl").parent.mkdir()
        (fresh / "in.jsonl").write_text(text, encoding="utf-8")
        _ok(run_command(fresh, "aletheia", "import", str(fresh / "in.jsonl")))
        assert _ok(run_command(fresh, "aletheia", "export")).stdout == text


def _export_with_stdout(home: Path, stdout: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "aletheia"), "export"],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=user_env(home),
        cwd=home,
        timeout=WAIT_SECONDS,
        check=False,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_export_to_a_full_standard_output_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    with open("/dev/full", "w", encoding="utf-8") as full:
        result = _export_with_stdout(home, full)
    assert (result.returncode, result.stderr) == (
        1,
        "Error: Cannot write standard output: No space left on device.\n",
    )


def test_export_with_standard_output_closed_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    closed = [
        sys.executable,
        "-c",
        "import os, sys; os.close(1); os.execv(sys.argv[1], sys.argv[1:])",
    ]
    result = subprocess.run(
        [*closed, str(BIN / "aletheia"), "export"],
        capture_output=True,
        text=True,
        env=user_env(home),
        cwd=home,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert (result.returncode, result.stderr) == (
        1,
        "Error: Cannot write standard output: it is closed.\n",
    )
    assert "#1  " in _ok(run_command(home, "aletheia", "search", "pnpm")).stdout  # store intact


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_export_into_a_full_device_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    result = run_command(home, "aletheia", "export", "-o", "/dev/full")
    assert (result.returncode, result.stderr) == (
        1,
        "Error: Cannot write /dev/full: No space left on device.\n",
    )


def test_an_export_cut_short_at_the_end_of_a_line_is_refused_and_nothing_imported(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    for text in ("Use pnpm, not npm", "Staging needs the VPN", "Deploy on Fridays"):
        _ok(run_command(home, "aletheia", "save", text))
    dump = tmp_path / "dump.jsonl"
    _ok(run_command(home, "aletheia", "export", "-o", str(dump)))
    lines = dump.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines[:-1]), encoding="utf-8")
    fresh = tmp_path / "fresh"
    result = run_command(fresh, "aletheia", "import", str(cut))
    assert (result.returncode, result.stderr) == (
        2,
        f"Error: The export holds {len(lines) - 2} of the {len(lines) - 1} records its header"
        " counts: it was cut short. Nothing was imported.\n",
    )
    assert not (fresh / ".aletheia" / "aletheia.db").exists()


def test_an_export_without_counts_in_its_header_still_imports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    lines = _ok(run_command(home, "aletheia", "export")).stdout.splitlines(keepends=True)
    header = json.loads(lines[0])
    del header["records"]
    older = tmp_path / "older.jsonl"
    older.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    _ok(run_command(tmp_path / "fresh", "aletheia", "import", str(older)))


def test_a_header_whose_counts_are_not_whole_numbers_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    lines = _ok(run_command(home, "aletheia", "export")).stdout.splitlines(keepends=True)
    header = json.loads(lines[0])
    header["records"] = {"memory": "1"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(header) + "\n" + "".join(lines[1:]), encoding="utf-8")
    result = run_command(tmp_path / "fresh", "aletheia", "import", str(bad))
    assert (result.returncode, result.stderr) == (
        2,
        'Error: The header\'s "records" must map record types to whole numbers from 0.'
        " Nothing was imported.\n",
    )


def test_export_into_a_pipe_nobody_reads_ends_quietly_with_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm"))
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `aletheia export | head -c 0` once head has gone
    try:
        result = _export_with_stdout(home, write_end)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (1, "")


def test_an_export_to_a_file_imports_again_with_its_chains_of_superseded_facts(
    tmp_path: Path,
) -> None:
    """Through the file ``-o`` writes (synced, then renamed): each fact superseded by a later
    one refers forward, which the import checks once, after the inserts."""
    home = tmp_path / "home"
    _ok(run_command(home, "aletheia", "save", "Use pnpm, not npm", "--pin"))
    for version in ("14", "15", "16"):
        _ok(run_command(home, "aletheia", "facts", "add", "payments-api", "database", version))
    _ok(run_command(home, "aletheia", "facts", "add", "web", "framework", "svelte"))
    dump = tmp_path / "dump.jsonl"
    _ok(run_command(home, "aletheia", "export", "-o", str(dump)))
    text = dump.read_text(encoding="utf-8")
    _, by_type = _records(text)
    assert [fact["superseded_by"] for fact in by_type["fact"].values()] == [2, 3, None, None]
    fresh = tmp_path / "fresh"
    _ok(run_command(fresh, "aletheia", "import", str(dump)))
    assert _ok(run_command(fresh, "aletheia", "export")).stdout == text
    history = _ok(
        run_command(fresh, "aletheia", "facts", "history", "payments-api", "--all", "--json")
    )
    assert [fact["object"] for fact in json.loads(history.stdout)] == ["16", "15", "14"]
