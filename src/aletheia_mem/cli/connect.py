"""``aletheia connect <host>``: print the host's add command and config entry (a dry run)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from aletheia_mem.cli.clients import set_entry
from aletheia_mem.cli.common import (
    cli_settings,
    echo,
    emit_json,
    handles_errors,
    json_option,
    style,
    table,
)
from aletheia_mem.cli.hosts import (
    HOSTS,
    HOSTS_BY_NAME,
    Host,
    Scope,
    Server,
    http_server,
    stdio_server,
)
from aletheia_mem.cli.launcher import temporary_launcher
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.http_urls import checked_http_url

HOST_NAMES = [host.name for host in HOSTS]
F = TypeVar("F", bound=Callable[..., Any])
# A name every shell and host expands as an environment variable.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def host_argument(required: bool = True) -> Callable[[F], F]:
    return click.argument(
        "host", required=required, type=click.Choice(HOST_NAMES, case_sensitive=False)
    )


def scope_option(function: F) -> F:
    return click.option(
        "--scope",
        type=click.Choice(["user", "project"]),
        default="user",
        show_default=True,
        help="user: your own config for every project; project: a file in this repository.",
    )(function)


def remote_options(function: F) -> F:
    function = click.option(
        "--token-env",
        metavar="NAME",
        help="With --http: the environment variable that holds the bearer token.",
    )(function)
    return click.option(
        "--http",
        "url",
        metavar="URL",
        help="Connect to a remote /mcp endpoint (hub or main server) instead of stdio.",
    )(function)


def server_for(host: Host, url: str | None, token_env: str | None) -> Server:
    """The stdio server of this installation, or the remote endpoint.

    Raises:
        InvalidInputError: ``--token-env`` without ``--http``, a URL that is not HTTP, or a
            host that takes no remote server.
    """
    if token_env and not url:
        raise InvalidInputError("--token-env needs --http URL.")
    if url:
        if not host.http:
            instead = f"; {host.remote_instead}" if host.remote_instead else ""
            raise InvalidInputError(
                f"{host.title} takes stdio servers only in its config file{instead}."
            )
        if not url.strip().lower().startswith(("http://", "https://")):
            raise InvalidInputError("--http needs an http:// or https:// URL.")
        url = checked_http_url(url, "--http")
        if token_env is not None and not _ENV_NAME.fullmatch(token_env):
            raise InvalidInputError(
                "--token-env must name an environment variable: letters, digits and _,"
                " not starting with a digit."
            )
        return http_server(url, token_env)
    return stdio_server(cli_settings(), host.name)


def check_scope(host: Host, scope: Scope) -> None:
    """Raises InvalidInputError when ``host`` has no config file of that scope."""
    if scope == "project" and host.project_file is None:
        raise InvalidInputError(f"{host.title} has no project-scope config file; use --scope user.")


def launcher_note(url: str | None) -> str | None:
    """Why a stdio entry starts uvx or pipx, when this runs from their run-once cache."""
    launcher = None if url else temporary_launcher()
    if launcher is None:
        return None
    command = " ".join(launcher.command("mcp"))
    return (
        f"Aletheia runs from {launcher.kind}'s cache here, which a cache clean deletes: the entry"
        f" starts {command} instead of a path into it."
    )


def _inline(value: Any) -> str:
    """``{ "type": "stdio", "args": [...] }``: the reference's one-line entry style."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        body = ", ".join(
            f"{json.dumps(k, ensure_ascii=False)}: {_inline(v)}" for k, v in value.items()
        )
        return "{ " + body + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _pretty(value: Any, depth: int, inline_at: int, indent: str = "") -> str:
    if depth == inline_at or not isinstance(value, dict) or not value:
        return _inline(value)
    inner = indent + "  "
    members = [
        f"{inner}{json.dumps(k, ensure_ascii=False)}: {_pretty(v, depth + 1, inline_at, inner)}"
        for k, v in value.items()
    ]
    return "{\n" + ",\n".join(members) + "\n" + indent + "}"


def render_document(host: Host, server: Server) -> str:
    """The config snippet as the host's file would hold it."""
    if host.fmt == "toml":
        return set_entry("", "toml", host.entry_path(), host.entry(server)).rstrip("\n")
    return _pretty(host.document(server), 0, len(host.entry_path()))


def install_command(host: Host, server: Server, scope: Scope) -> str:
    """The ``aletheia install`` that writes this same entry (the remote one too)."""
    words = ["aletheia", "install", host.name, "--write"]
    if scope == "project":
        words += ["--scope", "project"]
    if server.url:
        words += ["--http", server.url]
        if server.token_env:
            words += ["--token-env", server.token_env]
    return shlex.join(words)


def connect_text(host: Host, server: Server, scope: Scope, path: Path) -> str:
    command = host.add_command(server, scope) if host.add_command else None
    lines = []
    if command:
        lines += ["Run this:", f"  {command}", "", render_document(host, server), ""]
        lines.append(f"or add the entry above to {path}")
    else:
        lines += [f"Add this to {path}:", "", render_document(host, server), ""]
        lines.append("or let Aletheia merge it")
    lines[-1] += " with: " + install_command(host, server, scope)
    if host.note_for(scope):
        lines.append(host.note_for(scope))
    return "\n".join(lines)


def _host_table() -> str:
    rows = [[h.name, h.title, str(h.user_file()), h.project_file or "-"] for h in HOSTS]
    return table(["host", "tool", "user config", "project config"], rows)


@click.command()
@host_argument(required=False)
@scope_option
@remote_options
@json_option
@handles_errors
def connect(
    host: str | None, scope: Scope, url: str | None, token_env: str | None, as_json: bool
) -> None:
    """Print how to connect a coding tool to Aletheia (changes nothing).

    Shows the tool's own add command where it has one and the config entry, with absolute
    paths to this Python and aletheia-mcp (uvx aletheia-mem mcp when run from uvx's cache,
    pipx's when from pipx run) and the environment the server needs. Without HOST it lists
    the tools it knows.
    """
    if host is None:
        if as_json:
            emit_json([{"host": h.name, "title": h.title} for h in HOSTS])
            return
        echo(_host_table())
        echo("\nRun " + style("aletheia connect <host>", bold=True) + " for one of them.")
        return
    chosen = HOSTS_BY_NAME[host.lower()]
    check_scope(chosen, scope)
    server = server_for(chosen, url, token_env)
    path = chosen.config_path(scope, Path.cwd())
    if as_json:
        emit_json(
            {
                "host": chosen.name,
                "scope": scope,
                "path": str(path),
                "format": chosen.fmt,
                "command": chosen.add_command(server, scope) if chosen.add_command else None,
                "entry": chosen.entry(server),
                "document": render_document(chosen, server),
                "note": launcher_note(url),
            }
        )
        return
    echo(connect_text(chosen, server, scope, path))
    note = launcher_note(url)
    if note:
        echo(note)
