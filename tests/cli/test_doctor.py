"""doctor: store health, versions, and whether each tool's entry reaches a working server."""

from __future__ import annotations

import json
import socket
import sqlite3
import sys

from aletheia_mem import __version__
from tests.cli.conftest import Invoke, Workspace, json_of


def test_doctor_before_the_first_save_says_so_creates_none_and_is_no_problem(
    run: Invoke, workspace: Workspace
) -> None:
    """A new store is made at the first save: right after install, doctor confirms the setup
    (exit code 0) rather than calling the store missing (it was exit code 7)."""
    result = run("doctor")
    assert result.exit_code == 0
    store = workspace.data_dir / "aletheia.db"
    assert result.stdout.splitlines()[0] == f"Store  {store}  not created yet"
    data = json_of(run("doctor", "--json"))
    assert data["ok"] is True and data["store"]["exists"] is False
    assert "missing" not in data["store"]
    assert not workspace.data_dir.exists()


def test_the_readmes_first_run_ends_in_a_doctor_that_confirms_it(
    run: Invoke, workspace: Workspace
) -> None:
    """``aletheia install claude-code --write; aletheia doctor`` in a new home: the entry is
    started (on a throwaway store) and answers, exit code 0, and no store is made."""
    assert run("install", "claude-code", "--write").exit_code == 0
    result = run("doctor")
    assert result.exit_code == 0, result.stdout
    [row] = [line for line in result.stdout.splitlines() if line.startswith("  claude-code")]
    assert " ok " in row and f"Aletheia {__version__} answers" in row
    assert "PROBLEM" not in result.stdout and "WARNING" not in result.stdout
    assert not workspace.data_dir.exists()


def test_doctor_with_a_store_and_nothing_configured_is_healthy(run: Invoke) -> None:
    run("save", "a first memory")
    result = run("doctor")
    assert result.exit_code == 0
    assert "Store  " in result.stdout and "  ok" in result.stdout.splitlines()[0]
    assert "aletheia 0." in result.stdout
    data = json_of(run("doctor", "--json"))
    assert data["ok"] is True
    assert data["store"]["integrity_check"] == "ok"
    assert {check["status"] for check in data["hosts"]} == {"not-configured"}


def test_doctor_counts_one_row_in_the_singular(run: Invoke) -> None:
    run("save", "a first memory")
    run("rules", "add", "Run the tests before you commit")
    counts = run("doctor").stdout.splitlines()[1].split("; ")[-1]
    assert (
        counts
        == "1 memory, 0 facts, 1 rule, 0 episodes, 0 episode_requests, 0 episode_memories, 0 audit"
    )


def test_doctor_starts_the_configured_server_and_lists_its_tools(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--write")
    run("install", "codex", "--write")
    data = json_of(run("doctor", "--json"))
    checks = {(c["host"], c["scope"]): c for c in data["hosts"]}
    assert checks[("claude-code", "user")]["status"] == "ok"
    assert checks[("claude-code", "user")]["detail"] == f"Aletheia {__version__} answers (13 tools)"
    assert checks[("codex", "user")]["status"] == "ok"
    assert data["ok"] is True


def test_doctor_flags_an_entry_whose_server_is_gone(run: Invoke, workspace: Workspace) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    entry = {"command": sys.executable, "args": ["/nowhere/aletheia-mcp"]}
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    run("save", "a first memory")
    result = run("doctor")
    assert result.exit_code == 1
    line = next(line for line in result.stdout.splitlines() if line.strip().startswith("cursor"))
    assert "BROKEN" in line
    missing = workspace.home / ".windsurf-missing"
    target.write_text(
        json.dumps({"mcpServers": {"aletheia": {"command": str(missing)}}}), encoding="utf-8"
    )
    data = json_of(run("doctor", "--json"))
    cursor = next(c for c in data["hosts"] if c["host"] == "cursor")
    assert cursor["detail"] == (
        f"{missing} does not exist; fix the entry, or run `aletheia install cursor --write --force`"
    )


def test_doctor_reports_remote_entries_and_hooks(run: Invoke, workspace: Workspace) -> None:
    with socket.socket() as closed:  # a port nothing listens on once it is closed
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/mcp"
    run("install", "cursor", "--write", "--http", url)
    run("install", "claude-code", "--hooks", "--write")
    data = json_of(run("doctor", "--json"))
    cursor = next(c for c in data["hosts"] if c["host"] == "cursor")
    assert (cursor["status"], cursor["detail"]) == (
        "broken",
        f"remote {url}: cannot be reached: connection refused (is the server running?)",
    )
    assert data["claude_code_hooks"] == {"user": True, "project": False}
    assert data["hooks"]["gemini-cli"] == {"user": False, "project": False}


def test_doctor_reports_each_tools_capture_hooks(run: Invoke, workspace: Workspace) -> None:
    run("install", "claude-code", "--hooks", "--write", "--scope", "project")
    run("install", "gemini-cli", "--hooks", "--write")
    data = json_of(run("doctor", "--json"))
    assert data["hooks"]["claude-code"] == {"user": False, "project": True}
    assert data["hooks"]["gemini-cli"] == {"user": True, "project": False}
    line = next(line for line in run("doctor").stdout.splitlines() if line.startswith("Hooks"))
    assert line == (
        "Hooks  claude-code: project scope; gemini-cli: user scope; codex: not installed;"
        " opencode: not installed; cursor: not installed"
    )


def test_doctor_names_sqlite_s_own_version_before_any_store_exists(run: Invoke) -> None:
    versions = next(line for line in run("doctor").stdout.splitlines() if "Versions" in line)
    assert f"sqlite {sqlite3.sqlite_version}," in versions and "?" not in versions
