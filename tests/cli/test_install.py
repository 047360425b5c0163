"""``aletheia install``: dry run, merge with backups, idempotence and the --force guard."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import DiskEvent, Invoke, Workspace, durable_write, json_of

MCP_SCRIPT = str(Path(sys.executable).parent / "aletheia-mcp")


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_dry_run_shows_a_diff_and_writes_nothing(run: Invoke, workspace: Workspace) -> None:
    result = run("install", "claude-code")
    assert result.exit_code == 0
    target = workspace.home / ".claude.json"
    assert f"Would add the aletheia entry in {target}:" in result.stdout
    assert '+    "aletheia": {' in result.stdout
    assert "Run again with --write" in result.stdout
    assert not target.exists()


def test_write_merges_into_claude_json_keeping_the_rest_byte_for_byte(
    run: Invoke, workspace: Workspace
) -> None:
    target = workspace.home / ".claude.json"
    workspace.home.mkdir(parents=True, exist_ok=True)
    original = (
        '{\n  "numStartups": 3,\n  "projects": {\n    "/x": {\n      "allowedTools": []\n    }\n'
        '  },\n  "mcpServers": {\n    "github": {\n      "type": "http",\n'
        '      "url": "https://api.githubcopilot.com/mcp/"\n    }\n  }\n}\n'
    )
    target.write_text(original, encoding="utf-8")
    target.chmod(0o600)
    result = run("install", "claude-code", "--write")
    assert result.exit_code == 0
    assert f"Added the aletheia entry in {target}." in result.stdout
    new = target.read_text(encoding="utf-8")
    head = original.rsplit("\n    }\n  }\n}\n", 1)[0] + "\n    },\n"
    assert new.startswith(head)
    data = json.loads(new)
    assert data["mcpServers"]["github"]["type"] == "http"
    assert data["mcpServers"]["aletheia"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": [MCP_SCRIPT],
        "env": {"ALETHEIA_DATA_DIR": str(workspace.data_dir), "ALETHEIA_TOOL": "claude-code"},
    }
    assert target.stat().st_mode & 0o777 == 0o600
    [backup] = _backups(target)
    assert backup.read_text(encoding="utf-8") == original
    assert f"Backup of the previous file: {backup}" in result.stdout


def test_second_write_changes_nothing_and_makes_no_backup(
    run: Invoke, workspace: Workspace
) -> None:
    assert run("install", "gemini-cli", "--write").exit_code == 0
    target = workspace.home / ".gemini" / "settings.json"
    before = target.read_text(encoding="utf-8")
    assert _backups(target) == []  # there was no file to back up
    result = run("install", "gemini-cli", "--write")
    assert result.exit_code == 0
    assert f"{target} already has the aletheia entry; nothing to change." in result.stdout
    assert target.read_text(encoding="utf-8") == before
    assert _backups(target) == []


def test_a_different_server_named_aletheia_is_refused_without_force(
    run: Invoke, workspace: Workspace
) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    original = '{"mcpServers": {"aletheia": {"command": "node", "args": ["other.js"]}}}'
    target.write_text(original, encoding="utf-8")
    result = run("install", "cursor", "--write")
    assert result.exit_code == 4
    assert result.stderr == (  # one line, as every error
        f'Error: {target} already has a different server named "aletheia"'
        ' ({"command": "node", "args": ["other.js"]}); use --force to replace it'
        " (the file is backed up first).\n"
    )
    assert target.read_text(encoding="utf-8") == original
    assert _backups(target) == []
    forced = run("install", "cursor", "--write", "--force")
    assert forced.exit_code == 0
    assert f"Replaced the aletheia entry in {target}." in forced.stdout
    assert json.loads(target.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]["args"] == [
        MCP_SCRIPT
    ]
    [backup] = _backups(target)
    assert backup.read_text(encoding="utf-8") == original


def test_codex_toml_keeps_comments_and_other_tables(run: Invoke, workspace: Workspace) -> None:
    target = workspace.home / ".codex" / "config.toml"
    target.parent.mkdir(parents=True)
    original = (
        '# my codex settings\nmodel = "gpt-5" # the default\n\n'
        '[mcp_servers.docs]\ncommand = "npx"  # pinned below\nargs = ["-y", "docs-mcp@1.2.3"]\n\n'
        '[profiles.fast]\n# fast profile\nmodel_reasoning_effort = "low"\n'
    )
    target.write_text(original, encoding="utf-8")
    assert run("install", "codex", "--write").exit_code == 0
    new = target.read_text(encoding="utf-8")
    assert new.startswith(original)
    data = tomllib.loads(new)
    assert data["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp@1.2.3"]}
    assert data["mcp_servers"]["aletheia"]["env"]["ALETHEIA_TOOL"] == "codex"
    assert data["profiles"]["fast"]["model_reasoning_effort"] == "low"
    again = run("install", "codex", "--write")
    assert "nothing to change" in again.stdout
    assert target.read_text(encoding="utf-8") == new


def test_codex_replacement_with_force_keeps_the_comments(run: Invoke, workspace: Workspace) -> None:
    target = workspace.home / ".codex" / "config.toml"
    target.parent.mkdir(parents=True)
    target.write_text(
        '# top\n[mcp_servers.aletheia]\ncommand = "old"\n\n# tail comment\n[other]\nx = 1\n',
        encoding="utf-8",
    )
    assert run("install", "codex", "--write").exit_code == 4
    assert run("install", "codex", "--write", "--force").exit_code == 0
    new = target.read_text(encoding="utf-8")
    assert new.startswith("# top\n[mcp_servers.aletheia]\n")
    assert "# tail comment\n[other]\nx = 1\n" in new
    assert tomllib.loads(new)["mcp_servers"]["aletheia"]["command"] == sys.executable


def test_vscode_jsonc_comments_survive(run: Invoke, workspace: Workspace) -> None:
    target = workspace.project / ".vscode" / "mcp.json"
    target.parent.mkdir()
    head = '{\n\t// workspace servers\n\t"servers": {\n'
    mine = '\t\t"git": {"type": "stdio", "command": "git-mcp"}, // mine\n'
    original = head + mine + "\t},\n}\n"
    target.write_text(original, encoding="utf-8")
    result = run("install", "vscode", "--scope", "project", "--write")
    assert result.exit_code == 0
    new = target.read_text(encoding="utf-8")
    assert new.startswith(head + mine + '\t\t"aletheia": {\n')
    assert new.endswith("\t\t},\n\t},\n}\n")  # the trailing comma style kept for ours too


def test_opencode_writes_the_reference_shape_into_xdg_config(
    run: Invoke, workspace: Workspace
) -> None:
    assert run("install", "opencode", "--write").exit_code == 0
    target = workspace.home / ".config" / "opencode" / "opencode.json"
    entry = json.loads(target.read_text(encoding="utf-8"))["mcp"]["aletheia"]
    assert entry["command"] == [sys.executable, MCP_SCRIPT]
    assert (entry["type"], entry["enabled"]) == ("local", True)


def test_project_scope_writes_mcp_json_at_the_repository_root(
    run: Invoke, workspace: Workspace
) -> None:
    result = run("install", "claude-code", "--scope", "project", "--write")
    assert result.exit_code == 0
    assert "aletheia" in json.loads((workspace.project / ".mcp.json").read_text())["mcpServers"]
    assert not (workspace.home / ".claude.json").exists()


def test_hosts_without_a_project_file_refuse_project_scope(run: Invoke) -> None:
    result = run("install", "windsurf", "--scope", "project")
    assert result.exit_code == 2
    assert "Windsurf has no project-scope config file" in result.stderr


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ('{"mcpServers": {', "expected a member name at line 1, column 17"),
        (
            "[" * 100_000 + "]" * 100_000,
            "value nested more than 100 levels deep at line 1, column 101",
        ),
    ],
    ids=["cut-short", "nested-past-the-parser"],
)
def test_broken_config_file_is_reported_not_overwritten(
    run: Invoke, workspace: Workspace, broken: str, problem: str
) -> None:
    target = workspace.home / ".gemini" / "settings.json"
    target.parent.mkdir(parents=True)
    target.write_text(broken, encoding="utf-8")
    result = run("install", "gemini-cli", "--write")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {target} is not valid JSON: {problem}\n"
    assert target.read_text(encoding="utf-8") == broken


def test_json_report_lists_each_change(run: Invoke, workspace: Workspace) -> None:
    data = json_of(run("install", "windsurf", "--write", "--json"))
    [change] = data["changes"]
    assert change["action"] == "add"
    assert change["written"] is True
    assert change["path"] == str(workspace.home / ".codeium" / "windsurf" / "mcp_config.json")


@pytest.mark.parametrize("host", ["windsurf", "vscode"])
def test_hooks_are_only_for_claude_code_gemini_cli_codex_opencode_and_cursor(
    run: Invoke, host: str
) -> None:
    result = run("install", host, "--hooks")
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: Capture hooks are available for claude-code, gemini-cli, codex, opencode and"
        " cursor only.\n"
    )


def test_hooks_install_into_claude_settings_and_keep_other_hooks(
    run: Invoke, workspace: Workspace
) -> None:
    settings = workspace.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = {"matcher": "", "hooks": [{"type": "command", "command": "say hi"}]}
    settings.write_text(json.dumps({"model": "opus", "hooks": {"SessionStart": [mine]}}))
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0
    data = json.loads(settings.read_text())
    assert data["model"] == "opus"
    assert data["hooks"]["SessionStart"][0] == mine
    hook_script = Path(sys.executable).parent / "aletheia-hook"
    for event, name in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt"),
        ("PostToolUse", "post-tool-use"),
        ("SessionEnd", "session-end"),
    ):
        ours = data["hooks"][event][-1]["hooks"][0]
        assert ours["type"] == "command"
        assert ours["command"] == (
            f"ALETHEIA_DATA_DIR={workspace.data_dir} ALETHEIA_TOOL=claude-code {hook_script} {name}"
        )
    assert data["hooks"]["PostToolUse"][-1]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit"
    assert "matcher" not in data["hooks"]["SessionEnd"][-1]
    before = settings.read_text()
    again = run("install", "claude-code", "--hooks", "--write")
    assert f"{settings} already has the hooks; nothing to change." in again.stdout
    assert settings.read_text() == before


def test_a_config_file_is_on_the_disk_before_its_name_and_its_folder_after(
    run: Invoke, workspace: Workspace, disk_events: list[DiskEvent], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A power cut just after an install leaves the old file or the new one whole, never an
    empty ~/.claude.json (which holds all of Claude Code's settings)."""
    target = workspace.home / ".claude.json"
    workspace.home.mkdir(parents=True, exist_ok=True)
    target.write_text('{"numStartups": 3}\n', encoding="utf-8")
    assert run("install", "claude-code", "--write").exit_code == 0
    monkeypatch.undo()
    assert disk_events[-3:] == durable_write(target)
