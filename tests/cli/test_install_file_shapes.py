"""``aletheia install`` on config files as editors leave them: Windows line endings, a byte
order mark, a folder it may not write, a broken Claude Code settings file."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from aletheia_mem.storage import files
from tests.cli.conftest import Invoke, Workspace


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def _lone_newlines(data: bytes) -> int:
    return data.count(b"\n") - data.count(b"\r\n")


@pytest.mark.parametrize(
    ("host", "relative", "original"),
    [
        (
            "cursor",
            ".cursor/mcp.json",
            b'{\r\n  // mine\r\n  "mcpServers": {\r\n    "gh": { "command": "gh" }\r\n  }\r\n}\r\n',
        ),
        (
            "codex",
            ".codex/config.toml",
            b'# mine\r\nmodel = "o3"\r\n\r\n[mcp_servers.gh]\r\ncommand = "gh"\r\n',
        ),
    ],
)
def test_a_file_with_windows_line_endings_keeps_them(
    run: Invoke, workspace: Workspace, host: str, relative: str, original: bytes
) -> None:
    target = workspace.home / relative
    target.parent.mkdir(parents=True)
    target.write_bytes(original)
    dry = run("install", host)
    assert dry.exit_code == 0
    assert "-model" not in dry.stdout and '-  "mcpServers"' not in dry.stdout  # only additions
    assert run("install", host, "--write").exit_code == 0
    new = target.read_bytes()
    assert _lone_newlines(new) == 0
    kept = original.rsplit(b"\r\n  }\r\n}\r\n", 1)[0] if host == "cursor" else original
    assert new.startswith(kept)
    [backup] = _backups(target)
    assert backup.read_bytes() == original
    again = run("install", host, "--write")
    assert "nothing to change" in again.stdout
    assert target.read_bytes() == new


def test_claude_settings_with_windows_line_endings_keep_them(
    run: Invoke, workspace: Workspace
) -> None:
    settings = workspace.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = b'{\r\n  "model": "opus"\r\n}\r\n'
    settings.write_bytes(original)
    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    new = settings.read_bytes()
    assert _lone_newlines(new) == 0
    assert new.startswith(b'{\r\n  "model": "opus",\r\n')
    assert "SessionStart" in json.loads(new)["hooks"]


def test_a_codex_config_with_a_byte_order_mark_is_merged_and_keeps_it(
    run: Invoke, workspace: Workspace
) -> None:
    target = workspace.home / ".codex" / "config.toml"
    target.parent.mkdir(parents=True)
    original = '\ufeff# saved by Notepad\nmodel = "o3"\n'
    target.write_text(original, encoding="utf-8")
    result = run("install", "codex", "--write")
    assert result.exit_code == 0, result.stderr
    new = target.read_text(encoding="utf-8")
    assert new.startswith(original)
    assert tomllib.loads(new.removeprefix("\ufeff"))["mcp_servers"]["aletheia"]["args"]
    assert "nothing to change" in run("install", "codex", "--write").stdout


def test_a_folder_it_cannot_write_is_one_error_line_not_a_traceback(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"x": 1}\n', encoding="utf-8")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(target.parent))

    # What a read-only or immutable folder (or a full disk) does; root would not see it.
    monkeypatch.setattr(files, "_open_new", refuse)
    result = run("install", "cursor", "--write")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: Cannot write {target}: [Errno 13] Permission denied: '{target.parent}'\n"
    )
    assert target.read_text(encoding="utf-8") == '{"x": 1}\n'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"hooks": ', " is not valid JSON: unexpected end of text at line 1, column 11"),
        ('{"hooks": []}', ": hooks is not an object"),
    ],
)
def test_a_broken_claude_settings_file_is_named_in_the_error(
    run: Invoke, workspace: Workspace, text: str, problem: str
) -> None:
    settings = workspace.home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(text, encoding="utf-8")
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {settings}{problem}\n"
    assert settings.read_text(encoding="utf-8") == text
    assert not (workspace.home / ".claude.json").exists()


def test_a_different_opencode_server_named_aletheia_is_replaced_only_with_force(
    run: Invoke, workspace: Workspace
) -> None:
    target = workspace.home / ".config" / "opencode" / "opencode.json"
    target.parent.mkdir(parents=True)
    old_entry = {"type": "local", "command": ["bun", "mcp.mjs"], "enabled": True}
    target.write_text(json.dumps({"mcp": {"aletheia": old_entry}}, indent=2), encoding="utf-8")
    refused = run("install", "opencode", "--write")
    assert refused.exit_code == 4
    assert 'already has a different server named "aletheia"' in refused.stderr
    assert run("install", "opencode", "--write", "--force").exit_code == 0
    mcp = json.loads(target.read_text(encoding="utf-8"))["mcp"]
    assert set(mcp) == {"aletheia"}
    assert (mcp["aletheia"]["type"], mcp["aletheia"]["enabled"]) == ("local", True)
    assert mcp["aletheia"]["environment"]["ALETHEIA_TOOL"] == "opencode"
    assert "nothing to change" in run("install", "opencode", "--write").stdout


def test_the_entry_an_earlier_release_wrote_under_mcp_servers_is_updated_in_place(
    run: Invoke, workspace: Workspace
) -> None:
    # Release 0.4.1 wrote mcp.servers.aletheia without "enabled". OpenCode starts it when no
    # mcp.aletheia is there, so it is brought up to date where it is, with no --force: it is
    # Aletheia's own entry, less the field added since.
    assert run("install", "opencode", "--write").exit_code == 0
    target = workspace.home / ".config" / "opencode" / "opencode.json"
    entry = json.loads(target.read_text(encoding="utf-8"))["mcp"]["aletheia"]
    earlier = {key: value for key, value in entry.items() if key != "enabled"}
    document = {"mcp": {"servers": {"aletheia": earlier, "gh": {"type": "local"}}}}
    target.write_text(json.dumps(document, indent=2), encoding="utf-8")
    result = run("install", "opencode", "--write")
    assert result.exit_code == 0, result.stderr
    assert json.loads(target.read_text(encoding="utf-8")) == {
        "mcp": {"servers": {"aletheia": entry, "gh": {"type": "local"}}}
    }
    assert "nothing to change" in run("install", "opencode", "--write").stdout
