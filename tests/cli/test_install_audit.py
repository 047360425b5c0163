"""``aletheia install`` as a new user meets it: hooks merged beside the user's own, files that
are read-only or owned by someone else, a umask, comment-only JSONC, large files, and the
written entries started for real with an MCP initialize."""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.cli import jsonc
from aletheia_mem.cli.clients import Change
from tests.cli.conftest import Invoke, Workspace, json_of
from tests.e2e.http_server import initialize_message

OLD_HOOK = "/old/venv/bin/aletheia-hook session-start"


def _settings(workspace: Workspace) -> Path:
    path = workspace.home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_hook_group_shared_with_the_users_own_hook_keeps_that_hook_and_its_matcher(
    run: Invoke, workspace: Workspace
) -> None:
    settings = _settings(workspace)
    mine = {"type": "command", "command": "echo hi"}
    shared = {"matcher": "startup", "hooks": [mine, {"type": "command", "command": OLD_HOOK}]}
    settings.write_text(json.dumps({"hooks": {"SessionStart": [shared]}}), encoding="utf-8")
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["SessionStart"]
    assert groups[0] == {"matcher": "startup", "hooks": [mine]}
    assert len(groups) == 2
    assert "aletheia-hook session-start" in groups[1]["hooks"][0]["command"]
    before = settings.read_bytes()
    again = run("install", "claude-code", "--hooks", "--write")
    assert "already has the hooks; nothing to change." in again.stdout
    assert settings.read_bytes() == before


def test_an_event_that_is_not_a_list_of_groups_is_refused_not_replaced(
    run: Invoke, workspace: Workspace
) -> None:
    settings = _settings(workspace)
    original = '{"hooks": {"UserPromptSubmit": {"hooks": [{"command": "mine"}]}}}\n'
    settings.write_text(original, encoding="utf-8")
    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {settings}: hooks.UserPromptSubmit is not a list of hook groups;"
        " fix it or move the file away.\n"
    )
    assert settings.read_text(encoding="utf-8") == original
    assert not (workspace.home / ".claude.json").exists()


def test_a_read_only_config_file_is_refused_and_left_alone(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text('{"mcpServers": {}}\n', encoding="utf-8")
    config.chmod(0o444)
    result = run("install", "cursor", "--write")
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {config} is read-only; make it writable (chmod u+w) and run this again.\n"
    )
    assert config.read_text(encoding="utf-8") == '{"mcpServers": {}}\n'
    assert stat.S_IMODE(config.stat().st_mode) == 0o444
    assert list(config.parent.iterdir()) == [config]
    dry = run("install", "cursor")
    assert dry.exit_code == 0  # a dry run only reads


def test_a_new_config_file_follows_the_umask(run: Invoke, workspace: Workspace) -> None:
    previous = os.umask(0o077)
    try:
        result = run("install", "gemini-cli", "--write")
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.stderr
    config = workspace.home / ".gemini" / "settings.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_a_config_owned_by_another_user_keeps_its_owner_when_root_writes_it(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".claude.json"
    config.write_text('{"x": 1}\n', encoding="utf-8")
    os.chown(config, 65534, 65534)
    config.chmod(0o600)
    result = run("install", "claude-code", "--write")
    assert result.exit_code == 0, result.stderr
    info = config.stat()
    assert (info.st_uid, info.st_gid) == (65534, 65534)
    assert stat.S_IMODE(info.st_mode) == 0o600


