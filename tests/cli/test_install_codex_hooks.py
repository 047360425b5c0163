"""``aletheia install codex --hooks``: Codex's capture hooks go into the ``hooks.json`` beside its
``config.toml`` (Claude Code's shape and event names, as Codex 0.171.0 reads them), both files
written or neither, beside the user's own hooks; the user is told to trust them in Codex."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.cli.conftest import Invoke, Workspace, json_of

HOOK_SCRIPT = Path(sys.executable).parent / "aletheia-hook"
EVENTS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "user-prompt"),
    ("PostToolUse", "post-tool-use"),
    ("SessionEnd", "session-end"),
)
CONFIG = """# my codex settings
model = "gpt-5.5"  # the default

[mcp_servers.docs]
command = "docs-mcp"
"""


def _codex(workspace: Workspace) -> Path:
    return workspace.home / ".codex"


def _ours(workspace: Workspace, name: str) -> dict[str, Any]:
    command = f"ALETHEIA_DATA_DIR={workspace.data_dir} ALETHEIA_TOOL=codex {HOOK_SCRIPT} {name}"
    return {"type": "command", "command": command, "timeout": 5}


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_the_hooks_go_into_hooks_json_beside_config_toml(run: Invoke, workspace: Workspace) -> None:
    folder = _codex(workspace)
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG, encoding="utf-8")
    shell = {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit", "timeout": 9}]}
    original = json.dumps({"hooks": {"PostToolUse": [shell]}}, indent=2) + "\n"
    (folder / "hooks.json").write_text(original, encoding="utf-8")
    result = run("install", "codex", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry in {folder / 'config.toml'}." in result.stdout
    assert f"Added the hooks in {folder / 'hooks.json'}." in result.stdout  # none replaced
    assert "type /hooks and trust Aletheia's four hooks" in result.stdout
    config = (folder / "config.toml").read_text(encoding="utf-8")
    assert config.startswith(CONFIG)  # comments and all kept; the entry appended
    assert tomllib.loads(config)["mcp_servers"]["aletheia"]["env"]["ALETHEIA_TOOL"] == "codex"
    assert "hooks" not in tomllib.loads(config)
    hooks = json.loads((folder / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert list(hooks) == ["PostToolUse", "SessionStart", "UserPromptSubmit", "SessionEnd"]
    assert hooks["PostToolUse"] == [
        shell,
        {"matcher": "apply_patch", "hooks": [_ours(workspace, "post-tool-use")]},
    ]
    for event, name in EVENTS[:2] + EVENTS[3:]:
        assert hooks[event] == [{"hooks": [_ours(workspace, name)]}]
    [backup] = _backups(folder / "hooks.json")
    assert backup.read_text(encoding="utf-8") == original
    assert not (workspace.home / ".claude" / "settings.json").exists()

    before = (folder / "hooks.json").read_text(encoding="utf-8"), config
    again = run("install", "codex", "--hooks", "--write")
    assert f"{folder / 'hooks.json'} already has the hooks; nothing to change." in again.stdout
    after = (folder / "hooks.json").read_text(encoding="utf-8")
    assert (after, (folder / "config.toml").read_text(encoding="utf-8")) == before
    assert len(_backups(folder / "hooks.json")) == 1


def test_codex_home_and_project_scope_decide_the_folder(
    run: Invoke, workspace: Workspace, monkeypatch: Any
) -> None:
    home = workspace.home / "elsewhere"
    monkeypatch.setenv("CODEX_HOME", str(home))
    data = json_of(run("install", "codex", "--hooks", "--write", "--json"))
    assert [(c["path"], c["what"], c["action"]) for c in data["changes"]] == [
        (str(home / "config.toml"), "the aletheia entry", "add"),
        (str(home / "hooks.json"), "the hooks", "add"),
    ]
    run("install", "codex", "--hooks", "--scope", "project", "--write")
    written = json.loads((workspace.project / ".codex" / "hooks.json").read_text("utf-8"))
    assert list(written["hooks"]) == [event for event, _ in EVENTS]
    assert not _codex(workspace).exists()


def test_the_dry_run_shows_the_hooks_and_writes_nothing(run: Invoke, workspace: Workspace) -> None:
    result = run("install", "codex", "--hooks")
    assert result.exit_code == 0, result.stderr
    assert f"Would add the hooks in {_codex(workspace) / 'hooks.json'}:" in result.stdout
    assert '+        "matcher": "apply_patch",' in result.stdout
    assert "Run again with --write" in result.stdout
    assert "trust Aletheia's" not in result.stdout  # told once written
    assert not _codex(workspace).exists()


def test_only_our_earlier_hooks_are_replaced_and_never_a_users(
    run: Invoke, workspace: Workspace
) -> None:
    """An older Aletheia hook (one copied over from Claude Code's settings, still naming
    claude-code) gives way to ours; the user's hook in its group stays, and so does a user's
    hook that merely runs something else at the same event."""
    folder = _codex(workspace)
    folder.mkdir()
    copied = {"type": "command", "command": f"ALETHEIA_TOOL=claude-code {HOOK_SCRIPT} user-prompt"}
    users = {"type": "command", "command": "notify-send prompt"}
    greeting = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    hooks = {"UserPromptSubmit": [{"hooks": [copied, users]}], "SessionStart": [greeting]}
    (folder / "hooks.json").write_text(json.dumps({"hooks": hooks}), encoding="utf-8")
    assert run("install", "codex", "--hooks", "--write").exit_code == 0
    data = json.loads((folder / "hooks.json").read_text(encoding="utf-8"))
    assert data["hooks"]["UserPromptSubmit"] == [
        {"hooks": [users]},
        {"hooks": [_ours(workspace, "user-prompt")]},
    ]
    assert data["hooks"]["SessionStart"] == [
        greeting,
        {"hooks": [_ours(workspace, "session-start")]},
    ]


def test_a_different_aletheia_server_stops_the_hooks_too(run: Invoke, workspace: Workspace) -> None:
    folder = _codex(workspace)
    folder.mkdir()
    original = '[mcp_servers.aletheia]\ncommand = "other"\n'
    (folder / "config.toml").write_text(original, encoding="utf-8")
    result = run("install", "codex", "--hooks", "--write")
    assert result.exit_code == 4
    assert 'already has a different server named "aletheia"' in result.stderr
    assert (folder / "config.toml").read_text(encoding="utf-8") == original
    assert not (folder / "hooks.json").exists()


def test_a_broken_hooks_json_is_refused_and_neither_file_is_written(
    run: Invoke, workspace: Workspace
) -> None:
    folder = _codex(workspace)
    folder.mkdir()
    (folder / "config.toml").write_text(CONFIG, encoding="utf-8")
    original = json.dumps({"hooks": {"PostToolUse": {"matcher": "apply_patch"}}})
    (folder / "hooks.json").write_text(original, encoding="utf-8")
    result = run("install", "codex", "--hooks", "--write")
    assert result.exit_code == 1
    assert f"{folder / 'hooks.json'}: hooks.PostToolUse is not a list of hook groups" in (
        result.stderr
    )
    assert (folder / "hooks.json").read_text(encoding="utf-8") == original
    assert (folder / "config.toml").read_text(encoding="utf-8") == CONFIG


def test_doctor_finds_the_codex_hooks(run: Invoke, workspace: Workspace) -> None:
    run("install", "codex", "--hooks", "--write", "--scope", "project")
    data = json_of(run("doctor", "--json"))
    assert data["hooks"]["codex"] == {"user": False, "project": True}
