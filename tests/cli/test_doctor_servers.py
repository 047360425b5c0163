"""doctor starts each configured server as a host would: it ends the server and every process the
server started (a launcher that forks leaves nothing behind), and tells a server that answers
but does not exit at the end of its input from one that does not answer."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.cli import doctor_probe
from aletheia_mem.tools.registry import TOOLS
from tests.cli.conftest import Invoke, Workspace, json_of

# A stdio server: ``server.py PIDFILE MODE``. With a PIDFILE it first starts a child that
# sleeps (holding its stdout, as ``sleep 1000 &`` in a shell does) and writes the child's pid
# there. It calls itself Aletheia and lists Aletheia's tools (TOOL_NAMES, filled in), except in
# mode toy. MODE: exits (answers, exits at the end of input), lingers (answers, keeps running),
# half (answers initialize only, keeps running), silent (answers nothing, keeps running), toy
# (another MCP server of one tool, exits at the end of input), slow (answers each request
# 0.3 s after it came, but exits as soon as its input ends, answered or not).
FAKE_SERVER = """\
import json, os, queue, subprocess, sys, threading, time
TOOL_NAMES = {tool_names}
pid_file, mode = sys.argv[1], sys.argv[2]
if pid_file != "-":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"])
    with open(pid_file + ".tmp", "w") as out:
        out.write(str(child.pid))
    os.replace(pid_file + ".tmp", pid_file)
name, names = ("toy", ["ping"]) if mode == "toy" else ("aletheia", TOOL_NAMES)
tools = [{{"name": tool, "inputSchema": {{"type": "object"}}}} for tool in names]
messages = queue.Queue()
def read():
    for line in sys.stdin:
        messages.put(json.loads(line))
    if mode == "slow":
        os._exit(0)
    messages.put(None)
threading.Thread(target=read, daemon=True).start()
while (message := messages.get()) is not None:
    if mode == "silent" or "id" not in message:
        continue
    if mode == "slow":
        time.sleep(0.3)
    if message["method"] == "initialize":
        result = {{"protocolVersion": "2025-11-25", "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": name, "version": "9.9"}}}}
    elif mode == "half":
        continue
    else:
        result = {{"tools": tools}}
    print(json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": result}}), flush=True)
if mode not in ("exits", "toy"):
    time.sleep(1000)
"""
ANSWERS = "Aletheia 9.9 answers (13 tools)"
FORCE_HINT = "; fix the entry, or run `aletheia install cursor --write --force`"


@pytest.fixture
def server(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    names = [tool.name for tool in TOOLS]
    path.write_text(FAKE_SERVER.format(tool_names=repr(names)), encoding="utf-8")
    return path


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    """Where the fake server writes its child's pid; a child left running is ended after."""
    path = tmp_path / "child.pid"
    yield path
    if path.exists() and not _gone(int(path.read_text(encoding="utf-8"))):
        os.kill(int(path.read_text(encoding="utf-8")), signal.SIGKILL)


def _gone(pid: int) -> bool:
    """Whether no process has ``pid`` (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _ended(pid: int) -> bool:
    """Whether the process is gone, given up to 5 s for the kernel to finish a kill."""
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _gone(pid)


def _configure(workspace: Workspace, command: str, *args: str) -> None:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    entry = {"command": command, "args": list(args)}
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")


def _cursor_check(run: Invoke) -> tuple[int, dict[str, Any]]:
    result = run("doctor", "--json")
    [check] = [c for c in json_of(result)["hosts"] if c["host"] == "cursor"]
    return result.exit_code, check


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
@pytest.mark.parametrize("launcher", ["forking-server", "shell-launcher"])
def test_a_server_s_child_is_ended_when_the_server_is_done(
    run: Invoke, workspace: Workspace, server: Path, pid_file: Path, launcher: str
) -> None:
    run("save", "a first memory")
    if launcher == "forking-server":
        _configure(workspace, sys.executable, str(server), str(pid_file), "exits")
    else:  # sh -c 'sleep 1000 & exec python server.py'
        line = (
            f"sleep 1000 & echo $! > {shlex.quote(str(pid_file))};"
            f" exec {shlex.quote(sys.executable)} {shlex.quote(str(server))} - exits"
        )
        _configure(workspace, "sh", "-c", line)
    code, check = _cursor_check(run)
    assert (check["status"], check["detail"]) == ("ok", ANSWERS)
    assert code == 0
    assert _ended(int(pid_file.read_text(encoding="utf-8")))


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_a_server_that_never_answers_is_ended_with_its_child(
    run: Invoke,
    workspace: Workspace,
    server: Path,
    pid_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(doctor_probe, "SERVER_CHECK_SECONDS", 3)
    run("save", "a first memory")
    _configure(workspace, sys.executable, str(server), str(pid_file), "silent")
    code, check = _cursor_check(run)
    assert (check["status"], check["detail"]) == ("broken", "no answer within 3 s" + FORCE_HINT)
    assert code == 1
    assert _ended(int(pid_file.read_text(encoding="utf-8")))


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
def test_a_server_that_answers_but_outlives_its_input_is_a_warning_not_no_answer(
    run: Invoke,
    workspace: Workspace,
    server: Path,
    pid_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(doctor_probe, "EXIT_GRACE_SECONDS", 1)
    run("save", "a first memory")
    _configure(workspace, sys.executable, str(server), str(pid_file), "lingers")
    result = run("doctor")
    line = next(text for text in result.stdout.splitlines() if text.strip().startswith("cursor"))
    assert result.exit_code == 0  # a host stops it itself: it works, with a warning
    assert "WARNING" in line
    assert (
        f"{ANSWERS}, but did not exit within 1 s of its input closing (a stdio"
        " server should exit at the end of its input)" in line
    )
    assert _ended(int(pid_file.read_text(encoding="utf-8")))
    code, check = _cursor_check(run)
    assert (code, check["status"]) == (0, "warning")
    assert check["detail"].startswith(f"{ANSWERS}, but did not exit within 1 s")


def test_a_server_that_answers_initialize_only_says_so(
    run: Invoke, workspace: Workspace, server: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(doctor_probe, "SERVER_CHECK_SECONDS", 2)
    run("save", "a first memory")
    _configure(workspace, sys.executable, str(server), "-", "half")
    code, check = _cursor_check(run)
    assert code == 1
    assert (check["status"], check["detail"]) == (
        "broken",
        "the server answered initialize but not tools/list within 2 s" + FORCE_HINT,
    )


def test_another_mcp_server_in_the_aletheia_entry_is_named_not_ok(
    run: Invoke, workspace: Workspace, server: Path
) -> None:
    run("save", "a first memory")
    _configure(workspace, sys.executable, str(server), "-", "toy")
    code, check = _cursor_check(run)
    assert code == 1
    assert (check["status"], check["detail"]) == (
        "broken",
        "the server answers but is not Aletheia: it calls itself 'toy' and lists 1 tool (ping);"
        " fix the entry, or run `aletheia install cursor --write --force`",
    )


def test_a_server_that_exits_at_the_end_of_its_input_is_asked_one_request_at_a_time(
    run: Invoke, workspace: Workspace, server: Path
) -> None:
    """Like a host, doctor sends each request once the one before is answered, and closes the
    server's input only then: a server that ends at the end of its input, answered or not,
    works with hosts and so with doctor."""
    run("save", "a first memory")
    _configure(workspace, sys.executable, str(server), "-", "slow")
    code, check = _cursor_check(run)
    assert (code, check["status"], check["detail"]) == (0, "ok", ANSWERS)
