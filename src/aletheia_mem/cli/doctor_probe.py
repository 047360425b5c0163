"""``aletheia doctor``'s check of one stdio entry: its server started as a host starts it,
initialized and asked for its tools, and told apart from another MCP server."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.cli.hosts import SERVER_NAME
from aletheia_mem.cli.server_probe import ServerRun, Step, run_server
from aletheia_mem.storage.store_file import as_doctor_tells_it
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


def host_env(env: dict[str, str]) -> dict[str, str]:
    """The environment a host starts a stdio server with: a minimal one, and the entry's."""
    base = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    return {**base, **env}


def probe_server(argv: list[str], env: dict[str, str], fix: str) -> tuple[str, str]:
    """Start the server as a host would (minimal env), initialize it and list its tools, each
    request once the one before is answered, then close its input; returns the check's status
    (ok, warning, broken) and what it found: whether it is Aletheia, with its tools, and for
    a broken entry ``fix``: how to replace it (``run `aletheia install ...```)."""
    steps: list[Step] = [
        (json.dumps(message) + "\n", _answers(message["id"]) if "id" in message else None)
        for message in _HANDSHAKE
    ]
    try:
        run = run_server(
            argv,
            host_env(env),
            steps,
            timeout=SERVER_CHECK_SECONDS,
            exit_grace=EXIT_GRACE_SECONDS,
        )
    except (OSError, ValueError) as error:
        return "broken", f"{_start_problem(argv[0], error)}; fix the entry, or {fix}"
    lines = run.stdout.splitlines()
    listed = next((reply for line in lines if (reply := _reply(line, 2)) is not None), None)
    if listed is None:
        return "broken", f"{_no_answer(run)}; fix the entry, or {fix}"
    started = next((reply for line in lines if (reply := _reply(line, 1)) is not None), {})
    status, answers = identify(started, listed, fix)
    if status == "ok" and run.returncode is None:  # hosts stop it themselves; but it lingers
        return "warning", (
            f"{answers}, but did not exit within {EXIT_GRACE_SECONDS} s of its input closing"
            " (a stdio server should exit at the end of its input)"
        )
    return status, answers


def _start_problem(program: str, error: OSError | ValueError) -> str:
    """Why ``program`` could not be started."""
    if isinstance(error, FileNotFoundError):
        return f"{program} does not exist"
    if isinstance(error, PermissionError):
        return f"{program} is not executable"
    if isinstance(error, OSError):  # not a program at all (an exec format error, say)
        return f"{program} cannot be started: {error.strerror or error}"
    return f"{program} cannot be started: {error}"  # a NUL in an argument or a variable


def identify(started: dict[str, Any], listed: dict[str, Any], fix: str) -> tuple[str, str]:
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
            f" ({_some(names)}); fix the entry, or {fix}"
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
        + f" (an older or newer server; {fix} from this install)"
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
        except (ValueError, RecursionError):  # not JSON, or nested too deep to read
            return False
        return isinstance(message, dict) and message.get("id") == request_id

    return answer


def _reply(line: str, request_id: int) -> dict[str, Any] | None:
    """The result of the reply to ``request_id`` in one line of output, else None."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
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
    said = as_doctor_tells_it((run.stderr.strip().splitlines() or [""])[-1])[:200]
    if run.returncode != 0:
        ended = f"the server exited with code {run.returncode} without answering"
    else:
        ended = "the server did not answer tools/list"
    return f"{ended}: {said}" if said else ended


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True
