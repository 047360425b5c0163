"""``aletheia install`` over an entry that is Aletheia's own: after the venv moved (or pip to
pipx, uvx), or with keys the user added to it, it is updated without --force, the user's keys
kept, and Aletheia's own old hooks are replaced with it."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace

MCP_SCRIPT = str(Path(sys.executable).parent / "aletheia-mcp")
HOOK_SCRIPT = Path(sys.executable).parent / "aletheia-hook"
OLD_ENV = {"ALETHEIA_DATA_DIR": "/old/data", "ALETHEIA_TOOL": "claude-code"}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_an_entry_and_hooks_of_a_moved_venv_are_replaced_without_force(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".claude.json"
    old_entry = {
        "type": "stdio",
        "command": "/old/venv/bin/python",
        "args": ["/old/venv/bin/aletheia-mcp"],
        "env": OLD_ENV,
    }
    _write(config, json.dumps({"mcpServers": {"aletheia": old_entry}}, indent=2) + "\n")
    settings = workspace.home / ".claude" / "settings.json"
    old_hook = {
        "type": "command",
        "command": "ALETHEIA_DATA_DIR=/old/data /old/venv/bin/aletheia-hook session-start",
        "timeout": 5,
    }
    mine = {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}
    hooks = {"SessionStart": [mine, {"hooks": [old_hook]}]}
    _write(settings, json.dumps({"hooks": hooks}, indent=2) + "\n")

    result = run("install", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Replaced the aletheia entry in {config}." in result.stdout
    assert f"Replaced the hooks in {settings}." in result.stdout
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert entry["command"] == sys.executable
    assert entry["args"] == [MCP_SCRIPT]
    assert entry["env"]["ALETHEIA_DATA_DIR"] == str(workspace.data_dir)
    groups = json.loads(settings.read_text(encoding="utf-8"))["hooks"]["SessionStart"]
    assert groups[0] == mine
    assert len(groups) == 2
    assert f"{HOOK_SCRIPT} session-start" in groups[1]["hooks"][0]["command"]
    assert "/old/" not in settings.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "old_entry",
    [
        {"command": "uvx", "args": ["aletheia-mem", "mcp"]},
        {"command": "pipx", "args": ["run", "--spec", "aletheia-mem", "aletheia-mem", "mcp"]},
        {"command": "/home/me/.local/bin/aletheia", "args": ["mcp"]},
        {"command": "C:\\venv\\Scripts\\aletheia-mcp.exe"},
        {"command": "python3", "args": ["-m", "aletheia_mem.server.stdio"]},
        {"command": "/opt/run-it", "env": {"ALETHEIA_TOOL": "cursor"}},
    ],
)
def test_each_form_of_our_entry_is_ours(
    run: Invoke, workspace: Workspace, old_entry: dict[str, object]
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    _write(config, json.dumps({"mcpServers": {"aletheia": old_entry}}))
    result = run("install", "cursor", "--write")
    assert result.exit_code == 0, result.stderr
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert entry["args"] == [MCP_SCRIPT]
    assert "url" not in entry


def test_gemini_trust_and_timeout_are_kept_with_the_hooks(
    run: Invoke, workspace: Workspace
) -> None:
    assert run("install", "gemini-cli", "--write").exit_code == 0
    settings = workspace.home / ".gemini" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["mcpServers"]["aletheia"].update({"trust": True, "timeout": 30000})
    data["mcpServers"]["aletheia"]["env"]["ALETHEIA_LOG"] = "debug"
    _write(settings, json.dumps(data, indent=2) + "\n")
    result = run("install", "gemini-cli", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    entry = json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert entry["trust"] is True
    assert entry["timeout"] == 30000
    assert entry["env"]["ALETHEIA_LOG"] == "debug"
    assert entry["args"] == [MCP_SCRIPT]
    again = run("install", "gemini-cli", "--hooks", "--write")
    assert "nothing to change" in again.stdout
    forced = run("install", "gemini-cli", "--hooks", "--write", "--force")
    assert forced.exit_code == 0
    assert json.loads(settings.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]["trust"]


def test_an_extra_key_in_codex_entry_is_kept(run: Invoke, workspace: Workspace) -> None:
    config = workspace.home / ".codex" / "config.toml"
    _write(
        config,
        '[mcp_servers.aletheia]\ncommand = "/old/venv/bin/python"\n'
        'args = ["/old/venv/bin/aletheia-mcp"]\nstartup_timeout_sec = 20\n',
    )
    result = run("install", "codex", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    entry = tomllib.loads(config.read_text(encoding="utf-8"))["mcp_servers"]["aletheia"]
    assert entry["startup_timeout_sec"] == 20
    assert entry["args"] == [MCP_SCRIPT]
    assert entry["env"]["ALETHEIA_TOOL"] == "codex"


def test_a_server_of_someone_else_still_needs_force(run: Invoke, workspace: Workspace) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    original = json.dumps(
        {"mcpServers": {"aletheia": {"command": "npx", "args": ["aletheia-notes"]}}}
    )
    _write(config, original)
    result = run("install", "cursor", "--write")
    assert result.exit_code == 4
    assert config.read_text(encoding="utf-8") == original


def test_claude_code_and_command_code_share_one_project_entry(
    run: Invoke, workspace: Workspace
) -> None:
    """Both read the project's .mcp.json, which has room for one server named aletheia: the
    second tool's install says so and leaves the first one's entry unless --force."""
    config = workspace.project / ".mcp.json"
    assert run("install", "claude-code", "--scope", "project", "--write").exit_code == 0
    before = config.read_text(encoding="utf-8")
    result = run("install", "command-code", "--scope", "project", "--write")
    assert result.exit_code == 4
    assert result.stderr == (
        f"Error: {config} already holds Aletheia's entry for Claude Code: Claude Code and"
        " Command Code both read this project file, which has room for one server named"
        ' "aletheia". Keep it, use --force to replace it (the file is backed up first), or'
        " use --scope user for Command Code.\n"
    )
    assert config.read_text(encoding="utf-8") == before
    assert run("uninstall", "command-code", "--scope", "project", "--write").exit_code == 4
    again = run("install", "claude-code", "--scope", "project", "--write")
    assert "nothing to change" in again.stdout
    forced = run("install", "command-code", "--scope", "project", "--write", "--force")
    assert forced.exit_code == 0
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert (entry["transport"], entry["env"]["ALETHEIA_TOOL"]) == ("stdio", "command-code")
    back = run("install", "claude-code", "--scope", "project", "--write")
    assert back.exit_code == 4 and "entry for Command Code" in back.stderr


PLANTED = {"PYTHONPATH": "/x/evil", "LD_PRELOAD": "/x/evil.so", "NODE_OPTIONS": "-r /x/e.js"}


@pytest.mark.parametrize("host", ["cursor", "opencode", "codex"])
def test_a_reinstall_keeps_only_aletheia_variables_of_the_entry_s_env(
    run: Invoke, workspace: Workspace, host: str
) -> None:
    env = {"ALETHEIA_TOOL": host, "ALETHEIA_LOG": "debug", **PLANTED}
    if host == "codex":
        config, key = workspace.home / ".codex" / "config.toml", "env"
        variables = ", ".join(f"{name} = {json.dumps(value)}" for name, value in env.items())
        _write(
            config,
            '[mcp_servers.aletheia]\ncommand = "/opt/run-it"\nstartup_timeout_sec = 20\n'
            f"env = {{ {variables} }}\n",
        )
    elif host == "opencode":
        config, key = workspace.home / ".config" / "opencode" / "opencode.json", "environment"
        entry = {"type": "local", "command": ["/opt/run-it"], "environment": env, "timeout": 9}
        _write(config, json.dumps({"mcp": {"aletheia": entry}}))
    else:
        config, key = workspace.home / ".cursor" / "mcp.json", "env"
        entry = {"command": "/opt/run-it", "env": env, "timeout": 9}
        _write(config, json.dumps({"mcpServers": {"aletheia": entry}}))
    result = run("install", host, "--write")
    assert result.exit_code == 0, result.stderr
    text = config.read_text(encoding="utf-8")
    if host == "codex":
        written = tomllib.loads(text)["mcp_servers"]["aletheia"]
        assert written["startup_timeout_sec"] == 20
    else:
        document = json.loads(text)
        written = document["mcp" if host == "opencode" else "mcpServers"]["aletheia"]
        assert written["timeout"] == 9
    assert set(written[key]) == {"ALETHEIA_DATA_DIR", "ALETHEIA_TOOL", "ALETHEIA_LOG"}
    assert written[key]["ALETHEIA_LOG"] == "debug"


def test_a_planted_project_entry_keeps_nothing_that_changes_what_runs_or_where(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.project / ".cursor" / "mcp.json"
    env = {"ALETHEIA_TOOL": "cursor", "ALETHEIA_HUB_DB": "/srv/theirs.db", "LD_PRELOAD": "x.so"}
    planted = {"command": "sh", "args": ["-c", "evil"], "env": env, "envFile": ".env"}
    _write(config, json.dumps({"mcpServers": {"aletheia": {**planted, "cwd": "tools"}}}))

    result = run("install", "cursor", "--scope", "project", "--write")

    assert result.exit_code == 0, result.stderr
    written = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert set(written) == {"command", "args", "env"}
    assert set(written["env"]) == {"ALETHEIA_DATA_DIR", "ALETHEIA_TOOL"}


REMOTE = {"url": "https://tools.example.com/mcp"}


def test_a_remote_entry_is_ours_only_at_the_address_given_with_http(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    _write(config, json.dumps({"mcpServers": {"aletheia": REMOTE}}))
    for args in ([], ["--http", "https://hub.example.com/mcp"]):
        refused = run("install", "cursor", "--write", *args)
        assert refused.exit_code == 4, refused.stdout
        assert "use --force to replace it" in refused.stderr
    assert json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"] == REMOTE
    token = ["--http", REMOTE["url"], "--token-env", "TOOLS_TOKEN"]
    assert run("install", "cursor", "--write", *token).exit_code == 0
    entry = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"]
    assert entry["headers"] == {"Authorization": "Bearer ${env:TOOLS_TOKEN}"}


def test_uninstall_removes_a_remote_entry_only_when_http_names_it(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    _write(config, json.dumps({"mcpServers": {"aletheia": REMOTE}}))
    for args in ([], ["--http", "https://hub.example.com/mcp"]):
        refused = run("uninstall", "cursor", "--write", *args)
        assert refused.exit_code == 4
        assert refused.stderr.strip().endswith(
            f"pass --http {REMOTE['url']} to remove it as Aletheia's, or --force (the file is"
            " backed up first)."
        )
    assert json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["aletheia"] == REMOTE
    assert run("uninstall", "cursor", "--write", "--http", REMOTE["url"]).exit_code == 0
    assert json.loads(config.read_text(encoding="utf-8")) == {}  # mcpServers, left empty, too
