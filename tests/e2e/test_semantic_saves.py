"""With ALETHEIA_SEMANTIC=on a server embeds what it saves without waiting for a search: the real
``aletheia-mcp`` (driven by the official MCP Python SDK) and ``aletheia-server`` (its JSON API and
MCP over HTTP), the real model, the store file's vector table polled with a bounded wait.

A server used to start embedding at its first search in words only: a session that only saved
left no vector, and the CLI's one-shot search could not find those memories by meaning.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from aletheia_mem.config import load_settings
from aletheia_mem.search.semantic import find_model
from tests.e2e.http_server import running_server
from tests.vector_coverage import coverage as _coverage

FILES = find_model()
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(FILES is None, reason="the semantic extra is not installed"),
]

BIN = Path(sys.executable).parent
# A save starts the model loading about a second later; loading and embedding take well under
# one more on this machine. Well below the worker's 30 s poll, which would embed without a kick.
VECTOR_WAIT_S = 20.0
MEMORY = "shutil.rmtree removes a directory tree recursively."
PARAPHRASE = "wipe out a folder"  # shares no word with MEMORY: lexical search finds nothing
OTHERS = ("Use pnpm, not npm, in the shop repo.", "The payment client retries three times.")
HEAVY = ("numpy", "onnxruntime", "aletheia_mem.search.semantic")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _env(root: Path, semantic: str) -> dict[str, str]:
    (root / "shop").mkdir(parents=True, exist_ok=True)
    return {
        "ALETHEIA_DATA_DIR": str(root / "data"),
        "ALETHEIA_CWD": str(root / "shop"),
        "ALETHEIA_SEMANTIC": semantic,
    }


def _store_path(root: Path) -> Path:
    return Path(load_settings(_env(root, "off")).store)


async def _wait_for_coverage(db_path: Path, expected: tuple[int, int]) -> tuple[int, int]:
    deadline = time.monotonic() + VECTOR_WAIT_S
    while (found := _coverage(db_path)) != expected and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return found


def _text(result: CallToolResult) -> str:
    assert result.is_error is False
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _cli_search(root: Path, semantic: str) -> list[int]:
    """The ids ``aletheia search PARAPHRASE`` lists: the one-shot CLI, its own process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(_env(root, semantic))
    found = subprocess.run(
        [str(BIN / "aletheia"), "search", PARAPHRASE],
        env=env,
        cwd=root / "shop",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [int(n) for n in re.findall(r"^#(\d+) ", found.stdout, flags=re.MULTILINE)]


def _stdio_server(root: Path, semantic: str, *python_options: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[*python_options, "-m", "aletheia_mem.server.stdio"],
        env=_env(root, semantic),
        cwd=str(root),
    )


@pytest.mark.anyio
async def test_a_memory_saved_over_stdio_gets_its_vector_without_any_search(
    tmp_path: Path,
) -> None:
    db_path = _store_path(tmp_path)
    server = _stdio_server(tmp_path, "on")
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for text in (MEMORY, *OTHERS):
            assert _text(await session.call_tool("save_memory", {"text": text})).startswith(
                "Saved as #"
            )
        # No search, no wait on the server: only saves.
        assert await _wait_for_coverage(db_path, (3, 3)) == (3, 3)

    assert _cli_search(tmp_path, "off") == []  # its words find nothing...
    assert _cli_search(tmp_path, "on")[:1] == [1]  # ...its meaning, from the stored vector


@pytest.mark.anyio
async def test_with_semantic_off_a_save_over_stdio_writes_no_vector_and_imports_no_model(
    tmp_path: Path,
) -> None:
    # A server with semantic on, saving the same memory alongside, is the yardstick: once its
    # vector is stored, a server that embedded on save would have had the time to.
    off_root, on_root = tmp_path / "off", tmp_path / "on"
    imports = tmp_path / "importtime.txt"
    off_server = _stdio_server(off_root, "off", "-X", "importtime")
    with imports.open("w", encoding="utf-8") as errlog:
        async with (
            stdio_client(off_server, errlog=errlog) as (off_read, off_write),
            ClientSession(off_read, off_write) as off,
            stdio_client(_stdio_server(on_root, "on")) as (on_read, on_write),
            ClientSession(on_read, on_write) as on,
        ):
            await off.initialize()
            await on.initialize()
            for session in (off, on):
                _text(await session.call_tool("save_memory", {"text": MEMORY}))
            assert await _wait_for_coverage(_store_path(on_root), (1, 1)) == (1, 1)
            assert _coverage(_store_path(off_root)) == (0, 1)

    imported = [
        line.rsplit("|", 1)[-1].strip()
        for line in imports.read_text(encoding="utf-8").splitlines()
        if line.startswith("import time:")
    ]
    assert "aletheia_mem.domain.memories" in imported  # the log saw the save's own path
    assert [name for name in imported if name.startswith(HEAVY)] == []


@pytest.mark.anyio
async def test_saves_through_either_worker_of_the_http_server_get_vectors_without_any_search(
    tmp_path: Path,
) -> None:
    # Each request is a new connection, and the server hands connections to its two workers in
    # turn: the saves land on both. Each worker lets the embedding lease go once caught up, so
    # the other embeds its own saves at once instead of at the first one's next poll.
    db_path = _store_path(tmp_path)
    with running_server(
        tmp_path, env={"ALETHEIA_SEMANTIC": "on"}, args=("--port", "0", "--workers", "2")
    ) as server:
        for count, text in enumerate((MEMORY, *OTHERS), 1):
            reply = server.api("POST", "/api/memories", {"text": text})
            assert reply.status == 201, reply.body
            assert await _wait_for_coverage(db_path, (count, count)) == (count, count)
        session = server.initialize()
        result = server.call_tool(session, "work_state_write", {"list": "todo", "items": ["ship"]})
        assert result["isError"] is False, result
        assert await _wait_for_coverage(db_path, (4, 4)) == (4, 4)

    assert _cli_search(tmp_path, "on")[:1] == [1]
