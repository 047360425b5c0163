"""The coding tools Aletheia connects to: where each keeps its MCP config and in what shape.

Shapes and locations follow ``shared/spec/mcp-protocol.md`` section 4 (verified with the real
CLIs of Claude Code, Gemini CLI, Codex and OpenCode; Cursor, Windsurf, VS Code, Claude Desktop
and Command Code from their documentation).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import sysconfig
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aletheia_mem.cli.clients import FileFormat
from aletheia_mem.cli.launcher import temporary_launcher
from aletheia_mem.config import Settings
from aletheia_mem.projects import project_root

Scope = Literal["user", "project"]
SERVER_NAME = "aletheia"


@dataclass(frozen=True)
class Server:
    """What a host should start (stdio) or reach (``url``)."""

    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    token_env: str | None = None


def mcp_command() -> tuple[str, tuple[str, ...]]:
    """How a host starts the stdio server: ``uvx aletheia-mem mcp`` (or pipx's) when this runs
    from a run-once cache, else the absolute interpreter and ``aletheia-mcp`` script paths."""
    launcher = temporary_launcher()
    if launcher is not None:
        program, *args = launcher.command("mcp")
        return program, tuple(args)
    python = os.path.abspath(sys.executable)
    script = Path(sysconfig.get_path("scripts")) / "aletheia-mcp"
    if not script.exists():
        script = Path(python).parent / "aletheia-mcp"
    if script.exists():
        return python, (str(script.absolute()),)
    return python, ("-c", "from aletheia_mem.server.stdio import main; main()")


def stdio_server(settings: Settings, tool: str) -> Server:
    """The stdio server with the environment it needs: its store and the caller's name."""
    command, args = mcp_command()
    return Server(command=command, args=args, env=server_env(settings, tool))


# The variables an entry ``install`` writes sets (``server_env``), and no other.
INSTALL_VARIABLES = frozenset({"ALETHEIA_DATA_DIR", "ALETHEIA_TOOL"})


def server_env(settings: Settings, tool: str) -> dict[str, str]:
    """``ALETHEIA_TOOL`` and the absolute store location: hosts start servers anywhere."""
    return {"ALETHEIA_DATA_DIR": str(settings.data_dir.absolute()), "ALETHEIA_TOOL": tool}


def http_server(url: str, token_env: str | None) -> Server:
    return Server(url=url, token_env=token_env)


# -- entry shapes --------------------------------------------------------------------------


def _bearer(server: Server, reference: str) -> dict[str, Any]:
    if not server.token_env:
        return {}
    return {"headers": {"Authorization": "Bearer " + reference.format(server.token_env)}}


def _claude_entry(server: Server) -> dict[str, Any]:
    if server.url:
        return {"type": "http", "url": server.url, **_bearer(server, "${{{}}}")}
    return {
        "type": "stdio",
        "command": server.command,
        "args": list(server.args),
        "env": dict(server.env),
    }


def _plain_entry(server: Server, http_key: str, reference: str) -> dict[str, Any]:
    if server.url:
        return {http_key: server.url, **_bearer(server, reference)}
    return {"command": server.command, "args": list(server.args), "env": dict(server.env)}


def _gemini_entry(server: Server) -> dict[str, Any]:
    if server.url:
        return {"type": "http", "url": server.url, **_bearer(server, "${{{}}}")}
    return _plain_entry(server, "url", "")


def _command_code_entry(server: Server) -> dict[str, Any]:
    if server.url:
        return {"transport": "http", "url": server.url, **_bearer(server, "${{{}}}")}
    return {"transport": "stdio", **_plain_entry(server, "url", "")}


def _opencode_entry(server: Server) -> dict[str, Any]:
    """The reference's shape, ``mcp.aletheia`` with ``enabled``: OpenCode 1.18 starts it before
    an entry of its newer ``mcp.servers`` shape of the same name."""
    if server.url:
        entry = {"type": "remote", "url": server.url, **_bearer(server, "{{env:{}}}")}
        return {**entry, "enabled": True}
    return {
        "type": "local",
        "command": [server.command, *server.args],
        "environment": dict(server.env),
        "enabled": True,
    }


def _vscode_entry(server: Server) -> dict[str, Any]:
    if server.url:
        return {"type": "http", "url": server.url, **_bearer(server, "${{env:{}}}")}
    return {
        "type": "stdio",
        "command": server.command,
        "args": list(server.args),
        "env": dict(server.env),
    }


def _codex_entry(server: Server) -> dict[str, Any]:
    if server.url:
        entry: dict[str, Any] = {"url": server.url}
        if server.token_env:
            entry["bearer_token_env_var"] = server.token_env
        return entry
    return {"command": server.command, "args": list(server.args), "env": dict(server.env)}


# -- add commands --------------------------------------------------------------------------


def _quote(parts: list[str]) -> str:
    return " ".join(shlex.quote(part) for part in parts)


def _claude_add(server: Server, scope: Scope) -> str:
    if server.url:
        parts = ["claude", "mcp", "add", "--transport", "http", "--scope", scope, SERVER_NAME]
        parts.append(server.url)
        if server.token_env:
            parts += ["--header", f"Authorization: Bearer ${{{server.token_env}}}"]
        return _quote(parts)
    parts = ["claude", "mcp", "add", "--scope", scope, SERVER_NAME]
    for key, value in server.env.items():
        parts += ["-e", f"{key}={value}"]
    return _quote([*parts, "--", server.command, *server.args])


def _codex_add(server: Server, scope: Scope) -> str | None:
    if scope != "user":
        return None  # codex mcp add writes ~/.codex/config.toml only
    if server.url:
        parts = ["codex", "mcp", "add", SERVER_NAME, "--url", server.url]
        if server.token_env:
            parts += ["--bearer-token-env-var", server.token_env]
        return _quote(parts)
    parts = ["codex", "mcp", "add", SERVER_NAME]
    for key, value in server.env.items():
        parts += ["--env", f"{key}={value}"]
    return _quote([*parts, "--", server.command, *server.args])


def _gemini_add(server: Server, scope: Scope) -> str:
    if server.url:
        parts = ["gemini", "mcp", "add", "-s", scope, "-t", "http"]
        if server.token_env:
            parts += ["-H", f"Authorization: Bearer ${{{server.token_env}}}"]
        return _quote([*parts, SERVER_NAME, server.url])
    parts = ["gemini", "mcp", "add", "-s", scope]
    for key, value in server.env.items():
        parts += ["-e", f"{key}={value}"]
    return _quote([*parts, SERVER_NAME, server.command, *server.args])


def _vscode_add(server: Server, scope: Scope) -> str | None:
    if scope != "user":
        return None
    entry = {"name": SERVER_NAME, **_vscode_entry(server)}
    return _quote(["code", "--add-mcp", json.dumps(entry, separators=(",", ":"))])


def _command_code_add(server: Server, scope: Scope) -> str:
    entry = json.dumps(_command_code_entry(server), separators=(",", ":"))
    return _quote(["cmd", "mcp", "add-json", "--scope", scope, SERVER_NAME, entry])


# -- file locations ------------------------------------------------------------------------


def _home() -> Path:
    return Path.home()


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or _home() / ".config")


