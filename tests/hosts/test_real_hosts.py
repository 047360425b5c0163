"""The real host CLIs (pinned in package.json here) see Aletheia after ``aletheia install``.

Each test runs in an isolated HOME with a git repository as the working directory, writes the
config with the real ``aletheia`` CLI and asks the host's own ``mcp list``; the hosts start the
real ``aletheia-mcp`` from this venv. No host makes a model call (Gemini's one session runs on
its own ``--fake-responses``, Claude Code's, Codex's and OpenCode's on a local server
answering as its model).
Without ``npm install`` in this folder the tests skip, except under CI, where they must run.
"""

from __future__ import annotations

import http.server
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
from tests.threaded_server import served

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
    if os.environ.get("PYTHONPATH"):  # a worktree's sources (PYTHONPATH=src), not the venv's
        env["PYTHONPATH"] = os.path.abspath(os.environ["PYTHONPATH"])
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


def test_opencode_starts_a_newer_shaped_entry_beside_the_one_install_adds(
    machine: Machine,
) -> None:
    """A file with a server of OpenCode's newer shape (``mcp.servers.<name>``) gets
    ``mcp.aletheia`` (the reference's shape) beside it: OpenCode starts both."""
    opencode = str(_require("opencode"))
    config = machine.home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True)
    newer = {"type": "local", "command": [ALETHEIA + "-mcp"]}
    config.write_text(json.dumps({"mcp": {"servers": {"other": newer}}}), encoding="utf-8")
    _installed(machine, "opencode")
    written = json.loads(config.read_text(encoding="utf-8"))["mcp"]
    assert written["servers"] == {"other": newer} and written["aletheia"]["enabled"] is True
    result = machine.run([opencode, "mcp", "list"])
    assert result.returncode == 0, result.stderr
    assert re.search(r"✓ other\s+connected", result.stdout), result.stdout
    assert re.search(r"✓ aletheia\s+connected", result.stdout), result.stdout


def test_opencode_starts_the_entry_install_adds_to_its_jsonc_file(machine: Machine) -> None:
    """With only ``opencode.jsonc``, install writes into it (comments and trailing commas
    kept) and makes no ``opencode.json``; OpenCode starts the entry from it."""
    opencode = str(_require("opencode"))
    folder = machine.home / ".config" / "opencode"
    folder.mkdir(parents=True)
    original = '{\n  // mine\n  "$schema": "https://opencode.ai/config.json",\n}\n'
    (folder / "opencode.jsonc").write_text(original, encoding="utf-8")
    _installed(machine, "opencode")
    assert not (folder / "opencode.json").exists()
    text = (folder / "opencode.jsonc").read_text(encoding="utf-8")
    assert text.startswith('{\n  // mine\n  "$schema": "https://opencode.ai/config.json",\n')
    listed = machine.run([opencode, "mcp", "list"])
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"✓ aletheia\s+connected", listed.stdout), listed.stdout


def test_opencode_starts_the_entry_an_earlier_release_wrote_once_updated_in_place(
    machine: Machine,
) -> None:
    """Release 0.4.1 wrote ``mcp.servers.aletheia`` without ``enabled``; install brings it up
    to date where it is, ``enabled`` added, and OpenCode still starts it."""
    opencode = str(_require("opencode"))
    _installed(machine, "opencode")
    config = machine.home / ".config" / "opencode" / "opencode.json"
    document = json.loads(config.read_text(encoding="utf-8"))
    entry = document["mcp"].pop("aletheia")
    document["mcp"]["servers"] = {"aletheia": {k: v for k, v in entry.items() if k != "enabled"}}
    config.write_text(json.dumps(document), encoding="utf-8")
    result = machine.aletheia("install", "opencode", "--write")
    assert result.returncode == 0, result.stderr
    assert json.loads(config.read_text(encoding="utf-8"))["mcp"] == {"servers": {"aletheia": entry}}
    listed = machine.run([opencode, "mcp", "list"])
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"✓ aletheia\s+connected", listed.stdout), listed.stdout


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


