"""``uninstall`` gives back what ``install`` changed: a file it edited comes back byte for byte
(comments beside the entry where they were; an ``mcpServers``, ``mcp`` or ``hooks`` it added
gone), and a file it made, left holding nothing else, is deleted (after a backup)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of
from tests.cli.test_uninstall import _write

HOOK_HOSTS = ("claude-code", "codex", "cursor", "gemini-cli", "opencode")
HOSTS = (*HOOK_HOSTS, "windsurf", "command-code", "vscode", "claude-desktop")


def _files(home: Path) -> dict[str, bytes]:
    """Every file under ``home`` but the store and the backups, with its bytes."""
    return {
        str(path.relative_to(home)): path.read_bytes()
        for path in home.rglob("*")
        if path.is_file() and ".aletheia-backup-" not in path.name and ".aletheia" not in path.parts
    }


def test_a_comment_after_the_last_server_stays_on_its_line(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    original = '{\n\t"mcpServers": {\n\t\t"gh": {"url": "u"}, /* trailing */\n\t},\n}\n'
    _write(config, original)
    assert run("install", "cursor", "--write").exit_code == 0
    assert '\t\t"gh": {"url": "u"}, /* trailing */\n\t\t"aletheia": {' in config.read_text("utf-8")
    assert run("uninstall", "cursor", "--write").exit_code == 0
    assert config.read_text(encoding="utf-8") == original


def test_an_mcp_servers_object_install_added_goes_and_a_new_hooks_file_is_deleted(
    run: Invoke, workspace: Workspace
) -> None:
    claude_json = workspace.home / ".claude.json"
    _write(claude_json, '{"theme":"dark"}\n')
    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    settings = workspace.home / ".claude" / "settings.json"
    result = run("uninstall", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert claude_json.read_text(encoding="utf-8") == '{"theme":"dark"}\n'
    assert not settings.exists()
    assert (
        f"Removed Aletheia's hooks from {settings} and deleted the file, which held nothing else."
        in result.stdout
    )
    [backup] = settings.parent.glob("settings.json.aletheia-backup-*")
    assert "aletheia-hook" in backup.read_text(encoding="utf-8")


@pytest.mark.parametrize("host", HOSTS)
def test_files_install_made_are_gone_after_uninstall(
    run: Invoke, workspace: Workspace, host: str
) -> None:
    hooks = ["--hooks"] if host in HOOK_HOSTS else []
    before = _files(workspace.home)
    assert run("install", host, "--write", *hooks).exit_code == 0
    assert _files(workspace.home) != before
    dry = run("uninstall", host, *hooks, "--json")
    assert {change["action"] for change in json_of(dry)["changes"]} == {"delete"}
    result = run("uninstall", host, "--write", *hooks)
    assert result.exit_code == 0, result.stderr
    assert _files(workspace.home) == before


@pytest.mark.parametrize("host", HOOK_HOSTS)
def test_files_that_were_there_come_back_byte_for_byte(
    run: Invoke, workspace: Workspace, host: str
) -> None:
    """Each file install changes held something of the user's before: it comes back as it was,
    the objects install added to it (``mcpServers``, ``mcp``, ``hooks``) gone with the entry."""
    texts = {
        ".claude.json": '{\n  "theme": "dark"\n}\n',
        ".claude/settings.json": '{\n  // mine\n  "model": "opus"\n}\n',
        ".codex/config.toml": 'model = "gpt-5"\n',
        ".codex/hooks.json": '{"hooks": {"Stop": [{"hooks": [{"command": "x"}]}]}}\n',
        ".cursor/mcp.json": '{"mcpServers": {"gh": {"url": "u"}}}',
        ".cursor/hooks.json": '{\n  "version": 1,\n  "hooks": {"stop": [{"command": "say"}]}\n}\n',
        ".gemini/settings.json": '{\n  "ui": {"theme": "GitHub"}\n}\n',
        ".config/opencode/opencode.json": '{\n  "theme": "opencode"\n}\n',
    }
    for name, text in texts.items():
        _write(workspace.home / name, text)
    before = _files(workspace.home)
    assert run("install", host, "--hooks", "--write").exit_code == 0
    assert _files(workspace.home) != before
    assert run("uninstall", host, "--hooks", "--write").exit_code == 0
    assert _files(workspace.home) == before


def test_an_empty_file_of_the_users_reached_through_a_link_stays(
    run: Invoke, workspace: Workspace
) -> None:
    """A file left holding only {} is deleted, but not through a link (the link would be left
    pointing nowhere): its target keeps {}."""
    target = workspace.home / "dotfiles" / "cursor-mcp.json"
    _write(target, "{}\n")
    link = workspace.home / ".cursor" / "mcp.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    assert run("install", "cursor", "--write").exit_code == 0
    assert "aletheia" in json.loads(target.read_text(encoding="utf-8"))["mcpServers"]
    assert run("uninstall", "cursor", "--write").exit_code == 0
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "{}\n"


@pytest.mark.parametrize("host", ["opencode", "cursor", "vscode"])
@pytest.mark.parametrize("text", ["", " \n"])
def test_an_empty_file_install_wrote_into_is_deleted(
    run: Invoke, workspace: Workspace, host: str, text: str
) -> None:
    """An empty (or blank) file install wrote its entry into is left holding ``{}`` once the
    entry is out: it is deleted, OpenCode's (started without its ``$schema``) as the others."""
    config = {
        "opencode": workspace.home / ".config" / "opencode" / "opencode.json",
        "cursor": workspace.home / ".cursor" / "mcp.json",
        "vscode": workspace.home / ".config" / "Code" / "User" / "mcp.json",
    }[host]
    _write(config, text)
    assert run("install", host, "--write").exit_code == 0
    assert "aletheia" in config.read_text(encoding="utf-8")
    result = run("uninstall", host, "--write")
    assert result.exit_code == 0, result.stderr
    assert not config.exists(), config.read_text(encoding="utf-8")
    assert "and deleted the file, which held nothing else." in result.stdout