def _app_support(*parts: str) -> Path:
    """The per-user application folder of a desktop app on this platform."""
    if sys.platform == "darwin":
        return _home().joinpath("Library", "Application Support", *parts)
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or _home() / "AppData" / "Roaming").joinpath(*parts)
    return _config_home().joinpath(*parts)


def _codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or _home() / ".codex")


def claude_config_dir() -> Path | None:
    """``$CLAUDE_CONFIG_DIR`` when set: Claude Code then keeps its ``.claude.json`` and its user
    ``settings.json`` there, and reads neither ``~/.claude.json`` nor ``~/.claude``."""
    named = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(named) if named else None


def claude_user_file() -> Path:
    """Claude Code's user config: ``~/.claude.json``, or ``$CLAUDE_CONFIG_DIR/.claude.json``."""
    return (claude_config_dir() or _home()) / ".claude.json"


def claude_user_settings() -> Path:
    """Claude Code's user settings (its hooks): ``~/.claude/settings.json``, or
    ``$CLAUDE_CONFIG_DIR/settings.json``."""
    return (claude_config_dir() or _home() / ".claude") / "settings.json"


@dataclass(frozen=True)
class Host:
    """One coding tool: its config file per scope, entry shape and add command."""

    name: str
    title: str
    fmt: FileFormat
    servers_key: tuple[str, ...]
    user_file: Callable[[], Path]
    project_file: str | None
    entry: Callable[[Server], dict[str, Any]]
    add_command: Callable[[Server, Scope], str | None] | None = None
    http: bool = True
    # With http False: how a remote server is added instead, for the refusal of --http.
    remote_instead: str = ""
    # Top-level keys a new config file starts with, before the servers (OpenCode's $schema):
    # ``connect`` shows them and ``install`` writes them into a file it makes.
    document_extra: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    project_note: str = ""  # said only for --scope project (the user file needs no trust)
    # Other places the host reads servers from (OpenCode's newer ``mcp.servers``): an entry
    # found there, and not in ``servers_key``, is the one the host starts, updated in place.
    other_servers_keys: tuple[tuple[str, ...], ...] = ()
    # The host reads ``<name>.jsonc`` as well (OpenCode): that file is used when it is the one
    # that exists, rather than making a second one.
    jsonc_twin: bool = False

    def note_for(self, scope: Scope) -> str:
        """What to know after adding the entry at ``scope`` ("" when nothing)."""
        notes = (self.note, self.project_note if scope == "project" else "")
        return " ".join(note for note in notes if note)

    def servers_keys(self) -> tuple[tuple[str, ...], ...]:
        """Where the host looks for servers, the place it starts first."""
        return (self.servers_key, *self.other_servers_keys)

    def config_path(self, scope: Scope, cwd: Path) -> Path:
        if scope == "project":
            if self.project_file is None:
                raise ValueError(f"{self.title} has no project-scope config file.")
            path = project_root(cwd) / self.project_file
        else:
            path = self.user_file()
        twin = path.with_suffix(".jsonc")
        if self.jsonc_twin and not path.exists() and twin.exists():
            return twin
        return path

    def entry_path(self) -> tuple[str, ...]:
        return (*self.servers_key, SERVER_NAME)

    def document(self, server: Server) -> dict[str, Any]:
        """A whole config file holding only this entry, as ``connect`` prints it."""
        body: Any = {SERVER_NAME: self.entry(server)}
        for key in reversed(self.servers_key):
            body = {key: body}
        return {**self.document_extra, **body}


