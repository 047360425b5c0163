"""A config file whose edited object holds a key twice (two "aletheia" servers, an event twice in
"hooks") is refused with one line naming the file and the key, exit code 1, nothing written:
the positions of one member of the two would cut the wrong text (the user's other servers went,
or the JSON left was invalid)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aletheia_mem.cli import jsonc
from aletheia_mem.cli.hooks import hook_command
from tests.cli.conftest import Invoke, Workspace

SERVERS = """{
  "mcpServers": {
    "aletheia": {"command": "/old/venv/bin/aletheia-mcp"},
    "github": {"command": "github-mcp"},
    "aletheia": {"command": "/old/venv/bin/aletheia-mcp", "env": {"ALETHEIA_TOOL": "claude-code"}},
    "postgres": {"command": "pg-mcp"}
  }
}
"""


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_two_aletheia_servers_are_refused_and_nothing_is_written(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    path = workspace.home / ".claude.json"
    path.write_text(SERVERS, encoding="utf-8")
    before = _files(workspace.home)
    result = run(command, "claude-code", "--write")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.strip() == (
        f'Error: {path}: mcpServers holds the key "aletheia" twice (the second at line 5);'
        " remove one of them, then run this again"
    )
    assert _files(workspace.home) == before  # no backup either


def _hook_group(event: str) -> str:
    command = hook_command(event, {"ALETHEIA_TOOL": "claude-code"})
    return json.dumps([{"hooks": [{"type": "command", "command": command}]}])


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_an_event_twice_in_hooks_is_refused_and_nothing_is_written(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    settings = workspace.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    users = json.dumps([{"hooks": [{"type": "command", "command": "notify-me"}]}])
    settings.write_text(
        '{\n  "hooks": {\n'
        f'    "SessionStart": {_hook_group("session-start")},\n'
        f'    "Stop": {users},\n'
        f'    "SessionStart": {_hook_group("session-start")}\n'
        "  }\n}\n",
        encoding="utf-8",
    )
    before = _files(workspace.home)
    result = run(command, "claude-code", "--hooks", "--write")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f'Error: {settings}: hooks holds the key "SessionStart" twice (the second at line 5);'
        " remove one of them, then run this again"
    )
    assert _files(workspace.home) == before


def test_a_key_twice_elsewhere_in_the_file_does_not_stop_an_edit(
    run: Invoke, workspace: Workspace
) -> None:
    path = workspace.home / ".claude.json"
    original = '{"theme": "dark", "projects": {}, "theme": "light"}\n'
    path.write_text(original, encoding="utf-8")
    assert run("install", "claude-code", "--write").exit_code == 0
    document = json.loads(path.read_text(encoding="utf-8"))
    assert (document["theme"], list(document["mcpServers"])) == ("light", ["aletheia"])
    assert run("uninstall", "claude-code", "--write").exit_code == 0
    assert json.loads(path.read_text(encoding="utf-8")).get("mcpServers") == {}


def test_jsonc_refuses_to_cut_a_member_of_an_object_holding_a_key_twice() -> None:
    with pytest.raises(jsonc.JsoncDuplicateKeyError, match='mcpServers holds the key "aletheia"'):
        jsonc.remove_member(SERVERS, ("mcpServers", "github"))
    with pytest.raises(jsonc.JsoncDuplicateKeyError):
        jsonc.set_member(SERVERS, ("mcpServers", "aletheia"), {})
    assert jsonc.get_member(SERVERS, ("mcpServers", "github")) == {"command": "github-mcp"}


@pytest.mark.parametrize("command", ["install", "uninstall"])
@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_two_aletheia_servers_the_last_not_ours_are_the_same_refusal(
    run: Invoke, workspace: Workspace, command: str, force: bool
) -> None:
    """The host reads the last of the two: where that one was someone else's, the duplicate
    was taken for a conflict (exit code 4, "a different server named aletheia") unless --force;
    the duplicate comes first, with or without --force."""
    path = workspace.home / ".claude.json"
    path.write_text(
        '{"mcpServers":{"aletheia":{"command":"a"},\n"aletheia":{"command":"b"}}}',
        encoding="utf-8",
    )
    before = _files(workspace.home)
    result = run(command, "claude-code", "--write", *(["--force"] if force else []), "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"] == {
        "code": "config_file",
        "message": f'{path}: mcpServers holds the key "aletheia" twice (the second at line 2);'
        " remove one of them, then run this again",
    }
    assert _files(workspace.home) == before
