"""doctor on entries that cannot work: a program that does not exist is BROKEN before any store
check, a server whose output is nested too deep to read and an entry holding a NUL character are
reported without a traceback, and Claude Code's ``disableAllHooks`` is told as hooks disabled."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of


def _cursor(workspace: Workspace, entry: dict[str, Any]) -> None:
    path = workspace.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")


def _cursor_check(run: Invoke) -> tuple[int, dict[str, Any]]:
    result = run("doctor", "--json")
    [check] = [c for c in json_of(result)["hosts"] if c["host"] == "cursor"]
    return result.exit_code, check


@pytest.mark.parametrize("store", ["missing", "there"])
def test_a_program_that_does_not_exist_is_broken_whatever_its_store(
    run: Invoke, workspace: Workspace, store: str
) -> None:
    run("save", "a first memory")
    data_dir = workspace.home / "nowhere" if store == "missing" else workspace.data_dir
    env = {"ALETHEIA_DATA_DIR": str(data_dir)}
    _cursor(workspace, {"command": "/nonexistent/aletheia-mcp", "env": env})
    code, check = _cursor_check(run)
    assert (check["status"], check["detail"]) == (
        "broken",
        "/nonexistent/aletheia-mcp does not exist; fix the entry, or run"
        " `aletheia install cursor --write`",
    )
    assert code == 1


def test_a_program_not_executable_or_not_on_path_is_broken(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    run("save", "a first memory")
    script = tmp_path / "aletheia-mcp"
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    script.chmod(0o644)
    _cursor(workspace, {"command": str(script), "env": {"ALETHEIA_DATA_DIR": "/nowhere"}})
    assert _cursor_check(run)[1]["detail"] == (
        f"{script} is not executable; fix the entry, or run `aletheia install cursor --write`"
    )
    _cursor(workspace, {"command": "no-such-aletheia-mcp", "env": {}})
    code, check = _cursor_check(run)
    assert (check["status"], check["detail"]) == (
        "broken",
        "no-such-aletheia-mcp is not found on PATH; fix the entry, or run"
        " `aletheia install cursor --write --force`",
    )
    assert code == 1


def test_a_server_printing_deeply_nested_json_is_broken_not_a_traceback(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    code = "import sys; print('[' * 200000, flush=True); sys.stdin.read()"
    _cursor(workspace, {"command": sys.executable, "args": ["-c", code]})
    status, check = _cursor_check(run)
    assert check["status"] == "broken"
    assert check["detail"].startswith("the server printed something that is not MCP on stdout")
    assert status == 1
    assert "Traceback" not in run("doctor").output


@pytest.mark.parametrize("variable", ["ALETHEIA_DATA_DIR", "ALETHEIA_TOOL"])
def test_a_nul_in_an_entry_s_environment_is_reported_not_a_traceback(
    run: Invoke, workspace: Workspace, variable: str
) -> None:
    run("save", "a first memory")
    env = {"ALETHEIA_DATA_DIR": str(workspace.data_dir), variable: "/x\u0000y"}
    _cursor(workspace, {"command": sys.executable, "args": ["-c", "pass"], "env": env})
    _, check = _cursor_check(run)
    if variable == "ALETHEIA_DATA_DIR":  # no such store: not started
        assert (check["status"], check["detail"].startswith("not started")) == ("warning", True)
    else:
        assert check["status"] == "broken"
        assert check["detail"].endswith(
            "cannot be started: embedded null byte; fix the entry, or run"
            " `aletheia install cursor --write`"
        )
    assert "Traceback" not in run("doctor").output


@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_claude_code_s_disable_all_hooks_is_hooks_disabled(
    run: Invoke, workspace: Workspace, where: str
) -> None:
    run("save", "a first memory")
    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    user = workspace.home / ".claude" / "settings.json"
    settings = {
        "user": user,
        "project": workspace.project / ".claude" / "settings.json",
        "local": workspace.project / ".claude" / "settings.local.json",
    }[where]
    document = json.loads(settings.read_text(encoding="utf-8")) if settings.exists() else {}
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({**document, "disableAllHooks": True}), encoding="utf-8")
    result = run("doctor", "--json")
    data = json_of(result)
    check = data["hook_checks"]["claude-code"]["user"]
    assert check["status"] == "disabled"
    assert check["detail"] == f"disableAllHooks is true in {settings}: Claude Code runs no hooks"
    assert data["hooks"]["claude-code"]["user"] is False
    lines = run("doctor").stdout.splitlines()
    assert any(line.split()[:3] == ["claude-code", "user", "disabled"] for line in lines)
    if where == "user":  # a project's false wins over the user's true
        project = workspace.project / ".claude" / "settings.json"
        project.parent.mkdir(parents=True, exist_ok=True)
        project.write_text('{"disableAllHooks": false}', encoding="utf-8")
        assert json_of(run("doctor", "--json"))["hooks"]["claude-code"]["user"] is True
