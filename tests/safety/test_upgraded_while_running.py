"""A server of this version still running when a newer version migrates its store (the user ran
``pipx upgrade`` while a host kept its ``aletheia-mcp``): its writes are refused in one clear
message, nothing is written, and it still reads."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import TextContent

from aletheia_mem.errors import StoreTooNewError
from aletheia_mem.storage import migrate
from aletheia_mem.storage.sqlite import SqliteStore
from tests.safety.entry_points import BIN, user_env

pytestmark = pytest.mark.anyio
LATEST = migrate._steps()[-1][0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _migrate_one_step_further(path: Path) -> None:
    """What a newer version's first process does to the store: one more numbered step."""
    with closing(sqlite3.connect(path, isolation_level=None)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE future_things (id INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (LATEST + 1,))
        conn.execute(f"PRAGMA user_version = {LATEST + 1}")
        conn.execute("COMMIT")


def _memories(path: Path) -> int:
    with closing(sqlite3.connect(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def _text(content: list[object]) -> str:
    return "".join(part.text for part in content if isinstance(part, TextContent))


async def test_a_running_server_refuses_writes_after_a_newer_version_migrated(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = home / ".aletheia" / "aletheia.db"
    params = StdioServerParameters(
        command=str(BIN / "aletheia-mcp"), env=user_env(home), cwd=str(home)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        saved = await session.call_tool("save_memory", {"text": "Use pnpm, not npm"})
        assert saved.is_error is False, saved.content
        _migrate_one_step_further(store)
        refused = await session.call_tool("save_memory", {"text": "A note after the upgrade"})
        listed = await session.call_tool("work_state_write", {"list": "todo", "items": ["x"]})
        found = await session.call_tool("search", {"query": "pnpm"})
    assert refused.is_error is True
    assert _text(refused.content) == (
        f"The store {store} was upgraded by a newer version of Aletheia while this process ran"
        f" (schema {LATEST + 1}; this process knows up to {LATEST}); nothing was changed."
        " Restart this server (or the tool that started it) to use the new version."
    )
    assert listed.is_error is True and "upgraded by a newer version" in _text(listed.content)
    assert found.is_error is False and "Use pnpm, not npm" in _text(found.content)
    assert _memories(store) == 1


def test_a_step_of_this_version_moves_the_mark_but_is_no_refusal(tmp_path: Path) -> None:
    path = tmp_path / "aletheia.db"
    store = SqliteStore(path)
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            assert conn.execute("PRAGMA user_version").fetchone()[0] == LATEST
            conn.execute("CREATE TABLE made_when_first_used (id INTEGER PRIMARY KEY)")
            conn.execute("PRAGMA user_version = 0")  # moved, while the migrations stay known
        assert store.start_episode("shop", "test", 1) > 0
        _migrate_one_step_further(path)
        with pytest.raises(StoreTooNewError, match="upgraded by a newer version"):
            store.start_episode("shop", "test", 2)
    finally:
        store.close()
