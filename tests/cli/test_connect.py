"""``aletheia connect``: the host's add command and config entry, with absolute paths."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from aletheia_mem.cli.hosts import HOSTS
from tests.cli.conftest import Invoke, Workspace, json_of

MCP_SCRIPT = str(Path(sys.executable).parent / "aletheia-mcp")


def test_connect_claude_code_prints_the_command_then_the_entry(
    run: Invoke, workspace: Workspace
) -> None:
    result = run("connect", "claude-code")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "Run this:"
    assert lines[1] == (
        f"  claude mcp add --scope user aletheia -e ALETHEIA_DATA_DIR={workspace.data_dir}"
        f" -e ALETHEIA_TOOL=claude-code -- {sys.executable} {MCP_SCRIPT}"
    )
    assert lines[2] == ""
    document = json.loads("\n".join(lines[3:8]))
    assert document == {
        "mcpServers": {
            "aletheia": {
                "type": "stdio",
                "command": sys.executable,
                "args": [MCP_SCRIPT],
                "env": {
                    "ALETHEIA_DATA_DIR": str(workspace.data_dir),
                    "ALETHEIA_TOOL": "claude-code",
                },
            }
        }
    }
    assert lines[5].startswith('    "aletheia": { "type": "stdio", "command": ')
    assert f"add the entry above to {workspace.home / '.claude.json'}" in result.stdout


def test_connect_codex_prints_a_toml_table(run: Invoke, workspace: Workspace) -> None:
    result = run("connect", "codex")
    assert result.exit_code == 0
    assert "  codex mcp add aletheia --env ALETHEIA_DATA_DIR=" in result.stdout
    toml_text = result.stdout.split("\n\n", 1)[1].split("\n\nor add")[0]
    assert toml_text.startswith("[mcp_servers.aletheia]\n")
    assert tomllib.loads(toml_text) == {
        "mcp_servers": {
            "aletheia": {
                "command": sys.executable,
                "args": [MCP_SCRIPT],
                "env": {"ALETHEIA_DATA_DIR": str(workspace.data_dir), "ALETHEIA_TOOL": "codex"},
            }
        }
    }


EXPECTED_STDIO = {
    "cursor": ("mcpServers", {}),
    "gemini-cli": ("mcpServers", {}),
    "windsurf": ("mcpServers", {}),
    "claude-desktop": ("mcpServers", {}),
    "command-code": ("mcpServers", {"transport": "stdio"}),
    "vscode": ("servers", {"type": "stdio"}),
}


@pytest.mark.parametrize("host", sorted(EXPECTED_STDIO))
def test_json_hosts_get_command_args_and_env(run: Invoke, workspace: Workspace, host: str) -> None:
    key, extra = EXPECTED_STDIO[host]
    result = run("connect", host, "--json")
    assert result.exit_code == 0
    data = json_of(result)
    assert data["entry"] == {
        **extra,
        "command": sys.executable,
        "args": [MCP_SCRIPT],
        "env": {"ALETHEIA_DATA_DIR": str(workspace.data_dir), "ALETHEIA_TOOL": host},
    }
    assert json.loads(data["document"]) == {key: {"aletheia": data["entry"]}}
    assert Path(data["path"]).is_absolute()


def test_opencode_gets_the_reference_shape_with_one_command_array(
    run: Invoke, workspace: Workspace
) -> None:
    # The reference: mcp.aletheia = {"type": "local", "command": [...], "enabled": true}
    data = json_of(run("connect", "opencode", "--json"))
    assert data["path"] == str(workspace.home / ".config" / "opencode" / "opencode.json")
    assert json.loads(data["document"]) == {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {
            "aletheia": {
                "type": "local",
                "command": [sys.executable, MCP_SCRIPT],
                "environment": {
                    "ALETHEIA_DATA_DIR": str(workspace.data_dir),
                    "ALETHEIA_TOOL": "opencode",
                },
                "enabled": True,
            }
        },
    }


def _auth(reference: str) -> dict[str, dict[str, str]]:
    return {"headers": {"Authorization": f"Bearer {reference}"}}


REMOTE = {
    "claude-code": {"type": "http", "url": "URL", **_auth("${HUB_TOKEN}")},
    "cursor": {"url": "URL", **_auth("${env:HUB_TOKEN}")},
    "gemini-cli": {"type": "http", "url": "URL", **_auth("${HUB_TOKEN}")},
    "windsurf": {"serverUrl": "URL", **_auth("${env:HUB_TOKEN}")},
    "command-code": {"transport": "http", "url": "URL", **_auth("${HUB_TOKEN}")},
    "opencode": {"type": "remote", "url": "URL", **_auth("{env:HUB_TOKEN}"), "enabled": True},
    "vscode": {"type": "http", "url": "URL", **_auth("${env:HUB_TOKEN}")},
    "codex": {"url": "URL", "bearer_token_env_var": "HUB_TOKEN"},
}


@pytest.mark.parametrize("host", sorted(REMOTE))
def test_http_variant_has_the_url_and_a_bearer_header_from_the_env(run: Invoke, host: str) -> None:
    url = "https://hub.example.com/mcp"
    data = json_of(run("connect", host, "--http", url, "--token-env", "HUB_TOKEN", "--json"))
    expected = json.loads(json.dumps(REMOTE[host]).replace("URL", url))
    assert data["entry"] == expected


def test_claude_code_http_add_command_uses_transport_and_header(run: Invoke) -> None:
    result = run(
        "connect", "claude-code", "--http", "http://127.0.0.1:8765/mcp", "--token-env", "T"
    )
    assert result.stdout.splitlines()[1] == (
        "  claude mcp add --transport http --scope user aletheia http://127.0.0.1:8765/mcp"
        " --header 'Authorization: Bearer ${T}'"
    )


def test_the_install_it_suggests_writes_the_same_remote_entry(
    run: Invoke, workspace: Workspace
) -> None:
    """Followed as printed, ``or let Aletheia merge it with: ...`` writes the remote entry that
    connect showed, not a stdio one."""
    url = "https://hub.example.com/mcp"
    shown = run("connect", "cursor", "--http", url, "--token-env", "HUB_TOKEN")
    assert shown.exit_code == 0
    suggestion = shown.stdout.splitlines()[-1]
    assert suggestion == (
        "or let Aletheia merge it with: aletheia install cursor --write"
        f" --http {url} --token-env HUB_TOKEN"
    )
    args = shlex.split(suggestion.split(" with: ", 1)[1])[1:]
    assert run(*args).exit_code == 0
    written = json.loads((workspace.home / ".cursor" / "mcp.json").read_text())
    assert written["mcpServers"]["aletheia"] == {
        "url": url,
        "headers": {"Authorization": "Bearer ${env:HUB_TOKEN}"},
    }


def test_the_suggested_install_keeps_the_scope_and_a_url_without_a_token(run: Invoke) -> None:
    result = run("connect", "claude-code", "--scope", "project", "--http", "http://h/mcp?a=1&b")
    assert result.stdout.splitlines()[-2] == (
        "or add the entry above to "
        f"{Path.cwd() / '.mcp.json'} with: aletheia install claude-code --write"
        " --scope project --http 'http://h/mcp?a=1&b'"
    )


def test_http_without_token_env_has_no_header(run: Invoke) -> None:
    data = json_of(run("connect", "cursor", "--http", "http://127.0.0.1:8765/mcp", "--json"))
    assert data["entry"] == {"url": "http://127.0.0.1:8765/mcp"}


def test_claude_desktop_refuses_a_remote_entry(run: Invoke) -> None:
    result = run("connect", "claude-desktop", "--http", "https://hub.example.com/mcp")
    assert result.exit_code == 2
    assert "Claude Desktop takes stdio servers only" in result.stderr


def test_claude_desktop_refusal_is_one_line_that_says_it_once(run: Invoke) -> None:
    """Nothing changed: no "Restart Claude Desktop after the change", no repeated reason."""
    for command in ("connect", "install"):
        result = run(command, "claude-desktop", "--http", "https://hub.example.com/mcp")
        assert result.exit_code == 2
        assert result.stderr == (
            "Error: Claude Desktop takes stdio servers only in its config file; add a remote"
            " server as a Connector in the app instead.\n"
        )


def test_token_env_needs_http(run: Invoke) -> None:
    result = run("connect", "cursor", "--token-env", "X")
    assert result.exit_code == 2
    assert result.stderr == "Error: --token-env needs --http URL.\n"


def test_project_scope_points_at_the_repository_root(run: Invoke, workspace: Workspace) -> None:
    sub = workspace.project / "src" / "deep"
    sub.mkdir(parents=True)
    os.chdir(sub)
    data = json_of(run("connect", "claude-code", "--scope", "project", "--json"))
    assert data["path"] == str(workspace.project / ".mcp.json")
    assert data["command"].startswith("claude mcp add --scope project aletheia ")


def test_connect_without_a_host_lists_every_host(run: Invoke) -> None:
    result = run("connect")
    assert result.exit_code == 0
    for host in HOSTS:
        assert host.name in result.stdout
    assert [h["host"] for h in json_of(run("connect", "--json"))] == [h.name for h in HOSTS]


def test_unknown_host_is_a_usage_error(run: Invoke) -> None:
    result = run("connect", "emacs")
    assert result.exit_code == 2
    assert "'emacs' is not one of" in result.stderr


def test_connect_writes_nothing(run: Invoke, workspace: Workspace) -> None:
    for host in HOSTS:
        assert run("connect", host.name).exit_code == 0
    assert not (workspace.home / ".claude.json").exists()
    assert not (workspace.home / ".codex").exists()


CODEX_TRUST = "Codex reads a project's .codex/config.toml only in trusted projects."


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["connect", "codex"], False),
        (["connect", "codex", "--http", "https://h/mcp"], False),
        (["install", "codex", "--write"], False),
        (["install", "codex", "--hooks", "--write"], False),
        (["connect", "codex", "--scope", "project"], True),
        (["install", "codex", "--scope", "project", "--write"], True),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_codex_s_trusted_project_note_is_said_only_at_project_scope(
    run: Invoke, args: list[str], said: bool
) -> None:
    """The user file ~/.codex/config.toml needs no trust: the note there misled a new user
    into looking for a step that does not exist."""
    result = run(*args)
    assert result.exit_code == 0, result.output
    assert (CODEX_TRUST in result.stdout) is said
