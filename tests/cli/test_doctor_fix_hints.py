"""doctor's hint for a broken or foreign entry names the command that replaces it where it is:
``--scope project`` for a project file (``--force`` when the entry is not Aletheia's), and
``claude mcp remove aletheia -s local`` for Claude Code's local scope, which ``install`` does
not write."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.cli.conftest import Invoke, Workspace, json_of

# Another MCP server: it answers as "toy" with one tool, and exits at the end of its input.
TOY_SERVER = """\
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    if message["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "toy", "version": "1"}}
    else:
        result = {"tools": [{"name": "ping", "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


def _check(run: Invoke, host: str, scope: str) -> dict[str, Any]:
    result = run("doctor", "--json")
    [check] = [c for c in json_of(result)["hosts"] if (c["host"], c["scope"]) == (host, scope)]
    return dict(check)


def _project_cursor_entry(workspace: Workspace, entry: dict[str, Any]) -> None:
    target = workspace.project / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")


def _hinted_command(detail: str) -> list[str]:
    """The ``aletheia ...`` words of the last `command` in a detail, without ``aletheia``."""
    words = shlex.split(detail.rsplit("`", 2)[1])
    assert words[0] == "aletheia"
    return words[1:]


def test_a_foreign_project_entry_of_the_wrong_shape_hints_the_project_scope_and_force(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    _project_cursor_entry(workspace, {"command": "/bin/echo", "args": "notalist"})
    check = _check(run, "cursor", "project")
    assert (check["status"], check["detail"]) == (
        "broken",
        'the entry\'s "args" is a string, not a list of strings; fix it, or run'
        " `aletheia install cursor --scope project --write --force`",
    )
    # the hint is the command that fixes it
    assert run(*_hinted_command(check["detail"])).exit_code == 0
    assert _check(run, "cursor", "project")["status"] == "ok"
    assert _check(run, "cursor", "user")["status"] == "not-configured"


def test_a_project_entry_of_ours_of_the_wrong_shape_needs_no_force(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    _project_cursor_entry(workspace, {"command": "aletheia-mcp", "args": "notalist"})
    check = _check(run, "cursor", "project")
    assert check["detail"].endswith("run `aletheia install cursor --scope project --write`")
    assert run(*_hinted_command(check["detail"])).exit_code == 0
    assert _check(run, "cursor", "project")["status"] == "ok"


def test_another_server_in_the_user_entry_hints_force(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    run("save", "a first memory")
    server = tmp_path / "toy.py"
    server.write_text(TOY_SERVER, encoding="utf-8")
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    entry = {"command": sys.executable, "args": [str(server)]}
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    check = _check(run, "cursor", "user")
    assert check["status"] == "broken"
    assert check["detail"].endswith(
        "fix the entry, or run `aletheia install cursor --write --force`"
    )
    assert run(*_hinted_command(check["detail"])).exit_code == 0
    assert _check(run, "cursor", "user")["status"] == "ok"


def test_another_server_in_claude_code_s_local_scope_hints_claude_mcp_remove(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    run("save", "a first memory")
    server = tmp_path / "toy.py"
    server.write_text(TOY_SERVER, encoding="utf-8")
    entry = {"type": "stdio", "command": sys.executable, "args": [str(server)]}
    document = {"projects": {str(workspace.project): {"mcpServers": {"aletheia": entry}}}}
    (workspace.home / ".claude.json").write_text(json.dumps(document), encoding="utf-8")
    check = _check(run, "claude-code", "local")
    assert (check["status"], check["detail"]) == (
        "broken",
        "the server answers but is not Aletheia: it calls itself 'toy' and lists 1 tool (ping);"
        f" fix the entry, or run `claude mcp remove aletheia -s local` in {workspace.project}",
    )


def test_a_local_entry_of_the_wrong_shape_hints_claude_mcp_remove(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    entry = {"type": "stdio", "command": "aletheia-mcp", "env": ["A=1"]}
    document = {"projects": {str(workspace.project): {"mcpServers": {"aletheia": entry}}}}
    (workspace.home / ".claude.json").write_text(json.dumps(document), encoding="utf-8")
    check = _check(run, "claude-code", "local")
    assert check["detail"] == (
        'the entry\'s "env" is an array, not an object; fix it, or run'
        f" `claude mcp remove aletheia -s local` in {workspace.project}"
    )


def test_a_user_entry_whose_program_is_missing_hints_install(
    run: Invoke, workspace: Workspace
) -> None:
    """The deleted-venv case: the entry is Aletheia's, so the hint needs no ``--force``."""
    run("save", "a first memory")
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    entry = {"command": "/old/venv/bin/aletheia-mcp"}
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    check = _check(run, "cursor", "user")
    assert (check["status"], check["detail"]) == (
        "broken",
        "/old/venv/bin/aletheia-mcp does not exist; fix the entry, or run"
        " `aletheia install cursor --write`",
    )
    assert "run `aletheia install cursor --write`" in run("doctor").stdout
    assert run(*_hinted_command(check["detail"])).exit_code == 0
    assert _check(run, "cursor", "user")["status"] == "ok"


def test_an_entry_that_does_not_answer_hints_install_with_force(
    run: Invoke, workspace: Workspace
) -> None:
    """``cat`` echoes the requests back and answers nothing; it is not Aletheia's entry."""
    run("save", "a first memory")
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    entry = {"command": "/bin/cat"}
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    check = _check(run, "cursor", "user")
    assert (check["status"], check["detail"]) == (
        "broken",
        "the server did not answer tools/list; fix the entry, or run"
        " `aletheia install cursor --write --force`",
    )
    assert run(*_hinted_command(check["detail"])).exit_code == 0
    assert _check(run, "cursor", "user")["status"] == "ok"
