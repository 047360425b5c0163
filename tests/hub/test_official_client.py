"""The official MCP Python client reaches the hub with a bearer token."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from tests.hub.helpers import running_hub

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_official_client_saves_and_is_refused_by_scope_over_the_hub(
    hub_db: Path | str,
) -> None:
    with running_hub(hub_db) as hub:
        writer, reader = hub.token("sync", ("shop",), "writer"), hub.token("read", None, "reader")
        texts = []
        for token, name, arguments in (
            (writer, "save_memory", {"text": "Official client note"}),
            (reader, "save_memory", {"text": "refused"}),
            (reader, "search", {"query": "official", "project": "*"}),
        ):
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10)) as http,
                streamable_http_client(hub.url + "/mcp", http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool(name, arguments)
                content = result.content[0]
                assert isinstance(content, TextContent)
                texts.append((content.text, result.is_error))
    assert texts[0] == ("Saved as #1 in shop.", False)
    assert texts[1] == ("This token cannot call save_memory.", True)
    assert "Official client note" in texts[2][0] and not texts[2][1]


async def test_a_hub_refusal_shows_a_project_s_invisible_characters_as_escapes(
    hub_db: Path | str,
) -> None:
    with running_hub(hub_db) as hub:
        token = hub.token("read", ("shop",), "shop-reader")
        headers = {"Authorization": f"Bearer {token}"}
        texts = []
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10)) as http,
            streamable_http_client(hub.url + "/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for project in ("billing\u200b", "billing", "café中\u202e"):
                result = await session.call_tool("search", {"query": "x", "project": project})
                content = result.content[0]
                assert isinstance(content, TextContent) and result.is_error
                texts.append(content.text)
    assert texts == [
        'Project "billing\\u200b" is not allowed for this token.',
        'Project "billing" is not allowed for this token.',
        'Project "café中\\u202e" is not allowed for this token.',
    ]
