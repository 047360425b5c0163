"""A project name that holds a secret is refused at every door, not stored as ``[redacted]``
(where every other such name would land: unrelated projects made one). A model's tools over
stdio, the CLI, the JSON API and ``mcp-link create``, each a real process on a real store; a
project named ``[redacted]`` itself can still be written and read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.test_usage_error_secrets import aletheia
from tests.e2e import http_server
from tests.e2e.test_stdio import running_server, server_env, text_of

pytestmark = [pytest.mark.e2e]
GITHUB = "ghp_" + "pq7wr2ty9ui4op1as6df3gh8jk5lzxcvbn0mq"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
REFUSED = (
    "{field} looks like a secret, which is never kept as a project's name (it would be stored"
    ' as "{key}", with every other such name): choose another name.'
)


def refusal(key: str = "[redacted]", field: str = "project") -> str:
    return REFUSED.format(field=field, key=key)


def test_the_tools_refuse_a_secret_project_and_keep_nothing(tmp_path: Path) -> None:
    env = server_env(tmp_path, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    with running_server(env, tmp_path) as server:
        server.initialize()
        calls = [
            ("save_memory", {"text": "billing uses pnpm", "project": GITHUB}, "[redacted]"),
            ("save_memory", {"text": "shop uses yarn", "project": f"shop-{STRIPE}"},
             "shop-[redacted]"),
            ("work_state_write", {"list": "todo", "items": ["a"], "project": STRIPE},
             "[redacted]"),
            ("add_rule", {"then": "use pnpm", "scopeTier": "project", "scopeName": GITHUB},
             "[redacted]"),
            ("search", {"query": "pnpm", "project": GITHUB}, "[redacted]"),
            ("session_start_context", {"project": STRIPE}, "[redacted]"),
        ]  # fmt: skip
        for number, (tool, arguments, key) in enumerate(calls, start=2):
            result = server.call(number, tool, arguments)
            assert result["isError"] is True, (tool, result)
            assert text_of(result) == refusal(key), tool
        everything = server.call(20, "search", {"query": "pnpm yarn", "project": "*"})
        assert "pnpm" not in text_of(everything) and "yarn" not in text_of(everything)
        assert server.call(21, "list_rules", {})["content"][0]["text"].count("use pnpm") == 0
        # a project named [redacted] itself (an earlier release's merge) is still a project
        saved = server.call(22, "save_memory", {"text": "kept words", "project": "[redacted]"})
        assert text_of(saved) == "Saved as #1 in [redacted]."
        found = server.call(23, "search", {"query": "kept", "project": "[REDACTED]"})
        assert "kept words" in text_of(found)
        assert server.close() == 0


def test_the_cli_refuses_a_secret_project(tmp_path: Path) -> None:
    saved = aletheia(tmp_path, "save", "billing uses pnpm", "--project", GITHUB)
    assert saved.returncode == 2, saved.stderr
    assert saved.stderr == f"Error: {refusal()}\n"
    assert GITHUB not in saved.stderr
    read = aletheia(tmp_path, "lists", "read", "todo", "--project", STRIPE)
    assert read.stderr == f"Error: {refusal()}\n"
    token = aletheia(
        tmp_path, "mcp-link", "create", "--hub-db", str(tmp_path / "hub.db"),
        "--projects", f"shop,{GITHUB}", "--name", "laptop",
    )  # fmt: skip
    assert token.returncode == 2, token.stderr
    assert token.stderr == f"Error: {refusal(field='--projects')}\n"


def test_the_json_api_refuses_a_secret_project(tmp_path: Path) -> None:
    with http_server.running_server(tmp_path) as server:
        saved = server.api("POST", "/api/memories", {"text": "billing", "project": STRIPE})
        listed = server.api("GET", "/api/memories?project=*&query=billing")
    assert saved.status == 400, saved.body
    assert saved.json()["error"] == {"code": "invalid_input", "message": refusal()}
    assert listed.json()["memories"] == []
