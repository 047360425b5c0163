"""The real host CLIs (pinned in package.json here) see Aletheia after ``aletheia install``.

Each test runs in an isolated HOME with a git repository as the working directory, writes the
config with the real ``aletheia`` CLI and asks the host's own ``mcp list``; the hosts start the
real ``aletheia-mcp`` from this venv. No host makes a model call (Gemini's one session runs on
its own ``--fake-responses``). Without ``npm install`` in this folder the tests skip, except
under CI, where they must run.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.storage.sqlite import SqliteStore

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
BIN = HERE / "node_modules" / ".bin"
ALETHEIA = str(Path(sys.executable).parent / "aletheia")
PINNED = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
CLIS = {"claude": "@anthropic-ai/claude-code", "opencode": "opencode-ai"}
CLIS |= {"gemini": "@google/gemini-cli", "codex": "@openai/codex"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
HOST_TIMEOUT = 90


def _require(binary: str) -> Path:
    path = BIN / binary
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CLIS[binary]} is not installed in tests/hosts (run npm install there)")
        pytest.skip(f"{CLIS[binary]} not installed: run `npm install` in tests/hosts")
    return path


@dataclass
class Machine:
    home: Path
    project: Path
    env: dict[str, str]

    def aletheia(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run([ALETHEIA, *args])

    def run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            argv,
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=HOST_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        result.stdout = ANSI.sub("", result.stdout)
        result.stderr = ANSI.sub("", result.stderr)
        return result


@pytest.fixture
def machine(tmp_path: Path) -> Machine:
    home = tmp_path / "home"
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return Machine(home, project, env)


def _installed(machine: Machine, host: str, *extra: str) -> None:
    result = machine.aletheia("install", host, "--write", *extra)
    assert result.returncode == 0, result.stderr
    assert "Added the aletheia entry" in result.stdout


def test_pinned_versions_are_the_ones_installed() -> None:
    for binary, package in CLIS.items():
        _require(binary)
        meta = HERE / "node_modules" / package / "package.json"
        assert json.loads(meta.read_text())["version"] == PINNED[package]


def test_claude_code_lists_aletheia_as_connected(machine: Machine) -> None:
    claude = str(_require("claude"))
    _installed(machine, "claude-code")
    result = machine.run([claude, "mcp", "list"])
    assert result.returncode == 0, result.stderr
    assert re.search(r"^aletheia: \S+ \S+aletheia-mcp - ✔ Connected$", result.stdout, re.M)


def test_claude_code_still_connects_with_the_capture_hooks_installed(machine: Machine) -> None:
    claude = str(_require("claude"))
    result = machine.aletheia("install", "claude-code", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    listed = machine.run([claude, "mcp", "list"])
    assert "aletheia:" in listed.stdout and "✔ Connected" in listed.stdout
    assert "invalid" not in (listed.stdout + listed.stderr).lower()


def test_claude_code_project_scope_is_pending_approval_in_mcp_json(machine: Machine) -> None:
    claude = str(_require("claude"))
    result = machine.aletheia("install", "claude-code", "--scope", "project", "--write")
    assert result.returncode == 0, result.stderr
    listed = machine.run([claude, "mcp", "get", "aletheia"])
    assert "Scope: Project config (shared via .mcp.json)" in listed.stdout


def test_opencode_lists_aletheia_as_connected(machine: Machine) -> None:
    opencode = str(_require("opencode"))
    _installed(machine, "opencode")
    result = machine.run([opencode, "mcp", "list"])
    assert result.returncode == 0, result.stderr
    assert re.search(r"✓ aletheia\s+connected", result.stdout)


def test_gemini_lists_aletheia_as_connected_in_a_trusted_folder(machine: Machine) -> None:
    gemini = str(_require("gemini"))
    _installed(machine, "gemini-cli")
    untrusted = machine.run([gemini, "mcp", "list"])
    assert "aletheia" in untrusted.stdout + untrusted.stderr
    assert "Connected" not in untrusted.stdout + untrusted.stderr
    trusted = machine.home / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(machine.project): "TRUST_FOLDER"}), encoding="utf-8")
    result = machine.run([gemini, "mcp", "list"])
    assert result.returncode == 0, result.stderr
    listing = result.stdout + result.stderr  # gemini prints the list on stderr
    assert re.search(r"✓ aletheia: \S+ \S+aletheia-mcp \(stdio\) - Connected", listing)


def test_codex_lists_aletheia(machine: Machine) -> None:
    codex = str(_require("codex"))
    _installed(machine, "codex")
    result = machine.run([codex, "mcp", "list", "--json"])
    assert result.returncode == 0, result.stderr
    [server] = [s for s in json.loads(result.stdout) if s["name"] == "aletheia"]
    assert server["enabled"] is True
    transport = server["transport"]
    assert Path(transport["command"]).parent == Path(sys.executable).parent  # this venv
    assert transport["args"] == [str(Path(sys.executable).parent / "aletheia-mcp")]
    assert transport["env"]["ALETHEIA_TOOL"] == "codex"


@pytest.mark.parametrize(
    ("host", "binary"), [("claude-code", "claude"), ("gemini-cli", "gemini"), ("codex", "codex")]
)
def test_the_printed_add_command_writes_what_install_would(
    machine: Machine, host: str, binary: str
) -> None:
    _require(binary)
    connect = machine.aletheia("connect", host, "--json")
    command = json.loads(connect.stdout)["command"]
    added = machine.run(shlex.split(command))
    assert added.returncode == 0, added.stderr
    again = machine.aletheia("install", host, "--write")
    assert again.returncode == 0, again.stderr
    assert "already has the aletheia entry; nothing to change." in again.stdout


def _fake_model_turn(part: dict[str, object]) -> str:
    candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
    return json.dumps(
        {"method": "generateContentStream", "response": [{"candidates": [candidate]}]}
    )


def test_gemini_runs_the_capture_hooks_in_a_session_without_a_model(machine: Machine) -> None:
    """A real non-interactive Gemini session (its model replaced by the bundle's own
    ``--fake-responses``, which writes then edits a file) runs every hook install wrote: the
    prompt is recorded without the session-start context Gemini puts before it, each file
    change is an observation and the session's end a summary, all as gemini-cli."""
    gemini = str(_require("gemini"))
    result = machine.aletheia("install", "gemini-cli", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    trusted = machine.home / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(machine.project): "TRUST_FOLDER"}), encoding="utf-8")
    cart = str(machine.project / "cart.py")
    edit = {"file_path": cart, "instruction": "Start at one.", "old_string": "total = 0"}
    turns = [
        {
            "functionCall": {
                "name": "write_file",
                "args": {"file_path": cart, "content": "total = 0"},
            }
        },
        {"functionCall": {"name": "replace", "args": {**edit, "new_string": "total = 1"}}},
        {"text": "Done."},
    ]
    fake = machine.home / "fake-responses.jsonl"
    fake.write_text("\n".join(_fake_model_turn(turn) for turn in turns) + "\n", encoding="utf-8")
    machine.env["GEMINI_API_KEY"] = "not-used"
    argv = [gemini, "-m", "gemini-2.5-flash", "--yolo", "--fake-responses", str(fake)]
    session = machine.run([*argv, "-p", "start the cart at one"])
    assert session.returncode == 0, session.stderr
    assert (machine.project / "cart.py").read_text(encoding="utf-8") == "total = 1"
    store = SqliteStore(machine.home / ".aletheia" / "aletheia.db")
    try:
        requests = [(r.text, r.tool) for r in store.recent_requests("shop", 10)]
        query = MemoryQuery(projects=("shop",), order="date_asc", limit=10)
        memories = [(m.kind, m.title, m.tool) for m in store.search_memories(query, now=0)]
    finally:
        store.close()
    assert requests == [("start the cart at one", "gemini-cli")]
    assert sorted(memories) == [
        ("observation", "Edited cart.py", "gemini-cli"),
        ("observation", "Wrote cart.py", "gemini-cli"),
        ("summary", "Session: start the cart at one", "gemini-cli"),
    ]
