"""``aletheia install --hooks`` edits the hook lists in place: the user's own groups (and
Cursor's hooks) keep their text as it was, one-line ones too, and the message says "Added"
when it only added Aletheia's hooks, "Replaced" when it replaced earlier ones of ours."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Invoke, Workspace

BASH_GROUP = '{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}'


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_one_line_claude_group_stays_one_line(run: Invoke, workspace: Workspace) -> None:
    settings = workspace.home / ".claude" / "settings.json"
    original = (
        '{\n  "hooks": {\n    "PostToolUse": [\n      ' + BASH_GROUP + "\n    ],\n"
        '    "Stop": [ {"hooks": [{"type": "command", "command": "say done"}]} ]\n  }\n}\n'
    )
    _write(settings, original)
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the hooks in {settings}." in result.stdout
    text = settings.read_text(encoding="utf-8")
    assert f"      {BASH_GROUP},\n      {{\n" in text
    assert '    "Stop": [ {"hooks": [{"type": "command", "command": "say done"}]} ]' in text
    assert json.loads(text)["hooks"]["PostToolUse"][0] == json.loads(BASH_GROUP)

    # Ours replaced (an earlier command): the user's group still untouched, "Replaced" said.
    _write(settings, text.replace("aletheia-hook post-tool-use", "aletheia-hook  post-tool-use"))
    again = run("install", "claude-code", "--hooks", "--write")
    assert f"Replaced the hooks in {settings}." in again.stdout
    assert settings.read_text(encoding="utf-8") == text


def test_cursor_stop_list_keeps_the_users_hooks_text(run: Invoke, workspace: Workspace) -> None:
    hooks = workspace.home / ".cursor" / "hooks.json"
    original = (
        '{\n  "version": 1,\n  "hooks": {\n    "stop": [{"command": "./notify.sh"}]\n  }\n}\n'
    )
    _write(hooks, original)
    result = run("install", "cursor", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the hooks in {hooks}." in result.stdout
    text = hooks.read_text(encoding="utf-8")
    assert '    "stop": [{"command": "./notify.sh"}, {"command": ' in text
    assert json.loads(text)["hooks"]["stop"][0] == {"command": "./notify.sh"}
    assert run("uninstall", "cursor", "--hooks", "--write").exit_code == 0
    assert hooks.read_text(encoding="utf-8") == original
