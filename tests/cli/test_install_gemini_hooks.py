"""``aletheia install gemini-cli --hooks``: Gemini CLI's capture hooks go into the settings file
of its MCP entry, in one write, beside the user's own hooks (its events, tool names and a
timeout in milliseconds, as the Gemini CLI bundle reads them)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.cli.conftest import Invoke, Workspace, json_of

HOOK_SCRIPT = Path(sys.executable).parent / "aletheia-hook"
EVENTS = (
    ("SessionStart", "session-start"),
    ("BeforeAgent", "user-prompt"),
    ("AfterTool", "post-tool-use"),
    ("SessionEnd", "session-end"),
)


def _settings(workspace: Workspace) -> Path:
    return workspace.home / ".gemini" / "settings.json"


def _ours(workspace: Workspace, name: str) -> dict[str, Any]:
    command = (
        f"ALETHEIA_DATA_DIR={workspace.data_dir} ALETHEIA_TOOL=gemini-cli {HOOK_SCRIPT} {name}"
    )
    return {"name": f"aletheia-{name}", "type": "command", "command": command, "timeout": 5000}


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_the_hooks_and_the_entry_go_into_gemini_settings_in_one_write(
    run: Invoke, workspace: Workspace
) -> None:
    settings = _settings(workspace)
    settings.parent.mkdir(parents=True)
    shell = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit"}]}
    original = json.dumps({"ui": {"theme": "GitHub"}, "hooks": {"AfterTool": [shell]}}) + "\n"
    settings.write_text(original, encoding="utf-8")
    result = run("install", "gemini-cli", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry and the hooks in {settings}." in result.stdout
    assert "runs hooks only in trusted folders" in result.stdout
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["ui"] == {"theme": "GitHub"}
    assert data["mcpServers"]["aletheia"]["env"]["ALETHEIA_TOOL"] == "gemini-cli"
    assert data["hooks"]["AfterTool"][0] == shell
    for event, name in EVENTS:
        assert data["hooks"][event][-1]["hooks"] == [_ours(workspace, name)]
    assert data["hooks"]["AfterTool"][-1]["matcher"] == "write_file|replace"
    for event in ("SessionStart", "BeforeAgent", "SessionEnd"):
        assert "matcher" not in data["hooks"][event][-1]
    [backup] = _backups(settings)
    assert backup.read_text(encoding="utf-8") == original
    assert not (workspace.home / ".claude" / "settings.json").exists()

    before = settings.read_text(encoding="utf-8")
    again = run("install", "gemini-cli", "--hooks", "--write")
    assert f"{settings} already has the aletheia entry and the hooks; nothing to change." in (
        again.stdout
    )
    assert settings.read_text(encoding="utf-8") == before
    assert len(_backups(settings)) == 1


def test_the_dry_run_shows_both_in_one_diff_and_writes_nothing(
    run: Invoke, workspace: Workspace
) -> None:
    result = run("install", "gemini-cli", "--hooks")
    assert result.exit_code == 0, result.stderr
    settings = _settings(workspace)
    assert f"Would add the aletheia entry and the hooks in {settings}:" in result.stdout
    assert '+    "aletheia": {' in result.stdout
    assert '"name": "aletheia-user-prompt",' in result.stdout
    assert "Run again with --write" in result.stdout
    assert not settings.exists()


def test_only_our_earlier_hooks_are_replaced_and_never_a_users(
    run: Invoke, workspace: Workspace
) -> None:
    """An older Aletheia hook (here one ``gemini hooks migrate --from-claude`` copied over, still
    naming claude-code and a timeout of 5 ms) gives way to ours; the user's hook in its group
    stays, and so does a user's hook that merely runs something else at the same event."""
    settings = _settings(workspace)
    settings.parent.mkdir(parents=True)
    migrated = {
        "type": "command",
        "command": f"ALETHEIA_TOOL=claude-code {HOOK_SCRIPT} user-prompt",
        "timeout": 5,
    }
    users = {"type": "command", "command": "notify-send prompt"}
    greeting = {"hooks": [{"type": "command", "command": "echo hello"}]}
    hooks = {"BeforeAgent": [{"hooks": [migrated, users]}], "SessionStart": [greeting]}
    settings.write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    assert run("install", "gemini-cli", "--hooks", "--write").exit_code == 0
    data = json.loads(settings.read_text(encoding="utf-8"))
    assert data["hooks"]["BeforeAgent"] == [
        {"hooks": [users]},
        {"hooks": [_ours(workspace, "user-prompt")]},
    ]
    assert data["hooks"]["SessionStart"] == [
        greeting,
        {"hooks": [_ours(workspace, "session-start")]},
    ]


