"""The official MCP Python SDK (mcp 2.3.0) drives the real ``aletheia-server`` over HTTP.

Both APIs of /work/shared/clients/python_client.py: the low-level ``ClientSession`` (plain
``initialize``) and the high-level ``Client(mode="auto")``, which probes ``server/discover``
and then sends stateless 2026-07-28 requests (no session); with and without ``ALETHEIA_API_KEY``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation, TextContent

from tests.e2e.http_server import RunningServer, running_server
from tests.e2e.test_official_client import check_all_13_tools

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

KEY = "py-client-key"
TOOL_NAMES = {
    "search",
    "timeline",
    "get_observations",
    "session_start_context",
    "fact_history",
    "list_rules",
    "work_state_read",
    "save_memory",
    "add_rule",
    "confirm_rule",
    "dismiss_memory",
    "restore_memory",
    "work_state_write",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("py-open")) as server:
        yield server


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("py-keyed"), env={"ALETHEIA_API_KEY": KEY}) as s:
        yield s


@asynccontextmanager
async def session_for(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(20, read=60))
        )
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        yield session


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def exercise(session: ClientSession) -> None:
    listed = await session.list_tools()
    assert {tool.name for tool in listed.tools} == TOOL_NAMES
    assert listed.next_cursor is None
    saved = await session.call_tool(
        "save_memory", {"text": "Use pnpm, not npm, in the shop repo", "type": "decision"}
    )
    assert saved.is_error is False
    assert text_of(saved).startswith(("Saved as #", "Already saved as #"))
    found = await session.call_tool("search", {"query": "pnpm"})
    assert found.is_error is False
    assert "Use pnpm, not npm, in the shop repo" in text_of(found)
    refused = await session.call_tool("search", {})
    assert refused.is_error is True
    assert text_of(refused) == "query is required."


async def test_client_session_lists_13_tools_and_calls_them(open_server: RunningServer) -> None:
    async with session_for(open_server.mcp_url, None) as session:
        init = await session.initialize()
        assert init.protocol_version == "2025-11-25"
        assert init.server_info.name == "aletheia"
        await exercise(session)


async def test_auto_mode_negotiates_2026_07_28_from_server_discover_at_once(
    open_server: RunningServer,
) -> None:
    started = time.monotonic()
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=20))
        transport = streamable_http_client(open_server.mcp_url, http_client=http)
        client = await stack.enter_async_context(Client(transport, mode="auto"))
        assert client.session.protocol_version == "2026-07-28"
        await exercise(client.session)
    assert time.monotonic() - started < 5  # no 10 s discover timeout


async def test_auto_mode_calls_all_13_tools_statelessly(tmp_path: Path) -> None:
    info = Implementation(name="sdk-http", version="1.0")
    with running_server(tmp_path) as server:
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(httpx2.AsyncClient(timeout=20))
            transport = streamable_http_client(server.mcp_url, http_client=http)
            client = await stack.enter_async_context(
                Client(transport, mode="auto", client_info=info)
            )
            assert client.session.protocol_version == "2026-07-28"
            assert await check_all_13_tools(client, "sdk-http") == TOOL_NAMES


async def test_auto_mode_with_the_api_key_sends_it_on_every_stateless_request(
    keyed_server: RunningServer,
) -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(headers=headers, timeout=20))
        transport = streamable_http_client(keyed_server.mcp_url, http_client=http)
        client = await stack.enter_async_context(Client(transport, mode="auto"))
        assert client.session.protocol_version == "2026-07-28"
        await exercise(client.session)


async def test_with_the_api_key_the_right_token_works(keyed_server: RunningServer) -> None:
    async with session_for(keyed_server.mcp_url, KEY) as session:
        await session.initialize()
        await exercise(session)


@pytest.mark.parametrize("token", [None, "wrong-key"])
async def test_with_the_api_key_other_callers_are_refused(
    keyed_server: RunningServer, token: str | None
) -> None:
    with pytest.raises(BaseException) as raised:  # anyio wraps the MCPError in groups
        async with session_for(keyed_server.mcp_url, token) as session:
            await session.initialize()
    error: BaseException = raised.value
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    assert "Unauthorized" in str(error)
