"""``aletheia install cursor --hooks``: Cursor's capture hooks go into the ``hooks.json`` beside its
``mcp.json`` (``{"version": 1, "hooks": {"<event>": [{"command": ...}]}}``, as Cursor's hooks
documentation gives it), both files written or neither, beside the user's own hooks."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.cli.conftest import Invoke, Workspace, json_of

HOOK_SCRIPT = Path(sys.executable).parent / "aletheia-hook"
EVENTS = (
    ("sessionStart", "session-start"),
    ("beforeSubmitPrompt", "user-prompt"),
    ("afterFileEdit", "post-tool-use"),
    ("stop", "session-end"),
    ("sessionEnd", "session-end"),
)
MCP = """{
  // my servers
  "mcpServers": {"docs": {"command": "docs-mcp"}}
}
"""


def _cursor(workspace: Workspace) -> Path:
    return workspace.home / ".cursor"


def _ours(workspace: Workspace, name: str) -> dict[str, Any]:
    command = f"ALETHEIA_DATA_DIR={workspace.data_dir} ALETHEIA_TOOL=cursor {HOOK_SCRIPT} {name}"
    return {"command": command, "timeout": 5}


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_the_hooks_go_into_hooks_json_beside_mcp_json(run: Invoke, workspace: Workspace) -> None:
    folder = _cursor(workspace)
    folder.mkdir()
    (folder / "mcp.json").write_text(MCP, encoding="utf-8")
    formatter = {"command": "./hooks/format.sh"}
    original = json.dumps({"version": 1, "hooks": {"afterFileEdit": [formatter]}}, indent=2)
    (folder / "hooks.json").write_text(original + "\n", encoding="utf-8")
    result = run("install", "cursor", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry in {folder / 'mcp.json'}." in result.stdout
    assert f"Added the hooks in {folder / 'hooks.json'}." in result.stdout  # none replaced
    mcp = (folder / "mcp.json").read_text(encoding="utf-8")
    assert mcp.startswith("{\n  // my servers\n")  # the comment kept
    assert '"ALETHEIA_TOOL": "cursor"' in mcp
    data = json.loads((folder / "hooks.json").read_text(encoding="utf-8"))
    assert data["version"] == 1
    hooks = data["hooks"]
    assert list(hooks) == [
        "afterFileEdit",
        *(event for event, _ in EVENTS if event != "afterFileEdit"),
    ]
    assert hooks["afterFileEdit"] == [formatter, _ours(workspace, "post-tool-use")]
    for event, name in EVENTS:
        if event != "afterFileEdit":
            assert hooks[event] == [_ours(workspace, name)]
    [backup] = _backups(folder / "hooks.json")
    assert backup.read_text(encoding="utf-8") == original + "\n"

    before = (folder / "hooks.json").read_text(encoding="utf-8"), mcp
    again = run("install", "cursor", "--hooks", "--write")
    assert f"{folder / 'hooks.json'} already has the hooks; nothing to change." in again.stdout
    after = (folder / "hooks.json").read_text(encoding="utf-8")
    assert (after, (folder / "mcp.json").read_text(encoding="utf-8")) == before
    assert len(_backups(folder / "hooks.json")) == 1


def test_a_new_hooks_json_gets_its_version_and_the_project_scope_its_own_folder(
    run: Invoke, workspace: Workspace
) -> None:
    data = json_of(run("install", "cursor", "--hooks", "--write", "--json"))
    assert [(c["path"], c["what"], c["action"]) for c in data["changes"]] == [
        (str(_cursor(workspace) / "mcp.json"), "the aletheia entry", "add"),
        (str(_cursor(workspace) / "hooks.json"), "the hooks", "add"),
    ]
    written = json.loads((_cursor(workspace) / "hooks.json").read_text(encoding="utf-8"))
    assert list(written) == ["version", "hooks"]
    assert written["version"] == 1
    assert list(written["hooks"]) == [event for event, _ in EVENTS]

    run("install", "cursor", "--hooks", "--scope", "project", "--write")
    project = workspace.project / ".cursor"
    assert json.loads((project / "mcp.json").read_text("utf-8"))["mcpServers"]["aletheia"]
    assert json.loads((project / "hooks.json").read_text("utf-8"))["hooks"]["stop"] == [
        _ours(workspace, "session-end")
    ]


def test_the_dry_run_shows_the_hooks_and_writes_nothing(run: Invoke, workspace: Workspace) -> None:
    result = run("install", "cursor", "--hooks")
    assert result.exit_code == 0, result.stderr
    assert f"Would add the hooks in {_cursor(workspace) / 'hooks.json'}:" in result.stdout
    assert '+  "version": 1,' in result.stdout
    assert '+    "beforeSubmitPrompt": [' in result.stdout
    assert "Run again with --write" in result.stdout
    assert not _cursor(workspace).exists()


def test_only_our_earlier_hooks_are_replaced_and_never_a_users(
    run: Invoke, workspace: Workspace
) -> None:
    """An older Aletheia hook (another store, no timeout) gives way to ours in its place; the
    user's hooks of the same event stay, in their order, and so does a version they set."""
    folder = _cursor(workspace)
    folder.mkdir()
    older = {"command": f"ALETHEIA_DATA_DIR=/old {HOOK_SCRIPT} user-prompt"}
    audit, notify = {"command": "./hooks/audit.sh"}, {"command": "notify-send", "timeout": 2}
    hooks = {"beforeSubmitPrompt": [audit, older, notify], "stop": [audit]}
    (folder / "hooks.json").write_text(json.dumps({"version": 2, "hooks": hooks}), "utf-8")
    assert run("install", "cursor", "--hooks", "--write").exit_code == 0
    data = json.loads((folder / "hooks.json").read_text(encoding="utf-8"))
    assert data["version"] == 2
    assert data["hooks"]["beforeSubmitPrompt"] == [audit, _ours(workspace, "user-prompt"), notify]
    assert data["hooks"]["stop"] == [audit, _ours(workspace, "session-end")]


def test_a_different_aletheia_server_stops_the_hooks_too(run: Invoke, workspace: Workspace) -> None:
    folder = _cursor(workspace)
    folder.mkdir()
    original = '{"mcpServers": {"aletheia": {"command": "other"}}}\n'
    (folder / "mcp.json").write_text(original, encoding="utf-8")
    result = run("install", "cursor", "--hooks", "--write")
    assert result.exit_code == 4
    assert 'already has a different server named "aletheia"' in result.stderr
    assert (folder / "mcp.json").read_text(encoding="utf-8") == original
    assert not (folder / "hooks.json").exists()


def test_a_broken_hooks_json_is_refused_and_neither_file_is_written(
    run: Invoke, workspace: Workspace
) -> None:
    folder = _cursor(workspace)
    folder.mkdir()
    (folder / "mcp.json").write_text(MCP, encoding="utf-8")
    original = json.dumps({"version": 1, "hooks": {"stop": {"command": "x"}}})
    (folder / "hooks.json").write_text(original, encoding="utf-8")
    result = run("install", "cursor", "--hooks", "--write")
    assert result.exit_code == 1
    assert f"{folder / 'hooks.json'}: hooks.stop is not a list" in result.stderr
    assert (folder / "hooks.json").read_text(encoding="utf-8") == original
    assert (folder / "mcp.json").read_text(encoding="utf-8") == MCP


def test_doctor_finds_the_cursor_hooks(run: Invoke, workspace: Workspace) -> None:
    run("install", "cursor", "--hooks", "--write", "--scope", "project")
    data = json_of(run("doctor", "--json"))
    assert data["hooks"]["cursor"] == {"user": False, "project": True}
