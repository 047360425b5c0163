"""CJK search through the real ``aletheia-mcp`` over stdio, driven by the official MCP Python
SDK, on a store an older release left (its CJK runs indexed whole): the server upgrades it on
start, and a word inside a run finds both the old memory and one saved now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.e2e.test_search_user_audit_stdio import SERVER, text_of
from tests.storage.test_cjk_reindex import old_store

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ids(answer: str) -> list[int]:
    return [int(n) for n in re.findall(r"^#(\d+) ", answer, re.MULTILINE)]


async def test_cjk_words_are_found_inside_runs_over_stdio(tmp_path: Path) -> None:
    project = tmp_path / "shop"
    project.mkdir()
    (tmp_path / "data").mkdir()
    old_store(tmp_path / "data" / "aletheia.db")  # memories #1 to #3, from before bigrams
    env = {"ALETHEIA_DATA_DIR": str(tmp_path / "data"), "ALETHEIA_CWD": str(project)}
    params = StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        saved = text_of(
            await session.call_tool("save_memory", {"text": "连接池太小导致请求超时。"})
        )
        assert saved == "Saved as #4 in shop."

        async def search(query: str) -> str:
            return text_of(await session.call_tool("search", {"query": query}))

        assert sorted(ids(await search("连接池"))) == [1, 4]
        assert ids(await search("请求超时")) == [4]
        assert ids(await search("データベース")) == [2]
        assert (await search("天气预报")).startswith("No matches.")