HOSTS: tuple[Host, ...] = (
    Host(
        "claude-code",
        "Claude Code",
        "json",
        ("mcpServers",),
        claude_user_file,
        ".mcp.json",
        _claude_entry,
        _claude_add,
        note="User scope is the top-level mcpServers of ~/.claude.json"
        " ($CLAUDE_CONFIG_DIR/.claude.json when that is set); project scope is .mcp.json, which"
        " Claude Code asks you to approve once.",
    ),
    Host(
        "codex",
        "Codex",
        "toml",
        ("mcp_servers",),
        lambda: _codex_home() / "config.toml",
        ".codex/config.toml",
        _codex_entry,
        _codex_add,
        project_note="Codex reads a project's .codex/config.toml only in trusted projects.",
    ),
    Host(
        "cursor",
        "Cursor",
        "json",
        ("mcpServers",),
        lambda: _home() / ".cursor" / "mcp.json",
        ".cursor/mcp.json",
        lambda server: _plain_entry(server, "url", "${{env:{}}}"),
    ),
    Host(
        "gemini-cli",
        "Gemini CLI",
        "json",
        ("mcpServers",),
        lambda: _home() / ".gemini" / "settings.json",
        ".gemini/settings.json",
        _gemini_entry,
        _gemini_add,
        note="Gemini CLI connects MCP servers and runs hooks only in trusted folders"
        " (~/.gemini/trustedFolders.json, or trust the folder when it asks).",
    ),
    Host(
        "windsurf",
        "Windsurf",
        "json",
        ("mcpServers",),
        lambda: _home() / ".codeium" / "windsurf" / "mcp_config.json",
        None,
        lambda server: _plain_entry(server, "serverUrl", "${{env:{}}}"),
    ),
    Host(
        "command-code",
        "Command Code",
        "json",
        ("mcpServers",),
        lambda: _home() / ".commandcode" / "mcp.json",
        ".mcp.json",
        _command_code_entry,
        _command_code_add,
    ),
    Host(
        "opencode",
        "OpenCode",
        "json",
        ("mcp",),
        lambda: _config_home() / "opencode" / "opencode.json",
        "opencode.json",
        _opencode_entry,
        document_extra={"$schema": "https://opencode.ai/config.json"},
        other_servers_keys=(("mcp", "servers"),),
        jsonc_twin=True,
    ),
    Host(
        "vscode",
        "VS Code",
        "json",
        ("servers",),
        lambda: _app_support("Code", "User") / "mcp.json",
        ".vscode/mcp.json",
        _vscode_entry,
        _vscode_add,
    ),
    Host(
        "claude-desktop",
        "Claude Desktop",
        "json",
        ("mcpServers",),
        lambda: _app_support("Claude") / "claude_desktop_config.json",
        None,
        lambda server: _plain_entry(server, "url", ""),
        http=False,
        remote_instead="add a remote server as a Connector in the app instead",
        note="Restart Claude Desktop after the change. It takes stdio servers only in this"
        " file; add a remote server as a Connector in the app instead.",
    ),
)
HOSTS_BY_NAME = {host.name: host for host in HOSTS}
