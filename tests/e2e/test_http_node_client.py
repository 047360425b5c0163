"""The official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) over HTTP, with and
without ``ALETHEIA_API_KEY``."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.e2e.node_tools import NODE_DIR, node_binary, require_node_modules

pytestmark = pytest.mark.e2e

KEY = "node-client-key"
SCRIPT = NODE_DIR / "http_client.mjs"


@pytest.fixture(scope="module", autouse=True)
def _node_modules() -> None:
    require_node_modules()


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("node-open")) as server:
        yield server


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("node-key"), env={"ALETHEIA_API_KEY": KEY}) as s:
        yield s


def run_client(url: str, *options: str) -> tuple[int, Any, str]:
    done = subprocess.run(
        [node_binary(), str(SCRIPT), url, *options],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, output, done.stderr


def test_node_client_lists_13_tools_and_calls_search(open_server: RunningServer) -> None:
    args = json.dumps({"query": "pnpm"})
    code, out, err = run_client(open_server.mcp_url, "--call", "search", "--args", args)
    assert code == 0, err
    assert out["protocolVersion"] == "2025-11-25"
    assert out["serverInfo"]["name"] == "aletheia"
    assert len(out["tools"]) == 13
    assert {tool["name"] for tool in out["tools"]} >= {"search", "save_memory", "work_state_write"}
    assert out["call"]["isError"] is False
    assert out["call"]["content"][0]["text"].startswith("No matches.")
    assert out["sessionId"] and out["sessionAfterTerminate"] is None


def test_node_client_sees_tool_errors_as_is_error(open_server: RunningServer) -> None:
    code, out, _ = run_client(open_server.mcp_url, "--call", "search", "--args", "{}")
    assert code == 1
    assert out["call"]["content"] == [{"type": "text", "text": "query is required."}]


def test_node_client_with_the_api_key_saves_a_memory(keyed_server: RunningServer) -> None:
    args = json.dumps({"text": "Node saw this over HTTP"})
    code, out, err = run_client(
        keyed_server.mcp_url, "--token", KEY, "--call", "save_memory", "--args", args
    )
    assert code == 0, err
    assert out["call"]["content"][0]["text"].startswith("Saved as #")


@pytest.mark.parametrize("token", [None, "wrong"])
def test_node_client_without_the_key_is_refused(
    keyed_server: RunningServer, token: str | None
) -> None:
    options = ("--token", token) if token else ()
    code, out, err = run_client(keyed_server.mcp_url, *options)
    assert code == 2
    assert out is None
    assert "401" in err or "Unauthorized" in err
