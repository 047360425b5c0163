"""``CLAUDE_CONFIG_DIR``: Claude Code then keeps its ``.claude.json`` and its user
``settings.json`` in that folder and reads neither ``~/.claude.json`` nor ``~/.claude`` (seen with
the real ``claude`` 2.1.332: ``claude mcp add --scope user`` writes
``$CLAUDE_CONFIG_DIR/.claude.json``, and it reads ``$CLAUDE_CONFIG_DIR/settings.json``).
install, uninstall, connect and doctor use the files it reads, as for ``$CODEX_HOME``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of


@pytest.fixture
def config_dir(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = workspace.home / "cc"
    folder.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(folder))
    return folder


def test_install_writes_the_files_claude_code_reads_there(
    run: Invoke, workspace: Workspace, config_dir: Path
) -> None:
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry in {config_dir / '.claude.json'}." in result.stdout
    entry = json.loads((config_dir / ".claude.json").read_text(encoding="utf-8"))
    assert entry["mcpServers"]["aletheia"]["env"]["ALETHEIA_TOOL"] == "claude-code"
    hooks = json.loads((config_dir / "settings.json").read_text(encoding="utf-8"))["hooks"]
    assert sorted(hooks) == ["PostToolUse", "SessionEnd", "SessionStart", "UserPromptSubmit"]
    assert not (workspace.home / ".claude.json").exists()
    assert not (workspace.home / ".claude").exists()
    assert "$CLAUDE_CONFIG_DIR/.claude.json when that is set" in result.stdout


def test_connect_names_the_file_there(run: Invoke, config_dir: Path) -> None:
    assert json_of(run("connect", "claude-code", "--json"))["path"] == str(
        config_dir / ".claude.json"
    )
    assert (
        f"or add the entry above to {config_dir / '.claude.json'}"
        in run("connect", "claude-code").stdout
    )


def test_doctor_checks_the_files_there_and_not_those_in_home(
    run: Invoke, workspace: Workspace, config_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    run("install", "claude-code", "--hooks", "--write")  # ~/.claude.json: not read any more
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    data = json_of(run("doctor", "--json"))
    [user] = [c for c in data["hosts"] if c["host"] == "claude-code" and c["scope"] == "user"]
    assert (user["path"], user["status"]) == (str(config_dir / ".claude.json"), "not-configured")
    assert data["hook_checks"]["claude-code"]["user"]["path"] == str(config_dir / "settings.json")
    assert data["hooks"]["claude-code"]["user"] is False

    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    data = json_of(run("doctor", "--json"))
    [user] = [c for c in data["hosts"] if c["host"] == "claude-code" and c["scope"] == "user"]
    assert (user["path"], user["status"]) == (str(config_dir / ".claude.json"), "ok")
    assert data["hooks"]["claude-code"]["user"] is True


def test_uninstall_takes_them_out_of_the_files_there(
    run: Invoke, workspace: Workspace, config_dir: Path
) -> None:
    claude_json, settings = config_dir / ".claude.json", config_dir / "settings.json"
    claude_json.write_text('{"theme": "dark"}\n', encoding="utf-8")
    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    assert "aletheia" in json.loads(claude_json.read_text(encoding="utf-8"))["mcpServers"]
    result = run("uninstall", "claude-code", "--hooks", "--write", "--json")
    assert result.exit_code == 0, result.stderr
    changes = json_of(result)["changes"]
    assert [change["path"] for change in changes] == [str(claude_json), str(settings)]
    assert "aletheia" not in claude_json.read_text(encoding="utf-8")
    assert not settings.exists() or "hooks" not in json.loads(settings.read_text("utf-8"))
