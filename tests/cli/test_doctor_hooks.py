"""doctor's hooks check: a scope is installed only with Aletheia's hook on every event ``install
--hooks`` writes, each running a program that exists and is executable; a project file that is
the user file (run from the home folder) is one scope."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of


def _settings(workspace: Workspace) -> Path:
    return workspace.home / ".claude" / "settings.json"


def _doctor(run: Invoke) -> tuple[int, dict[str, Any], list[str]]:
    result = run("doctor", "--json")
    lines = run("doctor").stdout.splitlines()
    return result.exit_code, json_of(result), lines


def _program_of(workspace: Workspace) -> str:
    document = json.loads(_settings(workspace).read_text(encoding="utf-8"))
    command = document["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    return next(word for word in shlex.split(command) if "=" not in word)


def test_a_hook_event_missing_is_broken_not_installed(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--hooks", "--write")
    document = json.loads(_settings(workspace).read_text(encoding="utf-8"))
    del document["hooks"]["SessionEnd"]
    _settings(workspace).write_text(json.dumps(document), encoding="utf-8")
    code, data, lines = _doctor(run)
    assert code == 1 and data["ok"] is False
    assert data["hooks"]["claude-code"]["user"] is False
    check = data["hook_checks"]["claude-code"]["user"]
    assert (check["status"], check["detail"]) == (
        "broken",
        "no Aletheia hook for SessionEnd; run `aletheia install claude-code --hooks --write`",
    )
    hooks = next(line for line in lines if line.startswith("Hooks"))
    assert hooks.startswith("Hooks  claude-code: user scope (broken);")
    assert any(line.split()[:3] == ["claude-code", "user", "BROKEN"] for line in lines)


@pytest.mark.parametrize("how", ["missing", "not executable"])
def test_a_hook_whose_program_cannot_run_is_broken(
    run: Invoke, workspace: Workspace, tmp_path: Path, how: str
) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--hooks", "--write")
    program = _program_of(workspace)
    replacement = tmp_path / "gone" / "aletheia-hook"
    if how == "not executable":
        replacement.parent.mkdir()
        replacement.write_text("#!/bin/sh\n", encoding="utf-8")
        replacement.chmod(0o644)
    text = _settings(workspace).read_text(encoding="utf-8")
    _settings(workspace).write_text(text.replace(program, str(replacement)), encoding="utf-8")
    code, data, _ = _doctor(run)
    check = data["hook_checks"]["claude-code"]["user"]
    problem = "does not exist" if how == "missing" else "is not executable"
    assert (check["status"], check["detail"]) == (
        "broken",
        f"{replacement} {problem}; run `aletheia install claude-code --hooks --write`",
    )
    assert code == 1


def test_hooks_installed_by_install_are_ok_for_each_host(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    for host in ("claude-code", "gemini-cli", "codex", "opencode", "cursor"):
        run("install", host, "--hooks", "--write")
    code, data, _ = _doctor(run)
    assert {host: scopes["user"] for host, scopes in data["hooks"].items()} == dict.fromkeys(
        ("claude-code", "gemini-cli", "codex", "opencode", "cursor"), True
    )
    assert code == 0


def test_an_opencode_plugin_whose_program_is_gone_is_broken(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "opencode", "--hooks", "--write")
    plugin = workspace.home / ".config" / "opencode" / "plugins" / "aletheia.js"
    text = plugin.read_text(encoding="utf-8")
    start = text.index("const PROGRAM = ") + len("const PROGRAM = ")
    program = json.loads(text[start : text.index(";\n", start)])[0]
    plugin.write_text(text.replace(json.dumps(program), '"/nowhere/aletheia-hook"'), "utf-8")
    _, data, _ = _doctor(run)
    check = data["hook_checks"]["opencode"]["user"]
    assert (check["status"], check["detail"]) == (
        "broken",
        "/nowhere/aletheia-hook does not exist; run `aletheia install opencode --hooks --write`",
    )


def test_run_from_home_a_hooks_file_that_is_the_user_one_is_one_scope(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    monkeypatch.chdir(workspace.home)
    run("install", "claude-code", "--hooks", "--write")
    run("install", "gemini-cli", "--hooks", "--write")
    _, data, lines = _doctor(run)
    assert data["hooks"]["claude-code"] == {"user": True}
    assert data["hooks"]["gemini-cli"] == {"user": True}
    hooks = next(line for line in lines if line.startswith("Hooks"))
    assert hooks.startswith("Hooks  claude-code: user scope; gemini-cli: user scope;")


def test_each_scope_is_named_with_its_own_mark_when_one_is_broken(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "gemini-cli", "--hooks", "--write")
    run("install", "gemini-cli", "--hooks", "--scope", "project", "--write")
    settings = workspace.home / ".gemini" / "settings.json"
    document = json.loads(settings.read_text(encoding="utf-8"))
    del document["hooks"]["SessionEnd"]
    settings.write_text(json.dumps(document), encoding="utf-8")
    _, _, lines = _doctor(run)
    hooks = next(line for line in lines if line.startswith("Hooks"))
    assert "; gemini-cli: user scope (broken), project scope;" in hooks