def _reply(
    handler: http.server.BaseHTTPRequestHandler, text: str, kind: str = "text/event-stream"
) -> None:
    data = text.encode()
    handler.send_response(200)
    handler.send_header("content-type", kind)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class _FakeResponses(http.server.BaseHTTPRequestHandler):
    """The Responses API as Codex streams it: the first turn calls apply_patch with the
    server's patch, every later one answers "Done."; each request body is kept."""

    server: _FakeModel

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        self.server.requests.append(body)
        kinds = {tool.get("name"): tool.get("type") for tool in body.get("tools", [])}
        item: dict[str, object] = {
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        }
        if len(self.server.requests) == 1 and kinds.get("apply_patch") == "custom":
            item = {"type": "custom_tool_call", "call_id": "call_1", "name": "apply_patch"}
            item["input"] = self.server.patch
        elif len(self.server.requests) == 1:
            item = {"type": "function_call", "call_id": "call_1", "name": "apply_patch"}
            item["arguments"] = json.dumps({"input": self.server.patch})
        answer = f"resp_{len(self.server.requests)}"
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        events = [
            {"type": "response.created", "response": {"id": answer}},
            {"type": "response.output_item.done", "item": {"id": "item_1", **item}},
            {"type": "response.completed", "response": {"id": answer, "usage": usage}},
        ]
        _reply(self, "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))

    def log_message(self, format: str, *args: object) -> None:
        pass


class _FakeModel(http.server.ThreadingHTTPServer):
    def __init__(self, patch: str) -> None:
        super().__init__(("127.0.0.1", 0), _FakeResponses)
        self.patch = patch
        self.requests: list[dict[str, object]] = []


def test_codex_runs_the_capture_hooks_in_a_session_without_a_model(machine: Machine) -> None:
    """A real ``codex exec`` session (its model a local server that answers with one apply_patch
    call updating, adding and deleting a file) runs every hook install wrote: the context reaches
    the model, the prompt is recorded, each file of the patch is an observation and the
    session's end a summary, all as codex. The hooks run here without the trust a user gives
    them in Codex's /hooks (--dangerously-bypass-hook-trust)."""
    codex = str(_require("codex"))
    result = machine.aletheia("install", "codex", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    (machine.project / "cart.py").write_text("total = 0\n", encoding="utf-8")
    (machine.project / "old.py").write_text("gone = True\n", encoding="utf-8")
    patch = (
        "*** Begin Patch\n*** Update File: cart.py\n@@\n-total = 0\n+total = 1\n"
        "*** Add File: tax.py\n+rate = 0\n*** Delete File: old.py\n*** End Patch\n"
    )
    model = _FakeModel(patch)
    with served(model) as url:
        config = machine.home / ".codex" / "config.toml"
        provider = (
            'model = "gpt-5.5"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{url}/v1"\n'
            'wire_api = "responses"\nenv_key = "FAKE_MODEL_KEY"\n\n'
        )
        config.write_text(provider + config.read_text(encoding="utf-8"), encoding="utf-8")
        machine.env["FAKE_MODEL_KEY"] = "not-used"
        argv = [codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check"]
        argv += ["--dangerously-bypass-approvals-and-sandbox", "start the cart at one"]
        session = machine.run(argv)
    assert session.returncode == 0, session.stderr
    assert (machine.project / "cart.py").read_text(encoding="utf-8") == "total = 1\n"
    assert not (machine.project / "old.py").exists()
    assert "<aletheia-memory>" in json.dumps(model.requests[0])  # SessionStart's context
    store = SqliteStore(machine.home / ".aletheia" / "aletheia.db")
    try:
        requests = [(r.text, r.tool) for r in store.recent_requests("shop", 10)]
        query = MemoryQuery(projects=("shop",), order="date_asc", limit=10)
        memories = [(m.kind, m.title, m.tool) for m in store.search_memories(query, now=0)]
    finally:
        store.close()
    assert requests == [("start the cart at one", "codex")]
    assert sorted(memories) == [
        ("observation", "Deleted old.py", "codex"),
        ("observation", "Edited cart.py", "codex"),
        ("observation", "Wrote tax.py", "codex"),
        ("summary", "Session: start the cart at one", "codex"),
    ]


class _FakeChat(http.server.BaseHTTPRequestHandler):
    """The Chat Completions API as OpenCode streams it: a turn with no tool result yet calls
    write (a new file), one with a result edit (an existing file), a later one (and a request
    without tools: the title) answers "Done."; each request body is kept."""

    server: _FakeChatModel

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        self.server.requests.append(body)
        tools = {tool["function"]["name"] for tool in body.get("tools", [])}
        results = sum(message.get("role") == "tool" for message in body.get("messages", []))
        delta: dict[str, object] = {"role": "assistant", "content": "Done."}
        finish = "stop"
        if {"write", "edit"} <= tools and results < len(self.server.calls):
            name, args = self.server.calls[results]
            call = {"name": name, "arguments": json.dumps(args)}
            delta = {"role": "assistant", "tool_calls": [{"index": 0, "id": f"call_{results}"}]}
            delta["tool_calls"][0] |= {"type": "function", "function": call}  # type: ignore[index]
            finish = "tool_calls"
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        chunk = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake"}
        chunks = [
            {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**chunk, "choices": [], "usage": usage},
        ]
        _reply(self, "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n")

    def log_message(self, format: str, *args: object) -> None:
        pass


class _FakeChatModel(http.server.ThreadingHTTPServer):
    def __init__(self, calls: list[tuple[str, dict[str, object]]]) -> None:
        super().__init__(("127.0.0.1", 0), _FakeChat)
        self.calls = calls
        self.requests: list[dict[str, object]] = []


def test_opencode_runs_the_capture_plugin_in_a_session_without_a_model(machine: Machine) -> None:
    """A real ``opencode run`` (its model a local OpenAI-compatible server that calls write,
    then edit, then answers) loads the plugin install wrote: the context reaches the model's
    system prompt, the prompt is recorded, each file change is an observation and the end of
    the session (its idle) a summary, all as opencode."""
    opencode = str(_require("opencode"))
    result = machine.aletheia("install", "opencode", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    cart = machine.project / "cart.py"
    cart.write_text("total = 0\n", encoding="utf-8")
    calls: list[tuple[str, dict[str, object]]] = [
        ("write", {"filePath": str(machine.project / "tax.py"), "content": "rate = 0\n"}),
        ("edit", {"filePath": str(cart), "oldString": "total = 0", "newString": "total = 1"}),
    ]
    model = _FakeChatModel(calls)
    with served(model) as url:
        path = machine.home / ".config" / "opencode" / "opencode.json"
        config = json.loads(path.read_text(encoding="utf-8"))
        config["provider"] = {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "fake",
                "options": {
                    "baseURL": f"{url}/v1",
                    "apiKey": "{env:FAKE_MODEL_KEY}",
                },
                "models": {"fake-model": {"name": "fake", "tool_call": True}},
            }
        }
        path.write_text(json.dumps(config, indent=2), encoding="utf-8")
        machine.env |= {
            "FAKE_MODEL_KEY": "not-used",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
        }
        argv = [opencode, "run", "--print-logs", "-m", "fake/fake-model"]
        session = machine.run([*argv, "start", "the", "cart", "at", "one"])
    assert session.returncode == 0, session.stderr
    assert "Done." in session.stdout
    assert (machine.project / "tax.py").read_text(encoding="utf-8") == "rate = 0\n"
    assert cart.read_text(encoding="utf-8") == "total = 1\n"
    asked = [body for body in model.requests if body.get("tools")]
    system = [m for m in asked[0]["messages"] if m["role"] == "system"]  # type: ignore[index]
    assert "<aletheia-memory>" in json.dumps(system)  # added to the system prompt
    store = SqliteStore(machine.home / ".aletheia" / "aletheia.db")
    try:
        requests = [(r.text, r.tool) for r in store.recent_requests("shop", 10)]
        query = MemoryQuery(projects=("shop",), order="date_asc", limit=10)
        memories = [(m.kind, m.title, m.tool) for m in store.search_memories(query, now=0)]
    finally:
        store.close()
    assert requests == [("start the cart at one", "opencode")]
    assert sorted(memories) == [
        ("observation", "Edited cart.py", "opencode"),
        ("observation", "Wrote tax.py", "opencode"),
        ("summary", "Session: start the cart at one", "opencode"),
    ]


class _FakeMessages(http.server.BaseHTTPRequestHandler):
    """The Messages API as Claude Code calls it: a turn with Write and Edit among its tools calls
    the server's next tool (by how many tool results the conversation holds), any other (a later
    turn, a side request) answers "Done."; token counting gets a count; each request is kept."""

    server: _FakeMessagesModel

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))))
        self.server.requests.append((self.path, body))
        if self.path.split("?")[0].endswith("/count_tokens"):
            _reply(self, json.dumps({"input_tokens": 1}), "application/json")
            return
        tools = {tool.get("name") for tool in body.get("tools", [])}
        contents = [m["content"] for m in body.get("messages", []) if m.get("role") == "user"]
        blocks = [b for c in contents if isinstance(c, list) for b in c if isinstance(b, dict)]
        results = sum(block.get("type") == "tool_result" for block in blocks)
        block: dict[str, object] = {"type": "text", "text": "Done."}
        stop = "end_turn"
        if {"Write", "Edit"} <= tools and results < len(self.server.calls):
            name, args = self.server.calls[results]
            block = {"type": "tool_use", "id": f"toolu_{results}", "name": name, "input": args}
            stop = "tool_use"
        usage = {"input_tokens": 1, "output_tokens": 1}
        message: dict[str, object] = {"id": "msg_1", "type": "message", "role": "assistant"}
        message |= {"model": "fake", "content": [block], "stop_reason": stop, "usage": usage}
        if not body.get("stream"):
            _reply(self, json.dumps(message), "application/json")
            return
        delta = {"type": "text_delta", "text": "Done."}
        if block["type"] == "tool_use":
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            block = {**block, "input": {}}
        else:
            block = {"type": "text", "text": ""}
        events: list[dict[str, object]] = [
            {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}},
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
            {"type": "message_stop"},
        ]
        _reply(self, "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))

    def log_message(self, format: str, *args: object) -> None:
        pass


def _claude_model_env(url: str) -> dict[str, str]:
    """Claude Code's environment for a session whose model is the local server at ``url``."""
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "not-used",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


class _FakeMessagesModel(http.server.ThreadingHTTPServer):
    def __init__(self, calls: list[tuple[str, dict[str, object]]]) -> None:
        super().__init__(("127.0.0.1", 0), _FakeMessages)
        self.calls = calls
        self.requests: list[tuple[str, dict[str, object]]] = []


def test_claude_code_runs_the_capture_hooks_in_a_session_without_a_model(
    machine: Machine,
) -> None:
    """A real ``claude -p`` (its model a local Messages API server that calls Write, then Edit,
    then answers) runs every hook install wrote, SessionEnd included: the context reaches the
    model, the prompt is recorded, each file change is an observation and the session's end a
    summary, all as claude-code. acceptEdits lets the file tools run without a prompt (Claude
    Code refuses --dangerously-skip-permissions to root, as a CI container may be)."""
    claude = str(_require("claude"))
    result = machine.aletheia("install", "claude-code", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    cart = machine.project / "cart.py"
    calls: list[tuple[str, dict[str, object]]] = [
        ("Write", {"file_path": str(cart), "content": "total = 0\ntax = 0\n"}),
        ("Edit", {"file_path": str(cart), "old_string": "total = 0", "new_string": "total = 1"}),
    ]
    model = _FakeMessagesModel(calls)
    with served(model) as url:
        machine.env |= _claude_model_env(url)
        argv = [claude, "-p", "start the cart at one", "--permission-mode", "acceptEdits"]
        session = machine.run([*argv, "--output-format", "json"])
    assert session.returncode == 0, session.stderr
    answer = json.loads(session.stdout)
    assert (answer["is_error"], answer["result"]) == (False, "Done."), answer
    assert cart.read_text(encoding="utf-8") == "total = 1\ntax = 0\n"
    asked = [body for _, body in model.requests if body.get("tools")]
    assert "<aletheia-memory>" in json.dumps(asked[0])  # SessionStart's additionalContext
    store = SqliteStore(machine.home / ".aletheia" / "aletheia.db")
    try:
        requests = [(r.text, r.tool) for r in store.recent_requests("shop", 10)]
        query = MemoryQuery(projects=("shop",), order="date_asc", limit=10)
        saved = store.search_memories(query, now=0)
    finally:
        store.close()
    assert requests == [("start the cart at one", "claude-code")]
    assert sorted((m.kind, m.title, m.tool) for m in saved) == [
        ("observation", "Edited cart.py", "claude-code"),
        ("observation", "Wrote cart.py", "claude-code"),
        ("summary", "Session: start the cart at one", "claude-code"),
    ]
    [wrote] = [m.text for m in saved if m.title == "Wrote cart.py"]
    assert wrote == "Wrote cart.py (2 lines)."  # not 3: the last line's newline ends it


def test_claude_code_under_claude_config_dir_starts_the_entry_and_runs_the_hooks(
    machine: Machine,
) -> None:
    """With ``CLAUDE_CONFIG_DIR`` set, Claude Code reads ``.claude.json`` and ``settings.json``
    there, not in the home folder: install writes them there, and a real ``claude`` lists the
    server connected and runs the hooks (its prompt recorded) from them."""
    claude = str(_require("claude"))
    config_dir = machine.home / "claude-config"
    config_dir.mkdir()
    machine.env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    result = machine.aletheia("install", "claude-code", "--hooks", "--write")
    assert result.returncode == 0, result.stderr
    assert not (machine.home / ".claude.json").exists()
    assert not (machine.home / ".claude").exists()
    listed = machine.run([claude, "mcp", "list"])
    assert re.search(r"^aletheia: \S+ \S+aletheia-mcp - ✔ Connected$", listed.stdout, re.M)
    model = _FakeMessagesModel([])
    with served(model) as url:
        machine.env |= _claude_model_env(url)
        session = machine.run([claude, "-p", "say hello", "--output-format", "json"])
    assert session.returncode == 0, session.stderr
    store = SqliteStore(machine.home / ".aletheia" / "aletheia.db")
    try:
        requests = [(r.text, r.tool) for r in store.recent_requests("shop", 10)]
    finally:
        store.close()
    assert requests == [("say hello", "claude-code")]
