"""``aletheia doctor``'s tools section: each host's config file read, its ``aletheia`` entry's
shape checked, and its server started as the host would and asked for its tools."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.cli.clients import ConfigFileError, get_entry, read_text
from aletheia_mem.cli.hosts import HOSTS, SERVER_NAME, Host, Scope
from aletheia_mem.cli.server_probe import ServerRun, Step, run_server
from aletheia_mem.tools.registry import TOOLS

SERVER_CHECK_SECONDS = 10
EXIT_GRACE_SECONDS = 5  # after its answer, for the server to exit once its input is closed
_HANDSHAKE: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "aletheia-doctor", "version": __version__},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


@dataclass(frozen=True)
class HostCheck:
    host: str
    scope: Scope
    path: str
    status: str  # not-configured, ok, warning, broken, remote, unreadable
    detail: str

    @property
    def problem(self) -> bool:
        return self.status in ("broken", "unreadable")


def kind_of(value: Any) -> str:
    """What a JSON or TOML value is, as a message names it: ``an array``, ``a string``."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return "a number"


def shape_problem(host: Host, document: Any) -> str | None:
    """What on the way to the servers' table is not an object (a file whose top level is an
    array, ``"mcpServers": "x"``), said so that the user knows the host cannot read it."""
    node, where = document, "the top level"
    for depth, key in enumerate(host.servers_key):
        if node is None:
            return None
        if not isinstance(node, dict):
            return f"{where} is {kind_of(node)}, not an object; {host.title} cannot read it"
        node, where = node.get(key), ".".join(host.servers_key[: depth + 1])
    if node is not None and not isinstance(node, dict):
        return f"{where} is {kind_of(node)}, not an object; {host.title} cannot read it"
    return None


def find_entry(host: Host, document: Any) -> Any:
    """The ``aletheia`` entry the host starts: in the first of its places that has one (as
    ``install`` finds it); None when there is none."""
    for servers in host.servers_keys():
        node = document
        for key in (*servers, SERVER_NAME):
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def _wrong(host: Host, field: str, value: Any, expected: str) -> str:
    return (
        f'the entry\'s "{field}" is {kind_of(value)}, not {expected}; fix it, or run'
        f" `aletheia install {host.name}`"
    )


def launch_spec(host: Host, entry: Any) -> tuple[list[str], dict[str, str]] | str:
    """The command line and env of a stdio entry, or why it cannot be started (a field of the
    wrong shape: a string where the host wants a list), or a description of a remote one."""
    if not isinstance(entry, dict):
        return f"the entry is {kind_of(entry)}, not an object"
    url = entry.get("url") or entry.get("serverUrl") or entry.get("httpUrl")
    if url:
        return f"remote {url}"
    env_key = "environment" if host.name == "opencode" else "env"
    env = entry.get(env_key) or {}
    if not isinstance(env, dict):
        return _wrong(host, env_key, env, "an object")
    command, args = entry.get("command"), entry.get("args") or []
    if host.name == "opencode":  # one list: the program and its arguments
        if command is not None and not isinstance(command, list):
            return _wrong(host, "command", command, "a list of strings")
        command, args = (str(command[0]), command[1:]) if command else (None, [])
    elif command is not None and not isinstance(command, str):
        return _wrong(host, "command", command, "a string")
    if not isinstance(args, list):
        return _wrong(host, "args", args, "a list of strings")
    if not command:
        return "the entry has no command"
    return [command, *(str(arg) for arg in args)], {str(k): str(v) for k, v in env.items()}


def probe_server(argv: list[str], env: dict[str, str], host: str) -> tuple[str, str]:
    """Start the server as a host would (minimal env), initialize it and list its tools, each
    request once the one before is answered, then close its input; returns the check's status
    (ok, warning, broken) and what it found: whether it is Aletheia, with its tools."""
    base = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    steps: list[Step] = [
        (json.dumps(message) + "\n", _answers(message["id"]) if "id" in message else None)
        for message in _HANDSHAKE
    ]
    try:
        run = run_server(
            argv,
            {**base, **env},
            steps,
            timeout=SERVER_CHECK_SECONDS,
            exit_grace=EXIT_GRACE_SECONDS,
        )
    except FileNotFoundError:
        return "broken", f"{argv[0]} does not exist"
    except PermissionError:
        return "broken", f"{argv[0]} is not executable"
    except OSError as error:  # not a program at all (an exec format error, say)
        return "broken", f"{argv[0]} cannot be started: {error.strerror or error}"
    lines = run.stdout.splitlines()
    listed = next((reply for line in lines if (reply := _reply(line, 2)) is not None), None)
    if listed is None:
        return "broken", _no_answer(run)
    started = next((reply for line in lines if (reply := _reply(line, 1)) is not None), {})
    status, answers = identify(started, listed, host)
    if status == "ok" and run.returncode is None:  # hosts stop it themselves; but it lingers
        return "warning", (
            f"{answers}, but did not exit within {EXIT_GRACE_SECONDS} s of its input closing"
            " (a stdio server should exit at the end of its input)"
        )
    return status, answers