def test_a_jsonc_file_holding_only_comments_gets_the_entry_below_them(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".config" / "Code" / "User" / "mcp.json"
    config.parent.mkdir(parents=True)
    config.write_text("// my servers go here\n", encoding="utf-8")
    result = run("install", "vscode", "--write")
    assert result.exit_code == 0, result.stderr
    text = config.read_text(encoding="utf-8")
    assert text.startswith("// my servers go here\n{")
    assert jsonc.get_member(text, ("servers", "aletheia", "type")) == "stdio"
    assert run("install", "vscode", "--write").stdout.startswith(f"{config} already has")


def test_a_json_array_at_the_top_level_is_named_as_such(run: Invoke, workspace: Workspace) -> None:
    config = workspace.home / ".claude.json"
    config.write_text("[1, 2]\n", encoding="utf-8")
    result = run("install", "claude-code", "--write")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {config}: the top level is not an object\n")
    assert config.read_text(encoding="utf-8") == "[1, 2]\n"


def test_connect_codex_for_a_project_prints_no_add_command_that_writes_the_user_file(
    run: Invoke,
) -> None:
    result = run("connect", "codex", "--scope", "project", "--json")
    assert result.exit_code == 0
    assert json_of(result)["command"] is None
    text = run("connect", "codex", "--scope", "project").stdout
    assert "codex mcp add" not in text
    assert "aletheia install codex --write --scope project" in text


def _big_claude_json(path: Path, projects: int) -> None:
    history = [{"display": "x" * 100, "pastedContents": {}} for _ in range(20)]
    data = {"projects": {f"/p/{i}": {"history": history} for i in range(projects)}}
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_a_large_claude_json_is_merged_keeping_every_byte(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".claude.json"
    _big_claude_json(config, 2500)  # about 8 MB, as a long-used ~/.claude.json grows
    before = config.read_text(encoding="utf-8")
    result = run("install", "claude-code", "--write")
    assert result.exit_code == 0, result.stderr
    again = run("install", "claude-code", "--write")
    assert "nothing to change" in again.stdout
    after = config.read_text(encoding="utf-8")
    assert after.startswith(before[:-2])  # only the closing brace was moved down
    assert json.loads(after)["projects"] == json.loads(before)["projects"]


HOSTS_AND_FILES = [
    ("claude-code", ".claude.json", ("mcpServers",)),
    ("codex", ".codex/config.toml", ("mcp_servers",)),
    ("cursor", ".cursor/mcp.json", ("mcpServers",)),
    ("gemini-cli", ".gemini/settings.json", ("mcpServers",)),
    ("windsurf", ".codeium/windsurf/mcp_config.json", ("mcpServers",)),
    ("command-code", ".commandcode/mcp.json", ("mcpServers",)),
    ("opencode", ".config/opencode/opencode.json", ("mcp",)),
    ("vscode", ".config/Code/User/mcp.json", ("servers",)),
    ("claude-desktop", ".config/Claude/claude_desktop_config.json", ("mcpServers",)),
]


def _argv_and_env(entry: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    if isinstance(entry["command"], list):  # OpenCode: one command array
        return entry["command"], entry["environment"]
    return [entry["command"], *entry["args"]], entry["env"]


@pytest.mark.e2e
@pytest.mark.parametrize(("host", "relative", "servers"), HOSTS_AND_FILES)
def test_the_written_entry_starts_a_server_that_answers_initialize(
    run: Invoke,
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
    host: str,
    relative: str,
    servers: tuple[str, ...],
) -> None:
    data_dir = workspace.home / "data 'q' \"dq\" ü"
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(data_dir))
    assert run("install", host, "--write").exit_code == 0
    text = (workspace.home / relative).read_text(encoding="utf-8")
    node: Any = tomllib.loads(text) if relative.endswith(".toml") else jsonc.parse(text).value
    for key in servers:
        node = node[key]
    argv, env = _argv_and_env(node["aletheia"])
    assert env["ALETHEIA_DATA_DIR"] == str(data_dir)
    request = initialize_message(1, host)
    answer = subprocess.run(  # the entry install just wrote
        argv,
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},  # hosts start servers with little environment
        cwd="/",
        timeout=30,
        check=False,
    )
    assert answer.returncode == 0, answer.stderr
    reply = json.loads(answer.stdout.splitlines()[0])
    assert reply["id"] == 1
    assert reply["result"]["serverInfo"]["name"]


def _patched(old: str, diff: str) -> str:
    """``old`` with a unified diff applied, checking every line the hunks name."""
    old_lines = old.splitlines(keepends=True)
    result: list[str] = []
    at = 0
    for line in diff.splitlines(keepends=True)[2:]:
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:])
            count = line.split()[1].split(",")[1] if "," in line.split()[1] else "1"
            begin = start if count == "0" else start - 1
            result += old_lines[at:begin]
            at = begin
        elif line.startswith("+"):
            result.append(line[1:])
        else:
            assert old_lines[at].rstrip("\n") == line[1:].rstrip("\n")
            if line.startswith(" "):
                result.append(old_lines[at])
            at += 1
    return "".join(result + old_lines[at:])


@pytest.mark.parametrize("seed", range(40))
def test_the_diff_of_a_change_turns_the_old_text_into_the_new(seed: int) -> None:
    chooser = random.Random(seed)
    old_lines = [f"line {chooser.randrange(5)}\n" for _ in range(chooser.randrange(0, 30))]
    new_lines = list(old_lines)
    for _ in range(chooser.randrange(1, 4)):
        at = chooser.randrange(len(new_lines) + 1)
        if new_lines and chooser.random() < 0.5:
            del new_lines[min(at, len(new_lines) - 1)]
        else:
            new_lines.insert(at, f"added {chooser.randrange(5)}\n")
    old, new = "".join(old_lines), "".join(new_lines)
    diff = Change(Path("/x/mcp.json"), "replace", old, new, None).diff()
    assert (diff == "") == (old == new)
    assert _patched(old, diff) == new
