"""A folder named with a decomposed ``é`` (as macOS gives folder names) is the project a model
names with a composed ``é``: project keys, list names and fact subjects are compared in NFC.
The official MCP client over stdio, a real folder and a real store file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]
SERVER = Path(sys.executable).parent / "aletheia-mcp"
DECOMPOSED = "Cafe\u0301"  # what macOS gives as a folder's name
COMPOSED = "caf\u00e9"  # what a model sends


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_decomposed_folder_is_the_project_a_composed_name_reads(tmp_path: Path) -> None:
    folder = tmp_path / DECOMPOSED
    folder.mkdir()
    env = {
        "HOME": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "ALETHEIA_CWD": str(folder),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a worktree's sources, when tested
    }
    params = StdioServerParameters(command=str(SERVER), env=env, cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(name: str, **arguments: object) -> str:
            result = await session.call_tool(name, arguments)
            block = result.content[0]
            assert isinstance(block, TextContent)
            assert not result.is_error, block.text
            return block.text

        facts = [{"subject": "Cre\u0300me", "predicate": "owner", "object": "ana"}]
        assert await call("save_memory", text="from nfd cwd", facts=facts) == (
            f"Saved as #1 in {COMPOSED}."
        )
        assert "from nfd cwd" in await call("search", query="nfd", project=COMPOSED)
        assert "from nfd cwd" in await call("session_start_context", project=COMPOSED)
        assert "from nfd cwd" in await call("search", query="nfd", project=DECOMPOSED)
        assert "ana" in await call("fact_history", subject="cr\u00e8me", project=COMPOSED)

        await call("work_state_write", list=COMPOSED, items=["ship"], project=COMPOSED)
        assert "ship" in await call("work_state_read", list="cafe\u0301")
        await call("work_state_write", list="cafe\u0301", items=["ship", "test"])
        assert '"test"' in await call("work_state_read", list=COMPOSED, project=COMPOSED)
