"""``ALETHEIA_HUB_DB`` chooses the stdio server's store instead of ``ALETHEIA_DATA_DIR`` (DESIGN
§3; the reference's "Connect over stdio"): a SQLite file, or a PostgreSQL database for a
``postgresql://`` URL. The official MCP client drives the real ``aletheia-mcp``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from aletheia_mem.storage.open import open_hub_store

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SERVER = Path(sys.executable).parent / "aletheia-mcp"
NO_EXTRA = (
    "aletheia-mcp: A postgresql:// hub needs the postgres extra:"
    " pipx install 'aletheia-mem[postgres]' (or pip install 'aletheia-mem[postgres]').\n"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def store_env(tmp_path: Path, store: str) -> dict[str, str]:
    project = tmp_path / "shop"
    project.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "ALETHEIA_HUB_DB": store,
        "ALETHEIA_CWD": str(project),
    }


def text(result: CallToolResult) -> str:
    assert result.is_error is False
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def save_then_search(env: dict[str, str], cwd: Path) -> tuple[str, str]:
    params = StdioServerParameters(command=str(SERVER), env=env, cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        saved = await session.call_tool("save_memory", {"text": "Deploys go through the canary"})
        found = await session.call_tool("search", {"query": "canary", "project": "shop"})
    return text(saved), text(found)


async def test_a_save_lands_in_the_sqlite_file_aletheia_hub_db_names(tmp_path: Path) -> None:
    store = tmp_path / "team" / "shared.db"  # its folder too is made, as the hub makes it
    saved, found = await save_then_search(store_env(tmp_path, str(store)), tmp_path)
    assert saved == "Saved as #1 in shop."
    assert "Deploys go through the canary" in found
    conn = sqlite3.connect(store)
    try:
        assert conn.execute("SELECT project, text FROM memories").fetchall() == [
            ("shop", "Deploys go through the canary")
        ]
    finally:
        conn.close()
    assert not (tmp_path / "data" / "aletheia.db").exists()


async def test_a_save_lands_in_the_postgresql_database_aletheia_hub_db_names(
    tmp_path: Path, pg_url: str
) -> None:
    saved, found = await save_then_search(store_env(tmp_path, pg_url), tmp_path)
    assert saved == "Saved as #1 in shop."
    assert "#1" in found and "Deploys go through the canary" in found
    store = open_hub_store(pg_url)
    try:
        assert [(m.project, m.text) for m in store.get_memories([1])] == [
            ("shop", "Deploys go through the canary")
        ]
    finally:
        store.close()
    assert not (tmp_path / "data").exists()


def test_a_postgresql_url_without_the_postgres_extra_stops_the_server_in_one_line(
    tmp_path: Path,
) -> None:
    no_extra = (
        "import sys; sys.modules['aletheia_mem.storage.postgres.store'] = None; "
        "from aletheia_mem.server.stdio import main; main()"
    )
    env = store_env(tmp_path, "postgresql://postgres@127.0.0.1:5432/none")
    result = subprocess.run(
        [sys.executable, "-c", no_extra],
        input="",
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (result.returncode, result.stderr, result.stdout) == (1, NO_EXTRA, "")
    assert not (tmp_path / "data").exists()