def test_project_scope_writes_the_projects_gemini_settings(
    run: Invoke, workspace: Workspace
) -> None:
    data = json_of(
        run("install", "gemini-cli", "--hooks", "--scope", "project", "--write", "--json")
    )
    target = workspace.project / ".gemini" / "settings.json"
    [change] = data["changes"]
    assert (change["path"], change["what"], change["action"], change["written"]) == (
        str(target),
        "the aletheia entry and the hooks",
        "add",
        True,
    )
    written = json.loads(target.read_text(encoding="utf-8"))
    assert sorted(written) == ["hooks", "mcpServers"]
    assert [event for event, _ in EVENTS] == list(written["hooks"])
    assert not _settings(workspace).exists()


def test_a_different_aletheia_server_stops_the_hooks_too(run: Invoke, workspace: Workspace) -> None:
    settings = _settings(workspace)
    settings.parent.mkdir(parents=True)
    original = json.dumps({"mcpServers": {"aletheia": {"command": "other"}}})
    settings.write_text(original, encoding="utf-8")
    result = run("install", "gemini-cli", "--hooks", "--write")
    assert result.exit_code == 4
    assert 'already has a different server named "aletheia"' in result.stderr
    assert settings.read_text(encoding="utf-8") == original


def test_hooks_that_are_no_list_are_refused_naming_the_file(
    run: Invoke, workspace: Workspace
) -> None:
    settings = _settings(workspace)
    settings.parent.mkdir(parents=True)
    original = json.dumps({"hooks": {"AfterTool": {"matcher": "write_file"}}})
    settings.write_text(original, encoding="utf-8")
    result = run("install", "gemini-cli", "--hooks", "--write")
    assert result.exit_code == 1
    assert f"{settings}: hooks.AfterTool is not a list of hook groups" in result.stderr
    assert settings.read_text(encoding="utf-8") == original


def test_a_reinstall_names_only_what_it_changes(run: Invoke, workspace: Workspace) -> None:
    """With the entry in place and one hook event gone, the change is the hooks alone (as
    Claude Code's install says it); with the hooks in place and the entry gone, the entry."""
    assert run("install", "gemini-cli", "--hooks", "--write").exit_code == 0
    settings = _settings(workspace)
    data = json.loads(settings.read_text(encoding="utf-8"))
    del data["hooks"]["SessionEnd"]
    settings.write_text(json.dumps(data), encoding="utf-8")

    dry = run("install", "gemini-cli", "--hooks")
    assert f"Would add the hooks in {settings}:" in dry.stdout
    [change] = json_of(run("install", "gemini-cli", "--hooks", "--json"))["changes"]
    assert (change["what"], change["action"]) == ("the hooks", "add")
    written = run("install", "gemini-cli", "--hooks", "--write")
    assert f"Added the hooks in {settings}." in written.stdout
    assert "aletheia entry" not in written.stdout

    data = json.loads(settings.read_text(encoding="utf-8"))
    del data["mcpServers"]
    settings.write_text(json.dumps(data), encoding="utf-8")
    again = run("install", "gemini-cli", "--hooks", "--write")
    assert f"Added the aletheia entry in {settings}." in again.stdout
    assert "hooks" not in again.stdout.split("\n", 1)[0]
