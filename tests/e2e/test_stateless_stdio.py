"""2026-07-28 over stdio with the real ``aletheia-mcp``: the official SDK in auto mode validates
every read tool's structuredContent, and bad stateless input gets the spec's error, no hang."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.types import Implementation

from tests.e2e.test_stdio import SERVER, running_server, server_env

pytestmark = [pytest.mark.e2e]

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "modern-client", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
READS: list[tuple[str, dict[str, Any]]] = [
    ("session_start_context", {}),
    ("search", {"query": "pnpm"}),
    ("timeline", {"anchor": 1}),
    ("get_observations", {"ids": [1]}),
    ("fact_history", {"subject": "shop"}),
    ("list_rules", {}),
    ("work_state_read", {"list": "todo"}),
]


def stateless(request_id: Any, method: str, meta: dict[str, Any], **params: Any) -> Any:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": method,
        "params": {**params, "_meta": meta},
    }


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_sdk_validates_structured_content_of_every_read_tool(tmp_path: Path) -> None:
    env = server_env(tmp_path)
    params = StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path))
    info = Implementation(name="sdk-structured", version="1.0")
    async with Client(params, mode="auto", client_info=info) as client:
        assert client.protocol_version == "2026-07-28"
        saved = await client.call_tool(
            "save_memory",
            {
                "text": "Use pnpm",
                "facts": [{"subject": "shop", "predicate": "pm", "object": "pnpm"}],
            },
        )
        assert saved.is_error is False
        await client.call_tool("add_rule", {"then": "Run the tests"})
        await client.call_tool("work_state_write", {"list": "todo", "items": ["ship", {"a": 1}]})
        for name, arguments in READS:
            result = await client.call_tool(name, arguments)  # raises if it does not validate
            assert result.is_error is False, name
            assert isinstance(result.structured_content, dict), name
            assert result.structured_content["notice"].startswith("Recalled memory"), name


def test_meta_keys_without_the_protocol_version_are_ignored_as_any_meta(tmp_path: Path) -> None:
    meta = {key: value for key, value in META.items() if not key.endswith("protocolVersion")}
    with running_server(server_env(tmp_path), tmp_path) as server:
        reply = server.ask(stateless(1, "tools/list", meta))
        assert len(reply["result"]["tools"]) == 13 and "resultType" not in reply["result"]
        assert server.ask(stateless(2, "tools/list", META))["result"]["tools"]
        assert server.close() == 0


@pytest.mark.parametrize("version", ["2099-01-01", "2025-11-25", ""])
def test_an_unsupported_stateless_version_gets_32022_naming_every_version(
    tmp_path: Path, version: str
) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": version}
    with running_server(server_env(tmp_path), tmp_path) as server:
        reply = server.ask(stateless("v", "tools/list", meta))
        assert reply["id"] == "v"
        assert reply["error"]["code"] == -32022
        assert reply["error"]["data"] == {
            "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "requested": version,
        }
        assert server.close() == 0


def test_after_initialize_an_envelope_is_ignored_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    with running_server(server_env(tmp_path), tmp_path) as server:
        server.initialize()
        served = server.ask(stateless(1, "tools/call", META, name="list_rules", arguments={}))
        assert served["result"]["isError"] is False and "resultType" not in served["result"]
        ping = server.ask({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert ping == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert server.close() == 0


def test_after_a_stateless_call_initialize_is_invalid_and_stateless_calls_go_on(
    tmp_path: Path,
) -> None:
    with running_server(server_env(tmp_path), tmp_path) as server:
        assert server.ask(stateless(1, "tools/list", META))["result"]["resultType"] == "complete"
        init = server.initialize()
        assert init["error"]["code"] == -32600  # never -32022: that says "modern only"
        assert "data" not in init["error"]
        again = server.ask(stateless(2, "tools/call", META, name="list_rules", arguments={}))
        assert again["result"]["isError"] is False
        assert server.close() == 0


def test_a_stateless_ping_is_method_not_found(tmp_path: Path) -> None:
    with running_server(server_env(tmp_path), tmp_path) as server:
        reply = server.ask(stateless(1, "ping", META))
        assert reply["error"] == {"code": -32601, "message": "Method not found: ping"}
        assert server.close() == 0
