"""A secret saved through any entry point never reaches the store nor comes back from a read.

Each test writes the payloads of :mod:`tests.e2e.leaky` into every field a write path takes
(text, title, facts, files, list name and items, rule, dismiss reason, hook prompt; a project
named by a secret is refused, saying nothing of it) through a real process: ``aletheia-mcp``
over stdio with the official MCP client, the JSON API of ``aletheia-server``, the ``aletheia``
CLI and ``aletheia-hook``. Then it reads everything back (get_observations, search, timeline,
session_start_context, lists, rules, facts) and scans the store's files byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

from tests.e2e import leaky
from tests.e2e.http_server import running_server

BIN = Path(sys.executable).parent
SAVED = re.compile(r"Saved as #(\d+)")
PROJECT = "acme"  # a project named by a secret (leaky.PROJECT) is refused: _check_refused


def _writes() -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            "save_memory",
            {
                "text": leaky.TEXT,
                "title": leaky.TITLE,
                "facts": leaky.FACTS,
                "files": leaky.FILES,
                "type": "gotcha",
            },
        ),
        (
            "save_memory",
            {"text": "Deploy checklist for the acme project", "project": PROJECT},
        ),
        ("work_state_write", {"list": leaky.LIST_NAME, "items": leaky.LIST_ITEMS}),
        ("add_rule", {"then": leaky.RULE_THEN, "when": leaky.RULE_WHEN}),
        ("save_memory", {"text": "Throwaway deploy note, dismissed next"}),
    ]


def _reads(dismiss_id: int) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("dismiss_memory", {"id": dismiss_id, "type": "memory", "reason": leaky.DISMISS_REASON}),
        ("search", {"query": "deploy", "limit": 20}),
        ("search", {"query": "deploy", "project": PROJECT}),
        ("get_observations", {"ids": [1, 2, 3, 4, 5]}),
        ("timeline", {"anchor": 1, "before": 5, "after": 5}),
        ("session_start_context", {"limit": 20}),
        ("session_start_context", {"project": PROJECT}),
        ("work_state_read", {"list": leaky.LIST_NAME}),
        ("list_rules", {}),
        ("fact_history", {"subject": "ci"}),
    ]


def _check_reads(outputs: list[str]) -> None:
    joined = "\n".join(outputs)
    assert leaky.leaked(joined) == []
    assert "curl -u admin:[REDACTED] https://api.example.com/deploy" in joined
    assert "postgres://app:[REDACTED]@db.internal/prod" in joined
    assert "No list named" not in joined  # the list is found under the same redacted name
    assert "Deploy checklist for the acme project" in joined  # the project key still works


def _check_refused(answer: str) -> None:
    """A write to a project named by a secret is refused, and the refusal repeats no secret."""
    assert "looks like a secret" in answer, answer
    assert leaky.leaked(answer) == []


async def _run_scenario(call: Callable[[str, dict[str, Any]], Awaitable[str]]) -> list[str]:
    outputs = [await call(name, arguments) for name, arguments in _writes()]
    dismiss_id = int(SAVED.search(outputs[-1])[1])  # type: ignore[index]
    outputs += [await call(name, arguments) for name, arguments in _reads(dismiss_id)]
    return outputs


@pytest.mark.e2e
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_secrets_sent_to_the_stdio_mcp_server_are_never_stored(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    env = {
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "ALETHEIA_CWD": str(project),
        "ALETHEIA_TOOL": f"codex {leaky.GITHUB}",  # stored with each write, as the caller
    }
    params = StdioServerParameters(command=str(BIN / "aletheia-mcp"), env=env, cwd=str(tmp_path))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()

        async def call(name: str, arguments: dict[str, Any]) -> str:
            result = await session.call_tool(name, arguments)
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert result.is_error is False, block.text
            return block.text

        outputs = await _run_scenario(call)
        refused = await session.call_tool(
            "save_memory", {"text": "Deploy checklist", "project": leaky.PROJECT}
        )
        assert refused.is_error is True
        assert isinstance(refused.content[0], TextContent)
        _check_refused(refused.content[0].text)
    _check_reads(outputs)
    assert leaky.leaked_in_store(tmp_path / "data") == []


def _tool_text(result: dict[str, Any]) -> str:
    assert result.get("isError") is not True, result
    return str(result["content"][0]["text"])


def test_secrets_sent_to_the_json_api_are_never_stored(tmp_path: Path) -> None:
    with running_server(tmp_path) as server:
        posts = [
            ("POST", "/api/memories", {"text": leaky.TEXT, "title": leaky.TITLE,
                                       "facts": leaky.FACTS, "files": leaky.FILES}),
            ("POST", "/api/memories", {"text": "Deploy checklist for the acme project",
                                       "project": PROJECT}),
            ("POST", "/api/facts", {"subject": "ci", "predicate": "password",
                                    "object": leaky.PROSE_PASSWORD}),
            ("PUT", f"/api/work-state/{leaky.LIST_NAME.replace(' ', '%20')}",
             {"items": leaky.LIST_ITEMS}),
            ("POST", "/api/rules", {"then": leaky.RULE_THEN, "when": leaky.RULE_WHEN}),
            ("POST", "/api/memories/2/dismiss", {"reason": leaky.DISMISS_REASON}),
        ]  # fmt: skip
        for method, path, body in posts:
            reply = server.api(method, path, body)
            assert reply.status in (200, 201), (path, reply.body)
            assert leaky.leaked(reply.body.decode()) == []
        refused = server.api("POST", "/api/memories", {"text": "x", "project": leaky.PROJECT})
        assert refused.status == 400
        _check_refused(refused.body.decode())
        api_reads = [
            "/api/memories?query=deploy",
            "/api/memories/1",
            "/api/timeline?anchor=1",
            "/api/context",
            "/api/work-state",
            "/api/rules",
            "/api/facts?subject=ci",
        ]
        outputs = [server.api("GET", path).body.decode() for path in api_reads]
        session = server.initialize()
        outputs += [
            _tool_text(server.call_tool(session, name, arguments))
            for name, arguments in _reads(2)[1:]
        ]
    _check_reads(outputs)
    assert leaky.leaked_in_store(tmp_path / "data") == []


def _cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    result = subprocess.run(
        [str(BIN / "aletheia"), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=30
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_secrets_given_to_the_cli_are_never_stored(tmp_path: Path) -> None:
    cwd = tmp_path / "shop"
    cwd.mkdir()
    env = {**os.environ, "ALETHEIA_DATA_DIR": str(tmp_path / "data"), "NO_COLOR": "1"}
    env.pop("ALETHEIA_CWD", None)
    env["ALETHEIA_TOOL"] = f"codex {leaky.GITHUB}"  # stored with each write, as the caller
    writes = [
        ("save", leaky.TEXT, "--title", leaky.TITLE, "--file", leaky.FILES[0]),
        ("save", "Deploy checklist for the acme project", "--project", PROJECT),
        ("facts", "add", "ci", "token", leaky.GITLAB),
        ("lists", "write", leaky.LIST_NAME, "--items-json", json.dumps(leaky.LIST_ITEMS)),
        ("rules", "add", leaky.RULE_THEN, "--when", leaky.RULE_WHEN),
        ("dismiss", "2", "--reason", leaky.DISMISS_REASON),
    ]
    outputs = [_cli(env, cwd, *args) for args in writes]
    reads = [
        ("search", "deploy"),
        ("search", "deploy", "--project", PROJECT),
        ("show", "1", "2", "3"),
        ("timeline", "1"),
        ("context",),
        ("context", "--project", PROJECT),
        ("lists", "read", leaky.LIST_NAME),
        ("rules", "list"),
        ("facts", "history", "ci"),
    ]
    outputs += [_cli(env, cwd, *args) for args in reads]
    refused = subprocess.run(
        [str(BIN / "aletheia"), "save", "x", "--project", leaky.PROJECT],
        capture_output=True, text=True, env=env, cwd=cwd, timeout=30,
    )  # fmt: skip
    assert refused.returncode == 2
    _check_refused(refused.stderr + refused.stdout)
    _check_reads(outputs)
    assert leaky.leaked_in_store(tmp_path / "data") == []


def _hook(env: dict[str, str], event: str, payload: dict[str, Any]) -> str:
    result = subprocess.run(
        [str(BIN / "aletheia-hook"), event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=10,
    )
    assert result.returncode == 0
    return result.stdout


def test_secrets_and_private_parts_of_a_prompt_captured_by_the_hook_are_never_stored(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    env["ALETHEIA_DATA_DIR"] = str(home / ".aletheia")
    base = {"session_id": "s1", "cwd": str(project)}
    _hook(env, "session-start", base)
    _hook(env, "user-prompt", {**base, "prompt": leaky.PROMPT})
    context = _hook(env, "session-start", {**base, "session_id": "s2"})
    assert "Deploy with curl -u admin:[REDACTED] and [REDACTED]." in context
    assert "thanks" in context
    assert leaky.leaked(context) == []
    assert leaky.PRIVATE_NOTE not in context
    assert leaky.OUTER_PRIVATE_NOTE not in context
    assert leaky.leaked_in_store(home / ".aletheia") == []