def identify(started: dict[str, Any], listed: dict[str, Any], host: str) -> tuple[str, str]:
    """Whether the server that answered is Aletheia with this version's tools: its
    ``serverInfo`` (from the initialize result) and the names of the tools it listed."""
    info = started.get("serverInfo")
    info = info if isinstance(info, dict) else {}
    name, server_version = str(info.get("name", "")), str(info.get("version", "?"))
    tools = listed.get("tools")
    names = [
        str(tool.get("name"))
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, dict)
    ]
    count = f"{len(names)} tool{'' if len(names) == 1 else 's'}"
    if name != SERVER_NAME:
        called = f"calls itself {name[:60]!r}" if name else "gives no name"
        return "broken", (
            f"the server answers but is not Aletheia: it {called} and lists {count}"
            f" ({_some(names)}); fix the entry, or run `aletheia install {host} --write`"
        )
    expected = [tool.name for tool in TOOLS]
    missing = [tool for tool in expected if tool not in names]
    unknown = [tool for tool in names if tool not in expected]
    answers = f"Aletheia {server_version[:40]} answers ({count})"
    if not missing and not unknown:
        return "ok", answers
    differences = [
        *([f"missing {_some(missing)}"] if missing else []),
        *([f"unknown {_some(unknown)}"] if unknown else []),
    ]
    return "warning", (
        f"{answers}, not the {len(expected)} tools of Aletheia {__version__}: "
        + "; ".join(differences)
        + " (an older or newer server; run `aletheia install "
        + f"{host} --write` from this install)"
    )


def _some(names: list[str], shown: int = 4) -> str:
    """The first few names, and how many more: ``a, b, c, d and 3 more``."""
    if not names:
        return "none"
    text = ", ".join(name[:40] for name in names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _answers(request_id: int) -> Callable[[str], bool]:
    """Whether a line is the response (a result or an error) to ``request_id``."""

    def answer(line: str) -> bool:
        try:
            message = json.loads(line)
        except ValueError:
            return False
        return isinstance(message, dict) and message.get("id") == request_id

    return answer


def _reply(line: str, request_id: int) -> dict[str, Any] | None:
    """The result of the reply to ``request_id`` in one line of output, else None."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("id") == request_id:
        result = message.get("result")
        return result if isinstance(result, dict) else None
    return None


def _no_answer(run: ServerRun) -> str:
    """Why a server gave no list of tools: what it printed instead, or how it ended."""
    lines = run.stdout.splitlines()
    garbage = next((line.strip() for line in lines if line.strip() and not _is_json(line)), "")
    if garbage:
        return (
            f"the server printed something that is not MCP on stdout: {garbage[:80]!r}"
            " (a stdio server may write only JSON-RPC there)"
        )
    if run.returncode is None:
        within = f"within {SERVER_CHECK_SECONDS} s"
        if any(_reply(line, 1) is not None for line in lines):
            return f"the server answered initialize but not tools/list {within}"
        return f"no answer {within}"
    said = (run.stderr.strip().splitlines() or [""])[-1][:200]
    if run.returncode != 0:
        ended = f"the server exited with code {run.returncode} without answering"
    else:
        ended = "the server did not answer tools/list"
    return f"{ended}: {said}" if said else ended


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def check_host(host: Host, scope: Scope, path: Path) -> HostCheck:
    def result(status: str, detail: str) -> HostCheck:
        return HostCheck(host.name, scope, str(path), status, detail)

    if not path.exists():
        return result("not-configured", "no config file")
    try:
        document = get_entry(read_text(path), host.fmt, ())
    except ConfigFileError as error:
        return result("unreadable", str(error))
    shape = shape_problem(host, document)
    if shape is not None:
        return result("unreadable", shape)
    entry = find_entry(host, document)
    if entry is None:
        return result("not-configured", "no aletheia entry")
    spec = launch_spec(host, entry)
    if isinstance(spec, str):
        return result("remote" if spec.startswith("remote") else "broken", spec)
    return result(*probe_server(*spec, host.name))


def check_hosts(cwd: Path) -> list[HostCheck]:
    checks = []
    for host in HOSTS:
        checks.append(check_host(host, "user", host.config_path("user", cwd)))
        if host.project_file is not None:
            project_path = host.config_path("project", cwd)
            if project_path.exists():
                checks.append(check_host(host, "project", project_path))
    return checks
